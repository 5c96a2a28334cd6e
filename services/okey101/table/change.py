"""A change to a table, planned in memory: what it writes, and the table as it will be.

Every change (a move, a deal, a seat taken, a timer's step) is planned by a pure function of the
live table (``seating``, ``dealing``, ``moves``) into a ``Change``: the record, hand state and
deal as they will be, the events (not yet numbered), the moves, the table's next timer, the
hand's and the outbox's rows, and how to answer the request. ``seal`` numbers the events after
the table's last sequence number, advances the versions, makes a new timer this pod's
(``timers.held``), adds the outbox rows the events owe players' streams (``player_events``) and,
at a staked table, the lobby's ledger (``chips``), builds the answer, and gives the
``journal.Write`` (the rows, as columns) that makes it all durable in one round trip with the
``Sealed`` table that the live table becomes once it is written. Nothing runs inside the write:
if it finds the table moved on (``Stale``), the change is planned again on the fresh table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from okey.v1 import common_pb2

from okey101.engine.hand import HandState
from okey101.platform import convert
from okey101.table import answers, chips, player_events
from okey101.table.answers import AnswerKey
from okey101.table.journal import (
    EventColumns,
    EventRow,
    HandColumns,
    HandEndColumns,
    MoveColumns,
    OutboxColumns,
    TableColumns,
    Write,
)
from okey101.table.records import DealInfo, TableRecord, seats_to_json, timer_columns
from okey101.table.timers import UNCHANGED, TimerChange, Unchanged, held
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
    #: The table's timer from now on: a new one (due: ``seal`` makes it this pod's), None (no
    #: timer), or ``timers.UNCHANGED``.
    timer: TimerChange = UNCHANGED
    #: The rows of the hand's deal and end, and what scoring is owed (``journal``'s columns).
    hand_start: HandColumns | None = None
    hand_end: HandEndColumns | None = None
    outbox: list[OutboxColumns] = field(default_factory=list)
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
    #: The change set the table's timer (a new one, or none).
    timer_changed: bool


def seal(change: Change, *, pod: str, lease_us: int) -> Sealed:
    """Number ``change``'s events, advance the table's versions, and build its write (module
    docstring). A new timer is this pod's (``timers.held``) for ``lease_us`` past its due time."""
    before = change.before
    table_id = before.table_id
    now = change.now_us
    version = before.state_version + (1 if change.game else 0)
    sequence = before.last_sequence
    events: list[EventRow] = []
    logged: list[EventColumns] = []
    for draft in change.drafts:
        sequence += 1
        event = draft.event
        event.sequence = sequence
        event.state_version = version
        event.time.FromMicroseconds(now)
        public = event.SerializeToString()
        private = draft.private
        extras = (private.get(0), private.get(1), private.get(2), private.get(3))
        events.append(EventRow(sequence, version, event.kind, event.hand_id, public, extras))
        row: EventColumns = {
            "table_id": table_id, "sequence": sequence, "state_version": version,
            "kind": event.kind, "hand_id": event.hand_id, "time_us": now, "public": public,
            "private_0": extras[0], "private_1": extras[1], "private_2": extras[2],
            "private_3": extras[3],
        }  # fmt: skip
        logged.append(row)
    timer = change.record.timer
    new_timer = change.timer
    timer_changed = not isinstance(new_timer, Unchanged)
    if not isinstance(new_timer, Unchanged):
        timer = None if new_timer is None else held(new_timer, pod, lease_us)
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
        updated_us=now,
    )
    table: TableColumns = {
        "revision": record.revision,
        "state_version": version,
        "last_sequence": sequence,
        "updated_us": now,
        "state": record.state,
        "hand_number": record.hand_number,
        "hand_id": record.hand_id,
        "dealer": record.dealer,
        "turn_deadline_us": record.turn_deadline_us,
    }
    if change.write_seats:
        table["seats"] = seats_to_json(record.seats)
    if change.write_match:
        table["match"] = record.match.to_json()
        table["match_result"] = record.match_result
    if snapshot is not None:
        table["hand_state"] = snapshot
        table["snapshot_sequence"] = sequence
    if timer_changed:
        table = {**table, **timer_columns(timer)}
    hand_id = record.hand_id
    moves: list[MoveColumns] = [
        {
            "hand_id": hand_id, "sequence": events[move.first_event].sequence,
            "action_index": move.action_index, "seat": move.seat, "action": move.action,
            "source": move.source, "time_us": now,
        }
        for move in change.moves
    ]  # fmt: skip
    views = SeatViews(record, state, change.deal)
    numbered = tuple(events)
    outbox = [
        *change.outbox,
        *player_events.owed(record, (draft.event for draft in change.drafts), now),
    ]
    if record.stake:  # only a staked table owes the ledger (an unstaked move pays nothing here)
        outbox += chips.owed(before, record, (draft.event for draft in change.drafts), now)

    def sealed(answer: bytes | None, key: AnswerKey | None) -> Sealed:
        write = Write(
            table_id,
            before.revision,
            table,
            logged,
            moves,
            None if answer is None or key is None else answers.row(key, table_id, answer, now),
            change.hand_start,
            change.hand_end,
            outbox,
        )
        return Sealed(
            record, state, change.deal, numbered, answer, key, write, views, timer_changed
        )

    if change.answer is None:
        return sealed(None, None)
    key, respond = change.answer
    return sealed(respond(sealed(None, None)), key)


__all__ = [
    "SNAPSHOT_EVERY_EVENTS",
    "Change",
    "EventDraft",
    "PlannedMove",
    "Sealed",
    "seal",
]
