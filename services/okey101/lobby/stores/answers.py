"""The lobby's stored answers for request ids (``platform.idempotency``), sealed in
``lobby_requests`` so that a database dump does not hand out live tokens.

- **Key.** A state-changing call's answer is stored under (method, caller, request id): the
  caller is the token's subject, or for calls without a token the identity the request names
  (the device, the username, the refresh token's id).
- **Seal.** The answer is sealed with AES-256-GCM under a key derived from the request id itself
  (``platform.idempotency.SealedAnswers``): an answer with tokens in it (a login, a refresh) can
  only be read back by someone who sends the same request id again. Request ids of logins should
  therefore be unguessable (a UUID4, as common.proto suggests).
- **Fingerprint.** SHA-256 of the request with its request id, locale and secret fields
  (password, guest secret, refresh token) cleared: the secrets are checked against the account
  before a stored answer is looked up, so they need not (and must not, even hashed) be kept
  here. A stored answer whose fingerprint differs from the retry's is INVALID_ARGUMENT
  ``REQUEST_ID_REUSED``.
- **Claimed first.** A change claims its key before it is made (``ANSWERS.claim``), so a retry
  racing its first attempt waits for it and then reads its answer. Rows with no answer and a
  ``limit:<action>`` method are the request ids a rate limit has counted (``rate_limits``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

from google.protobuf.message import Message

from okey101.lobby.errors import Invalid
from okey101.lobby.models import requests
from okey101.platform.database import Database
from okey101.platform.idempotency import (
    UNFINGERPRINTED,
    CallKey,
    ClaimedAnswers,
    Once,
    SealedAnswers,
)

_M = TypeVar("_M", bound=Message)

#: Fields never part of a fingerprint: the id itself, the language, and secrets.
SECRET_FREE: Final = UNFINGERPRINTED | {"password", "guest_secret", "refresh_token"}
#: How long stored answers (and counted request ids) are kept.
ANSWERS_KEPT_US: Final = 48 * 3600 * 1_000_000

STORE: Final = SealedAnswers(
    requests, namespace="okey101-lobby-request", salt=b"okey101-lobby-answers/1"
)
ANSWERS: Final = ClaimedAnswers[CallKey](STORE, lambda _key: Invalid("REQUEST_ID_REUSED"))


def once(
    method: str, caller: str, request: Message, kind: type[_M], *extra: str
) -> Once[CallKey, _M]:
    """The call ``request`` makes to ``method`` as ``caller``, answered with a ``kind``
    (``extra``: context the request does not carry, part of its fingerprint)."""
    return Once.of(method, caller, request, kind, *extra, cleared=SECRET_FREE)


async def peek(database: Database, call: Once[CallKey, _M]) -> _M | None:
    """The answer stored for ``call``, without claiming its key (None if there is none)."""
    async with database.read() as session:
        return await ANSWERS.recall(session, call)


async def kept_after(
    database: Database, call: Once[CallKey, _M], work: Callable[[], Awaitable[_M]]
) -> _M:
    """The answer to ``call``, a change that is idempotent by itself (registering twice, leaving
    twice): the stored answer if there is one (REQUEST_ID_REUSED if it answered another
    request), else ``work``'s, kept after it (the first answer kept wins), so that the request
    id is bound to this request."""
    stored = await peek(database, call)
    if stored is not None:
        return stored
    answer = await work()
    return await database.transaction(lambda session: ANSWERS.settle(session, call, answer))


__all__ = [
    "ANSWERS",
    "ANSWERS_KEPT_US",
    "SECRET_FREE",
    "STORE",
    "kept_after",
    "once",
    "peek",
]
