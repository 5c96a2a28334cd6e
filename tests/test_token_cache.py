"""The verifier's memory of verified tokens: a hit skips the signature check, never the expiry
check, and never admits a token it did not verify itself (forged, or signed by a dropped key)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from okey101.platform import auth
from okey101.platform.auth import JwksVerifier, SigningKey, TokenIssuer, jwks_of
from okey101.platform.errors import Unauthenticated


def refused(verify: Callable[[str], Any], token: str) -> str:
    """The reason ``verify(token)`` (plain or awaited) refuses the token."""
    with pytest.raises(Unauthenticated) as caught:
        result = verify(token)
        if asyncio.iscoroutine(result):
            asyncio.run(result)
    return caught.value.code


def test_a_remembered_token_is_refused_once_it_expires() -> None:
    key = SigningKey.generate()
    verifier = JwksVerifier(jwks_of(key), leeway_seconds=0)
    token = TokenIssuer(key).issue("p", "player", ttl_seconds=61, now=time.time() - 59)
    claims = verifier.verify(token)
    assert asyncio.run(verifier.verify_fresh(token)) == claims  # remembered
    time.sleep(max(0.0, claims.expires_at - time.time()) + 0.1)
    assert refused(verifier.verify_fresh, token) == "TOKEN_EXPIRED"
    assert refused(verifier.verify, token) == "TOKEN_EXPIRED"


def test_a_forged_signature_on_a_remembered_token_is_refused() -> None:
    key, forger = SigningKey.generate(), SigningKey.generate()
    verifier = JwksVerifier(jwks_of(key))
    token = TokenIssuer(key).issue("p", "player")
    verifier.verify(token)
    header, payload, _ = token.split(".")
    other = TokenIssuer(forger).issue("p", "player").split(".")[2]
    forged = f"{header}.{payload}.{other}"
    assert refused(verifier.verify, forged) == "TOKEN_INVALID"
    assert refused(verifier.verify_fresh, forged) == "TOKEN_INVALID"
    assert verifier.verify(token).subject == "p"


def test_a_remembered_token_is_refused_once_its_key_is_dropped() -> None:
    old, new = SigningKey.generate(), SigningKey.generate()
    published = [jwks_of(old, new)]
    verifier = JwksVerifier({}, fetch=lambda: published[-1], refresh_interval=0)
    token = TokenIssuer(old).issue("p", "player")

    async def main() -> None:
        await verifier.refresh()
        assert (await verifier.verify_fresh(token)).subject == "p"
        published.append(jwks_of(new))  # the old key is revoked
        await verifier.refresh()
        assert verifier.key_ids == {new.kid}

    asyncio.run(main())
    assert refused(verifier.verify_fresh, token) == "TOKEN_INVALID"
    assert refused(verifier.verify, token) == "TOKEN_INVALID"


def test_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth, "VERIFIED_CACHE_SIZE", 3)
    key = SigningKey.generate()
    verifier = JwksVerifier(jwks_of(key))
    issuer = TokenIssuer(key)
    tokens = [issuer.issue(f"p-{index}", "player") for index in range(5)]
    for token in tokens:
        verifier.verify(token)
    assert len(verifier._verified) == 3
    # Forgotten tokens are verified again, not refused.
    assert [verifier.verify(token).subject for token in tokens] == [f"p-{i}" for i in range(5)]
