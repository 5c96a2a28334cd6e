"""Bots as the rule set keeps them (issue 38): labelled or not, and the bot pace.

Where ``bots_labelled`` is false (north_sultan's preset) nothing a player or a spectator is sent
says which seats are bots: GetTable, ListTables, the views, WatchTable's events, the hand's
record. Services are still told. Each turn of a bot takes the bot pace; the test stacks set no
pace at all.
"""

from __future__ import annotations

import itertools
import random
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest
from okey.v1 import common_pb2, scoring_pb2, table_pb2

from okey101.stack import FAST as STACK_FAST
from okey101.table.disguise import (
    BOT_NAMES,
    bot_name,
    bot_player_id,
    hide_bot,
    hide_bots,
    hide_bots_in_hand,
    seat_names,
)
from okey101.table.options import TableOptions, us
from okey101.table.records import SeatRecord
from okey101.table.turns import bot_delays_us

from support.service_stack import FAST, Stack, running_stack
from support.tables import create_table, get_table, one_hand_rules, play_as, run, wait_for

ALICE = "alice"
SPECTATOR = "sam"
NORTH_SULTAN = common_pb2.RULE_PRESET_NORTH_SULTAN
OYNA = common_pb2.RULE_PRESET_OYNA


async def alice_and_three_bots(stack: Stack, rules: common_pb2.RuleSet) -> str:
    """A public table where alice sits at seat 0 and the start fills the rest with bots."""
    table = await create_table(stack, rules)
    stub = stack.table_stub()
    await stub.Sit(
        table_pb2.SitRequest(request_id=f"sit-{table.table_id}", table_id=table.table_id, seat=0),
        metadata=stack.player_auth(ALICE),
    )
    await stub.Start(
        table_pb2.StartRequest(
            request_id=f"start-{table.table_id}", table_id=table.table_id, fill_with_bots=True
        ),
        metadata=stack.service_auth(),
    )
    return table.table_id


async def events_of(stack: Stack, table_id: str, auth: Any, seat: int | None) -> list[Any]:
    """Every event of the table so far, as WatchTable sends them to ``auth``."""
    last = (await get_table(stack, table_id)).last_sequence
    request = table_pb2.WatchTableRequest(table_id=table_id, after_sequence=0)
    if seat is not None:
        request.seat = seat
    call = stack.table_stub().WatchTable(request, metadata=auth)
    events: list[common_pb2.Event] = []
    try:
        async for item in call:
            if item.HasField("event"):
                events.append(item.event)
                if item.event.sequence >= last:
                    break
    finally:
        call.cancel()
    return events


async def player_answers(stack: Stack, table_id: str) -> dict[str, list[Any]]:
    """Every seat occupant players and spectators are sent, by where they were sent."""
    stub = stack.table_stub()
    alice, spectator = stack.player_auth(ALICE), stack.player_auth(SPECTATOR)
    got = (await stub.GetTable(table_pb2.GetTableRequest(table_id=table_id), metadata=alice)).table
    # ListTables is the lobby's: its directory shows players each table through ``hide_bots``.
    listed = await stub.ListTables(table_pb2.ListTablesRequest(), metadata=stack.service_auth())
    (in_list,) = [table for table in listed.tables if table.table_id == table_id]
    hide_bots(in_list)
    view = await stub.GetSeatView(
        table_pb2.GetSeatViewRequest(table_id=table_id, seat=0), metadata=alice
    )
    watched = await stub.GetSeatView(
        table_pb2.GetSeatViewRequest(table_id=table_id), metadata=spectator
    )
    return {
        "GetTable": list(got.seats),
        "the lobby's directory": list(in_list.seats),
        "player's view": [public.occupant for public in view.view.seats],
        "spectator's view": [public.occupant for public in watched.view.seats],
    }


