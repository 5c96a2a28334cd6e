"""RulesService over real gRPC: the service started in-process through the platform on 127.0.0.1
port 0 (its auth, error mapping and interceptors included), called through the generated stubs
with tokens signed by the platform's auth. Answers are checked against the engine called
in-process; the conversions are checked to round-trip every state of seeded random playouts.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from okey.v1 import common_pb2, rules_pb2, rules_pb2_grpc

from okey101.engine.actions import Discard, Draw
from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.errors import InvalidInput, RuleViolation
from okey101.engine.hand import RULES_VERSION, HandState, Phase, TableMeld, apply
from okey101.engine.melds import make_group
from okey101.engine.playout import RandomPlayer, play_out
from okey101.engine.rules import RuleSet
from okey101.engine.seat import OpenedAs, PenaltyReason, Seat
from okey101.engine.sentences import render
from okey101.engine.solver.arrangement import Hand
from okey101.engine.solver.openings import best_opening
from okey101.engine.solver.pairs import best_pairs
from okey101.engine.solver.playability import playable_faces
from okey101.engine.tiles import Okey, Tile, TileAllocator, copies_of, parse_face
from okey101.platform import convert
from okey101.platform.errors import status_code_of
from okey101.rules import ACCESS, SERVICE_NAME
from okey101.rules.service import METHOD_ACCESS

from support.rules_server import AUTH, PLAYER_TOKEN, start_server
from support.status import details

PRESETS = ("oyna", "boombala", "north_sultan")

# ---------------------------------------------------------------------------------------------
# The server, once per module, in a thread of its own; the tests are plain blocking clients.


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[grpc.Channel]:
    running = start_server(tmp_path_factory.mktemp("rules"))
    try:
        with grpc.insecure_channel(running.handle.target) as opened:
            yield opened
    finally:
        running.close()


@pytest.fixture(scope="module")
def stub(channel: grpc.Channel) -> Any:
    return rules_pb2_grpc.RulesServiceStub(channel)


def rejected(call: Any, request: Any, *extra: tuple[str, str]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call(request, metadata=(*AUTH, *extra), timeout=10)
    error = caught.value
    assert error.code() != grpc.StatusCode.INTERNAL
    return error


# ---------------------------------------------------------------------------------------------
# Tiles and positions


def tile(name: str, copy: int = 0) -> Tile:
    return copies_of(parse_face(name))[copy]


def ids(names: str, copy: int = 0) -> list[int]:
    return [tile(name, copy).id for name in names.split()]


def okey_tile(indicator: str) -> Tile:
    """A tile that is an okey with this indicator (the first copy of the face above it)."""
    okey = Okey(tile(indicator))
    return copies_of(okey.face)[0]


def dealt(preset: str, seed: int) -> HandState:
    return deal(RuleSet.preset(preset), seed % 4, shuffled_deck(random.Random(seed)))


def players(seed: int) -> list[RandomPlayer]:
    return [RandomPlayer(random.Random(seed * 10 + seat)) for seat in range(4)]


def face(name: str) -> common_pb2.Face:
    return convert.face_to_proto(parse_face(name))


# ---------------------------------------------------------------------------------------------
# Serving


def test_serving_every_call_declared_and_a_token_needed(channel: grpc.Channel, stub: Any) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    answer = health.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=5)
    assert answer.status == health_pb2.HealthCheckResponse.SERVING
    methods = {m.name for m in rules_pb2.DESCRIPTOR.services_by_name["RulesService"].methods}
    assert set(METHOD_ACCESS) == methods
    # The engine's state calls are a service's only (tests/rules/test_rules_state_calls.py).
    state_calls = {"DealHand", "ApplyAction", "ViewHand", "ScoreHand"}
    for name in methods:
        kinds = {"service"} if name in state_calls else {"player", "service"}
        assert ACCESS.accepts(f"/{SERVICE_NAME}/{name}") == frozenset(kinds), name
    with pytest.raises(grpc.RpcError) as caught:
        stub.ResolveRuleSet(rules_pb2.ResolveRuleSetRequest(), timeout=5)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    # A player token is accepted too.
    stub.ResolveRuleSet(
        rules_pb2.ResolveRuleSetRequest(),
        metadata=(("authorization", f"Bearer {PLAYER_TOKEN}"),),
        timeout=5,
    )


# ---------------------------------------------------------------------------------------------
# ResolveRuleSet


def test_resolve_rule_set_every_knob(stub: Any) -> None:
    request = rules_pb2.ResolveRuleSetRequest(
        rules=common_pb2.RuleSet(
            preset=common_pb2.RULE_PRESET_BOOMBALA,
            partners=True,
            left_discard=common_pb2.LEFT_DISCARD_POLICY_USE_THIS_TURN,
            opening_min_points=120,
        )
    )
    answer = stub.ResolveRuleSet(request, metadata=AUTH, timeout=5).rules
    engine = RuleSet.preset("boombala").with_overrides(
        {"partners": True, "left_discard": "use_this_turn", "opening_min_points": 120}
    )
    assert answer == convert.rules_to_proto(engine)
    assert answer.custom and answer.preset == common_pb2.RULE_PRESET_BOOMBALA
    assert convert.rules_from_proto(answer) == engine
    for knob in engine.knobs():
        if knob != "name" and not common_pb2.RuleSet.DESCRIPTOR.fields_by_name[knob].enum_type:
            assert answer.HasField(knob), knob
    plain = stub.ResolveRuleSet(
        rules_pb2.ResolveRuleSetRequest(rules=common_pb2.RuleSet()), metadata=AUTH, timeout=5
    )
    assert plain.rules.preset == common_pb2.RULE_PRESET_OYNA and not plain.rules.custom
    assert convert.rules_from_proto(plain.rules) == RuleSet.preset("oyna")


def test_resolve_rule_set_refuses_bad_values(stub: Any) -> None:
    for rules in (
        common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_NORTH_SULTAN, match_hands=0),
        common_pb2.RuleSet(left_discard=99),  # type: ignore[arg-type]
    ):
        error = rejected(stub.ResolveRuleSet, rules_pb2.ResolveRuleSetRequest(rules=rules))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        info, _ = details(error)
        assert info.reason == "BAD_RULE_VALUE"


# ---------------------------------------------------------------------------------------------
# ValidateMelds, ValidateOpening


def test_validate_melds_answers_valid_and_invalid_with_reasons(stub: Any) -> None:
    okey = okey_tile("Y5")  # Y6
    groups = [
        common_pb2.TileGroup(tile_ids=[tile("B4").id, okey.id, tile("B6").id]),
        common_pb2.TileGroup(tile_ids=ids("R8 Y8 B8")),
        common_pb2.TileGroup(tile_ids=ids("R12 R13 R1")),  # 12-13-1: not at oyna
        common_pb2.TileGroup(tile_ids=[200, tile("K1").id, tile("K2").id]),
        common_pb2.TileGroup(tile_ids=[tile("R8").id, tile("R8", 1).id]),  # R8 twice: a tile
    ]
    request = rules_pb2.ValidateMeldsRequest(indicator_tile_id=tile("Y5").id, groups=groups)
    answer = stub.ValidateMelds(request, metadata=AUTH, timeout=5)
    assert not answer.valid
    verdicts = answer.verdicts
    assert [v.valid for v in verdicts] == [True, True, False, False, True]
    run = make_group([tile("B4"), okey, tile("B6")], Okey(tile("Y5")), RuleSet.preset("oyna"))
    assert verdicts[0].meld == convert.meld_to_proto(run, Okey(tile("Y5")))
    assert verdicts[0].meld.value == 15 and verdicts[0].meld.tiles[1].tile.wild
    assert verdicts[0].meld.tiles[1].stands_for == face("B5")
    assert verdicts[1].meld.kind == common_pb2.MELD_KIND_SET and verdicts[1].meld.value == 24
    assert [v.code for v in verdicts[2].violations] == ["RUN_WRAPS_AROUND"]
    assert verdicts[2].violations[0].message == render("RUN_WRAPS_AROUND", "en", {})
    assert [v.code for v in verdicts[3].violations] == ["UNKNOWN_TILE"]
    # The same physical R8 in two groups: a request-level DUPLICATE_TILE_ID.
    assert [v.code for v in answer.violations] == ["DUPLICATE_TILE_ID"]
    turkish = stub.ValidateMelds(
        rules_pb2.ValidateMeldsRequest(
            indicator_tile_id=tile("Y5").id, groups=groups[2:3], locale="tr-TR"
        ),
        metadata=AUTH,
        timeout=5,
    )
    assert turkish.verdicts[0].violations[0].message == render("RUN_WRAPS_AROUND", "tr", {})
    # A bad indicator is an answer too, never an error.
    fj = stub.ValidateMelds(
        rules_pb2.ValidateMeldsRequest(indicator_tile_id=104, groups=groups[:1]),
        metadata=AUTH,
        timeout=5,
    )
    assert not fj.valid and [v.code for v in fj.violations] == ["INDICATOR_IS_FALSE_JOKER"]


HAND_115 = "R10 R11 R12 R13 K13 B13 Y13 K9 K10 K11 R2 B5"
OPENING_115 = ("R10 R11 R12 R13", "K13 B13 Y13", "K9 K10 K11")


def test_validate_opening(stub: Any) -> None:
    boombala = common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_BOOMBALA)
    rack = ids(HAND_115)

    def ask(groups: Sequence[str], **more: Any) -> Any:
        request = rules_pb2.ValidateOpeningRequest(
            rules=boombala,
            indicator_tile_id=tile("Y5").id,
            groups=[common_pb2.TileGroup(tile_ids=ids(group)) for group in groups],
            **more,
        )
        return stub.ValidateOpening(request, metadata=AUTH, timeout=5)

    good = ask(OPENING_115, rack_tile_ids=rack)
    assert good.valid and not good.violations
    assert good.kind == common_pb2.OPENING_KIND_RUNS
    assert (good.value, good.minimum, good.whole_hand) == (115, 101, False)
    assert [v.meld.value for v in good.verdicts] == [46, 39, 30]

    low = ask(OPENING_115[:2], rack_tile_ids=rack, locale="tr")
    assert not low.valid and low.value == 85
    (violation,) = low.violations
    assert violation.code == "OPENING_BELOW_101"
    assert dict(violation.params) == {"value": "85", "minimum": "101"}
    assert violation.message == render("OPENING_BELOW_101", "tr", violation.params)

    no_rack = ask(OPENING_115)  # the rack checks skipped
    assert no_rack.valid and no_rack.value == 115
    not_in_rack = ask(OPENING_115, rack_tile_ids=rack[3:])
    assert [v.code for v in not_in_rack.violations] == ["TILE_NOT_IN_RACK"]
    mixed = ask(("R10 R11 R12 R13", "K9 K9"))
    assert mixed.kind == common_pb2.OPENING_KIND_NOT_OPENED
    assert "OPENING_MIXES_PAIRS" in [v.code for v in mixed.violations]
    taken = ask(OPENING_115, rack_tile_ids=rack, taken_tile_id=tile("B5").id)
    assert [v.code for v in taken.violations] == ["TAKEN_TILE_NOT_IN_OPENING"]


# ---------------------------------------------------------------------------------------------
# BestOpening, PlayableTiles


def test_a_rack_longer_than_any_hand_is_too_many_tiles_not_a_rule_value(stub: Any) -> None:
    request = rules_pb2.BestOpeningRequest(
        rules=common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_BOOMBALA),
        indicator_tile_id=tile("Y5").id,
        rack_tile_ids=list(range(30)),
    )
    error = rejected(stub.BestOpening, request)
    info, message = details(error)
    assert (error.code(), info.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "TOO_MANY_ITEMS")
    assert dict(info.metadata) == {"field": "rack_tile_ids", "count": "30", "limit": "22"}
    assert "30" in message.message and "22" in message.message


def test_best_opening_of_the_worked_hand_is_115(stub: Any) -> None:
    request = rules_pb2.BestOpeningRequest(
        rules=common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_BOOMBALA),
        indicator_tile_id=tile("Y5").id,
        rack_tile_ids=ids(HAND_115),
    )
    answer = stub.BestOpening(request, metadata=AUTH, timeout=10)
    hand = Hand(tuple(tile(name) for name in HAND_115.split()), Okey(tile("Y5")))
    engine = best_opening(hand, RuleSet.preset("boombala"))
    assert answer.runs_and_sets.value == engine.value == 115
    assert answer.can_open_with_runs and not answer.can_open_with_pairs
    assert answer.runs_and_sets == rules_pb2.Arrangement(
        melds=[convert.meld_to_proto(meld, hand.okey) for meld in engine.melds],
        value=115,
        leftover=convert.tiles_to_proto(engine.leftover, hand.okey),
    )
    assert answer.pairs.pair_count == best_pairs(hand).pair_count
    assert not answer.HasField("whole_hand")
    bad = rejected(stub.BestOpening, rules_pb2.BestOpeningRequest(rack_tile_ids=[3, 3]))
    assert bad.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert details(bad)[0].reason == "DUPLICATE_TILE_ID"


def test_playable_tiles_of_the_worked_example(stub: Any) -> None:
    # The okey is Yellow 6; on the table Blue 4 - okey - Blue 6 and Red, Yellow, Blue 8.
    indicator = tile("Y5")
    okey = okey_tile("Y5")
    table = [
        common_pb2.TileGroup(tile_ids=[tile("B4").id, okey.id, tile("B6").id]),
        common_pb2.TileGroup(tile_ids=ids("R8 Y8 B8")),
    ]
    rack = [*ids("B3 B7 K8 R5"), tile("Y6", 1).id]
    request = rules_pb2.PlayableTilesRequest(
        indicator_tile_id=indicator.id, table=table, rack_tile_ids=rack
    )
    answer = stub.PlayableTiles(request, metadata=AUTH, timeout=5)
    faces = {(f.colour, f.number) for f in answer.playable_faces}
    okey_of = Okey(indicator)
    melds = [
        make_group([tile("B4"), okey, tile("B6")], okey_of, RuleSet()),
        make_group([tile(n) for n in ("R8", "Y8", "B8")], okey_of, RuleSet()),
    ]
    engine = {
        (f.colour, f.number)
        for f in map(convert.face_to_proto, playable_faces(melds, RuleSet.preset("oyna")))
    }
    assert faces == engine == {(face(n).colour, face(n).number) for n in ("B3", "B7", "K8")}
    marks = [(t.tile.notation, t.playable, t.costly_discard) for t in answer.rack]
    assert marks == [
        ("B3", True, True),
        ("B7", True, True),
        ("K8", True, True),
        ("R5", False, False),
        ("Y6", False, True),  # the okey: not playable, still costly
    ]
    assert [m.meld.value for m in answer.table] == [15, 24]
    bad = rejected(
        stub.PlayableTiles,
        rules_pb2.PlayableTilesRequest(
            indicator_tile_id=indicator.id,
            table=[table[0], common_pb2.TileGroup(tile_ids=ids("R1 K5 B9"))],
        ),
    )
    assert bad.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, _ = details(bad)
    assert info.reason == "NOT_A_MELD" and info.metadata["group_index"] == "1"


# ---------------------------------------------------------------------------------------------
# DealHand, ViewHand, ScoreHand


def test_deal_hand_and_view_hand(stub: Any) -> None:
    deck = shuffled_deck(random.Random(7))
    request = rules_pb2.DealHandRequest(
        rules=common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_NORTH_SULTAN),
        dealer=2,
        deck_tile_ids=[t.id for t in deck],
    )
    answer = stub.DealHand(request, metadata=AUTH, timeout=5)
    engine = deal(RuleSet.preset("north_sultan"), 2, deck)
    assert convert.hand_state_from_proto(answer.state) == engine
    assert answer.state.rules_version == RULES_VERSION
    assert answer.state.phase == common_pb2.PHASE_FIRST and answer.state.turn == 3
    assert len(answer.views) == 4
    for seat, seat_view in enumerate(answer.views):
        assert seat_view.seat == seat
        assert [t.tile.id for t in seat_view.rack] == [t.id for t in engine.seats[seat].rack]
        assert seat_view == convert.seat_view_to_proto(engine, seat)
    assert not answer.spectator_view.HasField("seat") and not answer.spectator_view.rack
    assert answer.spectator_view.stock_count == 20

    view = stub.ViewHand(
        rules_pb2.ViewHandRequest(state=answer.state, seat=1), metadata=AUTH, timeout=5
    )
    assert view.view == answer.views[1]
    spectator = stub.ViewHand(rules_pb2.ViewHandRequest(state=answer.state), metadata=AUTH)
    assert spectator.view == answer.spectator_view
    bad_seat = rejected(stub.ViewHand, rules_pb2.ViewHandRequest(state=answer.state, seat=7))
    assert bad_seat.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert details(bad_seat)[0].reason == "UNKNOWN_SEAT"
    short = rejected(
        stub.DealHand, rules_pb2.DealHandRequest(deck_tile_ids=[t.id for t in deck[1:]])
    )
    assert short.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert details(short)[0].reason == "BAD_DECK"


def _score_request(
    racks: Sequence[str], opened: Sequence[common_pb2.OpeningKind], *, with_okey: bool = False
) -> rules_pb2.ScoreHandRequest:
    allocator = TileAllocator([tile("Y5")])
    seats = [
        rules_pb2.ScoreHandSeat(
            rack_tile_ids=[t.id for t in allocator.take_names(rack.split())], opened_as=kind
        )
        for rack, kind in zip(racks, opened, strict=True)
    ]
    return rules_pb2.ScoreHandRequest(
        indicator_tile_id=tile("Y5").id,
        reason=common_pb2.HAND_END_REASON_FINISHED,
        finish=common_pb2.Finish(winner_seat=0, with_okey=with_okey),
        seats=seats,
    )


OYNA_OPENED = [
    common_pb2.OPENING_KIND_RUNS,
    common_pb2.OPENING_KIND_RUNS,
    common_pb2.OPENING_KIND_PAIRS,
    common_pb2.OPENING_KIND_NOT_OPENED,
]


def test_score_hand_of_the_oyna_worked_example(stub: Any) -> None:
    racks = ["", "R3 K4 B9", "B2 B5", "R12 K13 B1 Y6"]
    answer = stub.ScoreHand(_score_request(racks, OYNA_OPENED), metadata=AUTH, timeout=5)
    result = answer.result
    assert [score.points for score in result.scores] == [-101, 16, 14, 202]
    assert result.reason == common_pb2.HAND_END_REASON_FINISHED
    assert result.finish.multiplier == 1 and result.finish.winner_seat == 0
    # The okey (Y6) in East's hand and the finish with an okey: x2, and oyna's 101 undoubled.
    racks = ["", "R3 K4 Y6", "B2 B5", "R12"]
    doubled = stub.ScoreHand(
        _score_request(racks, OYNA_OPENED, with_okey=True), metadata=AUTH, timeout=5
    )
    assert [score.points for score in doubled.result.scores] == [-202, 115, 28, 404]
    assert doubled.result.finish.multiplier == 2


# ---------------------------------------------------------------------------------------------
# ApplyAction: whole playouts, rejected and malformed moves


@pytest.mark.parametrize("preset", PRESETS)
def test_apply_action_replays_a_seeded_playout_exactly(stub: Any, preset: str) -> None:
    seed = 11 + PRESETS.index(preset)
    expected, _ = play_out(dealt(preset, seed), players(seed))

    deck = shuffled_deck(random.Random(seed))
    dealt_answer = stub.DealHand(
        rules_pb2.DealHandRequest(
            rules=convert.rules_to_proto(RuleSet.preset(preset)),
            dealer=seed % 4,
            deck_tile_ids=[t.id for t in deck],
        ),
        metadata=AUTH,
        timeout=5,
    )
    message = dealt_answer.state
    deciders = players(seed)
    calls = 0
    while message.phase != common_pb2.PHASE_ENDED:
        state = convert.hand_state_from_proto(message)
        seat = state.turn
        steps = deciders[seat].turn(state)
        request = rules_pb2.ApplyActionRequest(
            state=message,
            seat=seat,
            actions=[convert.action_to_proto(action) for action, _, _ in steps],
        )
        answer = stub.ApplyAction(request, metadata=AUTH, timeout=10)
        calls += 1
        assert convert.hand_state_from_proto(answer.state) == steps[-1][1]
        kinds = [event.kind for _, _, events in steps for event in events]
        assert [common_pb2.EventKind.Name(e.kind) for e in answer.events] == [
            f"EVENT_KIND_{kind.upper()}" for kind in kinds
        ]
        for event in answer.events:
            if event.kind == common_pb2.EVENT_KIND_DREW:
                assert event.seat == seat and len(event.private_tiles) == 1
        after = steps[-1][1]
        for other, seat_view in enumerate(answer.views):
            shown = {t.tile.id for t in seat_view.rack}
            assert shown == {t.id for t in after.seats[other].rack}
        assert not answer.spectator_view.rack
        message = answer.state
    final = convert.hand_state_from_proto(message)
    assert final == expected
    assert expected.result is not None
    assert [s.points for s in message.result.scores] == list(expected.result.scores)
    assert calls > 10


def test_forbidden_moves_are_failed_precondition_in_both_languages(stub: Any) -> None:
    state = dealt("oyna", 3)
    message = convert.hand_state_to_proto(state)
    mover = state.turn
    other = (mover + 1) % 4
    draw = convert.action_to_proto(Draw())
    request = rules_pb2.ApplyActionRequest(state=message, seat=other, actions=[draw])

    english = rejected(stub.ApplyAction, request)
    assert english.code() == grpc.StatusCode.FAILED_PRECONDITION
    info, localized = details(english)
    assert info.reason == "NOT_YOUR_TURN"
    assert dict(info.metadata) == {"seat": str(other), "turn": str(mover), "action_index": "0"}
    sentence = RuleViolation("NOT_YOUR_TURN", seat=other, turn=mover)
    assert (localized.locale, localized.message) == ("en-US", sentence.message("en"))

    turkish = rejected(stub.ApplyAction, request, ("accept-language", "tr-TR,tr;q=0.9"))
    assert details(turkish)[1].locale == "tr-TR"
    assert details(turkish)[1].message == sentence.message("tr")
    # The request's locale comes before accept-language.
    request.locale = "tr"
    by_locale = rejected(stub.ApplyAction, request, ("accept-language", "en"))
    assert details(by_locale)[1].message == sentence.message("tr")

    # The second move fails: it is named, and nothing is applied.
    first, second = state.seats[mover].rack[:2]
    moves = [convert.action_to_proto(Discard(first)), convert.action_to_proto(Discard(second))]
    two = rejected(
        stub.ApplyAction, rules_pb2.ApplyActionRequest(state=message, seat=mover, actions=moves)
    )
    assert two.code() == grpc.StatusCode.FAILED_PRECONDITION
    info, _ = details(two)
    assert (info.reason, info.metadata["action_index"]) == ("NOT_YOUR_TURN", "1")
    drew = rejected(
        stub.ApplyAction, rules_pb2.ApplyActionRequest(state=message, seat=mover, actions=[draw])
    )
    assert details(drew)[0].reason == "NO_DRAW_ON_FIRST_TURN"
    # The same first move alone applies.
    applied, _ = apply(state, mover, Discard(first))
    answer = stub.ApplyAction(
        rules_pb2.ApplyActionRequest(state=message, seat=mover, actions=moves[:1]),
        metadata=AUTH,
        timeout=5,
    )
    assert convert.hand_state_from_proto(answer.state) == applied


def _state_with(**changes: Any) -> common_pb2.HandState:
    message = convert.hand_state_to_proto(dealt("boombala", 5))
    for name, value in changes.items():
        if name == "seats":
            del message.seats[value:]
        else:
            setattr(message, name, value)
    return message


def test_malformed_requests_are_invalid_argument(stub: Any) -> None:
    state = dealt("boombala", 5)
    message = convert.hand_state_to_proto(state)
    seat = state.turn

    def apply_error(
        actions: Sequence[common_pb2.Action], state_message: common_pb2.HandState = message
    ) -> tuple[grpc.StatusCode, error_details_pb2.ErrorInfo]:
        request = rules_pb2.ApplyActionRequest(state=state_message, seat=seat, actions=actions)
        error = rejected(stub.ApplyAction, request)
        return error.code(), details(error)[0]

    invalid = grpc.StatusCode.INVALID_ARGUMENT
    unknown_tile = common_pb2.Action(discard=common_pb2.DiscardAction(tile_id=999))
    code, info = apply_error([unknown_tile])
    assert (code, info.reason, info.metadata["action_index"]) == (invalid, "UNKNOWN_TILE", "0")
    code, info = apply_error([common_pb2.Action()])
    assert (code, info.reason) == (invalid, "EMPTY_MOVE")
    code, info = apply_error([])
    assert (code, info.reason) == (invalid, "EMPTY_MOVE")
    # The sentences speak of what the request carried: tile ids, actions.
    for actions, words in (
        ([unknown_tile], ("999 is not a tile id", "tiles are numbered 0 to 105")),
        ([], ("This move has no actions",)),
        ([common_pb2.Action()], ("This action is empty",)),
    ):
        request = rules_pb2.ApplyActionRequest(state=message, seat=seat, actions=actions)
        sentence = details(rejected(stub.ApplyAction, request))[1].message
        assert all(word in sentence for word in words), sentence
        request.locale = "tr"
        turkish = details(rejected(stub.ApplyAction, request))[1].message
        assert turkish != sentence and ("kimliği" in turkish or "eylem" in turkish), turkish

    draw = [convert.action_to_proto(Draw())]
    # An unknown rules version is refused, never re-interpreted, with the platform's status
    # for that code (see the report: the protos say INVALID_ARGUMENT, the platform's table
    # FAILED_PRECONDITION).
    code, info = apply_error(draw, _state_with(rules_version="okey101-rules/99"))
    assert info.reason == "UNKNOWN_RULES_VERSION" and info.metadata["version"].endswith("/99")
    assert code == status_code_of(InvalidInput("UNKNOWN_RULES_VERSION", version="x"))
    assert code in (invalid, grpc.StatusCode.FAILED_PRECONDITION)

    code, info = apply_error(draw, _state_with(seats=3))
    assert (code, info.reason, info.metadata["seats"]) == (invalid, "WRONG_SEAT_COUNT", "3")

    twice = convert.hand_state_to_proto(state)
    twice.stock_tile_ids.append(twice.seats[0].rack_tile_ids[0])
    code, info = apply_error(draw, twice)
    assert (code, info.reason) == (invalid, "DUPLICATE_TILE_ID")
    assert info.metadata["field"] == "state.stock_tile_ids[20]"

    unknown = convert.hand_state_to_proto(state)
    unknown.seats[2].rack_tile_ids[0] = 106
    code, info = apply_error(draw, unknown)
    assert (code, info.reason) == (invalid, "UNKNOWN_TILE")

    not_a_meld = convert.hand_state_to_proto(state)
    rack = not_a_meld.seats[0].rack_tile_ids
    group = not_a_meld.table.add(
        owner_seat=0, kind=common_pb2.MELD_KIND_RUN, number=3, colour=common_pb2.COLOUR_RED
    )
    for tile_id in rack[:3]:  # three random tiles, said to be a red run 3-4-5
        group.tiles.add(tile_id=tile_id, stands_for=face("R3"))
    del rack[:3]
    code, info = apply_error(draw, not_a_meld)
    assert (code, info.reason) == (invalid, "NOT_A_MELD")


# ---------------------------------------------------------------------------------------------
# Conversions


@pytest.mark.parametrize("preset", PRESETS)
def test_hand_states_round_trip_through_the_messages(preset: str) -> None:
    checked = 0
    for seed in range(4):
        state = dealt(preset, 100 + seed)
        deciders = players(100 + seed)
        states = [state]
        while not state.ended:
            steps = deciders[state.turn].turn(state)
            for action, after, events in steps:
                wire = convert.action_to_proto(action).SerializeToString()
                assert convert.action_from_proto(common_pb2.Action.FromString(wire)) == action
                for event in events:
                    shown = convert.event_to_proto(event, after, for_seat=None)
                    assert not shown.private_tiles
                states.append(after)
            state = states[-1]
        for each in states:
            wire = convert.hand_state_to_proto(each).SerializeToString()
            assert convert.hand_state_from_proto(common_pb2.HandState.FromString(wire)) == each
            checked += 1
    assert checked > 100


def test_custom_rule_sets_round_trip() -> None:
    for preset in PRESETS:
        rules = RuleSet.preset(preset)
        assert convert.rules_from_proto(convert.rules_to_proto(rules)) == rules
        custom = rules.with_overrides(
            {
                "run_may_end_12_13_1": not rules.run_may_end_12_13_1,
                "stock_out": "ends_on_last_discard",
            }
        )
        message = convert.rules_to_proto(custom)
        assert message.custom and convert.rules_from_proto(message) == custom


def test_a_what_if_state_with_an_undecided_okey_round_trips() -> None:
    # A position of a few tiles (not all 106 need be placed): a three-tile set whose okey's
    # colour is not decided, and a pair of false jokers.
    okey = Okey(tile("Y5"))
    undecided = make_group([tile("R7"), tile("B7"), okey_tile("Y5")], okey, RuleSet())
    jokers = make_group([Tile(104), Tile(105)], okey, RuleSet())
    assert undecided.stands_for[2] is None and jokers.stands_for == (okey.face, okey.face)
    seats = (
        Seat(rack=(tile("K1"),), opened_as=OpenedAs.RUNS, opened_on_turn=0),
        Seat(rack=(tile("K2"),), opened_as=OpenedAs.PAIRS, opened_on_turn=1),
        Seat(rack=(tile("K3"),), discards=(tile("K9"),)),
        Seat(rack=(tile("K4"),), penalties=(PenaltyReason.CHARGED_BEFORE,)),
    )
    state = HandState(
        rules=RuleSet.preset("oyna"),
        okey=okey,
        dealer=0,
        turn=3,
        phase=Phase.DRAW,
        seats=seats,
        table=(TableMeld(undecided, 0), TableMeld(jokers, 1)),
        stock=(tile("K5"),),
        takeable=tile("K9"),
        turn_number=6,
    )
    message = convert.hand_state_to_proto(state)
    assert not message.table[0].tiles[2].HasField("stands_for")
    assert convert.hand_state_from_proto(message) == state
    shown = convert.meld_to_proto(undecided, okey)
    assert shown.tiles[2].tile.wild and not shown.tiles[2].HasField("stands_for")
    # The takeable tile must be the last discard on the left of the seat to move.
    message.turn = 1
    with pytest.raises(InvalidInput) as caught:
        convert.hand_state_from_proto(message)
    assert caught.value.params["field"] == "state.takeable_tile_id"
