"""A change to a table, planned in memory: what it writes, and the table as it will be.

Every change (a move, a deal, a seat taken, a timer's step) is planned by a pure function of the
live table (``seating``, ``dealing``, ``moves``) into a ``Change``: the record, hand state and
deal as they will be, the events (not yet numbered), the moves, the table's next timer, the
hand's and the outbox's rows, and how to answer the request. ``seal`` numbers the events after
the table's last sequence number, advances the versions, builds the answer, and gives the
``journal.Write`` that makes it all durable in one round trip with the ``Sealed`` table that
the live table becomes once it is written. Nothing runs inside the write: if it finds the table
moved on (``Stale``), the change is planned again on the fresh table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from okey.v1 import common_pb2

from okey101.engine.hand import HandState
from okey101.platform import convert
from okey101.table.journal import (
    NO_TIMER,
    AnswerRow,
    EventRow,
    HandEndRow,
    HandStartRow,
    MatchColumns,
    MoveRow,
    OutboxRow,
    TimerRow,
    Write,
)
from okey101.table.records import DealInfo, TableRecord, TimerRecord, seats_to_json
from okey101.table.views import SeatViews

#: The hand's state is written as a snapshot when this many events were logged since the last
#: one (and at every deal and hand end): a table is rebuilt from it by replaying at most a
#: few turns' moves.
SNAPSHOT_EVERY_EVENTS: Final = 32


@dataclass
class EventDraft:
    """An event before it is numbered: everyone's copy, and each seat's private extra."""

    event: common_pb2.Event
    private: dict[int, bytes] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PlannedMove:
    """One action of a call, filed under the first event the call causes (``first_event``,
    an index into the change's drafts)."""

    first_event: int
    action_index: int
    seat: int
    action: bytes
    source: int


class _Keep:
    """``Change.timer``'s "leave the table's timer as it is"."""


KEEP_TIMER: Final = _Keep()


class AnswerKey(NamedTuple):
    """Where a call's answer is stored (caller, method, request id) and the fingerprint of the
    request it answers (``platform.idempotency.fingerprint``; None: not checked)."""

    caller: str
    method: str
    request_id: str
    asked: bytes | None = None

    @property
    def slot(self) -> tuple[str, str, str]:
        """The stored answer's key without the fingerprint."""
        return (self.caller, self.method, self.request_id)


@dataclass
class Change:
    """One change, planned (module docstring). ``record``, ``state`` and ``deal`` are the table
    as it will be; the versions and sequence number are set by ``seal``."""

    before: TableRecord
    now_us: int
    record: TableRecord
    state: HandState | None
    deal: DealInfo | None
    #: A game change (deal, move, hand end) advances ``state_version``; presence does not.
    game: bool = False
    drafts: list[EventDraft] = field(default_factory=list)
    moves: list[PlannedMove] = field(default_factory=list)
    write_seats: bool = False
    write_match: bool = False
    #: Write the hand's state now (a deal, a hand's end); else every SNAPSHOT_EVERY_EVENTS.
    snapshot: bool = False
    #: The table's timer from now on: ``KEEP_TIMER``, None (none), or a new one.
    timer: TimerRecord | _Keep | None = KEEP_TIMER
    hand_start: HandStartRow | None = None
    hand_end: HandEndRow | None = None
    outbox: list[OutboxRow] = field(default_factory=list)
    #: Where the answer is stored, and the answer, from the table as sealed.
    answer: tuple[AnswerKey, Callable[[Sealed], bytes]] | None = None


@dataclass(frozen=True, slots=True)
class Sealed:
    """A change numbered and ready to write (``seal``): the write, and the table after it."""

    record: TableRecord
    state: HandState | None
    deal: DealInfo | None
    events: tuple[EventRow, ...]
    answer: bytes | None
    answer_key: AnswerKey | None
    write: Write
    #: The views of the table after it (built when first asked: the answer may need one).
    views: SeatViews
    #: The timer changed (None: it is the same as before).
    timer_changed: bool


def seal(change: Change, *, pod: str, lease_us: int) -> Sealed:
    """Number ``change``'s events, advance the table's versions, and build its write (module
    docstring). A new timer is this pod's until its due time plus ``lease_us``."""
    before = change.before
    version = before.state_version + (1 if change.game else 0)
    sequence = before.last_sequence
    events: list[EventRow] = []
    for draft in change.drafts:
        sequence += 1
        event = draft.event
        event.sequence = sequence
        event.state_version = version
        event.time.FromMicroseconds(change.now_us)
        private = draft.private
        events.append(
            EventRow(
                sequence,
                version,
                event.kind,
                event.hand_id,
                event.SerializeToString(),
                (private.get(0), private.get(1), private.get(2), private.get(3)),
            )
        )
    timer_changed = not isinstance(change.timer, _Keep)
    timer = change.record.timer
    timer_row: TimerRow | None = None
    if timer_changed:
        new_timer = change.timer
        assert not isinstance(new_timer, _Keep)
        if new_timer is None:
            timer, timer_row = None, NO_TIMER
        else:
            timer = TimerRecord(new_timer.kind, new_timer.due_us, new_timer.due_us + lease_us, pod)
            timer_row = TimerRow(timer.kind, timer.due_us, timer.claimed_until_us, pod)
    snapshot: bytes | None = None
    snapshot_sequence = before.snapshot_sequence
    state = change.state
    if state is not None and (
        change.snapshot or sequence - before.snapshot_sequence >= SNAPSHOT_EVERY_EVENTS
    ):
        message = common_pb2.HandState()
        convert.fill_hand_state(message, state)
        snapshot = message.SerializeToString()
        snapshot_sequence = sequence
    record = change.record.replace(
        revision=before.revision + 1,
        state_version=version,
        last_sequence=sequence,
        snapshot_sequence=snapshot_sequence,
        timer=timer,
    )
    moves = tuple(
        MoveRow(events[move.first_event].sequence, move.action_index, move.seat, move.action,
                move.source)
        for move in change.moves
    )  # fmt: skip
    sealed = Sealed(
        record=record,
        state=state,
        deal=change.deal,
        events=tuple(events),
        answer=None,
        answer_key=None,
        write=Write(
            table_id=record.table_id,
            revision=before.revision,
            state_version=version,
            last_sequence=sequence,
            now_us=change.now_us,
            state=record.state,
            hand_number=record.hand_number,
            hand_id=record.hand_id,
            dealer=record.dealer,
            turn_deadline_us=record.turn_deadline_us,
            seats=seats_to_json(record.seats) if change.write_seats else None,
            match=(
                MatchColumns(record.match.to_json(), record.match_result)
                if change.write_match
                else None
            ),
            snapshot=snapshot,
            timer=timer_row,
            events=tuple(events),
            moves=moves,
            hand_start=change.hand_start,
            hand_end=change.hand_end,
            outbox=tuple(change.outbox),
        ),
        timer_changed=timer_changed,
        views=SeatViews(record, state, change.deal),
    )
    if change.answer is None:
        return sealed
    key, respond = change.answer
    answer = respond(sealed)
    row = AnswerRow(key.caller, key.method, key.request_id, answer, key.asked)
    return dataclasses.replace(
        sealed,
        answer=answer,
        answer_key=key,
        write=dataclasses.replace(sealed.write, answer=row),
    )


__all__ = [
    "KEEP_TIMER",
    "SNAPSHOT_EVERY_EVENTS",
    "AnswerKey",
    "Change",
    "EventDraft",
    "PlannedMove",
    "Sealed",
    "seal",
]