def assert_players_only(occupants: list[common_pb2.SeatOccupant], table_id: str) -> None:
    """No occupant says it is a bot: all are players, bots with a name and a player-like id."""
    assert [occupant.kind for occupant in occupants] == [common_pb2.OCCUPANT_KIND_PLAYER] * 4
    assert occupants[0].player_id == ALICE
    for occupant in occupants[1:]:
        assert occupant.player_id == bot_player_id(table_id, occupant.seat)
        assert occupant.player_id.startswith("p_") and len(occupant.player_id) == 34
        assert occupant.display_name == bot_name(table_id, occupant.seat)
        assert occupant.display_name in BOT_NAMES
    for occupant in occupants:
        assert occupant.bot_level == common_pb2.BOT_LEVEL_UNSPECIFIED and not occupant.away


# ---------------------------------------------------------------------------------------------
# Unlabelled bots: north_sultan


def test_a_north_sultan_table_never_shows_a_bot_to_players_or_spectators(
    tmp_path: Path, table_url: str
) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path, table_url) as stack:
            table_id = await alice_and_three_bots(stack, one_hand_rules(NORTH_SULTAN))
            # Services are told the truth.
            truth = await get_table(stack, table_id)
            assert not truth.rules.bots_labelled
            assert [seat.kind for seat in truth.seats[1:]] == [common_pb2.OCCUPANT_KIND_BOT] * 3
            assert [seat.player_id for seat in truth.seats[1:]] == ["", "", ""]
            for occupants in (await player_answers(stack, table_id)).values():
                assert_players_only(occupants, table_id)
            # Alice plays the hand out (the bots move at once in tests).
            await play_as(stack, table_id, ALICE, 0, until_hand=1)
            for auth, seat in ((stack.player_auth(ALICE), 0), (stack.player_auth(SPECTATOR), None)):
                events = await events_of(stack, table_id, auth, seat)
                kinds = [event.kind for event in events]
                assert common_pb2.EVENT_KIND_HAND_ENDED in kinds
                # Each bot sat down as a player does, before the match started.
                taken = [e for e in events if e.kind == common_pb2.EVENT_KIND_SEAT_TAKEN]
                assert [event.seat for event in taken] == [0, 1, 2, 3]
                assert_players_only([event.occupant for event in taken], table_id)
                for event in events:
                    assert event.occupant.kind != common_pb2.OCCUPANT_KIND_BOT
                    assert event.occupant.bot_level == common_pb2.BOT_LEVEL_UNSPECIFIED
                    if event.kind == common_pb2.EVENT_KIND_TURN_STARTED:
                        # A bot's turn runs on a player's clock, as alice's does.
                        assert event.HasField("turn_deadline"), event.seat
                    assert event.kind != common_pb2.EVENT_KIND_SEAT_AWAY
                (ended,) = [e for e in events if e.kind == common_pb2.EVENT_KIND_MATCH_ENDED]
                assert [line.player_id for line in ended.match_result.seats] == [
                    ALICE,
                    *[bot_player_id(table_id, seat) for seat in (1, 2, 3)],
                ]
            record = await stack.table_stub().GetHandRecord(
                table_pb2.GetHandRecordRequest(hand_id=f"{table_id}-h1"),
                metadata=stack.player_auth(ALICE),
            )
            assert_players_only(list(record.record.seats), table_id)
            sources = {move.source for move in record.record.moves}
            assert sources == {table_pb2.MOVE_SOURCE_PLAYER}
            # The service's copy of the same record keeps the bots' moves as theirs.
            told = await stack.table_stub().GetHandRecord(
                table_pb2.GetHandRecordRequest(hand_id=f"{table_id}-h1"),
                metadata=stack.service_auth(),
            )
            assert table_pb2.MOVE_SOURCE_BOT in {move.source for move in told.record.moves}
            assert told.record.seats[1].kind == common_pb2.OCCUPANT_KIND_BOT
            # The match's result: a player is shown the bots' lines with their seats' ids; the
            # service (and scoring) the truth.
            shown = (
                await stack.table_stub().GetTable(
                    table_pb2.GetTableRequest(table_id=table_id),
                    metadata=stack.player_auth(SPECTATOR),
                )
            ).table
            assert_players_only(list(shown.seats), table_id)
            assert [line.player_id for line in shown.match_result.seats][1:] == [
                bot_player_id(table_id, seat) for seat in (1, 2, 3)
            ]
            truth = await get_table(stack, table_id)
            assert [line.player_id for line in truth.match_result.seats] == [ALICE, "", "", ""]
            hide_bots(truth)  # what the lobby does before showing a player a table
            assert truth.match_result == shown.match_result
            assert list(truth.seats) == list(shown.seats)
            # Scoring's sheet of the match keeps the bots unlabelled for a player too.
            scoring = stack.scoring_stub()

            async def sheet(auth: Any) -> Any:
                try:
                    answer = await scoring.GetScoreSheet(
                        scoring_pb2.GetScoreSheetRequest(match_id=truth.match_id), metadata=auth
                    )
                except grpc.aio.AioRpcError:
                    return None  # not recorded yet
                return answer.sheet if answer.sheet.ended else None

            players_sheet = await wait_for(lambda: sheet(stack.player_auth(ALICE)))
            assert [(seat.player_id, seat.bot) for seat in players_sheet.seats] == [
                (ALICE, False),
                *[(bot_player_id(table_id, seat), False) for seat in (1, 2, 3)],
            ]
            services_sheet = await sheet(stack.service_auth())
            assert [seat.bot for seat in services_sheet.seats] == [False, True, True, True]

    run(scenario())


