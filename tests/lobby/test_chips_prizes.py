"""A tournament's prize table and who it pays (``lobby.chips.prizes``): pure, so checked by
example and by property."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from okey.v1 import lobby_pb2

from okey101.engine.errors import OkeyError
from okey101.lobby.chips.prizes import (
    Prize,
    prize_payments,
    prizes_from_json,
    prizes_from_request,
    prizes_to_json,
)


def _shares(*percents: int) -> list[Prize]:
    return [Prize(place=place, share_percent=p) for place, p in enumerate(percents, 1)]


def test_shares_of_the_pool_go_by_place_and_the_rest_to_the_house() -> None:
    paid = prize_payments(1000, _shares(50, 30), [(1, "a"), (2, "b"), (3, "c")])
    assert paid.from_pool == {"a": 500, "b": 300}
    assert paid.from_house == {}
    assert paid.to_house == 200


def test_players_tied_share_the_places_they_cover() -> None:
    # Two tied second cover places 2 and 3: (30 + 20)% of 999 = 499, 249 each, 1 left over.
    paid = prize_payments(999, _shares(50, 30, 20), [(1, "a"), (2, "b"), (2, "c"), (4, "d")])
    assert paid.from_pool == {"a": 499, "b": 249, "c": 249}
    assert paid.to_house == 999 - 499 - 249 - 249


def test_places_are_positions_whatever_numbers_the_ranks_use() -> None:
    shares = _shares(50, 30, 20)
    dense = prize_payments(1000, shares, [(1, "a"), (1, "b"), (2, "c")])
    competition = prize_payments(1000, shares, [(1, "a"), (1, "b"), (3, "c")])
    assert dense == competition
    assert dense.from_pool == {"a": 400, "b": 400, "c": 200}


def test_fixed_prizes_come_from_the_house_whatever_the_pool() -> None:
    prizes = [Prize(place=1, amount=700), Prize(place=2, share_percent=100)]
    paid = prize_payments(0, prizes, [(1, "a"), (2, "b")])
    assert paid.from_house == {"a": 700}
    assert paid.from_pool == {}
    assert paid.to_house == 0


@given(
    pool=st.integers(0, 10**9),
    # As CreateTournament allows them: shares of at most 100% together (BAD_PRIZE beyond).
    percents=st.lists(st.integers(1, 40), max_size=3).filter(lambda shares: sum(shares) <= 100),
    ranks=st.lists(st.integers(1, 6), min_size=1, max_size=8),
)
def test_the_pool_always_ends_empty_and_only_prize_places_are_paid(
    pool: int, percents: list[int], ranks: list[int]
) -> None:
    ranking = sorted((rank, f"p{index}") for index, rank in enumerate(ranks))
    prizes = _shares(*percents)
    paid = prize_payments(pool, prizes, ranking)
    assert sum(paid.from_pool.values()) + paid.to_house == pool
    assert paid.to_house >= 0
    places = {prize.place for prize in prizes}
    # A player's places are the positions their tied group takes, counted from the front.
    better = {player: sum(r < rank for r, _ in ranking) for rank, player in ranking}
    tied = {rank: ranks.count(rank) for rank in ranks}
    rank_of = {player: rank for rank, player in ranking}
    for player in paid.from_pool:
        first = better[player] + 1
        assert places & set(range(first, first + tied[rank_of[player]]))


def test_a_prize_table_round_trips_and_bad_ones_are_refused() -> None:
    asked = [
        lobby_pb2.TournamentPrize(place=2, share_percent=30),
        lobby_pb2.TournamentPrize(place=1, amount=500),
    ]
    table = prizes_from_request(asked, 16)
    assert [prize.place for prize in table] == [1, 2]
    assert prizes_from_json(prizes_to_json(table)) == table
    bad = [
        [lobby_pb2.TournamentPrize(place=0, amount=5)],
        [lobby_pb2.TournamentPrize(place=17, amount=5)],
        [
            lobby_pb2.TournamentPrize(place=1, amount=5),
            lobby_pb2.TournamentPrize(place=1, amount=6),
        ],
        [lobby_pb2.TournamentPrize(place=1)],
        [lobby_pb2.TournamentPrize(place=1, amount=10**13)],
        [
            lobby_pb2.TournamentPrize(place=1, share_percent=70),
            lobby_pb2.TournamentPrize(place=2, share_percent=40),
        ],
    ]
    for prizes in bad:
        with pytest.raises(OkeyError) as refused:
            prizes_from_request(prizes, 16)
        assert refused.value.code == "BAD_PRIZE"
