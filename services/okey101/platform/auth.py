"""Tokens and who may call what.

- Keys: the lobby signs with an Ed25519 private key (PEM, PKCS#8). In local mode, with no key
  configured, every service shares a development key made once under ``<var>/dev-signing-key.pem``.
  A key's id (``kid``) is its RFC 7638 thumbprint.
- ``TokenIssuer`` signs access tokens (EdDSA JWT; header ``kid``; claims ``iss``, ``sub``,
  ``kind`` = ``player`` | ``service``, ``iat``, ``exp``, ``jti``, and for a player's login
  ``sid``, the login it belongs to).
- ``JwksVerifier`` checks them against a JWKS (RFC 8037 OKP keys) that may hold several keys, so
  keys rotate: publish the new key, sign with it, drop the old one once its tokens have expired.
  A verifier built from a URL re-reads it (at most every 30 s) when a token names an unknown key.
- ``AccessPolicy``: each RPC (full method name) declares the tokens it accepts, ``player``,
  ``service`` or ``none``. A method with no declaration is refused (fail closed).
- ``AuthInterceptor`` enforces it: no token or a malformed, forged or expired one is
  UNAUTHENTICATED (``TOKEN_MISSING``, ``TOKEN_INVALID``, ``TOKEN_EXPIRED``); a valid token of a
  kind the method does not take is PERMISSION_DENIED (``TOKEN_WRONG_KIND``). The handler reads the
  verified claims with ``current_claims()`` / ``require_claims()``. A token is taken until
  ``TOKEN_LEEWAY_SECONDS`` past its ``exp`` (servers' clocks differ a little); a stream opened
  with it is ended at that moment with UNAUTHENTICATED ``TOKEN_EXPIRED`` (a timer set when the
  stream opens, ``handlers.StreamEnd``): the client resumes with a fresh token.
- A revoked login (``revocations``: logged out, or its refresh token stolen) makes its tokens
  UNAUTHENTICATED ``TOKEN_REVOKED`` once the process knows of it, and its open streams end then.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, cast, get_args

import grpc
import grpc.aio
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from okey101.platform.config import ConfigError, Settings
from okey101.platform.errors import (
    Language,
    PermissionDenied,
    Unauthenticated,
    abort_with,
    request_language,
)
from okey101.platform.handlers import STREAM_END, Context, Handler, WrapCache, wrap
from okey101.platform.logs import get_logger
from okey101.platform.revocations import RevokedLogins

Kind = Literal["player", "service"]
Access = Literal["player", "service", "none"]
KINDS: Final[tuple[Kind, ...]] = get_args(Kind)
ISSUER: Final = "okey101"
ALGORITHM: Final = "EdDSA"
DEV_KEY_NAME: Final = "dev-signing-key.pem"
#: How many verified tokens a verifier remembers (until each expires).
VERIFIED_CACHE_SIZE: Final = 10_000
#: How long past its ``exp`` a token is still taken (and a stream opened with it kept open).
TOKEN_LEEWAY_SECONDS: Final = 5.0

#: The methods of the health and reflection services: open to anyone (probes, grpcurl).
PLATFORM_METHODS: Final[Mapping[str, frozenset[Access]]] = {
    "/grpc.health.v1.Health/Check": frozenset({"none"}),
    "/grpc.health.v1.Health/Watch": frozenset({"none"}),
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": frozenset({"none"}),
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo": frozenset({"none"}),
}

_log = get_logger(component="auth")


# --------------------------------------------------------------------------------------------
# Keys


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_jwk(key: Ed25519PublicKey) -> dict[str, str]:
    """The RFC 8037 JWK of a public key, with its ``kid``, ``use`` and ``alg``."""
    x = _b64url(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
    return {
        "kty": "OKP",
        "crv": "Ed25519",
        "x": x,
        "kid": key_id(key),
        "use": "sig",
        "alg": ALGORITHM,
    }


def key_id(key: Ed25519PublicKey) -> str:
    """The RFC 7638 thumbprint of the key: stable, so every service names a key alike."""
    x = _b64url(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
    canonical = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": x}, separators=(",", ":"))
    return _b64url(hashlib.sha256(canonical.encode("ascii")).digest())


@dataclass(frozen=True)
class SigningKey:
    """An Ed25519 private key and its id."""

    private_key: Ed25519PrivateKey
    kid: str

    @classmethod
    def of(cls, private_key: Ed25519PrivateKey) -> SigningKey:
        return cls(private_key, key_id(private_key.public_key()))

    @classmethod
    def generate(cls) -> SigningKey:
        return cls.of(Ed25519PrivateKey.generate())

    def pem(self) -> bytes:
        """The private key as unencrypted PKCS#8 PEM."""
        return self.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def public_jwk(self) -> dict[str, str]:
        return public_jwk(self.private_key.public_key())


