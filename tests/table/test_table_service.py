"""The table service over real gRPC, with the real rules, bot and scoring services beside it,
on SQLite and PostgreSQL (``OKEY_TEST_DATABASE_URL``).

Players here are clients: they read their seat's view, decide with the engine's bots (what an
app's player would do), and act through the public API with their own tokens.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from okey.v1 import common_pb2, scoring_pb2, table_pb2

from okey101.engine.deal import deal
from okey101.engine.fair_deal import commitment, deck_order
from okey101.engine.hand import apply
from okey101.engine.tiles import tile_by_id
from okey101.platform import convert
from okey101.table.disguise import BOT_NAMES, seat_names

from support.databases import fresh_database
from support.service_stack import FAST, ManualClock, Stack, running_stack
from support.tables import (
    PLAYERS,
    all_bots,
    create_table,
    decide_for,
    error_of,
    finished_table,
    get_table,
    my_turn,
    one_hand_rules,
    play_as,
    read_stream,
    refused,
    run,
    seat_players,
    started_table,
    view_of,
    wait_for,
)

ACTIVE_PHASES = (common_pb2.PHASE_FIRST, common_pb2.PHASE_DRAW, common_pb2.PHASE_PLAY)

# ---------------------------------------------------------------------------------------------
# Databases


@pytest.fixture(params=["sqlite", "postgresql"])
def table_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh table database: a SQLite file, or a PostgreSQL database dropped afterwards."""
    yield from fresh_database(request.param, tmp_path, "table")


# ---------------------------------------------------------------------------------------------
# Whole hands


def test_four_clients_play_a_match_to_its_end_and_scoring_records_it(
    table_url: str, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path, table_url) as stack:
            table_id = await started_table(stack)
            moves = await asyncio.gather(
                *(play_as(stack, table_id, p, s, until_hand=2) for s, p in enumerate(PLAYERS))
            )
            assert sum(moves) > 20
            table = await wait_for(lambda: finished_table(stack, table_id))
            assert table.hand_number == 2
            assert table.match_result.hands_played + sum(1 for _ in ()) <= 2 and list(
                table.match_result.hand_ids
            ) == [
                f"{table_id}-h1",
                f"{table_id}-h2",
            ]
            # The outbox delivers both hands and the match to scoring, exactly once.
            sheet = await wait_for(lambda: _sheet(stack, table.match_id))
            assert [row.hand_id for row in sheet.rows] == list(table.match_result.hand_ids)
            assert list(sheet.totals) == list(table.match_totals)
            assert [s.total for s in table.match_result.seats] == list(table.match_totals)
            # Every stored event of the table, in order, with no gap.
            events = await read_stream(
                stack, table_id, auth=stack.service_auth(), seat=None, after=0,
                count=table.last_sequence,
            )  # fmt: skip
            assert [event.sequence for event in events] == list(range(1, table.last_sequence + 1))
            assert events[-1].kind == common_pb2.EVENT_KIND_MATCH_ENDED
            kinds = [event.kind for event in events]
            assert kinds.count(common_pb2.EVENT_KIND_HAND_DEALT) == 2
            assert kinds.count(common_pb2.EVENT_KIND_HAND_ENDED) == 2
            versions = [event.state_version for event in events]
            assert versions == sorted(versions)
            # Moves on a finished table are refused, changing nothing.
            code, reason, _ = await refused(
                stack.table_stub().Act,
                table_pb2.ActRequest(
                    request_id="late", table_id=table_id, seat=0,
                    actions=[common_pb2.Action(draw=common_pb2.DrawAction())],
                    expected_state_version=table.state_version,
                ),
                stack.player_auth(PLAYERS[0]),
            )  # fmt: skip
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TABLE_FINISHED")
            assert (await get_table(stack, table_id)).last_sequence == table.last_sequence

    run(scenario())


async def _sheet(stack: Stack, match_id: str) -> Any:
    try:
        answer = await stack.scoring_stub().GetScoreSheet(
            scoring_pb2.GetScoreSheetRequest(match_id=match_id), metadata=stack.service_auth()
        )
    except grpc.aio.AioRpcError:
        return None
    return answer.sheet if answer.sheet.ended else None


