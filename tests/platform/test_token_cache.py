"""The verifier's memory of verified tokens: a hit skips the signature check, never the expiry
check, and never admits a token it did not verify itself (forged, or signed by a dropped key).
The auth interceptor admits a remembered token of an accepted kind without wrapping the call;
its handler still sees the claims, and anything else is checked in the call as before."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from okey101.platform import auth
from okey101.platform.auth import (
    AccessPolicy,
    JwksVerifier,
    SigningKey,
    TokenIssuer,
    current_claims,
    jwks_of,
)
from okey101.platform.config import settings_for_tests
from okey101.platform.errors import Unauthenticated
from okey101.platform.server import ServerHandle


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


# --------------------------------------------------------------------------------------------
# The interceptor admits a remembered token without wrapping the call


PROBE = "okey.test.Remembered"


async def _whoami(request: bytes, context: Any) -> bytes:
    claims = current_claims()
    return b"-" if claims is None else f"{claims.kind}:{claims.subject}".encode()


async def _whoami_stream(request: bytes, context: Any) -> AsyncIterator[bytes]:
    for _ in range(3):
        yield await _whoami(request, context)


def _register(server: grpc.aio.Server) -> list[str]:
    handlers: dict[str, Any] = {
        "Player": grpc.unary_unary_rpc_method_handler(_whoami),
        "Service": grpc.unary_unary_rpc_method_handler(_whoami),
        "Stream": grpc.unary_stream_rpc_method_handler(_whoami_stream),
        "Open": grpc.unary_unary_rpc_method_handler(_whoami),
    }
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(PROBE, handlers)])
    return [PROBE]


def _probe(scenario: Callable[[grpc.aio.Channel, TokenIssuer], Awaitable[None]], var: Path) -> None:
    key = SigningKey.generate()
    access = AccessPolicy(
        {f"/{PROBE}/Player": ["player"], f"/{PROBE}/Service": ["service"],
         f"/{PROBE}/Stream": ["player"], f"/{PROBE}/Open": ["none"]}
    )  # fmt: skip
    verifier = JwksVerifier(jwks_of(key), leeway_seconds=0)

    async def main() -> None:
        settings = settings_for_tests("probe", var_dir=var)
        handle = await ServerHandle.start(
            "probe", _register, settings, access=access, verifier=verifier
        )
        try:
            async with grpc.aio.insecure_channel(handle.target) as channel:
                await scenario(channel, TokenIssuer(key))
        finally:
            await handle.stop(grace=0)

    asyncio.run(main())


def _bearer(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


async def _refusal(call: Awaitable[Any]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    status = rpc_status.from_call(caught.value)  # type: ignore[arg-type]
    assert status is not None
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    return caught.value.code(), info.reason


def test_a_remembered_token_admits_its_calls_with_their_claims(tmp_path: Path) -> None:
    async def scenario(channel: grpc.aio.Channel, issuer: TokenIssuer) -> None:
        player = _bearer(issuer.issue("p-1", "player"))
        unary: Any = channel.unary_unary(f"/{PROBE}/Player")
        for _ in range(3):  # verified, then remembered
            assert await unary(b"", metadata=player, timeout=5) == b"player:p-1"
        stream: Any = channel.unary_stream(f"/{PROBE}/Stream")
        replies = [reply async for reply in stream(b"", metadata=player, timeout=5)]
        assert replies == [b"player:p-1"] * 3
        # Remembered, but of a kind the method does not take.
        service: Any = channel.unary_unary(f"/{PROBE}/Service")
        code, reason = await _refusal(service(b"", metadata=player, timeout=5))
        assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "TOKEN_WRONG_KIND")
        # Each call has only its own claims.
        other = _bearer(issuer.issue("s-1", "service"))
        assert await service(b"", metadata=other, timeout=5) == b"service:s-1"
        assert await service(b"", metadata=other, timeout=5) == b"service:s-1"
        assert await unary(b"", metadata=player, timeout=5) == b"player:p-1"
        # Claims never leak into another call: one that takes no token sees none.
        opened: Any = channel.unary_unary(f"/{PROBE}/Open")
        assert await opened(b"", metadata=player, timeout=5) == b"-"
        assert await opened(b"", timeout=5) == b"-"

    _probe(scenario, tmp_path)


def test_a_remembered_token_that_expires_is_refused_by_the_server(tmp_path: Path) -> None:
    async def scenario(channel: grpc.aio.Channel, issuer: TokenIssuer) -> None:
        token = issuer.issue("p-2", "player", ttl_seconds=61, now=time.time() - 59)
        unary: Any = channel.unary_unary(f"/{PROBE}/Player")
        assert await unary(b"", metadata=_bearer(token), timeout=5) == b"player:p-2"
        assert await unary(b"", metadata=_bearer(token), timeout=5) == b"player:p-2"
        expires = int(token_claims(token)["exp"])
        await asyncio.sleep(max(0.0, expires - time.time()) + 0.1)
        code, reason = await _refusal(unary(b"", metadata=_bearer(token), timeout=5))
        assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED")

    _probe(scenario, tmp_path)


def token_claims(token: str) -> dict[str, Any]:
    """A token's claims, unverified (the test's own token)."""
    payload = token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))
