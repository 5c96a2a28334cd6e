"""Seasonal leaderboards and "around me" paging (GetLeaderboard's season, season_time and
around_player_id) over real gRPC, on SQLite and PostgreSQL.

Matches are engine playouts recorded as the table would (``support.scoring``), each with the end
time the test chooses (a seasonal board takes a match by its end); the service's now is the
``season_clock`` fixture, moved by the test. Expected boards are added up here from what
RecordMatch answered (the seats' totals and wins, the rating changes), independently of the
service's SQL.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from okey.v1 import common_pb2, scoring_pb2

from okey101.platform import paging
from okey101.scoring import seasons
from okey101.scoring.errors import CATALOGUE

from support.scoring import (
    SERVICE_AUTH,
    MatchPlan,
    Played,
    Service,
    boombala_match,
    one_hand_matches,
    player_auth,
    refused,
    run,
    scoring,
    tied_match,
)

WEEK = scoring_pb2.LEADERBOARD_SEASON_WEEK
MONTH = scoring_pb2.LEADERBOARD_SEASON_MONTH
ALL_TIME = scoring_pb2.LEADERBOARD_SEASON_ALL_TIME
LAST_MICROSECOND = {"hour": 23, "minute": 59, "second": 59, "microsecond": 999_999}


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, **more: int
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC, **more)


def stamp(moment: datetime) -> Timestamp:
    value = Timestamp()
    value.FromDatetime(moment)
    return value


def seats_of(players: Sequence[str]) -> list[scoring_pb2.SeatPlayer]:
    """Seats in order; "" is a bot's seat."""
    return [
        scoring_pb2.SeatPlayer(seat=seat, bot=True, display_name=f"bot {seat}")
        if not player
        else scoring_pb2.SeatPlayer(seat=seat, player_id=player, display_name=player.upper())
        for seat, player in enumerate(players)
    ]


async def record(
    service: Service, played: Played, match_id: str, players: Sequence[str], ended: datetime
) -> scoring_pb2.RecordMatchResponse:
    """Record ``played`` as match ``match_id`` of ``players`` (seat order), ended at ``ended``."""
    plan = MatchPlan(played, match_id, seats_of(players))
    for request in plan.hands():
        await service.record_hand(request)
    request = plan.result()
    request.result.ended_at.CopyFrom(stamp(ended))
    return await service.record_match(request)


async def board(service: Service, **fields: Any) -> scoring_pb2.GetLeaderboardResponse:
    answer: scoring_pb2.GetLeaderboardResponse = await service.stub.GetLeaderboard(
        scoring_pb2.GetLeaderboardRequest(**fields), metadata=SERVICE_AUTH, timeout=30
    )
    return answer


def players(answer: scoring_pb2.GetLeaderboardResponse) -> list[str]:
    return [entry.player_id for entry in answer.entries]


def lines(entries: Iterable[scoring_pb2.LeaderboardEntry]) -> list[tuple[int, str, int, int]]:
    return [(e.rank, e.player_id, e.wins, e.season_points) for e in entries]


async def whole(service: Service, **fields: Any) -> list[scoring_pb2.LeaderboardEntry]:
    """A board from its top to its end, page after page."""
    entries: list[scoring_pb2.LeaderboardEntry] = []
    token = ""
    while True:
        page = await board(service, page_size=200, page_token=token, **fields)
        entries.extend(page.entries)
        token = page.next_page_token
        if not token:
            return entries


@dataclass
class Expected:
    """A player's figures in a season, added up from RecordMatch's answers."""

    wins: int = 0
    points: int = 0
    matches: int = 0
    gained: float = 0.0


def expected_board(answers: Iterable[scoring_pb2.RecordMatchResponse]) -> list[Any]:
    """(rank, player, wins, points), matches and rating gained: the measure is wins (more
    first), then points (fewer first); equal measures share a rank; player id within a tie."""
    figures: dict[str, Expected] = {}
    for answer in answers:
        changes = {change.player_id: change for change in answer.rating_changes}
        for seat in answer.result.seats:
            if seat.player_id not in changes:
                continue  # a bot's seat, or an unrated match
            line = figures.setdefault(seat.player_id, Expected())
            line.wins += int(seat.winner)
            line.points += seat.total
            line.matches += 1
            change = changes[seat.player_id]
            line.gained += change.after.ordinal - change.before.ordinal
    order = sorted(figures, key=lambda p: (-figures[p].wins, figures[p].points, p))
    out = []
    for player in order:
        line = figures[player]
        better = sum(
            1
            for other in figures.values()
            if (-other.wins, other.points) < (-line.wins, line.points)
        )
        out.append(((better + 1, player, line.wins, line.points), line.matches, line.gained))
    return out


