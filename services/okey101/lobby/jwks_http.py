"""The lobby's public keys over plain HTTP, for ``OKEY_JWKS_URL``.

``platform.auth.fetch_jwks_url`` reads a JWKS with ``urllib`` from an HTTP(S) URL, so the lobby
serves the same document as ``GetJwks`` at ``/.well-known/jwks.json`` (and ``/jwks.json``) on its
own port (``--jwks-port``, default 9106), from a small WSGI server in a daemon thread, as the
metrics are served. Other services set ``OKEY_JWKS_URL=http://<lobby>:9106/.well-known/jwks.json``.
The document is public (public keys only); it is sent with ``Cache-Control: max-age=300``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from okey101.platform.http_server import HttpServer, serve_wsgi

PATHS: Final = frozenset({"/.well-known/jwks.json", "/jwks.json"})


#: The server of the JWKS (``start_jwks_server``).
JwksServer = HttpServer


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
    return serve_wsgi(host, port, app(jwks), name="jwks")


__all__ = ["PATHS", "JwksServer", "app", "start_jwks_server"]
