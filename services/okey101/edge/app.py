"""The edge's ASGI application: the Connect routes, CORS, health and the web client's files.

Paths, in order:

- ``/okey.v1.<Service>/<Method>`` (also under ``/connect/``): a public RPC (``routes.PUBLIC``)
  as Connect (JSON or binary, unary over POST or GET, streams in Connect's envelopes), gRPC-Web
  and gRPC, by the request's content type (the ``connectrpc`` package's ASGI application). Any
  other RPC path, an internal one included, is 404.
- ``/healthz`` (alive) and ``/readyz`` (ready: 503 from the start of a drain), for probes.
- anything else: a file of the web client's built directory (``index.html`` for ``/`` and for a
  path that is not a file: the client routes it), or a short page when there is none.

CORS: a request with an ``Origin`` header from an allowed origin gets the ``Access-Control-*``
answers (a preflight 204, and the headers a client must read exposed: ``grpc-status``,
``grpc-message``, ``grpc-status-details-bin``, Connect's encodings); one from any other origin is
refused with 403 before anything runs.
"""

from __future__ import annotations

import asyncio
import mimetypes
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, TypeVar
from urllib.parse import urlsplit

from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.server import ConnectASGIApplication
from google.protobuf.message import Message

from okey101.edge.forward import okey_connect_error
from okey101.platform.errors import PlatformError

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
_LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})


class Origins:
    """Which origins may call the edge from a browser: the configured list, and in local mode
    any http(s) origin on localhost (the edge's own, a development server's)."""

    def __init__(self, allowed: Iterable[str], *, local_mode: bool) -> None:
        self._allowed = frozenset(origin.rstrip("/").lower() for origin in allowed if origin)
        self._local = local_mode

    def allows(self, origin: str) -> bool:
        origin = origin.rstrip("/").lower()
        if origin in self._allowed or "*" in self._allowed:
            return True
        if not self._local:
            return False
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and (parts.hostname or "") in _LOOPBACK_HOSTS


class _Codec(Codec[Message, _M]):
    """A google.protobuf codec whose refusal of a body is our MALFORMED_REQUEST (the same
    INVALID_ARGUMENT, ErrorInfo and sentence a service sends for bytes that are not its
    request), not the library's bare message."""

    def __init__(self, inner: Codec[Message, _M]) -> None:
        self._inner = inner

    def name(self) -> str:
        return self._inner.name()

    def encode(self, message: Message) -> bytes:
        return self._inner.encode(message)

    def decode(self, data: bytes | bytearray, message_class: type[_M]) -> _M:
        try:
            return self._inner.decode(data, message_class)
        except Exception:
            name = message_class.DESCRIPTOR.name
            raise okey_connect_error(PlatformError("MALFORMED_REQUEST", message=name)) from None


class _Routes(ConnectASGIApplication[Mapping[str, Any]]):
    """Every public RPC's endpoint in one Connect application."""

    @property
    def path(self) -> str:
        return "/okey.v1."


def connect_application(endpoints: Mapping[str, Any]) -> _Routes:
    codecs: list[Codec[Any, Any]] = [
        _Codec(google_protobuf_binary_codec()),
        _Codec(google_protobuf_json_codec(ignore_unknown_fields=True)),
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
    ) -> None:
        self._rpc = connect_application(endpoints)
        self._origins = origins
        self._web_dir = web_dir.resolve() if web_dir is not None else None
        self._ready = ready

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

    async def _static(self, path: str, head: bool, send: Send) -> None:
        root = self._web_dir
        if root is None or not root.is_dir():
            await _plain(send, 200, b"okey101 edge: Connect and gRPC-Web at /okey.v1.*\n")
            return
        candidate = (root / path.lstrip("/")).resolve()
        if not candidate.is_relative_to(root):
            await _plain(send, 404, b"not found\n")
            return
        if not candidate.is_file():
            candidate = root / "index.html"
            if not candidate.is_file():
                await _plain(send, 404, b"not found\n")
                return
        body = await asyncio.to_thread(candidate.read_bytes)
        kind = mimetypes.guess_type(candidate.name)[0] or "application/octet-stream"
        answer = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": answer})
        await send({"type": "http.response.body", "body": b"" if head else body})


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


__all__ = ["EXPOSED_HEADERS", "EdgeApp", "Origins", "connect_application"]
