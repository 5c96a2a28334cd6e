"""Wrapping grpc.aio method handlers, for the platform's interceptors.

An aio server interceptor cannot see a call's outcome; it can only hand back a different method
handler. ``wrap`` builds one of the same kind (unary or streaming request and response) whose
behaviour runs ``around`` the original. ``WrapCache`` keeps one wrapped handler per method, so an
interceptor builds it once rather than on every call.

Behaviours of streaming responses may be async generators or coroutines writing with
``context.write``; a unary behaviour may be a coroutine or a plain function. Both forms pass.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Final, Literal, TypeAlias

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from okey101.engine.errors import OkeyError

# Strings: neither class is subscriptable at run time, only in the type stubs.
Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"
RpcType = Literal["unary", "client_stream", "server_stream", "bidi_stream"]

#: ``around(call_next, request, context)`` for a unary response: returns the response.
UnaryAround = Callable[[Callable[[], Awaitable[Any]], Any, Context], Awaitable[Any]]
#: ``around(responses, request, context)`` for a streaming response: yields the responses.
StreamAround = Callable[[AsyncIterator[Any], Any, Context], AsyncIterator[Any]]


def rpc_type(handler: Handler) -> RpcType:
    """The gRPC ecosystem's name for the handler's kind (a label of the standard metrics)."""
    if handler.request_streaming:
        return "bidi_stream" if handler.response_streaming else "client_stream"
    return "server_stream" if handler.response_streaming else "unary"


def behavior_of(handler: Handler) -> Callable[..., Any]:
    """The handler's behaviour, whatever its kind."""
    behavior = (
        handler.unary_unary or handler.unary_stream or handler.stream_unary or handler.stream_stream
    )
    if behavior is None:
        raise ValueError("a method handler without a behaviour")
    return behavior


async def call_unary(behavior: Callable[..., Any], request: Any, context: Context) -> Any:
    """Run a unary-response behaviour, coroutine or plain function."""
    result = behavior(request, context)
    if inspect.isawaitable(result):
        return await result
    return result


async def stream_responses(
    behavior: Callable[..., Any], request: Any, context: Context
) -> AsyncIterator[Any]:
    """The responses of a streaming behaviour: an async generator's items, or none at all for a
    coroutine that writes them itself with ``context.write``."""
    result = behavior(request, context)
    if inspect.isawaitable(result):
        await result
        return
    if hasattr(result, "__aiter__"):
        async for item in result:
            yield item
        return
    for item in result:
        yield item


#: The largest request message a service reads, in bytes. gRPC's own limit on every server
#: (``TRANSPORT_RECEIVE_BYTES``, above it) refuses larger ones before any code of ours runs, as
#: RESOURCE_EXHAUSTED without details; a request between the two is refused by the platform's
#: interceptor with RESOURCE_EXHAUSTED and ErrorInfo ``MESSAGE_TOO_LARGE`` (not to be retried).
MAX_REQUEST_BYTES: Final = 1 << 20
#: gRPC's receive limit on every server (``grpc.max_receive_message_length``).
TRANSPORT_RECEIVE_BYTES: Final = 4 << 20
#: The most request metadata (headers: names and values, in bytes) a service reads; over it
#: the call is refused with RESOURCE_EXHAUSTED ``METADATA_TOO_LARGE``. gRPC's own limit on every
#: server (``TRANSPORT_METADATA_BYTES``) refuses more before any code of ours runs.
MAX_METADATA_BYTES: Final = 8 << 10
#: gRPC's metadata limits on every server (``grpc.max_metadata_size``, the soft one, and
#: ``grpc.absolute_max_metadata_size``; gRPC's defaults are 8 and 16 KiB).
TRANSPORT_METADATA_BYTES: Final = 64 << 10


def metadata_size(metadata: Any) -> int:
    """The bytes of a call's metadata (names and values), as a limit counts them."""
    return sum(len(key) + len(value) for key, value in metadata or ())


class OversizeRequest:
    """What a wrapped handler is given for a request over ``MAX_REQUEST_BYTES``: the platform's
    interceptor refuses it (RESOURCE_EXHAUSTED, ``MESSAGE_TOO_LARGE``)."""

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        #: The request's size in bytes.
        self.size = size


