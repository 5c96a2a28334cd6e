"""Computer players: the next step of a seat, from what a person in that seat may know.

``decide(view, rules, level, seed, memory)`` answers the actions of the current phase and a short
reason:

- in the draw phase, one action: draw from the stock or take the left discard;
- in the play phase (``FIRST`` or ``PLAY``, the drawn tile seen): the rest of the turn, what to
  put down (open, new melds, lay-offs, an okey taken back) and the discard that ends it; or,
  where the rules give a taken tile back for +101 and it cannot be used, the single
  ``GiveBack`` (a draw-phase step follows).

The bot sees only the ``SeatView``: its own rack, the table, every discard pile, who opened and
how, the +101s, the tile counts, the stock count, the takeable tile and the phase. To check that
its moves are legal it builds a *shadow* ``HandState`` from the view alone: the other racks and
the stock are filled with placeholder tiles (the tiles the seat cannot see, in id order), which
are not information. No rule of ``apply`` reads another rack or the order of the stock to decide
whether a move is legal (only the stock's size, which the view shows), so a move that applies to
the shadow applies to the real state; the tests check this on thousands of positions. The
shadow's outcome is read only for the bot's own seat (its own score when it finishes), which
depends on public information alone.

``BotMemory`` is what a bot may remember between its turns: the tiles it saw thrown, the ones
taken from the discard piles (and by whom), who showed the indicator, and what the seat to move
has done so far this turn. The caller builds it from the events the seat received
(``BotMemory.from_events`` / ``memory.observe(events)``); without it the bot plays from the view
alone (and assumes it is asked at the start of a phase).

Levels:

- ``RANDOM``: the engine's ``RandomPlayer`` (a random legal turn), played on the shadow. Also
  ``fallback_decision``: the table's local fallback when the bot service is unreachable.
- ``EASY``: greedy. Always draws; opens as soon as it can (runs, else pairs); lays down and lays
  off whatever fits; discards the highest loose tile (outside its best melds) that is neither
  playable nor the okey.
- ``NORMAL``: uses the solver. Keeps the tiles that build melds (its best arrangement, by value
  while closed and by ``least_leftover`` once open, and the partial runs and sets around it,
  weighed by how many copies of the missing tile it does not hold itself); never throws a
  playable tile or the okey without reason; takes the left discard when it opens or finishes
  with it or, opened, puts it down; picks the opening (runs or pairs, value or least left) that
  leaves the fewest points; lays the whole hand down when it can.
- ``HARD``: ``NORMAL`` plus: counting (tiles thrown, laid down or taken by others cannot
  complete a meld, so the chances of partial melds come from the tiles still unseen); near the
  opening minimum, the chance that one more tile opens, for each possible discard; when to
  open: aims at pairs when it holds four and runs are far, and holds a pairs opening while runs
  are near and time remains; the turns it has left (it throws its highest tiles as the stock
  runs out and lays off even okeys on its last turn); taking an okey back when the put-down
  then leaves fewer points; not feeding the next seat (it avoids tiles near the ones that seat
  picked up, and prefers tiles it threw itself).

Every level is a function of (view, rules, level, seed, memory): ``RANDOM`` draws on
``random.Random(seed)``, the others use no randomness at all.
"""

from __future__ import annotations

import dataclasses
import enum
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

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
from okey101.engine.hand import (
    RULES_VERSION,
    SEATS,
    Event,
    HandState,
    Phase,
    TableMeld,
    ThisTurn,
    apply,
)
from okey101.engine.melds import HIGH_ONE, Meld, MeldKind
from okey101.engine.playout import RandomPlayer, _Step
from okey101.engine.rules import LeftDiscardPolicy, RuleSet, StockOutPolicy
from okey101.engine.seat import OpenedAs, PenaltyReason, Seat
from okey101.engine.solver.arrangement import Arrangement, Hand
from okey101.engine.solver.bounds import quick_tiles_bound, quick_value_bound
from okey101.engine.solver.openings import (
    best_opening,
    lay_down_all_but_one,
    least_leftover,
    opening_value_bound,
)
from okey101.engine.solver.pairs import best_pairs
from okey101.engine.solver.playability import playable_faces
from okey101.engine.tiles import (
    ALL_TILES,
    FACE_COUNT,
    Okey,
    Tile,
    face_number,
    face_of,
)
from okey101.engine.view import SeatView


@dataclass(frozen=True, slots=True)
class Tuning:
    """The knobs of the stronger levels, as tuned with ``okey101 bench bots``."""

    # HARD, unopened, near the minimum: weigh each discard by the chance that one more tile then
    # opens (``outs_weight`` points per unit of chance), when the best value is within
    # ``outs_reach`` of the minimum, with at most ``outs_budget`` solver calls.
    outs_weight: float = 170.0
    outs_reach: int = 40
    outs_budget: int = 30
    # HARD: aim at pairs with this many pairs when the runs value is more than ``gap`` short
    # of the minimum (``pairs_route_gap3`` with one pair fewer).
    pairs_route_min: int = 4
    pairs_route_gap4: int = 20
    pairs_route_gap3: int = 40
    # Aiming at pairs: what a single's chance of a twin is worth, and how much of its runs
    # promise still counts.
    pair_single: float = 60.0
    pair_runs_share: float = 0.3
    # HARD: keep a pairs opening in hand while runs are this near and time remains.
    hold_pairs_reach: int = 15
    # HARD: points a tile the next seat may want is worth keeping, per sign of interest.
    feeding_unopened: float = 4.0
    feeding_opened: float = 2.5


TUNING = Tuning()


class BotLevel(enum.StrEnum):
    """How strong a bot plays."""

    RANDOM = "random"
    EASY = "easy"
    NORMAL = "normal"
    HARD = "hard"


_RANK = {BotLevel.RANDOM: 0, BotLevel.EASY: 1, BotLevel.NORMAL: 2, BotLevel.HARD: 3}


@dataclass(frozen=True, slots=True)
class Decision:
    """The actions of the current phase, in order, and why (for logs and watchers)."""

    actions: tuple[Action, ...]
    reason: str
    level: BotLevel


# --------------------------------------------------------------------------------------------
# Memory


