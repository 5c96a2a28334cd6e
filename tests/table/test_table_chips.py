"""Staked tables at the table service (#36), over real gRPC with the real rules, bot and scoring
services beside it and a small real LobbyService (``recording_lobby``) receiving the table's
outbox, on SQLite and PostgreSQL (``OKEY_TEST_DATABASE_URL``).

- CreateTable takes a stake and a fee, and refuses bad ones, writing nothing.
- A staked table's free seat is the lobby's to give: a player's own Sit is refused, a service's
  needs the stake's hold; the Table's pot follows the seats held, the match and its end.
- What moves chips reaches the lobby's RecordTableChips through the outbox, once each and in
  order, from the write that caused it: a seat freed before the start, the match started, the
  match ended (places), the table closed (every stake) - also after the lobby was out of reach.
- An unstaked table owes the lobby no chips record.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from okey.v1 import common_pb2, lobby_pb2, table_pb2
from sqlalchemy import func, select

from okey101.table import chips, models
from okey101.table.records import SeatRecord, TableRecord

from support.service_stack import Stack, running_stack
from support.table_rows import new_table_row
from support.tables import all_bots, create_table, get_table, one_hand_rules, run, wait_for

STAKE = 250
FEE = 10
SEAT_FREED = lobby_pb2.TABLE_CHIPS_EVENT_KIND_SEAT_FREED
MATCH_STARTED = lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_STARTED
MATCH_ENDED = lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ENDED
MATCH_ABANDONED = lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ABANDONED
#: A bot's seat, as a record names it.
BOT = ("", "")
#: How long a one-hand match of bots may take.
MATCH_TIMEOUT = 180.0


def rid() -> str:
    return uuid.uuid4().hex


async def staked(stack: Stack, rules: common_pb2.RuleSet | None = None) -> common_pb2.Table:
    return await create_table(stack, rules or one_hand_rules(), stake=STAKE, fee_percent=FEE)


async def sit_held(stack: Stack, table_id: str, player: str, seat: int) -> common_pb2.Table:
    """The lobby seats ``player`` with the stake it holds for them (``hold-<player>``)."""
    answer = await stack.table_stub().Sit(
        table_pb2.SitRequest(
            request_id=rid(), table_id=table_id, player_id=player, seat=seat,
            stake_hold_key=f"hold-{player}",
        ),
        metadata=stack.service_auth(),
    )  # fmt: skip
    assert answer.seat == seat
    return answer.table


async def leave(stack: Stack, table_id: str, player: str) -> common_pb2.Table:
    answer = await stack.table_stub().Leave(
        table_pb2.LeaveRequest(request_id=rid(), table_id=table_id),
        metadata=stack.player_auth(player),
    )
    return answer.table


async def start_with_bots(stack: Stack, table_id: str) -> common_pb2.Table:
    answer = await stack.table_stub().Start(
        table_pb2.StartRequest(request_id=rid(), table_id=table_id, fill_with_bots=True),
        metadata=stack.service_auth(),
    )
    return answer.table


async def close(stack: Stack, table_id: str) -> common_pb2.Table:
    answer = await stack.table_stub().CloseTable(
        table_pb2.CloseTableRequest(request_id=rid(), table_id=table_id),
        metadata=stack.service_auth(),
    )
    return answer.table


def seats_of(record: lobby_pb2.TableChipsRecord) -> list[tuple[int, str, str]]:
    return [(seat.seat, seat.player_id, seat.hold_key) for seat in record.seats]


async def outbox(stack: Stack, kind: str) -> list[Any]:
    """The table's outbox rows of ``kind``, oldest first."""
    o = models.outbox.c
    async with stack.servicer.store.database.read() as session:
        query = select(o.key, o.attempts, o.sent_us, o.last_error).where(o.kind == kind)
        return list((await session.execute(query.order_by(o.id))).all())


async def received(lobby: Any, count: int, timeout: float = 30.0) -> list[Any]:
    """The lobby's chips records once it has ``count``; then, a while later, still just those."""

    async def arrived() -> bool:
        return len(lobby.chips) >= count

    await wait_for(arrived, timeout)
    await asyncio.sleep(0.5)  # ten of the outbox's polls: nothing is sent again
    assert len(lobby.chips) == count
    return list(lobby.chips)


