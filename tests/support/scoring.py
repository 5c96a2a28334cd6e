"""Scoring for tests: matches the engine played (seeded ``RandomPlayer``s on shuffled deals,
added up by the engine's ``match``, so the points are genuine), the requests the table would
send for them (``MatchPlan``), and ScoringService in-process through the platform (``scoring``:
``ServerHandle`` on 127.0.0.1 port 0, its auth, error mapping and interceptors included), called
with tokens signed by ``ISSUER``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import random
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from okey.v1 import common_pb2, scoring_pb2, scoring_pb2_grpc
from sqlalchemy import func, select

from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.hand import HandState
from okey101.engine.match import MatchState, new_match, record_hand
from okey101.engine.playout import RandomPlayer, play_out
from okey101.engine.result import EndReason
from okey101.engine.rules import RuleSet
from okey101.platform import convert
from okey101.platform.auth import JwksVerifier, SigningKey, TokenIssuer, jwks_of
from okey101.platform.config import settings_for_tests
from okey101.platform.database import Database
from okey101.platform.errors import DOMAIN
from okey101.platform.server import ServerHandle
from okey101.scoring import ACCESS, ScoringServicer, register

KEY = SigningKey.generate()
ISSUER = TokenIssuer(KEY)
SERVICE_AUTH = (("authorization", f"Bearer {ISSUER.issue('table', 'service', ttl_seconds=3600)}"),)
#: Hand seeds whose playouts end in a doubled finish (oyna): a pairs opener finishing.
DOUBLED_SEED = 268


def player_auth(player_id: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {ISSUER.issue(player_id, 'player', ttl_seconds=3600)}"),)


# ---------------------------------------------------------------------------------------------
# Matches played by the engine


@dataclass(frozen=True)
class Played:
    """A match the engine played: each hand's final state, and the match as it added them."""

    rules: RuleSet
    finals: tuple[HandState, ...]
    match: MatchState


def play_hand(rules: RuleSet, dealer: int, seed: int) -> HandState:
    state = deal(rules, dealer, shuffled_deck(random.Random(seed)))
    players = [RandomPlayer(random.Random(seed * 10 + seat)) for seat in range(4)]
    final, _ = play_out(state, players)
    return final


def play_match(rules: RuleSet, first_seed: int) -> Played:
    match = new_match(rules)
    finals = []
    seed = first_seed
    while not match.ended:
        final = play_hand(rules, match.dealer, seed)
        assert final.result is not None
        finals.append(final)
        match = record_hand(match, final.result)
        seed += 1
    return Played(rules, tuple(finals), match)


@functools.cache
def oyna_match() -> Played:
    played = play_match(RuleSet.preset("oyna"), DOUBLED_SEED)
    first = played.finals[0].result
    assert first is not None and first.finish is not None and first.finish.multiplier == 2, (
        "the seeded first hand no longer finishes doubled: pick a new DOUBLED_SEED"
    )
    assert max(played.match.totals) >= 1000
    return played


@functools.cache
def boombala_match(partners: bool) -> Played:
    rules = RuleSet.preset("boombala").with_overrides({"match_hands": 3, "partners": partners})
    return play_match(rules, 7_000 if partners else 8_000)


@functools.cache
def one_hand_matches() -> tuple[Played, ...]:
    """Single-hand boombala matches (any seeds whose hand is not void), for quick ratings."""
    rules = RuleSet.preset("boombala").with_overrides({"match_hands": 1})
    return tuple(play_match(rules, seed) for seed in range(20_000, 20_040, 4))


@functools.cache
def tied_match() -> Played:
    """A single-hand match whose lowest total two seats share."""
    rules = RuleSet.preset("boombala").with_overrides({"match_hands": 1})
    for seed in range(30_000, 31_000):
        final = play_hand(rules, 0, seed)
        assert final.result is not None
        if final.result.reason is EndReason.VOID:
            continue
        scores = sorted(final.result.scores)
        if scores[0] == scores[1]:
            return play_match(rules, seed)
    raise AssertionError("no tied hand among the seeds searched")


# ---------------------------------------------------------------------------------------------
# Requests


def seat_players(prefix: str, bots: Sequence[int] = ()) -> list[scoring_pb2.SeatPlayer]:
    return [
        scoring_pb2.SeatPlayer(seat=seat, bot=True, display_name=f"bot {seat}")
        if seat in bots
        else scoring_pb2.SeatPlayer(
            seat=seat, player_id=f"{prefix}-p{seat}", display_name=f"{prefix} {seat}"
        )
        for seat in range(4)
    ]


def deal_record(hand_id: str) -> common_pb2.DealRecord:
    seed = hashlib.sha256(hand_id.encode()).hexdigest()
    return common_pb2.DealRecord(
        hand_id=hand_id,
        server_seed_sha256=hashlib.sha256(bytes.fromhex(seed)).hexdigest(),
        player_seeds=["", "ab12", "", ""],
        server_seed=seed,
    )


