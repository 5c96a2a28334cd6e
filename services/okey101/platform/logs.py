"""Logging: structlog, configured once per process.

JSON lines when stderr is not a terminal (a container, CI, a file), a readable console renderer
when it is. The standard library's loggers (grpc's own) go through the same renderer, so a
service writes one format. Context bound with ``bind_ids`` (a request, table or hand id) is added
to every line logged in the same task; each gRPC call runs in its own task, so ids never leak
from one call to another.

Never log a rack, a request body or a token: log ids and outcomes.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, TextIO

import structlog
from structlog.typing import Processor

from okey101.platform.config import LogFormat

#: The request fields the platform reads into the log context, when a request has them.
ID_FIELDS = ("request_id", "table_id", "hand_id")

#: Libraries whose debug lines print what the services store: aiosqlite logs every statement
#: with its parameters (a hand's state, racks included). They log at info at most.
QUIET_LIBRARIES = ("aiosqlite",)

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
_state = {"configured": False}


def configure_logging(
    log_format: LogFormat = "auto",
    level: str = "info",
    *,
    force: bool = False,
    file: TextIO | None = None,
) -> None:
    """Configure structlog and the standard library's logging (once, unless ``force``).

    Lines go to ``file`` (standard error by default). Tracebacks never include local variables:
    they could hold a rack or a token.
    """
    if _state["configured"] and not force:
        return
    stream = sys.stderr if file is None else file
    json_lines = log_format == "json" or (log_format == "auto" and not stream.isatty())
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: Processor
    if json_lines:
        tracebacks = structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
        shared.append(structlog.processors.ExceptionRenderer(tracebacks))
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(exception_formatter=structlog.dev.plain_traceback)
    numeric = _LEVELS.get(level.lower(), logging.INFO)
    structlog.configure(
        processors=[*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(max(numeric, logging.INFO))
    _state["configured"] = True


def get_logger(**initial: Any) -> Any:
    """A structlog logger, with ``initial`` values bound (e.g. ``service="rules"``)."""
    return structlog.get_logger(**initial)


def bind_ids(
    *, request_id: str | None = None, table_id: str | None = None, hand_id: str | None = None
) -> None:
    """Add the given ids to every log line of the current task (an empty id is left out)."""
    ids = {
        key: value
        for key, value in (("request_id", request_id), ("table_id", table_id), ("hand_id", hand_id))
        if value
    }
    if ids:
        structlog.contextvars.bind_contextvars(**ids)


@contextmanager
def bound_ids(**ids: str | None) -> Iterator[None]:
    """``bind_ids`` for a block: the ids are removed again when it ends."""
    present = {key: value for key, value in ids.items() if value}
    with structlog.contextvars.bound_contextvars(**present):
        yield


def ids_of(message: object) -> Mapping[str, str]:
    """The ``request_id``, ``table_id`` and ``hand_id`` fields of a protobuf message, if set.

    Only these fields are read: nothing else of a request (never a rack) reaches a log. A message
    that is not protobuf (raw bytes) has none.
    """
    descriptor = getattr(message, "DESCRIPTOR", None)
    if descriptor is None:
        return {}
    found: dict[str, str] = {}
    for name in _id_fields(descriptor):
        value = getattr(message, name, None)
        if value:
            found[name] = str(value)
    return found


@lru_cache(maxsize=1024)
def _id_fields(descriptor: Any) -> tuple[str, ...]:
    """Which of ``ID_FIELDS`` a message type has (asked once per type, not once per call)."""
    fields = getattr(descriptor, "fields_by_name", None)
    return tuple(name for name in ID_FIELDS if fields and name in fields)