def test_a_bot_is_never_named_as_a_player_at_its_table() -> None:
    table_id = "t-namesake"
    namesake = bot_name(table_id, 1)
    names = seat_names(table_id, [namesake, "", "", ""], [1, 2, 3])
    assert names[0] == namesake and namesake not in names[1:]
    assert len({name.casefold() for name in names}) == 4 and set(names[1:]) <= set(BOT_NAMES)
    # Without a namesake, each seat keeps its own name.
    assert seat_names(table_id, ["Alice", "", "", ""], [1, 2, 3])[1:] == [
        bot_name(table_id, seat) for seat in (1, 2, 3)
    ]


def test_a_player_a_bot_keeps_the_seat_of_shows_as_that_player_away() -> None:
    left = SeatRecord(kind="player", player_id="p_ali", display_name="Ali", left=True, away=True)
    truth = left.occupant(1)
    assert truth.kind == common_pb2.OCCUPANT_KIND_BOT  # what services are told
    shown = left.occupant(1)
    hide_bot(shown, "t-1")
    assert (shown.kind, shown.player_id, shown.display_name, shown.away) == (
        common_pb2.OCCUPANT_KIND_PLAYER,
        "p_ali",
        "Ali",
        True,
    )
    assert shown.bot_level == common_pb2.BOT_LEVEL_UNSPECIFIED
    empty = SeatRecord().occupant(2)
    hide_bot(empty, "t-1")
    assert empty == SeatRecord().occupant(2)


def test_a_hand_record_shows_a_bot_seats_moves_as_a_players_and_an_away_players_as_a_bots() -> None:
    hand = table_pb2.HandRecord(
        table_id="t-1",
        rules=common_pb2.RuleSet(preset=NORTH_SULTAN),
        seats=[
            SeatRecord(kind="player", player_id="p_ali", away=True).occupant(0),
            SeatRecord(kind="bot", display_name=bot_name("t-1", 1)).occupant(1),
        ],
        moves=[
            table_pb2.RecordedMove(seat=0, source=table_pb2.MOVE_SOURCE_BOT),
            table_pb2.RecordedMove(seat=1, source=table_pb2.MOVE_SOURCE_BOT),
        ],
    )
    labelled = table_pb2.HandRecord()
    labelled.CopyFrom(hand)
    labelled.rules.preset = OYNA
    hide_bots_in_hand(hand)
    assert [move.source for move in hand.moves] == [
        table_pb2.MOVE_SOURCE_BOT,
        table_pb2.MOVE_SOURCE_PLAYER,
    ]
    assert [seat.kind for seat in hand.seats] == [common_pb2.OCCUPANT_KIND_PLAYER] * 2
    assert hand.seats[1].player_id == bot_player_id("t-1", 1)
    unchanged = table_pb2.HandRecord()
    unchanged.CopyFrom(labelled)
    hide_bots_in_hand(labelled)  # oyna labels its bots: the truth
    assert labelled == unchanged


# ---------------------------------------------------------------------------------------------
# Labelled bots, and the host's say