async def check_keys(stack: Stack, records: list[Any], kinds: list[int]) -> None:
    """Each record is keyed by its table and the sequence number of the event that caused it
    (``kinds``: those events' kinds), once, in the order the table logged them."""
    assert len({record.key for record in records}) == len(records)
    by_table: dict[str, list[int]] = {}
    for record, kind in zip(records, kinds, strict=True):
        table_id, sequence = record.key.removeprefix("chips/").rsplit("/", 1)
        assert table_id == record.table_id
        by_table.setdefault(table_id, []).append(int(sequence))
        events = await stack.servicer.store.events_after(table_id, int(sequence) - 1, limit=1)
        assert events[0].sequence == int(sequence) and events[0].kind == kind
        assert (record.stake, record.fee_percent) == (STAKE, FEE)
    for sequences in by_table.values():
        assert sequences == sorted(sequences)


# ---------------------------------------------------------------------------------------------
# CreateTable


def test_create_table_takes_a_stake_and_a_fee_and_refuses_bad_ones_writing_nothing(
    table_url: str, tmp_path: Path, refusal: Callable[[grpc.RpcError], Any]
) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path, table_url) as stack:
            stub = stack.table_stub()
            bad = [
                ({"stake": chips.MAX_STAKE + 1}, "STAKE_TOO_LARGE", "1000000000000 chips"),
                ({"stake": STAKE, "fee_percent": 51}, "BAD_FEE_PERCENT", "50 percent"),
                ({"fee_percent": 5}, "FEE_WITHOUT_STAKE", "needs a stake"),
            ]
            for fields, reason, words in bad:
                for locale in ("en", "tr"):
                    request = table_pb2.CreateTableRequest(
                        request_id=rid(), rules=one_hand_rules(), locale=locale, **fields
                    )
                    with pytest.raises(grpc.aio.AioRpcError) as caught:
                        await stub.CreateTable(request, metadata=stack.service_auth())
                    found = refusal(caught.value)
                    assert (found.code, found.reason) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
                    assert found.locale == ("en-US" if locale == "en" else "tr-TR")
                    assert (words in found.message) == (locale == "en"), found.message
            async with stack.servicer.store.database.read() as session:
                for table in (models.tables, models.requests):
                    count = await session.scalar(select(func.count()).select_from(table))
                    assert count == 0, table.name
            # The largest stake and fee are taken, and shown with the table.
            table = await create_table(
                stack, one_hand_rules(), stake=chips.MAX_STAKE, fee_percent=chips.MAX_FEE_PERCENT
            )
            assert (table.stake, table.fee_percent, table.pot) == (chips.MAX_STAKE, 50, 0)
            again = await get_table(stack, table.table_id)
            assert (again.stake, again.fee_percent, again.pot) == (chips.MAX_STAKE, 50, 0)
            plain = await create_table(stack, one_hand_rules())
            assert (plain.stake, plain.fee_percent, plain.pot) == (0, 0, 0)

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Seats, the pot and the records of a match that does not end


