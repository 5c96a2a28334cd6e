"""The tournament bracket, pure: seating, the order at a table, advancement, standings."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from okey101.lobby.bracket import (
    BOT,
    Entry,
    MatchLine,
    advance_count,
    advancing,
    is_last_round,
    order_table,
    round_plan,
    seat_round,
    standings,
)


def line(player: str, registration: int, *, winner: bool = False, total: int = 0,
         hands: int = 0, penalties: int = 0) -> MatchLine:  # fmt: skip
    return MatchLine(player, registration, winner, total, hands, penalties)


def test_sixty_four_players_take_three_rounds_to_one_final_table() -> None:
    assert round_plan(64, 1) == [16, 4, 1]
    assert round_plan(64, 2) == [16, 8, 4, 2, 1]
    assert round_plan(4, 3) == [1]
    assert round_plan(5, 1) == [2, 1]
    assert round_plan(64, 1, planned_rounds=2) == [16, 4]


def test_seating_spreads_players_evenly_and_bots_fill_the_rest() -> None:
    tables = seat_round([f"p{index}" for index in range(9)])
    assert [sum(1 for seat in table if seat != BOT) for table in tables] == [3, 3, 3]
    # The best (first) entrants are spread over the tables, one each.
    assert [table[0] for table in tables] == ["p0", "p1", "p2"]
    assert all(table[3] == BOT for table in tables)
    assert seat_round(["a"]) == [["a", BOT, BOT, BOT]]


@given(st.integers(min_value=1, max_value=1024), st.integers(min_value=1, max_value=3))
def test_every_bracket_reaches_a_final_table(players: int, advance: int) -> None:
    plan = round_plan(players, advance)
    assert plan[-1] == 1
    assert all(later <= earlier for earlier, later in itertools.pairwise(plan))


@given(st.integers(min_value=1, max_value=200))
def test_seating_seats_everyone_once(players: int) -> None:
    entrants = [f"p{index}" for index in range(players)]
    tables = seat_round(entrants)
    seated = [seat for table in tables for seat in table if seat != BOT]
    assert sorted(seated) == sorted(entrants)
    sizes = [sum(1 for seat in table if seat != BOT) for table in tables]
    assert max(sizes) - min(sizes) <= 1 and all(len(table) == 4 for table in tables)


def test_never_every_player_of_a_table_advances() -> None:
    assert advance_count(4, 3, last_round=False) == 3
    assert advance_count(3, 3, last_round=False) == 2
    assert advance_count(2, 3, last_round=False) == 1
    assert advance_count(4, 1, last_round=True) == 0


def test_the_order_at_a_table_breaks_every_tie_the_documented_way() -> None:
    lines = [
        line("late-winner", 9, winner=True, total=-101),
        line("early-winner", 2, winner=True, total=-101),
        line("low-total", 1, total=50),
        line("more-hands", 5, total=120, hands=2),
        line("fewer-hands", 3, total=120, hands=1),
        line("fewer-penalties", 7, total=200, penalties=0),
        line("more-penalties", 4, total=200, penalties=101),
    ]
    assert [item.player_id for item in order_table(lines)] == [
        "early-winner",  # a shared win: the earlier registration first
        "late-winner",
        "low-total",
        "more-hands",
        "fewer-hands",
        "fewer-penalties",
        "more-penalties",
    ]
    assert advancing(lines, 2) == ["early-winner", "late-winner"]


def test_a_winner_with_a_higher_total_still_advances_first() -> None:
    # With partners a winning seat may hold the higher personal total: the win comes first.
    lines = [line("loser", 1, total=-50), line("winner", 2, winner=True, total=10)]
    assert advancing(lines, 1) == ["winner"]


def entry(player: str, registration: int, **fields: object) -> Entry:
    values: dict[str, object] = {
        "round_reached": 1, "eliminated": False, "won_last": False,
        "match_total": 0, "hands_finished": 0, "penalty_points": 0,
    }  # fmt: skip
    values.update(fields)
    return Entry(player, registration, **values)  # type: ignore[arg-type]


def test_standings_rank_the_round_reached_then_the_last_match() -> None:
    entries = [
        entry("out-early", 1, round_reached=1, eliminated=True, won_last=False, match_total=-500),
        entry("finalist", 4, round_reached=2, match_total=300),
        entry("champion", 3, round_reached=2, won_last=True, match_total=-101),
        entry("out-late", 2, round_reached=1, eliminated=True, match_total=100),
    ]
    ranked = standings(entries, started=True)
    assert [(rank, item.player_id) for rank, item in ranked] == [
        (1, "champion"),
        (2, "finalist"),
        (3, "out-early"),
        (4, "out-late"),
    ]
    before = standings(entries, started=False)
    assert [rank for rank, _ in before] == [1, 1, 1, 1]
    assert [item.player_id for _, item in before] == [
        "out-early",
        "out-late",
        "champion",
        "finalist",
    ]


def test_a_forfeited_player_never_advances_and_is_ranked_below_every_other_player() -> None:
    """#37: the no-show policy's forfeits come before every other tie-break."""
    lines = [line("bot-won-for-them", 1, winner=True, total=-200), line("b", 2, total=50),
             line("c", 3, total=80), line("d", 4, total=90)]  # fmt: skip
    assert advancing(lines, 1) == ["bot-won-for-them"]
    assert advancing(lines, 1, forfeited={"bot-won-for-them"}) == ["b"]
    assert advancing(lines, 2, forfeited={"b", "c"}) == ["bot-won-for-them", "d"]
    assert advancing(lines, 1, forfeited={"bot-won-for-them", "b", "c", "d"}) == []
    entries = [
        entry("no-show", 1, round_reached=2, won_last=True, match_total=-300, forfeited=True),
        entry("out-in-round-1", 2, round_reached=1, eliminated=True, match_total=400),
        entry("winner", 3, round_reached=2, won_last=True),
    ]
    ranked = standings(entries, started=True)
    assert [item.player_id for _, item in ranked] == ["winner", "out-in-round-1", "no-show"]


def test_the_last_round_is_the_final_table_or_the_cap() -> None:
    assert is_last_round(3, 4, 0)
    assert not is_last_round(2, 16, 0)
    assert is_last_round(2, 16, 2)