@dataclass(frozen=True, slots=True)
class BotMemory:
    """What one seat has seen of the hand beyond the present view.

    ``thrown``: (seat, tile id) for every discard seen, oldest first. ``taken``: (seat, tile id)
    for every discard taken from a pile (and not given back): tiles the bot can no longer get,
    and a hint of what that seat collects. ``showed``: seats that showed the indicator's twin.
    ``turn``: (event kind, seat) of what happened since the last discard, which the view does
    not say: a bot taking over a seat in the middle of a turn (its player timed out after
    opening, say) knows what the turn already holds. Built from the events the seat received
    (``observe``) or from successive views (``observe_view``, which cannot see ``turn``);
    never from anything private to another seat.
    """

    seat: int
    thrown: tuple[tuple[int, int], ...] = ()
    taken: tuple[tuple[int, int], ...] = ()
    showed: tuple[int, ...] = ()
    turn: tuple[tuple[str, int], ...] = ()

    @staticmethod
    def from_events(seat: int, events: Iterable[Event]) -> BotMemory:
        """The memory of ``seat`` after ``events`` (the hand's events as it received them)."""
        return BotMemory(seat).observe(events)

    def observe(self, events: Iterable[Event]) -> BotMemory:
        """This memory after more events (their public part only)."""
        thrown = list(self.thrown)
        taken = list(self.taken)
        showed = list(self.showed)
        turn = list(self.turn)
        for event in events:
            if event.kind == "hand_ended":
                turn = []
            if event.seat is None:
                continue
            if event.kind == "discarded":
                thrown.extend((event.seat, tile.id) for tile in event.tiles)
                turn = []
            elif event.kind == "took":
                taken.extend((event.seat, tile.id) for tile in event.tiles)
            elif event.kind == "gave_back":
                back = {tile.id for tile in event.tiles}
                taken = [item for item in taken if item[1] not in back]
                turn = []
            elif event.kind == "showed_indicator" and event.seat not in showed:
                showed.append(event.seat)
            if event.kind in _TURN_EVENTS:
                turn.append((event.kind, event.seat))
        return BotMemory(self.seat, tuple(thrown), tuple(taken), tuple(showed), tuple(turn))

    def observe_view(self, seat_view: SeatView) -> BotMemory:
        """This memory after seeing ``seat_view``: new discards are added, and a discard that
        has left its pile was taken by the next seat (the only way a discard leaves a pile)."""
        thrown = list(self.thrown)
        taken = list(self.taken)
        known = {tile_id for _seat, tile_id in thrown}
        taken_ids = {tile_id for _seat, tile_id in taken}
        piles = {other.seat: {tile.id for tile in other.discards} for other in seat_view.seats}
        for other in seat_view.seats:
            for tile in other.discards:
                if tile.id not in known:
                    thrown.append((other.seat, tile.id))
                    known.add(tile.id)
        for seat, tile_id in self.thrown:
            if tile_id not in piles.get(seat, set()) and tile_id not in taken_ids:
                taken.append(((seat + 1) % SEATS, tile_id))
                taken_ids.add(tile_id)
        # A taken tile back in its pile was given back.
        in_piles = set().union(*piles.values()) if piles else set()
        taken = [item for item in taken if item[1] not in in_piles]
        return BotMemory(self.seat, tuple(thrown), tuple(taken), self.showed, self.turn)


# The events that make up what a turn holds so far (``ThisTurn``).
_TURN_EVENTS = frozenset(
    {"drew", "took", "gave_back", "opened", "melded", "laid_off", "took_okey", "showed_indicator"}
)


# --------------------------------------------------------------------------------------------
# The shadow state


