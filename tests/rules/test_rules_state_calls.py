"""RulesService's engine state calls take a service's token only (issue #32).

DealHand, ApplyAction, ViewHand and ScoreHand take a whole hand state in and out. No frontend
calls them (the web client and the terminal client ask only for hints and validation; the
ingress does not route them) and the table plays with the engine in its own process, yet on a
directly reachable port they took a player's token with no rate limit: engine time anyone with a
guest could spend. Now a player's token is refused before any work, PERMISSION_DENIED
``TOKEN_WRONG_KIND``, while the hints and validation still take it. A real rules service on
127.0.0.1 port 0, called through the generated stubs.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from okey.v1 import common_pb2, rules_pb2, rules_pb2_grpc

from okey101.engine.deal import shuffled_deck
from okey101.platform.auth import JwksVerifier, SigningKey, TokenIssuer, jwks_of
from okey101.rules import ACCESS, register

from support.threaded_server import ThreadedServer

KEY = SigningKey.generate()
PLAYER = (("authorization", f"Bearer {TokenIssuer(KEY).issue('p-1', 'player')}"),)
SERVICE = (("authorization", f"Bearer {TokenIssuer(KEY).issue('table', 'service')}"),)
OYNA = common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_OYNA)


@pytest.fixture(scope="module")
def stub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    running = ThreadedServer(
        "rules", register, ACCESS, JwksVerifier(jwks_of(KEY)), tmp_path_factory.mktemp("rules")
    )
    channel = grpc.insecure_channel(f"127.0.0.1:{running.handle.port}")
    try:
        yield rules_pb2_grpc.RulesServiceStub(channel)
    finally:
        channel.close()
        running.close()


def _requests(stub: Any) -> dict[str, Any]:
    """A request each state call would serve (with a service's token)."""
    deck = [tile.id for tile in shuffled_deck(random.Random(3))]
    dealt = stub.DealHand(
        rules_pb2.DealHandRequest(rules=OYNA, dealer=0, deck_tile_ids=deck),
        metadata=SERVICE,
        timeout=10,
    )
    turn = dealt.state.turn
    discard = common_pb2.Action(
        discard=common_pb2.DiscardAction(tile_id=dealt.views[turn].rack[0].tile.id)
    )
    return {
        "DealHand": rules_pb2.DealHandRequest(rules=OYNA, dealer=0, deck_tile_ids=deck),
        "ApplyAction": rules_pb2.ApplyActionRequest(
            state=dealt.state, seat=turn, actions=[discard]
        ),
        "ViewHand": rules_pb2.ViewHandRequest(state=dealt.state, seat=1),
        "ScoreHand": rules_pb2.ScoreHandRequest(
            rules=OYNA,
            indicator_tile_id=dealt.state.indicator_tile_id,
            reason=common_pb2.HAND_END_REASON_STOCK_OUT,
            seats=[rules_pb2.ScoreHandSeat() for _ in range(4)],
        ),
    }


def test_the_engine_state_calls_refuse_a_players_token(
    stub: Any, refusal: Callable[[grpc.RpcError], Any]
) -> None:
    for method, request in _requests(stub).items():
        call = getattr(stub, method)
        call(request, metadata=SERVICE, timeout=10)  # served to a service: the request is good
        with pytest.raises(grpc.RpcError) as caught:
            call(request, metadata=PLAYER, timeout=10)
        said = refusal(caught.value)
        assert (said.code, said.reason) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "TOKEN_WRONG_KIND",
        ), method
        assert said.metadata["kind"] == "player"


def test_hints_and_validation_still_take_a_players_token(stub: Any) -> None:
    stub.ResolveRuleSet(rules_pb2.ResolveRuleSetRequest(rules=OYNA), metadata=PLAYER, timeout=10)
    answer = stub.ValidateMelds(
        rules_pb2.ValidateMeldsRequest(
            rules=OYNA,
            indicator_tile_id=1,
            groups=[common_pb2.TileGroup(tile_ids=[10, 11, 12])],
        ),
        metadata=PLAYER,
        timeout=10,
    )
    assert len(answer.verdicts) == 1


def test_the_protos_say_so() -> None:
    """The Auth: lines of rules.proto (what docs/api.md and the abuse tests read) agree."""
    text = (Path(__file__).resolve().parents[2] / "protos/okey/v1/rules.proto").read_text()
    for method in ("DealHand", "ApplyAction", "ViewHand", "ScoreHand"):
        before = text.split(f"rpc {method}(", 1)[0].rsplit("\n\n", 1)[-1]
        assert "Auth: service" in before and "player" not in before.split("Auth:", 1)[1], method
