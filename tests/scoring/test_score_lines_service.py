"""The score sheet's lines carry the hand's reasons: ScoringService over real gRPC, on SQLite and
PostgreSQL (the fixtures of this folder's conftest.py and the played matches of
``support.scoring``, as test_scoring_service.py uses them).

Each recorded hand's row holds, for every seat, how it opened and its score lines, the engine's
own (recomputed from the final state, whatever the table sent), stored and read back; a request
whose lines differ from the engine's is refused; hands stored before the score-lines migration
read back with no lines.
"""

from __future__ import annotations

from pathlib import Path

import grpc
from okey.v1 import common_pb2, scoring_pb2

from okey101.engine.hand import HandState
from okey101.engine.result import EndReason
from okey101.platform import convert
from okey101.platform.database import Database, run_migrations
from okey101.scoring.models import hand_seats, hands, matches
from okey101.scoring.validation import rules_json

from support.scoring import (
    SERVICE_AUTH,
    MatchPlan,
    boombala_match,
    oyna_match,
    refused,
    run,
    scoring,
    seat_players,
)


def expected_scores(final: HandState) -> list[common_pb2.SeatScore]:
    """Each seat's SeatScore as the engine gives it, lines and opening included."""
    assert final.result is not None
    return list(convert.hand_result_to_proto(final.result, final).scores)


def test_sheet_rows_carry_each_seats_opening_and_score_lines(
    database_url: str, tmp_path: Path
) -> None:
    plans = [
        MatchPlan(oyna_match(), "lines-oyna", seat_players("lo")),
        MatchPlan(boombala_match(True), "lines-boombala", seat_players("lb")),
    ]

    async def scenario() -> None:
        async with scoring(database_url, tmp_path) as service:
            seen: set[int] = set()
            for plan in plans:
                for number, request in enumerate(plan.hands(), start=1):
                    final = plan.played.finals[number - 1]
                    if number % 2 == 0:
                        # A table that sends no lines: the engine's are recorded all the same.
                        for score in request.final_state.result.scores:
                            del score.lines[:]
                    answer = await service.record_hand(request)
                    assert list(answer.row.scores) == expected_scores(final)
                await service.record_match(plan.result())
                sheet = (
                    await service.stub.GetScoreSheet(
                        scoring_pb2.GetScoreSheetRequest(match_id=plan.match_id),
                        metadata=SERVICE_AUTH,
                    )
                ).sheet
                assert sheet.ended
                assert len(sheet.rows) == len(plan.played.finals)
                for row, final in zip(sheet.rows, plan.played.finals, strict=True):
                    assert list(row.scores) == expected_scores(final)
                    assert final.result is not None
                    for score, seat in zip(row.scores, final.seats, strict=True):
                        assert score.opened_as == convert.opened_as_to_proto(seat.opened_as)
                        if final.result.reason is EndReason.VOID:
                            assert list(score.lines) == []
                            continue
                        assert sum(line.points for line in score.lines) == score.points
                        seen.update(line.kind for line in score.lines)
            assert {
                common_pb2.SCORE_LINE_KIND_FINISHED,
                common_pb2.SCORE_LINE_KIND_RACK_SUM,
                common_pb2.SCORE_LINE_KIND_NEVER_OPENED,
                common_pb2.SCORE_LINE_KIND_DOUBLED,
            } <= seen

    run(scenario())


def test_lines_that_differ_from_the_engines_are_refused(database_url: str, tmp_path: Path) -> None:
    plan = MatchPlan(oyna_match(), "lines-bad", seat_players("lx"))
    honest = plan.hand(1)

    async def scenario() -> None:
        async with scoring(database_url, tmp_path) as service:
            # The same total, itemized otherwise: a point moved from the first line to a new one.
            forged = scoring_pb2.RecordHandRequest()
            forged.CopyFrom(honest)
            score = forged.final_state.result.scores[0]
            score.lines[0].points -= 1
            score.lines.add(kind=common_pb2.SCORE_LINE_KIND_PENALTY, points=1)
            assert sum(line.points for line in score.lines) == score.points
            code, reason = await refused(service.stub.RecordHand, forged)
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "SCORE_MISMATCH")
            unknown = scoring_pb2.RecordHandRequest()
            unknown.CopyFrom(honest)
            unknown.final_state.result.scores[1].lines[0].kind = 99  # type: ignore[assignment]
            code, reason = await refused(service.stub.RecordHand, unknown)
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_FIELD")
            assert await service.count(hands) == 0
            assert (await service.record_hand(honest)).row.hand_id == plan.hand_id(1)

    run(scenario())


def test_hands_stored_before_the_migration_read_back_without_lines(
    database_url: str, tmp_path: Path
) -> None:
    """A hand stored at revision 0001 (no score_lines column) keeps its row after the upgrade,
    with no lines; hands recorded after it have theirs."""
    plan = MatchPlan(boombala_match(False), "lines-old", seat_players("lold"))
    final = plan.played.finals[0]
    assert final.result is not None

    async def scenario() -> None:
        await run_migrations("scoring", database_url, revision="0001_initial")
        database = Database(database_url)
        try:
            result = final.result
            assert result is not None
            async with database.write() as session:
                await session.execute(
                    matches.insert().values(
                        match_id=plan.match_id, table_id=plan.table_id, preset="boombala",
                        rules_json=rules_json(final.rules), partners=False, created_at_us=1,
                    )
                )  # fmt: skip
                await session.execute(
                    hands.insert().values(
                        hand_id=plan.hand_id(1), match_id=plan.match_id, hand_number=1,
                        table_id=plan.table_id, rules_version=final.version,
                        reason=result.reason.value, with_okey=False, after_pairs=False,
                        one_go=False, multiplier=1, end_time_us=1, server_seed_sha256="00",
                        server_seed="00", player_seeds="[]", final_state=b"", request_id="r",
                        content_hash="h", response=b"", recorded_at_us=1,
                    )
                )  # fmt: skip
                await session.execute(
                    hand_seats.insert(),
                    [
                        {
                            "hand_id": plan.hand_id(1), "seat": seat, "match_id": plan.match_id,
                            "player_id": f"lold-p{seat}", "display_name": f"P{seat}",
                            "bot": False, "preset": "boombala", "void": False,
                            "points": result.scores[seat], "penalty_points": 0,
                            "penalty_count": 0, "penalties": "", "opened_as": "runs",
                            "finished": False,
                        }
                        for seat in range(4)
                    ],
                )  # fmt: skip
        finally:
            await database.dispose()
        async with scoring(database_url, tmp_path) as service:  # migrates to head
            sheet = (
                await service.stub.GetScoreSheet(
                    scoring_pb2.GetScoreSheetRequest(match_id=plan.match_id),
                    metadata=SERVICE_AUTH,
                )
            ).sheet
            assert [row.hand_id for row in sheet.rows] == [plan.hand_id(1)]
            for seat, score in enumerate(sheet.rows[0].scores):
                assert score.points == result.scores[seat]
                assert score.opened_as == common_pb2.OPENING_KIND_RUNS
                assert list(score.lines) == []

    run(scenario())