def test_a_hand_record_recomputes_from_its_revealed_seed_and_replays_to_its_result(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            table = await create_table(
                stack,
                one_hand_rules(common_pb2.RULE_PRESET_BOOMBALA),
                seats=[
                    table_pb2.SeatSetup(seat=s, kind=common_pb2.OCCUPANT_KIND_BOT) for s in range(4)
                ],
                start_when_full=True,
            )
            await wait_for(lambda: finished_table(stack, table.table_id))
            hand_id = f"{table.table_id}-h1"
            record = (
                await stack.table_stub().GetHandRecord(
                    table_pb2.GetHandRecordRequest(hand_id=hand_id), metadata=stack.service_auth()
                )
            ).record
            seed = bytes.fromhex(record.deal.server_seed)
            assert commitment(seed) == record.deal.server_seed_sha256
            deck = deck_order(record.table_id, record.hand_number, seed, [None] * 4)
            assert [tile.id for tile in deck] == list(record.deck_tile_ids)
            # Replaying every recorded move on the engine gives the recorded result.
            state = deal(convert.rules_from_proto(record.rules), record.dealer, deck)
            for move in record.moves:
                state, _ = apply(state, move.seat, convert.action_from_proto(move.action))
            assert state.result is not None
            assert convert.hand_result_to_proto(state.result, state) == record.result
            assert all(move.source == table_pb2.MOVE_SOURCE_BOT for move in record.moves)
            # A player who was not at the hand may not read it.
            code, reason, _ = await refused(
                stack.table_stub().GetHandRecord,
                table_pb2.GetHandRecordRequest(hand_id=hand_id),
                stack.player_auth("stranger"),
            )
            assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_AT_HAND")

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Streams


def test_a_watcher_that_reconnects_gets_exactly_what_it_missed_then_live_events(
    table_url: str, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path, table_url) as stack:
            table_id = await started_table(stack, one_hand_rules())
            auth = stack.player_auth("ada")
            # Four sit-downs, the match's start, the deal, the first turn.
            first = await read_stream(stack, table_id, auth=auth, seat=0, after=0, count=7)
            assert [e.sequence for e in first] == [1, 2, 3, 4, 5, 6, 7]
            assert [e.kind for e in first[4:]] == [
                common_pb2.EVENT_KIND_MATCH_STARTED,
                common_pb2.EVENT_KIND_HAND_DEALT,
                common_pb2.EVENT_KIND_TURN_STARTED,
            ]
            # The rack dealt to seat 0 is in seat 0's copy only.
            dealt = next(e for e in first if e.kind == common_pb2.EVENT_KIND_HAND_DEALT)
            assert len(dealt.private_tiles) in (21, 22)
            # Play on while disconnected; then resume from the last number seen.
            players = [play_as(stack, table_id, p, s, until_hand=1) for s, p in enumerate(PLAYERS)]
            live = asyncio.ensure_future(
                read_stream(stack, table_id, auth=auth, seat=0, after=7, count=40)
            )
            await asyncio.gather(*players)
            resumed = await live
            assert [e.sequence for e in resumed] == list(range(8, 48))
            everything = await read_stream(
                stack, table_id, auth=stack.service_auth(), seat=0, after=0, count=47
            )
            assert [e.SerializeToString() for e in everything] == [
                e.SerializeToString() for e in (*first, *resumed)
            ]

    run(scenario())


def test_a_seat_played_from_its_changes_stream_alone_gets_every_event_once_and_its_views(
    tmp_path: Path,
) -> None:
    """WatchTable with ``changes``: seat 0 plays a whole hand from its stream alone (never
    GetSeatView); the events of its changes are exactly the seat's event stream, and every
    change that reaches the present carries the seat's view as of its last event."""

    async def follow(table_id: str) -> tuple[list[common_pb2.Event], int, int]:
        stub = stack.table_stub()
        auth = stack.player_auth(PLAYERS[0])
        call = stub.WatchTable(
            table_pb2.WatchTableRequest(
                table_id=table_id, seat=0, start_with_view=True, changes=True
            ),
            metadata=auth,
        )
        events: list[common_pb2.Event] = []
        views = moves = 0
        first = await call.read()
        assert first.HasField("view")
        view = first.view
        while (item := await call.read()) is not grpc.aio.EOF:
            assert item.HasField("change") and not item.HasField("event")
            change = item.change
            assert change.events
            events.extend(change.events)
            if change.HasField("view"):
                views += 1
                assert change.view.as_of_sequence == change.events[-1].sequence
                assert change.view.seat == 0 and len(change.view.rack) in range(0, 23)
                if change.view.as_of_sequence > view.as_of_sequence:  # else: our own answer's
                    view = change.view
            if any(e.kind == common_pb2.EVENT_KIND_HAND_ENDED for e in change.events):
                call.cancel()
                break
            while view.phase in ACTIVE_PHASES and view.turn == 0:
                answer = await stub.Act(
                    table_pb2.ActRequest(
                        request_id=uuid.uuid4().hex,
                        table_id=table_id,
                        seat=0,
                        actions=decide_for(view),
                        expected_state_version=view.state_version,
                    ),
                    metadata=auth,
                )
                moves += 1
                view = answer.view
        return events, views, moves

    async def scenario() -> None:
        nonlocal stack
        async with running_stack(tmp_path) as stack:
            table_id = await started_table(stack, one_hand_rules())
            others = [
                play_as(stack, table_id, p, s, until_hand=1)
                for s, p in enumerate(PLAYERS)
                if s != 0
            ]
            (events, views, moves), *_ = await asyncio.gather(follow(table_id), *others)
            # A hand can end after seat 0's second turn (someone finishes early): a few moves
            # is all a deal promises.
            assert moves >= 2 and views > moves
            assert [e.sequence for e in events] == list(
                range(events[0].sequence, events[-1].sequence + 1)
            )
            plain = await read_stream(
                stack, table_id, auth=stack.player_auth(PLAYERS[0]), seat=0,
                after=events[0].sequence - 1, count=len(events),
            )  # fmt: skip
            assert [e.SerializeToString() for e in plain] == [e.SerializeToString() for e in events]

    stack: Any = None
    run(scenario())


def test_a_seat_played_over_play_gets_its_changes_and_each_acts_outcome_once(
    tmp_path: Path,
) -> None:
    """Play: seat 0 plays a hand over one bidirectional stream. Every act is answered once, in
    order, OK with the change it made in the same message; a stale act answers ABORTED with
    its reason and sentence and changes nothing; an act for another seat ends the stream
    INVALID_ARGUMENT; the events are the seat's event stream exactly."""

    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            table_id = await started_table(stack, one_hand_rules())
            auth = stack.player_auth(PLAYERS[0])
            # An act for another seat ends the stream, INVALID_ARGUMENT, and applies nothing.
            wrong = stack.table_stub().Play(metadata=auth)
            await wrong.write(
                table_pb2.PlayRequest(open=table_pb2.WatchTableRequest(table_id=table_id, seat=0))
            )
            before = (await get_table(stack, table_id)).last_sequence
            await wrong.write(
                table_pb2.PlayRequest(
                    act=table_pb2.ActRequest(
                        request_id=uuid.uuid4().hex, seat=1, expected_state_version=1
                    )
                )
            )
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                while (await wrong.read()) is not grpc.aio.EOF:
                    pass
            code, reason, _sentence = error_of(ended.value)
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_FIELD")
            assert (await get_table(stack, table_id)).last_sequence == before
            call = stack.table_stub().Play(metadata=auth)
            await call.write(
                table_pb2.PlayRequest(
                    open=table_pb2.WatchTableRequest(
                        table_id=table_id, seat=0, start_with_view=True
                    )
                )
            )
            others = asyncio.gather(
                *(play_as(stack, table_id, p, s, until_hand=1) for s, p in enumerate(PLAYERS) if s)
            )
            first = await call.read()
            assert first.HasField("view") and not first.HasField("change")
            view = first.view
            events: list[common_pb2.Event] = []
            sent: list[str] = []
            answered: list[str] = []
            stale_sent = False
            while True:
                item = await call.read()
                assert item is not grpc.aio.EOF
                if item.HasField("acted"):
                    answered.append(item.acted.request_id)
                    if item.acted.request_id == "stale-move":
                        assert item.acted.status.code == grpc.StatusCode.ABORTED.value[0]
                        assert not item.HasField("change")  # nothing changed
                        assert "version" in item.acted.status.message
                    else:
                        assert item.acted.status.code == 0, item.acted.status
                        assert item.HasField("change")  # the change it made, with it
                if item.HasField("change"):
                    events.extend(item.change.events)
                    if item.change.HasField("view"):
                        assert item.change.view.as_of_sequence == item.change.events[-1].sequence
                        view = item.change.view
                if any(e.kind == common_pb2.EVENT_KIND_HAND_ENDED for e in events):
                    break
                if len(sent) > len(answered):
                    continue  # an act in flight: its outcome comes first
                if view.phase in ACTIVE_PHASES and view.turn == 0:
                    request_id = uuid.uuid4().hex
                    act = table_pb2.ActRequest(
                        request_id=request_id,
                        actions=decide_for(view),
                        expected_state_version=view.state_version,
                    )
                    await call.write(table_pb2.PlayRequest(act=act))
                    sent.append(request_id)
                    if not stale_sent:
                        stale = table_pb2.ActRequest(
                            request_id="stale-move",
                            actions=act.actions,
                            expected_state_version=view.state_version,
                        )
                        await call.write(table_pb2.PlayRequest(act=stale))
                        sent.append("stale-move")
                        stale_sent = True
            await others
            assert answered == sent and len(sent) > 5
            plain = await read_stream(
                stack, table_id, auth=auth, seat=0, after=events[0].sequence - 1,
                count=len(events),
            )  # fmt: skip
            assert [e.SerializeToString() for e in plain] == [e.SerializeToString() for e in events]

    run(scenario())


def test_spectators_and_other_seats_never_see_hidden_tiles(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            table = await create_table(
                stack,
                one_hand_rules(),
                seats=[
                    table_pb2.SeatSetup(seat=s, kind=common_pb2.OCCUPANT_KIND_BOT) for s in range(4)
                ],
                start_when_full=True,
            )
            finished = await wait_for(lambda: finished_table(stack, table.table_id))
            count = finished.last_sequence
            spectator = await read_stream(
                stack, table.table_id, auth=stack.player_auth("watcher"), seat=None, after=0,
                count=count,
            )  # fmt: skip
            assert all(not event.private_tiles for event in spectator)
            seat1 = await read_stream(
                stack, table.table_id, auth=stack.service_auth(), seat=1, after=0, count=count
            )
            for event in seat1:
                if event.private_tiles:
                    assert event.seat == 1 or event.kind == common_pb2.EVENT_KIND_HAND_DEALT
            view = (
                await stack.table_stub().GetSeatView(
                    table_pb2.GetSeatViewRequest(table_id=table.table_id),
                    metadata=stack.player_auth("watcher"),
                )
            ).view
            assert not view.rack and not view.HasField("seat")

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Idempotency, staleness, permissions, bad input


def test_retries_answer_once_and_stale_moves_are_aborted(table_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path, table_url) as stack:
            table_id = await started_table(stack, one_hand_rules())
            stub = stack.table_stub()
            table = await get_table(stack, table_id)
            views = [await view_of(stack, table_id, p, s) for s, p in enumerate(PLAYERS)]
            starter = next(view.seat for view in views if my_turn(view))
            player = PLAYERS[starter]
            view = await view_of(stack, table_id, player, starter)
            request = table_pb2.ActRequest(
                request_id="move-1", table_id=table_id, seat=starter,
                actions=decide_for(view), expected_state_version=view.state_version,
            )  # fmt: skip
            # Presence events in between (another player leaves and sits again) take sequence
            # numbers but leave the version: the move decided before them still applies.
            bystander = PLAYERS[(starter + 2) % 4]
            await stub.Leave(
                table_pb2.LeaveRequest(request_id="away", table_id=table_id),
                metadata=stack.player_auth(bystander),
            )
            await stub.Sit(
                table_pb2.SitRequest(request_id="back", table_id=table_id),
                metadata=stack.player_auth(bystander),
            )
            moved_on = await get_table(stack, table_id)
            assert moved_on.last_sequence == table.last_sequence + 2
            assert moved_on.state_version == table.state_version
            first = await stub.Act(request, metadata=stack.player_auth(player))
            again = await stub.Act(request, metadata=stack.player_auth(player))
            assert again == first
            after = await get_table(stack, table_id)
            assert after.state_version == table.state_version + 1
            # The same move against the old version, under a new request id: ABORTED.
            request.request_id = "move-2"
            code, reason, sentence = await refused(stub.Act, request, stack.player_auth(player))
            assert (code, reason) == (grpc.StatusCode.ABORTED, "STALE_VERSION")
            assert str(view.state_version) in sentence
            # The first request id again, for another table: refused, not answered.
            other_table = await started_table(stack, one_hand_rules())
            request.request_id, request.table_id = "move-1", other_table
            code, reason, _ = await refused(stub.Act, request, stack.player_auth(player))
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
            assert (await get_table(stack, table_id)).last_sequence == after.last_sequence
            # The first request id at the same table for another move (a discard, where the
            # first was a whole turn): refused, not answered with the turn's events, whether the
            # answer is found in the pod's memory or only in the database (AIP-155).
            rack = (await view_of(stack, table_id, player, starter)).rack
            discard = table_pb2.ActRequest(
                request_id="move-1", table_id=table_id, seat=starter,
                actions=[common_pb2.Action(discard=common_pb2.DiscardAction(
                    tile_id=rack[0].tile.id))],
                expected_state_version=after.state_version,
            )  # fmt: skip
            live = await stack.servicer.core.tables.get(table_id)
            for memory in ("kept", "forgotten"):
                if memory == "forgotten":
                    live.answers.clear()
                code, reason, sentence = await refused(stub.Act, discard, stack.player_auth(player))
                assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
                assert "move-1" in sentence and "different request" in sentence, memory
                assert (await get_table(stack, table_id)).last_sequence == after.last_sequence
            # The turn itself, sent again, is still answered as it was.
            request.table_id = table_id
            assert await stub.Act(request, metadata=stack.player_auth(player)) == first

    run(scenario())


def test_seats_are_their_players_own_and_turns_are_kept(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            table_id = await started_table(stack, one_hand_rules())
            stub = stack.table_stub()
            views = [await view_of(stack, table_id, p, s) for s, p in enumerate(PLAYERS)]
            starter = next(v.seat for v in views if my_turn(v))
            other = (starter + 1) % 4
            # oyna leaves the turn time to the table: its default (60 s) runs for the starter.
            assert views[starter].rules.turn_seconds == 0
            left = views[starter].turn_deadline.ToMicroseconds() / 1e6 - stack.servicer.clock()
            assert 50 < left <= 60
            before = await get_table(stack, table_id)
            # Another player's token on the starter's seat.
            request = table_pb2.ActRequest(
                request_id="x1", table_id=table_id, seat=starter,
                actions=decide_for(views[starter]),
                expected_state_version=views[starter].state_version,
            )  # fmt: skip
            code, reason, _ = await refused(stub.Act, request, stack.player_auth(PLAYERS[other]))
            assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT")
            code, reason, _ = await refused(
                stub.GetSeatView,
                table_pb2.GetSeatViewRequest(table_id=table_id, seat=starter),
                stack.player_auth(PLAYERS[other]),
            )
            assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT")
            # Out of turn: the engine's reason, in Turkish when asked.
            request = table_pb2.ActRequest(
                request_id="x2", table_id=table_id, seat=other, locale="tr",
                actions=[common_pb2.Action(draw=common_pb2.DrawAction())],
                expected_state_version=views[other].state_version,
            )  # fmt: skip
            code, reason, sentence = await refused(
                stub.Act, request, stack.player_auth(PLAYERS[other])
            )
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
            assert "sıra" in sentence.lower()
            # Malformed and unknown.
            code, reason, _ = await refused(
                stub.Act,
                table_pb2.ActRequest(request_id="x3", table_id=table_id, seat=starter,
                                     expected_state_version=1),
                stack.player_auth(PLAYERS[starter]),
            )  # fmt: skip
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "EMPTY_MOVE")
            code, reason, _ = await refused(
                stub.Act,
                table_pb2.ActRequest(
                    request_id="x4", table_id=table_id, seat=starter,
                    expected_state_version=views[starter].state_version,
                    actions=[common_pb2.Action(discard=common_pb2.DiscardAction(tile_id=999))],
                ),
                stack.player_auth(PLAYERS[starter]),
            )  # fmt: skip
            assert code == grpc.StatusCode.INVALID_ARGUMENT, reason
            code, reason, _ = await refused(
                stub.GetSeatView,
                table_pb2.GetSeatViewRequest(table_id=table_id, seat=7),
                stack.service_auth(),
            )
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_SEAT")
            # The same status as a seat out of range anywhere (the lobby's HostTable, JoinTable).
            code, reason, _ = await refused(
                stub.Act,
                table_pb2.ActRequest(
                    request_id="bad-seat", table_id=table_id, seat=9, expected_state_version=1,
                    actions=[common_pb2.Action(draw=common_pb2.DrawAction())],
                ),
                stack.service_auth(),
            )  # fmt: skip
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_SEAT")
            code, reason, _ = await refused(
                stub.GetTable, table_pb2.GetTableRequest(table_id="t-nope"), stack.service_auth()
            )
            assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
            code, reason, _ = await refused(
                stub.Act,
                table_pb2.ActRequest(request_id="bad id!", table_id=table_id, seat=0),
                stack.player_auth(PLAYERS[0]),
            )
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST_ID")
            code, _, _ = await refused(
                stub.CreateTable,
                table_pb2.CreateTableRequest(request_id="c", rules=one_hand_rules()),
                stack.player_auth("ada"),
            )
            assert code == grpc.StatusCode.PERMISSION_DENIED  # a player's token, internal call
            code, reason, _ = await refused(
                stub.Sit,
                table_pb2.SitRequest(request_id="s", table_id=table_id, seat=1),
                stack.player_auth("late"),
            )
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_STARTED")
            after = await get_table(stack, table_id)
            assert (after.state_version, after.last_sequence) == (
                before.state_version,
                before.last_sequence,
            )

    run(scenario())


def test_a_private_table_needs_its_invite_code(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            table = await create_table(
                stack, one_hand_rules(), visibility=common_pb2.TABLE_VISIBILITY_PRIVATE,
                host_player_id="host",
            )  # fmt: skip
            stub = stack.table_stub()
            assert len(table.invite_code) == 8
            code, reason, _ = await refused(
                stub.Sit,
                table_pb2.SitRequest(request_id="s1", table_id=table.table_id, invite_code="NOPE"),
                stack.player_auth("guest"),
            )
            assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "BAD_INVITE_CODE")
            code, reason, _ = await refused(
                stub.GetTable, table_pb2.GetTableRequest(table_id=table.table_id),
                stack.player_auth("guest"),
            )  # fmt: skip
            assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "PRIVATE_TABLE")
            sat = await stub.Sit(
                table_pb2.SitRequest(
                    request_id="s2", table_id=table.table_id, invite_code=table.invite_code
                ),
                metadata=stack.player_auth("guest"),
            )
            assert sat.seat == 0 and sat.table.seats[0].player_id == "guest"
            assert sat.table.invite_code == table.invite_code
            # The host starts it with bots; a player who is not the host may not.
            code, reason, _ = await refused(
                stub.Start, table_pb2.StartRequest(request_id="st", table_id=table.table_id,
                                                   fill_with_bots=True),
                stack.player_auth("guest"),
            )  # fmt: skip
            assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_THE_HOST")
            started = await stub.Start(
                table_pb2.StartRequest(
                    request_id="st", table_id=table.table_id, fill_with_bots=True
                ),
                metadata=stack.player_auth("host"),
            )
            assert started.table.state == common_pb2.TABLE_STATE_PLAYING
            assert [s.kind for s in started.table.seats[1:]] == [common_pb2.OCCUPANT_KIND_BOT] * 3
            # A bot's name is a person's name, fixed per table and seat; its kind (above) says
            # it is a bot.
            names = [s.display_name for s in started.table.seats[1:]]
            host = started.table.seats[0].display_name
            assert names == seat_names(table.table_id, [host, "", "", ""], [1, 2, 3])[1:]
            assert len(set(names)) == 3 and set(names) <= set(BOT_NAMES)

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Timers, leaving, away


def test_a_turn_that_runs_out_is_played_by_a_bot_and_repeated_misses_make_the_seat_away(
    table_url: str, tmp_path: Path
) -> None:
    async def scenario() -> None:
        clock = ManualClock()
        async with running_stack(tmp_path, table_url, clock=clock) as stack:
            # Several hands: the bots play the away seat at once, and the match must still be on
            # when its player sits again (one hand can be over before the next look).
            rules = one_hand_rules(common_pb2.RULE_PRESET_NORTH_SULTAN, match_hands=11)
            table = await create_table(
                stack, rules,
                seats=[table_pb2.SeatSetup(seat=s, kind=common_pb2.OCCUPANT_KIND_BOT)
                       for s in (1, 2, 3)],
            )  # fmt: skip
            assert table.rules.turn_seconds == 45
            await seat_players(stack, table.table_id, ("ada",))
            await stack.table_stub().Start(
                table_pb2.StartRequest(request_id="go", table_id=table.table_id),
                metadata=stack.service_auth(),
            )
            for missed in (1, 2):
                view = await wait_for(lambda: _turn_of(stack, table.table_id, "ada", 0))
                assert view.turn_deadline.ToMicroseconds() == round((clock.now + 45) * 1e6)
                clock.advance(44)
                await asyncio.sleep(0.3)
                assert my_turn(await view_of(stack, table.table_id, "ada", 0))  # not yet
                clock.advance(2)
                # The turn moved on (the bots may already have brought it back to seat 0).
                turn = view.turn_number
                after = await wait_for(
                    lambda turn=turn: _moved_on(stack, table.table_id, "ada", 0, turn)
                )
                seat = after.seats[0].occupant
                assert seat.away is (missed == 2)
            events = await read_stream(
                stack, table.table_id, auth=stack.service_auth(), seat=None, after=0,
                count=(await get_table(stack, table.table_id)).last_sequence,
            )  # fmt: skip
            kinds = [e.kind for e in events if e.seat == 0]
            assert kinds.count(common_pb2.EVENT_KIND_TURN_TIMED_OUT) == 2
            assert kinds.count(common_pb2.EVENT_KIND_SEAT_AWAY) == 1
            # Away: the bot keeps playing the seat at once, with no deadline to wait for.
            await wait_for(lambda: _bot_played(stack, table.table_id, 0, 3))
            # Sitting again brings the player back.
            back = await stack.table_stub().Sit(
                table_pb2.SitRequest(request_id="back", table_id=table.table_id),
                metadata=stack.player_auth("ada"),
            )
            if back.table.state == common_pb2.TABLE_STATE_PLAYING:
                assert not back.table.seats[0].away

    run(scenario())


def test_a_table_created_to_act_after_one_missed_turn_gives_the_seat_to_a_bot_after_one(
    table_url: str, tmp_path: Path
) -> None:
    """The lobby's tournament tables say ``missed_turns_before_away`` 1 (#37): the first turn
    that runs out makes the seat away, where other tables (above) wait for two. More than 10
    is refused, and no table is made."""

    async def scenario() -> None:
        clock = ManualClock()
        async with running_stack(tmp_path, table_url, clock=clock) as stack:
            rules = one_hand_rules(common_pb2.RULE_PRESET_NORTH_SULTAN, match_hands=11)
            table = await create_table(
                stack, rules, missed_turns_before_away=1,
                seats=[table_pb2.SeatSetup(seat=s, kind=common_pb2.OCCUPANT_KIND_BOT)
                       for s in (1, 2, 3)],
            )  # fmt: skip
            await seat_players(stack, table.table_id, ("ada",))
            await stack.table_stub().Start(
                table_pb2.StartRequest(request_id="go", table_id=table.table_id),
                metadata=stack.service_auth(),
            )
            view = await wait_for(lambda: _turn_of(stack, table.table_id, "ada", 0))
            clock.advance(46)
            turn = view.turn_number
            after = await wait_for(
                lambda turn=turn: _moved_on(stack, table.table_id, "ada", 0, turn)
            )
            assert after.seats[0].occupant.away
            events = await read_stream(
                stack, table.table_id, auth=stack.service_auth(), seat=None, after=0,
                count=(await get_table(stack, table.table_id)).last_sequence,
            )  # fmt: skip
            kinds = [e.kind for e in events if e.seat == 0]
            assert kinds.count(common_pb2.EVENT_KIND_TURN_TIMED_OUT) == 1
            assert kinds.count(common_pb2.EVENT_KIND_SEAT_AWAY) == 1
            before = await stack.table_stub().ListTables(
                table_pb2.ListTablesRequest(page_size=50), metadata=stack.service_auth()
            )
            code, reason, _ = await refused(
                stack.table_stub().CreateTable,
                table_pb2.CreateTableRequest(
                    request_id="eleven", rules=rules, missed_turns_before_away=11
                ),
                stack.service_auth(),
            )
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_FIELD")
            listed = await stack.table_stub().ListTables(
                table_pb2.ListTablesRequest(page_size=50), metadata=stack.service_auth()
            )
            assert len(listed.tables) == len(before.tables)

    run(scenario())


def test_a_player_away_returns_by_opening_their_seat_stream_with_return_to_seat(
    tmp_path: Path,
) -> None:
    """An app back from the background opens its seat's WatchTable with return_to_seat: the
    away seat is the player's again (one SEAT_BACK), before the view it is sent; the same
    stream without the flag, or once the seat is back, changes nothing."""

    async def scenario() -> None:
        clock = ManualClock()
        async with running_stack(tmp_path, clock=clock) as stack:
            rules = one_hand_rules(common_pb2.RULE_PRESET_NORTH_SULTAN, match_hands=11)
            table = await create_table(
                stack, rules,
                seats=[table_pb2.SeatSetup(seat=s, kind=common_pb2.OCCUPANT_KIND_BOT)
                       for s in (1, 2, 3)],
            )  # fmt: skip
            table_id = table.table_id
            await seat_players(stack, table_id, ("ada",))
            await stack.table_stub().Start(
                table_pb2.StartRequest(request_id="go", table_id=table_id),
                metadata=stack.service_auth(),
            )
            for _missed in (1, 2):
                view = await wait_for(lambda: _turn_of(stack, table_id, "ada", 0))
                clock.advance(46)
                turn = view.turn_number
                await wait_for(lambda turn=turn: _moved_on(stack, table_id, "ada", 0, turn))

            async def first_view(return_to_seat: bool) -> Any:
                call = stack.table_stub().WatchTable(
                    table_pb2.WatchTableRequest(
                        table_id=table_id, seat=0, start_with_view=True,
                        return_to_seat=return_to_seat,
                    ),
                    metadata=stack.player_auth("ada"),
                )  # fmt: skip
                try:
                    async for item in call:
                        return item.view
                finally:
                    call.cancel()

            assert (await first_view(False)).seats[0].occupant.away
            assert (await get_table(stack, table_id)).seats[0].away
            back = await first_view(True)
            assert not back.seats[0].occupant.away
            assert not (await get_table(stack, table_id)).seats[0].away
            await first_view(True)  # not away now: nothing to return to
            table = await get_table(stack, table_id)
            events = await read_stream(
                stack, table_id, auth=stack.service_auth(), seat=None, after=0,
                count=table.last_sequence,
            )  # fmt: skip
            kinds = [e.kind for e in events if e.seat == 0]
            assert kinds.count(common_pb2.EVENT_KIND_SEAT_AWAY) == 1
            assert kinds.count(common_pb2.EVENT_KIND_SEAT_BACK) == 1

    run(scenario())


async def _turn_of(stack: Stack, table_id: str, player: str, seat: int) -> Any:
    view = await view_of(stack, table_id, player, seat)
    return view if my_turn(view) else None


async def _moved_on(stack: Stack, table_id: str, player: str, seat: int, turn: int) -> Any:
    view = await view_of(stack, table_id, player, seat)
    return view if view.turn_number != turn else None


async def _bot_played(stack: Stack, table_id: str, seat: int, turns: int) -> bool:
    table = await get_table(stack, table_id)
    if table.state == common_pb2.TABLE_STATE_FINISHED:
        return True
    view = await view_of(stack, table_id, "ada", seat)
    return view.seats[seat].turns_played >= turns


def test_a_player_who_leaves_is_played_by_a_bot_until_they_sit_again(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            table_id = await started_table(stack, one_hand_rules(match_hands=3))
            stub = stack.table_stub()
            left = await stub.Leave(
                table_pb2.LeaveRequest(request_id="bye", table_id=table_id),
                metadata=stack.player_auth("bea"),
            )
            occupant = left.table.seats[1]
            assert occupant.kind == common_pb2.OCCUPANT_KIND_BOT and occupant.player_id == "bea"
            # The others play; bea's seat is played for her.
            others = [(s, p) for s, p in enumerate(PLAYERS) if p != "bea"]
            await asyncio.gather(*(play_as(stack, table_id, p, s, until_hand=1) for s, p in others))
            record = (
                await stub.GetHandRecord(
                    table_pb2.GetHandRecordRequest(hand_id=f"{table_id}-h1"),
                    metadata=stack.player_auth("bea"),
                )
            ).record
            sources = {m.source for m in record.moves if m.seat == 1}
            assert sources == {table_pb2.MOVE_SOURCE_BOT}
            back = await stub.Sit(
                table_pb2.SitRequest(request_id="back", table_id=table_id),
                metadata=stack.player_auth("bea"),
            )
            assert back.seat == 1
            assert back.table.seats[1].kind == common_pb2.OCCUPANT_KIND_PLAYER
            assert not back.table.seats[1].away

    run(scenario())


def test_time_with_no_table_pod_alive_is_not_charged(tmp_path: Path) -> None:
    async def scenario() -> None:
        clock = ManualClock()
        url = f"sqlite+aiosqlite:///{tmp_path / 'table.db'}"
        async with running_stack(tmp_path, url, clock=clock) as stack:
            rules = one_hand_rules(common_pb2.RULE_PRESET_NORTH_SULTAN)
            table = await create_table(
                stack, rules,
                seats=[table_pb2.SeatSetup(seat=s, kind=common_pb2.OCCUPANT_KIND_BOT)
                       for s in (1, 2, 3)],
            )  # fmt: skip
            await seat_players(stack, table.table_id, ("ada",))
            await stack.table_stub().Start(
                table_pb2.StartRequest(request_id="go", table_id=table.table_id),
                metadata=stack.service_auth(),
            )
            view = await wait_for(lambda: _turn_of(stack, table.table_id, "ada", 0))
            deadline = view.turn_deadline.ToMicroseconds()
        clock.advance(600)  # ten minutes with no table service at all
        async with running_stack(tmp_path, url, clock=clock) as stack:
            await asyncio.sleep(0.5)
            view = await view_of(stack, table.table_id, "ada", 0)
            assert my_turn(view)
            moved = view.turn_deadline.ToMicroseconds() - deadline
            assert 599e6 <= moved <= 601e6

    run(scenario())


def test_table_options_come_from_the_environment() -> None:
    from okey101.table.service import TableOptions

    options = TableOptions.from_environ(
        {"OKEY_TABLE_BOT_MOVE_SECONDS": "0.25", "OKEY_TABLE_MISSED_TURNS_BEFORE_AWAY": "3"}
    )
    assert options.bot_move_seconds == 0.25 and options.missed_turns_before_away == 3
    with pytest.raises(ValueError, match="OKEY_TABLE_POLL_SECONDS"):
        TableOptions.from_environ({"OKEY_TABLE_POLL_SECONDS": "soon"})
    assert FAST.next_hand_seconds == 0


def test_the_rack_in_a_deal_event_is_the_seats_own(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            table_id = await started_table(stack, one_hand_rules())
            for seat, player in enumerate(PLAYERS):
                events = await read_stream(
                    stack, table_id, auth=stack.player_auth(player), seat=seat, after=0, count=6
                )
                dealt = events[5]
                assert dealt.kind == common_pb2.EVENT_KIND_HAND_DEALT
                view = await view_of(stack, table_id, player, seat)
                rack = sorted(t.id for t in dealt.private_tiles)
                if not my_turn(view) or view.phase == common_pb2.PHASE_FIRST:
                    assert rack == sorted(t.tile.id for t in view.rack)
                assert all(tile_by_id(t) for t in rack)

    run(scenario())


# ---------------------------------------------------------------------------------------------
# The catalogue


def test_every_table_sentence_names_the_same_parameters_in_both_languages() -> None:
    import string

    from okey101.table.errors import CATALOGUE

    for code, sentences in CATALOGUE.items():
        names = {
            language: {field for _, field, _, _ in string.Formatter().parse(text) if field}
            for language, text in sentences.items()
        }
        assert set(names) == {"en", "tr"}, code
        assert names["en"] == names["tr"], code


def test_every_code_the_table_raises_has_a_sentence() -> None:
    import re

    from okey101.table import errors

    source = "\n".join(
        path.read_text(encoding="utf-8") for path in (Path(errors.__file__).parent).glob("*.py")
    )
    codes = set(
        re.findall(
            r"(?:Invalid|Conflict|Missing|Denied|Stale|NotReady|InvalidInput|RuleViolation)"
            r'\(\s*"([A-Z_]+)"',
            source,
        )
    )
    assert len(codes) > 20
    for code in codes:
        for language in ("en", "tr"):
            assert errors.render(code, language, {}) != code, (code, language)


def test_players_sitting_at_once_each_get_a_seat_of_their_own(
    table_url: str, tmp_path: Path
) -> None:
    """Presence changes do not move state_version, so they are guarded by the sequence number:
    four players sitting at the same moment all keep the seat they were given."""

    async def scenario() -> None:
        async with running_stack(tmp_path, table_url) as stack:
            table = await create_table(stack, one_hand_rules())
            stub = stack.table_stub()
            answers = await asyncio.gather(
                *(
                    stub.Sit(
                        table_pb2.SitRequest(request_id=f"sit-{p}", table_id=table.table_id),
                        metadata=stack.player_auth(p),
                    )
                    for p in PLAYERS
                )
            )
            assert sorted(answer.seat for answer in answers) == [0, 1, 2, 3]
            seated = await get_table(stack, table.table_id)
            assert {s.player_id for s in seated.seats} == set(PLAYERS)
            assert seated.last_sequence == 4

    run(scenario())


# ---------------------------------------------------------------------------------------------
# A full table's start is owed from the commit that filled it


async def _timer_kinds(stack: Stack) -> dict[str, str]:
    from sqlalchemy import select

    from okey101.table.models import tables

    async with stack.servicer.store.database.read() as session:
        rows = (
            await session.execute(
                select(tables.c.table_id, tables.c.timer_kind).where(
                    tables.c.timer_kind.is_not(None)
                )
            )
        ).all()
    return {row.table_id: row.timer_kind for row in rows}


def test_a_table_that_fills_while_the_rules_service_is_down_starts_at_once(
    table_url: str, tmp_path: Path
) -> None:
    """The table deals with the engine in its own process: a start_when_full table filled
    while the rules service is down (by CreateTable with every seat a bot, or by the Sit of
    its last player) starts at once, dealt once."""

    async def scenario() -> None:
        async with running_stack(tmp_path, table_url) as stack:
            await stack.rules.stop(grace=0)
            bots = await create_table(
                stack, one_hand_rules(), seats=all_bots(), start_when_full=True
            )
            bot = common_pb2.OCCUPANT_KIND_BOT
            seats = [
                table_pb2.SeatSetup(seat=0, kind=common_pb2.OCCUPANT_KIND_PLAYER, player_id="ada"),
                *(table_pb2.SeatSetup(seat=s, kind=bot) for s in (1, 2, 3)),
            ]
            hosted = await create_table(stack, one_hand_rules(), seats=seats, start_when_full=True)
            sit = table_pb2.SitRequest(request_id="sit-ada", table_id=hosted.table_id, seat=0)
            stub = stack.table_stub()
            first = await stub.Sit(sit, metadata=stack.player_auth("ada"))
            assert await stub.Sit(sit, metadata=stack.player_auth("ada")) == first
            for table_id in (bots.table_id, hosted.table_id):
                assert (await get_table(stack, table_id)).state != common_pb2.TABLE_STATE_WAITING
                events = await stack.servicer.store.events_after(table_id, 0, limit=10_000)
                kinds_seen = [event.kind for event in events]
                assert kinds_seen.count(common_pb2.EVENT_KIND_MATCH_STARTED) == 1
                assert kinds_seen.count(common_pb2.EVENT_KIND_HAND_DEALT) == 1

    run(scenario())


def test_a_start_left_undone_after_the_table_filled_is_done_by_its_timer(
    table_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write that fills a start_when_full table holds a "start" timer: when the start
    that follows it does not happen (its pod died just then; here it is skipped), the timer
    starts the table, dealt once, and a retried Sit answers from its stored answer."""
    from okey101.table.service import TableServicer

    async def skipped(self: Any, table_id: str) -> None:
        return None

    monkeypatch.setattr(TableServicer, "_start_when_full", skipped)

    async def scenario() -> None:
        async with running_stack(tmp_path, table_url) as stack:
            bots = await create_table(
                stack, one_hand_rules(), seats=all_bots(), start_when_full=True
            )
            bot = common_pb2.OCCUPANT_KIND_BOT
            seats = [
                table_pb2.SeatSetup(seat=0, kind=common_pb2.OCCUPANT_KIND_PLAYER, player_id="ada"),
                *(table_pb2.SeatSetup(seat=s, kind=bot) for s in (1, 2, 3)),
            ]
            hosted = await create_table(stack, one_hand_rules(), seats=seats, start_when_full=True)
            sit = table_pb2.SitRequest(request_id="sit-ada", table_id=hosted.table_id, seat=0)
            stub = stack.table_stub()
            first = await stub.Sit(sit, metadata=stack.player_auth("ada"))
            assert first.table.state == common_pb2.TABLE_STATE_WAITING
            assert await stub.Sit(sit, metadata=stack.player_auth("ada")) == first
            ids = (bots.table_id, hosted.table_id)
            kinds = await _timer_kinds(stack)
            assert [kinds.get(table_id) for table_id in ids] == ["start", "start"]

            async def started() -> bool:
                states = [(await get_table(stack, t)).state for t in ids]
                return common_pb2.TABLE_STATE_WAITING not in states  # (the bots may be done)

            await wait_for(started, timeout=60)
            for table_id in ids:
                events = await stack.servicer.store.events_after(table_id, 0, limit=10_000)
                kinds_seen = [event.kind for event in events]
                assert kinds_seen.count(common_pb2.EVENT_KIND_MATCH_STARTED) == 1
                assert kinds_seen.count(common_pb2.EVENT_KIND_HAND_DEALT) == 1
            assert all(kind != "start" for kind in (await _timer_kinds(stack)).values())

    run(scenario())