def test_staked_seats_are_the_lobbys_to_give_and_the_pot_and_the_records_follow_them(
    table_url: str,
    tmp_path: Path,
    refusal: Callable[[grpc.RpcError], Any],
    recording_lobby: Any,
) -> None:
    async def scenario() -> None:
        async with (
            recording_lobby() as lobby,
            running_stack(tmp_path, table_url, lobby_address=lobby.address) as stack,
        ):
            stub = stack.table_stub()
            table = await staked(stack)
            table_id = table.table_id
            assert (table.stake, table.fee_percent, table.pot) == (STAKE, FEE, 0)
            # A player's own Sit at a free seat is refused, in their language.
            for locale, sentence in (
                ("en", "Join staked tables through the lobby, which holds your stake."),
                ("tr", "Bahisli masalara, bahsini tutan lobi üzerinden katıl."),
            ):
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.Sit(
                        table_pb2.SitRequest(request_id=rid(), table_id=table_id, locale=locale),
                        metadata=stack.player_auth("ada"),
                    )
                found = refusal(caught.value)
                assert (found.code, found.reason, found.message) == (
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "STAKED_TABLE_JOIN_THROUGH_LOBBY",
                    sentence,
                )
            # A service's Sit needs the stake's hold.
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.Sit(
                    table_pb2.SitRequest(request_id=rid(), table_id=table_id, player_id="ada"),
                    metadata=stack.service_auth(),
                )
            found = refusal(caught.value)
            assert (found.code, found.reason) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "FIELD_REQUIRED",
            )
            assert found.metadata["field"] == "stake_hold_key"
            assert (await get_table(stack, table_id)).last_sequence == 0  # nothing written
            # Seated with their holds: the pot grows with each.
            assert (await sit_held(stack, table_id, "ada", 0)).pot == STAKE
            seated = await sit_held(stack, table_id, "bea", 1)
            assert seated.pot == 2 * STAKE
            # The same player's seat again changes nothing.
            again = await sit_held(stack, table_id, "ada", 0)
            assert (again.pot, again.last_sequence) == (2 * STAKE, seated.last_sequence)
            # bea leaves before the start: her seat is freed, her stake owed back.
            assert (await leave(stack, table_id, "bea")).pot == STAKE
            # The match starts with bots: every seat's stake is in the pot.
            playing = await start_with_bots(stack, table_id)
            assert (playing.state, playing.pot) == (common_pb2.TABLE_STATE_PLAYING, 4 * STAKE)
            # ada goes away and comes back with her own token, no hold needed: her stake is in.
            assert (await leave(stack, table_id, "ada")).pot == 4 * STAKE
            back = await stub.Sit(
                table_pb2.SitRequest(request_id=rid(), table_id=table_id),
                metadata=stack.player_auth("ada"),
            )
            assert back.seat == 0 and back.table.pot == 4 * STAKE
            assert not back.table.seats[0].away
            # Closed during the match: every stake is owed back, the pot is empty.
            closed = await close(stack, table_id)
            assert (closed.state, closed.pot) == (common_pb2.TABLE_STATE_CLOSED, 0)
            # A table closed before its start: the stakes of the seats held.
            waiting = await staked(stack)
            await sit_held(stack, waiting.table_id, "cem", 2)
            assert (await close(stack, waiting.table_id)).pot == 0
            # A start_when_full table the lobby fills starts by itself.
            seats = [
                table_pb2.SeatSetup(seat=0, kind=common_pb2.OCCUPANT_KIND_PLAYER, player_id="ada"),
                *all_bots()[1:],
            ]
            full = await create_table(
                stack, one_hand_rules(), seats=seats, start_when_full=True, stake=STAKE,
                fee_percent=FEE,
            )  # fmt: skip
            assert full.pot == 0  # a seat reserved holds no stake
            await sit_held(stack, full.table_id, "ada", 0)
            assert (await get_table(stack, full.table_id)).pot == 4 * STAKE

            records = await received(lobby, 5)
            assert [record.kind for record in records] == [
                SEAT_FREED, MATCH_STARTED, MATCH_ABANDONED, MATCH_ABANDONED, MATCH_STARTED,
            ]  # fmt: skip
            await check_keys(
                stack,
                records,
                [
                    common_pb2.EVENT_KIND_SEAT_LEFT,
                    common_pb2.EVENT_KIND_MATCH_STARTED,
                    common_pb2.EVENT_KIND_TABLE_CLOSED,
                    common_pb2.EVENT_KIND_TABLE_CLOSED,
                    common_pb2.EVENT_KIND_MATCH_STARTED,
                ],
            )
            freed, started, abandoned, abandoned_waiting, started_when_full = records
            assert [r.table_id for r in records[:3]] == [table_id] * 3
            assert seats_of(freed) == [(1, "bea", "hold-bea")]
            every_seat = [(0, "ada", "hold-ada"), *((seat, *BOT) for seat in (1, 2, 3))]
            assert seats_of(started) == every_seat
            assert seats_of(abandoned) == every_seat  # ada's, though she had gone away
            assert seats_of(abandoned_waiting) == [(2, "cem", "hold-cem")]
            assert started_when_full.table_id == full.table_id
            assert seats_of(started_when_full) == every_seat
            assert not any(record.partners for record in records)
            rows = await outbox(stack, chips.KIND)
            assert [row.key for row in rows] == [record.key for record in records]
            assert all(row.sent_us is not None for row in rows)

    run(scenario())


# ---------------------------------------------------------------------------------------------
# A match played to its end


