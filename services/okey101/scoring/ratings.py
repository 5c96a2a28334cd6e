"""Player ratings with OpenSkill (the Plackett-Luce model of the ``openskill`` package).

- Modes: ``free_for_all`` (four players, each on their own: ranked by match total, lowest
  first, equal totals share a rank) and ``partners`` (two teams, seats 0+2 and 1+3, ranked by
  team total). A match is rated in the mode its rule set plays.
- Each player has a rating per mode for every preset together (``all``) and one per preset; a
  match moves both. Answers that name no preset (RecordMatch's rating changes, a player's
  history) show the ``all`` rating.
- Bots are not rated and do not rate: a bot seat is left out of its side (a team of a player
  and a bot is the player alone), and a match with fewer than two sides of players is not
  rated at all (a player cannot farm rating off bots).
- The displayed rating is the ordinal, mu - 3 sigma; a new player starts at mu 25, sigma 25/3
  (ordinal 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from openskill.models import PlackettLuce

FREE_FOR_ALL: Final = "free_for_all"
PARTNERS: Final = "partners"
ALL_PRESETS: Final = "all"

MODEL: Final = PlackettLuce()


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float
    matches: int = 0
    wins: int = 0

    @property
    def ordinal(self) -> float:
        return ordinal(self.mu, self.sigma)


def ordinal(mu: float, sigma: float) -> float:
    return mu - 3.0 * sigma


def initial() -> Rating:
    return Rating(MODEL.mu, MODEL.sigma)


@dataclass(frozen=True, slots=True)
class Side:
    """Players rated together (one in free-for-all, the players of a team with partners) and
    the side's rank (1 best; equal ranks are a tie)."""

    players: tuple[str, ...]
    rank: int


def sides(player_ids: Sequence[str], totals: Sequence[int], *, partners: bool) -> list[Side]:
    """The rated sides of a match from its seats' players ("" for a bot) and totals."""
    if partners:
        teams = [(0, 2), (1, 3)]
        team_totals = [totals[a] + totals[b] for a, b in teams]
        candidates = [
            Side(
                tuple(player_ids[seat] for seat in team if player_ids[seat]),
                1 + sum(1 for other in team_totals if other < team_totals[index]),
            )
            for index, team in enumerate(teams)
        ]
    else:
        candidates = [
            Side((player_ids[seat],), 1 + sum(1 for other in totals if other < totals[seat]))
            for seat in range(len(player_ids))
            if player_ids[seat]
        ]
    rated = [side for side in candidates if side.players]
    return rated if len(rated) >= 2 else []


def rate(rated: Sequence[Side], before: dict[str, Rating], winners: set[str]) -> dict[str, Rating]:
    """Every rated player's rating after the match (``before`` holds each one's rating)."""
    if not rated:
        return {}
    teams = [[MODEL.rating(before[p].mu, before[p].sigma) for p in side.players] for side in rated]
    ranks = [float(side.rank) for side in rated]
    updated = MODEL.rate(teams, ranks=ranks)
    after: dict[str, Rating] = {}
    for side, team in zip(rated, updated, strict=True):
        for player, new in zip(side.players, team, strict=True):
            old = before[player]
            after[player] = Rating(
                float(new.mu),
                float(new.sigma),
                old.matches + 1,
                old.wins + (1 if player in winners else 0),
            )
    return after


__all__ = [
    "ALL_PRESETS",
    "FREE_FOR_ALL",
    "MODEL",
    "PARTNERS",
    "Rating",
    "Side",
    "initial",
    "ordinal",
    "rate",
    "sides",
]
