"""The tile taken from the left (issue #33): a face, not a copy; Boombala's give-back only for a
tile that cannot go down this turn.

Positions are written as scenarios (docs/scenarios.md) and played with ``apply``; a move names
physical tiles, so each test says which copy it puts down.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest

from okey101.engine.actions import (
    Action,
    Discard,
    End,
    GiveBack,
    Group,
    LayDown,
    LayOff,
    Open,
    TakeDiscard,
    TakeOkey,
)
from okey101.engine.bots.entry_points import decide
from okey101.engine.bots.levels import BotLevel
from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.errors import OkeyError, RuleViolation
from okey101.engine.hand import (
    HandState,
    Phase,
    apply,
    taken_tile_way_down,
    taken_unused,
    twin_of,
)
from okey101.engine.hints import seat_hints
from okey101.engine.legal import legal_actions
from okey101.engine.playout import RandomPlayer
from okey101.engine.rules import RuleSet
from okey101.engine.scenario import parse_scenario
from okey101.engine.sentences import render
from okey101.engine.tiles import Tile, parse_face
from okey101.engine.view import view


def position(**data: Any) -> HandState:
    base: dict[str, Any] = {"indicator": "B1", "phase": "draw", "stock_count": 10}
    return parse_scenario({**base, **data}).state


def tile(state: HandState, seat: int, name: str, copy: int | None = None) -> Tile:
    """The rack's tile of face ``name`` (of that copy, if given)."""
    face = parse_face(name)
    return next(
        t for t in state.seats[seat].rack if t.face == face and (copy is None or t.copy == copy)
    )


def play(state: HandState, seat: int, *actions: Action) -> HandState:
    for action in actions:
        state, _events = apply(state, seat, action)
    return state


def refusal(state: HandState, seat: int, action: Action) -> str:
    with pytest.raises(RuleViolation) as caught:
        apply(state, seat, action)
    return caught.value.code


def took(state: HandState, seat: int) -> tuple[HandState, Tile, Tile | None]:
    """``seat`` takes the left discard: the state, the taken copy and the other copy if the
    rack held it."""
    taken = state.takeable
    assert taken is not None
    after = play(state, seat, TakeDiscard())
    twin = twin_of(taken)
    return after, taken, twin if twin in after.seats[seat].rack else None


# An unopened seat holds K11 and takes the other K11: the 115 opening with "a K11".
UNOPENED_K11: Mapping[str, Any] = {
    "turn": 1,
    "racks": {
        0: ["B3", "B4", "B5"],
        1: ["R10", "R11", "R12", "R13", "K13", "B13", "Y13", "K9", "K10", "K11", "Y2", "Y3"],
        2: ["B6", "B7", "B8"],
        3: ["K1", "K2", "K3"],
    },
    "discards": {0: ["K11"]},
}


def _opening(state: HandState, k11: Tile) -> Open:
    def group(*names: str) -> Group:
        return Group(tuple(tile(state, 1, name) for name in names))

    blacks = Group((tile(state, 1, "K9"), tile(state, 1, "K10"), k11))
    return Open((group("R10", "R11", "R12", "R13"), group("K13", "B13", "Y13"), blacks))


# ---------------------------------------------------------------------------------------------
# 1. A face, not a copy


@pytest.mark.parametrize("preset", ["oyna", "boombala", "north_sultan"])
def test_an_opening_with_the_copy_held_before_uses_the_taken_tile(preset: str) -> None:
    state, taken, held = took(position(rules=preset, **UNOPENED_K11), 1)
    assert taken_unused(state.this_turn, state.seats[1].rack) == taken
    opened = play(state, 1, _opening(state, held))
    assert taken_unused(opened.this_turn, opened.seats[1].rack) is None
    # The K11 left is the one held before the take: it may be thrown (oyna too).
    after = play(opened, 1, Discard(taken))
    assert after.turn == 2 and after.seats[1].discards[-1] == taken


