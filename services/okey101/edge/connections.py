"""The edge's HTTP connections, bounded: uvicorn's httptools protocol with the limits it lacks.

uvicorn closes a keep-alive connection idle between requests (``timeout_keep_alive``, set from
``http_keep_alive_seconds``) but has no bound on the time a client takes to send a request's
headers or its body, nor on the number of connections (``limit_concurrency`` answers 503 only
once a request's headers are in, after a slow client has held its socket as long as it liked).
So a client holding half a request kept its connection forever. This protocol adds:

- **header time** (``http_header_timeout_seconds``): from the connection's start, or a
  request's first byte on a kept-alive connection, to the end of its headers; past it the
  connection gets a 408 and is closed;
- **body time** (``http_body_timeout_seconds``): from the end of the headers to the end of the
  body; past it the connection is closed (the RPC sees a disconnect);
- **connections** (``http_max_connections``): a connection past the limit is answered 503 at
  once and closed, before anything of it is read.

Each closing is counted in ``okey_edge_connections_closed_total{reason}`` and not logged: a
flood of them must not flood the log too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import ClassVar, Final

from prometheus_client import Counter
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

CLOSED: Final = Counter(
    "okey_edge_connections_closed_total",
    "HTTP connections the edge closed on a client for a limit, by reason: limit (past "
    "http_max_connections), header_timeout, body_timeout.",
    ("reason",),
)
for _reason in ("limit", "header_timeout", "body_timeout"):
    CLOSED.labels(_reason)  # every series exists from the start, at 0

_REFUSED: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 21\r\nconnection: close\r\n\r\ntoo many connections\n"
)
_TIMED_OUT: Final = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 16\r\nconnection: close\r\n\r\nrequest timeout\n"
)


@dataclass(frozen=True)
class HttpLimits:
    """The bounds of one connection (seconds) and of all of them."""

    header_seconds: float
    body_seconds: float
    max_connections: int


def bounded_protocol(limits: HttpLimits) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol under ``limits`` (uvicorn's ``http=`` takes the class)."""

    class Bounded(_BoundedProtocol):
        _limits = limits

    return Bounded


class _BoundedProtocol(HttpToolsProtocol):
    _limits: ClassVar[HttpLimits]
    _timer: asyncio.TimerHandle | None = None
    _refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        # ``connections`` holds the open ones, this one not yet.
        if len(self.connections) >= self._limits.max_connections:
            self._refused = True
            CLOSED.labels("limit").inc()
            transport.write(_REFUSED)
            transport.close()
            return
        super().connection_made(transport)
        self._arm(self._limits.header_seconds, "header_timeout")

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return  # never set up: nothing of uvicorn's to tear down
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if not self._refused:
            super().data_received(data)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._timer is None:  # the first request's header time runs from the connection
            self._arm(self._limits.header_seconds, "header_timeout")

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()
        self._arm(self._limits.body_seconds, "body_timeout")

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def _arm(self, seconds: float, reason: str) -> None:
        self._disarm()
        self._timer = self.loop.call_later(seconds, self._expired, reason)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self, reason: str) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        CLOSED.labels(reason).inc()
        if reason == "header_timeout" and (self.cycle is None or self.cycle.response_complete):
            self.transport.write(_TIMED_OUT)  # no response of this request has started
        self.transport.close()


__all__ = ["CLOSED", "HttpLimits", "bounded_protocol"]
