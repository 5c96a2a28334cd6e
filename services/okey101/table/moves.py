"""The move pipeline's first room: a seat's moves planned on the live table (pure).

``plan_moves`` checks the table is in play and the move was computed from its state version,
applies the actions with the engine in this process (``platform.moves``: the same library the
rules service answers with, pinned to the hand's rules version), and plans everything that
follows in the same change: the events (the mover's drawn tile private to it), the moves of the
hand record, the next turn's timer and deadline, the mover back from away, and, when the hand
ends, the hand's and perhaps the match's end (``dealing.end_hand_into``). The answer (the
mover's events and view) is built from the change as sealed. The rest of the pipeline is the
table core's (``core.TableCore.change``): the seal, the journal's one write and the live table's
publication.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from okey.v1 import common_pb2, table_pb2

from okey101.engine.hand import HandState, Phase
from okey101.platform.convert import wire
from okey101.platform.moves import actions_from_proto, apply_actions
from okey101.table import events
from okey101.table.answers import AnswerKey
from okey101.table.change import Change, PlannedMove, Sealed
from okey101.table.dealing import end_hand_into
from okey101.table.errors import Conflict, Stale
from okey101.table.options import TableOptions
from okey101.table.records import DealInfo, TableRecord
from okey101.table.turns import next_bot_step, turn_timer
from okey101.table.views import hand_live

_ANSWER_FIELDS: Final = table_pb2.ActResponse.DESCRIPTOR.fields_by_name
_ANSWER_EVENTS: Final[int] = _ANSWER_FIELDS["events"].number
_ANSWER_VIEW: Final[int] = _ANSWER_FIELDS["view"].number


def plan_moves(
    record: TableRecord,
    state: HandState | None,
    deal: DealInfo | None,
    seat: int,
    actions: Sequence[common_pb2.Action],
    *,
    expected_version: int,
    source: int,
    now_us: int,
    options: TableOptions,
    answer: AnswerKey | None,
    back_from_away: bool = False,
    autoplayed: bool = False,
) -> Change:
    """``seat``'s ``actions`` on the table (module docstring). Refused: a table not playing,
    a move computed from another state version (ABORTED STALE_VERSION), no hand in play, and
    whatever the engine refuses (with the move's ``action_index``); nothing is changed.
    ``autoplayed``: a timer's step (``autoplay``), whose turn, if it goes on, is owed after the
    bot pace's pause (``turns.next_bot_step``)."""
    if record.state != common_pb2.TABLE_STATE_PLAYING:
        if record.state == common_pb2.TABLE_STATE_WAITING:
            raise Conflict("TABLE_NOT_PLAYING")
        raise Conflict(
            "TABLE_FINISHED" if record.state == common_pb2.TABLE_STATE_FINISHED else "TABLE_CLOSED"
        )
    if expected_version != record.state_version:
        raise Stale("STALE_VERSION", version=expected_version, current=record.state_version)
    if state is None or not hand_live(state):
        raise Conflict("HAND_NOT_IN_PLAY")
    if back_from_away and record.seats[seat].forfeited:
        raise Conflict("SEAT_FORFEITED", seat=seat)
    after, caused = apply_actions(state, seat, actions_from_proto(actions))
    change = Change(record, now_us, record, after, deal, game=True)
    for event, state_then in caused:
        change.drafts.append(events.engine_event(event, state_then, record))
    change.moves = [
        PlannedMove(0, index, seat, action.SerializeToString(), source)
        for index, action in enumerate(actions)
    ]
    seats = list(record.seats)
    mover = seats[seat]
    if back_from_away and (mover.away or mover.missed):
        was_away = mover.away and not mover.left
        seats[seat] = mover.replace(away=False, left=False, missed=0)
        if was_away:
            change.drafts.append(
                events.presence(common_pb2.EVENT_KIND_SEAT_BACK, seat, seats[seat], record, after)
            )
        change.record = record.replace(seats=tuple(seats))
        change.write_seats = True
    if after.phase is Phase.ENDED:
        end_hand_into(change, options)
    elif after.turn != state.turn or after.turn_number != state.turn_number:
        timer, deadline = turn_timer(
            change.record, seats, after.turn, now_us, options, turn_number=after.turn_number
        )
        change.timer = timer
        change.record = change.record.replace(turn_deadline_us=deadline)
        change.drafts.append(events.turn_started(after.turn, change.record, deadline))
    elif autoplayed or seats[seat].automatic:
        # The rest of the bot's turn, a moment later (the bot pace).
        change.timer = next_bot_step(change.record, after.turn_number, now_us, options)
    if answer is not None:

        def respond(sealed: Sealed) -> bytes:
            view = sealed.views.of(seat)
            return b"".join(
                [
                    *(
                        wire.length_delimited(_ANSWER_EVENTS, event.copy_for(seat))
                        for event in sealed.events
                    ),
                    wire.length_delimited(_ANSWER_VIEW, view),
                ]
            )

        change.answer = (answer, respond)
    return change


def action_kinds(actions: Sequence[common_pb2.Action]) -> list[str]:
    """Each action's kind (the ``move`` oneof's field), for the moves metric."""
    return [action.WhichOneof("move") or "unknown" for action in actions]


__all__ = ["action_kinds", "plan_moves"]
