"""Who sits where: planning Sit, Leave, SetDealSeed and CloseTable on a live table (pure).

Each function takes the live table's parts and the request, checks what the table's state
allows, and returns the ``Change`` (or raises the refusal). Seat changes are *presence*
changes: they do not advance the state version a move is computed from. A change that fills a
``start_when_full`` table commits the start's timer with it (``turns.start_timer``). At a staked
table a seat keeps the player's stake hold; what a seat freed or a table closed owes the
lobby's ledger is derived from the change's events when it is sealed (``chips``).
"""

from __future__ import annotations

from collections.abc import Callable

from okey.v1 import common_pb2, table_pb2

from okey101.engine.hand import SEATS, HandState
from okey101.platform.auth import Claims
from okey101.table import events
from okey101.table.answers import AnswerKey
from okey101.table.change import Change, Sealed
from okey101.table.errors import Conflict, Denied, Invalid, Missing
from okey101.table.options import TableOptions
from okey101.table.records import DealInfo, SeatRecord, TableRecord, TimerRecord
from okey101.table.turns import bot_delays_us, start_timer, turn_rng, turn_timer
from okey101.table.views import hand_live, table_message

Answer = AnswerKey


def _answer(
    key: Answer, respond: Callable[[Sealed], bytes]
) -> tuple[AnswerKey, Callable[[Sealed], bytes]]:
    return (key, respond)


def _refuse_if_over(record: TableRecord) -> None:
    if record.state == common_pb2.TABLE_STATE_FINISHED:
        raise Conflict("TABLE_FINISHED")
    if record.state == common_pb2.TABLE_STATE_CLOSED:
        raise Conflict("TABLE_CLOSED")


def plan_sit(
    record: TableRecord,
    state: HandState | None,
    deal: DealInfo | None,
    *,
    claims: Claims,
    player_id: str,
    display_name: str,
    seed: str,
    requested: int | None,
    invite_code: str,
    now_us: int,
    options: TableOptions,
    answer: Answer,
    hold_key: str = "",
) -> tuple[Change, int]:
    """Sit ``player_id`` down (or back, if they hold a seat and were away or left), and the
    seat. Refused: a finished or closed table, an unknown seat, another seat than the one held,
    a new seat once the match has started, a taken seat, a private table's wrong invite code.

    A new seat at a staked table is the lobby's to give, once it holds the player's stake
    (``hold_key``, kept with the seat for ``chips``): a player's own Sit there is refused, and
    so is a stake hold at a table that stakes nothing (the lobby would hold chips no record
    ever releases). A player back at their own seat needs no hold: their stake is in already."""
    _refuse_if_over(record)
    if hold_key and not record.stake:
        raise Conflict("TABLE_NOT_STAKED")
    if requested is not None and requested >= SEATS:
        raise Invalid("BAD_SEAT", seat=requested)
    seats = list(record.seats)
    own = record.seat_of(player_id)
    change = Change(record, now_us, record, state, deal)
    if own is not None:
        if requested is not None and requested != own:
            raise Conflict("ALREADY_SEATED", seat=own)
        seat = own
        current = seats[own]
        if current.forfeited:
            raise Conflict("SEAT_FORFEITED", seat=own)
        if current.away or current.left:
            seats[own] = current.replace(display_name=display_name)
            record = _back(change, record.replace(seats=tuple(seats)), state, own, now_us, options)
            seats = list(record.seats)
        if seed:
            seats[own] = seats[own].replace(deal_seed=seed)
    else:
        if record.state != common_pb2.TABLE_STATE_WAITING:
            raise Conflict("ALREADY_STARTED")
        if record.stake:
            if claims.kind != "service":
                raise Conflict("STAKED_TABLE_JOIN_THROUGH_LOBBY")
            if not hold_key:
                raise Invalid("FIELD_REQUIRED", field="stake_hold_key")
        seat = free_seat(record, player_id, requested)
        target = seats[seat]
        reserved_for_player = target.reserved and target.player_id == player_id
        if (
            claims.kind == "player"
            and record.visibility == common_pb2.TABLE_VISIBILITY_PRIVATE
            and not reserved_for_player
            and record.host_player_id != player_id
            and invite_code != record.invite_code
        ):
            raise Missing("BAD_INVITE_CODE", invite_code=invite_code)
        seats[seat] = SeatRecord(
            kind="player",
            player_id=player_id,
            display_name=display_name,
            deal_seed=seed,
            hold_key=hold_key,
        )
        change.drafts.append(
            events.presence(common_pb2.EVENT_KIND_SEAT_TAKEN, seat, seats[seat], record, state)
        )
    change.record = record.replace(seats=tuple(seats))
    change.write_seats = True
    if change.record.due_to_start:
        change.timer = start_timer(now_us, options)  # the start is owed from this write on

    def respond(sealed: Sealed) -> bytes:
        return table_pb2.SitResponse(
            table=table_message(sealed.record, claims), seat=seat
        ).SerializeToString()

    change.answer = _answer(answer, respond)
    return change, seat


def plan_back(
    record: TableRecord,
    state: HandState | None,
    deal: DealInfo | None,
    *,
    seat: int,
    now_us: int,
    options: TableOptions,
) -> Change:
    """``seat``'s player, away (a bot kept their seat after missed turns), returns by opening
    their seat's stream with ``return_to_seat`` (WatchTable): the seat is theirs again, as a
    Sit makes it. Refused (and nothing changes) unless the match is on and the seat is away
    and not left: a player who left comes back by Sit."""
    _refuse_if_over(record)
    current = record.seats[seat]
    if not current.away or current.left or record.state != common_pb2.TABLE_STATE_PLAYING:
        raise Conflict("SEAT_NOT_AWAY", seat=seat)
    change = Change(record, now_us, record, state, deal)
    change.record = _back(change, record, state, seat, now_us, options)
    change.write_seats = True
    return change


