"""BotService over real gRPC: the service started in-process through the platform on 127.0.0.1
port 0 (its auth, error mapping, interceptors and metrics included), called through the
generated stubs with tokens signed by the platform's auth.

Positions come from seeded random playouts of the three presets: every turn's start (PHASE_DRAW,
or PHASE_FIRST for the starting seat) and every turn after its draw or take (PHASE_PLAY), with
the hand's events as the seat received them. For every level each answer is checked against the
REAL state (the engine's ``apply``, action by action), for shape (one draw or take; a turn that
ends with its one discard; or a lone give-back where the rules have one), for determinism (the
same request twice) and for hidden information (a second real state with the other racks and
the stock dealt differently gives the same view, hence the same request and answer, which must
apply there too). The conversions the service reads with (``seat_view_from_proto``,
``event_from_proto``) are checked to invert the ones the table writes with.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import random
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from okey.v1 import bot_pb2, bot_pb2_grpc, common_pb2

from okey101.bot import ACCESS, SERVICE_NAME, register
from okey101.bot.service import LEVELS as SERVED_LEVELS
from okey101.bot.service import METHOD_ACCESS, expert_budget
from okey101.engine.actions import Action, Discard, Draw, GiveBack, TakeDiscard
from okey101.engine.bots.expert import ExpertBudget
from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.errors import OkeyError
from okey101.engine.hand import HandState, Phase, apply
from okey101.engine.playout import RandomPlayer
from okey101.engine.rules import LeftDiscardPolicy, RuleSet
from okey101.engine.seat import Seat
from okey101.engine.sentences import render
from okey101.engine.view import view
from okey101.lobby.rpc import checks
from okey101.platform import convert
from okey101.platform.auth import JwksVerifier, SigningKey, TokenIssuer, dev_signing_key, jwks_of
from okey101.platform.config import load_settings
from okey101.services import built_services
from okey101.stack import free_ports, wait_serving_sync

from support.status import details
from support.threaded_server import ThreadedServer

ROOT = Path(__file__).resolve().parents[2]
KEY = SigningKey.generate()
ISSUER = TokenIssuer(KEY)
# Made as the module is collected: a day long, so a slow run's last tests still hold a live one.
SERVICE_TOKEN = ISSUER.issue("table", "service", ttl_seconds=24 * 3600)
PLAYER_TOKEN = ISSUER.issue("player-1", "player", ttl_seconds=24 * 3600)
AUTH = (("authorization", f"Bearer {SERVICE_TOKEN}"),)
PRESETS = ("oyna", "boombala", "north_sultan")
LEVELS = (
    common_pb2.BOT_LEVEL_RANDOM,
    common_pb2.BOT_LEVEL_EASY,
    common_pb2.BOT_LEVEL_NORMAL,
    common_pb2.BOT_LEVEL_HARD,
)
#: The expert's budget in these tests: a few rollouts and no time bound (deterministic).
TEST_BUDGET = ExpertBudget(playouts=12, seconds=None)
#: Hands played per preset for the positions (about 45 positions a hand).
HANDS_PER_PRESET = 16

# ---------------------------------------------------------------------------------------------
# The server, once per module, in a thread of its own; the tests are plain blocking clients.


def start_server(var_dir: Any) -> ThreadedServer:
    return ThreadedServer(
        "bot",
        lambda server: register(server, TEST_BUDGET),
        ACCESS,
        JwksVerifier(jwks_of(KEY)),
        var_dir,
    )


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadedServer]:
    server = start_server(tmp_path_factory.mktemp("bot"))
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def channel(running: ThreadedServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(running.handle.target) as opened:
        yield opened


@pytest.fixture(scope="module")
def stub(channel: grpc.Channel) -> Any:
    return bot_pb2_grpc.BotServiceStub(channel)


def rejected(stub: Any, request: bot_pb2.NextStepRequest, metadata: Any = AUTH) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        stub.NextStep(request, metadata=metadata, timeout=10)
    error = caught.value
    assert error.code() != grpc.StatusCode.INTERNAL, error.details()
    return error


def scrape(port: int) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """The metrics endpoint's samples: (name, labels) -> value."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