@pytest.mark.parametrize("preset", ["oyna", "boombala"])
def test_an_opening_without_a_tile_of_the_taken_face_is_still_refused(preset: str) -> None:
    data = {**UNOPENED_K11, "racks": {**UNOPENED_K11["racks"]}}
    data["racks"][1] = [*UNOPENED_K11["racks"][1], "K12", "B12", "Y12"]
    state, _taken, _held = took(position(rules=preset, **data), 1)
    twelves = Group(tuple(tile(state, 1, name) for name in ("K12", "B12", "Y12")))
    runs = Group(tuple(tile(state, 1, name) for name in ("R10", "R11", "R12", "R13")))
    # R10-R13 (46), K13-B13-Y13 (39), the 12s (36): 121 without a K11.
    thirteens = Group(tuple(tile(state, 1, name) for name in ("K13", "B13", "Y13")))
    assert refusal(state, 1, Open((runs, thirteens, twelves))) == "TAKEN_TILE_NOT_IN_OPENING"


def test_an_okey_standing_for_the_taken_face_is_not_the_taken_tile() -> None:
    """Indicator B1: B2 is the okey. The seat takes R8 and opens with R7-okey-R9 instead of an
    R8: the okey stands for R8 but is not one."""
    state = position(
        rules="oyna",
        turn=1,
        racks={
            0: ["B3", "B4", "B5"],
            1: ["R7", "B2", "R9", "R10", "R11", "R12", "R13", "K13", "B13", "Y13", "Y3"],
            2: ["B6", "B7", "B8"],
            3: ["K1", "K2", "K3"],
        },
        discards={0: ["R8"]},
    )
    state, taken, _held = took(state, 1)
    names = ("R7", "B2", "R9", "R10", "R11", "R12", "R13")
    run = Group(tuple(tile(state, 1, name) for name in names))
    thirteens = Group(tuple(tile(state, 1, name) for name in ("K13", "B13", "Y13")))
    assert refusal(state, 1, Open((run, thirteens))) == "TAKEN_TILE_NOT_IN_OPENING"
    with_it = Group((*run.tiles[:1], taken, *run.tiles[2:]))
    assert play(state, 1, Open((with_it, thirteens))).seats[1].opened_as is not None


def test_two_okeys_are_twins_too() -> None:
    """Indicator B1: both B2 are okeys, printed alike. Holding one and taking the other, an
    opening with the okey held uses the taken one."""
    state = position(
        rules="oyna",
        turn=1,
        racks={
            0: ["B3", "B4", "B5"],
            1: ["R10", "R11", "R12", "R13", "K13", "B13", "Y13", "K9", "K10", "B2", "Y3"],
            2: ["B6", "B7", "B8"],
            3: ["K1", "K2", "K3"],
        },
        discards={0: ["B2"]},
    )
    state, taken, held = took(state, 1)
    opened = play(state, 1, _opening(state, held))
    assert taken_unused(opened.this_turn, opened.seats[1].rack) is None
    assert play(opened, 1, Discard(tile(opened, 1, "Y3"))).turn == 2
    assert taken in opened.seats[1].rack


OPENED_R8: Mapping[str, Any] = {
    "turn": 1,
    "racks": {0: ["B3", "B4", "B5"], 1: ["R8", "Y1", "K12"], 2: ["B6", "B7", "B9"]},
    "table": [{"owner": 2, "tiles": ["R5", "R6", "R7"]}],
    "opened": {1: "runs", 2: "runs"},
    "discards": {0: ["R8"]},
}


