"""``engine.hints`` against ``apply``.

On every position of seeded playouts of the three presets and of the scenario files, for every
seat: each hinted move applies to the real state with the effect and cost the hint describes,
every single-tile move ``apply`` accepts (a draw, a take, a give-back, each discard, each
lay-off at each end, each okey take-back with one, two or three rack tiles) is hinted, and the
hints are a function of the seat's view alone (the hidden tiles shuffled, the hints are the
same).
"""

from __future__ import annotations

import copy
import dataclasses
import random
from collections import Counter

import pytest

from okey101.engine import hints_for, seat_hints
from okey101.engine.actions import (
    Action,
    Draw,
    End,
    GiveBack,
    LayOff,
    Open,
    OpenPairs,
    TakeDiscard,
)
from okey101.engine.errors import OkeyError
from okey101.engine.hand import EventKind, HandState, Phase, apply
from okey101.engine.hints import LayOffHint, SeatHints
from okey101.engine.seat import PenaltyReason
from okey101.engine.solver.openings import best_opening, whole_hand_opening
from okey101.engine.solver.pairs import best_pairs
from okey101.engine.solver.playability import is_playable
from okey101.engine.view import view

from support.positions import PRESETS, applies, playout_states, scenario_states, single_tile_moves


def refusal(state: HandState, action: Action) -> str:
    try:
        apply(state, state.turn, action)
    except OkeyError as error:
        return error.code
    return ""


def check_lay_off(state: HandState, hint: LayOffHint) -> HandState:
    """The lay-off applies and puts the tile at the end it names, standing for what it says."""
    seat = state.turn
    after = applies(state, hint.action)
    assert after is not None, f"hinted {hint} does not apply"
    meld = after.table[hint.meld].meld
    assert len(meld.tiles) == len(state.table[hint.meld].meld.tiles) + 1
    position = next(i for i, tile in enumerate(meld.tiles) if tile.id == hint.tile.id)
    if hint.end is End.LOW:
        assert position == 0
    elif hint.end is End.HIGH:
        assert position == len(meld.tiles) - 1
    assert meld.stands_for[position] == hint.stands_for
    assert all(tile.id != hint.tile.id for tile in after.seats[seat].rack)
    return after


def check_moves(state: HandState, hints: SeatHints, counts: Counter[str]) -> None:
    """Every hinted move of the seat to move applies, as described; every single-tile move that
    applies is hinted."""
    seat = state.turn
    rules = state.rules
    me = state.seats[seat]
    assert hints.to_move and hints.phase is state.phase
    hinted: dict[Action, HandState] = {}
    if hints.can_draw:
        after = applies(state, Draw())
        assert after is not None
        assert hints.draw_ends_hand == after.ended
        hinted[Draw()] = after
    if state.phase is Phase.DRAW and state.takeable is not None:
        take = hints.take
        assert take is not None and take.tile == state.takeable
        assert take.refusal == refusal(state, TakeDiscard())
        assert take.allowed == (take.refusal == "")
        if take.allowed:
            counts["takes"] += 1
            after = applies(state, TakeDiscard())
            assert after is not None
            hinted[TakeDiscard()] = after
            for hint in take.lay_offs:
                assert hint.tile == take.tile
                check_lay_off(after, hint)
                counts["take lay-offs"] += 1
            for back in take.take_backs:
                assert applies(after, back.action) is not None
            if take.opening is not None:
                for move in take.opening.moves:
                    assert applies(after, move) is not None
                    counts["openings with the take"] += 1
            # Every lay-off of the taken tile that applies once taken is hinted.
            for index in range(len(after.table)):
                for end in (None, End.LOW, End.HIGH):
                    done = applies(after, LayOff(take.tile, index, end))
                    if done is not None:
                        assert any(
                            hint.meld == index and applies(after, hint.action) == done
                            for hint in take.lay_offs
                        ), (take, index, end)
        if take.usable and take.allowed:
            counts["usable takes"] += 1
    else:
        assert hints.take is None
    if hints.can_give_back:
        after = applies(state, GiveBack())
        assert after is not None
        charged = len(after.seats[seat].penalties) - len(me.penalties)
        assert hints.give_back_penalty == charged * rules.penalty_points
        hinted[GiveBack()] = after
    for hint in hints.lay_offs:
        hinted[hint.action] = check_lay_off(state, hint)
    for back in hints.take_backs:
        after = applies(state, back.action)
        assert after is not None, f"hinted {back} does not apply"
        assert back.okey in after.seats[seat].rack and state.okey.is_wild(back.okey)
        assert all(tile in after.table[back.meld].meld.tiles for tile in back.tiles)
        hinted[back.action] = after
    for discard in hints.discards:
        done = apply(state, seat, discard.action)
        after, events = done
        charged = sum(event.points for event in events if event.kind is EventKind.PENALTY)
        assert discard.penalty == charged
        finishing = len(me.rack) == 1
        assert discard.finishes == finishing
        assert discard.ends_hand == after.ended
        expected: PenaltyReason | None = None
        if not finishing:
            if state.okey.is_wild(discard.tile):
                expected = PenaltyReason.OKEY_DISCARDED
            elif is_playable(discard.tile, state.okey, state.table_melds(), rules):
                expected = PenaltyReason.PLAYABLE_DISCARDED
        assert discard.reason is expected, discard
        assert discard.penalty == (rules.penalty_points if expected else 0)
        counts["costly discards"] += discard.penalty > 0
        hinted[discard.action] = after
    if hints.opening is not None:
        for move in hints.opening.moves:
            assert isinstance(move, (Open, OpenPairs))
            assert applies(state, move) is not None, move
            counts["openings now"] += 1
    assert len(hinted) == len(hints.lay_offs) + len(hints.take_backs) + len(hints.discards) + (
        hints.can_draw + (hints.take is not None and hints.take.allowed) + hints.can_give_back
    ), "a move is hinted twice"
    for action in single_tile_moves(state):
        after = applies(state, action)
        if after is None or type(action).__name__ == "ShowIndicator":
            continue
        counts[type(action).__name__] += 1
        if action in hinted:
            continue
        # The same lay-off written another way: a run's end left unnamed where only one fits,
        # a set's end named (a set has none).
        assert isinstance(action, LayOff), f"{action} applies but is not hinted"
        assert any(
            isinstance(other, LayOff)
            and (other.tile, other.meld) == (action.tile, action.meld)
            and result == after
            for other, result in hinted.items()
        ), f"{action} applies but is not hinted"
        counts["lay-offs written another way"] += 1