@dataclass
class MatchPlan:
    """The requests the table would send for one played match."""

    played: Played
    match_id: str
    seats: list[scoring_pb2.SeatPlayer]
    tournament_id: str = ""
    tournament_round: int = 0
    table_id: str = field(default="")

    def __post_init__(self) -> None:
        self.table_id = self.table_id or f"table-{self.match_id}"

    def hand_id(self, number: int) -> str:
        return f"{self.match_id}-h{number}"

    def hand(self, number: int, request_id: str | None = None) -> scoring_pb2.RecordHandRequest:
        final = self.played.finals[number - 1]
        hand_id = self.hand_id(number)
        return scoring_pb2.RecordHandRequest(
            request_id=request_id or f"rh-{hand_id}",
            hand_id=hand_id,
            table_id=self.table_id,
            match_id=self.match_id,
            tournament_id=self.tournament_id,
            hand_number=number,
            seats=self.seats,
            final_state=convert.hand_state_to_proto(final),
            deal=deal_record(hand_id),
            end_time=Timestamp(seconds=1_700_000_000 + number * 600),
        )

    def hands(self) -> list[scoring_pb2.RecordHandRequest]:
        return [self.hand(number) for number in range(1, len(self.played.finals) + 1)]

    def result(self) -> scoring_pb2.RecordMatchRequest:
        match = self.played.match
        result = common_pb2.MatchResult(
            match_id=self.match_id,
            table_id=self.table_id,
            hands_played=match.hands_played,
            hand_ids=[self.hand_id(n) for n in range(1, len(self.played.finals) + 1)],
            ended_at=Timestamp(seconds=1_700_000_000 + len(self.played.finals) * 600),
        )
        for seat in self.seats:
            result.seats.add(
                seat=seat.seat,
                player_id=seat.player_id,
                display_name=seat.display_name,
                total=match.totals[seat.seat],
                winner=seat.seat in match.winners,
            )
        if self.played.rules.partners:
            result.team_totals.extend(match.team_totals())
        return scoring_pb2.RecordMatchRequest(
            request_id=f"rm-{self.match_id}",
            result=result,
            rules=convert.rules_to_proto(self.played.rules),
            seats=self.seats,
            tournament_id=self.tournament_id,
            tournament_round=self.tournament_round,
        )


# ---------------------------------------------------------------------------------------------
# The service


@dataclass
class Service:
    stub: Any
    database: Database

    async def record_hand(
        self, request: scoring_pb2.RecordHandRequest
    ) -> scoring_pb2.RecordHandResponse:
        answer: scoring_pb2.RecordHandResponse = await self.stub.RecordHand(
            request, metadata=SERVICE_AUTH, timeout=30
        )
        return answer

    async def record_match(
        self, request: scoring_pb2.RecordMatchRequest
    ) -> scoring_pb2.RecordMatchResponse:
        answer: scoring_pb2.RecordMatchResponse = await self.stub.RecordMatch(
            request, metadata=SERVICE_AUTH, timeout=30
        )
        return answer

    async def record(self, plan: MatchPlan) -> scoring_pb2.RecordMatchResponse:
        for request in plan.hands():
            await self.record_hand(request)
        return await self.record_match(plan.result())

    async def count(self, table: Any, **where: str) -> int:
        query = select(func.count()).select_from(table)
        for column, value in where.items():
            query = query.where(table.c[column] == value)
        async with self.database.read() as session:
            return int((await session.execute(query)).scalar_one())


@contextlib.asynccontextmanager
async def scoring(
    url: str, var_dir: Path, clock: Callable[[], float] = time.time
) -> AsyncIterator[Service]:
    """The service over ``url``; ``clock`` is its now (which week or month is current)."""
    database = Database(url)
    servicer = ScoringServicer(database, clock)
    handle = await ServerHandle.start(
        "scoring",
        lambda server: register(server, servicer),
        settings_for_tests("scoring", var_dir=var_dir),
        ready=servicer.prepare,
        access=ACCESS,
        verifier=JwksVerifier(jwks_of(KEY)),
    )
    channel = grpc.aio.insecure_channel(handle.target)
    try:
        yield Service(scoring_pb2_grpc.ScoringServiceStub(channel), database)
    finally:
        await channel.close()
        await handle.stop(grace=0)
        await database.dispose()


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


async def refused(call: Any, request: Any, metadata: Any = SERVICE_AUTH) -> tuple[Any, str]:
    """The status code and ErrorInfo reason of a call that must fail."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(request, metadata=metadata, timeout=30)
    error = caught.value
    assert error.code() != grpc.StatusCode.INTERNAL, error.details()
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    infos = []
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            infos.append(info)
    assert len(infos) == 1 and infos[0].domain == DOMAIN
    return error.code(), infos[0].reason
