"""Seeded random players and whole-hand playouts.

``RandomPlayer`` is the floor of play: it opens when it can (runs and sets, else pairs, else the
whole hand), lays down and lays off what it can once opened, takes the left discard now and then
when the rules let it, and discards at random among the discards the rules allow. It sees only
its own ``view``-level information (its rack, the table, the discard it may take) and uses
``random.Random`` passed in, so a playout is a function of its seed.

It serves the engine's random playouts (tests and ``okey101 bench engine``) and is the bot
service's ``random`` level and the table's fallback when the bot service cannot be reached.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from okey101.engine.actions import (
    Action,
    Discard,
    Draw,
    End,
    GiveBack,
    Group,
    LayDown,
    LayOff,
    Open,
    OpenPairs,
    TakeDiscard,
)
from okey101.engine.errors import OkeyError
from okey101.engine.hand import (
    Event,
    HandState,
    Phase,
    apply,
    taken_tile_way_down,
    taken_unused,
)
from okey101.engine.melds import HIGH_ONE, Meld, MeldKind
from okey101.engine.seat import OpenedAs
from okey101.engine.solver.arrangement import Hand
from okey101.engine.solver.bounds import quick_value_bound
from okey101.engine.solver.openings import best_opening, least_leftover, opening_value_bound
from okey101.engine.solver.pairs import best_pairs, most_pairs_bound
from okey101.engine.solver.playability import meld_takes
from okey101.engine.tiles import Tile, face_of

# How often a random player tries to take the left discard rather than draw.
TAKE_CHANCE = 0.25


def _whole_hand_floor(hand: Hand) -> int:
    """The least a whole-hand lay-down can be worth: every tile but the highest, okeys as 1."""
    okey_face = hand.okey.face
    total = highest = 0
    for tile in hand.tiles:
        # Okey.is_wild and Okey.plays_as, inlined: this runs for every unopened turn.
        tile_id = tile.id
        if tile_id >= 104:
            value = okey_face % 13 + 1  # a false joker plays as the okey's face
        elif tile_id >> 1 == okey_face:
            value = 1
        else:
            value = (tile_id >> 1) % 13 + 1
        total += value
        highest = max(highest, value)
    return total - highest


class _Step:
    """Callable that applies a move for one seat, remembering the latest state."""

    def __init__(self, state: HandState, seat: int) -> None:
        self.state = state
        self.seat = seat
        self.log: list[tuple[Action, HandState, tuple[Event, ...]]] = []

    def ended(self) -> bool:
        return self.state.ended

    def __call__(self, action: Action) -> bool:
        try:
            state, events = apply(self.state, self.seat, action)
        except OkeyError:
            return False
        self.state = state
        self.log.append((action, state, events))
        return True


@dataclass
class RandomPlayer:
    """A seeded player that makes legal moves, greedy only about putting tiles down."""

    rng: random.Random

    def turn(self, state: HandState) -> list[tuple[Action, HandState, tuple[Event, ...]]]:
        """Play the whole turn of the seat to move: every step, in order, with its result."""
        seat = state.turn
        if state.phase is Phase.DRAW and self.rng.random() < TAKE_CHANCE:
            # Take the left discard only if the rest of the turn then works out.
            trial = _Step(state, seat)
            if (
                trial(TakeDiscard())
                and self._finish_turn(seat, trial, after_take=True)
                and self.keeps_take(trial.log)
            ):
                return trial.log
        step = _Step(state, seat)
        if state.phase is Phase.DRAW:
            step(Draw())
        if not self._finish_turn(seat, step, after_take=False):
            raise AssertionError("a random player found no legal discard")
        return step.log

    def keeps_take(self, log: Sequence[tuple[Action, HandState, tuple[Event, ...]]]) -> bool:
        """Whether a turn begun by taking the left discard, played out as ``log``, is the turn
        played (else it draws instead): the random player keeps every one that works out."""
        return True

    def _finish_turn(self, seat: int, step: _Step, *, after_take: bool) -> bool:
        """Put down what it can and discard; False if no discard is allowed."""
        if step.ended():
            return True
        self._put_down(seat, step)
        if step.ended():
            return True
        unused = taken_unused(step.state.this_turn, step.state.seats[seat].rack) is not None
        # A taken tile it could not use: give it back where the rules allow (then draw), or
        # keep it where they let an opened player keep it.
        if after_take and unused:
            if step(GiveBack()):
                step(Draw())
                if step.ended():
                    return True
                self._put_down(seat, step)
                if step.ended():
                    return True
            else:
                # Refused while it can still go down (Boombala): the engine's way down.
                way = taken_tile_way_down(step.state, seat)
                done = way is not None and all(step(action) for action in way.actions)
                if done and step.ended():
                    return True
        return any(step(Discard(tile)) for tile in self.discard_order(step.state, seat))

    def discard_order(self, state: HandState, seat: int) -> list[Tile]:
        """The discards to try, in order (the first the rules allow ends the turn): at random."""
        rack = list(state.seats[seat].rack)
        self.rng.shuffle(rack)
        return rack

    def _put_down(self, seat: int, step: _Step) -> None:
        state = step.state
        rules = state.rules
        opened_as = state.seats[seat].opened_as
        if opened_as is None:
            hand = state.hand_of(seat)
            taken = state.this_turn.taken if state.this_turn.taken_unopened else None
            # The whole hand laid down needs every tile but one in melds: a value bound says
            # quickly when neither that nor a 101 opening can be.
            needed = min(rules.opening_min_points, _whole_hand_floor(hand))
            opening = (
                best_opening(hand, rules, required=taken)
                if quick_value_bound(hand, rules) >= needed
                and opening_value_bound(hand, rules, required=taken, at_least=needed) >= needed
                else None
            )
            if (
                opening is not None
                and opening.melds
                and (opening.value >= rules.opening_min_points or len(opening.leftover) == 1)
            ):
                step(Open(tuple(Group(meld.tiles) for meld in opening.melds)))
            elif most_pairs_bound(hand) >= rules.opening_min_pairs:
                pairs = best_pairs(hand, required=taken)
                if pairs.pair_count >= rules.opening_min_pairs:
                    step(OpenPairs(tuple((m.tiles[0], m.tiles[1]) for m in pairs.melds)))
            return
        hand = state.hand_of(seat)
        if opened_as is OpenedAs.RUNS and quick_value_bound(hand, rules):
            for meld in least_leftover(hand, rules).melds:
                step(LayDown((Group(meld.tiles),)))
        if opened_as is OpenedAs.PAIRS or step.state.pairs_on_table():
            for meld in best_pairs(step.state.hand_of(seat)).melds:
                step(LayDown((Group(meld.tiles),)))
        self._lay_off_all(seat, step)

    def _lay_off_all(self, seat: int, step: _Step) -> None:
        progress = True
        top = HIGH_ONE if step.state.rules.run_may_end_12_13_1 else 13
        while progress:
            progress = False
            state = step.state
            okey = state.okey
            rack = state.seats[seat].rack
            if len(rack) <= 1:
                return
            faces = {okey.plays_as(tile) for tile in rack if not okey.is_wild(tile)}
            for index, item in enumerate(state.table):
                meld = item.meld
                if meld.kind is MeldKind.PAIR:
                    continue
                if faces.isdisjoint(meld_takes(meld, state.rules)):
                    continue  # no tile of the rack fits it (what the loop below would find)
                # Only the tiles the meld can take are tried (the engine refuses the others,
                # and a refusal costs an exception): a set's missing colours, a run's ends.
                fits: set[int]
                if meld.kind is MeldKind.SET:
                    if len(meld.tiles) >= 4:
                        continue
                    fits = {face_of(c, meld.number) for c in range(4)} - _real_faces(meld)
                else:
                    colour = meld.colour
                    assert colour is not None
                    fits = set()
                    if meld.high < top:
                        fits.add(_run_face(colour, meld.high + 1))
                    if meld.low > 1:
                        fits.add(_run_face(colour, meld.low - 1))
                for tile in rack:
                    if okey.is_wild(tile):
                        continue  # keep okeys: laying them off is rarely worth it
                    face = okey.plays_as(tile)
                    if face not in fits:
                        continue
                    ends: list[End | None] = []
                    if meld.kind is MeldKind.SET:
                        ends.append(None)
                    else:
                        if meld.low > 1 and _run_face(meld.colour, meld.low - 1) == face:
                            ends.append(End.LOW)
                        if meld.high < top and _run_face(meld.colour, meld.high + 1) == face:
                            ends.append(End.HIGH)
                    for end in ends:
                        if step(LayOff(tile, index, end)):
                            progress = True
                            break
                    if progress:
                        break
                if progress:
                    break


def _real_faces(meld: Meld) -> set[int]:
    """The faces of a set's real tiles (an okey in a set of three closes no colour)."""
    return {
        face
        for face, wild in zip(meld.stands_for, meld.wild, strict=True)
        if face is not None and not wild
    }


def _run_face(colour: int | None, place: int) -> int:
    assert colour is not None
    return face_of(colour, 1 if place == HIGH_ONE else place)


@dataclass(frozen=True, slots=True)
class PlayoutStats:
    actions: int
    turns: int


def play_out(
    state: HandState, players: Sequence[RandomPlayer], *, max_turns: int = 1000
) -> tuple[HandState, PlayoutStats]:
    """Play ``state`` to the end with one player per seat."""
    actions = 0
    turns = 0
    while not state.ended:
        if turns >= max_turns:
            raise AssertionError("a playout did not end")
        steps = players[state.turn].turn(state)
        actions += len(steps)
        turns += 1
        state = steps[-1][1]
    return state, PlayoutStats(actions, turns)