# ---------------------------------------------------------------------------------------------
# Windows


@pytest.mark.parametrize(
    ("season", "moment", "start", "end"),
    [
        # ISO weeks start on Monday, across a month and a year.
        ("week", utc(2026, 12, 7), utc(2026, 12, 7), utc(2026, 12, 14)),
        ("week", utc(2026, 12, 13, **LAST_MICROSECOND), utc(2026, 12, 7), utc(2026, 12, 14)),
        ("week", utc(2027, 1, 1, 12), utc(2026, 12, 28), utc(2027, 1, 4)),
        ("week", utc(2024, 3, 1), utc(2024, 2, 26), utc(2024, 3, 4)),
        # Months: 28, 29, 30 and 31 days, December into January.
        ("month", utc(2027, 2, 28, 23), utc(2027, 2, 1), utc(2027, 3, 1)),
        ("month", utc(2028, 2, 29), utc(2028, 2, 1), utc(2028, 3, 1)),
        ("month", utc(2026, 11, 30, **LAST_MICROSECOND), utc(2026, 11, 1), utc(2026, 12, 1)),
        ("month", utc(2026, 12, 31, 23), utc(2026, 12, 1), utc(2027, 1, 1)),
    ],
)
def test_a_window_is_the_iso_week_or_the_calendar_month_in_utc(
    season: seasons.Season, moment: datetime, start: datetime, end: datetime
) -> None:
    def us(value: datetime) -> int:
        return (value - utc(1970, 1, 1)) // timedelta(microseconds=1)

    window = seasons.window(season, us(moment))
    assert (window.start_us, window.end_us) == (us(start), us(end))