def test_a_staked_match_played_to_its_end_owes_every_seat_its_place(
    table_url: str, tmp_path: Path, recording_lobby: Any
) -> None:
    """Two one-hand matches (one with partners) whose players go away after the start: the bots
    play them to their end, and the seats stay the players' in the records."""

    async def play(stack: Stack, rules: common_pb2.RuleSet) -> str:
        table_id = (await staked(stack, rules)).table_id
        await sit_held(stack, table_id, "ada", 0)
        await sit_held(stack, table_id, "cem", 2)
        await start_with_bots(stack, table_id)
        for player in ("ada", "cem"):
            await leave(stack, table_id, player)  # a bot plays on for them
        return table_id

    async def scenario() -> None:
        async with (
            recording_lobby() as lobby,
            running_stack(tmp_path, table_url, lobby_address=lobby.address) as stack,
        ):
            alone = await play(stack, one_hand_rules())
            teams = await play(
                stack, one_hand_rules(common_pb2.RULE_PRESET_BOOMBALA, partners=True)
            )

            async def finished() -> bool:
                states = [(await get_table(stack, t)).state for t in (alone, teams)]
                return states == [common_pb2.TABLE_STATE_FINISHED] * 2

            await wait_for(finished, MATCH_TIMEOUT)
            records = await received(lobby, 4)
            ends: dict[str, Any] = {}
            for table_id in (alone, teams):
                mine = [record for record in records if record.table_id == table_id]
                assert [record.kind for record in mine] == [MATCH_STARTED, MATCH_ENDED]
                await check_keys(
                    stack,
                    mine,
                    [common_pb2.EVENT_KIND_MATCH_STARTED, common_pb2.EVENT_KIND_MATCH_ENDED],
                )
                every_seat = [(0, "ada", "hold-ada"), (1, *BOT), (2, "cem", "hold-cem"), (3, *BOT)]
                assert seats_of(mine[0]) == seats_of(mine[1]) == every_seat
                assert [seat.place for seat in mine[0].seats] == [0, 0, 0, 0]
                table = await get_table(stack, table_id)
                assert table.pot == 0
                ends[table_id] = (mine[1], table.match_result)
            # Alone: 1 + the seats with a lower total; the winners placed first.
            ended, result = ends[alone]
            totals = [line.total for line in result.seats]
            places = [seat.place for seat in ended.seats]
            assert places == [1 + sum(t < own for t in totals) for own in totals]
            assert [place == 1 for place in places] == [line.winner for line in result.seats]
            assert not ended.partners
            # Partners: each seat its team's place.
            ended, result = ends[teams]
            assert ended.partners
            team_totals = list(result.team_totals)
            team_places = [1 + sum(t < own for t in team_totals) for own in team_totals]
            assert [seat.place for seat in ended.seats] == [team_places[s % 2] for s in range(4)]
            assert 1 in team_places

    run(scenario())


# ---------------------------------------------------------------------------------------------
# The lobby out of reach


def test_chips_records_wait_for_a_lobby_out_of_reach_then_arrive_once_in_order(
    table_url: str, tmp_path: Path, recording_lobby: Any
) -> None:
    async def scenario() -> None:
        async with (
            recording_lobby() as lobby,
            running_stack(tmp_path, table_url, lobby_address=lobby.address) as stack,
        ):
            await lobby.down()
            table_id = (await staked(stack)).table_id
            for seat, player in enumerate(("ada", "bea", "cem")):
                await sit_held(stack, table_id, player, seat)
            await leave(stack, table_id, "bea")
            await start_with_bots(stack, table_id)
            await close(stack, table_id)

            async def tried_twice() -> list[Any]:
                rows = await outbox(stack, chips.KIND)
                return rows if len(rows) == 3 and min(r.attempts for r in rows) >= 2 else []

            rows = await wait_for(tried_twice, 30)
            assert all(row.sent_us is None and "UNAVAILABLE" in row.last_error for row in rows)
            assert lobby.chips == []
            await lobby.up()  # back, on the same port
            records = await received(lobby, 3)
            assert [record.kind for record in records] == [
                SEAT_FREED, MATCH_STARTED, MATCH_ABANDONED,
            ]  # fmt: skip
            await check_keys(
                stack,
                records,
                [
                    common_pb2.EVENT_KIND_SEAT_LEFT,
                    common_pb2.EVENT_KIND_MATCH_STARTED,
                    common_pb2.EVENT_KIND_TABLE_CLOSED,
                ],
            )
            assert len(lobby.chips_calls) == 1  # what waited goes in one call
            assert seats_of(records[0]) == [(1, "bea", "hold-bea")]
            every_seat = [(0, "ada", "hold-ada"), (1, *BOT), (2, "cem", "hold-cem"), (3, *BOT)]
            assert seats_of(records[1]) == seats_of(records[2]) == every_seat
            assert all(row.sent_us is not None for row in await outbox(stack, chips.KIND))

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Unstaked tables


