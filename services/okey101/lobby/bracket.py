"""Tournament brackets, pure: who sits where, who advances, the standings and the winner.

The rule texts say only that tied players share a match's win; a tournament needs one order, so
the lobby documents its own (``docs/lobby.md``) and this module is its only implementation:

- **Seating.** A round's entrants, best first (round 1: registration order; later rounds: the
  standings), are dealt round-robin over ``ceil(n / 4)`` tables, so table sizes differ by at most
  one and the best are spread over the tables. Players take seats 0, 1, ... in that order; bots
  fill the rest. With four entrants or fewer the round is the final: one table.
- **Order at a table** (who advances, and the final ranks): winners of the match first (ties
  share a win), then the lower match total, then more hands finished (went out) in the match,
  then fewer penalty points in the match, then earlier registration. Registration is unique, so
  the order is total. Bots never advance: they fill seats and play, but only players are ranked.
- **How many advance.** ``advance_per_table`` (1-3) from each table of a round that is not the
  last, but never every player of a table: at most its players less one. So every round but the
  last has fewer entrants than the one before, and the bracket reaches a final table.
- **The last round** is the final table (four or fewer entrants), or round ``planned_rounds``
  when the tournament was created with a cap. Its order ranks the winner first.
- **Standings:** a player forfeited under the tournament's no-show policy below every player
  who was not; then the later the round reached, the better; within a round, the order above
  applied to each player's latest match; before the start, everyone is rank 1 in registration
  order. Once the tournament has finished this is its one final ranking (``docs/tournaments.md``):
  the prizes are paid from it, and the scoring service serves the same places.
- **Forfeited players never advance** (``advancing``): the next best of their table does.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

SEATS = 4
#: A bot's place in a seat list.
BOT = ""


@dataclass(frozen=True)
class MatchLine:
    """One player's result in a finished match (the score sheet of the scoring service)."""

    player_id: str
    registration: int
    winner: bool
    total: int
    hands_finished: int
    penalty_points: int


@dataclass(frozen=True)
class Entry:
    """A registered player as the standings see them."""

    player_id: str
    registration: int
    round_reached: int
    eliminated: bool
    won_last: bool
    match_total: int
    hands_finished: int
    penalty_points: int
    #: Forfeited under the no-show policy: ranked below every player who was not.
    forfeited: bool = False
    #: Disqualified by the organiser (forfeited too): ranked below every other forfeit.
    disqualified: bool = False


def table_count(entrants: int) -> int:
    """How many tables a round of ``entrants`` players needs."""
    return max(1, math.ceil(entrants / SEATS))


def is_final(entrants: int) -> bool:
    """A round of four entrants or fewer is the final table."""
    return entrants <= SEATS


def is_last_round(round_number: int, entrants: int, planned_rounds: int) -> bool:
    """The final table, or the round the tournament's cap makes the last."""
    return is_final(entrants) or (planned_rounds > 0 and round_number >= planned_rounds)


def seat_round(entrants: Sequence[str]) -> list[list[str]]:
    """The tables of a round: each four seats, a player id or ``BOT``; entrants best first."""
    if not entrants:
        raise ValueError("a round needs at least one entrant")
    tables: list[list[str]] = [[] for _ in range(table_count(len(entrants)))]
    for index, player in enumerate(entrants):
        tables[index % len(tables)].append(player)
    return [table + [BOT] * (SEATS - len(table)) for table in tables]


def advance_count(players_at_table: int, advance_per_table: int, last_round: bool) -> int:
    """Players advancing from a table: none from the last round; else ``advance_per_table``,
    at most the table's players less one (and at least one)."""
    if last_round:
        return 0
    return max(1, min(advance_per_table, players_at_table - 1))


def line_key(line: MatchLine) -> tuple[bool, int, int, int, int]:
    """The order at a table (module docstring): smaller is better."""
    return (
        not line.winner,
        line.total,
        -line.hands_finished,
        line.penalty_points,
        line.registration,
    )


def order_table(lines: Iterable[MatchLine]) -> list[MatchLine]:
    """A table's players, best first."""
    return sorted(lines, key=line_key)


def advancing(lines: Iterable[MatchLine], count: int, forfeited: Collection[str] = ()) -> list[str]:
    """The players who advance from a table: the first ``count`` of its order who were not
    ``forfeited``."""
    eligible = [line for line in order_table(lines) if line.player_id not in forfeited]
    return [line.player_id for line in eligible[:count]]


def entry_key(entry: Entry) -> tuple[bool, bool, int, bool, int, int, int, int]:
    """The standings' order (module docstring): smaller is better."""
    return (
        entry.forfeited,
        entry.disqualified,
        -entry.round_reached,
        not entry.won_last,
        entry.match_total,
        -entry.hands_finished,
        entry.penalty_points,
        entry.registration,
    )


def standings(entries: Iterable[Entry], started: bool) -> list[tuple[int, Entry]]:
    """Every entry with its rank, best first; before the start, all rank 1 by registration."""
    if not started:
        return [(1, entry) for entry in sorted(entries, key=lambda entry: entry.registration)]
    ordered = sorted(entries, key=entry_key)
    return [(rank, entry) for rank, entry in enumerate(ordered, start=1)]


def round_plan(players: int, advance_per_table: int, planned_rounds: int = 0) -> list[int]:
    """The tables of each round if every table is played (the bracket's shape, for display and
    tests): ``round_plan(64, 1) == [16, 4, 1]``."""
    if players < 1:
        raise ValueError("a tournament needs players")
    plan: list[int] = []
    entrants = players
    round_number = 1
    while True:
        seats = seat_round([str(index) for index in range(entrants)])
        plan.append(len(seats))
        if is_last_round(round_number, entrants, planned_rounds):
            return plan
        filled = [sum(1 for player in table if player != BOT) for table in seats]
        entrants = sum(advance_count(count, advance_per_table, False) for count in filled)
        round_number += 1


__all__ = [
    "BOT",
    "SEATS",
    "Entry",
    "MatchLine",
    "advance_count",
    "advancing",
    "entry_key",
    "is_final",
    "is_last_round",
    "line_key",
    "order_table",
    "round_plan",
    "seat_round",
    "standings",
    "table_count",
]
