"""A hand of Okey 101 as a deterministic state machine.

``apply(state, seat, action)`` returns the next state and the events the move caused, or raises a
``RuleViolation`` / ``InvalidInput`` and changes nothing (states are frozen values). Every rule of
the three texts is a knob of ``state.rules``; docs/engine.md records the readings taken where the
texts are silent.

The phases of a turn: ``FIRST`` (the starting player's first turn: play and discard, no draw),
``DRAW`` (draw from the stock or take the left discard), ``PLAY`` (open, lay down, lay off, take
an okey back, then discard). A hand ends by a finish (the last tile discarded), with the stock out,
or void (all four opened with pairs).

A seat's part (``Seat``, ``OpenedAs``, ``PenaltyReason``) is in ``engine.seat``; how the hand
ended (``EndReason``, ``Finish``, ``HandResult``) in ``engine.result``, which scoring reads too.

Why one module of over 900 lines: it is the one idea of which moves ``apply`` accepts, and its
last part (``taken_tile_way_down``) belongs to it. Boombala lets a taken tile be given back only
when it cannot go down this turn, so that rule is defined by the other moves ``apply`` accepts:
the search proposes ways and proves each with ``apply`` itself. Elsewhere it would import this
module while this one imports it back: an import circle (tests/platform/test_import_graph.py).
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

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
from okey101.engine.errors import InvalidInput, OkeyError, RuleViolation
from okey101.engine.melds import HIGH_ONE, Meld, MeldKind, make_meld, make_pair
from okey101.engine.result import EndReason, Finish, HandResult
from okey101.engine.rules import LeftDiscardPolicy, OneGoFinish, RuleSet, StockOutPolicy
from okey101.engine.scoring import doubling_reasons, score_hand
from okey101.engine.seat import OpenedAs, PenaltyReason, Seat
from okey101.engine.solver.arrangement import Hand
from okey101.engine.solver.bounds import quick_value_bound
from okey101.engine.solver.openings import best_opening, opening_value_bound, whole_hand_opening
from okey101.engine.solver.pairs import best_pairs, most_pairs_bound
from okey101.engine.solver.playability import can_use, playable_faces
from okey101.engine.tiles import (
    ALL_TILES,
    Colour,
    Okey,
    Tile,
    face_colour,
    face_name,
    face_number,
    face_of,
)

# The engine's rules version: a state records it, and a state of another version is refused
# rather than silently re-interpreted. Bump it whenever a rule's outcome changes.
RULES_VERSION = "okey101-rules/1"
SEATS = 4


class Phase(enum.StrEnum):
    FIRST = "first"
    DRAW = "draw"
    PLAY = "play"
    ENDED = "ended"


@dataclass(frozen=True, slots=True)
class TableMeld:
    """A meld on the table and the seat that laid it."""

    meld: Meld
    owner: int


@dataclass(frozen=True, slots=True)
class ThisTurn:
    """What the player to move has done this turn."""

    taken: Tile | None = None
    # The player had not opened when they took the discard.
    taken_unopened: bool = False
    gave_back: bool = False
    opened: bool = False
    laid_off: int = 0
    took_okey: bool = False
    # The player already held the other copy of the taken tile's face when taking it. Nothing
    # tells two copies apart, so putting either down uses the taken tile (``taken_unused``).
    twin_held: bool = False


# A turn before anything is done: ThisTurn is frozen, so every new turn may share it.
_NEW_TURN = ThisTurn()


class EventKind(enum.StrEnum):
    """What an ``Event`` records (okey.v1.EventKind has a value of the same name for each)."""

    DREW = "drew"
    TOOK = "took"
    GAVE_BACK = "gave_back"
    PENALTY = "penalty"
    OPENED = "opened"
    MELDED = "melded"
    LAID_OFF = "laid_off"
    TOOK_OKEY = "took_okey"
    SHOWED_INDICATOR = "showed_indicator"
    DISCARDED = "discarded"
    STOCK_OUT = "stock_out"
    DECLINED_LAST_DISCARD = "declined_last_discard"
    HAND_ENDED = "hand_ended"


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened at the table.

    ``tiles`` are face up (everyone may see them). ``private`` is seen only by ``seat`` (the tile
    a player drew). Views and streams filter on that; nothing else about racks leaves the engine.
    """

    kind: EventKind
    seat: int | None = None
    tiles: tuple[Tile, ...] = ()
    private: tuple[Tile, ...] = ()
    meld: int | None = None
    points: int = 0
    detail: str = ""


@dataclass(frozen=True, slots=True)
class HandState:
    """Everything about a hand in play. Frozen: ``apply`` returns a new one."""

    rules: RuleSet
    okey: Okey
    dealer: int
    turn: int
    phase: Phase
    seats: tuple[Seat, ...]
    table: tuple[TableMeld, ...] = ()
    stock: tuple[Tile, ...] = ()
    # The tile the player to move may take (the left neighbour's last discard, not yet taken).
    takeable: Tile | None = None
    turn_number: int = 0
    this_turn: ThisTurn = ThisTurn()
    result: HandResult | None = None
    version: str = RULES_VERSION

    @property
    def ended(self) -> bool:
        return self.result is not None

    def seat(self, index: int) -> Seat:
        return self.seats[index]

    def hand_of(self, index: int) -> Hand:
        return Hand(self.seats[index].rack, self.okey)

    def table_melds(self) -> tuple[Meld, ...]:
        return tuple(item.meld for item in self.table)

    def pairs_on_table(self) -> bool:
        return any(seat.opened_as is OpenedAs.PAIRS for seat in self.seats)


def left_of(seat: int) -> int:
    """The seat whose discards ``seat`` may take (the one who played before it)."""
    return (seat - 1) % SEATS


