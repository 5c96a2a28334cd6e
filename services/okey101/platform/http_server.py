"""A small HTTP server in a daemon thread, beside a service's gRPC server: what serves each
service's ``/metrics`` and the lobby's JWKS.

The standard library's WSGI server, one thread per request (a scrape never waits behind
another), IPv6 when the host is an IPv6 address, no access log (scrapes and key fetches come
every few seconds: their lines would drown the calls that matter). ``close()`` stops it and
releases the port.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Requests are not logged."""


@dataclass
class HttpServer:
    """A running server; ``port`` is the bound one (useful with port 0)."""

    host: str
    port: int
    _server: WSGIServer
    _thread: threading.Thread

    def close(self) -> None:
        """Stop serving and release the port (blocks for up to a poll interval)."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def serve_wsgi(host: str, port: int, app: Any, *, name: str) -> HttpServer:
    """Serve the WSGI application ``app`` at ``host:port`` in a daemon thread called ``name``."""
    address = host.strip("[]") or "0.0.0.0"
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    server_class = type(f"{name.title()}HTTPServer", (_Server,), {"address_family": family})
    server: WSGIServer = make_server(address, port, app, server_class, handler_class=_Quiet)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=name, daemon=True
    )
    thread.start()
    return HttpServer(host, int(server.server_port), server, thread)


__all__ = ["HttpServer", "serve_wsgi"]