# ---------------------------------------------------------------------------------------------
# Positions


@dataclass(frozen=True)
class Position:
    """A real state whose seat to move must decide, and the events that seat has received."""

    state: HandState
    history: tuple[common_pb2.Event, ...]
    label: str

    @property
    def seat(self) -> int:
        return self.state.turn


def _hand_positions(preset: str, number: int) -> list[Position]:
    rules = RuleSet.preset(preset)
    rng = random.Random(104_729 * (PRESETS.index(preset) + 1) + number)
    state = deal(rules, number % 4, shuffled_deck(rng))
    players = [RandomPlayer(random.Random(rng.randrange(2**32))) for _ in range(4)]
    received: list[list[common_pb2.Event]] = [[] for _ in range(4)]
    out: list[Position] = []
    turns = 0
    while not state.ended:
        turns += 1
        seat = state.turn
        out.append(Position(state, tuple(received[seat]), f"{preset}#{number} turn {turns}"))
        steps = players[seat].turn(state)
        for index, (_action, after, events) in enumerate(steps):
            for reader in range(4):
                received[reader].extend(
                    convert.event_to_proto(event, after, for_seat=reader) for event in events
                )
            if index == 0 and not after.ended and after.turn == seat:
                label = f"{preset}#{number} turn {turns} play"
                out.append(Position(after, tuple(received[seat]), label))
        state = steps[-1][1]
    return out


@functools.cache
def positions() -> tuple[Position, ...]:
    return tuple(
        position
        for preset in PRESETS
        for number in range(HANDS_PER_PRESET)
        for position in _hand_positions(preset, number)
    )


def request_for(
    state: HandState,
    level: int,
    *,
    seed: int,
    history: tuple[common_pb2.Event, ...] = (),
    seat: int | None = None,
) -> bot_pb2.NextStepRequest:
    seat = state.turn if seat is None else seat
    return bot_pb2.NextStepRequest(
        view=convert.seat_view_to_proto(state, seat),
        phase=convert.phase_to_proto(state.phase),
        level=level,  # type: ignore[arg-type]
        seed=seed,
        history=history,
    )


def hidden_twin(state: HandState, seat: int, rng: random.Random) -> HandState:
    """The same position with the tiles ``seat`` cannot see (the other racks, the stock) dealt
    again at random, each rack and the stock keeping its size."""
    hidden = [
        tile for index, other in enumerate(state.seats) if index != seat for tile in other.rack
    ]
    hidden += state.stock
    rng.shuffle(hidden)
    seats: list[Seat] = []
    for index, other in enumerate(state.seats):
        if index == seat:
            seats.append(other)
            continue
        rack, hidden = tuple(hidden[: len(other.rack)]), hidden[len(other.rack) :]
        seats.append(dataclasses.replace(other, rack=rack))
    return dataclasses.replace(state, seats=tuple(seats), stock=tuple(hidden))


def play(state: HandState, seat: int, actions: list[Action], label: str) -> HandState:
    """``actions`` applied in order to the real state; the test fails at the first refused."""
    for index, action in enumerate(actions):
        try:
            state, _events = apply(state, seat, action)
        except OkeyError as error:
            pytest.fail(f"{label}: action {index} {action} refused: {error.code} {error.params}")
    return state


def check_shape(before: HandState, after: HandState, actions: list[Action], label: str) -> None:
    """One draw or take in the draw phase; else the turn's one discard last, or a lone
    give-back where the rules have one."""
    seat = before.turn
    if before.phase is Phase.DRAW:
        assert len(actions) == 1 and isinstance(actions[0], (Draw, TakeDiscard)), label
        assert after.ended or (after.turn == seat and after.phase is Phase.PLAY), label
        return
    if actions == [GiveBack()]:
        assert before.rules.left_discard is LeftDiscardPolicy.GIVE_BACK_FOR_PENALTY, label
        assert after.turn == seat and after.phase is Phase.DRAW, label
        return
    assert actions and isinstance(actions[-1], Discard), (label, actions)
    assert sum(isinstance(action, Discard) for action in actions) == 1, (label, actions)
    assert not any(isinstance(action, (Draw, TakeDiscard, GiveBack)) for action in actions)
    assert after.ended or after.turn != seat, label