def test_weeks_and_months_take_the_matches_that_ended_in_them_in_utc(
    database_url: str, tmp_path: Path, season_clock: Any
) -> None:
    """ISO weeks from Monday 00:00 UTC and calendar months from the 1st 00:00 UTC, half-open:
    a match that ended on the last microsecond is in, one that ended on the next window's
    first is not; a week may span two months or two years."""
    pool = one_hand_matches()
    ends = {
        "nov-last": utc(2026, 11, 30, **LAST_MICROSECOND),  # Monday of ISO week 49
        "dec-first": utc(2026, 12, 1),  # Tuesday, week 49
        "w49-last": utc(2026, 12, 6, **LAST_MICROSECOND),  # Sunday, week 49
        "w50-first": utc(2026, 12, 7),  # Monday, week 50
        "w50-last": utc(2026, 12, 13, **LAST_MICROSECOND),  # Sunday, week 50
        "w51-first": utc(2026, 12, 14),  # Monday, week 51
        "dec-last": utc(2026, 12, 31, **LAST_MICROSECOND),  # Thursday, week 53 of 2026
        "jan-first": utc(2027, 1, 1),  # Friday, week 53 of 2026
    }

    def of(*tags: str) -> set[str]:
        return {f"{tag}-{seat}" for tag in tags for seat in range(4)}

    async def scenario() -> None:
        async with scoring(database_url, tmp_path, season_clock) as service:
            for index, (tag, ended) in enumerate(ends.items()):
                await record(service, pool[index], tag, [f"{tag}-{s}" for s in range(4)], ended)

            # Now is Wednesday 9 December 2026: the current week is week 50.
            week = await board(service, season=WEEK)
            assert set(players(week)) == of("w50-first", "w50-last")
            assert week.season_start.ToDatetime(UTC) == utc(2026, 12, 7)
            assert week.season_end.ToDatetime(UTC) == utc(2026, 12, 14)
            assert all(entry.season_matches == 1 for entry in week.entries)
            at_end = await board(
                service, season=WEEK, season_time=stamp(utc(2026, 12, 13, **LAST_MICROSECOND))
            )
            assert players(at_end) == players(week)
            # Week 49 runs from Monday 30 November into December.
            w49 = await board(service, season=WEEK, season_time=stamp(utc(2026, 12, 2, 8)))
            assert set(players(w49)) == of("nov-last", "dec-first", "w49-last")
            assert w49.season_start.ToDatetime(UTC) == utc(2026, 11, 30)
            month = await board(service, season=MONTH)
            assert set(players(month)) == of(
                "dec-first", "w49-last", "w50-first", "w50-last", "w51-first", "dec-last"
            )
            assert month.season_start.ToDatetime(UTC) == utc(2026, 12, 1)
            assert month.season_end.ToDatetime(UTC) == utc(2027, 1, 1)
            november = await board(service, season=MONTH, season_time=stamp(utc(2026, 11, 1)))
            assert set(players(november)) == of("nov-last")
            # The all-time board has no window and every rated player.
            everyone = await board(service, page_size=200)
            assert set(players(everyone)) == of(*ends)
            # An end no table would send (the year 33658) is recorded all the same, and lands
            # in no window a client may ask about.
            plan = MatchPlan(pool[len(ends)], "far", seats_of([f"far-{s}" for s in range(4)]))
            for request in plan.hands():
                await service.record_hand(request)
            far = plan.result()
            far.result.ended_at.CopyFrom(Timestamp(seconds=10**12))
            await service.record_match(far)
            assert len((await board(service, page_size=200)).entries) == len(everyone.entries) + 4
            assert set(players(await board(service, season=MONTH))) == set(players(month))
            assert not everyone.HasField("season_start")

            # A week or month after the current one is refused, not answered empty.
            for season, moment in ((WEEK, utc(2026, 12, 14)), (MONTH, utc(2027, 1, 1))):
                code, reason = await refused(
                    service.stub.GetLeaderboard,
                    scoring_pb2.GetLeaderboardRequest(season=season, season_time=stamp(moment)),
                )
                assert (code, reason) == (
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "SEASON_TIME_OUT_OF_RANGE",
                )

            # On Saturday 2 January 2027 the current week spans the new year; January has
            # one match so far, and week 51 can be asked about.
            season_clock.now = utc(2027, 1, 2, 12)
            week = await board(service, season=WEEK)
            assert set(players(week)) == of("dec-last", "jan-first")
            assert week.season_start.ToDatetime(UTC) == utc(2026, 12, 28)
            assert week.season_end.ToDatetime(UTC) == utc(2027, 1, 4)
            assert set(players(await board(service, season=MONTH))) == of("jan-first")
            w51 = await board(service, season=WEEK, season_time=stamp(utc(2026, 12, 20, 23)))
            assert set(players(w51)) == of("w51-first")

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Ranking


async def busy_week(service: Service) -> list[scoring_pb2.RecordMatchResponse]:
    """Sixteen players (``p00``-``p15``) in ten one-hand matches during week 50, seated at
    random; one of them (p00) also in a match of week 49. What RecordMatch answered for the
    week's matches."""
    pool = one_hand_matches()
    seating = random.Random(50)
    answers = []
    for index, played in enumerate(pool):
        seated = [f"p{number:02d}" for number in seating.sample(range(16), 4)]
        ended = utc(2026, 12, 7 + index % 7, 9 + index)
        answers.append(await record(service, played, f"week-{index}", seated, ended))
    await record(service, pool[0], "earlier", ["p00", "x1", "x2", "x3"], utc(2026, 12, 6, 20))
    return answers


