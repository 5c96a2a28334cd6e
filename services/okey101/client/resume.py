"""A table's event stream that survives dropped connections: WatchTable, resumed by sequence.

WatchTable sends every event after ``after_sequence`` exactly once and in order, optionally
preceded by the current view (``start_with_view``). ``ResumableWatch`` opens it through a
*stream factory* (``open_stream(after_sequence, start_with_view)``: an async iterator of
``WatchTableResponse``), remembers the sequence number of the last event it passed on, and when
the stream breaks opens it again from there, so the consumer sees one unbroken stream:

- UNAVAILABLE (the connection reached the server's maximum age, the server drains, the
  connection dropped), DEADLINE_EXCEEDED, CANCELLED by the network, RESOURCE_EXHAUSTED of a rate
  limit (RATE_LIMITED; not a request too large, which a retry would not fix), UNAUTHENTICATED
  TOKEN_EXPIRED (the stream outlived its token: the stream factory opens the next one with a
  fresh token): reconnect after a back-off (0.2 s doubling to 5 s, reset by anything received
  or by a stream that stayed open ``STEADY_SECONDS``), with ``after_sequence`` = the last
  sequence seen. A stream's first end is routine, not an error (``Reconnecting.worth_showing``:
  a screen says nothing unless the reconnection fails too);
- OUT_OF_RANGE (the log no longer keeps that far back): reconnect with ``start_with_view``; the
  new view replaces everything the consumer knew;
- the stream ending with OK (the server ends it after MATCH_ENDED, the match's last event, or
  TABLE_CLOSED): the iteration ends, never resumed;
- any other code (UNAUTHENTICATED, NOT_FOUND, PERMISSION_DENIED...): raised to the consumer.

An event at or below the last sequence seen is dropped, so a server that replays one more than
asked for cannot make the consumer apply it twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import Final

import grpc
import grpc.aio
from okey.v1 import table_pb2

from okey101.client.errors import Rejection

#: (after_sequence, start_with_view) -> the stream's messages.
StreamFactory = Callable[[int, bool], AsyncIterator[table_pb2.WatchTableResponse]]

# INTERNAL too: a proxy in front of the table pods (ingress-nginx) ends a stream with INTERNAL
# "Stream removed" when the pod behind it dies. Resuming is by sequence number, so a resume after
# a real server error costs one read and misses nothing.
RECONNECT_CODES: Final = frozenset(
    {
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
    }
)
#: Refusals with a reason that a new stream gets past: a rate limit waited out, a fresh token.
RECONNECT_REASONS: Final = frozenset(
    {
        (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED"),
        (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED"),
    }
)


#: A stream that stayed open this long was up, even if it brought nothing (a quiet table): its
#: end counts as a first failure again (no longer back-off, nothing shown).
STEADY_SECONDS: Final = 1.0


@dataclass(frozen=True)
class Backoff:
    """Reconnection delays: ``first`` seconds, times ``factor`` per failure, at most ``most``."""

    first: float = 0.2
    factor: float = 2.0
    most: float = 5.0

    def delay(self, failures: int) -> float:
        return float(min(self.most, self.first * self.factor ** max(0, failures - 1)))


@dataclass(frozen=True)
class Reconnecting:
    """Told to ``on_reconnect`` before each new attempt: why, and from which sequence."""

    rejection: Rejection
    after_sequence: int
    with_view: bool
    failures: int

    @property
    def worth_showing(self) -> bool:
        """Whether a screen should tell the player: not for a stream that ended once and is
        resumed (servers end every connection after its maximum age, and a deploy drains them:
        the stream ends with UNAVAILABLE, routinely), only once a reconnection failed too."""
        return self.failures > 1


class ResumableWatch:
    """The messages of a table's stream, across reconnections (see the module docstring)."""

    def __init__(
        self,
        open_stream: StreamFactory,
        *,
        after_sequence: int = 0,
        start_with_view: bool = True,
        backoff: Backoff | None = None,
        on_reconnect: Callable[[Reconnecting], None] | None = None,
        max_failures: int | None = None,
    ) -> None:
        self._open = open_stream
        self.last_sequence = after_sequence
        self._with_view = start_with_view
        self._backoff = backoff or Backoff()
        self._on_reconnect = on_reconnect
        self._max_failures = max_failures
        #: How many times a stream was opened (the first time included).
        self.connections = 0

    async def __aiter__(self) -> AsyncGenerator[table_pb2.WatchTableResponse, None]:
        failures = 0
        clock = asyncio.get_running_loop().time
        while True:
            with_view, self._with_view = self._with_view, False
            self.connections += 1
            opened = clock()
            try:
                async for item in self._open(self.last_sequence, with_view):
                    if item.HasField("view"):
                        self.last_sequence = max(self.last_sequence, item.view.as_of_sequence)
                    elif item.HasField("event"):
                        if item.event.sequence <= self.last_sequence:
                            continue
                        self.last_sequence = item.event.sequence
                    else:
                        continue
                    failures = 0
                    yield item
                return
            except grpc.aio.AioRpcError as error:
                rejection = Rejection.of(error)
                if rejection.code == grpc.StatusCode.OUT_OF_RANGE:
                    self._with_view = True
                elif (
                    rejection.code not in RECONNECT_CODES
                    and (rejection.code, rejection.reason) not in RECONNECT_REASONS
                ):
                    raise
                if clock() - opened >= STEADY_SECONDS:
                    failures = 0  # the stream was up (a quiet table sends nothing): a new end
                failures += 1
                if self._max_failures is not None and failures > self._max_failures:
                    raise
                if self._on_reconnect is not None:
                    self._on_reconnect(
                        Reconnecting(rejection, self.last_sequence, self._with_view, failures)
                    )
                if rejection.code != grpc.StatusCode.OUT_OF_RANGE:
                    await asyncio.sleep(self._backoff.delay(failures))