def check_opening(state: HandState, seat: int, hints: SeatHints) -> None:
    """The opening hinted is the solver's (as BestOpening gives it); okeys are the rack's."""
    me = state.seats[seat]
    if me.opened_as is not None:
        assert hints.opening is None
    else:
        opening = hints.opening
        assert opening is not None
        taken = state.this_turn
        required = taken.taken if seat == state.turn and taken.taken_unopened else None
        hand = state.hand_of(seat)
        assert opening.required == required
        assert opening.runs_and_sets == best_opening(hand, state.rules, required=required)
        assert opening.pairs == best_pairs(hand, required=required)
        assert opening.whole_hand == whole_hand_opening(hand, state.rules, required)
        if seat != state.turn or state.phase is Phase.DRAW:
            assert not opening.can_open_now
    wilds = [tile for tile in me.rack if state.okey.is_wild(tile)]
    assert [stand_in.tile for stand_in in hints.okeys] == wilds
    for stand_in in hints.okeys:
        assert all(hint.tile == stand_in.tile for hint in stand_in.lay_offs)
        assert set(stand_in.lay_offs) == {h for h in hints.lay_offs if h.tile == stand_in.tile}
        shown = {h.stands_for for h in stand_in.lay_offs} | {stand_in.in_arrangement}
        assert set(stand_in.faces) == shown - {None}


def check(state: HandState, counts: Counter[str]) -> None:
    snapshot = copy.deepcopy(state)
    for seat in range(4):
        hints = seat_hints(state, seat)
        assert hints.seat == seat
        if state.ended:
            assert hints == SeatHints(seat, Phase.ENDED, to_move=False)
            continue
        check_opening(state, seat, hints)
        if seat != state.turn:
            bare = SeatHints(seat, state.phase, False, opening=hints.opening, okeys=hints.okeys)
            assert hints == bare
            continue
        check_moves(state, hints, counts)
    assert state == snapshot


@pytest.mark.parametrize("preset", PRESETS)
def test_hints_of_seeded_playouts(preset: str) -> None:
    counts: Counter[str] = Counter()
    for state in playout_states(preset):
        check(state, counts)
    assert counts["Draw"] >= 50 and counts["Discard"] >= 500, counts
    assert counts["LayOff"] > 0 and counts["TakeDiscard"] > 0, counts
    assert counts["costly discards"] > 0 and counts["openings now"] > 0, counts


def test_hints_of_the_scenarios() -> None:
    """The rarer positions: okeys to take back (by completing a set too), give-backs, the
    stock out, the take refused and taken to open with."""
    counts: Counter[str] = Counter()
    for state in scenario_states():
        check(state, counts)
    assert counts["TakeOkey"] >= 3 and counts["GiveBack"] > 0, counts
    assert counts["LayOff"] >= 10 and counts["takes"] > 0, counts


def shuffled_hidden(state: HandState, rng: random.Random, seat: int) -> HandState:
    """``state`` with the tiles ``seat`` cannot see (the stock, the other racks) dealt anew."""
    hidden = list(state.stock)
    for index, other in enumerate(state.seats):
        if index != seat:
            hidden.extend(other.rack)
    rng.shuffle(hidden)
    stock, rest = tuple(hidden[: len(state.stock)]), hidden[len(state.stock) :]
    seats = []
    for index, other in enumerate(state.seats):
        if index == seat:
            seats.append(other)
            continue
        rack, rest = tuple(rest[: len(other.rack)]), rest[len(other.rack) :]
        seats.append(dataclasses.replace(other, rack=rack))
    return dataclasses.replace(state, stock=stock, seats=tuple(seats))


@pytest.mark.parametrize("preset", PRESETS)
def test_hints_depend_on_the_view_alone(preset: str) -> None:
    """Hints never read a hidden tile: the same view gives the same hints, whatever the other
    racks and the stock hold; and the hints from the view equal those from the state."""
    rng = random.Random(101)
    states = [s for s in playout_states(preset) if not s.ended]
    for state in rng.sample(states, 40):
        for seat in range(4):
            hints = seat_hints(state, seat)
            assert hints == hints_for(view(state, seat), state.rules)
            other = shuffled_hidden(state, rng, seat)
            assert seat_hints(other, seat) == hints
