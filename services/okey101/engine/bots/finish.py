"""Going out: a search of the put-downs that leave one tile to throw, so the turn finishes.

After opening, the greedy put-down (``put_down``: new melds by least left, then lay-offs, okeys
only when nothing else is left) misses finishes that need another order: an okey laid off so
that a real tile can be thrown last, a tile laid off rather than melded, an okey taken back and
used in a new meld, the rest of the rack in new melds once some tiles are laid off. ``finish``
searches them: depth first over the plan's put-downs (every lay-off of every rack tile, okeys
included, onto every seat's melds; the new melds of the arrangement that leaves least; okey
take-backs), and at every node whether all the rack but one tile goes down at once as new runs
and sets (or pairs, where the seat may pair). Every step is checked by ``apply`` on the shadow
state. Of the finishes found it keeps the one that scores best for the seat (the okey thrown
last doubles), and stops at ``FINISH_NODES`` positions (the search is bounded, so a decision
stays cheap).
"""

from __future__ import annotations

from okey101.engine.actions import Action, Discard, Group, LayDown, LayOff
from okey101.engine.bots.context import Context, tiles_key
from okey101.engine.bots.plan import Plan
from okey101.engine.bots.put_down import accepts, okey_takes
from okey101.engine.melds import MeldKind
from okey101.engine.seat import OpenedAs
from okey101.engine.solver.arrangement import Hand
from okey101.engine.solver.bounds import quick_tiles_bound
from okey101.engine.solver.openings import lay_down_all_but_one
from okey101.engine.solver.pairs import best_pairs
from okey101.engine.tiles import Tile

# Positions the search visits at most, per decision.
FINISH_NODES = 40
# The largest rack the search starts from (beyond it, a finish this turn is far-fetched and
# the greedy put-down finds the plain ones).
FINISH_RACK = 8


def finish(ctx: Context, plan: Plan) -> Plan | None:
    """A plan from ``plan`` (opened, play phase) that finishes the hand this turn, the best
    for the seat of those found, or None."""
    if plan.ended or plan.me.opened_as is None or len(plan.rack) > FINISH_RACK:
        return None
    search = _Search(ctx)
    search.visit(plan)
    return search.best


class _Search:
    __slots__ = ("best", "best_score", "ctx", "nodes", "seen")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.nodes = 0
        self.seen: set[tuple[int, ...]] = set()
        self.best: Plan | None = None
        self.best_score = 0.0

    def done(self) -> bool:
        # The best a finish can score: stop at the first okey finish (it doubles).
        return self.nodes >= FINISH_NODES or (
            self.best is not None and self.best_score <= 2 * self.ctx.rules.finish_points
        )

    def found(self, plan: Plan) -> None:
        result = plan.state.result
        if result is None or result.finish is None or result.finish.winner != self.ctx.seat:
            return
        score = float(result.scores[self.ctx.seat])
        if self.best is None or score < self.best_score:
            self.best, self.best_score = plan, score

    def visit(self, plan: Plan) -> None:
        if self.done():
            return
        key = tiles_key(plan.rack)
        if key in self.seen:
            return
        self.seen.add(key)
        self.nodes += 1
        rack = plan.rack
        if len(rack) == 1:
            trial = plan.copy()
            if trial.step(Discard(rack[0])):
                trial.notes.append(f"finished with {rack[0]}")
                self.found(trial)
            return
        self._all_but_one(plan)
        for move in self._moves(plan):
            if self.done():
                return
            trial = plan.copy()
            if trial.step(move):
                self.visit(trial)

    def _all_but_one(self, plan: Plan) -> None:
        """The rack but one tile in new melds at once, that tile thrown: a finish."""
        ctx = self.ctx
        rack = plan.rack
        hand = Hand(rack, ctx.okey)
        okeys = [tile for tile in rack if ctx.wild(tile)]
        runs = plan.me.opened_as is OpenedAs.RUNS
        if runs and len(rack) >= 4 and quick_tiles_bound(hand, ctx.rules) >= len(rack) - 1:
            keeps: list[Tile | None] = [*okeys[:1], None]
            for keep in keeps:
                found = lay_down_all_but_one(hand, ctx.rules, keep=keep)
                if found is not None:
                    self._lay_and_throw(plan, [m.tiles for m in found.melds], found.leftover)
                    break
        may_pair = plan.me.opened_as is OpenedAs.PAIRS or (
            ctx.rules.runs_openers_may_pair_after_pairs_opening and plan.state.pairs_on_table()
        )
        if may_pair and len(rack) % 2 == 1 and len(rack) >= 3:
            pairs = best_pairs(hand)
            if 2 * pairs.pair_count == len(rack) - 1:
                self._lay_and_throw(plan, [m.tiles for m in pairs.melds], pairs.leftover)

    def _lay_and_throw(
        self, plan: Plan, groups: list[tuple[Tile, ...]], left: tuple[Tile, ...]
    ) -> None:
        if len(left) != 1:
            return
        trial = plan.copy()
        if trial.step(LayDown(tuple(Group(tiles) for tiles in groups))) and trial.step(
            Discard(left[0])
        ):
            trial.notes.append(f"laid down {len(groups)} melds and finished with {left[0]}")
            self.found(trial)

    def _moves(self, plan: Plan) -> list[Action]:
        """The put-downs worth trying from ``plan``: real tiles' lay-offs first, then new
        melds, okey take-backs, and okeys' lay-offs (one spot per meld)."""
        ctx = self.ctx
        real: list[Action] = []
        wild: list[Action] = []
        rack = plan.rack
        by_face: dict[int, list[Tile]] = {}
        okeys = [tile for tile in rack if ctx.wild(tile)]
        for tile in rack:
            if not ctx.wild(tile):
                by_face.setdefault(ctx.face(tile), []).append(tile)
        for index, item in enumerate(plan.state.table):
            if item.meld.kind is MeldKind.PAIR:
                continue
            spots = accepts(ctx, item.meld)
            for face, end in spots:
                for tile in by_face.get(face, [])[:1]:
                    real.append(LayOff(tile, index, end))
            if okeys and spots:
                wild.append(LayOff(okeys[0], index, spots[0][1]))
        if plan.me.opened_as is OpenedAs.RUNS:
            arrangement = ctx.leftover(Hand(rack, ctx.okey))
            real.extend(LayDown((Group(meld.tiles),)) for meld in arrangement.melds)
        return [*real, *okey_takes(ctx, plan), *wild]