@pytest.mark.parametrize(
    ("preset", "override", "labelled"),
    [
        (OYNA, None, True),
        (common_pb2.RULE_PRESET_BOOMBALA, None, True),
        (NORTH_SULTAN, True, True),
        (OYNA, False, False),
    ],
    ids=["oyna", "boombala", "north_sultan-labelled-by-its-host", "oyna-unlabelled-by-its-host"],
)
def test_bots_are_labelled_as_the_rule_set_says(
    tmp_path: Path, preset: int, override: bool | None, labelled: bool
) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            rules = one_hand_rules(preset)
            if override is not None:
                rules.bots_labelled = override
            table_id = await alice_and_three_bots(stack, rules)
            truth = await get_table(stack, table_id)
            assert truth.rules.bots_labelled is labelled
            answers = await player_answers(stack, table_id)
            if not labelled:
                for occupants in answers.values():
                    assert_players_only(occupants, table_id)
                return
            for where, occupants in answers.items():
                assert [seat.kind for seat in occupants] == [
                    common_pb2.OCCUPANT_KIND_PLAYER,
                    *[common_pb2.OCCUPANT_KIND_BOT] * 3,
                ], where
                # A bot is still called by a person's name; its kind says it is a bot.
                assert [seat.display_name for seat in occupants[1:]] == [
                    bot_name(table_id, seat) for seat in (1, 2, 3)
                ]
                assert all(seat.player_id == "" for seat in occupants[1:])
                assert all(seat.bot_level == common_pb2.BOT_LEVEL_NORMAL for seat in occupants[1:])
            await play_as(stack, table_id, ALICE, 0, until_hand=1)
            events = await events_of(stack, table_id, stack.player_auth(ALICE), 0)
            started = [e for e in events if e.kind == common_pb2.EVENT_KIND_TURN_STARTED]
            assert {e.seat for e in started} == {0, 1, 2, 3}
            # Only a player's turn has a clock: a labelled bot's has none.
            assert all(e.HasField("turn_deadline") is (e.seat == 0) for e in started)
            assert not [e for e in events if e.kind == common_pb2.EVENT_KIND_SEAT_TAKEN][1:]

    run(scenario())


# ---------------------------------------------------------------------------------------------
# The bot pace