def test_a_season_ranks_by_wins_then_points_and_equal_lines_share_a_rank(
    database_url: str, tmp_path: Path, season_clock: Any
) -> None:
    tied = tied_match()
    totals = tied.match.totals
    low = min(totals)
    tied_seats = [seat for seat in range(4) if totals[seat] == low]
    assert len(tied_seats) == 2 and set(tied_seats) <= set(tied.match.winners)

    async def scenario() -> None:
        async with scoring(database_url, tmp_path, season_clock) as service:
            answers = await busy_week(service)
            # Two players who only share one tied win this week: the same measure.
            seated = ["", "", "", ""]
            names = iter(["tie-b", "tie-a"])  # the later id in the earlier seat
            others = iter(["tie-c", "tie-d"])
            for seat in range(4):
                seated[seat] = next(names) if seat in tied_seats else next(others)
            answers.append(await record(service, tied, "tied", seated, utc(2026, 12, 8, 22)))
            # Not rated (one player and three bots) or in another mode: not on this board.
            played = one_hand_matches()[0]
            await record(service, played, "solo", ["solo", "", "", ""], utc(2026, 12, 8))
            partners = boombala_match(True)
            team = await record(
                service, partners, "team", ["tm-0", "tm-1", "tm-2", "tm-3"], utc(2026, 12, 9)
            )

            expected = expected_board(answers)
            entries = await whole(service, season=WEEK)
            assert lines(entries) == [line for line, _, _ in expected]
            for entry, (_, matches, gained) in zip(entries, expected, strict=True):
                assert entry.season_matches == matches
                assert entry.season_rating_change == pytest.approx(gained)
                assert entry.display_name == entry.player_id.upper()
                # The rating shown is the current one, over every week.
                assert entry.rating.matches == matches + (entry.player_id == "p00")
            ranks = {entry.player_id: entry.rank for entry in entries}
            assert ranks["tie-a"] == ranks["tie-b"]
            assert players_in_order(entries, "tie-a", "tie-b")
            assert "solo" not in ranks and "tm-0" not in ranks
            # p00's match of week 49 does not count in week 50.
            p00 = next(entry for entry in entries if entry.player_id == "p00")
            assert p00.season_matches == sum(
                1 for a in answers[:10] for s in a.result.seats if s.player_id == "p00"
            )

            # The same board a page at a time, with the same ranks.
            paged, token = [], ""
            while True:
                page = await board(service, season=WEEK, page_size=3, page_token=token)
                paged.extend(page.entries)
                token = page.next_page_token
                if not token:
                    break
            assert lines(paged) == lines(entries)

            # Filters: the preset played, another preset, a minimum, the partners mode.
            boombala = await whole(service, season=WEEK, preset=common_pb2.RULE_PRESET_BOOMBALA)
            assert lines(boombala) == lines(entries)
            assert not await whole(service, season=WEEK, preset=common_pb2.RULE_PRESET_OYNA)
            twice = await whole(service, season=WEEK, min_matches=2)
            assert [e.player_id for e in twice] == [
                line[1] for line, matches, _ in expected if matches >= 2
            ]
            partner_board = await whole(service, season=WEEK, mode=scoring_pb2.RATING_MODE_PARTNERS)
            assert lines(partner_board) == [line for line, _, _ in expected_board([team])]
            # December holds the week and week 49's match: its three other players, and
            # one more match of p00's.
            month = {entry.player_id: entry for entry in await whole(service, season=MONTH)}
            assert set(month) == set(ranks) | {"x1", "x2", "x3"}
            assert month["p00"].season_matches == p00.season_matches + 1

    run(scenario())


def players_in_order(entries: Sequence[scoring_pb2.LeaderboardEntry], *names: str) -> bool:
    found = [entry.player_id for entry in entries if entry.player_id in names]
    return found == list(names)


# ---------------------------------------------------------------------------------------------
# Around a player, and paging up and down


async def around(
    service: Service, season: int, player: str, size: int
) -> scoring_pb2.GetLeaderboardResponse:
    return await board(service, season=season, around_player_id=player, page_size=size)


