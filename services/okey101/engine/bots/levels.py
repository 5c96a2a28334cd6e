"""The levels, the knobs of the stronger ones, and the decision a level answers."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from okey101.engine.actions import Action


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
    # Opened: points a loose tile's chance of going down is worth keeping, per unit of chance
    # (a tile that goes down brings the finish nearer, whatever its number).
    finish_keep: float = 15.0
    # HARD, unopened: with fewer draws than this left (``Context.horizon``), open even with a
    # +101 discard when that costs less than never opening.
    stock_low_horizon: float = 1.0


TUNING = Tuning()


class BotLevel(enum.StrEnum):
    """How strong a bot plays."""

    RANDOM = "random"
    EASY = "easy"
    NORMAL = "normal"
    HARD = "hard"
    # HARD's turn and its rivals weighed by rollouts over sampled hidden tiles (``expert``).
    EXPERT = "expert"


RANK = {
    BotLevel.RANDOM: 0,
    BotLevel.EASY: 1,
    BotLevel.NORMAL: 2,
    BotLevel.HARD: 3,
    BotLevel.EXPERT: 4,
}


@dataclass(frozen=True, slots=True)
class Decision:
    """The actions of the current phase, in order, and why (for logs and watchers)."""

    actions: tuple[Action, ...]
    reason: str
    level: BotLevel
