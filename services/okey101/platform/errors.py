"""The one table from error codes to gRPC statuses, and the rich status every error carries.

A status code is chosen by, first match wins:

1. ``STATUS_BY_CODE``: the error's code (an override, e.g. ``UNKNOWN_RULES_VERSION``, which the
   engine raises as malformed input, is a FAILED_PRECONDITION: the state is well formed, this
   server just cannot play it);
2. ``STATUS_BY_CLASS``: the error's class (``InvalidInput`` is INVALID_ARGUMENT, ``RuleViolation``
   FAILED_PRECONDITION, and the platform's classes below their namesakes);
3. FAILED_PRECONDITION for any other ``OkeyError``.

Every error goes out as a ``google.rpc.Status`` in ``grpc-status-details-bin`` with exactly one
``ErrorInfo`` (reason = the code, domain ``okey101``, metadata = the parameters as strings) and
one ``LocalizedMessage`` (``en-US`` or ``tr-TR``, from the call's ``accept-language``); the
status message is the sentence itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, NoReturn

import grpc
import grpc.aio
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from okey101.engine.errors import InvalidInput, OkeyError, ParamValue, RuleViolation
from okey101.platform.sentences import PLATFORM, Catalogued

DOMAIN: Final = "okey101"
#: The longest an ErrorInfo parameter and a sentence may be. An error that quotes its input (a
#: bad value, a list) stays far below the 8 KiB of headers a gRPC client accepts; beyond it the
#: client would see RESOURCE_EXHAUSTED instead of the error.
PARAM_LIMIT: Final = 200
SENTENCE_LIMIT: Final = 1000
Language = Literal["en", "tr"]
LOCALES: Final[Mapping[Language, str]] = {"en": "en-US", "tr": "tr-TR"}


class PlatformError(Catalogued):
    """An error of serving rather than of the rules; its sentence is in ``platform.sentences``."""

    catalogue = PLATFORM


class InvalidArgument(PlatformError, InvalidInput):
    """Malformed input the platform checks itself (a page size, a page token)."""


class Unauthenticated(PlatformError):
    """No token, or one that is forged or expired."""


class PermissionDenied(PlatformError):
    """A valid token that may not do this (a service token on a player call, another's seat)."""


class NotFound(PlatformError):
    """The thing named does not exist (a table, a hand, a player)."""


class Aborted(PlatformError):
    """A change computed from a stale state: re-read and retry."""


class ResourceExhausted(PlatformError):
    """A limit was reached (rate, seats, queue)."""


class Unavailable(PlatformError):
    """The server cannot serve this now (shutting down): reconnect and retry."""


class Internal(PlatformError):
    """A fault of ours. Its sentence is generic: the cause is logged, never sent."""


#: Overrides by code. Engine codes whose class alone would give another status are listed,
#: and so is every platform code, so that this table reads as the whole story.
STATUS_BY_CODE: Final[Mapping[str, grpc.StatusCode]] = {
    # A resumed stream asked for events no longer kept (the lobby's WatchPlayer).
    "PLAYER_EVENTS_EXPIRED": grpc.StatusCode.OUT_OF_RANGE,
    # Engine codes.
    "NOT_YOUR_TURN": grpc.StatusCode.FAILED_PRECONDITION,
    "UNKNOWN_MELD": grpc.StatusCode.INVALID_ARGUMENT,
    "UNKNOWN_RULES_VERSION": grpc.StatusCode.FAILED_PRECONDITION,
    "HAND_OVER": grpc.StatusCode.FAILED_PRECONDITION,
    "MATCH_OVER": grpc.StatusCode.FAILED_PRECONDITION,
    # Platform codes.
    "TOKEN_MISSING": grpc.StatusCode.UNAUTHENTICATED,
    "TOKEN_INVALID": grpc.StatusCode.UNAUTHENTICATED,
    "TOKEN_EXPIRED": grpc.StatusCode.UNAUTHENTICATED,
    "TOKEN_REVOKED": grpc.StatusCode.UNAUTHENTICATED,
    "TOKEN_WRONG_KIND": grpc.StatusCode.PERMISSION_DENIED,
    "METHOD_NOT_DECLARED": grpc.StatusCode.PERMISSION_DENIED,
    "NOT_YOUR_SEAT": grpc.StatusCode.PERMISSION_DENIED,
    "TABLE_NOT_FOUND": grpc.StatusCode.NOT_FOUND,
    "HAND_NOT_FOUND": grpc.StatusCode.NOT_FOUND,
    "PLAYER_NOT_FOUND": grpc.StatusCode.NOT_FOUND,
    "STALE_VERSION": grpc.StatusCode.ABORTED,
    "RATE_LIMITED": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "MESSAGE_TOO_LARGE": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "METADATA_TOO_LARGE": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "MALFORMED_REQUEST": grpc.StatusCode.INVALID_ARGUMENT,
    "PAGE_TOKEN_INVALID": grpc.StatusCode.INVALID_ARGUMENT,
    "SERVER_SHUTTING_DOWN": grpc.StatusCode.UNAVAILABLE,
    "INTERNAL": grpc.StatusCode.INTERNAL,
}

#: Defaults by class, for codes not in ``STATUS_BY_CODE``.
STATUS_BY_CLASS: Final[Mapping[type[OkeyError], grpc.StatusCode]] = {
    InvalidInput: grpc.StatusCode.INVALID_ARGUMENT,
    RuleViolation: grpc.StatusCode.FAILED_PRECONDITION,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    NotFound: grpc.StatusCode.NOT_FOUND,
    Aborted: grpc.StatusCode.ABORTED,
    ResourceExhausted: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Unavailable: grpc.StatusCode.UNAVAILABLE,
    Internal: grpc.StatusCode.INTERNAL,
}


def status_code_of(error: OkeyError) -> grpc.StatusCode:
    """The gRPC status code ``error`` is sent with."""
    by_code = STATUS_BY_CODE.get(error.code)
    if by_code is not None:
        return by_code
    for cls in type(error).__mro__:
        by_class = STATUS_BY_CLASS.get(cls)
        if by_class is not None:
            return by_class
    return grpc.StatusCode.FAILED_PRECONDITION


def parse_accept_language(header: str) -> Language:
    """``tr`` or ``en`` from an Accept-Language value (``tr-TR,tr;q=0.9,en;q=0.8``)."""
    best: tuple[float, int, Language] | None = None
    for position, part in enumerate(header.split(",")):
        tag, _, rest = part.strip().partition(";")
        primary = tag.strip().lower().split("-")[0]
        if primary not in ("en", "tr"):
            continue
        quality = 1.0
        for param in rest.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if quality <= 0:
            continue
        language: Language = "tr" if primary == "tr" else "en"
        candidate = (-quality, position, language)
        if best is None or candidate < best:
            best = candidate
    return "en" if best is None else best[2]


def request_language(
    request: object, metadata: Iterable[tuple[str, str | bytes]] | None
) -> Language:
    """The caller's language: the request's ``locale`` field if it has one (every okey.v1
    request does), else its ``accept-language`` metadata, else English."""
    locale = getattr(request, "locale", "")
    if isinstance(locale, str) and locale.strip():
        return parse_accept_language(locale)
    return language_of(metadata)


def language_of(metadata: Iterable[tuple[str, str | bytes]] | None) -> Language:
    """The caller's language from its ``accept-language`` metadata (default English)."""
    for key, value in metadata or ():
        if key == "accept-language" and isinstance(value, str):
            return parse_accept_language(value)
    return "en"


def rich_status(error: OkeyError, language: Language = "en") -> status_pb2.Status:
    """The ``google.rpc.Status`` for ``error``: one ErrorInfo and one LocalizedMessage (its
    sentence and parameters cut to ``SENTENCE_LIMIT`` and ``PARAM_LIMIT`` characters)."""
    sentence = _short(error.message(language), SENTENCE_LIMIT)
    info = error_details_pb2.ErrorInfo(
        reason=error.code, domain=DOMAIN, metadata=_metadata(error.params)
    )
    localized = error_details_pb2.LocalizedMessage(locale=LOCALES[language], message=sentence)
    details = []
    for detail in (info, localized):
        packed = any_pb2.Any()
        packed.Pack(detail)
        details.append(packed)
    return status_pb2.Status(code=status_code_of(error).value[0], message=sentence, details=details)


def to_grpc_status(error: OkeyError, language: Language = "en") -> grpc.Status:
    """``rich_status`` as a ``grpc.Status`` (code, details, grpc-status-details-bin)."""
    return rpc_status.to_status(rich_status(error, language))


async def abort_with(
    context: grpc.aio.ServicerContext[Any, Any],
    error: OkeyError,
    language: Language | None = None,
) -> NoReturn:
    """End the call with ``error``'s status; ``language`` defaults to the caller's."""
    if language is None:
        language = language_of(context.invocation_metadata())
    status = to_grpc_status(error, language)
    await context.abort(status.code, status.details, status.trailing_metadata)


def _metadata(params: Mapping[str, ParamValue]) -> dict[str, str]:
    return {key: _short(str(value), PARAM_LIMIT) for key, value in params.items()}


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