def test_around_a_player_in_the_middle_at_the_top_and_at_the_bottom(
    database_url: str, tmp_path: Path, season_clock: Any
) -> None:
    async def scenario() -> None:
        async with scoring(database_url, tmp_path, season_clock) as service:
            await busy_week(service)
            for season in (WEEK, ALL_TIME):
                full = await whole(service, season=season)
                assert len(full) >= 12
                middle = len(full) // 2

                # In the middle: half above, half below (the odd one below), both ways on.
                page = await around(service, season, full[middle].player_id, 5)
                assert lines(page.entries) == lines(full[middle - 2 : middle + 3])
                assert page.previous_page_token and page.next_page_token
                page = await around(service, season, full[middle].player_id, 4)
                assert lines(page.entries) == lines(full[middle - 1 : middle + 3])
                page = await around(service, season, full[middle].player_id, 1)
                assert lines(page.entries) == lines(full[middle : middle + 1])
                # At the top and the bottom the page is still full, and goes one way only.
                for index in (0, 1):
                    page = await around(service, season, full[index].player_id, 5)
                    assert lines(page.entries) == lines(full[:5])
                    assert not page.previous_page_token and page.next_page_token
                page = await around(service, season, full[-1].player_id, 5)
                assert lines(page.entries) == lines(full[-5:])
                assert page.previous_page_token and not page.next_page_token

                # From the middle up to the top and down to the end: the whole board, each
                # line once, in order, ranks as on the board.
                start = await around(service, season, full[middle].player_id, 5)
                pages = [list(start.entries)]
                token = start.previous_page_token
                while token:
                    up = await board(service, season=season, page_size=5, page_token=token)
                    assert len(up.entries) == 5 or not up.previous_page_token
                    assert up.next_page_token
                    pages.insert(0, list(up.entries))
                    token = up.previous_page_token
                assert pages[0][0].rank == 1
                token = start.next_page_token
                while token:
                    down = await board(service, season=season, page_size=5, page_token=token)
                    assert down.previous_page_token
                    pages.append(list(down.entries))
                    token = down.next_page_token
                assert lines(entry for part in pages for entry in part) == lines(full)

                # From the top: no way up; the second page's way up is the first page.
                first = await board(service, season=season, page_size=5)
                assert not first.previous_page_token
                second = await board(
                    service, season=season, page_size=5, page_token=first.next_page_token
                )
                back = await board(
                    service, season=season, page_size=5, page_token=second.previous_page_token
                )
                assert lines(back.entries) == lines(first.entries)
                assert not back.previous_page_token
                # With a token, the token says which page (around_player_id is not used).
                again = await board(
                    service,
                    season=season,
                    page_size=5,
                    page_token=first.next_page_token,
                    around_player_id=full[-1].player_id,
                )
                assert lines(again.entries) == lines(second.entries)

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Refusals


