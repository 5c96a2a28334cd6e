"""``EXPERT``: ``HARD``'s turn and its rivals, weighed by determinized rollouts.

What it knows is what ``HARD`` knows: the seat's view and memory. What it does not know (the
other racks and the order of the stock) it samples: every *world* deals the tiles the seat has
not seen at random to the other racks (their sizes are public) and the stock, each tile a seat
took from a discard pile and has not laid down going to that seat's rack. Nothing else is read,
so the decision is the same for any two real states with the same view and memory (the shadow
state rule; the tests check it as for the other levels).

The candidates:

- draw phase: draw from the stock, or take the left discard (when the shadow allows it);
- play phase: ``HARD``'s whole turn, and the same put-down ending with each of the other
  distinct discards the rules allow without a +101 (the loosest first,
  ``ExpertBudget.discards`` of them); where ``HARD`` opens after a draw, also the turn that
  holds the opening back (a loose discard alone, ``ExpertBudget.held`` of them), so that it
  comes later with more of the hand (an opening that leaves seven tiles rarely finishes).

Each candidate is played in every world (the same worlds and the same rollout seeds for every
candidate: common random numbers), and the hand played out to its end by ``RolloutPlayer``s, the
random player with a greedy discard (it throws its loosest tile, a playable tile only when
nothing else is left, never an okey while it has another choice) that never takes a tile it
would have to give back for a +101. A candidate's worth is the seat's mean points over the
worlds (penalty points: lower is better); ``HARD``'s turn is kept unless a rival beats it by
more than its noise (the paired difference's standard error, and at least
``ExpertBudget.margin`` points). The margin is wide (8 points) because the rollouts flatter
rivals: their players go out worse than ``HARD`` does, so a turn that keeps a tile likely to go
down looks worse in them than it is, and the best of several noisy rivals is chosen for its
luck as much as its worth. On 300 deals four experts finish as many hands with 8 points as
with 2, and the expert's lead over ``HARD`` is the same within the noise; 8 is kept because the
rivals settle sooner, so decisions cost less (docs/bots.md). A turn that finishes the hand is
played at once.

The worlds settle what they can early: from ``ExpertBudget.settle_after`` worlds on, a rival
that could not beat ``HARD``'s turn by the margin even at ``ExpertBudget.settle_z`` standard
errors above its mean gain is no longer played, and once no rival is left the decision is
``HARD``'s turn. Most rivals are a throw that feeds someone or a take that wastes a draw, clear
within a few worlds; the search's time goes to the close calls (on recorded decisions of four
experts with a 2-point margin, 42-70% of the rollouts for 97.6-98.9% of the same decisions:
docs/bots.md).

Deterministic for a given seed: the worlds and the rollouts draw on ``random.Random(seed)``, and
``ExpertBudget.playouts`` bounds the work. ``ExpertBudget.seconds`` bounds it in time as well
(the bot service's budget per decision, counted from the start of ``decide``, ``HARD``'s turn
included): a world is weighed for every candidate still played or not at all, and one is not
begun when it would likely end past the budget (a world costs about what the worlds before it
cost each), so a budget cut earlier only means fewer worlds. Tests leave the time unbounded.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

from okey101.engine.actions import (
    Action,
    Discard,
    Draw,
    GiveBack,
    Open,
    OpenPairs,
    TakeDiscard,
)
from okey101.engine.bots.levels import BotLevel, Decision
from okey101.engine.bots.memory import BotMemory
from okey101.engine.errors import OkeyError
from okey101.engine.hand import SEATS, Event, EventKind, HandState, Phase, apply
from okey101.engine.playout import RandomPlayer, _Step
from okey101.engine.seat import Seat
from okey101.engine.solver.playability import playable_faces
from okey101.engine.tiles import Okey, Tile


@dataclass(frozen=True, slots=True)
class ExpertBudget:
    """How much an expert decision may search."""

    # Rollouts per decision, over all candidates (the deterministic bound).
    playouts: int = 96
    # Seconds per decision (None: no time bound, only ``playouts``).
    seconds: float | None = 0.8
    # Alternative discards weighed beside HARD's.
    discards: int = 4
    # Turns that hold HARD's opening back a turn, weighed beside it (each a loose discard).
    held: int = 2
    # Points a rival must win by, at least, to replace HARD's turn (wide: the rollouts flatter
    # rivals, module docstring).
    margin: float = 8.0
    # Worlds after which a rival that cannot plausibly win is no longer played: one whose mean
    # gain over HARD's turn plus ``settle_z`` standard errors is within ``margin``.
    settle_after: int = 6
    settle_z: float = 2.5
    # Turns a rollout may last before it is scored as it stands (a hand is far shorter).
    max_turns: int = 200


DEFAULT_BUDGET = ExpertBudget()


def looseness(tile: Tile, rack: Sequence[Tile], okey: Okey) -> float:
    """How little ``tile`` does for ``rack``: its points less what its neighbours promise (a
    twin, tiles one or two places away in its colour, its number in other colours). The okey is
    never loose. The definition, tile by tile: the bot asks ``rack_looseness`` for a whole rack
    at once, and the tests hold the two equal."""
    if okey.is_wild(tile):
        return -1000.0
    face = okey.plays_as(tile)
    colour, number = divmod(face, 13)
    ties = 0.0
    for other in rack:
        if other.id == tile.id:
            continue
        if okey.is_wild(other):
            ties += 1.0
            continue
        other_face = okey.plays_as(other)
        other_colour, other_number = divmod(other_face, 13)
        if other_colour == colour:
            gap = abs(other_number - number)
            if gap in (11, 12):  # 12-13-1 and 13-1 neighbours
                gap = 13 - gap
            if gap == 0:
                ties += 1.5
            elif gap == 1:
                ties += 2.0
            elif gap == 2:
                ties += 1.0
        elif other_number == number:
            ties += 2.0
    return (number + 1) - 4.0 * ties


def rack_looseness(rack: Sequence[Tile], okey: Okey) -> list[float]:
    """``looseness`` of every tile of ``rack``, in its order, counted in one pass: the rack's
    faces are tallied once and each tile reads its neighbours from the tally (a rollout's
    discards ask this of every rack it throws from; tile by tile it was half a rollout's
    time). The same numbers as ``looseness``: every tie is a multiple of a half, so the sums
    are exact whatever the order."""
    wilds = 0
    counts = [0] * 52  # non-wild tiles by the face they play as (colour * 13 + number)
    faces: list[int] = []
    okey_face = okey.face
    for tile in rack:
        # Okey.is_wild and Okey.plays_as, inlined: this runs for every discard of a rollout.
        tile_id = tile.id
        face = okey_face if tile_id >= 104 else tile_id >> 1
        if tile_id < 104 and face == okey_face:
            wilds += 1
            faces.append(-1)
        else:
            counts[face] += 1
            faces.append(face)
    # Tiles of each number, whatever their colour.
    numbers = [counts[n] + counts[13 + n] + counts[26 + n] + counts[39 + n] for n in range(13)]
    out: list[float] = []
    for face in faces:
        if face < 0:
            out.append(-1000.0)
            continue
        colour, number = divmod(face, 13)
        row = colour * 13
        ties = (
            wilds
            + 1.5 * (counts[face] - 1)
            + 2.0 * (counts[row + (number + 1) % 13] + counts[row + (number - 1) % 13])
            + 1.0 * (counts[row + (number + 2) % 13] + counts[row + (number - 2) % 13])
            + 2.0 * (numbers[number] - counts[face])
        )
        out.append((number + 1) - 4.0 * ties)
    return out


# A tile the table could take is thrown after every other but the okey (it costs +101).
PLAYABLE_LAST = 500.0


class RolloutPlayer(RandomPlayer):
    """The random player with a greedy discard and no +101 it can avoid: its loosest tile
    first (ties at random), a tile the table could take only after every other (the okey
    last), and no take from the left that it would have to give back (where the rules charge
    a +101 for that, Boombala's). The random player's blind takes and discards cost some two
    to six +101s a hand, which no player who means to win pays, and which drowned the
    rollouts' scores in noise."""

    def keeps_take(self, log: Sequence[tuple[Action, HandState, tuple[Event, ...]]]) -> bool:
        return not any(isinstance(action, GiveBack) for action, _state, _events in log)

    def discard_order(self, state: HandState, seat: int) -> list[Tile]:
        rack = state.seats[seat].rack
        okey = state.okey
        loose = rack_looseness(rack, okey)
        playable = playable_faces(state.table_melds(), state.rules)
        random_ = self.rng.random
        keyed = [
            (
                value - (PLAYABLE_LAST if okey.plays_as(tile) in playable else 0.0),
                random_(),
                tile,
            )
            for tile, value in zip(rack, loose, strict=True)
        ]
        keyed.sort(key=lambda entry: (entry[0], entry[1]), reverse=True)
        return [tile for _value, _tie, tile in keyed]


def sample_world(
    shadow: HandState, seat: int, memory: BotMemory, rng: random.Random
) -> HandState | None:
    """A real-looking state: the shadow with the tiles ``seat`` has not seen dealt at random
    to the other racks and the stock (a tile another seat took and has not laid down is in its
    rack). None if the shadow's hidden tiles are not all distinct (a malformed view)."""
    hidden: list[Tile] = list(shadow.stock)
    for other in range(SEATS):
        if other != seat:
            hidden.extend(shadow.seats[other].rack)
    ids = {tile.id for tile in hidden}
    if len(ids) != len(hidden):
        return None
    by_id = {tile.id: tile for tile in hidden}
    racks: dict[int, list[Tile]] = {other: [] for other in range(SEATS) if other != seat}
    # A tile taken more than once (thrown again, taken again) is with its last taker.
    holders = {tile_id: taker for taker, tile_id in memory.taken}
    for tile_id, taker in holders.items():
        tile = by_id.get(tile_id)
        if tile is None or taker == seat or taker not in racks:
            continue
        if len(racks[taker]) < len(shadow.seats[taker].rack):
            racks[taker].append(tile)
            del by_id[tile_id]
    rest = sorted(by_id.values(), key=lambda tile: tile.id)
    rng.shuffle(rest)
    position = 0
    seats: list[Seat] = list(shadow.seats)
    for other, rack in racks.items():
        need = len(shadow.seats[other].rack) - len(rack)
        rack.extend(rest[position : position + need])
        position += need
        seats[other] = _with_rack(shadow.seats[other], tuple(rack))
    stock = tuple(rest[position:])
    return _with_world(shadow, tuple(seats), stock)


def _with_rack(seat: Seat, rack: tuple[Tile, ...]) -> Seat:
    return Seat(
        rack=rack,
        discards=seat.discards,
        opened_as=seat.opened_as,
        opened_on_turn=seat.opened_on_turn,
        penalties=seat.penalties,
        turns_played=seat.turns_played,
        showed_indicator=seat.showed_indicator,
    )


def _with_world(state: HandState, seats: tuple[Seat, ...], stock: tuple[Tile, ...]) -> HandState:
    return HandState(
        rules=state.rules,
        okey=state.okey,
        dealer=state.dealer,
        turn=state.turn,
        phase=state.phase,
        seats=seats,
        table=state.table,
        stock=stock,
        takeable=state.takeable,
        turn_number=state.turn_number,
        this_turn=state.this_turn,
        result=state.result,
    )


def _applies(state: HandState, seat: int, actions: Sequence[Action]) -> HandState | None:
    """The state after ``actions``, or None if one is refused."""
    for action in actions:
        try:
            state, _events = apply(state, seat, action)
        except OkeyError:
            return None
        if state.ended:
            break
    return state


def turn_candidates(
    shadow: HandState, seat: int, hard: Decision, budget: ExpertBudget
) -> list[tuple[Action, ...]]:
    """HARD's actions first, then its rivals that the shadow allows."""
    first = tuple(hard.actions)
    out = [first]
    if shadow.phase is Phase.DRAW:
        rivals: tuple[tuple[Action, ...], ...] = ((Draw(),), (TakeDiscard(),))
        for rival in rivals:
            if rival != first and _applies(shadow, seat, rival) is not None:
                out.append(rival)
        return out
    if not first or not isinstance(first[-1], Discard):
        return out  # a give-back or a finish without a discard: nothing to weigh
    prefix = first[:-1]
    before = _applies(shadow, seat, prefix)
    if before is None or before.ended:
        return out
    thrown = first[-1].tile
    shown = set() if shadow.okey.is_wild(thrown) else {shadow.okey.plays_as(thrown)}
    for tile in _loosest_free_discards(before, seat, budget.discards, shown):
        out.append((*prefix, Discard(tile)))
    if _opens(prefix):
        out.extend(_held_openings(shadow, seat, budget))
    return out


def _held_openings(shadow: HandState, seat: int, budget: ExpertBudget) -> list[tuple[Action, ...]]:
    """The turn without HARD's opening: a discard of the loosest tiles that costs no +101
    (``ExpertBudget.held`` of them), so that the opening comes a turn later with more of the
    hand, or never. Not after a take: an unopened seat must open with the taken tile."""
    if shadow.this_turn.taken is not None:
        return []
    return [(Discard(tile),) for tile in _loosest_free_discards(shadow, seat, budget.held, set())]


def _loosest_free_discards(state: HandState, seat: int, count: int, shown: set[int]) -> list[Tile]:
    """Up to ``count`` tiles of the seat's rack that it may throw without a +101, loosest
    first: never an okey, one tile a face, none of the faces ``shown``."""
    rack = state.seats[seat].rack
    okey = state.okey
    loose = {tile.id: value for tile, value in zip(rack, rack_looseness(rack, okey), strict=True)}
    out: list[Tile] = []
    seen = set(shown)
    for tile in sorted(rack, key=lambda tile: (-loose[tile.id], tile.id)):
        if len(out) >= count:
            break
        face = okey.plays_as(tile)
        if okey.is_wild(tile) or face in seen:
            continue
        seen.add(face)
        try:
            _after, events = apply(state, seat, Discard(tile))
        except OkeyError:
            continue
        if any(event.kind is EventKind.PENALTY for event in events):
            continue  # never a +101 that HARD's turn avoids
        out.append(tile)
    return out


def _rollout(
    world: HandState,
    seat: int,
    actions: Sequence[Action],
    seeds: Sequence[int],
    budget: ExpertBudget,
) -> float:
    """The seat's points after ``actions`` in ``world`` and the hand played out."""
    players = [RolloutPlayer(random.Random(seed)) for seed in seeds]
    state = _applies(world, seat, actions)
    if state is None:
        return math.inf  # the world refused what the shadow allowed: never chosen
    if not state.ended and state.turn == seat and state.phase is not Phase.DRAW:
        # A draw-phase candidate: the rest of this turn by the rollout player.
        step = _Step(state, seat)
        taken = state.this_turn.taken
        after_take = taken is not None
        if not players[seat]._finish_turn(seat, step, after_take=after_take):
            return math.inf
        state = step.state
    turns = 0
    while not state.ended and turns < budget.max_turns:
        try:
            steps = players[state.turn].turn(state)
        except (AssertionError, OkeyError):
            break
        state = steps[-1][1] if steps else state
        turns += 1
    result = state.result
    if result is None:
        # Stopped: what the seat holds counts (an estimate of its points).
        me = state.seats[seat]
        return float(sum(min(state.okey.plays_as(tile) % 13 + 1, 13) for tile in me.rack))
    return float(result.scores[seat])


def expert_decision(
    shadow: HandState,
    seat: int,
    memory: BotMemory,
    hard: Decision,
    seed: int,
    budget: ExpertBudget = DEFAULT_BUDGET,
    *,
    started: float | None = None,
) -> Decision:
    """EXPERT's actions: HARD's turn, or a rival that the rollouts say is better.

    ``started``: when the decision began (``time.perf_counter``), from which its seconds count
    (default: now)."""
    if any(isinstance(action, GiveBack) for action in hard.actions):
        return Decision(hard.actions, "expert: " + hard.reason, BotLevel.EXPERT)
    finished = _applies(shadow, seat, hard.actions)
    if finished is not None and finished.ended:
        return Decision(hard.actions, "expert: finishes; " + hard.reason, BotLevel.EXPERT)
    candidates = turn_candidates(shadow, seat, hard, budget)
    if len(candidates) == 1:
        return Decision(hard.actions, "expert: " + hard.reason, BotLevel.EXPERT)
    rng = random.Random(seed)
    if started is None:
        started = time.perf_counter()
    worlds = max(budget.playouts // len(candidates), 2)
    scores: list[list[float]] = [[] for _ in candidates]
    # The candidates still played in each world: HARD's turn, and the rivals that may win.
    playing = list(range(len(candidates)))
    first = time.perf_counter()
    for world_number in range(worlds):
        if budget.seconds is not None:
            # Stop before a world that would likely end past the budget (a world costs about
            # what the worlds so far cost each; before the first, HARD's turn having taken
            # half the budget already says the machine is too slow for rollouts now).
            now = time.perf_counter()
            if world_number == 0:
                if now - started > budget.seconds / 2:
                    break
            elif now + (now - first) / world_number - started > budget.seconds:
                break
        world = sample_world(shadow, seat, memory, rng)
        if world is None:
            break
        seeds = [rng.randrange(2**32) for _ in range(SEATS)]
        for index in playing:
            scores[index].append(_rollout(world, seat, candidates[index], seeds, budget))
        if world_number + 1 >= budget.settle_after:
            playing = [0, *(i for i in playing[1:] if may_win(scores[i], scores[0], budget))]
            if len(playing) == 1:
                break  # no rival can win: HARD's turn
    if not scores[0]:
        return Decision(hard.actions, "expert: " + hard.reason, BotLevel.EXPERT)
    best_index, best_gain = 0, 0.0
    for index in playing[1:]:
        gain = paired_gain(scores[index], scores[0])
        if gain is None:
            continue  # refused in some world: keep to what always works
        mean, error = gain
        if mean > max(budget.margin, error) and mean > best_gain:
            best_index, best_gain = index, mean
    played = sum(len(row) for row in scores)
    if best_index == 0:
        return Decision(
            hard.actions,
            f"expert: kept hard's turn over {len(candidates) - 1} rivals ({played} rollouts); "
            + hard.reason,
            BotLevel.EXPERT,
        )
    chosen = candidates[best_index]
    # A rival without the opening HARD's turn makes holds it back (``_held_openings``).
    held = "holding the opening, " if _opens(candidates[0]) and not _opens(chosen) else ""
    return Decision(
        chosen,
        f"expert: {held}{_describe(chosen)} beats hard's turn by {best_gain:.1f} points "
        f"({played} rollouts)",
        BotLevel.EXPERT,
    )


def paired_gain(rival: Sequence[float], mine: Sequence[float]) -> tuple[float, float] | None:
    """What a rival wins over HARD's turn in the same worlds (points: ``mine`` less
    ``rival``), its mean and standard error; None if fewer than two worlds, or if the rival
    was refused in one (an infinite score)."""
    if len(rival) < 2 or len(rival) != len(mine):
        return None
    gains = [base - other for other, base in zip(rival, mine, strict=True)]
    if not all(math.isfinite(gain) for gain in gains):
        return None
    mean = sum(gains) / len(gains)
    spread = math.sqrt(sum((gain - mean) ** 2 for gain in gains) / (len(gains) - 1))
    return mean, spread / math.sqrt(len(gains))


def may_win(rival: Sequence[float], mine: Sequence[float], budget: ExpertBudget) -> bool:
    """Whether a rival, after the worlds so far, may still beat HARD's turn by the margin:
    its mean gain plus ``settle_z`` standard errors exceeds ``margin``."""
    gain = paired_gain(rival, mine)
    if gain is None:
        return False
    mean, error = gain
    return mean + budget.settle_z * error > budget.margin


def _opens(actions: Sequence[Action]) -> bool:
    """Whether ``actions`` open the seat (with runs and sets, or with pairs)."""
    return any(isinstance(action, (Open, OpenPairs)) for action in actions)


def _describe(actions: Sequence[Action]) -> str:
    last = actions[-1] if actions else None
    if isinstance(last, Discard):
        return f"discarding {last.tile}"
    if isinstance(last, TakeDiscard):
        return "taking the left discard"
    if isinstance(last, Draw):
        return "drawing"
    return "its turn"
