"""The edge's ASGI application: the Connect routes, CORS, health and the web client's files.

Paths, in order:

- ``/okey.v1.<Service>/<Method>`` (also under ``/connect/``): a public RPC (``routes.PUBLIC``)
  as Connect (JSON or binary, unary over POST or GET, streams in Connect's envelopes), gRPC-Web
  and gRPC, by the request's content type (the ``connectrpc`` package's ASGI application). Any
  other RPC path, an internal one included, is 404; gRPC on a server without trailers (uvicorn,
  HTTP/1.1) is 415 with a sentence saying where gRPC goes.
- ``/healthz`` (alive) and ``/readyz`` (ready: 503 from the start of a drain), for probes.
- anything else: a file of the web client's built directory (``index.html`` for ``/`` and for a
  path that is not a file: the client routes it), or a short page when there is none; 400 for
  a path with a NUL byte.

CORS: a request with an ``Origin`` header from an allowed origin gets the ``Access-Control-*``
answers (a preflight 204, and the headers a client must read exposed: ``grpc-status``,
``grpc-message``, ``grpc-status-details-bin``, Connect's encodings); one from any other origin is
refused with 403 before anything runs. Origins are compared whole (scheme, host and port), never
by host name alone.

The client's address (the connection's peer, or what the proxies in ``OKEY_TRUSTED_PROXIES`` say
it was) replaces any ``X-Forwarded-For`` the request carried before the RPC application sees it,
so the services are told the edge's finding and never a value the client wrote.
"""

from __future__ import annotations

import asyncio
import json
import mimetypes
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Final, TypeVar, cast
from urllib.parse import urlsplit

from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.server import ConnectASGIApplication
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message

from okey101.edge import enums
from okey101.edge.forward import okey_connect_error
from okey101.platform.addresses import FORWARDED_FOR, TrustedProxies
from okey101.platform.config import ConfigError
from okey101.platform.convert.limits import bad_field
from okey101.platform.errors import Language, PlatformError, parse_accept_language

Scope = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]
_M = TypeVar("_M", bound=Message)

ALLOWED_METHODS: Final = "GET, POST, OPTIONS"
ALLOWED_HEADERS: Final = (
    "authorization",
    "accept-language",
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "connect-content-encoding",
    "connect-accept-encoding",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
    "x-request-id",
    "x-okey-table-id",
    "traceparent",
    "tracestate",
)
EXPOSED_HEADERS: Final = (
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
    "connect-content-encoding",
    "connect-accept-encoding",
    "content-encoding",
)
#: The RPCs are also served under this prefix (``/connect/okey.v1.LobbyService/LoginGuest``): in
#: a cluster the ingress sends ``/okey.v1.*`` on the API's host to the services' gRPC, so a
#: browser on that host uses ``baseUrl: "https://HOST/connect"``.
CONNECT_PREFIX: Final = "/connect"
#: How long a browser may keep a preflight's answer (seconds).
PREFLIGHT_MAX_AGE: Final = 7200
_LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
#: What a gRPC client over HTTP/1.1 is told (gRPC needs HTTP/2 and trailers, which uvicorn
#: does not speak).
GRPC_REFUSED: Final = (
    b"gRPC (application/grpc) is not served here: it needs HTTP/2 with trailers. Call the "
    b"services directly or through the ingress, or use Connect or gRPC-Web at this address.\n"
)
#: The caller's language (``Accept-Language``) for the errors the codecs raise, which see the
#: body but not the headers; set per request (each runs in its own task).
_LANGUAGE: ContextVar[Language] = ContextVar("edge_language", default="en")