def test_bad_seasons_times_tokens_and_unranked_players_are_refused(
    database_url: str, tmp_path: Path, season_clock: Any
) -> None:
    async def scenario() -> None:
        async with scoring(database_url, tmp_path, season_clock) as service:
            await busy_week(service)
            await record(
                service, one_hand_matches()[1], "solo", ["solo", "", "", ""], utc(2026, 12, 8)
            )
            before = lines(await whole(service, season=WEEK))
            call = service.stub.GetLeaderboard
            Request = scoring_pb2.GetLeaderboardRequest  # noqa: N806 (a message class)

            def at(seconds: int, nanos: int = 0) -> Timestamp:
                return Timestamp(seconds=seconds, nanos=nanos)

            bad: list[tuple[scoring_pb2.GetLeaderboardRequest, str]] = [
                (Request(season=9), "BAD_FIELD"),
                (Request(season=ALL_TIME, season_time=stamp(utc(2026, 12, 8))), "BAD_FIELD"),
                (Request(season_time=stamp(utc(2026, 12, 8))), "BAD_FIELD"),
                (Request(season=WEEK, season_time=at(-1)), "SEASON_TIME_OUT_OF_RANGE"),
                (Request(season=MONTH, season_time=at(5, -1)), "SEASON_TIME_OUT_OF_RANGE"),
                (Request(season=WEEK, season_time=at(5, 10**9)), "SEASON_TIME_OUT_OF_RANGE"),
                (Request(season=WEEK, season_time=at(10**12)), "SEASON_TIME_OUT_OF_RANGE"),
                (Request(season=WEEK, around_player_id="x" * 300), "BAD_FIELD"),
            ]
            for request, reason in bad:
                code, got = await refused(call, request)
                assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, reason), request

            # A player with no line on the board: NOT_FOUND, in English and in Turkish.
            for player in ("solo", "nobody"):
                code, reason = await refused(call, Request(season=WEEK, around_player_id=player))
                assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "PLAYER_NOT_RANKED")
            code, reason = await refused(
                call, Request(season=MONTH, around_player_id="x1", min_matches=2)
            )
            assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "PLAYER_NOT_RANKED")
            for locale in ("en", "tr"):
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await call(
                        Request(season=WEEK, around_player_id="solo", locale=locale),
                        metadata=player_auth("solo"),
                        timeout=30,
                    )
                sentence = CATALOGUE["PLAYER_NOT_RANKED"][locale].format(player_id="solo")
                assert caught.value.details() == sentence

            # Tokens are bound to their board: the week's is not the month's, nor next week's.
            week = await board(service, season=WEEK, page_size=3)
            second = await board(service, season=WEEK, page_size=3, page_token=week.next_page_token)
            for token in (week.next_page_token, second.previous_page_token):
                code, reason = await refused(
                    call, Request(season=MONTH, page_size=3, page_token=token)
                )
                assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "PAGE_TOKEN_INVALID")
            # Made-up tokens: a mark that is not "before", keys no database column holds.
            bound = paging.fingerprint("leaderboard", "free_for_all", "all", 1)
            w50 = int(utc(2026, 12, 7).timestamp() * 1_000_000)
            week_bound = paging.fingerprint("leaderboard", "free_for_all", "all", 1, "week", w50)
            for key, season, to in (
                (["above", 1.0, "p00"], ALL_TIME, bound),
                (["before", 10**400, "p00"], ALL_TIME, bound),
                ([1.0, "p\x00"], ALL_TIME, bound),
                ([10**19, 0, "p00"], WEEK, week_bound),
                (["before", 1, -(10**30), "p00"], WEEK, week_bound),
            ):
                token = paging.encode_token(key, to)
                code, reason = await refused(
                    call, Request(season=season, page_size=3, page_token=token)
                )
                assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "PAGE_TOKEN_INVALID")
            # A made-up key above every line (2^40 wins) starts the page at the top.
            made_up = paging.encode_token([2**40, -(2**40), "p00"], week_bound)
            from_top = await board(service, season=WEEK, page_token=made_up)
            assert lines(from_top.entries) == before and not from_top.previous_page_token
            # Any minimum is a board (an empty one above every player's count).
            for season in (ALL_TIME, WEEK):
                assert not (await board(service, season=season, min_matches=2**32 - 1)).entries
            assert lines(await whole(service, season=WEEK)) == before
            season_clock.now = utc(2026, 12, 14, 0, 0, 1)
            code, reason = await refused(
                call, Request(season=WEEK, page_size=3, page_token=week.next_page_token)
            )
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "PAGE_TOKEN_INVALID")
            assert not (await board(service, season=WEEK)).entries

    run(scenario())


# ---------------------------------------------------------------------------------------------
# The migration


def test_the_migration_adds_up_the_matches_recorded_before_it(
    database_url: str, tmp_path: Path, season_clock: Any
) -> None:
    """Scoring's migration 0005 fills the season lines from the matches already recorded: a
    database taken back to 0004 and migrated again answers the same boards."""
    from alembic import command

    from okey101.platform.database import alembic_config, run_migrations

    boards = (
        {"season": WEEK},
        {"season": MONTH},
        {"season": MONTH, "season_time": stamp(utc(2026, 11, 3))},
        {"season": WEEK, "preset": common_pb2.RULE_PRESET_BOOMBALA},
        {"season": WEEK, "mode": scoring_pb2.RATING_MODE_PARTNERS},
    )

    def figures(entries: Sequence[scoring_pb2.LeaderboardEntry]) -> list[Any]:
        return [
            (*line, entry.season_matches, round(entry.season_rating_change, 9))
            for line, entry in zip(lines(entries), entries, strict=True)
        ]

    async def scenario() -> None:
        async with scoring(database_url, tmp_path, season_clock) as service:
            await busy_week(service)
            await record(
                service, one_hand_matches()[3], "nov", ["p01", "p02", "n1", "n2"], utc(2026, 11, 3)
            )
            team = ["tm-0", "tm-1", "tm-2", "tm-3"]
            await record(service, boombala_match(True), "team", team, utc(2026, 12, 9))
            recorded = [figures(await whole(service, **fields)) for fields in boards]
        assert all(recorded)
        await asyncio.to_thread(
            command.downgrade, alembic_config("scoring", database_url), "0004_tournament_places"
        )
        await run_migrations("scoring", database_url)
        async with scoring(database_url, tmp_path, season_clock) as service:
            again = [figures(await whole(service, **fields)) for fields in boards]
        assert again == recorded

    run(scenario())
