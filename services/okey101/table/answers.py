"""The table's stored answers: how a retried call gets its first answer (common.proto's
IDEMPOTENCY; AIP-155), all of it here.

- **The key** (``AnswerKey``): a state-changing call is answered once per request id, scoped by
  the caller and the method (the platform's ``CallKey``), and bound to its request by the
  request's ``fingerprint`` (SHA-256 of it without its locale and the name a seat shows:
  ``UNBOUND``).
- **The row** (``row``, ``AnswerColumns``): the answer is stored in ``table_requests`` with the
  table the call was about and the fingerprint, by the write of the change it answers (the
  journal's one write; a new table's with the table, ``claim``): the change and its answer are
  committed together or not at all.
- **Memory** (``Kept``): each live table keeps the answers to its recent requests, so that the
  usual retry (the same pod, moments later) is answered without a read.
- **The database** (``recall``): one read of ``table_requests`` for what memory does not keep:
  a retry of a change another pod made, an older one, a CreateTable's, or the answer a racing
  attempt stored first (the journal's write then finds the key taken: ``AlreadyAnswered``).
- **The verdict** (``verdict``), wherever the answer was found: the same table (when the call
  names one; CreateTable names none) and the same fingerprint get the first answer, byte for
  byte; anything else reuses the request id for another request: INVALID_ARGUMENT
  ``REQUEST_ID_REUSED``.

Refusals are not stored: a refused call is judged again when it is sent again.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Final, NamedTuple, TypedDict

from google.protobuf.message import Message
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.platform.database import Database, insert_ignoring_conflicts, outage_as
from okey101.platform.idempotency import CallKey, fingerprint
from okey101.table import models
from okey101.table.errors import Invalid, NotReady

#: Answers to request ids kept in memory per table (older retries are found in the database).
KEPT: Final = 128

#: The fields a retry may change: its language, and the name a seat shows (a player who renamed
#: between a Sit and its retry, as the lobby's workers retry it, still makes one sit: the first
#: name stays). The request id itself is part of the key, so the fingerprint may cover it and
#: the common request is hashed as it is, without a copy.
UNBOUND: Final = frozenset({"locale", "display_name"})


@dataclass(frozen=True, slots=True)
class AnswerKey:
    """Where a call's answer is stored (``call``: method, caller, request id) and the
    ``fingerprint`` of the request it answers."""

    call: CallKey
    fingerprint: bytes

    @classmethod
    def of(cls, caller: str, method: str, request: Message) -> AnswerKey:
        """The key of ``request``, a call to ``method`` by ``caller`` (its ``request_id``
        checked by the caller)."""
        request_id = str(getattr(request, "request_id"))  # noqa: B009 (every such request)
        return cls(CallKey(method, caller, request_id), fingerprint(request, cleared=UNBOUND))

    @property
    def request_id(self) -> str:
        return self.call.request_id


class AnswerColumns(TypedDict):
    """A row of ``table_requests``: the answer to a request id, written with its change."""

    caller: str
    method: str
    request_id: str
    table_id: str
    response: bytes
    fingerprint: bytes
    created_us: int


def row(key: AnswerKey, table_id: str, answer: bytes, now_us: int) -> AnswerColumns:
    """The stored answer ``answer`` to ``key``, about ``table_id``, as its row."""
    call = key.call
    return {
        "caller": call.caller,
        "method": call.method,
        "request_id": call.request_id,
        "table_id": table_id,
        "response": answer,
        "fingerprint": key.fingerprint,
        "created_us": now_us,
    }


class Found(NamedTuple):
    """A stored answer: the table its request was about, the request's fingerprint, and the
    answer's bytes."""

    table_id: str
    fingerprint: bytes
    answer: bytes


def verdict(key: AnswerKey, found: Found, table_id: str | None) -> bytes:
    """The answer ``found`` if it answers ``key``'s request (the same fingerprint, and the same
    table when the call names one, ``table_id``); else INVALID_ARGUMENT REQUEST_ID_REUSED."""
    if found.fingerprint != key.fingerprint or (
        table_id is not None and found.table_id != table_id
    ):
        raise Invalid("REQUEST_ID_REUSED", request_id=key.request_id)
    return found.answer


class Kept:
    """The answers to one table's recent requests, in its live copy's memory."""

    __slots__ = ("_found", "table_id")

    def __init__(self, table_id: str) -> None:
        self.table_id = table_id
        self._found: OrderedDict[CallKey, Found] = OrderedDict()

    def __len__(self) -> int:
        return len(self._found)

    def recall(self, key: AnswerKey) -> bytes | None:
        """The answer kept for ``key``'s request id (None: none kept), by the ``verdict``."""
        found = self._found.get(key.call)
        return None if found is None else verdict(key, found, self.table_id)

    def keep(self, key: AnswerKey, answer: bytes) -> None:
        """Keep ``answer``, the answer to ``key`` at this table."""
        found = self._found
        found[key.call] = Found(self.table_id, key.fingerprint, answer)
        found.move_to_end(key.call)
        while len(found) > KEPT:
            found.popitem(last=False)

    def clear(self) -> None:
        """Forget every answer kept (the database still has them)."""
        self._found.clear()


async def recall(database: Database, key: AnswerKey, kept: Kept | None = None) -> bytes | None:
    """The answer to ``key``'s request id if it was answered (None: it was not), by the
    ``verdict``: from ``kept`` (a table's memory; the call is about that table) if it has it,
    else read from the database (and kept there from then on). Without ``kept`` the call names
    no table (CreateTable): any table's answer is it, if the fingerprint is the same."""
    if kept is not None:
        known = kept.recall(key)
        if known is not None:
            return known
    c = models.requests.c
    call = key.call
    query = select(c.table_id, c.fingerprint, c.response).where(
        c.caller == call.caller, c.method == call.method, c.request_id == call.request_id
    )
    with outage_as(NotReady):
        async with database.read() as session:
            stored = (await session.execute(query)).first()
    if stored is None:
        return None
    found = Found(stored.table_id, bytes(stored.fingerprint), bytes(stored.response))
    answer = verdict(key, found, None if kept is None else kept.table_id)
    if kept is not None:
        kept.keep(key, answer)
    return answer


async def claim(session: AsyncConnection, answer: AnswerColumns) -> bool:
    """Store ``answer`` in ``session``'s transaction unless its request id has an answer
    already (a racing retry's): True if this call stored it."""
    inserted = await session.execute(
        insert_ignoring_conflicts(models.requests, session.dialect.name).values(**answer)
    )
    return bool(inserted.rowcount == 1)


__all__ = [
    "KEPT",
    "UNBOUND",
    "AnswerColumns",
    "AnswerKey",
    "Found",
    "Kept",
    "claim",
    "recall",
    "row",
    "verdict",
]
