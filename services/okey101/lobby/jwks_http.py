"""The lobby's public keys over plain HTTP, for ``OKEY_JWKS_URL``.

``platform.auth.fetch_jwks_url`` reads a JWKS with ``urllib`` from an HTTP(S) URL, so the lobby
serves the same document as ``GetJwks`` at ``/.well-known/jwks.json`` (and ``/jwks.json``) on its
own port (``--jwks-port``, default 9106), from a small WSGI server in a daemon thread, as the
metrics are served. Other services set ``OKEY_JWKS_URL=http://<lobby>:9106/.well-known/jwks.json``.
The document is public (public keys only); it is sent with ``Cache-Control: max-age=300``.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from socketserver import ThreadingMixIn
from typing import Any, Final
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

PATHS: Final = frozenset({"/.well-known/jwks.json", "/jwks.json"})


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Key fetches are not logged."""


@dataclass
class JwksServer:
    """The HTTP server of the JWKS; ``port`` is the bound one (useful with port 0)."""

    port: int
    _server: WSGIServer
    _thread: threading.Thread

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def app(jwks: Callable[[], Mapping[str, Any]]) -> Any:
    """The WSGI application: the JWKS at ``PATHS``, 404 elsewhere, 405 for other methods."""

    def application(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path not in PATHS:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found\n"]
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed", [("Allow", "GET, HEAD")])
            return [b""]
        body = json.dumps(jwks(), separators=(",", ":")).encode()
        start_response(
            "200 OK",
            [
                ("Content-Type", "application/jwk-set+json"),
                ("Content-Length", str(len(body))),
                ("Cache-Control", "public, max-age=300"),
            ],
        )
        return [body] if environ.get("REQUEST_METHOD") == "GET" else [b""]

    return application


def start_jwks_server(host: str, port: int, jwks: Callable[[], Mapping[str, Any]]) -> JwksServer:
    """Serve ``jwks()`` over HTTP at ``host:port`` in a daemon thread."""
    address = host.strip("[]") or "0.0.0.0"
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    server_class = type("JwksHTTPServer", (_Server,), {"address_family": family})
    server: WSGIServer = make_server(address, port, app(jwks), server_class, handler_class=_Quiet)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="jwks", daemon=True
    )
    thread.start()
    return JwksServer(int(server.server_port), server, thread)


__all__ = ["PATHS", "JwksServer", "app", "start_jwks_server"]
