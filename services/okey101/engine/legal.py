"""The moves a seat may make now.

``legal_moves(state, seat)`` lists, in this order, every move of the moment that can be listed,
each checked by ``apply`` (so each one applies), with the +101 it charges:

- ``Draw`` (with the stock out, where the next seat may take the last discard: declining it),
  ``TakeDiscard``, ``GiveBack`` (+101), ``ShowIndicator`` (where the rules score it);
- then the openings and new melds the solver suggests (``suggested: True``, see below);
- then, meld by meld on the table, every lay-off of every rack tile at every end it fits (a
  run's low or high end, named; a set's, unnamed) and every okey take-back (a run's, a pair's
  or a four-tile set's okey for one rack tile; a three-tile set's by completing it to all four
  colours: one take-back per set of rack tiles, in rack order);
- then a discard of every rack tile, each with its cost: +101 for the okey or a tile a meld on
  the table could take, nothing for the discard that finishes.

Openings (``Open``, ``OpenPairs``) and new melds (``LayDown``) cannot all be listed: any subset of
the rack may split into runs, sets and pairs, and each split into groups is another move. They
are offered as the solver's suggestions (``suggested_melds``): the best runs-and-sets opening
(using the tile taken from the left when it must go down), the whole hand laid down but one
tile, the best pairs opening; once opened, each meld of the arrangement that leaves least in
hand (runs openers) and each pair the rack holds, as a ``LayDown`` of one group. Any other
opening or meld ``apply`` accepts is legal too: check one with ``apply``.

``legal_actions(state, seat)`` is the same list as bare actions. Both are empty when the hand
has ended or ``seat`` is not to move.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
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
    ShowIndicator,
    TakeDiscard,
    TakeOkey,
)
from okey101.engine.errors import OkeyError
from okey101.engine.hand import EventKind, HandState, Phase, TableMeld, apply
from okey101.engine.melds import MeldKind
from okey101.engine.seat import OpenedAs
from okey101.engine.solver.openings import best_opening, lay_down_all_but_one, least_leftover
from okey101.engine.solver.pairs import best_pairs
from okey101.engine.tiles import Tile, face_number


@dataclass(frozen=True, slots=True)
class LegalMove:
    """A move ``seat`` may make now, and the points it charges."""

    action: Action
    # The +101s the move charges (a discard of the okey or of a playable tile that does not
    # finish, a give-back), as ``apply`` charges them.
    penalty: int = 0
    # An opening or new meld the solver suggests: these are not every legal one (see the
    # module docstring).
    suggested: bool = False


def legal_moves(state: HandState, seat: int) -> tuple[LegalMove, ...]:
    """Every move ``seat`` may make now that can be listed, and the solver's suggested
    openings and melds, each with its cost (empty when it is not its turn)."""
    if state.ended or seat != state.turn:
        return ()
    suggested = _suggestions(state, seat)
    moves: list[LegalMove] = []
    seen: set[Action] = set()
    for action in _candidates(state, seat, suggested):
        if action in seen:
            continue
        seen.add(action)
        try:
            _after, events = apply(state, seat, action)
        except OkeyError:
            continue
        penalty = sum(event.points for event in events if event.kind is EventKind.PENALTY)
        moves.append(LegalMove(action, penalty, action in suggested))
    return tuple(moves)


def legal_actions(state: HandState, seat: int) -> list[Action]:
    """The actions of ``legal_moves``: every listable move of the moment and the suggested
    openings and melds, each of which applies."""
    return [move.action for move in legal_moves(state, seat)]


def suggested_melds(state: HandState, seat: int) -> list[Action]:
    """The openings and new melds the solver suggests that apply now (see the module
    docstring): never every legal one."""
    return [move.action for move in legal_moves(state, seat) if move.suggested]


def _candidates(state: HandState, seat: int, suggested: list[Action]) -> Iterator[Action]:
    """Every move worth trying, in the listed order (``apply`` decides which are legal)."""
    yield from (Draw(), TakeDiscard(), GiveBack(), ShowIndicator())
    yield from suggested
    rack = state.seats[seat].rack
    plays = state.phase is not Phase.DRAW and state.seats[seat].opened_as is not None
    if plays:  # else every lay-off and okey take-back is refused (MUST_DRAW_FIRST / _OPEN_FIRST)
        for index, item in enumerate(state.table):
            yield from lay_off_candidates(index, item, rack)
            yield from okey_take_candidates(state, index, item, rack)
    yield from (Discard(tile) for tile in rack)


def lay_off_candidates(index: int, item: TableMeld, rack: tuple[Tile, ...]) -> Iterator[LayOff]:
    """A lay-off of every rack tile at every end: a run's named (the unnamed end is the same
    move where only one end fits), a set's unnamed (a set has no ends)."""
    ends: tuple[End | None, ...] = (
        (End.LOW, End.HIGH) if item.meld.kind is MeldKind.RUN else (None,)
    )
    for tile in rack:
        for end in ends:
            yield LayOff(tile, index, end)


def okey_take_candidates(
    state: HandState, index: int, item: TableMeld, rack: tuple[Tile, ...]
) -> Iterator[TakeOkey]:
    """Every okey take-back worth trying on the meld at ``index`` (none without an okey): a
    three-tile set's by each set of rack tiles that completes it to four colours, any other
    meld's for each rack tile."""
    meld = item.meld
    if not any(meld.wild):
        return
    okey = state.okey
    if meld.kind is MeldKind.SET and len(meld.tiles) == 3:
        # Completed to all four colours: the real tiles of the set's number that it lacks.
        real = sum(1 for wild in meld.wild if not wild)
        fitting = [
            tile
            for tile in rack
            if not okey.is_wild(tile) and face_number(okey.plays_as(tile)) == meld.number
        ]
        for tiles in itertools.combinations(fitting, 4 - real):
            yield TakeOkey(index, tiles)
        return
    for tile in rack:
        yield TakeOkey(index, (tile,))


def _suggestions(state: HandState, seat: int) -> list[Action]:
    """The solver's openings and new melds for the play phase (none while drawing)."""
    if state.phase is Phase.DRAW:
        return []
    me = state.seats[seat]
    rules = state.rules
    hand = state.hand_of(seat)
    out: list[Action] = []
    taken = state.this_turn.taken if state.this_turn.taken_unopened else None
    if me.opened_as is None:
        opening = best_opening(hand, rules, required=taken)
        if opening.value >= rules.opening_min_points:
            out.append(Open(tuple(Group(meld.tiles) for meld in opening.melds)))
        whole = lay_down_all_but_one(hand, rules)
        if whole is not None:
            out.append(Open(tuple(Group(meld.tiles) for meld in whole.melds)))
        pairs = best_pairs(hand, required=taken)
        if pairs.pair_count >= rules.opening_min_pairs:
            out.append(OpenPairs(tuple((meld.tiles[0], meld.tiles[1]) for meld in pairs.melds)))
        return out
    if me.opened_as is OpenedAs.RUNS:
        arrangement = least_leftover(hand, rules)
        out.extend(LayDown((Group(meld.tiles),)) for meld in arrangement.melds)
    out.extend(LayDown((Group(meld.tiles),)) for meld in best_pairs(hand).melds)
    return out