def answered(response: bot_pb2.NextStepResponse) -> list[Action]:
    return [
        convert.action_from_proto(action, field=f"actions[{index}]")
        for index, action in enumerate(response.actions)
    ]


# ---------------------------------------------------------------------------------------------
# Serving


def test_serving_the_one_call_service_tokens_only(channel: grpc.Channel) -> None:
    health: Any = health_pb2_grpc.HealthStub(channel)
    answer = health.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=5)
    assert answer.status == health_pb2.HealthCheckResponse.SERVING
    methods = {m.name for m in bot_pb2.DESCRIPTOR.services_by_name["BotService"].methods}
    assert set(METHOD_ACCESS) == methods
    assert ACCESS.accepts(f"/{SERVICE_NAME}/NextStep") == frozenset({"service"})
    assert "bot" in built_services()


def test_a_player_token_is_permission_denied_and_no_token_unauthenticated(stub: Any) -> None:
    request = request_for(positions()[0].state, common_pb2.BOT_LEVEL_EASY, seed=1)
    player = (("authorization", f"Bearer {PLAYER_TOKEN}"),)
    error = rejected(stub, request, player)
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED
    assert details(error)[0].reason == "TOKEN_WRONG_KIND"
    error = rejected(stub, request, ())
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert details(error)[0].reason == "TOKEN_MISSING"


# ---------------------------------------------------------------------------------------------
# Every answer legal in the real state, shaped as the phase requires, deterministic, blind


def test_positions_cover_both_phases_and_every_preset() -> None:
    found = positions()
    assert len(found) >= 2000
    for preset in PRESETS:
        phases = {p.state.phase for p in found if p.state.rules.name == preset}
        assert phases == {Phase.FIRST, Phase.DRAW, Phase.PLAY}, preset
    taken = [p for p in found if p.state.this_turn.taken is not None]
    assert taken, "no position after a take"


@pytest.mark.parametrize("level", LEVELS, ids=common_pb2.BotLevel.Name)
def test_every_answer_applies_to_the_real_state(stub: Any, level: int) -> None:
    rng = random.Random(level)
    asked = 0
    for number, position in enumerate(positions()):
        state, seat, label = position.state, position.seat, position.label
        # Half the requests carry the seat's history (the stronger levels remember with it).
        history = position.history if number % 2 == 0 else ()
        request = request_for(state, level, seed=number, history=history)
        response = stub.NextStep(request, metadata=AUTH, timeout=10)
        asked += 1
        assert response.level == level and response.reason, label
        actions = answered(response)
        after = play(state, seat, actions, label)
        check_shape(state, after, actions, label)
        if number % 4 == 0:
            # Deterministic: the same request, the same answer.
            again = stub.NextStep(request, metadata=AUTH, timeout=10)
            assert again == response, label
        if number % 6 == 0:
            # Blind: another real state behind the same view is the same request, and the
            # answer applies there as well.
            twin = hidden_twin(state, seat, rng)
            assert view(twin, seat) == view(state, seat)
            assert request_for(twin, level, seed=number, history=history) == request
            check_shape(twin, play(twin, seat, actions, f"{label} (twin)"), actions, label)
    assert asked >= 2000


def _mid_turn_positions(preset: str, hands: int) -> list[Position]:
    """Positions in the middle of a play phase: the seat has already opened or laid off this
    turn (a player who timed out half-way through a turn), as the table may ask for them."""
    out: list[Position] = []
    for number in range(hands):
        rng = random.Random(number)
        state = deal(RuleSet.preset(preset), number % 4, shuffled_deck(rng))
        players = [RandomPlayer(random.Random(rng.randrange(2**32))) for _ in range(4)]
        while not state.ended:
            seat = state.turn
            steps = players[seat].turn(state)
            for _action, after, _events in steps[:-1]:
                progress = after.this_turn
                if after.turn == seat and (progress.opened or progress.laid_off):
                    out.append(Position(after, (), f"{preset}#{number} mid-turn"))
            state = steps[-1][1]
    return out