def shadow_state(seat_view: SeatView, rules: RuleSet, memory: BotMemory | None = None) -> HandState:
    """A ``HandState`` built from ``seat_view`` alone, to check moves on.

    The other racks and the stock hold placeholders: the tiles the seat cannot see, in id order
    (stock first, then the racks), so nothing hidden is in it. Everything the legality of the
    seat's moves depends on is public: its own rack, the table, the piles, who opened, the
    stock's size, the takeable tile, the tile taken this turn.
    """
    if seat_view.version != RULES_VERSION:
        raise InvalidInput("UNKNOWN_RULES_VERSION", version=seat_view.version)
    okey = Okey(seat_view.indicator)
    me = seat_view.seat
    seen: set[int] = {tile.id for tile in seat_view.rack}
    seen.add(seat_view.indicator.id)
    for meld, _owner in seat_view.table:
        seen.update(tile.id for tile in meld.tiles)
    for other in seat_view.seats:
        seen.update(tile.id for tile in other.discards)
    unseen = [tile for tile in ALL_TILES if tile.id not in seen]
    needed = seat_view.stock_count + sum(
        other.tile_count for other in seat_view.seats if other.seat != me
    )
    # A well-formed view leaves exactly as many unseen tiles as the others hold and the stock;
    # placeholders repeat only for a malformed one (the shadow's legality never reads them).
    pool = unseen * (needed // max(len(unseen), 1) + 1) if unseen else [seat_view.indicator]
    stock = tuple(pool[: seat_view.stock_count])
    position = seat_view.stock_count
    showed = set(memory.showed) if memory is not None else set()
    starter = (seat_view.dealer + 1) % SEATS
    seats: list[Seat] = []
    for other in seat_view.seats:
        count = other.penalties // rules.penalty_points if rules.penalty_points > 0 else 0
        if other.seat == me:
            rack = seat_view.rack
        else:
            rack = tuple(pool[position : position + other.tile_count])
            position += other.tile_count
        turns_played = sum(
            1 for turn in range(seat_view.turn_number) if (starter + turn) % SEATS == other.seat
        )
        seats.append(
            Seat(
                rack=rack,
                discards=other.discards,
                opened_as=other.opened_as,
                # When it opened (an older view without it: some earlier turn).
                opened_on_turn=(
                    -1
                    if other.opened_as is None
                    else other.opened_on_turn
                    if other.opened_on_turn >= 0
                    else -2
                ),
                penalties=(PenaltyReason.CHARGED_BEFORE,) * count,
                turns_played=turns_played,
                showed_indicator=other.seat in showed,
            )
        )
    # The view carries the seat's own turn so far; a view without it (the start of a phase, or
    # an older client) leaves it to the memory's events.
    this_turn = (
        seat_view.this_turn if seat_view.this_turn != ThisTurn() else _this_turn(seat_view, memory)
    )
    if this_turn.opened:
        seats[me] = dataclasses.replace(seats[me], opened_on_turn=seat_view.turn_number)
    return HandState(
        rules=rules,
        okey=okey,
        dealer=seat_view.dealer,
        turn=seat_view.turn,
        phase=seat_view.phase,
        seats=tuple(seats),
        table=tuple(TableMeld(meld, owner) for meld, owner in seat_view.table),
        stock=stock,
        takeable=seat_view.takeable,
        turn_number=seat_view.turn_number,
        this_turn=this_turn,
        result=seat_view.result,
    )


def _this_turn(seat_view: SeatView, memory: BotMemory | None) -> ThisTurn:
    """What the seat to move has done this turn: the view gives the tile it took; the memory's
    events (when the caller passed them) say whether it opened, laid off, took an okey back or
    gave a tile back. Without them, nothing yet (a bot asked at the start of a phase)."""
    me = seat_view.seat
    taken = seat_view.taken_this_turn
    opened_before = seat_view.seats[me].opened_as is not None
    kinds = [kind for kind, seat in (memory.turn if memory else ()) if seat == me]
    if any(seat != me for _kind, seat in (memory.turn if memory else ())):
        kinds = []  # events of another seat's turn: stale, not this turn's
    gave_back = "gave_back" in kinds
    if gave_back:
        # A give-back starts the turn afresh (then a draw, and play).
        kinds = kinds[len(kinds) - kinds[::-1].index("gave_back") :]
    opened = "opened" in kinds and opened_before
    # Unopened when it took: it has not opened, or opened after the take.
    taken_unopened = taken is not None and (
        not opened_before
        or (opened and "took" in kinds and kinds.index("took") < kinds.index("opened"))
    )
    return ThisTurn(
        taken=taken,
        taken_unopened=taken_unopened,
        gave_back=gave_back,
        opened=opened,
        laid_off=kinds.count("laid_off"),
        took_okey="took_okey" in kinds,
    )


# --------------------------------------------------------------------------------------------
# A plan: actions applied one by one to the shadow.


class _Plan:
    __slots__ = ("actions", "notes", "seat", "state")

    def __init__(
        self,
        state: HandState,
        seat: int,
        actions: Sequence[Action] = (),
        notes: Sequence[str] = (),
    ) -> None:
        self.state = state
        self.seat = seat
        self.actions: list[Action] = list(actions)
        self.notes: list[str] = list(notes)

    def copy(self) -> _Plan:
        return _Plan(self.state, self.seat, self.actions, self.notes)

    def step(self, action: Action) -> bool:
        try:
            state, _events = apply(self.state, self.seat, action)
        except OkeyError:
            return False
        self.state = state
        self.actions.append(action)
        return True

    @property
    def me(self) -> Seat:
        return self.state.seats[self.seat]

    @property
    def rack(self) -> tuple[Tile, ...]:
        return self.state.seats[self.seat].rack

    @property
    def ended(self) -> bool:
        return self.state.ended

    def taken_unused(self) -> Tile | None:
        taken = self.state.this_turn.taken
        if taken is not None and any(tile.id == taken.id for tile in self.rack):
            return taken
        return None


# --------------------------------------------------------------------------------------------
# The decision's context: what the seat knows, and estimates built from it.


@dataclass(slots=True)
class _Ctx:
    view: SeatView
    rules: RuleSet
    level: BotLevel
    okey: Okey
    seat: int
    memory: BotMemory
    # Per face: how many tiles playing as it the bot may still get (HARD counts what it has
    # seen go; the others only their own copies).
    avail: list[float] = field(default_factory=list)
    unseen_total: int = 60
    # The bot's own draws still to come after this turn (an estimate).
    horizon: float = 2.5
    last_turn: bool = False
    cache: dict[tuple[object, ...], object] = field(default_factory=dict)

    @property
    def rank(self) -> int:
        return _RANK[self.level]

    def points(self, tile: Tile) -> int:
        if self.okey.is_wild(tile):
            return self.rules.okey_in_hand_points
        return face_number(self.okey.plays_as(tile))

    def face(self, tile: Tile) -> int:
        return self.okey.plays_as(tile)

    def wild(self, tile: Tile) -> bool:
        return self.okey.is_wild(tile)

    def chance(self, copies: float) -> float:
        """The chance of getting one of ``copies`` tiles before the hand ends."""
        if copies <= 0 or self.horizon <= 0:
            return 0.0
        per_draw = min(copies / max(self.unseen_total, 1), 1.0)
        return float(1.0 - (1.0 - per_draw) ** self.horizon)

    def opening(self, hand: Hand, required: Tile | None = None) -> Arrangement:
        key: tuple[object, ...] = ("open", _key(hand.tiles), required.id if required else -1)
        found = self.cache.get(key)
        if found is None:
            found = best_opening(hand, self.rules, required=required)
            self.cache[key] = found
        assert isinstance(found, Arrangement)
        return found

    def best_value(self, hand: Hand) -> Arrangement:
        """The highest-valued runs and sets, every tile allowed (for evaluating a hand)."""
        key: tuple[object, ...] = ("value", _key(hand.tiles))
        found = self.cache.get(key)
        if found is None:
            found = best_opening(hand, self.rules, keep_one=False)
            self.cache[key] = found
        assert isinstance(found, Arrangement)
        return found

    def leftover(self, hand: Hand) -> Arrangement:
        key: tuple[object, ...] = ("least", _key(hand.tiles))
        found = self.cache.get(key)
        if found is None:
            found = least_leftover(hand, self.rules)
            self.cache[key] = found
        assert isinstance(found, Arrangement)
        return found


def _key(tiles: Iterable[Tile]) -> tuple[int, ...]:
    return tuple(sorted(tile.id for tile in tiles))


def _context(seat_view: SeatView, rules: RuleSet, level: BotLevel, memory: BotMemory) -> _Ctx:
    okey = Okey(seat_view.indicator)
    ctx = _Ctx(seat_view, rules, level, okey, seat_view.seat, memory)
    own = [0] * FACE_COUNT
    for tile in seat_view.rack:
        if not okey.is_wild(tile):
            own[okey.plays_as(tile)] += 1
    unseen_total = seat_view.stock_count + sum(
        other.tile_count for other in seat_view.seats if other.seat != seat_view.seat
    )
    draws_after = seat_view.stock_count - (1 if seat_view.phase is Phase.DRAW else 0)
    ends_on_last = rules.stock_out is StockOutPolicy.ENDS_ON_LAST_DISCARD
    ctx.last_turn = draws_after <= 0 and ends_on_last and seat_view.phase is not Phase.DRAW
    if level is BotLevel.HARD:
        seen = _seen_ids(seat_view, memory)
        avail = [0.0] * FACE_COUNT
        for tile in ALL_TILES:
            if tile.id not in seen and not okey.is_wild(tile):
                avail[okey.plays_as(tile)] += 1
        ctx.avail = avail
        ctx.unseen_total = max(unseen_total, 1)
        # Our next draw comes after the three others draw: one per four tiles of stock.
        ctx.horizon = max(draws_after, 0) / SEATS * 1.3
    else:
        ctx.avail = [max(2.0 - own[face], 0.0) for face in range(FACE_COUNT)]
        ctx.unseen_total = 60
        ctx.horizon = 2.5
    return ctx


def _seen_ids(seat_view: SeatView, memory: BotMemory) -> set[int]:
    """Tiles the seat cannot get: its own, the table's, every pile's, the indicator, and those
    it saw thrown and taken by others."""
    seen: set[int] = {tile.id for tile in seat_view.rack}
    seen.add(seat_view.indicator.id)
    for meld, _owner in seat_view.table:
        seen.update(tile.id for tile in meld.tiles)
    for other in seat_view.seats:
        seen.update(tile.id for tile in other.discards)
    seen.update(tile_id for _seat, tile_id in memory.thrown)
    seen.update(tile_id for _seat, tile_id in memory.taken)
    if seat_view.takeable is not None:
        # The one thrown tile the seat may still take.
        seen.discard(seat_view.takeable.id)
    return seen


# --------------------------------------------------------------------------------------------
# The public entry points


def decide(
    view: SeatView,
    rules: RuleSet,
    level: BotLevel,
    seed: int,
    memory: BotMemory | None = None,
) -> Decision:
    """The bot's actions for the current phase of ``view`` (the seat to move) and why."""
    _check_view(view)
    known = (memory or BotMemory(view.seat)).observe_view(view)
    state = shadow_state(view, rules, known)
    if level is BotLevel.RANDOM:
        return _random_decision(state, view.seat, seed, BotLevel.RANDOM)
    ctx = _context(view, rules, level, known)
    if view.phase is Phase.DRAW:
        return _draw_decision(ctx, state)
    return _play_decision(ctx, state)


def fallback_decision(view: SeatView, rules: RuleSet, seed: int) -> Decision:
    """The table's local fallback when the bot service cannot be reached: the random level."""
    return decide(view, rules, BotLevel.RANDOM, seed)


def _check_view(view: SeatView) -> None:
    if view.result is not None or view.phase is Phase.ENDED:
        raise RuleViolation("HAND_OVER")
    if view.turn != view.seat:
        raise RuleViolation("NOT_YOUR_TURN", seat=view.seat, turn=view.turn)
    if not 0 <= view.seat < SEATS or len(view.seats) != SEATS:
        raise InvalidInput("UNKNOWN_SEAT", seat=view.seat)


# --------------------------------------------------------------------------------------------
# RANDOM: the engine's RandomPlayer on the shadow.


def _random_decision(state: HandState, seat: int, seed: int, level: BotLevel) -> Decision:
    player = RandomPlayer(random.Random(seed))
    if state.phase is Phase.DRAW:
        # A whole turn on the shadow (a take only if the rest of the turn then works out); the
        # draw phase answers its first step.
        log = player.turn(state)
        first = log[0][0]
        reason = (
            "random: took the left discard"
            if isinstance(first, TakeDiscard)
            else ("random: drew from the stock")
        )
        return Decision((first,), reason, level)
    step = _Step(state, seat)
    taken = state.this_turn.taken
    after_take = taken is not None and any(tile.id == taken.id for tile in state.seats[seat].rack)
    ok = player._finish_turn(seat, step, after_take=after_take)
    actions = [action for action, _state, _events in step.log]
    if any(isinstance(action, GiveBack) for action in actions):
        cut = next(i for i, action in enumerate(actions) if isinstance(action, GiveBack))
        return Decision(tuple(actions[: cut + 1]), "random: gave the taken tile back", level)
    if not ok:
        found = _search_turn(state, seat)
        if found is None:
            raise RuleViolation("NO_LEGAL_DISCARD")
        return Decision(found, "random: the only way to end the turn", level)
    return Decision(tuple(actions), "random: a random legal turn", level)


def _search_turn(state: HandState, seat: int) -> tuple[Action, ...] | None:
    """A last resort: some legal way to end the turn (or give a taken tile back)."""
    from okey101.engine.view import legal_actions

    def search(current: HandState, depth: int) -> tuple[Action, ...] | None:
        actions = legal_actions(current, seat)
        for action in actions:
            if isinstance(action, (Discard, GiveBack)):
                return (action,)
        if depth == 0:
            return None
        for action in actions:
            if isinstance(action, (ShowIndicator, Draw, TakeDiscard)):
                continue
            after, _events = apply(current, seat, action)
            rest = search(after, depth - 1)
            if rest is not None:
                return (action, *rest)
        return None

    return search(state, 3)


# --------------------------------------------------------------------------------------------
# The draw phase


def _draw_decision(ctx: _Ctx, state: HandState) -> Decision:
    seat = ctx.seat
    takeable = state.takeable
    if takeable is None:
        return _draw(ctx, state, "drew: nothing to take")
    if ctx.level is BotLevel.EASY:
        return _draw(ctx, state, "drew from the stock")
    take = _Plan(state, seat)
    if not take.step(TakeDiscard()):
        return _draw(ctx, state, f"drew: {takeable} cannot be taken")
    plan = _plan_turn(ctx, take)
    if plan is None or any(isinstance(action, GiveBack) for action in plan.actions):
        return _draw(ctx, state, f"drew: no use for {takeable}")
    if plan.ended:
        return Decision((TakeDiscard(),), f"took {takeable}: finishes with it", ctx.level)
    if len(plan.me.penalties) > len(state.seats[seat].penalties):
        return _draw(ctx, state, f"drew: taking {takeable} would cost +101")
    if plan.state.this_turn.opened:
        return Decision((TakeDiscard(),), f"took {takeable}: opens with it", ctx.level)
    # An opened seat takes a tile it puts down, when its rack ends the turn smaller than it
    # began (a sure tile down rather than a drawn gamble). Strictly smaller: with the stock
    # out (where the next seat may take the last discard) the hand then cannot go round for
    # ever.
    used = all(tile.id != takeable.id for tile in plan.rack)
    shrinks = len(plan.rack) < len(state.seats[seat].rack)
    if state.seats[seat].opened_as is not None and used and shrinks:
        return Decision((TakeDiscard(),), f"took {takeable}: puts it down", ctx.level)
    return _draw(ctx, state, f"drew: {takeable} does not help enough")


def _draw(ctx: _Ctx, state: HandState, reason: str) -> Decision:
    if not state.stock and ctx.rules.stock_out is StockOutPolicy.NEXT_MAY_TAKE_LAST_DISCARD:
        reason = "declined the last discard: the hand ends"
    return Decision((Draw(),), reason, ctx.level)


# --------------------------------------------------------------------------------------------
# The play phase


def _play_decision(ctx: _Ctx, state: HandState) -> Decision:
    plan = _plan_turn(ctx, _Plan(state, ctx.seat))
    if plan is None:
        fallback = _random_decision(state, ctx.seat, 0, ctx.level)
        return Decision(fallback.actions, "no plan found: " + fallback.reason, ctx.level)
    return Decision(tuple(plan.actions), "; ".join(plan.notes) or "played", ctx.level)


def _plan_turn(ctx: _Ctx, start: _Plan) -> _Plan | None:
    """The rest of the turn from a play-phase position: a plan ending with the discard (or a
    finish, or the single give-back), or None if the bot finds no way to end the turn."""
    plan = start.copy()
    _show_indicator(ctx, plan)
    if plan.me.opened_as is None:
        opened = _choose_opening(ctx, plan)
        if opened is not None:
            plan = opened
    else:
        plan = _best_put_down(ctx, plan)
    if plan.ended:
        return plan
    taken = plan.taken_unused()
    if taken is not None and _must_use_taken(ctx, plan):
        _use_taken(ctx, plan, taken)
        if plan.taken_unused() is not None:
            back = start.copy()
            if back.step(GiveBack()):
                back.notes.append(f"gave {taken} back: no use for it")
                return back
            return None
    return _discard(ctx, plan)


def _must_use_taken(ctx: _Ctx, plan: _Plan) -> bool:
    policy = ctx.rules.left_discard
    if policy is LeftDiscardPolicy.OPENED_TAKE_FREELY:
        return plan.state.this_turn.taken_unopened and plan.me.opened_as is None
    return True


def _show_indicator(ctx: _Ctx, plan: _Plan) -> None:
    if ctx.rules.indicator_show_points < 0 and plan.step(ShowIndicator()):
        plan.notes.append(f"showed the indicator's twin ({ctx.rules.indicator_show_points})")


# --- Opening ---------------------------------------------------------------------------------


def _choose_opening(ctx: _Ctx, plan: _Plan) -> _Plan | None:
    """The opening to make now (with what it lays down after), or None to stay closed."""
    rules = ctx.rules
    taken = plan.state.this_turn.taken
    required = taken if taken is not None and plan.state.this_turn.taken_unopened else None
    if required is not None and all(tile.id != required.id for tile in plan.rack):
        required = None
    hand = Hand(plan.rack, ctx.okey)
    whole = _whole_hand(ctx, plan, hand, required)
    if whole is not None:
        return whole
    options: list[tuple[str, _Plan]] = []
    minimum = rules.opening_min_points
    if (
        quick_value_bound(hand, rules) >= minimum
        and opening_value_bound(hand, rules, required=required, at_least=minimum) >= minimum
    ):
        arrangements = [ctx.opening(hand, required)]
        if ctx.rank >= _RANK[BotLevel.NORMAL]:
            least = ctx.leftover(hand)
            if (
                least.value >= minimum
                and least.leftover
                and (
                    required is None
                    or any(t.id == required.id for m in least.melds for t in m.tiles)
                )
            ):
                arrangements.append(least)
        for arrangement in arrangements:
            if arrangement.value < minimum or not arrangement.melds:
                continue
            opened = _open_with(ctx, plan, arrangement.melds)
            if opened is None:
                continue
            options.append(("runs", opened))
            if ctx.rank >= _RANK[BotLevel.NORMAL] and not opened.ended:
                # Where the opening turn allows no lay-off, what it leaves may all be playable
                # on its own melds: a smaller opening that keeps a tile free to throw.
                if _free_discard(ctx, opened):
                    continue
                for index in range(len(arrangement.melds)):
                    fewer = arrangement.melds[:index] + arrangement.melds[index + 1 :]
                    if sum(meld.value for meld in fewer) < minimum:
                        continue
                    smaller = _open_with(ctx, plan, fewer)
                    if smaller is not None:
                        options.append(("runs", smaller))
    pairs = best_pairs(hand, required=required)
    if pairs.pair_count >= rules.opening_min_pairs:
        trial = plan.copy()
        if trial.step(OpenPairs(tuple((m.tiles[0], m.tiles[1]) for m in pairs.melds))):
            trial.notes.append(f"opened with {pairs.pair_count} pairs")
            options.append(("pairs", _put_down(ctx, trial)))
    if not options:
        return None
    if ctx.level is BotLevel.EASY:
        return options[0][1]
    scored = sorted(options, key=lambda option: _plan_score(ctx, option[1]))
    kind, best = scored[0]
    if required is None and not best.ended and not ctx.last_turn and not _free_discard(ctx, best):
        # Every opening would end the turn with a +101 discard: wait a turn (the hand holds).
        return None
    if (
        kind == "pairs"
        and ctx.level is BotLevel.HARD
        and required is None
        and _hold_pairs(ctx, hand)
    ):
        return None
    return best


def _open_with(ctx: _Ctx, plan: _Plan, melds: Sequence[Meld]) -> _Plan | None:
    """The plan after opening with ``melds`` and putting down what follows, or None."""
    trial = plan.copy()
    if not trial.step(Open(tuple(Group(meld.tiles) for meld in melds))):
        return None
    value = sum(meld.value for meld in melds)
    trial.notes.append(f"opened with {len(melds)} melds worth {value}")
    return _put_down(ctx, trial)


def _hold_pairs(ctx: _Ctx, hand: Hand) -> bool:
    """HARD: keep a pairs opening in hand while a runs opening is near and time remains (a
    pairs opener's hand counts double, and it may then only add pairs and lay off)."""
    if ctx.horizon < 1.5 or _danger(ctx):
        return False
    value = ctx.best_value(hand).value
    return value >= ctx.rules.opening_min_points - TUNING.hold_pairs_reach


def _danger(ctx: _Ctx) -> bool:
    """Someone may finish soon: an opened seat with few tiles left."""
    return any(
        other.seat != ctx.seat and other.opened_as is not None and other.tile_count <= 5
        for other in ctx.view.seats
    )


def _whole_hand(ctx: _Ctx, plan: _Plan, hand: Hand, required: Tile | None) -> _Plan | None:
    """Lay the whole hand down but one tile and discard it (a finish), if the hand allows."""
    if len(hand.tiles) < 4 or quick_tiles_bound(hand, ctx.rules) < len(hand.tiles) - 1:
        return None
    arrangement = lay_down_all_but_one(hand, ctx.rules)
    if arrangement is None:
        return None
    keeps: list[Tile | None] = [None]
    # Finishing with an okey doubles: keep one to throw last if the rest still goes down.
    keeps[:0] = [tile for tile in hand.tiles if ctx.wild(tile)][:1]
    keeps.extend(tile for tile in hand.tiles if required is None or tile.id != required.id)
    tried = 0
    for keep in keeps:
        if tried > 6:
            break
        found = arrangement if keep is None else lay_down_all_but_one(hand, ctx.rules, keep=keep)
        tried += 1
        if found is None or len(found.leftover) != 1:
            continue
        trial = plan.copy()
        last = found.leftover[0]
        if trial.step(Open(tuple(Group(m.tiles) for m in found.melds))) and trial.step(
            Discard(last)
        ):
            trial.notes.append(f"laid the whole hand down and finished with {last}")
            return trial
    return None


# --- After opening: laying down, laying off, okeys ------------------------------------------


def _best_put_down(ctx: _Ctx, plan: _Plan) -> _Plan:
    """HARD also weighs taking an okey back: the put-down that leaves least wins."""
    base = _put_down(ctx, plan.copy())
    if ctx.level is not BotLevel.HARD or not ctx.rules.may_take_okey_back:
        return base
    best = base
    best_score = _plan_score(ctx, base)
    for action in _okey_takes(ctx, plan):
        trial = plan.copy()
        if not trial.step(action):
            continue
        trial.notes.append(f"took the okey back from meld {action.meld}")
        done = _put_down(ctx, trial)
        score = _plan_score(ctx, done)
        if score < best_score - 0.5:
            best, best_score = done, score
    return best


def _okey_takes(ctx: _Ctx, plan: _Plan) -> list[TakeOkey]:
    out: list[TakeOkey] = []
    by_face: dict[int, Tile] = {}
    for tile in plan.rack:
        if not ctx.wild(tile):
            by_face.setdefault(ctx.face(tile), tile)
    for index, item in enumerate(plan.state.table):
        meld = item.meld
        if not any(meld.wild):
            continue
        if meld.kind is MeldKind.SET and len(meld.tiles) == 3:
            shown = {
                face // 13
                for face, wild in zip(meld.stands_for, meld.wild, strict=True)
                if face is not None and not wild
            }
            missing = [face_of(c, meld.number) for c in range(4) if c not in shown]
            tiles = [by_face[f] for f in missing if f in by_face]
            if len(tiles) == len(missing) == 2:
                out.append(TakeOkey(index, tuple(tiles)))
            continue
        for stands, wild in zip(meld.stands_for, meld.wild, strict=True):
            if wild and stands is not None and stands in by_face:
                out.append(TakeOkey(index, (by_face[stands],)))
    return out


def _put_down(ctx: _Ctx, plan: _Plan) -> _Plan:
    """Lay down and lay off what the level lays down, finishing where it can."""
    me = plan.me
    if me.opened_as is None or plan.ended:
        return plan
    if plan.state.this_turn.opened and not ctx.rules.lay_off_in_opening_turn:
        return plan
    if me.opened_as is OpenedAs.RUNS:
        _lay_down_runs(ctx, plan)
    _lay_offs(ctx, plan, okeys=False)
    _lay_down_pairs(ctx, plan)
    _lay_offs(ctx, plan, okeys=False)
    rack = plan.rack
    real = [tile for tile in rack if not ctx.wild(tile)]
    finishing = len(rack) >= 2 and len(real) <= 1
    if finishing or (ctx.last_turn and ctx.level is BotLevel.HARD):
        # Only okeys (and one tile) left, or the last turn: the okeys go down too.
        _lay_offs(ctx, plan, okeys=True)
    if len(plan.rack) == 1:
        last = plan.rack[0]
        if plan.step(Discard(last)):
            plan.notes.append(f"finished with {last}")
    return plan


def _lay_down_runs(ctx: _Ctx, plan: _Plan) -> None:
    hand = Hand(plan.rack, ctx.okey)
    arrangement = ctx.leftover(hand)
    if not arrangement.melds:
        return
    if not arrangement.leftover:
        # Everything fits in melds: all but one goes down, the one left finishes (an okey if
        # one can be kept: a finish with the okey doubles).
        keeps: list[Tile | None] = [*[t for t in hand.tiles if ctx.wild(t)][:1], None]
        for keep in keeps:
            found = lay_down_all_but_one(hand, ctx.rules, keep=keep)
            if found is not None:
                trial = plan.copy()
                if trial.step(LayDown(tuple(Group(m.tiles) for m in found.melds))):
                    trial.notes.append(f"laid down {len(found.melds)} melds")
                    plan.state, plan.actions, plan.notes = (
                        trial.state,
                        trial.actions,
                        trial.notes,
                    )
                    return
    laid = 0
    for meld in arrangement.melds:
        if plan.step(LayDown((Group(meld.tiles),))):
            laid += 1
    if laid:
        plan.notes.append(f"laid down {laid} meld{'s' if laid > 1 else ''}")


def _lay_down_pairs(ctx: _Ctx, plan: _Plan) -> None:
    me = plan.me
    may_pair = me.opened_as is OpenedAs.PAIRS or (
        ctx.rules.runs_openers_may_pair_after_pairs_opening and plan.state.pairs_on_table()
    )
    if not may_pair:
        return
    pairs = best_pairs(Hand(plan.rack, ctx.okey))
    laid = 0
    for meld in pairs.melds:
        # An okey is worth more in a run or set than beside one tile (but for the last turn).
        keep_okey = ctx.rank >= _RANK[BotLevel.NORMAL] and not ctx.last_turn
        if keep_okey and me.opened_as is OpenedAs.RUNS and any(ctx.wild(t) for t in meld.tiles):
            continue
        if plan.step(LayDown((Group(meld.tiles),))):
            laid += 1
    if laid:
        plan.notes.append(f"laid down {laid} pair{'s' if laid > 1 else ''}")


def _accepts(ctx: _Ctx, meld: Meld) -> list[tuple[int, End | None]]:
    """(face, end) of every real tile the meld takes now."""
    out: list[tuple[int, End | None]] = []
    if meld.kind is MeldKind.RUN:
        colour = meld.colour
        assert colour is not None
        if meld.low > 1:
            out.append((face_of(colour, meld.low - 1), End.LOW))
        top = HIGH_ONE if ctx.rules.run_may_end_12_13_1 else 13
        if meld.high < top:
            out.append(
                (face_of(colour, 1 if meld.high + 1 == HIGH_ONE else meld.high + 1), End.HIGH)
            )
    elif meld.kind is MeldKind.SET and len(meld.tiles) == 3:
        out.extend((face, None) for face in playable_faces((meld,), ctx.rules))
    return out


def _lay_offs(ctx: _Ctx, plan: _Plan, *, okeys: bool) -> None:
    laid: list[str] = []
    progress = True
    while progress and len(plan.rack) > 1:
        progress = False
        targets: dict[int, list[tuple[int, End | None]]] = {}
        open_spots: list[tuple[int, End | None]] = []
        for index, item in enumerate(plan.state.table):
            for face, end in _accepts(ctx, item.meld):
                targets.setdefault(face, []).append((index, end))
                open_spots.append((index, end))
        rack = sorted(plan.rack, key=lambda tile: (-ctx.points(tile), tile.id))
        for tile in rack:
            if ctx.wild(tile):
                if not okeys:
                    continue
                spots = open_spots
            else:
                spots = targets.get(ctx.face(tile), [])
            for index, end in spots:
                if plan.step(LayOff(tile, index, end)):
                    laid.append(str(tile))
                    progress = True
                    break
            if progress:
                break
    if laid:
        plan.notes.append("laid off " + " ".join(laid))


def _use_taken(ctx: _Ctx, plan: _Plan, taken: Tile) -> None:
    """Put the tile taken from the left down somehow: laid off, in place of an okey, in a new
    meld or pair."""
    if plan.me.opened_as is None:
        return
    for index, item in enumerate(plan.state.table):
        for face, end in _accepts(ctx, item.meld):
            if (ctx.wild(taken) or face == ctx.face(taken)) and plan.step(
                LayOff(taken, index, end)
            ):
                plan.notes.append(f"laid off {taken}")
                return
    for action in _okey_takes(ctx, plan):
        if any(t.id == taken.id for t in action.tiles) and plan.step(action):
            plan.notes.append(f"put {taken} in place of an okey")
            return
    hand = Hand(plan.rack, ctx.okey)
    with_it = best_opening(hand, ctx.rules, required=taken)
    for meld in with_it.melds:
        if any(t.id == taken.id for t in meld.tiles) and plan.step(LayDown((Group(meld.tiles),))):
            plan.notes.append(f"melded {taken}")
            return
    pairs = best_pairs(hand, required=taken)
    for meld in pairs.melds:
        if any(t.id == taken.id for t in meld.tiles) and plan.step(LayDown((Group(meld.tiles),))):
            plan.notes.append(f"paired {taken}")
            return


# --- Scoring a plan ---------------------------------------------------------------------------


def _plan_score(ctx: _Ctx, plan: _Plan) -> float:
    """What the plan's position is worth to the seat (points, lower is better)."""
    state = plan.state
    if state.result is not None:
        return float(state.result.scores[ctx.seat])
    me = plan.me
    rack = plan.rack
    if me.opened_as is None:
        return float(ctx.rules.never_opened_points)
    costs = sorted((ctx.points(t) for t in rack if not ctx.wild(t)), reverse=True)
    okeys = sum(1 for t in rack if ctx.wild(t))
    # The discard to come takes the highest tile off.
    hand = sum(costs[1:]) if costs else 0
    # An okey kept is worth keeping (it may finish doubled) but counts if the hand ends.
    okey_cost = okeys * ctx.rules.okey_in_hand_points * (0.6 if not ctx.last_turn else 1.0)
    if me.opened_as is OpenedAs.PAIRS:
        hand *= 2
    forced = 0 if _free_discard(ctx, plan) else ctx.rules.penalty_points
    return hand + okey_cost + forced + 0.1 * len(rack)


def _free_discard(ctx: _Ctx, plan: _Plan) -> bool:
    """Whether the plan can end its turn with a discard that costs no +101."""
    playable = playable_faces(plan.state.table_melds(), ctx.rules)
    return any(
        not ctx.wild(tile) and ctx.face(tile) not in playable and plan.copy().step(Discard(tile))
        for tile in plan.rack
    )


# --- The discard ------------------------------------------------------------------------------


def _discard(ctx: _Ctx, plan: _Plan) -> _Plan | None:
    rack = plan.rack
    if not rack:
        return None
    order = _discard_order(ctx, plan)
    for tile, why in order:
        trial = plan.copy()
        if trial.step(Discard(tile)):
            if trial.ended and trial.state.result is not None and trial.state.result.finish:
                trial.notes.append(f"finished with {tile}")
            else:
                trial.notes.append(f"discarded {tile} ({why})")
            return trial
    return None


def _discard_order(ctx: _Ctx, plan: _Plan) -> list[tuple[Tile, str]]:
    """The rack's tiles, best discard first, with a word on why."""
    rack = plan.rack
    okey = ctx.okey
    playable = playable_faces(plan.state.table_melds(), ctx.rules)

    def costly(tile: Tile) -> bool:
        return okey.is_wild(tile) or okey.plays_as(tile) in playable

    opened_as = plan.me.opened_as
    hand = Hand(rack, okey)
    pairs_route = False
    if opened_as is None:
        arrangement = ctx.best_value(hand)
        if ctx.level is BotLevel.HARD:
            pairs = best_pairs(hand, keep_one=False)
            if _pairs_route(ctx, arrangement.value, pairs.pair_count):
                arrangement, pairs_route = pairs, True
    elif opened_as is OpenedAs.RUNS:
        arrangement = ctx.leftover(hand)
    else:
        arrangement = best_pairs(hand, keep_one=False)
    in_melds = {tile.id for meld in arrangement.melds for tile in meld.tiles}
    loose = [tile for tile in rack if tile.id not in in_melds]

    if ctx.level is BotLevel.EASY:

        def easy_key(tile: Tile) -> tuple[int, int, int, int]:
            return (
                1 if costly(tile) else 0,
                0 if tile.id not in in_melds else 1,
                -ctx.points(tile) if not okey.is_wild(tile) else 0,
                tile.id,
            )

        ordered = sorted(rack, key=easy_key)
        return [(tile, "highest loose tile") for tile in ordered]

    values = _keep_values(ctx, plan, arrangement, loose, opened_as, pairs_route=pairs_route)
    danger = _feeding(ctx, plan) if ctx.level is BotLevel.HARD else {}
    if opened_as is None and ctx.level is BotLevel.HARD:
        candidates = [t for t in loose if not costly(t)]
        for tile_id, chance in _opening_outs(ctx, hand, candidates).items():
            values[tile_id] = values.get(tile_id, 0.0) - TUNING.outs_weight * chance

    # Which meld to break matters only when at most one loose tile is free to throw (it may be
    # the tile taken from the left, which cannot be thrown back): the solver is asked only then.
    free_loose = sum(1 for t in rack if not costly(t) and t.id not in in_melds)

    def key(tile: Tile) -> tuple[float, float, int]:
        penalty = 0.0
        if costly(tile):
            penalty = 1000.0 + (500.0 if okey.is_wild(tile) else 0.0)
        elif tile.id in in_melds:
            loss = _meld_loss(ctx, hand, tile, opened_as) if free_loose <= 1 else 0.0
            penalty = 300.0 + loss
        # values[t]: how much keeping the tile is worth (higher: keep).
        worth = values.get(tile.id, 0.0) + danger.get(tile.id, 0.0)
        return (penalty + worth, -ctx.points(tile), tile.id)

    ordered = sorted(rack, key=key)
    return [(tile, _why(tile, costly(tile), tile.id in in_melds)) for tile in ordered]


def _representative(ctx: _Ctx, face: int, held: set[int]) -> Tile | None:
    """A tile that plays as ``face`` (a false joker for the okey's face), not in hand."""
    if face == ctx.okey.face:
        options = (ALL_TILES[104], ALL_TILES[105])
    else:
        options = (ALL_TILES[face * 2], ALL_TILES[face * 2 + 1])
    return next((tile for tile in options if tile.id not in held), None)


def _opening_outs(ctx: _Ctx, hand: Hand, candidates: Sequence[Tile]) -> dict[int, float]:
    """HARD, unopened: for each candidate discard, the chance that a next tile opens the hand
    (value at least the minimum), counting the copies of each tile still to be had."""
    rules = ctx.rules
    target = rules.opening_min_points
    if not candidates or ctx.best_value(hand).value < target - TUNING.outs_reach:
        return {}
    held = {tile.id for tile in hand.tiles}
    numbers = set()
    places: set[tuple[int, int]] = set()
    for tile in hand.tiles:
        if ctx.wild(tile):
            continue
        face = ctx.face(tile)
        numbers.add(face_number(face))
        places.add((face // 13, face_number(face)))
    faces: list[int] = []
    for face in range(FACE_COUNT):
        if ctx.avail[face] <= 0:
            continue
        colour, number = face // 13, face_number(face)
        near = number in numbers or any(
            (colour, n) in places for n in (number - 2, number - 1, number + 1, number + 2)
        )
        if near:
            faces.append(face)
    # The likeliest and highest first: the solver-call budget (deterministic) may cut the rest.
    faces.sort(key=lambda face: (-ctx.avail[face], -face_number(face), face))
    budget = TUNING.outs_budget
    outs: list[tuple[Tile, float, set[tuple[bool, int]]]] = []
    for face in faces:
        drawn = _representative(ctx, face, held)
        if drawn is None:
            continue
        bigger = hand.with_tile(drawn)
        if quick_value_bound(bigger, rules) < target:
            continue
        if budget <= 0:
            break
        budget -= 1
        if opening_value_bound(bigger, rules, at_least=target) < target:
            continue
        budget -= 1
        spare = {(ctx.wild(t), ctx.face(t)) for t in ctx.best_value(bigger).leftover}
        outs.append((drawn, ctx.avail[face], spare))
    if not outs:
        return {}
    chances: dict[int, float] = {}
    seen: dict[tuple[bool, int], float] = {}
    budget = max(budget, TUNING.outs_budget // 3)
    for tile in sorted(candidates, key=lambda t: (ctx.points(t), t.id)):
        key = (ctx.wild(tile), ctx.face(tile))
        if key not in seen:
            rest = hand.without(tile)
            copies = 0.0
            for out, weight, spare in outs:
                if key in spare:
                    copies += weight  # the out's best arrangement leaves this tile out
                elif budget > 0:
                    budget -= 1
                    if opening_value_bound(rest.with_tile(out), rules, at_least=target) >= target:
                        copies += weight
            seen[key] = ctx.chance(copies)
        chances[tile.id] = seen[key]
    return chances


def _pairs_route(ctx: _Ctx, value: int, pair_count: int) -> bool:
    """HARD, unopened: aim at a pairs opening (the runs opening looks further away)."""
    if pair_count >= TUNING.pairs_route_min:
        return value < ctx.rules.opening_min_points - TUNING.pairs_route_gap4
    if pair_count == TUNING.pairs_route_min - 1:
        return value < ctx.rules.opening_min_points - TUNING.pairs_route_gap3
    return False


def _why(tile: Tile, costly: bool, in_meld: bool) -> str:
    if costly:
        return "no other choice"
    if in_meld:
        return "breaking a meld"
    return "least useful"


def _meld_loss(ctx: _Ctx, hand: Hand, tile: Tile, opened_as: OpenedAs | None) -> float:
    """What breaking the best arrangement to throw ``tile`` (a meld tile) costs."""
    if opened_as is None:
        whole = ctx.best_value(hand).value
        return float(whole - ctx.best_value(hand.without(tile)).value)
    if opened_as is OpenedAs.RUNS:
        after = _left_points(ctx, ctx.leftover(hand.without(tile)))
        return float(after - _left_points(ctx, ctx.leftover(hand)))
    return 50.0


def _left_points(ctx: _Ctx, arrangement: Arrangement) -> int:
    return sum(ctx.points(tile) for tile in arrangement.leftover)


def _keep_values(
    ctx: _Ctx,
    plan: _Plan,
    arrangement: Arrangement,
    loose: Sequence[Tile],
    opened_as: OpenedAs | None,
    *,
    pairs_route: bool = False,
) -> dict[int, float]:
    """How much keeping each loose tile is worth, in points: higher keeps it.

    Unopened: the chance it completes a run or set (with another loose tile, or beside a meld
    of the arrangement) times what that meld adds toward the opening, plus a pairs term when
    the hand leans to pairs. Opened: minus the points it is expected to leave in hand (its
    number times the chance it never goes down), so the highest dead tile goes first.
    """
    okey = ctx.okey
    real = [tile for tile in loose if not okey.is_wild(tile)]
    high_one = ctx.rules.run_may_end_12_13_1
    # Chances and gains of partial melds, per tile.
    chances: dict[int, list[tuple[float, float]]] = {tile.id: [] for tile in real}
    faces = {tile.id: okey.plays_as(tile) for tile in real}
    loose_faces = {faces[tile.id] for tile in real}
    for i, a in enumerate(real):
        fa = faces[a.id]
        for b in real[i + 1 :]:
            fb = faces[b.id]
            if fa == fb:
                continue
            needs, gain = _completions(fa, fb, high_one)
            if not needs:
                continue
            copies = sum(ctx.avail[face] for face in needs)
            chance = ctx.chance(copies)
            chances[a.id].append((chance, gain))
            chances[b.id].append((chance, gain))
    # Beside a run of the arrangement or of the table, one tile short.
    runs = [meld for meld in arrangement.melds if meld.kind is MeldKind.RUN]
    table_runs = [m for m in plan.state.table_melds() if m.kind is MeldKind.RUN]
    for tile in real:
        face = faces[tile.id]
        colour, number = face // 13, face_number(face)
        for meld in (*runs, *table_runs):
            if meld.colour is None or int(meld.colour) != colour:
                continue
            for gap, beyond in ((meld.low - 1, meld.low - 2), (meld.high + 1, meld.high + 2)):
                if beyond == number and 1 <= gap <= 13:
                    gap_face = face_of(colour, gap)
                    if gap_face in loose_faces:
                        continue
                    chance = ctx.chance(ctx.avail[gap_face])
                    chances[tile.id].append((chance, number + gap))
    values: dict[int, float] = {}
    pairs_lean = 0.0
    if opened_as is None:
        pair_count = best_pairs(Hand(plan.rack, okey), keep_one=False).pair_count
        if pair_count >= 3:
            pairs_lean = (pair_count - 2) / 3.0
    for tile in real:
        face = faces[tile.id]
        number = face_number(face)
        found = chances[tile.id]
        if pairs_route:
            # Aiming at pairs: a single is worth the chance of its twin (a high one counts
            # double in hand once opened), plus a little of its runs-and-sets promise.
            worth = TUNING.pair_single * ctx.chance(ctx.avail[face]) - 0.3 * number
            worth += TUNING.pair_runs_share * sum(chance * gain for chance, gain in found)
            values[tile.id] = worth
        elif opened_as is None:
            worth = sum(chance * gain for chance, gain in found)
            worth += 0.02 * number  # a lone high tile can still build more
            if pairs_lean:
                twins = sum(1 for other in real if faces[other.id] == face) - 1
                if twins:
                    worth += 30.0 * pairs_lean
                else:
                    worth += 10.0 * pairs_lean * ctx.chance(ctx.avail[face])
            values[tile.id] = worth
        else:
            never = 1.0
            for chance, _gain in found:
                never *= 1.0 - chance
            if opened_as is OpenedAs.PAIRS:
                never *= 1.0 - ctx.chance(ctx.avail[face])
            values[tile.id] = -number * never
    return values


def _completions(fa: int, fb: int, high_one: bool) -> tuple[list[int], float]:
    """The faces that would make a meld of two tiles (faces ``fa`` ``fb``), and its worth."""
    ca, na = fa // 13, face_number(fa)
    cb, nb = fb // 13, face_number(fb)
    if ca != cb:
        if na != nb:
            return [], 0.0
        others = [face_of(c, na) for c in range(4) if c not in (ca, cb)]
        return others, 3.0 * na
    low, high = min(na, nb), max(na, nb)
    places = [(low, high)]
    if high_one and low == 1:
        places.append((high, 14))  # the 1 as the top of 12-13-1
    for lo, hi in places:
        if hi - lo == 1:
            needs = []
            if lo > 1:
                needs.append(face_of(ca, lo - 1))
            top = 14 if high_one else 13
            if hi < top:
                needs.append(face_of(ca, 1 if hi + 1 == 14 else hi + 1))
            return needs, float(lo + hi + (lo - 1 if lo > 1 else hi + 1))
        if hi - lo == 2:
            return [face_of(ca, lo + 1)], float(3 * (lo + 1))
    return [], 0.0


def _feeding(ctx: _Ctx, plan: _Plan) -> dict[int, float]:
    """HARD: how much a discard could help the next seat (added to the worth of keeping it).

    The next seat may take the discard only if it can use it at once (or, opened, freely where
    the rules say so). Judged from what it picked up (tiles near those are wanted) and threw
    (the same face again is not)."""
    nxt = (ctx.seat + 1) % SEATS
    if plan.state.stock == () and ctx.rules.stock_out is StockOutPolicy.ENDS_ON_LAST_DISCARD:
        return {}
    okey = ctx.okey
    picked = [ALL_TILES[tile_id] for seat, tile_id in ctx.memory.taken if seat == nxt]
    thrown_faces = {
        okey.plays_as(ALL_TILES[tile_id])
        for seat, tile_id in ctx.memory.thrown
        if seat == nxt and not okey.is_wild(ALL_TILES[tile_id])
    }
    other = ctx.view.seats[nxt]
    unopened = other.opened_as is None
    out: dict[int, float] = {}
    for tile in plan.rack:
        if okey.is_wild(tile):
            continue
        face = okey.plays_as(tile)
        colour, number = face // 13, face_number(face)
        risk = 0.0
        for got in picked:
            if okey.is_wild(got):
                continue
            g = okey.plays_as(got)
            near = g // 13 == colour and abs(face_number(g) - number) <= 2 and g != face
            if near or (face_number(g) == number and g // 13 != colour):
                risk += 1.0
        if face in thrown_faces:
            risk -= 1.0
        for dead in (face - 1, face + 1):
            if 0 <= dead < FACE_COUNT and dead // 13 == colour and dead in thrown_faces:
                risk -= 0.3
        weight = TUNING.feeding_unopened if unopened else TUNING.feeding_opened
        out[tile.id] = max(risk, -1.5) * weight
    return out


__all__ = [
    "BotLevel",
    "BotMemory",
    "Decision",
    "decide",
    "fallback_decision",
    "shadow_state",
]