def test_the_bot_pace_is_varied_and_within_its_bounds() -> None:
    options = TableOptions()
    assert (options.bot_move_seconds, options.bot_move_max_seconds) == (1.5, 4.0)
    assert (options.bot_discard_seconds, options.bot_discard_max_seconds) == (0.3, 0.9)
    firsts, pauses = set(), set()
    for seed in range(2000):
        first, pause = bot_delays_us(random.Random(seed), options)
        assert us(0.3) <= pause <= us(0.9)
        assert us(1.5) <= first + pause <= us(4.0)
        firsts.add(first // 100_000)
        pauses.add(pause // 100_000)
    # Varied: every tenth of a second of both ranges comes up.
    assert pauses == set(range(3, 9)) and len(firsts) >= 30
    # Seeded: the same generator gives the same pace (every pod plays a turn alike).
    assert bot_delays_us(random.Random("t|h|4"), options) == bot_delays_us(
        random.Random("t|h|4"), options
    )


def test_tests_and_benches_set_no_bot_pace() -> None:
    from okey101.bench.load_stack import stack_environment

    assert bot_delays_us(random.Random(1), FAST) == (0, 0)
    stack_options = TableOptions.from_environ(dict(STACK_FAST))
    assert bot_delays_us(random.Random(1), stack_options) == (0, 0)
    bench_environment = stack_environment({})
    assert bench_environment["OKEY_TABLE_BOT_MOVE_SECONDS"] == "0"


def test_the_pace_reads_its_environment_variables() -> None:
    options = TableOptions.from_environ(
        {
            "OKEY_TABLE_BOT_MOVE_SECONDS": "2",
            "OKEY_TABLE_BOT_MOVE_MAX_SECONDS": "3",
            "OKEY_TABLE_BOT_DISCARD_SECONDS": "0.5",
            "OKEY_TABLE_BOT_DISCARD_MAX_SECONDS": "0.6",
        }
    )
    for seed in range(200):
        first, pause = bot_delays_us(random.Random(seed), options)
        assert us(0.5) <= pause <= us(0.6) and us(2) <= first + pause <= us(3)


#: A tiny pace, so that a whole hand of bots keeps it in a few seconds.
TINY = (0.03, 0.06, 0.01, 0.02)


def test_bots_keep_the_pace_turn_by_turn(tmp_path: Path) -> None:
    low, high, pause_low, pause_high = TINY
    options = TableOptions(
        bot_move_seconds=low,
        bot_move_max_seconds=high,
        bot_discard_seconds=pause_low,
        bot_discard_max_seconds=pause_high,
        next_hand_seconds=0.0,
        poll_seconds=0.05,
        watchdog_seconds=0.2,
    )

    async def scenario() -> None:
        async with running_stack(tmp_path, options=options) as stack:
            table = await create_table(
                stack,
                one_hand_rules(NORTH_SULTAN),
                seats=[
                    table_pb2.SeatSetup(seat=s, kind=common_pb2.OCCUPANT_KIND_BOT) for s in range(4)
                ],
            )
            await stack.table_stub().Start(
                table_pb2.StartRequest(request_id=uuid.uuid4().hex, table_id=table.table_id),
                metadata=stack.service_auth(),
            )

            async def ended() -> bool:
                return (await get_table(stack, table.table_id)).state == (
                    common_pb2.TABLE_STATE_FINISHED
                )

            await wait_for(ended, timeout=60)
            record = (
                await stack.table_stub().GetHandRecord(
                    table_pb2.GetHandRecordRequest(hand_id=f"{table.table_id}-h1"),
                    metadata=stack.service_auth(),
                )
            ).record
            # The steps of each turn: the moves of one seat in a row, by the time they were made.
            turns: list[list[int]] = []
            last_seat = None
            for move in record.moves:
                time_us = move.time.ToMicroseconds()
                if move.seat != last_seat:
                    turns.append([time_us])
                elif time_us != turns[-1][-1]:
                    turns[-1].append(time_us)
                last_seat = move.seat
            assert len(turns) > 10
            slack = us(1.0)  # how late a timer may fire on a busy machine
            for number in range(1, len(turns)):
                rng = random.Random(f"{table.table_id}|{table.table_id}-h1|{number}")
                first, pause = bot_delays_us(rng, options)
                assert us(pause_low) <= pause <= us(pause_high)
                assert us(low) <= first + pause <= us(high)
                started = turns[number - 1][-1]  # the previous turn's discard
                steps = turns[number]
                assert first <= steps[0] - started <= first + slack, number
                for before, after in itertools.pairwise(steps):
                    assert pause <= after - before <= pause + slack, number

    run(scenario())


def test_an_unlabelled_bots_turn_shows_a_players_deadline(tmp_path: Path) -> None:
    async def scenario() -> None:
        # A slow pace: the first bot's turn is still on when its view is read.
        options = TableOptions(
            bot_move_seconds=30.0,
            bot_move_max_seconds=30.0,
            next_hand_seconds=0.0,
            poll_seconds=0.05,
            watchdog_seconds=0.2,
        )
        async with running_stack(tmp_path, options=options) as stack:
            table = await create_table(
                stack,
                one_hand_rules(NORTH_SULTAN),
                seats=[
                    table_pb2.SeatSetup(seat=s, kind=common_pb2.OCCUPANT_KIND_BOT) for s in range(4)
                ],
            )
            await stack.table_stub().Start(
                table_pb2.StartRequest(request_id=uuid.uuid4().hex, table_id=table.table_id),
                metadata=stack.service_auth(),
            )
            view = (
                await stack.table_stub().GetSeatView(
                    table_pb2.GetSeatViewRequest(table_id=table.table_id),
                    metadata=stack.player_auth(SPECTATOR),
                )
            ).view
            assert view.phase == common_pb2.PHASE_FIRST  # the first bot is still to move
            # North Sultan's 45 s from the deal, as a player's turn.
            assert view.HasField("turn_deadline")
            created = table.create_time.ToMicroseconds()
            assert us(45) <= view.turn_deadline.ToMicroseconds() - created <= us(50)

    run(scenario())