def test_answers_half_way_through_a_turn_apply(stub: Any) -> None:
    """A seat whose player timed out after opening or laying off: the view carries the turn so
    far, so the bot knows a lay-off waits for the next turn (Boombala) or the pairs opener's
    limit is reached (North Sultan)."""
    found = _mid_turn_positions("boombala", 12) + _mid_turn_positions("north_sultan", 12)
    assert len(found) >= 50
    refused = []
    for number, position in enumerate(found):
        request = request_for(position.state, common_pb2.BOT_LEVEL_NORMAL, seed=number)
        actions = answered(stub.NextStep(request, metadata=AUTH, timeout=10))
        state = position.state
        for action in actions:
            try:
                state, _events = apply(state, position.seat, action)
            except OkeyError as error:
                refused.append((position.label, str(action), error.code))
                break
    assert not refused, refused[:5]


def test_expert_answers_apply_blind_and_deterministic(stub: Any) -> None:
    """BOT_LEVEL_EXPERT (a sample of the positions: its answers cost rollouts): the answer
    applies to the real state and to a twin behind the same view, names the expert level, and
    the same request gets the same answer."""
    rng = random.Random(5)
    asked = 0
    for number, position in enumerate(positions()[::40]):
        state, seat, label = position.state, position.seat, position.label
        history = position.history if number % 2 == 0 else ()
        request = request_for(state, common_pb2.BOT_LEVEL_EXPERT, seed=number, history=history)
        response = stub.NextStep(request, metadata=AUTH, timeout=30)
        asked += 1
        assert response.level == common_pb2.BOT_LEVEL_EXPERT
        assert response.reason.startswith("expert:"), label
        actions = answered(response)
        check_shape(state, play(state, seat, actions, label), actions, label)
        twin = hidden_twin(state, seat, rng)
        assert request_for(twin, common_pb2.BOT_LEVEL_EXPERT, seed=number, history=history) == (
            request
        )
        check_shape(twin, play(twin, seat, actions, f"{label} (twin)"), actions, label)
        if number % 3 == 0:
            assert stub.NextStep(request, metadata=AUTH, timeout=30) == response, label
    assert asked >= 40


def test_every_level_is_served_and_accepted_by_the_lobby() -> None:
    """Each BotLevel value is a level the bot service plays, and one the lobby's tables and
    tournaments accept for their bots."""
    values = set(common_pb2.BotLevel.values())
    assert set(SERVED_LEVELS) == values
    assert set(checks.BOT_LEVELS) == values
    assert common_pb2.BOT_LEVEL_EXPERT in values


def test_the_expert_budget_is_configured_by_flags_and_environment() -> None:
    default = expert_budget(load_settings("bot", {}, {}))
    assert (default.seconds, default.playouts) == (0.8, 96)
    given = expert_budget(
        load_settings("bot", {"expert_seconds": "0.3"}, {"OKEY_BOT_EXPERT_PLAYOUTS": "40"})
    )
    assert (given.seconds, given.playouts) == (0.3, 40)


def test_unspecified_level_plays_normal(stub: Any) -> None:
    for number, position in enumerate(positions()[:60]):
        unspecified = request_for(position.state, common_pb2.BOT_LEVEL_UNSPECIFIED, seed=number)
        normal = request_for(position.state, common_pb2.BOT_LEVEL_NORMAL, seed=number)
        first = stub.NextStep(unspecified, metadata=AUTH, timeout=10)
        assert first.level == common_pb2.BOT_LEVEL_NORMAL
        assert first == stub.NextStep(normal, metadata=AUTH, timeout=10)


def test_hidden_tiles_differ_between_twins() -> None:
    """The twins of the blindness check do hide something different."""
    rng = random.Random(5)
    differing = 0
    for position in positions()[:50]:
        twin = hidden_twin(position.state, position.seat, rng)
        differing += twin != position.state
    assert differing >= 45


