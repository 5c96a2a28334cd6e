"""Where the player's tiles can be laid off: the melds on the table each tile fits.

Worked out here from the seat's view with the engine's own meld rule (``extend_meld``: the same
check the table applies to a LayOff), so the "which meld?" list offers only melds the tile fits
and a single fit needs no question. When the table's hints (TableService.GetHints) are
available they answer the same question; ``LayOffHints`` is the seam: anything that maps a view
and the tiles to their ``Plan``s can replace ``local_plans``.

Several tiles are laid off in one Act, one LayOff each, in an order in which each fits the meld
as the previous ones left it (R8 then R9 on R5 R6 R7). Whether the seat may lay off at all (not
opened, a pairs opener at a table that forbids it) is said at once with the rules' sentence,
before any question.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from okey.v1 import common_pb2

from okey101.client import moves
from okey101.engine import OkeyError, RuleSet
from okey101.engine.actions import End
from okey101.engine.hand import extend_meld
from okey101.engine.melds import Meld, MeldKind
from okey101.engine.sentences import render
from okey101.engine.tiles import Okey, tile_by_id
from okey101.platform.convert import okey_from_indicator_id, rules_from_proto
from okey101.platform.convert.melds import meld_from_proto

#: Tiles laid off together are tried in every order up to this many (4! = 24 orders).
MAX_TILES = 4


@dataclass(frozen=True)
class Placement:
    """One tile laid off on one table meld (at a run's end when an okey fits both)."""

    tile_id: int
    meld_index: int
    end: End | None = None


#: One way to lay the tiles off: a placement each, in the order they are sent.
Plan = tuple[Placement, ...]

#: The seam: the plans for laying ``tile_ids`` off, given the view.
LayOffHints = Callable[[common_pb2.SeatView, Sequence[int]], list[Plan]]


def refusal(view: common_pb2.SeatView, language: str) -> str | None:
    """The rules' sentence when the seat may not lay off at all now, else ``None``."""
    if not view.HasField("seat") or view.seat >= len(view.seats):
        return None
    opened = view.seats[view.seat].opened_as
    if opened not in (common_pb2.OPENING_KIND_RUNS, common_pb2.OPENING_KIND_PAIRS):
        return render("MUST_OPEN_FIRST", language, {})
    if opened == common_pb2.OPENING_KIND_PAIRS and not _rules(view).pairs_opener_may_lay_off:
        return render("PAIRS_OPENER_NO_LAY_OFF", language, {})
    return None


def local_plans(view: common_pb2.SeatView, tile_ids: Sequence[int]) -> list[Plan]:
    """Every distinct way the tiles fit the table's melds, each tile once (no plan: they do
    not all fit). Two plans that put the same tiles on the same melds are one."""
    if not tile_ids or len(tile_ids) > MAX_TILES:
        return []
    rules = _rules(view)
    okey = okey_from_indicator_id(view.indicator.id)
    table: dict[int, Meld] = {}
    for item in view.table:
        try:
            table[item.index] = meld_from_proto(item.meld, okey, rules, "table")
        except OkeyError:
            continue  # a meld this client cannot read is the table's to judge
    plans: list[Plan] = []
    seen: set[frozenset[tuple[int, int, End | None]]] = set()
    for order in itertools.permutations(tile_ids):
        for plan in _place(list(order), dict(table), okey, rules):
            key = frozenset((p.tile_id, p.meld_index, p.end) for p in plan)
            if key not in seen:
                seen.add(key)
                plans.append(plan)
    return plans


def _place(tiles: list[int], table: dict[int, Meld], okey: Okey, rules: RuleSet) -> list[Plan]:
    if not tiles:
        return [()]
    first, rest = tiles[0], tiles[1:]
    tile = tile_by_id(first)
    out: list[Plan] = []
    for index, meld in sorted(table.items()):
        if meld.kind is MeldKind.PAIR:
            continue
        ends: tuple[End | None, ...] = (None,)
        if meld.kind is MeldKind.RUN and okey.is_wild(tile):
            ends = (End.LOW, End.HIGH)
        for end in ends:
            try:
                grown = extend_meld(meld, tile, end, okey, rules)
            except OkeyError:
                continue
            after = {**table, index: grown}
            out.extend(
                (Placement(first, index, end), *plan) for plan in _place(rest, after, okey, rules)
            )
    return out


def actions(plan: Plan) -> list[common_pb2.Action]:
    """The plan's LayOff actions, one Act."""
    return [moves.lay_off(p.tile_id, p.meld_index, p.end) for p in plan]


def _rules(view: common_pb2.SeatView) -> RuleSet:
    return rules_from_proto(view.rules)