@pytest.mark.parametrize("preset", ["oyna", "boombala"])
def test_a_lay_off_of_the_copy_held_before_uses_the_taken_tile(preset: str) -> None:
    state, taken, held = took(position(rules=preset, **OPENED_R8), 1)
    # Unused, every other discard is refused (it was, after the other copy went down, before).
    code = "TAKEN_TILE_NOT_USED" if preset == "oyna" else "TAKEN_TILE_MUST_GO_DOWN"
    assert refusal(state, 1, Discard(tile(state, 1, "Y1"))) == code
    laid = play(state, 1, LayOff(held, 0, End.HIGH))
    assert play(laid, 1, Discard(tile(laid, 1, "Y1"))).turn == 2
    # The taken copy, left as the last tile but one, may be thrown too: it is the held one now.
    assert play(laid, 1, Discard(taken)).turn == 2


def test_a_new_meld_with_the_copy_held_before_uses_the_taken_tile() -> None:
    state = position(
        rules="oyna",
        turn=1,
        racks={0: ["B3", "B4", "B5"], 1: ["K8", "Y8", "B8", "Y1", "K12"], 2: ["B6", "B7", "B9"]},
        table=[{"owner": 1, "tiles": ["R10", "R11", "R12", "R13"]}],
        opened={1: "runs"},
        discards={0: ["K8"]},
    )
    state, _taken, held = took(state, 1)
    melded = play(state, 1, LayDown((Group((held, tile(state, 1, "Y8"), tile(state, 1, "B8"))),)))
    assert play(melded, 1, Discard(tile(melded, 1, "Y1"))).turn == 2


def test_the_taken_tile_thrown_back_oyna() -> None:
    """Without a copy held before, a discard of its face is the taken tile (thrown straight
    back); with one held, the discard would leave the taken tile on the rack, still unused."""
    alone = {**OPENED_R8, "racks": {**OPENED_R8["racks"], 1: ["Y1", "K12"]}}
    state, taken, _ = took(position(rules="oyna", **alone), 1)
    assert refusal(state, 1, Discard(taken)) == "TAKEN_TILE_THROWN_BACK"
    state, taken, held = took(position(rules="oyna", **OPENED_R8), 1)
    assert refusal(state, 1, Discard(taken)) == "TAKEN_TILE_NOT_USED"
    assert refusal(state, 1, Discard(held)) == "TAKEN_TILE_NOT_USED"


def test_the_copy_held_before_may_finish_but_the_taken_tile_may_not() -> None:
    """oyna: "You cannot throw the tile you took from your left as your last tile"."""
    held_one = {**OPENED_R8, "racks": {**OPENED_R8["racks"], 1: ["R8", "R9"]}}
    state, taken, held = took(position(rules="oyna", **held_one), 1)
    # R9 and the R8 held go down: the R8 left is the one held before; it finishes.
    laid = play(state, 1, LayOff(held, 0, End.HIGH), LayOff(tile(state, 1, "R9"), 0, End.HIGH))
    done = play(laid, 1, Discard(taken))
    assert done.result is not None and done.result.winner == 1
    # Without a copy held before, the taken tile cannot be left last (the lay-off is refused).
    alone = {**OPENED_R8, "racks": {**OPENED_R8["racks"], 1: ["R4"]}}
    state, taken, _ = took(position(rules="oyna", **alone), 1)
    assert refusal(state, 1, LayOff(tile(state, 1, "R4"), 0, End.LOW)) == (
        "TAKEN_TILE_CANNOT_FINISH"
    )


def test_an_okey_taken_back_from_the_table_is_another_tile() -> None:
    """The taken okey laid off, another okey taken back: the taken one went down (the okey's
    own copy from the table is not counted, as before)."""
    state = position(
        rules="oyna",
        turn=1,
        racks={0: ["B3", "B4", "B5"], 1: ["R7", "Y1", "K12"], 2: ["B6", "B7", "B9"]},
        table=[{"owner": 2, "tiles": ["R5", "R6", "B2"]}],
        opened={1: "runs", 2: "runs"},
        discards={0: ["B2"]},
    )
    state, taken, _ = took(state, 1)
    laid = play(state, 1, LayOff(taken, 0, End.HIGH))  # the taken okey stands for R8
    back = play(laid, 1, TakeOkey(0, (tile(laid, 1, "R7"),)))
    assert twin_of(taken) in back.seats[1].rack and taken not in back.seats[1].rack
    assert taken_unused(back.this_turn, back.seats[1].rack) is None
    assert play(back, 1, Discard(tile(back, 1, "Y1"))).turn == 2