# ---------------------------------------------------------------------------------------------
# Refused requests


def _live(phase: Phase) -> Position:
    return next(p for p in positions() if p.state.phase is phase)


def test_a_phase_that_is_not_the_views_is_invalid_argument(stub: Any) -> None:
    state = _live(Phase.DRAW).state
    request = request_for(state, common_pb2.BOT_LEVEL_HARD, seed=3)
    request.phase = common_pb2.PHASE_PLAY
    error = rejected(stub, request)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, _message = details(error)
    assert info.reason == "BAD_FIELD" and info.metadata["field"] == "phase"
    assert info.metadata["view_phase"] == "PHASE_DRAW"
    request.phase = common_pb2.PHASE_UNSPECIFIED
    assert details(rejected(stub, request))[0].metadata["field"] == "phase"


@pytest.mark.parametrize("phase", [Phase.DRAW, Phase.PLAY])
def test_a_seat_not_to_move_is_failed_precondition(stub: Any, phase: Phase) -> None:
    state = _live(phase).state
    other = (state.turn + 1) % 4
    request = request_for(state, common_pb2.BOT_LEVEL_NORMAL, seed=3, seat=other)
    error = rejected(stub, request)
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    info, _message = details(error)
    assert info.reason == "NOT_YOUR_TURN" and info.metadata["turn"] == str(state.turn)
    request.locale = "tr-TR"
    _info, turkish = details(rejected(stub, request))
    assert turkish.message == render("NOT_YOUR_TURN", "tr", {"turn": state.turn})


def test_an_ended_hand_is_failed_precondition(stub: Any) -> None:
    position = positions()[-1]
    state = position.state
    actions = RandomPlayer(random.Random(1)).turn(state)
    ended = actions[-1][1]
    assert ended.ended
    request = request_for(ended, common_pb2.BOT_LEVEL_NORMAL, seed=1)
    error = rejected(stub, request)
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert details(error)[0].reason == "HAND_OVER"


def _malformed(request: bot_pb2.NextStepRequest, case: str) -> None:
    view_message = request.view
    if case == "spectator":
        view_message.ClearField("seat")
    elif case == "no_view":
        request.ClearField("view")
    elif case == "unknown_tile":
        view_message.rack[0].tile.id = 106
    elif case == "tile_twice":
        view_message.seats[2].discards.add().id = view_message.rack[0].tile.id
    elif case == "indicator_again":
        view_message.rack[0].tile.id = view_message.indicator.id
    elif case == "three_seats":
        del view_message.seats[3]
    elif case == "seat_order":
        view_message.seats[1].seat = 2
    elif case == "bad_view_phase":
        view_message.phase = 99  # type: ignore[assignment]
        request.phase = 99  # type: ignore[assignment]
    elif case == "bad_opened_as":
        view_message.seats[1].opened_as = 42  # type: ignore[assignment]
    elif case == "bad_level":
        request.level = 9  # type: ignore[assignment]
    elif case == "seat_five":
        view_message.seat = 5
    elif case == "rules_version":
        view_message.rules_version = "okey101-rules/0"
    elif case == "okey":
        view_message.okey.number = view_message.okey.number % 13 + 1
    elif case == "rack_size":
        view_message.seats[view_message.seat].tile_count += 1
    elif case == "too_many_hidden":
        view_message.stock_count += 5
    elif case == "history_kind":
        request.history.add(kind=common_pb2.EVENT_KIND_UNSPECIFIED)
    elif case == "history_tile":
        request.history.add(kind=common_pb2.EVENT_KIND_DISCARDED, seat=0).tiles.add(id=300)
    elif case == "not_a_meld":
        view_message.table[0].meld.tiles[0].stands_for.number = 13
        view_message.table[0].meld.tiles[1].stands_for.number = 2
    else:
        raise AssertionError(case)


