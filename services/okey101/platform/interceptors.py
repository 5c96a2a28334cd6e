"""The interceptor every call passes first: metrics, the log line, error mapping, draining.

For each call:

- metrics: ``grpc_server_started_total`` when it starts; ``grpc_server_handled_total`` and
  ``grpc_server_handling_seconds`` when it ends (``metrics``), ``grpc_server_msg_sent_total`` per
  streamed message;
- one log line, ``rpc``, with the method, the status code, ``duration_ms`` and the request's
  ``request_id``/``table_id``/``hand_id`` if it has such fields (bound for the handler's own lines
  too; health checks, and the ``routine`` methods a service names (a poll other services make
  every few seconds), at debug level). Nothing else of the request is read: never a rack;
- an ``OkeyError`` escaping the handler ends the call with its mapped status (``errors``); any
  other exception is INTERNAL with a generic sentence, its traceback logged, never sent;
- request bytes that do not decode as the method's message are INVALID_ARGUMENT
  (``MALFORMED_REQUEST``) before any handler runs (gRPC's own answer would be UNKNOWN);
- streams (server and bidi) still open when the server drains are ended with UNAVAILABLE and
  ``SERVER_SHUTTING_DOWN``, telling clients to reconnect (to another pod); a stream whose end
  an inner layer set (``handlers.StreamEnd``: the token's expiry) is ended with its error then.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final, NoReturn, cast

import grpc
import grpc.aio
import structlog

from okey101.engine.errors import OkeyError
from okey101.platform import metrics
from okey101.platform.errors import (
    Internal,
    PlatformError,
    ResourceExhausted,
    Unavailable,
    abort_with,
    request_language,
)
from okey101.platform.handlers import (
    MAX_METADATA_BYTES,
    MAX_REQUEST_BYTES,
    STREAM_END,
    Context,
    Handler,
    MalformedRequest,
    OversizeRequest,
    StreamEnd,
    WrapCache,
    metadata_size,
    rpc_type,
    split_method,
    wrap,
)
from okey101.platform.logs import ids_of
from okey101.platform.waiting import wait_set

HEALTH_SERVICE: Final = "grpc.health.v1.Health"
_SERIOUS: Final = frozenset(
    {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.DATA_LOSS}
)


class Drain:
    """The server's shutdown as the calls see it.

    Once ``close_streams`` is called, open streams end (and new calls are refused) with
    UNAVAILABLE ``SERVER_SHUTTING_DOWN``, which clients retry elsewhere; unary calls already
    running go on, and ``until_idle`` waits for them. gRPC's own stop would cancel a call that
    races it (CANCELLED, which clients do not retry): the server stops once none is left.
    """

    def __init__(self) -> None:
        self._closing = asyncio.Event()
        self._running = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def closing(self) -> bool:
        return self._closing.is_set()

    def close_streams(self) -> None:
        """End every open stream and refuse every new call with SERVER_SHUTTING_DOWN."""
        self._closing.set()

    async def wait(self) -> None:
        await self._closing.wait()

    def started(self) -> None:
        self._running += 1
        self._idle.clear()

    def finished(self) -> None:
        self._running -= 1
        if not self._running:
            self._idle.set()

    async def until_idle(self, timeout: float) -> None:
        """Until no unary call is running (at most ``timeout`` seconds)."""
        await wait_set(self._idle, timeout)


class ObservabilityInterceptor(grpc.aio.ServerInterceptor):
    """Metrics, the per-call log line, error mapping and stream draining (module docstring)."""

    def __init__(self, logger: Any, drain: Drain, routine: frozenset[str] = frozenset()) -> None:
        self._log = logger
        self._drain = drain
        #: Full method names (``/pkg.Service/Method``) logged at debug, as health checks are.
        self._routine = routine
        self._wrapped = WrapCache(self._build)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        return self._wrapped.get(handler_call_details.method, handler)

    def _build(self, method: str, handler: Handler) -> Handler:
        kind = rpc_type(handler)
        service, name = split_method(method)
        started = metrics.STARTED.labels(kind, service, name)
        seconds = metrics.HANDLING_SECONDS.labels(kind, service, name)
        sent = metrics.MSG_SENT.labels(kind, service, name)
        # The handled counter's child for each status code, found once: looking a child up by
        # its labels takes a lock and costs more than counting.
        handled: dict[grpc.StatusCode, Any] = {}
        log = self._log
        # Probes check health every few seconds, and services poll one another (the revoked
        # logins): their lines would drown the calls that matter.
        quiet = service == HEALTH_SERVICE or method in self._routine
        routine = log.debug if quiet else log.info

        def finish(context: Context, began: float, code: grpc.StatusCode | None) -> None:
            elapsed = time.perf_counter() - began
            final = code or cast(grpc.StatusCode | None, context.code()) or grpc.StatusCode.OK
            counter = handled.get(final)
            if counter is None:
                counter = handled[final] = metrics.HANDLED.labels(kind, service, name, final.name)
            counter.inc()
            seconds.observe(elapsed)
            level = log.error if final in _SERIOUS else routine
            level("rpc", method=method, code=final.name, duration_ms=round(elapsed * 1000, 3))

        async def unary(
            call_next: Callable[[], Awaitable[Any]], request: Any, context: Context
        ) -> Any:
            began = time.perf_counter()
            started.inc()
            _bind_ids(request)
            code: grpc.StatusCode | None = None
            metadata = context.invocation_metadata()
            if (
                self._drain.closing
                or isinstance(request, _UNREAD)
                or metadata_size(metadata) > MAX_METADATA_BYTES
            ):
                language = request_language(request, metadata)
                try:
                    await abort_with(context, _refusal_before(request, metadata), language)
                finally:
                    finish(context, began, code)
            self._drain.started()
            try:
                return await call_next()
            except asyncio.CancelledError:
                code = _cancelled_code(context)
                raise
            except Exception as exc:
                await self._map(exc, context, method, request)
            finally:
                self._drain.finished()
                finish(context, began, code)

        async def stream(
            responses: AsyncIterator[Any], request: Any, context: Context
        ) -> AsyncIterator[Any]:
            began = time.perf_counter()
            started.inc()
            _bind_ids(request)
            code: grpc.StatusCode | None = None
            try:
                metadata = context.invocation_metadata()
                if isinstance(request, _UNREAD) or metadata_size(metadata) > MAX_METADATA_BYTES:
                    language = request_language(request, metadata)
                    await abort_with(context, _refusal_before(request, metadata), language)
                async for item in self._until_drained(responses):
                    yield item
                    sent.inc()
            except _Drained:
                language = request_language(request, context.invocation_metadata())
                await abort_with(context, Unavailable("SERVER_SHUTTING_DOWN"), language)
            except _Ended as ended:
                language = request_language(request, context.invocation_metadata())
                await abort_with(context, ended.error, language)
            except asyncio.CancelledError:
                code = _cancelled_code(context)
                raise
            except Exception as exc:
                await self._map(exc, context, method, request)
            finally:
                finish(context, began, code)

        return wrap(handler, unary, stream)

    async def _until_drained(self, responses: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """The responses until they end; ``_Drained`` if the server drains first, ``_Ended``
        if the end an inner layer set (``StreamEnd``) comes first.

        The responses are read in the call's own task (a task a message would cost as much as
        the message). A drain or an end that comes while the handler waits for its next
        response cancels that wait; one that comes while a response is being sent is raised
        once the send is done."""
        if self._drain.closing:
            raise _Drained
        task = asyncio.current_task()
        assert task is not None
        end = StreamEnd()
        STREAM_END.set(end)
        stopped: list[Exception] = []
        waiting = False
        cancels = 0  # ours, not yet taken back

        def stop(reason: Exception) -> None:
            nonlocal cancels
            if not stopped:
                stopped.append(reason)
                if waiting:
                    cancels += 1
                    task.cancel()

        def on_closing(closing: asyncio.Future[Any]) -> None:
            if not closing.cancelled():
                stop(_Drained())

        def on_end(due: asyncio.Future[OkeyError]) -> None:
            if not due.cancelled():
                stop(_Ended(due.result()))

        closing = asyncio.ensure_future(self._drain.wait())
        closing.add_done_callback(on_closing)
        end.due.add_done_callback(on_end)
        iterator = aiter(responses)
        try:
            while not stopped:
                waiting = True
                try:
                    item = await anext(iterator)
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if cancels:
                        cancels -= 1
                        if task.uncancel() == 0:
                            break  # our own cancel: the reason is raised below
                    raise
                finally:
                    waiting = False
                yield item
            raise stopped[0]
        finally:
            while cancels:  # a handler that swallowed our cancel: its count taken back
                cancels -= 1
                task.uncancel()
            closing.cancel()
            end.cancel()

    async def _map(self, exc: Exception, context: Context, method: str, request: Any) -> NoReturn:
        """End the call for an exception out of a handler (an abort passes through as is), in
        the language the request asked for."""
        if isinstance(exc, grpc.aio.BaseError):
            raise exc
        language = request_language(request, context.invocation_metadata())
        if isinstance(exc, OkeyError):
            await abort_with(context, exc, language)
        self._log.error("unexpected exception in a handler", method=method, exc_info=exc)
        await abort_with(context, Internal("INTERNAL"), language)


#: Requests the handler never sees (``handlers.tolerant``).
_UNREAD: Final = (MalformedRequest, OversizeRequest)


def check_streamed(request: Any) -> None:
    """A request of a client stream that did not decode, or is too large, is refused as a
    unary call's would be before its handler runs (the handler reads the stream itself)."""
    if isinstance(request, _UNREAD):
        raise _refusal_before(request, ())