def test_legal_moves_and_hints_follow_the_face() -> None:
    state, taken, held = took(position(rules="oyna", **OPENED_R8), 1)
    laid = play(state, 1, LayOff(held, 0, End.HIGH))
    discards = {a.tile for a in legal_actions(laid, 1) if isinstance(a, Discard)}
    assert discards == set(laid.seats[1].rack) and taken in discards
    hints = seat_hints(laid, 1)
    assert {hint.tile for hint in hints.discards} == set(laid.seats[1].rack)
    # Before: only the lay-offs, the discards all refused.
    before = seat_hints(state, 1)
    assert before.discards == ()
    assert {hint.tile for hint in before.lay_offs} >= {taken, held}


# ---------------------------------------------------------------------------------------------
# 2. Boombala: a give-back only for a tile that cannot go down


def test_give_back_refused_while_the_tile_lays_off() -> None:
    alone = {**OPENED_R8, "racks": {**OPENED_R8["racks"], 1: ["Y1", "K12"]}}
    state, taken, _ = took(position(rules="boombala", **alone), 1)
    with pytest.raises(RuleViolation) as caught:
        apply(state, 1, GiveBack())
    assert caught.value.code == "GIVE_BACK_CAN_LAY_OFF"
    assert caught.value.params == {"tile": "R8"}
    assert "laid off" in render("GIVE_BACK_CAN_LAY_OFF", "en", caught.value.params)
    assert render("GIVE_BACK_CAN_LAY_OFF", "tr", caught.value.params).startswith("Kırmızı 8")
    way = taken_tile_way_down(state, 1)
    assert way is not None and way.actions == (LayOff(taken, 0, End.HIGH),)
    assert GiveBack() not in legal_actions(state, 1)
    assert not seat_hints(state, 1).can_give_back


def test_give_back_refused_while_the_tile_lays_off_after_rack_tiles() -> None:
    """oyna's own example, Boombala's rule: R8 held, R9 taken, R5-R6-R7 on the table."""
    chain = {**OPENED_R8, "discards": {0: ["R9"]}}
    state, taken, _ = took(position(rules="boombala", **chain), 1)
    assert refusal(state, 1, GiveBack()) == "GIVE_BACK_CAN_LAY_OFF"
    way = taken_tile_way_down(state, 1)
    assert way is not None and way.actions[-1] == LayOff(taken, 0, End.HIGH)
    after = play(state, 1, *way.actions)
    assert taken_unused(after.this_turn, after.seats[1].rack) is None


def test_give_back_refused_while_the_tile_makes_a_new_meld_or_an_opening() -> None:
    meld = position(
        rules="boombala",
        turn=1,
        racks={0: ["B3", "B4", "B5"], 1: ["Y8", "B8", "Y1", "K12"], 2: ["B6", "B7", "B9"]},
        table=[{"owner": 1, "tiles": ["R10", "R11", "R12", "R13"]}],
        opened={1: "runs"},
        discards={0: ["K8"]},
    )
    state, _taken, _ = took(meld, 1)
    assert refusal(state, 1, GiveBack()) == "GIVE_BACK_CAN_MELD"
    racks = {**UNOPENED_K11["racks"], 1: [n for n in UNOPENED_K11["racks"][1] if n != "K11"]}
    opening = {**UNOPENED_K11, "racks": racks}
    state, taken, _ = took(position(rules="boombala", **opening), 1)
    assert refusal(state, 1, GiveBack()) == "GIVE_BACK_CAN_OPEN"
    way = taken_tile_way_down(state, 1)
    assert way is not None and isinstance(way.actions[0], Open)
    assert any(taken in group.tiles for group in way.actions[0].groups)


