"""Stored answers: how a service answers a retried state-changing call with its first answer
(common.proto's IDEMPOTENCY). One mechanism for every service; what differs is a parameter.

A call's answer is stored under a key, beside what the request asked (its fingerprint), in the
transaction of the change it answers (``StoredAnswers.remember``): the change and its answer are
committed together or not at all. A retry is looked up first (``recall``): the same request gets
the first answer, byte for byte, and changes nothing; a different request under the same key is
the service's error (``mismatch``: the lobby's INVALID_ARGUMENT ``REQUEST_ID_REUSED``, scoring's
FAILED_PRECONDITION ``HAND_ALREADY_RECORDED``). Errors are not stored: a refused call is judged
again when it is sent again.

The variants, as parameters:

- **How the key is scoped.** ``CallKey(method, caller, request_id)``: the request id, scoped by
  the method and the caller (the lobby; the table). Or a key the request carries in itself
  (scoring: the hand or match id, whatever the request id, so a redelivery with a new request id
  is the same call).
- **What a retry must match** (``Once.asked``): a ``fingerprint`` of the request (SHA-256 of it
  without its request id, its locale and any secrets: the lobby, scoring), or nothing (None).
- **Where answers are kept** (an ``AnswerStore``): a table of their own, sealed under a key
  derived from the request id (``SealedAnswers``: the lobby's answers hold live tokens), or the
  row the change itself writes (``RowAnswers``: scoring's hands and matches).
- **How a retry racing its first attempt is answered.** Either the key is claimed before the
  change (``ClaimedAnswers.claim``: an ``INSERT ... ON CONFLICT DO NOTHING`` of the key, so a
  second transaction with the same key waits for the first and then reads its answer; the
  lobby), or the change's own unique keys stop the second transaction, which then reads the
  winner's answer (``StoredAnswers.answer_once``: scoring).

A store whose reads are part of a bigger read (scoring reads its row and the stored answer in
one round trip) hands what it read to ``replay``, which gives the verdict alone.

The table service keys its answers the same way (``CallKey`` and a ``fingerprint``) but keeps
them beside the table each call was about, written by its journal's one write and kept in its
live tables' memory: ``okey101.table.answers``.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, Final, Generic, Protocol, TypeVar

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from google.protobuf.message import Message
from sqlalchemy import Column, Table, delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.platform.database import Database, insert_ignoring_conflicts

#: Fields no fingerprint covers: the id itself and the language (a retry in another language is
#: the same request). Services add their secrets.
UNFINGERPRINTED: Final = frozenset({"request_id", "locale"})

K = TypeVar("K")
K_contra = TypeVar("K_contra", contravariant=True)
M = TypeVar("M", bound=Message)
_R = TypeVar("_R")


def fingerprint(
    request: Message, *, cleared: Collection[str] = UNFINGERPRINTED, extra: Iterable[str] = ()
) -> bytes:
    """SHA-256 of ``request`` with the fields ``cleared`` cleared (``extra`` may add context the
    request does not carry, such as the caller). A request with none of them set is hashed as
    it is, without a copy (the table's moves: this is on their path)."""
    present = [field.name for field, _value in request.ListFields() if field.name in cleared]
    if present:
        copy = type(request)()
        copy.CopyFrom(request)
        for name in present:
            copy.ClearField(name)
        request = copy
    digest = hashlib.sha256(request.SerializeToString(deterministic=True))
    for part in extra:
        digest.update(b"\0" + part.encode())
    return digest.digest()


@dataclass(frozen=True, slots=True)
class CallKey:
    """A call's key scoped by method and caller: where the answer to ``request_id`` from
    ``caller`` to ``method`` is stored."""

    method: str
    caller: str
    request_id: str


@dataclass(frozen=True, slots=True)
class Once(Generic[K, M]):
    """One state-changing call to answer once: where its answer is stored (``key``), what a
    retry must match (``asked``; None: nothing), and the answer's message type (``kind``)."""

    key: K
    asked: bytes | None
    kind: type[M]

    @staticmethod
    def of(
        method: str,
        caller: str,
        request: Message,
        kind: type[M],
        *extra: str,
        cleared: Collection[str] = UNFINGERPRINTED,
    ) -> Once[CallKey, M]:
        """The call ``request`` makes to ``method`` as ``caller``, keyed by its request id and
        matched by its fingerprint."""
        request_id = str(getattr(request, "request_id", ""))
        asked = fingerprint(request, cleared=cleared, extra=extra)
        return Once(CallKey(method, caller, request_id), asked, kind)


@dataclass(frozen=True, slots=True)
class Stored:
    """What a store keeps under a key: what the answered request asked, and the answer's bytes
    (None: the key is claimed and no answer is stored, or none is owed)."""

    asked: bytes | None
    answer: bytes | None


class Unreadable(Exception):
    """A stored answer that cannot be opened with the key it was looked up by: it answered
    another request (``StoredAnswers`` raises the mismatch)."""


class Raced(Exception):
    """A change found its key taken by a racing transaction: the winner's answer is read
    instead (``StoredAnswers.answer_once``)."""


class AnswerStore(Protocol[K_contra]):
    """Where answers are kept (module docstring)."""

    async def load(self, session: AsyncConnection, key: K_contra) -> Stored | None:
        """What is stored under ``key`` (None: nothing)."""
        ...

    async def save(self, session: AsyncConnection, key: K_contra, stored: Stored) -> None:
        """Keep ``stored`` under ``key``, in ``session``'s transaction."""
        ...


class ClaimingStore(AnswerStore[K_contra], Protocol[K_contra]):
    """A store whose keys can be claimed before the change they answer."""

    async def claim(
        self, session: AsyncConnection, key: K_contra, stored: Stored | None = None
    ) -> bool:
        """Take ``key`` for this transaction (with ``stored`` if its answer is known already)
        unless it is taken: True if this call took it. A racing transaction claiming the same
        key waits for this one to end."""
        ...

    async def forget(self, session: AsyncConnection, key: K_contra) -> None:
        """Drop ``key`` and what it holds: a call sent again with it is new."""
        ...


class StoredAnswers(Generic[K]):
    """Stored answers in ``store``; a retry that does not match is ``mismatch(key)``."""

    def __init__(self, store: AnswerStore[K], mismatch: Callable[[K], Exception]) -> None:
        self.store = store
        self.mismatch = mismatch

    def replay(self, once: Once[K, M], stored: Stored | None) -> M | None:
        """The verdict on what is stored for ``once``: its answer, None if there is none, the
        mismatch if it answered a different request."""
        if stored is None or stored.answer is None:
            return None
        if once.asked is not None and stored.asked != once.asked:
            raise self.mismatch(once.key)
        return once.kind.FromString(stored.answer)

    async def recall(self, session: AsyncConnection, once: Once[K, M]) -> M | None:
        """The answer stored for ``once`` (``replay``), read in ``session``."""
        try:
            stored = await self.store.load(session, once.key)
        except Unreadable:
            raise self.mismatch(once.key) from None
        return self.replay(once, stored)

    async def remember(self, session: AsyncConnection, once: Once[K, M], answer: M | bytes) -> None:
        """Store ``answer`` (a message, or its bytes as they must be sent again) for ``once``,
        in the transaction of the change it answers."""
        payload = answer if isinstance(answer, bytes) else answer.SerializeToString()
        await self.store.save(session, once.key, Stored(once.asked, payload))

    async def answer_once(
        self,
        database: Database,
        once: Once[K, M],
        change: Callable[[AsyncConnection], Awaitable[tuple[M, bool]]],
        *,
        raced: tuple[type[Exception], ...] = (),
    ) -> tuple[M, bool]:
        """The answer to ``once`` and whether this call made the change: the stored answer if
        there is one (read outside any transaction: the usual retry ends there), else
        ``change``'s, in one transaction that looks again under its own lock and remembers its
        answer with the change. A change that loses a race to a transaction with the same key
        (``Raced``, or one of ``raced``, such as a unique key's ``IntegrityError``) is answered
        with the winner's answer."""
        async with database.read() as session:
            found = await self.recall(session, once)
        if found is not None:
            return found, False
        lost: tuple[type[Exception], ...] = (Raced, *raced)
        try:
            return await database.transaction(change)
        except lost:
            async with database.read() as session:
                found = await self.recall(session, once)
            if found is None:
                raise
            return found, False


class ClaimedAnswers(StoredAnswers[K]):
    """Stored answers whose key is claimed before the change (module docstring)."""

    def __init__(self, store: ClaimingStore[K], mismatch: Callable[[K], Exception]) -> None:
        super().__init__(store, mismatch)
        self.claiming = store

    async def claim(self, session: AsyncConnection, once: Once[K, M]) -> M | None:
        """The answer stored for ``once``; if there is none, its key is claimed for this
        transaction and None returned: make the change, then ``remember`` its answer in the
        same transaction (a retry racing it waits, then reads that answer)."""
        if await self.claiming.claim(session, once.key):
            return None
        return await self.recall(session, once)

    async def settle(self, session: AsyncConnection, once: Once[K, M], answer: M) -> M:
        """Keep ``answer`` for ``once`` unless an answer is stored already (the first stored
        answer wins); the answer kept."""
        stored = await self.claim(session, once)
        if stored is not None:
            return stored
        await self.remember(session, once, answer)
        return answer


# --------------------------------------------------------------------------------------------
# Where answers are kept


_NONCE: Final = 12
_FINGERPRINT: Final = 32


def _now_us() -> int:
    return int(time.time() * 1_000_000)


class SealedAnswers:
    """Answers in a table of their own, sealed, so that a database dump hands out nothing they
    hold (the lobby's logins hold live tokens): a ``ClaimingStore`` of ``CallKey``.

    The table has ``request_key`` (the primary key: ``digest(key)``, SHA-256 of ``namespace``,
    method, caller and request id), ``method``, ``payload`` (nullable: a claimed key) and
    ``created_us``. The payload is a nonce and the AES-256-GCM sealing of the fingerprint and
    the answer under a key derived (HKDF-SHA256, ``salt``) from the request id, which the table
    never holds: an answer can only be read back by someone who sends the same request id
    again. Fingerprints are 32 bytes (``fingerprint``)."""

    def __init__(self, table: Table, *, namespace: str, salt: bytes) -> None:
        self.table = table
        self.namespace = namespace
        self.salt = salt

    def digest(self, key: CallKey) -> str:
        """Where ``key``'s answer is stored: the ``request_key`` column."""
        text = "\0".join((self.namespace, key.method, key.caller, key.request_id))
        return hashlib.sha256(text.encode()).hexdigest()

    def _cipher(self, key: CallKey) -> AESGCM:
        info = "\0".join((key.method, key.caller)).encode()
        derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=self.salt, info=info).derive(
            key.request_id.encode()
        )
        return AESGCM(derived)

    def seal(self, key: CallKey, stored: Stored) -> bytes:
        """The stored payload: a nonce, then the sealed fingerprint and answer."""
        if stored.asked is None or len(stored.asked) != _FINGERPRINT:
            raise ValueError("a sealed answer needs its request's 32-byte fingerprint")
        nonce = os.urandom(_NONCE)
        sealed = self._cipher(key).encrypt(
            nonce, stored.asked + (stored.answer or b""), self.digest(key).encode()
        )
        return nonce + sealed

    def unseal(self, key: CallKey, payload: bytes) -> Stored:
        """The fingerprint and answer of a stored payload (``Unreadable`` if it cannot be
        opened with ``key``)."""
        nonce, sealed = payload[:_NONCE], payload[_NONCE:]
        try:
            opened = self._cipher(key).decrypt(nonce, sealed, self.digest(key).encode())
        except InvalidTag:
            raise Unreadable("the stored answer cannot be opened with this request id") from None
        return Stored(opened[:_FINGERPRINT], opened[_FINGERPRINT:])

    async def claim(
        self, session: AsyncConnection, key: CallKey, stored: Stored | None = None
    ) -> bool:
        claimed = await session.execute(
            insert_ignoring_conflicts(self.table, session.dialect.name).values(
                request_key=self.digest(key),
                method=key.method,
                payload=None if stored is None else self.seal(key, stored),
                created_us=_now_us(),
            )
        )
        return bool(claimed.rowcount == 1)

    async def load(self, session: AsyncConnection, key: CallKey) -> Stored | None:
        column = self.table.c
        payload = (
            await session.execute(
                select(column.payload).where(column.request_key == self.digest(key))
            )
        ).scalar_one_or_none()
        return None if payload is None else self.unseal(key, payload)

    async def save(self, session: AsyncConnection, key: CallKey, stored: Stored) -> None:
        """Seal ``stored`` into ``key``'s row, which this transaction claimed."""
        column = self.table.c
        await session.execute(
            update(self.table)
            .where(column.request_key == self.digest(key))
            .values(payload=self.seal(key, stored))
        )

    async def forget(self, session: AsyncConnection, key: CallKey) -> None:
        column = self.table.c
        await session.execute(delete(self.table).where(column.request_key == self.digest(key)))

    async def prune(self, session: AsyncConnection, before_us: int) -> None:
        """Forget every key claimed before ``before_us``."""
        await session.execute(delete(self.table).where(self.table.c.created_us < before_us))