def parse_origin(text: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of a serialised origin (``https://okey.example``,
    ``http://localhost:5173``), the port defaulted; None for anything else: another scheme,
    a user, a path, a query, a port that is not a number (``http://localhost:5173.evil``)."""
    parts = urlsplit(text.strip().lower())
    if (
        parts.scheme not in _DEFAULT_PORTS
        or text.strip().lower() != f"{parts.scheme}://{parts.netloc}"
    ):
        return None
    if "@" in parts.netloc or not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    return parts.scheme, parts.hostname, port or _DEFAULT_PORTS[parts.scheme]


class Origins:
    """Which origins may call the edge from a browser: the configured list (each compared
    whole: scheme, host, port), and in local mode any http(s) origin on localhost, any port
    (the edge's own, a development server's)."""

    def __init__(self, allowed: Iterable[str], *, local_mode: bool) -> None:
        entries = [origin.strip().rstrip("/") for origin in allowed if origin.strip()]
        self._any = "*" in entries
        parsed = {entry: parse_origin(entry) for entry in entries if entry != "*"}
        bad = [entry for entry, origin in parsed.items() if origin is None]
        if bad:
            raise ConfigError(
                f"cors_origins: {bad[0]!r} is not an origin (scheme://host[:port], nothing after)"
            )
        self._allowed = frozenset(origin for origin in parsed.values() if origin is not None)
        self._local = local_mode

    def allows(self, origin: str) -> bool:
        if self._any:
            return True
        parsed = parse_origin(origin)
        if parsed is None:
            return False
        return parsed in self._allowed or (self._local and parsed[1] in _LOOPBACK_HOSTS)


class _Codec(Codec[Message, _M]):
    """A google.protobuf codec whose refusal of a body is our MALFORMED_REQUEST (the same
    INVALID_ARGUMENT, ErrorInfo and sentence a service sends for bytes that are not its
    request), not the library's bare message, and which refuses an enum value the request's
    enum does not have (``enums``: BAD_FIELD), which the library would let through."""

    def __init__(self, inner: Codec[Message, _M], *, json_names: bool = False) -> None:
        self._inner = inner
        self._json_names = json_names

    def name(self) -> str:
        return self._inner.name()

    def encode(self, message: Message) -> bytes:
        return self._inner.encode(message)

    def decode(self, data: bytes | bytearray, message_class: type[_M]) -> _M:
        try:
            message = self._inner.decode(data, message_class)
        except Exception:
            name = message_class.DESCRIPTOR.name
            error = PlatformError("MALFORMED_REQUEST", message=name)
            raise okey_connect_error(error, _LANGUAGE.get()) from None
        unknown = None
        if self._json_names and data:
            # Parsed again: the library has already dropped an unknown name without a trace.
            described = cast(Descriptor, message_class.DESCRIPTOR)
            unknown = enums.unknown_name(json.loads(data), described)
        unknown = unknown or enums.unknown_number(message)
        if unknown is not None:
            field, value = unknown
            language = _LANGUAGE.get()
            locale = getattr(message, "locale", "")
            if isinstance(locale, str) and locale.strip():
                language = parse_accept_language(locale)  # as a service reads it
            raise okey_connect_error(bad_field(field, value), language)
        return message


class _Routes(ConnectASGIApplication[Mapping[str, Any]]):
    """Every public RPC's endpoint in one Connect application."""

    @property
    def path(self) -> str:
        return "/okey.v1."


def connect_application(endpoints: Mapping[str, Any]) -> _Routes:
    codecs: list[Codec[Any, Any]] = [
        _Codec(google_protobuf_binary_codec()),
        _Codec(google_protobuf_json_codec(ignore_unknown_fields=True), json_names=True),
    ]
    return _Routes(service=endpoints, endpoints=lambda given: given, codecs=codecs)


class EdgeApp:
    """The whole ASGI application (module docstring)."""

    def __init__(
        self,
        endpoints: Mapping[str, Any],
        origins: Origins,
        web_dir: Path | None,
        ready: Callable[[], bool],
        trusted: TrustedProxies | None = None,
    ) -> None:
        self._rpc = connect_application(endpoints)
        self._origins = origins
        self._web_dir = web_dir.resolve() if web_dir is not None else None
        self._ready = ready
        self._trusted = trusted if trusted is not None else TrustedProxies()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        headers = _headers(scope)
        origin = headers.get("origin")
        if origin is not None and not self._origins.allows(origin):
            await _plain(send, 403, b"origin not allowed\n")
            return
        if scope["method"] == "OPTIONS":
            await self._preflight(send, origin, headers)
            return
        if path.startswith(CONNECT_PREFIX + "/okey.v1."):
            path = path.removeprefix(CONNECT_PREFIX)
            scope = {**scope, "path": path, "raw_path": path.encode()}
        if path.startswith("/okey.v1."):
            if _is_grpc(headers.get("content-type", "")) and not _has_trailers(scope):
                await _plain(send, 415, GRPC_REFUSED)
                return
            _LANGUAGE.set(parse_accept_language(headers.get("accept-language", "")))
            scope = {**scope, "headers": self._client_forwarded_for(scope)}
            await self._rpc(scope, receive, _with_cors(send, origin))
        elif path == "/healthz":
            await _plain(send, 200, b"ok\n")
        elif path == "/readyz":
            ready = self._ready()
            await _plain(send, 200 if ready else 503, b"ready\n" if ready else b"draining\n")
        elif scope["method"] in ("GET", "HEAD"):
            await self._static(path, scope["method"] == "HEAD", send)
        else:
            await _plain(send, 405, b"method not allowed\n")

    async def _preflight(self, send: Send, origin: str | None, headers: Mapping[str, str]) -> None:
        if origin is None or "access-control-request-method" not in headers:
            await _plain(send, 204, b"")
            return
        answer = [
            (b"access-control-allow-origin", origin.encode()),
            (b"access-control-allow-methods", ALLOWED_METHODS.encode()),
            (b"access-control-allow-headers", ", ".join(ALLOWED_HEADERS).encode()),
            (b"access-control-expose-headers", ", ".join(EXPOSED_HEADERS).encode()),
            (b"access-control-max-age", str(PREFLIGHT_MAX_AGE).encode()),
            (b"vary", b"Origin"),
        ]
        await send({"type": "http.response.start", "status": 204, "headers": answer})
        await send({"type": "http.response.body", "body": b""})

    def _client_forwarded_for(self, scope: Scope) -> list[tuple[bytes, bytes]]:
        """The request's headers with ``X-Forwarded-For`` replaced by the client's address (as
        the trusted proxies tell it; the peer's when none is trusted), or dropped when the
        peer is no IP address."""
        client = scope.get("client")
        peer = str(client[0]) if client else None
        headers: list[tuple[bytes, bytes]] = []
        claimed: list[str] = []
        for name, value in scope.get("headers", ()):
            if name.lower() == FORWARDED_FOR.encode():
                claimed.append(value.decode("latin-1"))
            else:
                headers.append((name, value))
        address = self._trusted.client_address(peer, claimed)
        if address != "unknown":
            headers.append((FORWARDED_FOR.encode(), address.encode()))
        return headers

    async def _static(self, path: str, head: bool, send: Send) -> None:
        root = self._web_dir
        if root is None or not root.is_dir():
            await _plain(send, 200, b"okey101 edge: Connect and gRPC-Web at /okey.v1.*\n")
            return
        if "\x00" in path:  # no file has one; the OS would refuse the name (ValueError)
            await _plain(send, 400, b"bad path\n")
            return
        candidate = (root / path.lstrip("/")).resolve()
        if not candidate.is_relative_to(root):
            await _plain(send, 404, b"not found\n")
            return
        if not _is_file(candidate):
            candidate = root / "index.html"
            if not candidate.is_file():
                await _plain(send, 404, b"not found\n")
                return
        body = await asyncio.to_thread(candidate.read_bytes)
        kind = mimetypes.guess_type(candidate.name)[0] or "application/octet-stream"
        answer = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": answer})
        await send({"type": "http.response.body", "body": b"" if head else body})


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; False for a name the OS refuses (too long, ...)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _is_grpc(content_type: str) -> bool:
    """gRPC proper (``application/grpc``, ``+proto``, ``+json``), not gRPC-Web."""
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/grpc" or kind.startswith("application/grpc+")


def _has_trailers(scope: Scope) -> bool:
    """Whether the server can send HTTP trailers (an HTTP/2 server with the ASGI extension)."""
    return "http.response.trailers" in (scope.get("extensions") or {})


def _headers(scope: Scope) -> dict[str, str]:
    return {
        name.decode("latin-1").lower(): value.decode("latin-1")
        for name, value in scope.get("headers", ())
    }


def _with_cors(send: Send, origin: str | None) -> Send:
    """``send`` adding the CORS answers to the response's start (for an allowed origin)."""
    if origin is None:
        return send
    extra = [
        (b"access-control-allow-origin", origin.encode()),
        (b"access-control-expose-headers", ", ".join(EXPOSED_HEADERS).encode()),
        (b"vary", b"Origin"),
    ]

    async def sending(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *extra]}
        await send(message)

    return sending


async def _plain(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


__all__ = [
    "EXPOSED_HEADERS",
    "GRPC_REFUSED",
    "EdgeApp",
    "Origins",
    "connect_application",
    "parse_origin",
]