def _refusal_before(request: Any, metadata: Any) -> OkeyError:
    """Why a call is refused before its handler runs: bytes that are not its request message
    (INVALID_ARGUMENT), too many of them or too much metadata (RESOURCE_EXHAUSTED), else the
    server is draining."""
    if isinstance(request, MalformedRequest):
        return PlatformError("MALFORMED_REQUEST", message=request.message)
    if isinstance(request, OversizeRequest):
        return ResourceExhausted("MESSAGE_TOO_LARGE", size=request.size, limit=MAX_REQUEST_BYTES)
    size = metadata_size(metadata)
    if size > MAX_METADATA_BYTES:
        return ResourceExhausted("METADATA_TOO_LARGE", size=size, limit=MAX_METADATA_BYTES)
    return Unavailable("SERVER_SHUTTING_DOWN")


def _cancelled_code(context: Context) -> grpc.StatusCode:
    """Why a call was cancelled: its deadline passed, or the client gave up."""
    remaining = cast(float | None, context.time_remaining())
    if remaining is not None and remaining <= 0:
        return grpc.StatusCode.DEADLINE_EXCEEDED
    return grpc.StatusCode.CANCELLED


class _Drained(Exception):
    """A stream cut short because the server drains."""


class _Ended(Exception):
    """A stream cut short at the end an inner layer set, with its error."""

    def __init__(self, error: OkeyError) -> None:
        super().__init__(str(error))
        self.error = error


def _bind_ids(request: Any) -> None:
    ids = ids_of(request)
    if ids:
        structlog.contextvars.bind_contextvars(**ids)