def test_an_unstaked_table_owes_the_lobby_no_chips_and_takes_no_stake_hold(
    table_url: str,
    tmp_path: Path,
    refusal: Callable[[grpc.RpcError], Any],
    recording_lobby: Any,
) -> None:
    async def scenario() -> None:
        async with (
            recording_lobby() as lobby,
            running_stack(tmp_path, table_url, lobby_address=lobby.address) as stack,
        ):
            stub = stack.table_stub()
            table_id = (await create_table(stack, one_hand_rules())).table_id
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.Sit(
                    table_pb2.SitRequest(
                        request_id=rid(), table_id=table_id, player_id="ada",
                        stake_hold_key="hold-ada",
                    ),
                    metadata=stack.service_auth(),
                )  # fmt: skip
            found = refusal(caught.value)
            assert (found.code, found.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "TABLE_NOT_STAKED",
            )
            for seat, player in enumerate(("ada", "bea")):
                await stub.Sit(
                    table_pb2.SitRequest(request_id=rid(), table_id=table_id, seat=seat),
                    metadata=stack.player_auth(player),
                )
            await leave(stack, table_id, "bea")
            playing = await start_with_bots(stack, table_id)
            assert (playing.stake, playing.fee_percent, playing.pot) == (0, 0, 0)
            await leave(stack, table_id, "ada")
            closed = await close(stack, table_id)
            assert closed.pot == 0
            bots = await create_table(stack, one_hand_rules(), seats=all_bots())
            await start_with_bots(stack, bots.table_id)

            # A staked table closed after all that: its record is the only one the lobby gets.
            marker = (await staked(stack)).table_id
            await close(stack, marker)
            (record,) = await received(lobby, 1)
            assert (record.table_id, record.kind) == (marker, MATCH_ABANDONED)
            assert [row.key for row in await outbox(stack, chips.KIND)] == [record.key]

    run(scenario())


# ---------------------------------------------------------------------------------------------
# The records, planned (no server)


def test_a_seat_keeps_its_hold_and_an_unstaked_tables_row_is_stored_as_before() -> None:
    plain = TableRecord.from_row(new_table_row("t-plain"))
    assert "hold_key" not in plain.to_row()["seats"]
    held = plain.replace(
        stake=STAKE,
        fee_percent=FEE,
        seats=(SeatRecord(kind="player", player_id="ada", hold_key="hold-ada"),) * 4,
    )
    again = TableRecord.from_row(held.to_row())
    assert (again.stake, again.fee_percent) == (STAKE, FEE)
    assert again.seats[0].hold_key == "hold-ada"
    assert again.pot == 4 * STAKE


def test_only_what_moves_chips_is_owed() -> None:
    """A seat left during the match stays its player's (nothing owed); a seat freed that held
    no stake owes nothing; a staked table closed with no seat held still tells the lobby (it
    refunds whatever the pot holds)."""
    table = TableRecord.from_row(new_table_row("t-owed")).replace(stake=STAKE, fee_percent=FEE)
    left = common_pb2.Event(kind=common_pb2.EVENT_KIND_SEAT_LEFT, seat=0, sequence=5)
    ada = SeatRecord(kind="player", player_id="ada", hold_key="hold-ada")
    playing = table.replace(state=common_pb2.TABLE_STATE_PLAYING, seats=(ada,) * 4)
    assert chips.owed(playing, playing, [left], 1) == []
    unheld = table.replace(seats=(SeatRecord(kind="player", player_id="ada"),) * 4)
    assert chips.owed(unheld, table, [left], 1) == []
    closed = common_pb2.Event(kind=common_pb2.EVENT_KIND_TABLE_CLOSED, sequence=6)
    after = table.replace(state=common_pb2.TABLE_STATE_CLOSED)
    (row,) = chips.owed(table, after, [closed], 1)
    record = lobby_pb2.TableChipsRecord.FromString(row["payload"])
    assert (row["kind"], row["key"], record.key) == ("chips", "chips/t-owed/6", "chips/t-owed/6")
    assert (record.kind, list(record.seats)) == (MATCH_ABANDONED, [])
    moved = common_pb2.Event(kind=common_pb2.EVENT_KIND_DISCARDED, seat=0, sequence=7)
    assert chips.owed(playing, playing, [moved], 1) == []