class RowAnswers:
    """Answers kept on the row the change writes (scoring's hands and matches): an
    ``AnswerStore`` of that row's key. ``asked`` holds the fingerprint as hex text, ``answer``
    the answer's bytes; the change writes both with its row (``columns``)."""

    def __init__(self, key: Column[Any], asked: Column[Any], answer: Column[Any]) -> None:
        self.key = key
        self.asked = asked
        self.answer = answer

    def columns(self, stored: Stored) -> dict[str, Any]:
        """The row's values that keep ``stored``."""
        return {
            self.asked.name: None if stored.asked is None else stored.asked.hex(),
            self.answer.name: stored.answer,
        }

    def stored_of(self, row: Any) -> Stored | None:
        """What a row read with both columns keeps (None for no row)."""
        if row is None:
            return None
        asked, answer = getattr(row, self.asked.name), getattr(row, self.answer.name)
        return Stored(
            None if asked is None else bytes.fromhex(asked),
            None if answer is None else bytes(answer),
        )

    async def load(self, session: AsyncConnection, key: object) -> Stored | None:
        query = select(self.asked, self.answer).where(self.key == key)
        return self.stored_of((await session.execute(query)).first())

    async def save(self, session: AsyncConnection, key: object, stored: Stored) -> None:
        """Set ``stored`` on the row of ``key``, which exists."""
        table = self.key.table
        await session.execute(update(table).where(self.key == key).values(**self.columns(stored)))


__all__ = [
    "UNFINGERPRINTED",
    "AnswerStore",
    "CallKey",
    "ClaimedAnswers",
    "ClaimingStore",
    "Once",
    "Raced",
    "RowAnswers",
    "SealedAnswers",
    "Stored",
    "StoredAnswers",
    "Unreadable",
    "fingerprint",
]