def _back(
    change: Change,
    record: TableRecord,
    state: HandState | None,
    seat: int,
    now_us: int,
    options: TableOptions,
) -> TableRecord:
    """``record`` with ``seat``'s player back (not away, not left, no turns missed), the
    SEAT_BACK event drafted on ``change``, and, on their turn, a fresh turn clock."""
    seats = list(record.seats)
    seats[seat] = seats[seat].replace(away=False, left=False, missed=0)
    after = record.replace(seats=tuple(seats))
    change.drafts.append(
        events.presence(common_pb2.EVENT_KIND_SEAT_BACK, seat, seats[seat], after, state)
    )
    if state is not None and hand_live(state) and state.turn == seat:
        # Their turn, now theirs again: a fresh turn clock, no bot step.
        timer, deadline = turn_timer(
            after, seats, seat, now_us, options, turn_number=state.turn_number
        )
        change.timer = timer
        after = after.replace(turn_deadline_us=deadline)
    return after


def free_seat(record: TableRecord, player_id: str, requested: int | None) -> int:
    """The seat a new player takes: the one asked for, else one reserved for them, else the
    first empty one."""
    seats = record.seats
    if requested is not None:
        target = seats[requested]
        if target.reserved and target.player_id != player_id:
            raise Conflict("SEAT_NOT_RESERVED_FOR_YOU", seat=requested)
        if target.held:
            raise Conflict("SEAT_TAKEN", seat=requested)
        return requested
    for index, seat in enumerate(seats):
        if seat.reserved and seat.player_id == player_id:
            return index
    for index, seat in enumerate(seats):
        if seat.kind == "empty":
            return index
    raise Conflict("NO_FREE_SEAT")


def plan_leave(
    record: TableRecord,
    state: HandState | None,
    deal: DealInfo | None,
    *,
    claims: Claims,
    player_id: str,
    now_us: int,
    options: TableOptions,
    answer: Answer,
    forfeit: bool = False,
) -> Change:
    """``player_id`` leaves: before the match their seat is free again (and no start is owed);
    during it a bot keeps their seat until they sit again, or, with ``forfeit`` (a service's
    call), to the end of the match, the seat marked forfeited."""
    seat = record.seat_of(player_id)
    if seat is None:
        raise Conflict("NOT_SEATED")
    seats = list(record.seats)
    change = Change(record, now_us, record, state, deal)
    if record.state == common_pb2.TABLE_STATE_WAITING:
        seats[seat] = SeatRecord()
        change.timer = None  # no longer full: no start is owed
    elif record.state == common_pb2.TABLE_STATE_PLAYING:
        if seats[seat].forfeited:
            forfeit = True  # forfeited already: leaving again changes nothing more
        seats[seat] = seats[seat].replace(left=True, away=True, forfeited=forfeit)
        if state is not None and hand_live(state) and state.turn == seat:
            first, _ = bot_delays_us(turn_rng(record, state.turn_number), options)
            change.timer = TimerRecord("bot", now_us + first)
            record = record.replace(turn_deadline_us=None)
    else:
        raise Conflict("TABLE_FINISHED")
    change.drafts.append(
        events.presence(common_pb2.EVENT_KIND_SEAT_LEFT, seat, seats[seat], record, state)
    )
    change.record = record.replace(seats=tuple(seats))
    change.write_seats = True

    def respond(sealed: Sealed) -> bytes:
        return table_pb2.LeaveResponse(
            table=table_message(sealed.record, claims)
        ).SerializeToString()

    change.answer = _answer(answer, respond)
    return change


def plan_set_deal_seed(
    record: TableRecord,
    state: HandState | None,
    deal: DealInfo | None,
    *,
    player_id: str,
    seed: str,
    now_us: int,
    answer: Answer,
) -> Change:
    """The seed ``player_id``'s seat adds to the deals from the next hand on."""
    seat = record.seat_of(player_id)
    if seat is None:
        raise Conflict("NOT_SEATED")
    _refuse_if_over(record)  # no hand will be dealt again
    seats = list(record.seats)
    seats[seat] = seats[seat].replace(deal_seed=seed)
    change = Change(record, now_us, record.replace(seats=tuple(seats)), state, deal)
    change.write_seats = True
    response = table_pb2.SetDealSeedResponse(
        from_hand_number=record.hand_number + 1
    ).SerializeToString()
    change.answer = _answer(answer, lambda _sealed: response)
    return change


def plan_close(
    record: TableRecord,
    state: HandState | None,
    deal: DealInfo | None,
    *,
    claims: Claims,
    now_us: int,
    answer: Answer,
) -> Change:
    """Close the table: its host may while it waits; a service at any time."""
    if claims.kind == "player":
        if record.host_player_id != claims.subject:
            raise Denied("NOT_THE_HOST")
        if record.state != common_pb2.TABLE_STATE_WAITING:
            raise Conflict("ALREADY_STARTED")
    _refuse_if_over(record)
    change = Change(
        record,
        now_us,
        record.replace(state=common_pb2.TABLE_STATE_CLOSED, turn_deadline_us=None),
        state,
        deal,
        game=True,
        timer=None,
    )
    change.drafts.append(events.of_kind(common_pb2.EVENT_KIND_TABLE_CLOSED))

    def respond(sealed: Sealed) -> bytes:
        return table_pb2.CloseTableResponse(
            table=table_message(sealed.record, claims)
        ).SerializeToString()

    change.answer = _answer(answer, respond)
    return change


__all__ = [
    "free_seat",
    "plan_back",
    "plan_close",
    "plan_leave",
    "plan_set_deal_seed",
    "plan_sit",
]
