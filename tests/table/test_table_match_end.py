"""The hand's reveal and the match's end on the stream, over real gRPC (the table with the real
rules, bot and scoring services beside it).

- Every HAND_ENDED carries, for every seat, the rack it ended with, how it opened, its points
  itemized into score lines that add up, and the match's totals and target after the hand; the
  score sheet's rows carry the same lines.
- When the match ends, every open WatchTable stream gets the final events and ends with OK, the
  score sheet already recorded and ended; a resume on an ended match sends what is left and
  ends; a closed table's streams end after TABLE_CLOSED.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from pathlib import Path
from typing import Any

from okey.v1 import common_pb2, scoring_pb2, table_pb2

from okey101.engine.tiles import tile_by_id

from support.service_stack import FAST, Stack, running_stack
from support.tables import all_bots, create_table, get_table, one_hand_rules, run

HANDS = 2
STREAM_TIMEOUT = 120.0


async def start_bots(stack: Stack, rules: common_pb2.RuleSet) -> str:
    table = await create_table(stack, rules, seats=all_bots())
    await stack.table_stub().Start(
        table_pb2.StartRequest(request_id=uuid.uuid4().hex, table_id=table.table_id),
        metadata=stack.service_auth(),
    )
    return table.table_id


async def whole_stream(
    stack: Stack, request: table_pb2.WatchTableRequest, *, on_match_end: Any = None
) -> list[Any]:
    """Every message of a WatchTable stream until the server ends it (an error fails the test;
    a stream that does not end by itself times out). ``on_match_end`` is awaited the moment the
    MATCH_ENDED event arrives, before the stream is read on."""

    async def read() -> list[Any]:
        out: list[Any] = []
        call = stack.table_stub().WatchTable(request, metadata=stack.service_auth())
        async for item in call:
            message = item.view if item.HasField("view") else item.event
            out.append(message)
            if (
                item.HasField("event")
                and item.event.kind == common_pb2.EVENT_KIND_MATCH_ENDED
                and on_match_end is not None
            ):
                await on_match_end(item.event)
        assert (await call.code()).name == "OK"
        return out

    return await asyncio.wait_for(read(), STREAM_TIMEOUT)


async def score_sheet(stack: Stack, match_id: str) -> scoring_pb2.ScoreSheet:
    answer = await stack.scoring_stub().GetScoreSheet(
        scoring_pb2.GetScoreSheetRequest(match_id=match_id), metadata=stack.service_auth()
    )
    return answer.sheet


def check_reveal(event: common_pb2.Event, okey_face: int | None = None) -> None:
    """A HAND_ENDED's every seat: its rack, how it opened, lines that add up and say why."""
    result = event.hand_result
    assert [score.seat for score in result.scores] == [0, 1, 2, 3]
    assert [rack.seat for rack in event.revealed_racks] == [0, 1, 2, 3]
    void = result.reason == common_pb2.HAND_END_REASON_VOID
    winner = result.finish.winner_seat if result.HasField("finish") else None
    for score, rack in zip(result.scores, event.revealed_racks, strict=True):
        assert score.opened_as != common_pb2.OPENING_KIND_UNSPECIFIED
        if void:
            assert list(score.lines) == [] and score.points == 0
            continue
        assert sum(line.points for line in score.lines) == score.points
        kinds = [line.kind for line in score.lines]
        assert [
            line.penalty_reason
            for line in score.lines
            if line.kind == common_pb2.SCORE_LINE_KIND_PENALTY
        ] == list(score.penalties)
        assert sum(
            line.points for line in score.lines if line.kind == common_pb2.SCORE_LINE_KIND_PENALTY
        ) == (score.penalty_points)
        if score.seat == winner:
            assert kinds[0] == common_pb2.SCORE_LINE_KIND_FINISHED and not rack.tiles
            doubled = [
                line for line in score.lines if line.kind == common_pb2.SCORE_LINE_KIND_DOUBLED
            ]
            assert 2 ** len(doubled) == result.finish.multiplier
            assert all(line.doubled_for for line in doubled)
        elif score.opened_as == common_pb2.OPENING_KIND_NOT_OPENED:
            assert kinds[0] == common_pb2.SCORE_LINE_KIND_NEVER_OPENED
        else:
            assert kinds[0] == common_pb2.SCORE_LINE_KIND_RACK_SUM
            okeys = sum(
                line.count
                for line in score.lines
                if line.kind == common_pb2.SCORE_LINE_KIND_OKEY_IN_HAND
            )
            assert score.lines[0].count + okeys == len(rack.tiles)
            if okey_face is not None:
                assert okeys == sum(1 for t in rack.tiles if tile_by_id(t.id).face == okey_face)