def twin_of(tile: Tile) -> Tile:
    """The other physical tile printed with ``tile``'s face (its copy; the other false joker)."""
    return ALL_TILES[tile.id ^ 1]


def taken_unused(turn: ThisTurn, rack: Sequence[Tile]) -> Tile | None:
    """The tile taken from the left this turn while it is still unused, else None.

    The taken tile is a face, not a copy (oyna, Boombala: nothing tells the two copies apart):
    it is used once the rack holds no more tiles of its printed face than before the take. Only
    the taken tile and the copy held then are counted: an okey that came to the rack from the
    table (a take-back) is another tile, as it always was. While unused, the taken tile itself
    is on the rack (a give-back returns it).
    """
    taken = turn.taken
    if taken is None:
        return None
    taken_id = taken.id
    twin_id = taken_id ^ 1
    taken_on_rack = twin_on_rack = False
    for tile in rack:
        if tile.id == taken_id:
            taken_on_rack = True
        elif tile.id == twin_id:
            twin_on_rack = True
    if taken_on_rack and (twin_on_rack or not turn.twin_held):
        return taken
    return None


# --------------------------------------------------------------------------------------------


def apply(state: HandState, seat: int, action: Action) -> tuple[HandState, tuple[Event, ...]]:
    """Play ``action`` for ``seat``: the next state and its events, or a violation."""
    if state.version != RULES_VERSION:
        raise InvalidInput("UNKNOWN_RULES_VERSION", version=state.version)
    if not 0 <= seat < SEATS:
        raise InvalidInput("UNKNOWN_SEAT", seat=seat)
    if state.result is not None:
        raise RuleViolation("HAND_OVER")
    if seat != state.turn:
        raise RuleViolation("NOT_YOUR_TURN", seat=seat, turn=state.turn)
    handler = _HANDLERS[type(action)]
    return handler(state, seat, action)


_Record = TypeVar("_Record", HandState, Seat, ThisTurn)
# Per record class: its fields' getter (all at once) and each field's position.
_FIELDS: dict[type, tuple[operator.attrgetter[Any], dict[str, int]]] = {
    cls: (
        operator.attrgetter(*(field.name for field in dataclasses.fields(cls))),
        {field.name: index for index, field in enumerate(dataclasses.fields(cls))},
    )
    for cls in (HandState, Seat, ThisTurn)
}


def _evolve(record: _Record, **changes: Any) -> _Record:
    """``dataclasses.replace`` for the hand's records, without its per-call introspection (it
    was a tenth of a random hand's time): the same new frozen record, built by its ``__init__``."""
    getter, positions = _FIELDS[type(record)]
    values = list(getter(record))
    for name, value in changes.items():
        values[positions[name]] = value
    return type(record)(*values)


def _replace_seat(state: HandState, index: int, **changes: Any) -> tuple[Seat, ...]:
    seats = list(state.seats)
    seats[index] = _evolve(seats[index], **changes)
    return tuple(seats)


def _require_play_phase(state: HandState) -> None:
    if state.phase is Phase.DRAW:
        raise RuleViolation("MUST_DRAW_FIRST")


def _take_from_rack(rack: tuple[Tile, ...], tiles: Sequence[Tile]) -> tuple[Tile, ...]:
    """The rack without ``tiles``; each must be in it, once."""
    if len(tiles) == 1:
        # One tile (a discard, a lay-off): found by its id, the rack around it kept in order.
        tile = tiles[0]
        tile_id = tile.id
        for index, held in enumerate(rack):
            if held.id == tile_id:
                return rack[:index] + rack[index + 1 :]
        raise RuleViolation("TILE_NOT_IN_RACK", tile=str(tile))
    ids = [tile.id for tile in tiles]
    if len(set(ids)) != len(ids):
        duplicate = next(tile for tile in tiles if ids.count(tile.id) > 1)
        raise InvalidInput("DUPLICATE_TILE", tile=str(duplicate))
    on_rack = {tile.id for tile in rack}
    for tile in tiles:
        if tile.id not in on_rack:
            raise RuleViolation("TILE_NOT_IN_RACK", tile=str(tile))
    removed = set(ids)
    return tuple(tile for tile in rack if tile.id not in removed)


def _must_keep_a_tile(rack: Sequence[Tile]) -> None:
    if not rack:
        raise RuleViolation("MUST_KEEP_TILE")


def _must_keep_a_discard(state: HandState, seat: int, rest: tuple[Tile, ...]) -> None:
    """A tile must be left, and one the player may then discard: a lay-off or a new meld that
    leaves only the unused tile taken from the left is refused (it could not be thrown, oyna:
    "you cannot finish by throwing it as your last tile"), else the turn could not end."""
    _must_keep_a_tile(rest)
    if len(rest) == 1:
        me = _evolve(state.seats[seat], rack=rest)
        _check_taken_discard(state, me, rest[0], ())


def _check_taken_discard(state: HandState, me: Seat, tile: Tile, rest: Sequence[Tile]) -> None:
    """Whether ``me`` may discard ``tile`` (leaving ``rest``), given the tile taken from the left
    this turn: the most specific reason first (thrown back, thrown last), then the policy's."""
    turn = state.this_turn
    taken = taken_unused(turn, me.rack)
    if taken is None:
        return
    rules = state.rules
    # A discard of the taken face is the taken tile while no copy held before the take is left
    # on the rack; with one held, the discard leaves it and the taken tile still unused.
    if tile.face == taken.face and not turn.twin_held:
        if not rest and rules.taken_tile_may_not_finish:
            raise RuleViolation("TAKEN_TILE_CANNOT_FINISH", tile=str(taken))
        if rules.taken_tile_may_not_be_discarded:
            raise RuleViolation("TAKEN_TILE_THROWN_BACK", tile=str(taken))
    policy = rules.left_discard
    if policy is LeftDiscardPolicy.USE_THIS_TURN:
        raise RuleViolation("TAKEN_TILE_NOT_USED", tile=str(taken))
    if policy is LeftDiscardPolicy.GIVE_BACK_FOR_PENALTY:
        raise RuleViolation("TAKEN_TILE_MUST_GO_DOWN", tile=str(taken))
    if turn.taken_unopened and me.opened_as is None:
        raise RuleViolation("TAKE_ONLY_TO_OPEN", tile=str(taken))


