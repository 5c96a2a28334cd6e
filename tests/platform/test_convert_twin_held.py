"""The taken tile's twin (issue #33) survives the wire: a HandState snapshot keeps ``twin_held``
(a table reloaded mid-turn judges the taken tile as it did before), and a seat view carries it
to the seat to move only, since it tells of a tile on that seat's rack."""

from __future__ import annotations

from okey.v1 import common_pb2

from okey101.engine.actions import TakeDiscard
from okey101.engine.hand import HandState, apply
from okey101.engine.scenario import parse_scenario
from okey101.platform import convert
from okey101.platform.convert.views import seat_view_from_proto, seat_views_to_proto


def seat_one_takes_k11(rack: list[str]) -> HandState:
    """Seat 1, opened, holding ``rack``, takes the K11 seat 0 discarded."""
    state = parse_scenario(
        {
            "indicator": "B1",
            "phase": "draw",
            "stock_count": 10,
            "rules": "oyna",
            "turn": 1,
            "racks": {0: ["B3", "B4", "B5"], 1: rack, 2: ["B6", "B7", "B8"], 3: ["K1", "K2", "K3"]},
            "discards": {0: ["K11"]},
            "table": [{"owner": 1, "tiles": ["R5", "R6", "R7"]}],
            "opened": {1: "runs"},
        }
    ).state
    taken, _events = apply(state, 1, TakeDiscard())
    return taken


def taken_with_its_twin_held() -> HandState:
    """Seat 1 holds a K11 and takes the other."""
    state = seat_one_takes_k11(["K9", "K10", "K11", "R3", "Y7"])
    assert state.this_turn.twin_held
    return state


def test_a_state_snapshot_keeps_the_twin_held() -> None:
    state = taken_with_its_twin_held()
    message = convert.hand_state_to_proto(state)
    assert message.this_turn.twin_held
    back = convert.hand_state_from_proto(
        common_pb2.HandState.FromString(message.SerializeToString())
    )
    assert back.this_turn.twin_held
    assert back.this_turn.taken == state.this_turn.taken


def test_only_the_seat_to_move_is_told_it_held_the_twin() -> None:
    state = taken_with_its_twin_held()
    views, spectator = seat_views_to_proto(state)
    assert views[1].turn_progress.twin_held
    assert views[1].turn_progress.HasField("taken")
    for seat in (0, 2, 3):
        assert not views[seat].turn_progress.twin_held
        assert views[seat].turn_progress.HasField("taken")  # the taken tile is face up
    assert not spectator.turn_progress.twin_held
    assert seat_view_from_proto(views[1]).this_turn.twin_held
    assert not seat_view_from_proto(views[0]).this_turn.twin_held


def test_without_the_twin_nothing_is_said() -> None:
    taken = seat_one_takes_k11(["K9", "K10", "R3"])
    assert not taken.this_turn.twin_held
    views, _spectator = seat_views_to_proto(taken)
    assert not views[1].turn_progress.twin_held