class MalformedRequest:
    """What a wrapped handler is given for request bytes that do not decode as its message.

    gRPC would end such a call UNKNOWN from inside its own code, before any interceptor could
    answer; instead the behaviour gets this, and the platform's interceptor refuses it as
    INVALID_ARGUMENT (MALFORMED_REQUEST).
    """

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        #: The request message's full name.
        self.message = message


def tolerant(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """``deserializer``, answering ``MalformedRequest`` for bytes it cannot decode and
    ``OversizeRequest`` for more than ``MAX_REQUEST_BYTES`` of them."""
    if deserializer is None or getattr(deserializer, "tolerant", False):
        return deserializer
    name = getattr(getattr(deserializer, "__self__", None), "DESCRIPTOR", None)
    message = name.full_name if name is not None else "request"

    def parse(data: bytes) -> Any:
        if len(data) > MAX_REQUEST_BYTES:
            return OversizeRequest(len(data))
        try:
            return deserializer(data)
        except DecodeError:
            return MalformedRequest(message)

    parse.tolerant = True  # type: ignore[attr-defined]
    return parse


def wrap(handler: Handler, unary: UnaryAround, stream: StreamAround) -> Handler:
    """A handler of ``handler``'s kind whose behaviour runs inside ``unary`` or ``stream``;
    its request deserializer is ``tolerant``."""
    behavior = behavior_of(handler)
    deserializer = tolerant(handler.request_deserializer)
    if handler.response_streaming:

        async def streaming(request: Any, context: Context) -> AsyncIterator[Any]:
            async for item in stream(
                stream_responses(behavior, request, context), request, context
            ):
                yield item

        make = (
            grpc.stream_stream_rpc_method_handler
            if handler.request_streaming
            else grpc.unary_stream_rpc_method_handler
        )
        return make(streaming, deserializer, handler.response_serializer)

    async def single(request: Any, context: Context) -> Any:
        return await unary(lambda: call_unary(behavior, request, context), request, context)

    make = (
        grpc.stream_unary_rpc_method_handler
        if handler.request_streaming
        else grpc.unary_unary_rpc_method_handler
    )
    return make(single, deserializer, handler.response_serializer)


class StreamEnd:
    """When an open stream must end, and with which error: an inner layer sets it (the auth
    interceptor: the token's expiry), the outermost one keeps it (``interceptors``: the stream
    is ended with ``error`` at that time, whatever the handler is waiting for). A timer, not a
    check per message."""

    def __init__(self) -> None:
        self.due: asyncio.Future[OkeyError] = asyncio.get_running_loop().create_future()
        self._timer: asyncio.TimerHandle | None = None

    def at(self, wall_time: float, error: OkeyError) -> None:
        """End the stream with ``error`` at ``wall_time`` (seconds since the epoch), unless an
        earlier end is set."""
        delay = max(0.0, wall_time - time.time())
        loop = asyncio.get_running_loop()
        if self._timer is not None:
            if self._timer.when() <= loop.time() + delay:
                return
            self._timer.cancel()
        self._timer = loop.call_later(delay, self._fire, error)

    def _fire(self, error: OkeyError) -> None:
        if not self.due.done():
            self.due.set_result(error)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self.due.cancel()


#: The open stream's end, in the context its handler runs in (None outside a stream).
STREAM_END: ContextVar[StreamEnd | None] = ContextVar("okey101_stream_end", default=None)


class WrapCache:
    """One wrapped handler per method, rebuilt only if the method's handler changes."""

    def __init__(self, build: Callable[[str, Handler], Handler]) -> None:
        self._build = build
        self._cache: dict[str, tuple[Handler, Handler]] = {}

    def get(self, method: str, handler: Handler) -> Handler:
        """The wrapped form of ``handler`` (serving ``method``)."""
        cached = self._cache.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = self._build(method, handler)
        self._cache[method] = (handler, wrapped)
        return wrapped


def split_method(method: str) -> tuple[str, str]:
    """``/pkg.Service/Method`` as ``("pkg.Service", "Method")``."""
    _, _, rest = method.partition("/")
    service, _, name = rest.partition("/")
    return service or "unknown", name or "unknown"