MALFORMED = {
    "no_view": ("INVALID_ARGUMENT", "BAD_FIELD"),
    "spectator": ("INVALID_ARGUMENT", "BAD_FIELD"),
    "unknown_tile": ("INVALID_ARGUMENT", "UNKNOWN_TILE"),
    "tile_twice": ("INVALID_ARGUMENT", "DUPLICATE_TILE_ID"),
    "indicator_again": ("INVALID_ARGUMENT", "TOO_MANY_COPIES"),
    "three_seats": ("INVALID_ARGUMENT", "WRONG_SEAT_COUNT"),
    "seat_order": ("INVALID_ARGUMENT", "BAD_FIELD"),
    "bad_view_phase": ("INVALID_ARGUMENT", "BAD_FIELD"),
    "bad_opened_as": ("INVALID_ARGUMENT", "BAD_FIELD"),
    "bad_level": ("INVALID_ARGUMENT", "BAD_FIELD"),
    "seat_five": ("INVALID_ARGUMENT", "UNKNOWN_SEAT"),
    "rules_version": ("FAILED_PRECONDITION", "UNKNOWN_RULES_VERSION"),
    "okey": ("INVALID_ARGUMENT", "BAD_FIELD"),
    "rack_size": ("INVALID_ARGUMENT", "BAD_FIELD"),
    "too_many_hidden": ("INVALID_ARGUMENT", "BAD_FIELD"),
    "history_kind": ("INVALID_ARGUMENT", "BAD_FIELD"),
    "history_tile": ("INVALID_ARGUMENT", "UNKNOWN_TILE"),
    "not_a_meld": ("INVALID_ARGUMENT", "NOT_A_MELD"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_requests_are_refused_with_the_engines_codes(stub: Any, case: str) -> None:
    position = next(
        p
        for p in positions()
        if p.state.phase is Phase.PLAY
        and any(item.meld.kind.value == "run" and not any(item.meld.wild) for item in p.state.table)
    )
    state = position.state
    request = request_for(state, common_pb2.BOT_LEVEL_HARD, seed=9, history=position.history)
    if case == "not_a_meld":
        run = next(
            index
            for index, item in enumerate(state.table)
            if item.meld.kind.value == "run" and not any(item.meld.wild)
        )
        request.view.table[0].CopyFrom(request.view.table[run])
        request.view.table[0].index = 0
        del request.view.table[1:]
        # The rack keeps its size: only the table changed, and no tile is in two places.
        request.view.ClearField("rack")
        request.view.seats[request.view.seat].tile_count = 0
        request.view.ClearField("turn_progress")
    _malformed(request, case)
    status, reason = MALFORMED[case]
    error = rejected(stub, request)
    assert (error.code().name, details(error)[0].reason) == (status, reason)


# ---------------------------------------------------------------------------------------------
# Metrics


def test_decision_time_is_measured_by_level_only(stub: Any, running: ThreadedServer) -> None:
    port = running.handle.metrics_port
    count = ("okey_bot_decision_seconds_count", frozenset({("level", "hard")}))
    before = scrape(port).get(count, 0.0)
    for number, position in enumerate(positions()[:7]):
        request = request_for(position.state, common_pb2.BOT_LEVEL_HARD, seed=number)
        stub.NextStep(request, metadata=AUTH, timeout=10)
    # A refused request decides nothing.
    wrong_seat = request_for(positions()[0].state, common_pb2.BOT_LEVEL_HARD, seed=1, seat=1)
    if positions()[0].state.turn != 1:
        rejected(stub, wrong_seat)
    samples = scrape(port)
    assert samples[count] - before == 7
    labels = {
        frozenset(key for key, _value in labelled)
        for name, labelled in samples
        if name.startswith("okey_bot_decision_seconds")
    }
    assert labels <= {frozenset({"level"}), frozenset({"level", "le"})}
    assert samples[("okey_bot_decision_seconds_sum", frozenset({("level", "hard")}))] > 0


# ---------------------------------------------------------------------------------------------
# The conversions the service reads with


@pytest.mark.parametrize("preset", PRESETS)
def test_views_and_events_round_trip_through_the_messages(preset: str) -> None:
    """engine view -> SeatView -> engine view is the identity for every seat of every state of
    seeded playouts (ended hands included), and so is event -> Event -> event (without the
    private tiles for every reader but the event's seat)."""
    views = events = 0
    for number in range(6):
        rules = RuleSet.preset(preset)
        rng = random.Random(number)
        state = deal(rules, number % 4, shuffled_deck(rng))
        players = [RandomPlayer(random.Random(rng.randrange(2**32))) for _ in range(4)]
        states = [state]
        while not state.ended:
            steps = players[state.turn].turn(state)
            for _action, after, caused in steps:
                states.append(after)
                for event in caused:
                    for reader in (None, 0, 1, 2, 3):
                        sent = convert.event_to_proto(event, after, for_seat=reader)
                        private = event.private if reader == event.seat else ()
                        expected = dataclasses.replace(event, private=private)
                        assert convert.event_from_proto(sent) == expected
                        events += 1
            state = steps[-1][1]
        for each in states:
            for seat in range(4):
                shown = convert.seat_view_to_proto(each, seat)
                assert convert.seat_view_from_proto(shown) == view(each, seat)
                views += 1
    assert views > 1000 and events > 1000


def test_a_custom_rule_set_round_trips_with_the_view() -> None:
    rules = RuleSet.preset("boombala").with_overrides({"penalty_points": 202, "partners": True})
    state = deal(rules, 1, shuffled_deck(random.Random(4)))
    message = convert.seat_view_to_proto(state, 2)
    assert convert.seat_view_from_proto(message) == view(state, 2)
    assert convert.rules_from_proto(message.rules) == rules


def test_table_fields_of_a_view_are_not_needed() -> None:
    """A view as the table service sends it (its own fields filled) reads the same."""
    state = positions()[3].state
    message = convert.seat_view_to_proto(state, state.turn)
    message.table_id, message.hand_id, message.hand_number = "t-1", "h-1", 3
    message.as_of_sequence, message.state_version = 99, 12
    message.match_totals.extend([0, 101, -4, 7])
    assert convert.seat_view_from_proto(message) == view(state, state.turn)


# ---------------------------------------------------------------------------------------------
# As operators run it


def test_okey101_serve_bot_starts_alone_answers_and_stops(tmp_path: Path) -> None:
    port, metrics = free_ports(2)
    issuer = TokenIssuer(dev_signing_key(tmp_path))  # the service finds the same key
    command = [
        sys.executable, "-m", "okey101.cli", "serve", "bot",
        "--port", str(port), "--metrics-port", str(metrics), "--var-dir", str(tmp_path),
    ]  # fmt: skip
    child = subprocess.Popen(
        command, cwd=ROOT, env={**os.environ, "OKEY_LOG_FORMAT": "json"}, stderr=subprocess.PIPE
    )
    try:
        wait_serving_sync(f"127.0.0.1:{port}", timeout=60)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as opened:
            health: Any = health_pb2_grpc.HealthStub(opened)
            status = health.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=5)
            assert status.status == health_pb2.HealthCheckResponse.SERVING
            client: Any = bot_pb2_grpc.BotServiceStub(opened)
            state = positions()[0].state
            answer = client.NextStep(
                request_for(state, common_pb2.BOT_LEVEL_HARD, seed=1),
                metadata=(("authorization", f"Bearer {issuer.issue('table', 'service')}"),),
                timeout=10,
            )
            play(state, state.turn, answered(answer), "served")
        assert scrape(metrics)[("okey_bot_decision_seconds_count", frozenset({("level", "hard")}))]
    finally:
        child.send_signal(signal.SIGTERM)
        _out, err = child.communicate(timeout=30)
    assert child.returncode == 0, err.decode()[-2000:]
    lines = [json.loads(line) for line in err.decode().splitlines() if line.startswith("{")]
    serving = next(line for line in lines if line["event"] == "serving")
    assert serving["port"] == port and serving["services"] == [SERVICE_NAME]
    assert lines[-1]["event"] == "stopped"