def test_the_reveal_the_match_end_and_the_sheet_at_that_moment(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            rules = one_hand_rules(common_pb2.RULE_PRESET_BOOMBALA, match_hands=HANDS)
            table_id = await start_bots(stack, rules)
            match_id = (await get_table(stack, table_id)).match_id
            sheets: list[scoring_pb2.ScoreSheet] = []

            async def read_sheet(_event: common_pb2.Event) -> None:
                sheets.append(await score_sheet(stack, match_id))

            watchers = [
                whole_stream(
                    stack,
                    table_pb2.WatchTableRequest(table_id=table_id, seat=seat),
                    on_match_end=read_sheet,
                )
                for seat in (0, 1, 2, 3)
            ]
            spectator = table_pb2.WatchTableRequest(table_id=table_id, start_with_view=True)
            streams = await asyncio.gather(
                *watchers, whole_stream(stack, spectator, on_match_end=read_sheet)
            )
            # Every stream ended, OK, on MATCH_ENDED; each seat's from the first event on.
            for stream in streams:
                assert stream[-1].kind == common_pb2.EVENT_KIND_MATCH_ENDED
            assert [e.sequence for e in streams[0]] == list(range(1, streams[0][-1].sequence + 1))
            events = streams[0]
            ended = [e for e in events if e.kind == common_pb2.EVENT_KIND_HAND_ENDED]
            counted = [e for e in ended if e.hand_result.reason != common_pb2.HAND_END_REASON_VOID]
            assert len(counted) == HANDS
            # The reveal: racks, openings, lines; the match's totals and target after each hand.
            totals = [0, 0, 0, 0]
            for index, event in enumerate(ended):
                check_reveal(event)
                totals = [
                    t + s.points for t, s in zip(totals, event.hand_result.scores, strict=True)
                ]
                progress = event.match_progress
                assert progress.match_id == match_id
                assert list(progress.totals) == totals
                assert progress.match_end == common_pb2.MATCH_END_FIXED_HANDS
                assert (progress.match_hands, progress.target_total) == (HANDS, 0)
                assert progress.ended == (index == len(ended) - 1)
            result = events[-1].match_result
            assert [seat.total for seat in result.seats] == totals
            # The sheet was recorded and ended the moment MATCH_ENDED arrived, on every stream.
            assert len(sheets) == 5
            for sheet in sheets:
                assert sheet.ended and list(sheet.totals) == totals
                # Its rows carry the same reasons as the hands' ends.
                assert [list(row.scores) for row in sheet.rows] == [
                    list(e.hand_result.scores) for e in ended
                ]
            # A resume on the ended match: what is left, then the end.
            last = events[-1].sequence
            tail = await whole_stream(
                stack, table_pb2.WatchTableRequest(table_id=table_id, after_sequence=last - 3)
            )
            assert [e.sequence for e in tail] == [last - 2, last - 1, last]
            assert (
                await whole_stream(
                    stack, table_pb2.WatchTableRequest(table_id=table_id, after_sequence=last)
                )
                == []
            )
            viewed = await whole_stream(
                stack, table_pb2.WatchTableRequest(table_id=table_id, start_with_view=True)
            )
            assert len(viewed) == 1 and isinstance(viewed[0], common_pb2.SeatView)

    run(scenario())


def test_a_target_match_shows_its_target_and_a_closed_tables_streams_end(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            # oyna: the match runs to a total of 1,000; close it after its first hand.
            table_id = await start_bots(
                stack, common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_OYNA)
            )
            request = table_pb2.WatchTableRequest(table_id=table_id)
            closed = asyncio.ensure_future(whole_stream(stack, request))
            first_end: common_pb2.Event | None = None
            call = stack.table_stub().WatchTable(request, metadata=stack.service_auth())
            async for item in call:
                if item.event.kind == common_pb2.EVENT_KIND_HAND_ENDED:
                    first_end = item.event
                    break
            call.cancel()
            assert first_end is not None
            check_reveal(first_end)
            progress = first_end.match_progress
            assert progress.match_end == common_pb2.MATCH_END_TARGET_TOTAL
            assert (progress.target_total, progress.match_hands) == (1000, 0)
            assert list(progress.totals) == [s.points for s in first_end.hand_result.scores]
            assert not progress.ended
            await stack.table_stub().CloseTable(
                table_pb2.CloseTableRequest(request_id=uuid.uuid4().hex, table_id=table_id),
                metadata=stack.service_auth(),
            )
            stream = await closed
            assert stream[-1].kind == common_pb2.EVENT_KIND_TABLE_CLOSED
            # A stream opened on the closed table sends everything, then ends.
            again = await whole_stream(stack, request)
            assert [e.SerializeToString() for e in again] == [e.SerializeToString() for e in stream]

    run(scenario())


def test_with_scoring_out_of_reach_the_match_end_is_held_only_so_long(tmp_path: Path) -> None:
    """Scoring down: MATCH_ENDED waits for it ``match_end_hold_seconds``, then is sent anyway,
    and the stream still ends, OK."""
    hold = 1.5
    options = dataclasses.replace(FAST, match_end_hold_seconds=hold)

    async def scenario() -> None:
        async with running_stack(tmp_path, options=options) as stack:
            await stack.scoring.stop_now()
            rules = one_hand_rules(common_pb2.RULE_PRESET_BOOMBALA, match_hands=1)
            table_id = await start_bots(stack, rules)
            loop = asyncio.get_running_loop()
            arrived: list[tuple[int, float]] = []

            async def read() -> None:
                call = stack.table_stub().WatchTable(
                    table_pb2.WatchTableRequest(table_id=table_id), metadata=stack.service_auth()
                )
                async for item in call:
                    arrived.append((item.event.kind, loop.time()))
                assert (await call.code()).name == "OK"

            await asyncio.wait_for(read(), STREAM_TIMEOUT)
            assert arrived[-1][0] == common_pb2.EVENT_KIND_MATCH_ENDED
            hand_end = max(t for kind, t in arrived if kind == common_pb2.EVENT_KIND_HAND_ENDED)
            assert arrived[-1][1] - hand_end >= hold * 0.9

    run(scenario())
