"""Hints for one seat: what it may do now and what each move would do, from what it may know.

``hints_for(seat_view, rules)`` answers for the phase the seat is in:

- drawing from the stock and taking the left discard: whether each is allowed now, and, for the
  take, whether the tile could go on the table this turn, whether it must, and how (where it
  lays off, which okeys it takes back, the best opening with it);
- once it has drawn (or on its first turn): every lay-off of every rack tile (meld index and
  end, and what the tile stands for there), every okey take-back (the meld, the tile(s) to
  put), every discard with its cost (+101 for the okey or a playable tile, nothing for the
  discard that finishes), and a give-back where the rules allow one;
- while it has not opened: the best opening by runs and sets and by pairs and the whole hand
  but one tile (the solver's, as RulesService.BestOpening gives them) and the openings that
  apply now;
- what each okey on its rack could stand for: at each lay-off, and in the solver's best
  arrangement of the rack.

Nothing is hinted for a seat that is not to move but its opening and its okeys; nothing at all
once the hand has ended. The answer is computed from the seat's ``SeatView`` alone, so it never
depends on (or leaks) a hidden tile: every move is checked by ``apply`` on the view's shadow
state (``engine.bots.shadow``: the unseen tiles as placeholders), and no rule of ``apply``
reads another rack or the order of the stock. tests/engine/test_engine_hints.py checks, on random
positions of the three presets, that every hinted move applies to the real state with the
described effect and that every single-tile move ``apply`` accepts is hinted.

``seat_hints(state, seat)`` is the same from a full state (``hints_for(view(state, seat))``).
Hints are computed only when asked: nothing in the move path calls this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from okey101.engine.actions import (
    Action,
    Discard,
    Draw,
    End,
    GiveBack,
    Group,
    LayOff,
    Open,
    OpenPairs,
    TakeDiscard,
    TakeOkey,
)
from okey101.engine.bots.shadow import shadow_state
from okey101.engine.errors import OkeyError
from okey101.engine.hand import Event, EventKind, HandState, Phase, apply
from okey101.engine.legal import lay_off_candidates, okey_take_candidates
from okey101.engine.rules import LeftDiscardPolicy, RuleSet
from okey101.engine.seat import OpenedAs, PenaltyReason
from okey101.engine.solver.arrangement import Arrangement
from okey101.engine.solver.openings import best_opening, least_leftover, whole_hand_opening
from okey101.engine.solver.pairs import best_pairs
from okey101.engine.solver.playability import can_use
from okey101.engine.tiles import Tile
from okey101.engine.view import SeatView, view


@dataclass(frozen=True, slots=True)
class LayOffHint:
    """A rack tile that can be laid off on a meld of the table now."""

    tile: Tile
    # The meld's index on the table.
    meld: int
    # A run's end (named); None for a set (a set has no ends).
    end: End | None
    # The face the tile plays as in the meld after the lay-off (for an okey: what it stands
    # for); None only for an okey whose colour the set leaves open.
    stands_for: int | None

    @property
    def action(self) -> LayOff:
        return LayOff(self.tile, self.meld, self.end)


@dataclass(frozen=True, slots=True)
class TakeBackHint:
    """An okey on the table that can be taken back now, and the rack tile(s) to put for it."""

    meld: int
    # The tile the okey stands for; for a three-tile set, the tiles completing it to four.
    tiles: tuple[Tile, ...]
    # The okey that comes into the rack.
    okey: Tile

    @property
    def action(self) -> TakeOkey:
        return TakeOkey(self.meld, self.tiles)


@dataclass(frozen=True, slots=True)
class DiscardHint:
    """A rack tile that may be discarded now, and what it costs."""

    tile: Tile
    # The points charged (a +101 for the okey or a playable tile), as ``apply`` charges them.
    penalty: int
    # Why it is charged (OKEY_DISCARDED, PLAYABLE_DISCARDED); None when free.
    reason: PenaltyReason | None
    # The last tile: the discard finishes the hand (and costs nothing).
    finishes: bool
    # The hand ends with it (a finish, or the stock out where the last discard ends it).
    ends_hand: bool

    @property
    def action(self) -> Discard:
        return Discard(self.tile)


@dataclass(frozen=True, slots=True)
class OpeningHint:
    """The best openings the rack holds (the solver's, as RulesService.BestOpening answers),
    and those that apply now."""

    # The highest-valued runs and sets (a tile kept to discard).
    runs_and_sets: Arrangement
    # The most pairs (a tile kept to discard).
    pairs: Arrangement
    # Runs and sets of every tile but one (an opening that needs no minimum), if any.
    whole_hand: Arrangement | None
    # runs_and_sets reaches the opening minimum, or whole_hand is set.
    can_open_with_runs: bool
    # pairs reaches the minimum of pairs.
    can_open_with_pairs: bool
    # The tile every opening must use (the left discard taken to open with), if any.
    required: Tile | None
    # The openings among these that ``apply`` accepts now: the best runs and sets (when worth
    # the minimum), the whole hand, the best pairs (when enough). Empty when the seat cannot
    # open now (not its turn, still to draw, or below the minimums).
    moves: tuple[Open | OpenPairs, ...] = ()

    @property
    def can_open_now(self) -> bool:
        return bool(self.moves)


@dataclass(frozen=True, slots=True)
class TakeHint:
    """The left discard the seat may take instead of drawing, and what it could do with it."""

    tile: Tile
    # ``apply`` accepts the take now.
    allowed: bool
    # Why not (the engine's code: TAKE_ONLY_TO_OPEN, TAKEN_TILE_UNUSABLE ...); "" when allowed.
    refusal: str
    # The refusal's parameters, as its sentence names them (``RuleViolation(refusal, **...)``).
    refusal_params: tuple[tuple[str, str | int], ...]
    # The tile can go on the table this turn (the engine's rule for a taken tile).
    usable: bool
    # Once taken it must go on the table this turn (else, where the rules allow, given back
    # for a +101): the rule set's left_discard, and for north_sultan an unopened seat.
    must_use: bool
    # Once taken: where it lays off, which okeys it takes back (each applies right after the
    # take), and for an unopened seat the best opening with it.
    lay_offs: tuple[LayOffHint, ...] = ()
    take_backs: tuple[TakeBackHint, ...] = ()
    opening: OpeningHint | None = None


@dataclass(frozen=True, slots=True)
class OkeyStandIn:
    """An okey on the seat's rack and what it could stand for."""

    tile: Tile
    # Every face it could stand for in these hints (its lay-offs and its arrangement), sorted.
    faces: tuple[int, ...]
    # Its lay-offs now (each with the face it would stand for).
    lay_offs: tuple[LayOffHint, ...]
    # The face it stands for in the solver's best arrangement of the rack (the best opening;
    # once opened with runs, the melds that leave least in hand; with pairs, the pairs); None
    # when that arrangement leaves it out or leaves its colour open.
    in_arrangement: int | None


@dataclass(frozen=True, slots=True)
class SeatHints:
    """Everything hinted to one seat for the phase it is in (module docstring)."""

    seat: int
    phase: Phase
    # The hand is live and the seat is to move.
    to_move: bool
    # Draw: ``apply`` accepts a draw now; with the stock out (where the next seat may take the
    # last discard) the draw declines it and ends the hand.
    can_draw: bool = False
    draw_ends_hand: bool = False
    # The left discard, while the seat is still to draw and there is one.
    take: TakeHint | None = None
    # A taken discard can be given back now (boombala), for these points.
    can_give_back: bool = False
    give_back_penalty: int = 0
    lay_offs: tuple[LayOffHint, ...] = ()
    take_backs: tuple[TakeBackHint, ...] = ()
    discards: tuple[DiscardHint, ...] = ()
    # While the seat has not opened (and the hand is live).
    opening: OpeningHint | None = None
    okeys: tuple[OkeyStandIn, ...] = ()


def seat_hints(state: HandState, seat: int) -> SeatHints:
    """``hints_for`` the view ``seat`` has of ``state``."""
    return hints_for(view(state, seat), state.rules)


def hints_for(seat_view: SeatView, rules: RuleSet) -> SeatHints:
    """What ``seat_view``'s seat may do now and what each move would do (module docstring);
    ``rules`` is the hand's rule set. A view of an unknown rules version is InvalidInput."""
    seat = seat_view.seat
    state = shadow_state(seat_view, rules)
    if state.ended:
        return SeatHints(seat, state.phase, to_move=False)
    opened = state.seats[seat].opened_as is not None
    if state.turn != seat:
        opening = None if opened else _opening(state, seat, None, now=False)
        return SeatHints(
            seat, state.phase, False, opening=opening, okeys=_okeys(state, seat, (), opening)
        )
    if state.phase is Phase.DRAW:
        return _drawing(state, seat, opened)
    lay_offs = _lay_offs(state, seat, state.seats[seat].rack)
    give_back = _try(state, seat, GiveBack())
    required = state.this_turn.taken if state.this_turn.taken_unopened else None
    opening = None if opened else _opening(state, seat, required, now=True)
    return SeatHints(
        seat,
        state.phase,
        True,
        can_give_back=give_back is not None,
        give_back_penalty=_penalty(give_back[1]) if give_back is not None else 0,
        lay_offs=lay_offs,
        take_backs=_take_backs(state, seat, state.seats[seat].rack),
        discards=_discards(state, seat),
        opening=opening,
        okeys=_okeys(state, seat, lay_offs, opening),
    )


def _drawing(state: HandState, seat: int, opened: bool) -> SeatHints:
    """The hints of a seat still to draw: the draw, the take, its opening and okeys."""
    draw = _try(state, seat, Draw())
    take: TakeHint | None = None
    if state.takeable is not None:
        take = _take_hint(state, seat, state.takeable)
    opening = None if opened else _opening(state, seat, None, now=False)
    return SeatHints(
        seat,
        state.phase,
        True,
        can_draw=draw is not None,
        draw_ends_hand=draw is not None and draw[0].ended,
        take=take,
        opening=opening,
        okeys=_okeys(state, seat, (), opening),
    )


def _take_hint(state: HandState, seat: int, tile: Tile) -> TakeHint:
    me = state.seats[seat]
    rules = state.rules
    usable = can_use(
        tile,
        state.hand_of(seat),
        state.table_melds(),
        me.opened_as,
        rules,
        pairs_on_table=state.pairs_on_table(),
    )
    policy = rules.left_discard
    must_use = policy is not LeftDiscardPolicy.OPENED_TAKE_FREELY or me.opened_as is None
    try:
        after, _events = apply(state, seat, TakeDiscard())
    except OkeyError as error:
        params = tuple(sorted(error.params.items()))
        return TakeHint(tile, False, error.code, params, usable, must_use)
    only = (tile,)
    return TakeHint(
        tile,
        True,
        "",
        (),
        usable,
        must_use,
        lay_offs=_lay_offs(after, seat, only),
        take_backs=tuple(
            hint
            for hint in _take_backs(after, seat, after.seats[seat].rack)
            if any(t.face == tile.face for t in hint.tiles)
        ),
        opening=None if me.opened_as is not None else _opening(after, seat, tile, now=True),
    )


def _try(state: HandState, seat: int, action: Action) -> tuple[HandState, tuple[Event, ...]] | None:
    try:
        return apply(state, seat, action)
    except OkeyError:
        return None


def _penalty(events: Iterable[Event]) -> int:
    return sum(event.points for event in events if event.kind is EventKind.PENALTY)


def _lay_offs(state: HandState, seat: int, tiles: tuple[Tile, ...]) -> tuple[LayOffHint, ...]:
    """Every lay-off of ``tiles`` that applies, meld by meld (a run's ends named)."""
    if state.seats[seat].opened_as is None:
        return ()  # MUST_OPEN_FIRST, every one
    out: list[LayOffHint] = []
    for index, item in enumerate(state.table):
        for action in lay_off_candidates(index, item, tiles):
            done = _try(state, seat, action)
            if done is None:
                continue
            meld = done[0].table[index].meld
            position = next(i for i, t in enumerate(meld.tiles) if t.id == action.tile.id)
            out.append(LayOffHint(action.tile, index, action.end, meld.stands_for[position]))
    return tuple(out)


def _take_backs(state: HandState, seat: int, rack: tuple[Tile, ...]) -> tuple[TakeBackHint, ...]:
    if state.seats[seat].opened_as is None:
        return ()
    out: list[TakeBackHint] = []
    for index, item in enumerate(state.table):
        for action in okey_take_candidates(state, index, item, rack):
            done = _try(state, seat, action)
            if done is None:
                continue
            had = {tile.id for tile in rack}
            okey = next(tile for tile in done[0].seats[seat].rack if tile.id not in had)
            out.append(TakeBackHint(index, action.tiles, okey))
    return tuple(out)


def _discards(state: HandState, seat: int) -> tuple[DiscardHint, ...]:
    rack = state.seats[seat].rack
    out: list[DiscardHint] = []
    for tile in rack:
        done = _try(state, seat, Discard(tile))
        if done is None:
            continue
        after, events = done
        reasons = [event.detail for event in events if event.kind is EventKind.PENALTY]
        out.append(
            DiscardHint(
                tile,
                _penalty(events),
                PenaltyReason(reasons[0]) if reasons else None,
                finishes=len(rack) == 1,
                ends_hand=after.ended,
            )
        )
    return tuple(out)


def _opening(state: HandState, seat: int, required: Tile | None, *, now: bool) -> OpeningHint:
    """The solver's best openings of the seat's rack; with ``now``, those ``apply`` accepts."""
    rules = state.rules
    hand = state.hand_of(seat)
    runs = best_opening(hand, rules, required=required)
    pairs = best_pairs(hand, required=required)
    whole = whole_hand_opening(hand, rules, required)
    can_runs = runs.value >= rules.opening_min_points
    can_pairs = pairs.pair_count >= rules.opening_min_pairs
    moves: list[Open | OpenPairs] = []
    if now:
        candidates: list[Open | OpenPairs] = []
        if can_runs:
            candidates.append(Open(tuple(Group(meld.tiles) for meld in runs.melds)))
        if whole is not None:
            candidates.append(Open(tuple(Group(meld.tiles) for meld in whole.melds)))
        if can_pairs:
            candidates.append(OpenPairs(tuple((m.tiles[0], m.tiles[1]) for m in pairs.melds)))
        moves = [move for move in candidates if _try(state, seat, move) is not None]
    return OpeningHint(
        runs_and_sets=runs,
        pairs=pairs,
        whole_hand=whole,
        can_open_with_runs=can_runs or whole is not None,
        can_open_with_pairs=can_pairs,
        required=required,
        moves=tuple(dict.fromkeys(moves)),
    )


def _okeys(
    state: HandState,
    seat: int,
    lay_offs: tuple[LayOffHint, ...],
    opening: OpeningHint | None,
) -> tuple[OkeyStandIn, ...]:
    """Each okey on the rack: its lay-offs and its place in the best arrangement."""
    okey = state.okey
    rack = state.seats[seat].rack
    wilds = [tile for tile in rack if okey.is_wild(tile)]
    if not wilds:
        return ()
    arrangement = _arrangement(state, seat, opening)
    arranged = dict((tile.id, face) for tile, face in arrangement.okeys)
    out: list[OkeyStandIn] = []
    for tile in wilds:
        own = tuple(hint for hint in lay_offs if hint.tile.id == tile.id)
        in_arrangement = arranged.get(tile.id)
        faces = {hint.stands_for for hint in own} | {in_arrangement}
        out.append(
            OkeyStandIn(
                tile,
                tuple(sorted(face for face in faces if face is not None)),
                own,
                in_arrangement,
            )
        )
    return tuple(out)


def _arrangement(state: HandState, seat: int, opening: OpeningHint | None) -> Arrangement:
    """The solver's best arrangement of the rack for the seat's position."""
    opened_as = state.seats[seat].opened_as
    if opening is not None:
        if opening.runs_and_sets.melds or not opening.pairs.melds:
            return opening.runs_and_sets
        return opening.pairs
    hand = state.hand_of(seat)
    if opened_as is OpenedAs.PAIRS:
        return best_pairs(hand, keep_one=False)
    return least_leftover(hand, state.rules)


__all__ = [
    "DiscardHint",
    "LayOffHint",
    "OkeyStandIn",
    "OpeningHint",
    "SeatHints",
    "TakeBackHint",
    "TakeHint",
    "hints_for",
    "seat_hints",
]
