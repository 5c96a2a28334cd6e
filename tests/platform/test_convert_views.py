"""The conversions' cheaper paths against what they stand for: views assembled from prebuilt
serialized parts, state and views written into a response in place, the tile ledger that checks
whole lists at once."""

from __future__ import annotations

import random

import pytest
from okey.v1 import common_pb2, rules_pb2

from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.errors import InvalidInput
from okey101.engine.hand import HandState, Phase, TableMeld
from okey101.engine.melds import make_group
from okey101.engine.playout import RandomPlayer
from okey101.engine.rules import RuleSet
from okey101.engine.seat import Seat
from okey101.engine.solver.playability import playable_faces
from okey101.engine.tiles import ALL_TILES, Okey, copies_of, parse_face
from okey101.engine.view import _costly_ids
from okey101.platform import convert
from okey101.platform.convert import memo, wire
from okey101.rules import service as rules_service

PRESETS = ("oyna", "boombala", "north_sultan")


def playout_states(preset: str, seed: int) -> list[HandState]:
    """Every state of a seeded random playout, the deal and the end included."""
    state = deal(RuleSet.preset(preset), seed % 4, shuffled_deck(random.Random(seed)))
    players = [RandomPlayer(random.Random(seed * 10 + seat)) for seat in range(4)]
    states = [state]
    while not state.ended:
        state = players[state.turn].turn(state)[-1][1]
        states.append(state)
    return states


def expected_rack(state: HandState, seat: int) -> list[common_pb2.RackTile]:
    """A seat's rack entries, tile by tile, from the engine's own rules for them."""
    okey = state.okey
    playable = playable_faces(state.table_melds(), state.rules)
    entries = []
    for tile in state.seats[seat].rack:
        wild = okey.is_wild(tile)
        takes = not wild and okey.plays_as(tile) in playable
        entries.append(
            common_pb2.RackTile(
                tile=convert.tile_to_proto(tile, okey), playable=takes, costly_discard=wild or takes
            )
        )
    return entries


@pytest.mark.parametrize("preset", PRESETS)
def test_views_are_the_face_up_part_plus_the_seat_and_its_rack(preset: str) -> None:
    checked = wild_seen = playable_seen = 0
    for seed in range(3):
        for state in playout_states(preset, 200 + seed):
            views, spectator = convert.seat_views_to_proto(state)
            assert not spectator.HasField("seat") and not spectator.rack
            assert spectator == convert.seat_view_to_proto(state, None)
            response = rules_pb2.ApplyActionResponse()
            convert.add_seat_views(state, response.views, response.spectator_view)
            assert list(response.views) == views and response.spectator_view == spectator
            for seat, seat_view in enumerate(views):
                assert seat_view == convert.seat_view_to_proto(state, seat)
                assert seat_view.HasField("seat") and seat_view.seat == seat
                assert list(seat_view.rack) == expected_rack(state, seat)
                face_up = common_pb2.SeatView()
                face_up.CopyFrom(seat_view)
                face_up.ClearField("seat")
                face_up.ClearField("rack")
                assert face_up == spectator
                wild_seen += sum(entry.tile.wild for entry in seat_view.rack)
                playable_seen += sum(entry.playable for entry in seat_view.rack)
                checked += 1
    assert checked > 100 and wild_seen and playable_seen


@pytest.mark.parametrize("preset", PRESETS)
def test_a_state_written_in_place_is_the_state_message(preset: str) -> None:
    for state in playout_states(preset, 300)[::5]:
        response = rules_pb2.ApplyActionResponse()
        convert.fill_hand_state(response.state, state)
        assert response.HasField("state")
        assert response.state == convert.hand_state_to_proto(state)


def _refusal(ledger: convert.TileLedger, *steps: tuple[str, list[int]]) -> dict[str, str]:
    """The parameters of the error the last step raises (each step adds a list of tile ids)."""
    *before, (last_field, last_ids) = steps
    for field, tile_ids in before:
        ledger.add_all([ALL_TILES[tile_id] for tile_id in tile_ids], field)
    with pytest.raises(InvalidInput) as caught:
        ledger.add_ids(last_ids, last_field)
    return {"code": caught.value.code, **{k: str(v) for k, v in caught.value.params.items()}}


def test_the_ledger_names_a_repeated_tile_and_where_it_was_first() -> None:
    okey = Okey(ALL_TILES[10])
    within = _refusal(convert.TileLedger(okey.indicator), ("rack", [1, 2, 3, 2]))
    assert (within["code"], within["field"], within["first_field"]) == (
        "DUPLICATE_TILE_ID",
        "rack[3]",
        "rack[1]",
    )
    across = _refusal(convert.TileLedger(), ("a", [5, 6]), ("b", [7]), ("c", [8, 9, 7]))
    assert (across["field"], across["first_field"], across["tile_id"]) == ("c[2]", "b[0]", "7")
    single = convert.TileLedger()
    single.add(ALL_TILES[40], "taken")
    assert _refusal(single, ("stock", [41, 40]))["first_field"] == "taken"
    indicator = _refusal(convert.TileLedger(okey.indicator), ("rack", [0, 10]))
    assert (indicator["code"], indicator["field"]) == ("TOO_MANY_COPIES", "rack[1]")


def test_the_ledger_keeps_what_came_before_a_refused_tile() -> None:
    # Validation answers go on after a refused tile: the tiles before it stay counted.
    ledger = convert.TileLedger()
    ledger.add_all([ALL_TILES[1]], "first")
    with pytest.raises(InvalidInput):
        ledger.add_ids([2, 1, 3], "second")
    with pytest.raises(InvalidInput) as caught:
        ledger.add(ALL_TILES[2], "third")
    assert caught.value.params["first_field"] == "second[0]"
    ledger.add(ALL_TILES[3], "fourth")  # never counted: the list stopped at the repeat