def _build_groups(state: HandState, groups: Sequence[Group]) -> list[Meld]:
    melds = []
    for group in groups:
        if len(group.tiles) == 2:
            melds.append(make_pair(group.tiles, state.okey))
        else:
            melds.append(make_meld(group.tiles, state.okey, state.rules, okey_as=group.okey_as))
    return melds


def _check_taken_in(state: HandState, tiles: Sequence[Tile]) -> None:
    """An unopened player who took the left discard must open with it: with a tile of its
    printed face (either copy: the set's two are the same tile; North Sultan: "or an identical
    tile from their hand"). An okey standing for that face is not it."""
    taken = state.this_turn.taken
    if taken is None or not state.this_turn.taken_unopened:
        return
    face = taken.face
    if any(tile.face == face for tile in tiles):
        return
    raise RuleViolation("TAKEN_TILE_NOT_IN_OPENING", tile=str(taken))


def _draw(state: HandState, seat: int, action: Draw) -> tuple[HandState, tuple[Event, ...]]:
    if state.phase is Phase.FIRST:
        raise RuleViolation("NO_DRAW_ON_FIRST_TURN")
    if state.phase is Phase.PLAY:
        raise RuleViolation("ALREADY_DREW")
    if not state.stock:
        if state.rules.stock_out is StockOutPolicy.NEXT_MAY_TAKE_LAST_DISCARD:
            # "draw" with the stock out declines the last discard: the hand ends there.
            ended = _end_hand(state, EndReason.STOCK_OUT, None)
            return ended, (Event(EventKind.DECLINED_LAST_DISCARD, seat), _end_event(ended))
        raise RuleViolation("STOCK_EMPTY")
    tile = state.stock[0]
    rack = (*state.seats[seat].rack, tile)
    new = _evolve(
        state,
        seats=_replace_seat(state, seat, rack=rack),
        stock=state.stock[1:],
        phase=Phase.PLAY,
        takeable=None,
    )
    events = [Event(EventKind.DREW, seat, private=(tile,))]
    if not new.stock:
        events.append(Event(EventKind.STOCK_OUT, seat))
    return new, tuple(events)


def _take(state: HandState, seat: int, action: TakeDiscard) -> tuple[HandState, tuple[Event, ...]]:
    if state.phase is not Phase.DRAW:
        raise RuleViolation(
            "ALREADY_DREW" if state.phase is Phase.PLAY else "NO_DRAW_ON_FIRST_TURN"
        )
    tile = state.takeable
    if tile is None or state.this_turn.gave_back:
        raise RuleViolation("NOTHING_TO_TAKE")
    me = state.seats[seat]
    rules = state.rules
    policy = rules.left_discard
    hand = Hand(me.rack, state.okey)
    usable_check = policy is LeftDiscardPolicy.USE_THIS_TURN or (
        policy is LeftDiscardPolicy.OPENED_TAKE_FREELY and me.opened_as is None
    )
    if usable_check and not can_use(
        tile, hand, state.table_melds(), me.opened_as, rules, pairs_on_table=state.pairs_on_table()
    ):
        code = "TAKE_ONLY_TO_OPEN" if me.opened_as is None else "TAKEN_TILE_UNUSABLE"
        raise RuleViolation(code, tile=str(tile))
    left = left_of(seat)
    left_discards = state.seats[left].discards
    seats = list(state.seats)
    seats[left] = _evolve(seats[left], discards=left_discards[:-1])
    seats[seat] = _evolve(me, rack=(*me.rack, tile))
    new = _evolve(
        state,
        seats=tuple(seats),
        phase=Phase.PLAY,
        takeable=None,
        this_turn=_evolve(
            state.this_turn,
            taken=tile,
            taken_unopened=me.opened_as is None,
            twin_held=twin_of(tile) in me.rack,
        ),
    )
    return new, (Event(EventKind.TOOK, seat, tiles=(tile,)),)


def _give_back(
    state: HandState, seat: int, action: GiveBack
) -> tuple[HandState, tuple[Event, ...]]:
    if state.rules.left_discard is not LeftDiscardPolicy.GIVE_BACK_FOR_PENALTY:
        raise RuleViolation("GIVE_BACK_NOT_ALLOWED")
    me = state.seats[seat]
    taken = taken_unused(state.this_turn, me.rack)
    if taken is None:
        raise RuleViolation("NOTHING_TO_GIVE_BACK")
    if state.this_turn.opened or state.this_turn.laid_off or state.this_turn.took_okey:
        raise RuleViolation("GIVE_BACK_AFTER_PLAY")
    # Boombala: "If you can't, you give it back": only a tile that cannot go down this turn.
    way = taken_tile_way_down(state, seat)
    if way is not None:
        raise way.refusal
    left = left_of(seat)
    seats = list(state.seats)
    seats[left] = _evolve(seats[left], discards=(*seats[left].discards, taken))
    seats[seat] = _evolve(
        me,
        rack=tuple(tile for tile in me.rack if tile.id != taken.id),
        penalties=(*me.penalties, PenaltyReason.GAVE_BACK),
    )
    new = _evolve(
        state,
        seats=tuple(seats),
        phase=Phase.DRAW,
        takeable=None,
        this_turn=ThisTurn(gave_back=True),
    )
    return new, (
        Event(EventKind.GAVE_BACK, seat, tiles=(taken,)),
        Event(
            EventKind.PENALTY,
            seat,
            points=state.rules.penalty_points,
            detail=PenaltyReason.GAVE_BACK,
        ),
    )