def jwks_of(*keys: SigningKey | Ed25519PublicKey) -> dict[str, list[dict[str, str]]]:
    """A JWKS (``{"keys": [...]}``) publishing the public half of each key."""
    jwks = [k.public_jwk() if isinstance(k, SigningKey) else public_jwk(k) for k in keys]
    return {"keys": jwks}


def load_signing_key(path: Path) -> SigningKey:
    """Read an Ed25519 private key from a PEM file."""
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise ConfigError(f"cannot read the signing key {path}: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(f"the signing key {path} is not an Ed25519 key")
    return SigningKey.of(key)


def dev_signing_key(var_dir: Path) -> SigningKey:
    """The local-mode development key under ``var_dir``, made on first use (and logged).

    Several services starting at once agree on one key: the first to link its file wins.
    """
    path = var_dir / DEV_KEY_NAME
    if path.exists():
        key = load_signing_key(path)
        _log.info("using the development signing key (local mode)", path=str(path), kid=key.kid)
        return key
    var_dir.mkdir(parents=True, exist_ok=True)
    key = SigningKey.generate()
    temporary = var_dir / f".{DEV_KEY_NAME}.{os.getpid()}.{uuid.uuid4().hex}"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(key.pem())
        os.link(temporary, path)
    except FileExistsError:
        return load_signing_key(path)
    finally:
        temporary.unlink(missing_ok=True)
    _log.warning(
        "generated a development signing key (local mode only)", path=str(path), kid=key.kid
    )
    return key


def signing_key_for(settings: Settings) -> SigningKey | None:
    """The configured signing key; in local mode the development key if none is configured."""
    if settings.signing_key_file is not None:
        return load_signing_key(settings.signing_key_file)
    if settings.local_mode:
        return dev_signing_key(settings.var_dir)
    return None


# --------------------------------------------------------------------------------------------
# Tokens


@dataclass(frozen=True)
class Claims:
    """What a verified token says."""

    subject: str
    kind: Kind
    token_id: str
    issued_at: int
    expires_at: int
    #: The login the token belongs to (``sid``; a player's tokens from the lobby), or None.
    session_id: str | None = None


class TokenIssuer:
    """Signs access tokens with one key."""

    def __init__(self, key: SigningKey, *, issuer: str = ISSUER) -> None:
        self._key = key
        self._issuer = issuer

    @property
    def kid(self) -> str:
        return self._key.kid

    def issue(
        self,
        subject: str,
        kind: Kind,
        *,
        ttl_seconds: float = 900,
        now: float | None = None,
        session_id: str | None = None,
    ) -> str:
        """A token for ``subject`` of ``kind`` valid for ``ttl_seconds`` from ``now``, of the
        login ``session_id`` if given (claim ``sid``: revoking the login revokes the token)."""
        if kind not in KINDS:
            raise ValueError(f"a token kind is player or service, not {kind!r}")
        issued = int(time.time() if now is None else now)
        claims: dict[str, object] = {
            "iss": self._issuer,
            "sub": subject,
            "kind": kind,
            "iat": issued,
            "exp": issued + int(ttl_seconds),
            "jti": uuid.uuid4().hex,
        }
        if session_id is not None:
            claims["sid"] = session_id
        return jwt.encode(
            claims, self._key.private_key, algorithm=ALGORITHM, headers={"kid": self._key.kid}
        )


JwksFetch = Callable[[], Mapping[str, Any]]


class JwksVerifier:
    """Verifies tokens against the keys of a JWKS; only Ed25519 (OKP) keys are used."""

    def __init__(
        self,
        jwks: Mapping[str, Any],
        *,
        issuer: str = ISSUER,
        leeway_seconds: float = TOKEN_LEEWAY_SECONDS,
        fetch: JwksFetch | None = None,
        refresh_interval: float = 30.0,
        revocations: RevokedLogins | None = None,
    ) -> None:
        #: The revoked logins this process knows (a revocation follower fills it).
        self.revocations = revocations if revocations is not None else RevokedLogins()
        self._issuer = issuer
        self._leeway = leeway_seconds
        self._fetch = fetch
        self._refresh_interval = refresh_interval
        self._last_fetch = time.monotonic() if jwks else float("-inf")
        self._keys = _parse_jwks(jwks)
        self._verified: dict[str, Claims] = {}

    @property
    def leeway_seconds(self) -> float:
        """How long past its ``exp`` a token is still taken (clocks differ a little)."""
        return self._leeway

    @property
    def key_ids(self) -> frozenset[str]:
        return frozenset(self._keys)

    def verify(self, token: str) -> Claims:
        """The claims of ``token``; ``Unauthenticated`` (TOKEN_INVALID, TOKEN_EXPIRED or
        TOKEN_REVOKED) if not.

        A token verified once is remembered until it expires (the same caller sends the same
        token call after call, and a signature check costs far more than the call itself); the
        memory is forgotten whenever the keys change.
        """
        known = self._remembered(token)
        if known is not None:
            return known
        self._verified.pop(token, None)  # expired or revoked, if it was there
        kid = _kid_of(token)
        key = self._keys.get(kid) if kid is not None else None
        if key is None:
            raise Unauthenticated("TOKEN_INVALID")
        claims = self._decode(token, key)
        if self.revocations.is_revoked(claims.session_id):
            raise Unauthenticated("TOKEN_REVOKED")
        if len(self._verified) >= VERIFIED_CACHE_SIZE:
            del self._verified[next(iter(self._verified))]
        self._verified[token] = claims
        return claims

    def _remembered(self, token: str) -> Claims | None:
        """The claims of a token verified before that has neither expired nor been revoked;
        None otherwise."""
        known = self._verified.get(token)
        if (
            known is not None
            and time.time() < known.expires_at + self._leeway
            and not self.revocations.is_revoked(known.session_id)
        ):
            return known
        return None

    async def verify_fresh(self, token: str) -> Claims:
        """``verify``, re-reading the JWKS first if the token names a key not yet known."""
        if token in self._verified:
            # Verified with a key still known (the memory is cleared when keys change): reading
            # the header again would cost more than the rest of the check; ``verify`` still
            # checks the expiry.
            return self.verify(token)
        kid = _kid_of(token)
        if (
            kid is not None
            and kid not in self._keys
            and self._fetch is not None
            and time.monotonic() - self._last_fetch >= self._refresh_interval
        ):
            await self.refresh()
        return self.verify(token)

    async def refresh(self) -> None:
        """Re-read the JWKS (in a thread); keep the known keys if it cannot be read."""
        if self._fetch is None:
            return
        self._last_fetch = time.monotonic()
        try:
            jwks = await asyncio.to_thread(self._fetch)
        except Exception as exc:
            _log.warning("cannot read the JWKS; keeping the keys known", error=str(exc))
            return
        keys = _parse_jwks(jwks)
        if keys != self._keys:
            self._keys = keys
            self._verified.clear()

    def _decode(self, token: str, key: Ed25519PublicKey) -> Claims:
        try:
            payload = jwt.decode(
                token,
                key,
                algorithms=[ALGORITHM],
                issuer=self._issuer,
                leeway=self._leeway,
                options={"require": ["exp", "iat", "sub", "jti", "kind", "iss"]},
            )
        except jwt.ExpiredSignatureError:
            raise Unauthenticated("TOKEN_EXPIRED") from None
        except jwt.InvalidTokenError:
            raise Unauthenticated("TOKEN_INVALID") from None
        kind = payload.get("kind")
        session_id = payload.get("sid")
        if (
            kind not in KINDS
            or not isinstance(payload.get("sub"), str)
            or not isinstance(session_id, str | None)
        ):
            raise Unauthenticated("TOKEN_INVALID")
        return Claims(
            subject=payload["sub"],
            kind=cast(Kind, kind),
            token_id=str(payload["jti"]),
            issued_at=int(payload["iat"]),
            expires_at=int(payload["exp"]),
            session_id=session_id,
        )


def _kid_of(token: str) -> str | None:
    try:
        header = jwt.get_unverified_header(token)
    except jwt.InvalidTokenError:
        return None
    kid = header.get("kid")
    return kid if isinstance(kid, str) else None


def _parse_jwks(jwks: Mapping[str, Any]) -> dict[str, Ed25519PublicKey]:
    keys: dict[str, Ed25519PublicKey] = {}
    for jwk in jwks.get("keys", ()):
        if not isinstance(jwk, Mapping) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
            continue
        try:
            key = Ed25519PublicKey.from_public_bytes(_unb64url(str(jwk["x"])))
        except (KeyError, ValueError):
            continue
        keys[str(jwk.get("kid") or key_id(key))] = key
    return keys


def fetch_jwks_url(url: str, timeout: float = 5.0) -> Callable[[], Mapping[str, Any]]:
    """A function reading the JWKS at ``url`` (blocking: ``JwksVerifier`` runs it in a thread)."""

    def fetch() -> Mapping[str, Any]:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = json.loads(response.read())
        if not isinstance(data, dict):
            raise ValueError("a JWKS is a JSON object")
        return data

    return fetch


def verifier_for(settings: Settings, signing_key: SigningKey | None = None) -> JwksVerifier:
    """The verifier the settings describe: a JWKS file or URL, else the signing key's own JWKS."""
    if settings.jwks_file is not None:
        try:
            jwks = json.loads(settings.jwks_file.read_text())
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the JWKS file {settings.jwks_file}: {exc}") from None
        return JwksVerifier(jwks)
    if settings.jwks_url:
        return JwksVerifier({}, fetch=fetch_jwks_url(settings.jwks_url))
    key = signing_key if signing_key is not None else signing_key_for(settings)
    if key is None:
        raise ConfigError(
            "no key to verify tokens with: set OKEY_JWKS_URL, OKEY_JWKS_FILE or "
            "OKEY_SIGNING_KEY_FILE (or OKEY_LOCAL_MODE=1 for a development key)"
        )
    return JwksVerifier(jwks_of(key))


# --------------------------------------------------------------------------------------------
# Access


class AccessPolicy:
    """Which tokens each RPC accepts, by full method name (``/okey.v1.RulesService/Apply``)."""

    def __init__(self, rules: Mapping[str, Iterable[Access]] | None = None) -> None:
        self._rules: dict[str, frozenset[Access]] = dict(PLATFORM_METHODS)
        for method, accepts in (rules or {}).items():
            self.declare(method, *accepts)

    def declare(self, method: str, *accepts: Access) -> None:
        """Declare that ``method`` accepts the given token kinds (or ``"none"``: no token)."""
        if not method.startswith("/") or method.count("/") != 2:
            raise ValueError(f"a full method name looks like /pkg.Service/Method, not {method!r}")
        kinds = frozenset(accepts)
        if not kinds or not kinds <= {"player", "service", "none"}:
            raise ValueError(f"{method} must accept player, service or none, not {accepts!r}")
        if "none" in kinds and len(kinds) > 1:
            raise ValueError(f"{method}: 'none' (no token) cannot be combined with a kind")
        self._rules[method] = kinds

    def declare_service(self, service: str, methods: Mapping[str, Iterable[Access]]) -> None:
        """Declare several methods of one service by short name."""
        for name, accepts in methods.items():
            self.declare(f"/{service}/{name}", *accepts)

    @classmethod
    def of_service(cls, service: str, methods: Mapping[str, Iterable[Access]]) -> AccessPolicy:
        """A service's policy: the platform's open methods and its own, by short name."""
        policy = cls()
        policy.declare_service(service, methods)
        return policy

    def accepts(self, method: str) -> frozenset[Access] | None:
        """What ``method`` accepts, or None if it declared nothing."""
        return self._rules.get(method)

    @property
    def methods(self) -> Mapping[str, frozenset[Access]]:
        return dict(self._rules)


_claims: ContextVar[Claims | None] = ContextVar("okey101_claims", default=None)
_NO_TOKEN: Final[frozenset[Access]] = frozenset({"none"})


def current_claims() -> Claims | None:
    """The verified claims of the call being handled (None for a method that takes no token)."""
    return _claims.get()


def require_claims() -> Claims:
    """``current_claims()``, which must be there (the method takes a token)."""
    claims = _claims.get()
    if claims is None:
        raise RuntimeError("no verified token: this method does not take one")
    return claims


def bearer_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
    """The token of an ``authorization: Bearer <token>`` metadata entry."""
    for key, value in metadata or ():
        if key == "authorization" and isinstance(value, str):
            scheme, _, token = value.strip().partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            return None
    return None


class AuthInterceptor(grpc.aio.ServerInterceptor):
    """Lets a call through only with a token its method accepts; see the module's docstring."""

    def __init__(self, policy: AccessPolicy, verifier: JwksVerifier) -> None:
        self._policy = policy
        self._verifier = verifier
        self._wrapped = WrapCache(self._build)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        accepts = self._policy.accepts(method)
        if accepts == _NO_TOKEN:
            return handler
        claims = self._remembered(handler_call_details.invocation_metadata, accepts)
        if claims is not None and not handler.response_streaming:
            # Admitted here, in the call's own task (its handler sees the claims): for a token
            # verified before, a wrapper around the call would cost more than the check itself.
            _claims.set(claims)
            return handler
        return self._wrapped.get(method, handler)  # checked in the call, refused with a reason

    def _remembered(
        self, metadata: Iterable[tuple[str, str | bytes]] | None, accepts: frozenset[Access] | None
    ) -> Claims | None:
        """The claims of the call's token if the verifier remembers it, unexpired, and the
        method takes its kind; None for anything else."""
        token = bearer_token(metadata)
        if token is None or accepts is None:
            return None
        claims = self._verifier._remembered(token)
        return claims if claims is not None and claims.kind in accepts else None

    def _build(self, method: str, handler: Handler) -> Handler:
        accepts = self._policy.accepts(method)
        if accepts is None:
            _log.error("method declares no access: every call to it is refused", method=method)

        async def admit(request: Any, context: Context) -> None:
            # Refusals are told in the request's language (its locale, else accept-language).
            language = request_language(request, context.invocation_metadata())
            if accepts is None:
                await abort_with(
                    context, PermissionDenied("METHOD_NOT_DECLARED", method=method), language
                )
            claims = await self.authenticate(context, accepts, language)
            _claims.set(claims)

        async def unary(
            call_next: Callable[[], Awaitable[Any]], request: Any, context: Context
        ) -> Any:
            await admit(request, context)
            return await call_next()

        async def stream(
            responses: AsyncIterator[Any], request: Any, context: Context
        ) -> AsyncIterator[Any]:
            await admit(request, context)
            end = STREAM_END.get()
            claims = _claims.get()
            unwatch = None
            if end is not None and claims is not None:
                # The stream ends when its token does (the leeway a call gets, no more), or
                # when its login is revoked, whichever comes first.
                end.at(claims.expires_at + self._verifier.leeway_seconds,
                       Unauthenticated("TOKEN_EXPIRED"))  # fmt: skip
                if claims.session_id is not None:
                    unwatch = self._verifier.revocations.watch(
                        claims.session_id,
                        lambda: end.at(time.time(), Unauthenticated("TOKEN_REVOKED")),
                    )
            try:
                async for item in responses:
                    yield item
            finally:
                if unwatch is not None:
                    unwatch()

        return wrap(handler, unary, stream)

    async def authenticate(
        self, context: Context, accepts: frozenset[Access], language: Language | None = None
    ) -> Claims:
        """The claims of the call's token, or the call is aborted with the reason (in
        ``language``, else the call's accept-language)."""
        token = bearer_token(context.invocation_metadata())
        if token is None:
            await abort_with(context, Unauthenticated("TOKEN_MISSING"), language)
        try:
            claims = await self._verifier.verify_fresh(token)
        except Unauthenticated as error:
            await abort_with(context, error, language)
        if claims.kind not in accepts:
            allowed = ", ".join(sorted(kind for kind in accepts if kind != "none"))
            await abort_with(
                context,
                PermissionDenied("TOKEN_WRONG_KIND", kind=claims.kind, accepts=allowed),
                language,
            )
        return claims