def test_give_back_refused_while_a_pairs_opener_pairs_it() -> None:
    state = position(
        rules="boombala",
        turn=1,
        racks={0: ["B3", "B4", "B5"], 1: ["K8", "Y1", "K12"], 2: ["B6", "B7", "B9"]},
        table=[{"owner": 1, "tiles": ["R10", "R10"]}],
        opened={1: "pairs"},
        discards={0: ["K8"]},
    )
    state, taken, held = took(state, 1)
    assert refusal(state, 1, GiveBack()) == "GIVE_BACK_CAN_PAIR"
    way = taken_tile_way_down(state, 1)
    assert way is not None and way.actions == (LayDown((Group((taken, held)),)),)


def test_give_back_still_allowed_for_a_tile_that_cannot_go_down() -> None:
    state = position(
        rules="boombala",
        turn=1,
        racks={0: ["B3", "B4", "B5"], 1: ["R1", "K12", "Y10"], 2: ["B6", "B7", "B8"]},
        table=[{"owner": 1, "tiles": ["R10", "R11", "R12", "R13"]}],
        opened={1: "runs"},
        discards={0: ["Y6"]},
    )
    state, _taken, _ = took(state, 1)
    assert taken_tile_way_down(state, 1) is None
    after = play(state, 1, GiveBack())
    assert after.phase is Phase.DRAW and len(after.seats[1].penalties) == 1


def test_a_refused_give_back_always_leaves_a_way_to_end_the_turn() -> None:
    """On random Boombala hands: after each take, the give-back applies, or the way down it
    names applies, uses the taken tile, and a discard then ends the turn."""
    rules = RuleSet.preset("boombala")
    rng = random.Random(33)
    refused = 0
    for hand in range(12):
        state = deal(rules, hand % 4, shuffled_deck(rng))
        players = [RandomPlayer(random.Random(hand * 4 + seat)) for seat in range(4)]
        for _turn in range(80):
            if state.ended:
                break
            seat = state.turn
            if state.phase is Phase.DRAW and state.takeable is not None:
                try:
                    taken_state, _ = apply(state, seat, TakeDiscard())
                except OkeyError:
                    taken_state = None
                if taken_state is not None:
                    way = taken_tile_way_down(taken_state, seat)
                    if way is None:
                        play(taken_state, seat, GiveBack())
                    else:
                        refused += 1
                        assert refusal(taken_state, seat, GiveBack()) == way.code
                        after = play(taken_state, seat, *way.actions)
                        rack = after.seats[seat].rack
                        assert taken_unused(after.this_turn, rack) is None
                        assert after.ended or any(
                            isinstance(action, Discard) for action in legal_actions(after, seat)
                        )
            state = players[seat].turn(state)[-1][1]
    assert refused > 0


@pytest.mark.parametrize("level", [BotLevel.EASY, BotLevel.NORMAL, BotLevel.HARD])
def test_bots_put_down_a_taken_tile_they_cannot_give_back(level: BotLevel) -> None:
    alone = {**OPENED_R8, "racks": {**OPENED_R8["racks"], 1: ["Y1", "K12"]}}
    state, _taken, _ = took(position(rules="boombala", **alone), 1)
    decision = decide(view(state, 1), state.rules, level, 7)
    assert not any(isinstance(action, GiveBack) for action in decision.actions)
    after = play(state, 1, *decision.actions)
    assert after.turn == 2


def test_a_bot_takes_a_tile_it_can_put_down_rather_than_drawing() -> None:
    alone = {**OPENED_R8, "racks": {**OPENED_R8["racks"], 1: ["Y1", "K12"]}}
    state = position(rules="boombala", **alone)
    decision = decide(view(state, 1), state.rules, BotLevel.NORMAL, 7)
    assert decision.actions == (TakeDiscard(),)
