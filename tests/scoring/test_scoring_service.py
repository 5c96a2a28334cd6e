"""ScoringService over real gRPC, on SQLite (a temporary file) and on PostgreSQL (a database of
its own per test, dropped after; skipped without OKEY_TEST_DATABASE_URL).

The service runs in-process through the platform (``ServerHandle`` on 127.0.0.1 port 0, its auth,
error mapping and interceptors included) and is called through the generated stubs with tokens
signed by the platform's auth. Every hand reported is a real engine playout (seeded
``RandomPlayer``s on a shuffled deal), and every match is added up by the engine's ``match``, so
the points are genuine; the tests then check what the service stores and answers.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from okey.v1 import common_pb2, scoring_pb2

from okey101.scoring.errors import CATALOGUE
from okey101.scoring.models import hand_seats, hands, matches

from support.scoring import (
    SERVICE_AUTH,
    MatchPlan,
    Played,
    boombala_match,
    deal_record,
    one_hand_matches,
    oyna_match,
    player_auth,
    refused,
    run,
    scoring,
    seat_players,
    tied_match,
)


def cumulative(played: Played) -> list[list[int]]:
    totals = [0, 0, 0, 0]
    out = []
    for final in played.finals:
        assert final.result is not None
        totals = [a + b for a, b in zip(totals, final.result.scores, strict=True)]
        out.append(totals)
    return out


# ---------------------------------------------------------------------------------------------
# Tests


def test_oyna_match_to_1000_score_sheet_ratings_and_stats(
    database_url: str, tmp_path: Path
) -> None:
    played = oyna_match()
    plan = MatchPlan(played, "oyna-1", seat_players("oy"), tournament_id="cup", tournament_round=1)
    expected = cumulative(played)

    async def scenario() -> None:
        async with scoring(database_url, tmp_path) as service:
            for number, request in enumerate(plan.hands(), start=1):
                answer = await service.record_hand(request)
                assert answer.row.hand_number == number
                assert list(answer.row.running_totals) == expected[number - 1]
                assert not answer.row.running_team_totals
            # A re-delivery with another request id changes nothing and answers the same.
            again = await service.record_hand(plan.hand(2, request_id="retry-2"))
            assert again == (await service.record_hand(plan.hand(2)))
            assert await service.count(hands, match_id="oyna-1") == len(played.finals)

            recorded = await service.record_match(plan.result())
            assert recorded.result.match_id == "oyna-1"
            assert recorded == await service.record_match(plan.result())

            # The score sheet, hand by hand, with running totals and the doubled hand marked.
            sheet = (
                await service.stub.GetScoreSheet(
                    scoring_pb2.GetScoreSheetRequest(match_id="oyna-1"),
                    metadata=player_auth("oy-p0"),
                    timeout=30,
                )
            ).sheet
            assert sheet.ended and list(sheet.totals) == list(played.match.totals)
            assert list(sheet.winner_seats) == list(played.match.winners)
            assert sheet.rules.preset == common_pb2.RULE_PRESET_OYNA
            assert [row.hand_number for row in sheet.rows] == list(range(1, len(expected) + 1))
            assert [list(row.running_totals) for row in sheet.rows] == expected
            first = sheet.rows[0]
            assert first.marks.after_pairs and first.marks.multiplier == 2
            assert first.HasField("winner_seat")
            for row, final in zip(sheet.rows, played.finals, strict=True):
                assert final.result is not None
                assert [score.points for score in row.scores] == list(final.result.scores)
                finish = final.result.finish
                assert row.marks.multiplier == (finish.multiplier if finish else 1)
            assert [seat.player_id for seat in sheet.seats] == [f"oy-p{s}" for s in range(4)]

            # Paged two rows at a time, the same rows.
            paged, token = [], ""
            while True:
                page = await service.stub.GetScoreSheet(
                    scoring_pb2.GetScoreSheetRequest(
                        match_id="oyna-1", page_size=2, page_token=token
                    ),
                    metadata=SERVICE_AUTH,
                    timeout=30,
                )
                paged.extend(page.sheet.rows)
                token = page.next_page_token
                if not token:
                    break
            assert paged == list(sheet.rows)

            # Ratings: the winners up, the last place down.
            changes = {change.player_id: change for change in recorded.rating_changes}
            assert set(changes) == {f"oy-p{seat}" for seat in range(4)}
            totals = played.match.totals
            worst = max(range(4), key=lambda seat: totals[seat])
            for seat in range(4):
                change = changes[f"oy-p{seat}"]
                assert change.mode == scoring_pb2.RATING_MODE_FREE_FOR_ALL
                assert change.after.matches == 1 and change.before.matches == 0
                if seat in played.match.winners:
                    assert change.after.mu > change.before.mu
                    assert change.after.ordinal > change.before.ordinal
                if seat == worst and totals[seat] > min(totals):
                    assert change.after.mu < change.before.mu

            # Standings of the tournament (and its round), stats and history.
            standings = await service.stub.GetStandings(
                scoring_pb2.GetStandingsRequest(tournament_id="cup", round=1),
                metadata=SERVICE_AUTH,
                timeout=30,
            )
            lines = list(standings.standings)
            assert len(lines) == 4 and lines[0].rank == 1 and lines[0].wins == 1
            assert [line.total_points for line in lines] == sorted(totals)
            assert sum(line.hands_finished for line in lines) == sum(
                1 for f in played.finals if f.result is not None and f.result.finish is not None
            )
            winner = f"oy-p{played.match.winners[0]}"
            stats = (
                await service.stub.GetPlayerStats(
                    scoring_pb2.GetPlayerStatsRequest(), metadata=player_auth(winner), timeout=30
                )
            ).stats
            seat = played.match.winners[0]
            assert stats.player_id == winner
            assert stats.hands == len(played.finals) and stats.matches == 1 and stats.wins == 1
            assert stats.points_per_hand == pytest.approx(totals[seat] / len(played.finals))
            opened = sum(1 for f in played.finals if f.seats[seat].opened_as is not None)
            assert stats.opening_rate == pytest.approx(opened / len(played.finals))
            assert stats.free_for_all_rating.matches == 1
            assert not stats.HasField("partners_rating")
            history = await service.stub.GetPlayerHistory(
                scoring_pb2.GetPlayerHistoryRequest(player_id=winner),
                metadata=SERVICE_AUTH,
                timeout=30,
            )
            (line,) = history.matches
            assert line.match_id == "oyna-1" and line.winner and line.place == 1
            assert line.total == totals[seat] and line.preset == common_pb2.RULE_PRESET_OYNA
            assert line.rating_change.after.mu > line.rating_change.before.mu

            # After the match: no more hands; a different result for it is refused.
            # A late re-delivery of a recorded hand is still answered as the first was.
            last = len(played.finals)
            late = await service.record_hand(plan.hand(last, request_id="after-the-end"))
            assert list(late.row.running_totals) == expected[-1]
            extra = plan.hand(1)
            extra.hand_id = extra.deal.hand_id = "oyna-1-late"
            extra.hand_number = 99
            extra.deal.CopyFrom(deal_record("oyna-1-late"))
            # Hand 1's request id is bound to hand 1 (AIP-155).
            code, reason = await refused(service.stub.RecordHand, extra)
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
            extra.request_id = "a-late-hand"
            code, reason = await refused(service.stub.RecordHand, extra)
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "MATCH_ALREADY_ENDED")
            changed = plan.result()
            changed.result.seats[0].display_name = "someone else"
            code, reason = await refused(service.stub.RecordMatch, changed)
            assert (code, reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "MATCH_ALREADY_RECORDED",
            )

    run(scenario())


def test_fixed_hands_and_partners(database_url: str, tmp_path: Path) -> None:
    solo = MatchPlan(boombala_match(False), "bb-solo", seat_players("solo"))
    team = MatchPlan(boombala_match(True), "bb-team", seat_players("team", bots=(3,)))

    async def scenario() -> None:
        async with scoring(database_url, tmp_path) as service:
            answer = await service.record(solo)
            assert solo.played.match.hands_played == 3
            assert len(answer.rating_changes) == 4

            # Partners: seats 0+2 and 1+3 add up; the bot at seat 3 is not rated, its partner
            # is rated alone against the other team.
            for request in team.hands()[:-1]:
                await service.record_hand(request)
            premature = team.result()
            code, reason = await refused(service.stub.RecordMatch, premature)
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "HANDS_MISSING")
            last = await service.record_hand(team.hands()[-1])
            totals = team.played.match.totals
            assert list(last.row.running_team_totals) == [
                totals[0] + totals[2],
                totals[1] + totals[3],
            ]
            wrong = team.result()
            wrong.result.seats[1].total += 1
            code, reason = await refused(service.stub.RecordMatch, wrong)
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "SCORE_MISMATCH")
            recorded = await service.record_match(team.result())
            winners = set(team.played.match.winners)
            assert winners in ({0, 2}, {1, 3}, {0, 1, 2, 3})
            changes = {change.player_id: change for change in recorded.rating_changes}
            assert set(changes) == {"team-p0", "team-p1", "team-p2"}
            for player, change in changes.items():
                assert change.mode == scoring_pb2.RATING_MODE_PARTNERS
                seat = int(player[-1])
                if winners != {0, 1, 2, 3}:
                    went_up = change.after.mu > change.before.mu
                    assert went_up == (seat in winners)
            sheet = (
                await service.stub.GetScoreSheet(
                    scoring_pb2.GetScoreSheetRequest(match_id="bb-team"),
                    metadata=SERVICE_AUTH,
                    timeout=30,
                )
            ).sheet
            assert list(sheet.team_totals) == list(team.played.match.team_totals())
            assert sheet.seats[3].bot and not sheet.seats[3].player_id
            assert set(sheet.winner_seats) == winners
            board = await service.stub.GetLeaderboard(
                scoring_pb2.GetLeaderboardRequest(mode=scoring_pb2.RATING_MODE_PARTNERS),
                metadata=SERVICE_AUTH,
                timeout=30,
            )
            assert {entry.player_id for entry in board.entries} == set(changes)
            boombala = await service.stub.GetLeaderboard(
                scoring_pb2.GetLeaderboardRequest(preset=common_pb2.RULE_PRESET_BOOMBALA),
                metadata=SERVICE_AUTH,
                timeout=30,
            )
            assert {entry.player_id for entry in boombala.entries} == {
                f"solo-p{seat}" for seat in range(4)
            }
            oyna = await service.stub.GetLeaderboard(
                scoring_pb2.GetLeaderboardRequest(preset=common_pb2.RULE_PRESET_OYNA),
                metadata=SERVICE_AUTH,
                timeout=30,
            )
            assert not oyna.entries

    run(scenario())


def test_stats_of_a_player_scoring_never_saw_are_not_found(
    database_url: str, tmp_path: Path
) -> None:
    """An unknown player is NOT_FOUND PLAYER_NOT_FOUND, not a row of zeros; one with a recorded
    hand has stats (zeros for a preset they did not play); a player asking about themselves
    before their first hand gets their zeros."""
    plan = MatchPlan(one_hand_matches()[0], "stats-1", seat_players("stats"))

    async def scenario() -> None:
        async with scoring(database_url, tmp_path) as service:
            stats = service.stub.GetPlayerStats
            unknown = scoring_pb2.GetPlayerStatsRequest(player_id="nobody-here")
            assert await refused(stats, unknown) == (grpc.StatusCode.NOT_FOUND, "PLAYER_NOT_FOUND")
            assert await refused(stats, unknown, player_auth("someone")) == (
                grpc.StatusCode.NOT_FOUND,
                "PLAYER_NOT_FOUND",
            )
            mine = await stats(
                scoring_pb2.GetPlayerStatsRequest(), metadata=player_auth("newcomer"), timeout=30
            )
            assert (mine.stats.player_id, mine.stats.hands, mine.stats.matches) == (
                "newcomer", 0, 0,
            )  # fmt: skip
            await service.record_hand(plan.hand(1))
            known = await stats(
                scoring_pb2.GetPlayerStatsRequest(player_id="stats-p0"),
                metadata=SERVICE_AUTH,
                timeout=30,
            )
            assert known.stats.hands == 1
            other_preset = await stats(
                scoring_pb2.GetPlayerStatsRequest(
                    player_id="stats-p0", preset=common_pb2.RULE_PRESET_OYNA
                ),
                metadata=SERVICE_AUTH,
                timeout=30,
            )
            assert other_preset.stats.hands == 0

    run(scenario())


def test_a_tie_shares_the_win(database_url: str, tmp_path: Path) -> None:
    played = tied_match()
    plan = MatchPlan(played, "tie-1", seat_players("tie"), tournament_id="tied-cup")
    winners = played.match.winners
    assert len(winners) >= 2

    async def scenario() -> None:
        async with scoring(database_url, tmp_path) as service:
            recorded = await service.record(plan)
            assert [seat.winner for seat in recorded.result.seats] == [
                seat in winners for seat in range(4)
            ]
            for seat in winners:
                change = next(c for c in recorded.rating_changes if c.player_id == f"tie-p{seat}")
                assert change.after.mu > change.before.mu
                history = await service.stub.GetPlayerHistory(
                    scoring_pb2.GetPlayerHistoryRequest(),
                    metadata=player_auth(f"tie-p{seat}"),
                    timeout=30,
                )
                assert history.matches[0].winner and history.matches[0].place == 1
            standings = await service.stub.GetStandings(
                scoring_pb2.GetStandingsRequest(tournament_id="tied-cup"),
                metadata=SERVICE_AUTH,
                timeout=30,
            )
            ranks = [line.rank for line in standings.standings]
            assert ranks[: len(winners)] == [1] * len(winners)
            assert all(line.wins == 1 for line in standings.standings[: len(winners)])

    run(scenario())


def test_one_hand_delivered_100_times_at_once_is_recorded_once(
    database_url: str, tmp_path: Path
) -> None:
    plan = MatchPlan(oyna_match(), "dup-1", seat_players("dup"))

    async def scenario() -> None:
        async with scoring(database_url, tmp_path) as service:
            deliveries = [plan.hand(1, request_id=f"delivery-{n}") for n in range(100)]
            answers = await asyncio.gather(*(service.record_hand(r) for r in deliveries))
            first = answers[0].SerializeToString(deterministic=True)
            assert all(a.SerializeToString(deterministic=True) == first for a in answers)
            assert await service.count(hands, hand_id=plan.hand_id(1)) == 1
            assert await service.count(hand_seats, hand_id=plan.hand_id(1)) == 4
            assert await service.count(matches) == 1
            # The same hand id with another content is refused, and changes nothing.
            other = plan.hand(2)
            other.hand_id = other.deal.hand_id = plan.hand_id(1)
            other.deal.CopyFrom(deal_record(plan.hand_id(1)))
            code, reason = await refused(service.stub.RecordHand, other)
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "HAND_ALREADY_RECORDED")
            # Another hand under a number the match already has; a hand of other rules.
            renumbered = plan.hand(2)
            renumbered.hand_number = 1
            code, reason = await refused(service.stub.RecordHand, renumbered)
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "HAND_NUMBER_TAKEN")
            foreign = MatchPlan(boombala_match(False), "dup-1", seat_players("dup")).hand(2)
            foreign.hand_id = foreign.deal.hand_id = "dup-1-foreign"
            foreign.deal.CopyFrom(deal_record("dup-1-foreign"))
            code, reason = await refused(service.stub.RecordHand, foreign)
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "MATCH_MISMATCH")
            assert await service.count(hands) == 1

    run(scenario())


def test_a_hand_whose_points_do_not_follow_is_refused_and_nothing_is_stored(
    database_url: str, tmp_path: Path
) -> None:
    plan = MatchPlan(oyna_match(), "bad-1", seat_players("bad"))
    honest = plan.hand(1)
    finish = honest.final_state.result.finish
    loser = next(seat for seat in range(4) if seat != finish.winner_seat)

    def tampered(change: Any) -> scoring_pb2.RecordHandRequest:
        request = scoring_pb2.RecordHandRequest()
        request.CopyFrom(honest)
        change(request.final_state.result)
        return request

    def more_points(result: common_pb2.HandResult) -> None:
        result.scores[loser].points += 1

    def undoubled(result: common_pb2.HandResult) -> None:
        result.finish.multiplier = 1

    def not_after_pairs(result: common_pb2.HandResult) -> None:
        result.finish.after_pairs = False

    def another_winner(result: common_pb2.HandResult) -> None:
        result.finish.winner_seat = loser

    def stock_out(result: common_pb2.HandResult) -> None:
        result.reason = common_pb2.HAND_END_REASON_STOCK_OUT
        result.ClearField("finish")

    def penalty_dropped(result: common_pb2.HandResult) -> None:
        result.scores[loser].penalty_points += 101
        result.scores[loser].points += 101

    async def scenario() -> None:
        async with scoring(database_url, tmp_path) as service:
            for change in (
                more_points,
                undoubled,
                not_after_pairs,
                another_winner,
                stock_out,
                penalty_dropped,
            ):
                code, reason = await refused(service.stub.RecordHand, tampered(change))
                assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "SCORE_MISMATCH"), (
                    change.__name__
                )
            unfinished = scoring_pb2.RecordHandRequest()
            unfinished.CopyFrom(honest)
            unfinished.final_state.ClearField("result")
            unfinished.final_state.phase = common_pb2.PHASE_PLAY
            code, reason = await refused(service.stub.RecordHand, unfinished)
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "HAND_NOT_ENDED")
            forged_seed = scoring_pb2.RecordHandRequest()
            forged_seed.CopyFrom(honest)
            forged_seed.deal.server_seed = "00" * 32
            code, reason = await refused(service.stub.RecordHand, forged_seed)
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "DEAL_SEED_MISMATCH")
            assert await service.count(hands) == 0
            assert await service.count(matches) == 0
            # In the request's language.
            turkish = tampered(more_points)
            turkish.locale = "tr-TR"
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await service.stub.RecordHand(turkish, metadata=SERVICE_AUTH, timeout=30)
            assert "kurallarına göre" in (caught.value.details() or "")
            code, reason = await refused(
                service.stub.GetScoreSheet, scoring_pb2.GetScoreSheetRequest(match_id="bad-1")
            )
            assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "MATCH_NOT_FOUND")
            # Recording is for services: a player's token may not.
            code, reason = await refused(
                service.stub.RecordHand, honest, metadata=player_auth("bad-p0")
            )
            assert code == grpc.StatusCode.PERMISSION_DENIED
            # The honest hand goes in.
            assert (await service.record_hand(honest)).row.hand_id == plan.hand_id(1)

    run(scenario())


def test_leaderboard_pages_stay_stable_while_players_are_inserted(
    database_url: str, tmp_path: Path
) -> None:
    pool = one_hand_matches()

    async def scenario() -> None:
        async with scoring(database_url, tmp_path) as service:
            for index, played in enumerate(pool[:6]):
                await service.record(MatchPlan(played, f"lb-{index}", seat_players(f"g{index}")))
            before = await service.count(hands)
            assert before == 6
            seen: list[str] = []
            token = ""
            inserted = 0
            last_key: tuple[float, str] | None = None
            while True:
                page = await service.stub.GetLeaderboard(
                    scoring_pb2.GetLeaderboardRequest(page_size=5, page_token=token),
                    metadata=player_auth("g0-p0"),
                    timeout=30,
                )
                for entry in page.entries:
                    key = (-entry.rating.ordinal, entry.player_id)
                    assert last_key is None or key > last_key
                    last_key = key
                    seen.append(entry.player_id)
                token = page.next_page_token
                if not token:
                    break
                # New players (in a match of their own) arrive between page requests.
                played = pool[6 + inserted % (len(pool) - 6)]
                plan = MatchPlan(played, f"new-{inserted}", seat_players(f"n{inserted}"))
                await service.record(plan)
                inserted += 1
            assert inserted >= 4
            assert len(seen) == len(set(seen)), "a player was sent twice"
            original = {f"g{index}-p{seat}" for index in range(6) for seat in range(4)}
            assert original <= set(seen), "a player was lost between pages"
            # A token is bound to its request: another filter is refused.
            first = await service.stub.GetLeaderboard(
                scoring_pb2.GetLeaderboardRequest(page_size=5), metadata=SERVICE_AUTH, timeout=30
            )
            code, reason = await refused(
                service.stub.GetLeaderboard,
                scoring_pb2.GetLeaderboardRequest(
                    page_size=5,
                    page_token=first.next_page_token,
                    mode=scoring_pb2.RATING_MODE_PARTNERS,
                ),
            )
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "PAGE_TOKEN_INVALID")
            code, reason = await refused(
                service.stub.GetLeaderboard, scoring_pb2.GetLeaderboardRequest(page_size=-1)
            )
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_FIELD")
            ranks = [entry.rank for entry in first.entries]
            assert ranks[0] == 1 and ranks == sorted(ranks)

    run(scenario())


def test_okey101_serve_scoring_starts_migrates_and_stops_gracefully(tmp_path: Path) -> None:
    """``okey101 serve scoring --port 0`` migrates its SQLite file under the var dir, turns
    SERVING, and exits 0 on SIGTERM."""
    env = {**os.environ, "OKEY_VAR_DIR": str(tmp_path), "OKEY_LOG_FORMAT": "json"}
    env.pop("OKEY_DATABASE_URL", None)
    env.pop("OKEY_SCORING_DATABASE_URL", None)
    command = [
        sys.executable, "-m", "okey101.cli", "serve", "scoring",
        "--port", "0", "--metrics-port", "0",
    ]  # fmt: skip
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = 0
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not port:
            line = process.stdout.readline()
            if not line:
                break
            if '"serving"' in line:
                port = int(line.split('"port": ')[1].split(",")[0])
        assert port, "the service did not report serving"
        assert (tmp_path / "scoring.db").exists()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            status = health.Check(
                health_pb2.HealthCheckRequest(service="okey.v1.ScoringService"), timeout=10
            ).status
            assert status == health_pb2.HealthCheckResponse.SERVING
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_every_sentence_names_the_same_parameters_in_both_languages() -> None:
    import string

    for code, sentences in CATALOGUE.items():
        names = {
            language: {field for _, field, _, _ in string.Formatter().parse(text) if field}
            for language, text in sentences.items()
        }
        assert set(names) == {"en", "tr"}, code
        assert names["en"] == names["tr"], code