def test_rack_entries_and_costly_tiles_by_face_are_those_tile_by_tile() -> None:
    rng = random.Random(5)
    for indicator in ALL_TILES[:104:3]:
        okey = Okey(indicator)
        for size in (0, 1, 3, 8, 52):
            playable = frozenset(rng.sample(range(52), size) + [okey.face] * rng.randrange(2))
            entries = wire.rack_entries_for(okey, playable)
            costly = _costly_ids(okey, playable)
            for tile in ALL_TILES:
                wild = okey.is_wild(tile)
                takes = not wild and okey.plays_as(tile) in playable
                expected = common_pb2.SeatView()
                expected.rack.add(
                    tile=convert.tile_to_proto(tile, okey),
                    playable=takes,
                    costly_discard=wild or takes,
                )
                assert common_pb2.SeatView.FromString(entries[tile.id]) == expected
                assert (tile.id in costly) == (wild or okey.plays_as(tile) in playable)


def _state_with_meld(names: str, indicator: str, rules: RuleSet) -> common_pb2.HandState:
    """A what-if state holding one run (of ``names``, no okey) on the table."""
    okey = Okey(copies_of(parse_face(indicator))[1])
    tiles = [copies_of(parse_face(name))[0] for name in names.split()]
    table = (TableMeld(make_group(tiles, okey, rules), 0),)
    seats = tuple(Seat(rack=()) for _ in range(4))
    state = HandState(
        rules=rules, okey=okey, dealer=0, turn=1, phase=Phase.DRAW, seats=seats, table=table
    )
    return convert.hand_state_to_proto(state)


def test_a_remembered_meld_is_checked_again_under_another_okey_or_rule_set() -> None:
    lenient = RuleSet.preset("oyna").with_overrides({"run_may_end_12_13_1": True})
    strict = RuleSet.preset("oyna").with_overrides({"run_may_end_12_13_1": False})
    message = _state_with_meld("R12 R13 R1", "K5", lenient)
    assert len(convert.hand_state_from_proto(message).table) == 1  # read, and remembered
    assert len(convert.hand_state_from_proto(message).table) == 1
    message.rules.CopyFrom(convert.rules_to_proto(strict))
    with pytest.raises(InvalidInput) as caught:
        convert.hand_state_from_proto(message)
    assert (caught.value.code, caught.value.params["field"]) == ("NOT_A_MELD", "state.table[0]")

    # A false joker plays as the okey's face: K6 with K5 as the indicator, not with Y2.
    joker = _state_with_meld("R6 B6 FJ", "K5", strict)
    assert convert.hand_state_from_proto(joker).table[0].meld.stands_for[2] == parse_face("K6")
    joker.indicator_tile_id = copies_of(parse_face("Y2"))[1].id
    with pytest.raises(InvalidInput) as caught:
        convert.hand_state_from_proto(joker)
    assert caught.value.code == "NOT_A_MELD"


def test_the_meld_memories_are_bounded_and_answer_the_same_after_forgetting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for memory in memo.MELD_MEMORIES:
        monkeypatch.setattr(memory, "limit", 3)
    states = [s for s in playout_states("oyna", 400) if s.table]
    assert states
    for state in states[-10:]:
        message = convert.hand_state_to_proto(state)
        views, spectator = convert.seat_views_to_proto(state)
        assert convert.hand_state_from_proto(message) == state
        assert convert.hand_state_to_proto(convert.hand_state_from_proto(message)) == message
        assert convert.seat_views_to_proto(state) == (views, spectator)
    for memory in memo.MELD_MEMORIES:
        assert len(memory) <= 3


@pytest.mark.parametrize("preset", PRESETS)
def test_the_serialized_apply_answer_is_the_answer_built_as_messages(preset: str) -> None:
    state = deal(RuleSet.preset(preset), 1, shuffled_deck(random.Random(501)))
    players = [RandomPlayer(random.Random(5010 + seat)) for seat in range(4)]
    answers = 0
    while not state.ended:
        steps = players[state.turn].turn(state)
        request = rules_pb2.ApplyActionRequest(
            state=convert.hand_state_to_proto(state),
            seat=state.turn,
            actions=[convert.action_to_proto(action) for action, _, _ in steps],
        )
        after = steps[-1][1]
        views, spectator = convert.seat_views_to_proto(after)
        expected = rules_pb2.ApplyActionResponse(
            state=convert.hand_state_to_proto(after),
            events=[
                convert.event_to_proto(event, moved, for_seat=state.turn)
                for _, moved, caused in steps
                for event in caused
            ],
            views=views,
            spectator_view=spectator,
        )
        sent = rules_service.apply_action_serialized(request, "en")
        assert rules_pb2.ApplyActionResponse.FromString(sent) == expected
        state = after
        answers += 1
    assert answers > 10


@pytest.mark.parametrize("size", [0, 1, 126, 127, 128, 300, 16_383, 16_384, 2_100_000])
def test_a_length_delimited_field_is_written_as_protobuf_writes_it(size: int) -> None:
    inner = common_pb2.SeatView(table_id="x" * size).SerializeToString()
    whole = rules_pb2.ApplyActionResponse(spectator_view=common_pb2.SeatView.FromString(inner))
    assert wire.length_delimited(4, inner) == whole.SerializeToString()