@dataclass(frozen=True, slots=True)
class WayDown:
    """How the tile taken from the left can still go on the table this turn: the refusal of a
    give-back that says so (a GIVE_BACK_CAN_* violation) and moves that do it (each applies in
    turn, after which the taken tile is used)."""

    refusal: RuleViolation
    actions: tuple[Action, ...]

    @property
    def code(self) -> str:
        return self.refusal.code


def taken_tile_way_down(state: HandState, seat: int) -> WayDown | None:
    """A way for ``seat`` to put the unused tile it took from the left on the table now, or
    None: unopened, an opening that uses it (runs and sets worth the minimum, the whole hand,
    or pairs: the exact solver's); opened, a lay-off (after rack tiles that lead to it, as R8
    then R9 on R5-6-7), a new meld or pair with it, or its place under an okey on the table.

    Every way is played out with ``apply`` before it is given, so a refused give-back always
    leaves a legal way to end the turn (a way the search misses leaves the give-back open).
    """
    if state.result is not None or seat != state.turn or state.phase is not Phase.PLAY:
        return None
    me = state.seats[seat]
    taken = taken_unused(state.this_turn, me.rack)
    if taken is None:
        return None
    ways = (
        _opening_ways(state, seat, taken)
        if me.opened_as is None
        else _opened_ways(state, seat, taken)
    )
    for refusal, actions in ways:
        if _puts_down(state, seat, actions):
            return WayDown(refusal, actions)
    return None


def _puts_down(state: HandState, seat: int, actions: Sequence[Action]) -> bool:
    """Whether ``actions`` all apply, in turn, and leave the taken tile used."""
    try:
        for action in actions:
            state, _events = apply(state, seat, action)
    except OkeyError:
        return False
    return taken_unused(state.this_turn, state.seats[seat].rack) is None


def _opening_ways(
    state: HandState, seat: int, taken: Tile
) -> Iterator[tuple[RuleViolation, tuple[Action, ...]]]:
    """Openings that use ``taken``: the best runs and sets, the whole hand, the most pairs
    (the cheap bounds first: most racks hold none)."""
    rules = state.rules
    hand = state.hand_of(seat)
    minimum = rules.opening_min_points
    if (
        quick_value_bound(hand, rules) >= minimum
        and opening_value_bound(hand, rules, required=taken, at_least=minimum) >= minimum
    ):
        opening = best_opening(hand, rules, required=taken)
        if opening.value >= minimum:
            yield (
                RuleViolation("GIVE_BACK_CAN_OPEN", tile=str(taken)),
                (Open(tuple(Group(m.tiles) for m in opening.melds)),),
            )
    whole = whole_hand_opening(hand, rules, taken)
    if whole is not None:
        yield (
            RuleViolation("GIVE_BACK_CAN_OPEN", tile=str(taken)),
            (Open(tuple(Group(m.tiles) for m in whole.melds)),),
        )
    if most_pairs_bound(hand) >= rules.opening_min_pairs:
        pairs = best_pairs(hand, required=taken)
        if pairs.pair_count >= rules.opening_min_pairs:
            pairs_move = OpenPairs(tuple((m.tiles[0], m.tiles[1]) for m in pairs.melds))
            yield RuleViolation("GIVE_BACK_CAN_OPEN", tile=str(taken)), (pairs_move,)


def _opened_ways(
    state: HandState, seat: int, taken: Tile
) -> Iterator[tuple[RuleViolation, tuple[Action, ...]]]:
    """An opened seat's ways to put ``taken`` down, cheapest to find first."""
    me = state.seats[seat]
    rules = state.rules
    okey = state.okey
    rack = me.rack
    others = [tile for tile in rack if tile.id != taken.id]
    # Laid off as it is.
    for index, item in enumerate(state.table):
        meld = item.meld
        if meld.kind is MeldKind.PAIR:
            continue
        ends: tuple[End | None, ...] = (End.LOW, End.HIGH) if meld.kind is MeldKind.RUN else (None,)
        for end in ends:
            yield (
                RuleViolation("GIVE_BACK_CAN_LAY_OFF", tile=str(taken)),
                (LayOff(taken, index, end),),
            )
    # In the place of an okey on the table (from a three-tile set, with its other colour).
    if rules.may_take_okey_back and not okey.is_wild(taken):
        for index, item in enumerate(state.table):
            meld = item.meld
            if not any(meld.wild):
                continue
            if meld.kind is MeldKind.SET and len(meld.tiles) == 3:
                fitting = [
                    tile
                    for tile in others
                    if not okey.is_wild(tile) and face_number(okey.plays_as(tile)) == meld.number
                ]
                # Completed to all four colours: the taken tile and the other missing ones.
                missing = 3 - sum(1 for wild in meld.wild if not wild)
                for partners in itertools.combinations(fitting, missing):
                    yield (
                        RuleViolation("GIVE_BACK_CAN_TAKE_OKEY", tile=str(taken)),
                        (TakeOkey(index, (taken, *partners)),),
                    )
            else:
                yield (
                    RuleViolation("GIVE_BACK_CAN_TAKE_OKEY", tile=str(taken)),
                    (TakeOkey(index, (taken,)),),
                )
    # In a new run or set with rack tiles (a runs opener), or a new pair.
    hand = state.hand_of(seat)
    if me.opened_as is OpenedAs.RUNS and opening_value_bound(hand, rules, required=taken) > 0:
        for meld in best_opening(hand, rules, required=taken).melds:
            if any(tile.face == taken.face for tile in meld.tiles):
                yield (
                    RuleViolation("GIVE_BACK_CAN_MELD", tile=str(taken)),
                    (LayDown((Group(meld.tiles),)),),
                )
    may_pair = me.opened_as is OpenedAs.PAIRS or (
        rules.runs_openers_may_pair_after_pairs_opening and state.pairs_on_table()
    )
    if may_pair:
        for partner in others:
            if (
                okey.is_wild(taken)
                or okey.is_wild(partner)
                or (okey.plays_as(partner) == okey.plays_as(taken))
            ):
                yield (
                    RuleViolation("GIVE_BACK_CAN_PAIR", tile=str(taken)),
                    (LayDown((Group((taken, partner)),)),),
                )
                break
    # Laid off after the rack tiles (or okeys) that lead to it along a run.
    yield from _lay_off_chains(state, taken, others)


