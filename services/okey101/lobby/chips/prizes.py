"""A tournament's prizes (docs/chips.md, Tournaments): the prize table set at creation, and who
is paid what once the final ranking is known. Pure: the ledger moves what ``prize_payments``
decides.

A place wins a fixed amount (guaranteed by the house: new chips, like a grant) or a share of
the prize pool (the entry fees paid). Players tied at a place share equally the prizes of the
places they cover (two tied second share the prizes of places 2 and 3). What a division leaves
over, and whatever of the pool no share takes, goes to the house's fees, so the pool always ends
empty.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from okey.v1 import lobby_pb2

from okey101.lobby.errors import Invalid

#: The most places a prize table may name.
MAX_PRIZES: Final = 64
#: The largest fixed prize (chips are int64 in the ledger: far below its limit).
MAX_PRIZE_AMOUNT: Final = 10**12


@dataclass(frozen=True)
class Prize:
    """What one final place wins: ``amount`` chips from the house, or ``share_percent`` of the
    pool."""

    place: int
    amount: int = 0
    share_percent: int = 0


@dataclass(frozen=True)
class Payments:
    """Who is paid what: ``from_pool`` (shares of the pool) and ``from_house`` (fixed prizes),
    by player; ``to_house`` what the pool has left."""

    from_pool: Mapping[str, int]
    from_house: Mapping[str, int]
    to_house: int


def prizes_from_request(
    prizes: Sequence[lobby_pb2.TournamentPrize], max_players: int
) -> list[Prize]:
    """The prize table a CreateTournament asks for, checked: INVALID_ARGUMENT BAD_PRIZE
    naming the first place that breaks a rule (and the shares' total)."""
    table: list[Prize] = []
    seen: set[int] = set()
    shares = 0
    for prize in prizes:
        kind = prize.WhichOneof("prize")
        if kind == "share_percent":
            shares += prize.share_percent
        good = (
            len(table) < MAX_PRIZES
            and 1 <= prize.place <= max_players
            and prize.place not in seen
            and (
                (kind == "amount" and 1 <= prize.amount <= MAX_PRIZE_AMOUNT)
                or (kind == "share_percent" and prize.share_percent >= 1 and shares <= 100)
            )
        )
        if not good:
            raise Invalid(
                "BAD_PRIZE",
                place=prize.place,
                max_players=max_players,
                shares=shares,
                maximum=MAX_PRIZES,
            )
        seen.add(prize.place)
        table.append(
            Prize(place=prize.place, amount=prize.amount, share_percent=prize.share_percent)
        )
    return sorted(table, key=lambda prize: prize.place)


def prizes_to_json(prizes: Iterable[Prize]) -> str:
    return json.dumps(
        [{"place": p.place, "amount": p.amount, "share_percent": p.share_percent} for p in prizes]
    )


def prizes_from_json(text: str) -> list[Prize]:
    return [Prize(**entry) for entry in json.loads(text or "[]")]


def prize_messages(prizes: Iterable[Prize]) -> list[lobby_pb2.TournamentPrize]:
    return [
        lobby_pb2.TournamentPrize(place=p.place, amount=p.amount)
        if p.amount
        else lobby_pb2.TournamentPrize(place=p.place, share_percent=p.share_percent)
        for p in prizes
    ]


def prize_payments(
    pool: int, prizes: Sequence[Prize], ranking: Sequence[tuple[int, str]]
) -> Payments:
    """Who is paid what from ``pool`` and the house, by ``ranking`` ((rank, player id), best
    first, tied players sharing a rank; module docstring)."""
    by_place = {prize.place: prize for prize in prizes}
    from_pool: dict[str, int] = {}
    from_house: dict[str, int] = {}
    paid_from_pool = 0
    tied: dict[int, list[str]] = {}
    for rank, player_id in sorted(ranking):
        tied.setdefault(rank, []).append(player_id)
    # A group's first place is one after everyone ranked better, whatever numbers the ranks
    # use (1, 1, 3 or 1, 1, 2): places are positions, so no place is paid twice.
    first = 1
    for players in tied.values():
        places = range(first, first + len(players))
        first += len(players)
        covered = [by_place[place] for place in places if place in by_place]
        pool_part = sum(pool * prize.share_percent // 100 for prize in covered)
        house_part = sum(prize.amount for prize in covered)
        for player_id in players:
            if pool_part // len(players):
                from_pool[player_id] = pool_part // len(players)
            if house_part // len(players):
                from_house[player_id] = house_part // len(players)
        paid_from_pool += pool_part // len(players) * len(players)
        # A fixed prize's leftover of the division is simply not created.
    return Payments(from_pool=from_pool, from_house=from_house, to_house=pool - paid_from_pool)


__all__ = [
    "MAX_PRIZES",
    "MAX_PRIZE_AMOUNT",
    "Payments",
    "Prize",
    "prize_messages",
    "prize_payments",
    "prizes_from_json",
    "prizes_from_request",
    "prizes_to_json",
]
