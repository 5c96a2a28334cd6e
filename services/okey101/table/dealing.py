"""A match's course: its start, each hand's deal, and what a hand's and the match's end write.

Planned on the live table (pure but for the server seed, drawn from the OS's secure randomness
as docs/fair-deals.md says, or given by the caller). A deal commits the seed's hash and keeps
the seed itself in the hand's row until the hand ends; the deck is the documented shuffle of
the table id, the hand number and every seed (``engine.fair_deal``), dealt by the engine. A
hand's end reveals the seed, records the hand in the match, owes scoring the hand (and the
match, if it is over) through the outbox, and sets the next deal's timer.

A table's match deadline (``TableRecord.match_deadline_us``) is read against the change's
``now_us`` (the engine reads no clock: it is told the hand is the last, ``record_hand(...,
last=True)``, or that the match ends between hands, ``end_match``): a hand that ends at or after
it ends the match; a hand that ends before it has the next deal due no later than the deadline,
and a deal due at or after it ends the match instead, with the same MATCH_ENDED, result and
outbox row as any match's end.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence

from google.protobuf.timestamp_pb2 import Timestamp
from okey.v1 import common_pb2, scoring_pb2, table_pb2

from okey101.engine.deal import deal as deal_hand
from okey101.engine.fair_deal import commitment, deck_order
from okey101.engine.hand import SEATS, HandState
from okey101.engine.match import MatchState, end_match, record_hand
from okey101.engine.rules import MatchEnd, RuleSet
from okey101.platform import convert
from okey101.platform.auth import Claims
from okey101.platform.convert.tiles import shared_tile, shared_tiles
from okey101.table import disguise, events
from okey101.table.answers import AnswerKey
from okey101.table.change import Change, EventDraft, Sealed
from okey101.table.errors import Conflict, Invalid
from okey101.table.journal import HandColumns, HandEndColumns, OutboxColumns
from okey101.table.options import TableOptions, us
from okey101.table.records import (
    DealInfo,
    MatchRecord,
    SeatRecord,
    TableRecord,
    TimerRecord,
    seats_to_json,
)
from okey101.table.turns import turn_timer
from okey101.table.views import table_message

Answer = AnswerKey


def bot_level(level: int) -> int:
    """A requested bot level (the BotLevel value), NORMAL where unspecified."""
    if level not in common_pb2.BotLevel.values():
        raise Invalid("BAD_FIELD", field="bot_level", value=str(level))
    return level or common_pb2.BOT_LEVEL_NORMAL


def plan_start(
    record: TableRecord,
    state: HandState | None,
    deal: DealInfo | None,
    *,
    fill_with_bots: bool,
    level: int,
    now_us: int,
    options: TableOptions,
    answer: Answer | None = None,
    claims: Claims | None = None,
    server_seed: bytes | None = None,
) -> Change:
    """Start the match (empty seats taken by bots first, if asked) and deal its first hand.
    Refused: a table already playing, finished or closed; empty seats."""
    if record.state == common_pb2.TABLE_STATE_PLAYING:
        raise Conflict("ALREADY_STARTED")
    if record.state != common_pb2.TABLE_STATE_WAITING:
        raise Conflict(
            "TABLE_FINISHED" if record.state == common_pb2.TABLE_STATE_FINISHED else "TABLE_CLOSED"
        )
    seats = list(record.seats)
    filled: list[int] = []
    if fill_with_bots:
        filled = [index for index, seat in enumerate(seats) if not seat.held]
        names = disguise.seat_names(
            record.table_id, [seat.display_name if seat.held else "" for seat in seats], filled
        )
        for index in filled:
            seats[index] = SeatRecord(
                kind="bot", display_name=names[index], bot_level=bot_level(level)
            )
    empty = [index for index, seat in enumerate(seats) if not seat.held]
    if empty:
        raise Conflict("SEATS_EMPTY", seats=", ".join(map(str, empty)))
    playing = record.replace(state=common_pb2.TABLE_STATE_PLAYING, seats=tuple(seats))
    change = Change(record, now_us, playing, state, deal, game=True, write_seats=True)
    if not disguise.bots_labelled(record.rules_message()):
        # Seats players take are announced: unlabelled bots sit down as players do.
        for index in filled:
            change.drafts.append(
                events.presence(
                    common_pb2.EVENT_KIND_SEAT_TAKEN, index, seats[index], playing, state
                )
            )
    change.drafts.append(events.of_kind(common_pb2.EVENT_KIND_MATCH_STARTED))
    deal_into(change, options, server_seed=server_seed)
    if answer is not None:

        def respond(sealed: Sealed) -> bytes:
            return table_pb2.StartResponse(
                table=table_message(sealed.record, claims)
            ).SerializeToString()

        change.answer = (answer, respond)
    return change


def plan_next_deal(
    record: TableRecord,
    state: HandState | None,
    deal: DealInfo | None,
    *,
    now_us: int,
    options: TableOptions,
    server_seed: bytes | None = None,
) -> Change:
    """Deal the match's next hand (the previous one has ended), or, the table's match deadline
    having passed since, end the match there (module docstring)."""
    change = Change(record, now_us, record, state, deal, game=True)
    if record.deadline_passed(now_us) and record.hand_number:
        rules = convert.rules_from_proto(record.rules_message())
        change.write_match = True
        _end_match_into(change, record, end_match(_match_so_far(record, rules)), now_us)
        return change
    deal_into(change, options, server_seed=server_seed)
    return change


def deal_into(change: Change, options: TableOptions, *, server_seed: bytes | None) -> None:
    """Add the next hand's deal to ``change`` (module docstring): its fairness record, the
    HAND_DEALT event (each seat's rack its own), the first turn and its timer."""
    record = change.record
    hand_number = record.hand_number + 1
    hand_id = f"{record.table_id}-h{hand_number}"
    dealer = record.match.dealer
    seed = server_seed if server_seed is not None else secrets.token_bytes(32)
    player_seeds = [
        bytes.fromhex(seat.deal_seed) if seat.deal_seed else None for seat in record.seats
    ]
    deck = deck_order(record.table_id, hand_number, seed, player_seeds)
    rules = convert.rules_from_proto(record.rules_message())
    state = deal_hand(rules, dealer, deck)
    info = DealInfo(
        hand_id=hand_id,
        commitment=commitment(seed),
        player_seeds=tuple(seed.hex() if seed else "" for seed in player_seeds),
        server_seed=seed.hex(),
    )
    dealt = record.replace(hand_number=hand_number, hand_id=hand_id, dealer=dealer)
    event = common_pb2.Event(
        kind=common_pb2.EVENT_KIND_HAND_DEALT,
        seat=dealer,
        hand_id=hand_id,
        hand_number=hand_number,
        deal=info.record(reveal=False),
    )
    event.tiles.append(shared_tile(state.okey.indicator, state.okey))
    draft = EventDraft(event)
    for seat in range(SEATS):
        draft.private[seat] = common_pb2.Event(
            private_tiles=shared_tiles(state.seats[seat].rack, state.okey)
        ).SerializeToString()
    change.drafts.append(draft)
    timer, deadline = turn_timer(
        dealt, dealt.seats, state.turn, change.now_us, options, turn_number=state.turn_number
    )
    dealt = dealt.replace(turn_deadline_us=deadline)
    change.drafts.append(events.turn_started(state.turn, dealt, deadline))
    change.record = dealt
    change.state = state
    change.deal = info
    change.timer = timer
    change.snapshot = True
    change.hand_start = HandColumns(
        hand_id=hand_id,
        table_id=record.table_id,
        match_id=record.match_id,
        hand_number=hand_number,
        dealer=dealer,
        rules_version=state.version,
        server_seed=info.server_seed,
        commitment=info.commitment,
        player_seeds=json.dumps(list(info.player_seeds)),
        deck=json.dumps([tile.id for tile in deck]),
        seats=seats_to_json(record.seats),
        started_us=change.now_us,
    )


def end_hand_into(change: Change, options: TableOptions) -> None:
    """The hand of ``change.state`` has ended (module docstring): the seed revealed on its
    HAND_ENDED event, the hand recorded in the match, scoring owed the hand, and either the
    next deal's timer or, the match being over, its result, MATCH_ENDED and scoring owed it."""
    state = change.state
    deal = change.deal
    assert state is not None and state.result is not None and deal is not None
    record = change.record
    revealed = deal.record(reveal=True)
    for draft in change.drafts:
        if draft.event.kind == common_pb2.EVENT_KIND_HAND_ENDED:
            draft.event.deal.CopyFrom(revealed)
    rules = convert.rules_from_proto(record.rules_message())
    match = _match_so_far(record, rules)
    result = convert.hand_result_to_proto(state.result, state)
    match = record_hand(match, state.result, last=record.deadline_passed(change.now_us))
    progress = _progress(record.match_id, match, record.rules_message().match_end)
    for draft in change.drafts:
        if draft.event.kind == common_pb2.EVENT_KIND_HAND_ENDED:
            draft.event.match_progress.CopyFrom(progress)
    match_record = MatchRecord(
        dealer=match.dealer,
        totals=tuple(match.totals),
        hand_ids=(*record.match.hand_ids, record.hand_id),
        results=(*record.match.results, result.SerializeToString().hex()),
    )
    final = common_pb2.HandState()
    convert.fill_hand_state(final, state)
    seat_players = _seat_players(record.seats)
    end_us = change.now_us
    change.hand_end = HandEndColumns(
        hand_id=record.hand_id,
        ended_us=end_us,
        result=result.SerializeToString(),
        final_state=final.SerializeToString(),
    )
    change.outbox.append(
        _owed(
            record,
            end_us,
            "hand",
            record.hand_id,
            scoring_pb2.RecordHandRequest(
                request_id=f"table-{record.hand_id}"[:64],
                hand_id=record.hand_id,
                table_id=record.table_id,
                match_id=record.match_id,
                tournament_id=record.tournament_id,
                hand_number=record.hand_number,
                seats=seat_players,
                final_state=final,
                deal=revealed,
                end_time=_timestamp(end_us),
            ).SerializeToString(),
        )
    )
    change.snapshot = True
    change.write_match = True
    record = record.replace(match=match_record, turn_deadline_us=None, dealer=match.dealer)
    if not match.ended:
        change.record = record
        due = end_us + us(options.next_hand_seconds)
        if record.match_deadline_us is not None:
            due = min(due, record.match_deadline_us)  # a deal step then ends the match instead
        change.timer = TimerRecord("deal", due)
        return
    _end_match_into(change, record, match, end_us)


def _match_so_far(record: TableRecord, rules: RuleSet) -> MatchState:
    """The engine's match of the table's hands recorded so far."""
    return MatchState(
        rules=rules,
        dealer=record.match.dealer,
        hands=tuple(
            convert.hand_result_from_proto(common_pb2.HandResult.FromString(bytes.fromhex(r)))
            for r in record.match.results
        ),
        totals=record.match.totals,
    )


def _end_match_into(change: Change, record: TableRecord, match: MatchState, end_us: int) -> None:
    """The match of ``record`` (its hands recorded) is over (``match.ended``): its result on
    the table and on MATCH_ENDED, scoring owed it, the table finished, no timer."""
    rules = match.rules
    seat_players = _seat_players(record.seats)
    match_record = record.match
    result_message = common_pb2.MatchResult(
        match_id=record.match_id,
        table_id=record.table_id,
        seats=[
            common_pb2.MatchSeatResult(
                seat=index,
                player_id=player.player_id,
                display_name=player.display_name,
                total=match.totals[index],
                winner=index in match.winners,
            )
            for index, player in enumerate(seat_players)
        ],
        team_totals=list(match.team_totals()) if rules.partners else [],
        hands_played=match.hands_played,
        hand_ids=list(match_record.hand_ids),
        ended_at=_timestamp(end_us),
        ended_by_deadline=match.cut_short,
    )
    shown = common_pb2.MatchResult()
    shown.CopyFrom(result_message)
    if not disguise.bots_labelled(record.rules_message()):
        disguise.hide_bots_in_result(shown)  # everyone's event: scoring is told the truth
    change.drafts.append(
        EventDraft(common_pb2.Event(kind=common_pb2.EVENT_KIND_MATCH_ENDED, match_result=shown))
    )
    change.outbox.append(
        _owed(
            record,
            end_us,
            "match",
            record.match_id,
            scoring_pb2.RecordMatchRequest(
                request_id=f"table-{record.match_id}"[:64],
                result=result_message,
                rules=record.rules_message(),
                seats=seat_players,
                tournament_id=record.tournament_id,
                tournament_round=record.tournament_round,
            ).SerializeToString(),
        )
    )
    change.record = record.replace(
        state=common_pb2.TABLE_STATE_FINISHED, match_result=result_message.SerializeToString()
    )
    change.timer = None


def _owed(record: TableRecord, now_us: int, kind: str, key: str, payload: bytes) -> OutboxColumns:
    """The outbox's row owing scoring ``payload`` (``kind`` "hand" or "match", unique by
    ``key``), due at once."""
    return OutboxColumns(
        table_id=record.table_id,
        kind=kind,
        key=key,
        payload=payload,
        created_us=now_us,
        next_attempt_us=now_us,
    )


def _progress(
    match_id: str, match: MatchState, match_end: common_pb2.MatchEnd
) -> common_pb2.MatchProgress:
    """Where the match stands after a hand (HAND_ENDED's match_progress)."""
    rules = match.rules
    target = rules.match_end is MatchEnd.TARGET_TOTAL
    return common_pb2.MatchProgress(
        match_id=match_id,
        totals=list(match.totals),
        team_totals=list(match.team_totals()) if rules.partners else [],
        hands_played=match.hands_played,
        match_end=match_end,
        target_total=rules.match_target if target else 0,
        match_hands=0 if target else rules.match_hands,
        ended=match.ended,
    )


def _seat_players(seats: Sequence[SeatRecord]) -> list[scoring_pb2.SeatPlayer]:
    players = []
    for index, seat in enumerate(seats):
        occupant = seat.occupant(index)
        players.append(
            scoring_pb2.SeatPlayer(
                seat=index,
                player_id=seat.player_id if seat.kind == "player" else "",
                display_name=occupant.display_name,
                bot=seat.kind == "bot",
            )
        )
    return players


def _timestamp(micros: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromMicroseconds(micros)
    return stamp


__all__ = [
    "bot_level",
    "deal_into",
    "end_hand_into",
    "plan_next_deal",
    "plan_start",
]