def _lay_off_chains(
    state: HandState, taken: Tile, others: Sequence[Tile]
) -> Iterator[tuple[RuleViolation, tuple[Action, ...]]]:
    """Each run of ``taken``'s colour it can reach by laying rack tiles off first: the real
    tile of each place between, else an okey."""
    okey = state.okey
    if okey.is_wild(taken):
        return  # an okey lays off at any open end as it is
    face = okey.plays_as(taken)
    colour = face_colour(face)
    top = HIGH_ONE if state.rules.run_may_end_12_13_1 else 13
    places = [face_number(face)]
    if places[0] == 1 and top == HIGH_ONE:
        places.append(HIGH_ONE)
    for index, item in enumerate(state.table):
        meld = item.meld
        if meld.kind is not MeldKind.RUN or meld.colour is not colour:
            continue
        for place in places:
            if meld.high < place <= top:
                between: Sequence[int] = range(meld.high + 1, place)
                end = End.HIGH
            elif place < meld.low:
                between = range(meld.low - 1, place, -1)
                end = End.LOW
            else:
                continue
            if not between:
                continue  # a lay-off as it is, tried already
            free = list(others)
            steps: list[Action] = []
            for between_place in between:
                wanted = _face_at(colour, between_place)
                tile = next(
                    (t for t in free if not okey.is_wild(t) and okey.plays_as(t) == wanted),
                    None,
                ) or next((t for t in free if okey.is_wild(t)), None)
                if tile is None:
                    break
                free.remove(tile)
                steps.append(LayOff(tile, index, end))
            else:
                yield (
                    RuleViolation("GIVE_BACK_CAN_LAY_OFF", tile=str(taken)),
                    (*steps, LayOff(taken, index, end)),
                )


def _open(state: HandState, seat: int, action: Open) -> tuple[HandState, tuple[Event, ...]]:
    _require_play_phase(state)
    me = state.seats[seat]
    if me.opened_as is not None:
        raise RuleViolation("ALREADY_OPENED")
    if not action.groups:
        raise InvalidInput("EMPTY_MOVE")
    if any(len(group.tiles) == 2 for group in action.groups):
        raise RuleViolation("OPENING_MIXES_PAIRS")
    tiles = [tile for group in action.groups for tile in group.tiles]
    rest = _take_from_rack(me.rack, tiles)
    melds = _build_groups(state, action.groups)
    _must_keep_a_tile(rest)
    value = sum(meld.value for meld in melds)
    whole_hand = len(rest) == 1
    if value < state.rules.opening_min_points and not whole_hand:
        raise RuleViolation(
            "OPENING_BELOW_101", value=value, minimum=state.rules.opening_min_points
        )
    _check_taken_in(state, tiles)
    return _opened(state, seat, rest, melds, OpenedAs.RUNS, value)


def _open_pairs(
    state: HandState, seat: int, action: OpenPairs
) -> tuple[HandState, tuple[Event, ...]]:
    _require_play_phase(state)
    me = state.seats[seat]
    if me.opened_as is not None:
        raise RuleViolation("ALREADY_OPENED")
    if any(len(pair) != 2 for pair in action.pairs):
        raise RuleViolation("OPENING_MIXES_PAIRS")
    tiles = [tile for pair in action.pairs for tile in pair]
    rest = _take_from_rack(me.rack, tiles)
    melds = [make_pair(pair, state.okey) for pair in action.pairs]
    _must_keep_a_tile(rest)
    if len(melds) < state.rules.opening_min_pairs:
        raise RuleViolation(
            "TOO_FEW_PAIRS", count=len(melds), minimum=state.rules.opening_min_pairs
        )
    _check_taken_in(state, tiles)
    new, events = _opened(state, seat, rest, melds, OpenedAs.PAIRS, len(melds))
    if state.rules.all_pairs_voids_hand and all(s.opened_as is OpenedAs.PAIRS for s in new.seats):
        ended = _end_hand(new, EndReason.VOID, None)
        return ended, (*events, _end_event(ended))
    return new, events


def _opened(
    state: HandState,
    seat: int,
    rest: tuple[Tile, ...],
    melds: Sequence[Meld],
    kind: OpenedAs,
    value: int,
) -> tuple[HandState, tuple[Event, ...]]:
    start = len(state.table)
    table = (*state.table, *(TableMeld(meld, seat) for meld in melds))
    new = _evolve(
        state,
        seats=_replace_seat(
            state, seat, rack=rest, opened_as=kind, opened_on_turn=state.turn_number
        ),
        table=table,
        this_turn=_evolve(state.this_turn, opened=True),
    )
    events = tuple(
        Event(
            EventKind.OPENED if i == 0 else EventKind.MELDED,
            seat,
            tiles=meld.tiles,
            meld=start + i,
            points=value,
        )
        for i, meld in enumerate(melds)
    )
    return new, events


