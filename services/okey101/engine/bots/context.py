"""The decision's context: what the seat knows, and the estimates built from it (the tiles it
may still get, the draws it has left, the solver's answers cached for the decision)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from okey101.engine.bots.levels import RANK, BotLevel
from okey101.engine.bots.memory import BotMemory
from okey101.engine.hand import SEATS, Phase
from okey101.engine.rules import RuleSet, StockOutPolicy
from okey101.engine.solver.arrangement import Arrangement, Hand
from okey101.engine.solver.openings import best_opening, least_leftover
from okey101.engine.tiles import ALL_TILES, FACE_COUNT, Okey, Tile, face_number
from okey101.engine.view import SeatView


@dataclass(slots=True)
class Context:
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
        return RANK[self.level]

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
        key: tuple[object, ...] = ("open", tiles_key(hand.tiles), required.id if required else -1)
        found = self.cache.get(key)
        if found is None:
            found = best_opening(hand, self.rules, required=required)
            self.cache[key] = found
        assert isinstance(found, Arrangement)
        return found

    def best_value(self, hand: Hand) -> Arrangement:
        """The highest-valued runs and sets, every tile allowed (for evaluating a hand)."""
        key: tuple[object, ...] = ("value", tiles_key(hand.tiles))
        found = self.cache.get(key)
        if found is None:
            found = best_opening(hand, self.rules, keep_one=False)
            self.cache[key] = found
        assert isinstance(found, Arrangement)
        return found

    def leftover(self, hand: Hand) -> Arrangement:
        key: tuple[object, ...] = ("least", tiles_key(hand.tiles))
        found = self.cache.get(key)
        if found is None:
            found = least_leftover(hand, self.rules)
            self.cache[key] = found
        assert isinstance(found, Arrangement)
        return found


def tiles_key(tiles: Iterable[Tile]) -> tuple[int, ...]:
    return tuple(sorted(tile.id for tile in tiles))


def build_context(
    seat_view: SeatView, rules: RuleSet, level: BotLevel, memory: BotMemory
) -> Context:
    okey = Okey(seat_view.indicator)
    ctx = Context(seat_view, rules, level, okey, seat_view.seat, memory)
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