def _lay_down(state: HandState, seat: int, action: LayDown) -> tuple[HandState, tuple[Event, ...]]:
    _require_play_phase(state)
    me = state.seats[seat]
    rules = state.rules
    if me.opened_as is None:
        raise RuleViolation("MUST_OPEN_FIRST")
    if not action.groups:
        raise InvalidInput("EMPTY_MOVE")
    if state.this_turn.opened and not rules.lay_off_in_opening_turn:
        raise RuleViolation("NOT_IN_OPENING_TURN")
    for group in action.groups:
        if len(group.tiles) == 2:
            may_pair = me.opened_as is OpenedAs.PAIRS or (
                rules.runs_openers_may_pair_after_pairs_opening and state.pairs_on_table()
            )
            if not may_pair:
                raise RuleViolation("PAIRS_NOT_ALLOWED")
        elif me.opened_as is OpenedAs.PAIRS:
            raise RuleViolation("PAIRS_OPENER_NO_RUNS")
    tiles = [tile for group in action.groups for tile in group.tiles]
    rest = _take_from_rack(me.rack, tiles)
    melds = _build_groups(state, action.groups)
    _must_keep_a_discard(state, seat, rest)
    start = len(state.table)
    new = _evolve(
        state,
        seats=_replace_seat(state, seat, rack=rest),
        table=(*state.table, *(TableMeld(meld, seat) for meld in melds)),
    )
    return new, tuple(
        Event(EventKind.MELDED, seat, tiles=meld.tiles, meld=start + i)
        for i, meld in enumerate(melds)
    )


def _meld_at(state: HandState, index: int) -> Meld:
    if not 0 <= index < len(state.table):
        raise InvalidInput("UNKNOWN_MELD", meld=index)
    return state.table[index].meld


def _lay_off(state: HandState, seat: int, action: LayOff) -> tuple[HandState, tuple[Event, ...]]:
    _require_play_phase(state)
    me = state.seats[seat]
    rules = state.rules
    meld = _meld_at(state, action.meld)
    if me.opened_as is None:
        raise RuleViolation("MUST_OPEN_FIRST")
    if state.this_turn.opened and not rules.lay_off_in_opening_turn:
        raise RuleViolation("NOT_IN_OPENING_TURN")
    if me.opened_as is OpenedAs.PAIRS:
        if not rules.pairs_opener_may_lay_off:
            raise RuleViolation("PAIRS_OPENER_NO_LAY_OFF")
        limit = rules.pairs_opener_lay_off_limit
        if limit and state.this_turn.laid_off >= limit:
            raise RuleViolation("LAY_OFF_LIMIT", limit=limit)
    rest = _take_from_rack(me.rack, [action.tile])
    _must_keep_a_tile(rest)
    grown = _extend(meld, action.tile, action.end, state.okey, rules)
    _must_keep_a_discard(state, seat, rest)
    table = list(state.table)
    table[action.meld] = TableMeld(grown, state.table[action.meld].owner)
    new = _evolve(
        state,
        seats=_replace_seat(state, seat, rack=rest),
        table=tuple(table),
        this_turn=_evolve(state.this_turn, laid_off=state.this_turn.laid_off + 1),
    )
    return new, (Event(EventKind.LAID_OFF, seat, tiles=(action.tile,), meld=action.meld),)


def extend_meld(meld: Meld, tile: Tile, end: End | None, okey: Okey, rules: RuleSet) -> Meld:
    """``meld`` with ``tile`` laid off on it (at a run's ``end``; ``None``: the one end it
    fits), or the violation saying why it does not fit (``TILE_DOES_NOT_FIT``, ``SET_IS_FULL``,
    ``CANNOT_LAY_OFF_ON_PAIR``, ``END_REQUIRED``): the meld half of a lay-off, for a client
    that asks which melds a tile fits."""
    return _extend(meld, tile, end, okey, rules)


def _extend(meld: Meld, tile: Tile, end: End | None, okey: Okey, rules: RuleSet) -> Meld:
    """``meld`` with ``tile`` laid off on it, or the reason it does not fit."""
    wild = okey.is_wild(tile)
    if meld.kind is MeldKind.PAIR:
        raise RuleViolation("CANNOT_LAY_OFF_ON_PAIR")
    if meld.kind is MeldKind.SET:
        if len(meld.tiles) >= 4:
            raise RuleViolation("SET_IS_FULL")
        real_colours = {
            face_colour(face)
            for face, is_wild in zip(meld.stands_for, meld.wild, strict=True)
            if face is not None and not is_wild
        }
        if not wild:
            face = okey.plays_as(tile)
            if face_number(face) != meld.number or face_colour(face) in real_colours:
                raise RuleViolation("TILE_DOES_NOT_FIT", tile=str(tile))
            real_colours.add(face_colour(face))
        tiles = (*meld.tiles, tile)
        wilds = (*meld.wild, wild)
        # Four tiles: each okey stands for a colour the real tiles lack.
        missing = iter(
            face_of(colour, meld.number) for colour in Colour if colour not in real_colours
        )
        stands: list[int | None] = []
        for t, is_wild in zip(tiles, wilds, strict=True):
            stands.append(next(missing, None) if is_wild else okey.plays_as(t))
        return Meld(MeldKind.SET, tiles, tuple(stands), meld.number, None, wilds)
    colour = meld.colour
    assert colour is not None
    top = HIGH_ONE if rules.run_may_end_12_13_1 else 13
    fits_high = meld.high < top and (wild or _face_at(colour, meld.high + 1) == okey.plays_as(tile))
    fits_low = meld.low > 1 and (wild or _face_at(colour, meld.low - 1) == okey.plays_as(tile))
    if end is None:
        # Unambiguous for a real tile; an okey needs the end named unless only one fits.
        if fits_high and fits_low:
            raise InvalidInput("END_REQUIRED")
        end = End.HIGH if fits_high else End.LOW if fits_low else None
    if end is End.HIGH and fits_high:
        place = meld.high + 1
        return Meld(
            MeldKind.RUN,
            (*meld.tiles, tile),
            (*meld.stands_for, _face_at(colour, place)),
            meld.number,
            colour,
            (*meld.wild, wild),
        )
    if end is End.LOW and fits_low:
        place = meld.low - 1
        return Meld(
            MeldKind.RUN,
            (tile, *meld.tiles),
            (_face_at(colour, place), *meld.stands_for),
            place,
            colour,
            (wild, *meld.wild),
        )
    if not wild and face_number(okey.plays_as(tile)) == 1 and meld.high == 13:
        raise RuleViolation("RUN_WRAPS_AROUND")
    raise RuleViolation("TILE_DOES_NOT_FIT", tile=str(tile))


def _face_at(colour: Colour, place: int) -> int:
    return face_of(colour, 1 if place == HIGH_ONE else place)


def _take_okey(
    state: HandState, seat: int, action: TakeOkey
) -> tuple[HandState, tuple[Event, ...]]:
    _require_play_phase(state)
    me = state.seats[seat]
    rules = state.rules
    okey = state.okey
    meld = _meld_at(state, action.meld)
    if not rules.may_take_okey_back:
        raise RuleViolation("OKEY_STAYS")
    if me.opened_as is None:
        raise RuleViolation("MUST_OPEN_FIRST")
    if not any(meld.wild):
        raise RuleViolation("NO_OKEY_IN_MELD")
    if not action.tiles:
        raise InvalidInput("EMPTY_MOVE")
    if any(okey.is_wild(tile) for tile in action.tiles):
        raise RuleViolation("OKEY_FOR_OKEY")
    rest = _take_from_rack(me.rack, action.tiles)
    if meld.kind is MeldKind.SET and len(meld.tiles) == 3:
        if not rules.okey_back_from_three_set:
            raise RuleViolation("OKEY_AMBIGUOUS")
        grown, freed = _complete_set(meld, action.tiles, okey)
    else:
        if len(action.tiles) != 1:
            raise RuleViolation("ONE_TILE_FOR_AN_OKEY")
        tile = action.tiles[0]
        face = okey.plays_as(tile)
        position = next(
            (
                i
                for i, (stands, is_wild) in enumerate(zip(meld.stands_for, meld.wild, strict=True))
                if is_wild and stands == face
            ),
            None,
        )
        if position is None:
            raise RuleViolation("NOT_WHAT_OKEY_STANDS_FOR", tile=str(tile))
        freed = (meld.tiles[position],)
        tiles = list(meld.tiles)
        tiles[position] = tile
        wilds = list(meld.wild)
        wilds[position] = False
        grown = dataclasses.replace(meld, tiles=tuple(tiles), wild=tuple(wilds))
    rack = (*rest, *freed)
    table = list(state.table)
    table[action.meld] = TableMeld(grown, state.table[action.meld].owner)
    new = _evolve(
        state,
        seats=_replace_seat(state, seat, rack=rack),
        table=tuple(table),
        this_turn=_evolve(state.this_turn, took_okey=True),
    )
    return new, (Event(EventKind.TOOK_OKEY, seat, tiles=tuple(action.tiles), meld=action.meld),)


def _complete_set(meld: Meld, tiles: Sequence[Tile], okey: Okey) -> tuple[Meld, tuple[Tile, ...]]:
    """Take the okey(s) of a three-tile set by completing it to all four colours."""
    real = [t for t, w in zip(meld.tiles, meld.wild, strict=True) if not w]
    freed = tuple(t for t, w in zip(meld.tiles, meld.wild, strict=True) if w)
    new_tiles = [*real, *tiles]
    colours = set()
    for tile in new_tiles:
        face = okey.plays_as(tile)
        if face_number(face) != meld.number or face_colour(face) in colours:
            raise RuleViolation("TILE_DOES_NOT_FIT", tile=str(tile))
        colours.add(face_colour(face))
    if len(colours) != 4:
        raise RuleViolation("SET_NEEDS_ALL_COLOURS")
    stands = tuple(okey.plays_as(t) for t in new_tiles)
    grown = Meld(MeldKind.SET, tuple(new_tiles), stands, meld.number, None, (False,) * 4)
    return grown, freed


def _show_indicator(
    state: HandState, seat: int, action: ShowIndicator
) -> tuple[HandState, tuple[Event, ...]]:
    me = state.seats[seat]
    points = state.rules.indicator_show_points
    if not points:
        raise RuleViolation("INDICATOR_SCORES_NOTHING")
    if me.turns_played or me.showed_indicator:
        raise RuleViolation("INDICATOR_FIRST_TURN_ONLY")
    twin = state.okey.indicator.face
    shown = next((tile for tile in me.rack if not tile.is_false_joker and tile.face == twin), None)
    if shown is None:
        raise RuleViolation("NO_INDICATOR_TWIN", tile=face_name(twin))
    new = _evolve(state, seats=_replace_seat(state, seat, showed_indicator=True))
    return new, (Event(EventKind.SHOWED_INDICATOR, seat, tiles=(shown,), points=points),)


# The playable faces of recent tables, by the table's identity: a table is unchanged by most
# moves (its tuple is carried over), and every discard asks. Entries hold the table and the
# rules they were computed for, so an id reused by a new object is never mistaken for them.
_PLAYABLE: dict[int, tuple[tuple[TableMeld, ...], RuleSet, frozenset[int]]] = {}


def _playable_faces(state: HandState) -> frozenset[int]:
    table = state.table
    known = _PLAYABLE.get(id(table))
    if known is not None and known[0] is table and known[1] is state.rules:
        return known[2]
    faces = playable_faces(state.table_melds(), state.rules)
    if len(_PLAYABLE) >= 256:
        _PLAYABLE.clear()
    _PLAYABLE[id(table)] = (table, state.rules, faces)
    return faces


def _discard(state: HandState, seat: int, action: Discard) -> tuple[HandState, tuple[Event, ...]]:
    _require_play_phase(state)
    me = state.seats[seat]
    rules = state.rules
    tile = action.tile
    rest = _take_from_rack(me.rack, [tile])
    _check_taken_discard(state, me, tile, rest)
    events: list[Event] = [Event(EventKind.DISCARDED, seat, tiles=(tile,))]
    finishing = not rest
    penalties = me.penalties
    if not finishing:
        if state.okey.is_wild(tile):
            penalties = (*penalties, PenaltyReason.OKEY_DISCARDED)
        elif state.okey.plays_as(tile) in _playable_faces(state):
            penalties = (*penalties, PenaltyReason.PLAYABLE_DISCARDED)
        if len(penalties) > len(me.penalties):
            events.append(
                Event(
                    EventKind.PENALTY,
                    seat,
                    tiles=(tile,),
                    points=rules.penalty_points,
                    detail=penalties[-1],
                )
            )
    seats = _replace_seat(
        state,
        seat,
        rack=rest,
        discards=(*me.discards, tile),
        penalties=penalties,
        turns_played=me.turns_played + 1,
    )
    if finishing:
        finish = finish_of(state, seat, tile)
        ended = _end_hand(_evolve(state, seats=seats), EndReason.FINISHED, finish)
        return ended, (*events, _end_event(ended))
    if not state.stock and rules.stock_out is StockOutPolicy.ENDS_ON_LAST_DISCARD:
        ended = _end_hand(_evolve(state, seats=seats), EndReason.STOCK_OUT, None)
        return ended, (*events, _end_event(ended))
    new = _evolve(
        state,
        seats=seats,
        turn=(seat + 1) % SEATS,
        phase=Phase.DRAW,
        takeable=tile,
        turn_number=state.turn_number + 1,
        this_turn=_NEW_TURN,
    )
    return new, tuple(events)


def finish_multiplier(rules: RuleSet, *, with_okey: bool, after_pairs: bool, one_go: bool) -> int:
    """x2 for each doubling the rule set counts: the okey thrown last, a finish after a pairs
    opening, going out in one go (a hand finish). Where the doublings do not stack
    (``finish_doublings_stack``: boombala), any number of them doubles once."""
    doublings = len(
        doubling_reasons(rules, with_okey=with_okey, after_pairs=after_pairs, one_go=one_go)
    )
    if not rules.finish_doublings_stack:
        doublings = min(doublings, 1)
    return 1 << doublings


def finish_of(state: HandState, seat: int, last: Tile) -> Finish:
    """How ``seat`` finishes by discarding ``last`` from ``state`` (the state before that
    discard, or the final state: neither the turn nor the opening record changes), and the
    multiplier. Scoring services check reported finishes with it."""
    rules = state.rules
    me = state.seats[seat]
    with_okey = state.okey.is_wild(last)
    after_pairs = me.opened_as is OpenedAs.PAIRS
    opened_now = me.opened_on_turn == state.turn_number and me.opened_as is not None
    one_go = False
    if opened_now:
        others_opened = any(s.opened_as is not None for i, s in enumerate(state.seats) if i != seat)
        if rules.one_go_finish is OneGoFinish.WHILE_NOBODY_OPENED:
            one_go = me.opened_as is OpenedAs.RUNS and not others_opened
        elif rules.one_go_finish is OneGoFinish.SAME_TURN:
            one_go = True
        elif rules.one_go_finish is OneGoFinish.HAND_FINISH:
            spoiled = rules.opening_turn_play_spoils_hand_finish and (
                state.this_turn.laid_off > 0 or state.this_turn.took_okey
            )
            one_go = me.opened_as is OpenedAs.RUNS and not spoiled
    multiplier = finish_multiplier(
        rules, with_okey=with_okey, after_pairs=after_pairs, one_go=one_go
    )
    return Finish(seat, with_okey, after_pairs, one_go, multiplier)


def _end_hand(state: HandState, reason: EndReason, finish: Finish | None) -> HandState:
    result = score_hand(state, reason, finish)
    return _evolve(state, phase=Phase.ENDED, result=result, takeable=None)


def _end_event(state: HandState) -> Event:
    result = state.result
    assert result is not None
    return Event(
        EventKind.HAND_ENDED,
        result.winner,
        detail=result.reason.value,
        points=result.finish.multiplier if result.finish else 0,
    )


_Handler = Callable[[HandState, int, Any], tuple[HandState, tuple[Event, ...]]]
_HANDLERS: dict[type, _Handler] = {
    Draw: _draw,
    TakeDiscard: _take,
    GiveBack: _give_back,
    Open: _open,
    OpenPairs: _open_pairs,
    LayDown: _lay_down,
    LayOff: _lay_off,
    TakeOkey: _take_okey,
    ShowIndicator: _show_indicator,
    Discard: _discard,
}

__all__ = [
    "RULES_VERSION",
    "Event",
    "EventKind",
    "HandState",
    "Phase",
    "TableMeld",
    "ThisTurn",
    "WayDown",
    "apply",
    "finish_multiplier",
    "finish_of",
    "taken_tile_way_down",
    "taken_unused",
    "twin_of",
]
