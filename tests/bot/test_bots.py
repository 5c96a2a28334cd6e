"""The bots (``okey101.engine.bots``): every decision applies to the real state, ends the turn as
the phase requires, reads nothing outside the seat's view, is deterministic for a seed; the
duplicate bench plays without an illegal action.

``EXPERT`` is held to the same rules on a sample of the positions (its decisions cost rollouts),
with a small budget of rollouts and no time bound (its count of rollouts is the deterministic
knob).

Positions come from seeded random playouts of the three presets (draw-phase and play-phase
positions, after a draw and after a take), and from games between the bots themselves.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random
import re
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okey101.bench import bots_bench
from okey101.engine.actions import (
    Action,
    Discard,
    Draw,
    GiveBack,
    Open,
    OpenPairs,
    TakeDiscard,
)
from okey101.engine.bots import entry_points
from okey101.engine.bots.entry_points import fallback_decision
from okey101.engine.bots.expert import (
    ExpertBudget,
    RolloutPlayer,
    looseness,
    may_win,
    paired_gain,
    rack_looseness,
    sample_world,
    turn_candidates,
)
from okey101.engine.bots.levels import BotLevel, Decision
from okey101.engine.bots.memory import BotMemory
from okey101.engine.bots.shadow import shadow_state
from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.errors import RuleViolation
from okey101.engine.hand import Event, EventKind, HandState, Phase, apply
from okey101.engine.playout import RandomPlayer
from okey101.engine.rules import RuleSet
from okey101.engine.solver.playability import playable_faces
from okey101.engine.tiles import ALL_TILES, Okey
from okey101.engine.view import SeatView, view

PRESETS = ("oyna", "boombala", "north_sultan")
LEVELS = tuple(BotLevel)
# The levels that play the bots' games the positions come from.
GAME_LEVELS = (BotLevel.RANDOM, BotLevel.EASY, BotLevel.NORMAL, BotLevel.HARD)
HANDS_PER_PRESET = 16
# The expert's budget in tests: a few rollouts, no time bound (deterministic).
TEST_BUDGET = ExpertBudget(playouts=12, seconds=None)
# The expert sees every EXPERT_STRIDE-th position of a test's sample.
EXPERT_STRIDE = 12


def decide(
    seen: SeatView,
    rules: RuleSet,
    level: BotLevel,
    seed: int,
    memory: BotMemory | None = None,
) -> Decision:
    return entry_points.decide(seen, rules, level, seed, memory, budget=TEST_BUDGET)


def _sample(level: BotLevel, found: tuple[Position, ...]) -> tuple[Position, ...]:
    return found[::EXPERT_STRIDE] if level is BotLevel.EXPERT else found


@dataclass(frozen=True)
class Position:
    preset: str
    state: HandState
    memory: BotMemory
    label: str


def _play_positions(preset: str, number: int, bots: bool) -> list[Position]:
    """Every position of one hand where a seat must decide, with that seat's memory.

    ``bots``: the seats are played by the bots themselves (levels by seat), else by the
    engine's random players, whose turns also give the positions within them (after the draw
    or take, after an opening or a lay-off, after a give-back) as a bot taking over would see.
    """
    rules = RuleSet.preset(preset)
    rng = random.Random(7919 * (PRESETS.index(preset) + 1) + number)
    state = deal(rules, number % 4, shuffled_deck(rng))
    memories = [BotMemory(seat) for seat in range(4)]
    players = [RandomPlayer(random.Random(rng.randrange(2**32))) for _ in range(4)]
    levels = [GAME_LEVELS[(number + seat) % len(GAME_LEVELS)] for seat in range(4)]
    out: list[Position] = []
    turns = 0
    while not state.ended and turns < 300:
        turns += 1
        seat = state.turn
        out.append(Position(preset, state, memories[seat], f"{preset}#{number} turn {turns}"))
        if bots:
            decision = decide(view(state, seat), rules, levels[seat], turns, memories[seat])
            steps: list[tuple[Action, HandState, tuple[Event, ...]]] = []
            current = state
            for action in decision.actions:
                current, events = apply(current, seat, action)
                steps.append((action, current, events))
        else:
            steps = players[seat].turn(state)
        for index, (_action, after, events) in enumerate(steps):
            memories = [memory.observe(events) for memory in memories]
            mid_turn = index < len(steps) - 1 and not after.ended and after.turn == seat
            if not bots and mid_turn:
                out.append(Position(preset, after, memories[seat], f"{preset}#{number} step"))
        state = steps[-1][1]
    return out


@functools.cache
def positions() -> tuple[Position, ...]:
    found: list[Position] = []
    for preset in PRESETS:
        for number in range(HANDS_PER_PRESET):
            found.extend(_play_positions(preset, number, bots=number % 2 == 1))
    return tuple(found)


def _apply_all(state: HandState, seat: int, actions: tuple[Action, ...]) -> HandState:
    for action in actions:
        state, _events = apply(state, seat, action)  # raises on an illegal action
    return state


def _check_shape(state: HandState, actions: tuple[Action, ...], after: HandState) -> None:
    """Draw phase: one draw or take. Play phases: the rest of the turn, one discard last (or the
    single give-back)."""
    assert actions
    if state.phase is Phase.DRAW:
        assert len(actions) == 1
        assert isinstance(actions[0], (Draw, TakeDiscard))
        return
    discards = [a for a in actions if isinstance(a, Discard)]
    if isinstance(actions[-1], GiveBack):
        assert not discards
        assert after.phase is Phase.DRAW and after.turn == state.turn
        return
    assert len(discards) == 1
    assert isinstance(actions[-1], Discard)
    assert after.ended or after.turn != state.turn


def test_positions_cover_both_phases_and_every_preset() -> None:
    found = positions()
    assert len(found) >= 2000
    for preset in PRESETS:
        mine = [p for p in found if p.preset == preset]
        assert any(p.state.phase is Phase.DRAW for p in mine)
        assert any(p.state.phase is Phase.PLAY for p in mine)
        assert any(p.state.phase is Phase.FIRST for p in mine)
        assert any(p.state.this_turn.taken is not None for p in mine)
        assert any(any(s.opened_as for s in p.state.seats) for p in mine)
        assert any(p.state.this_turn.opened for p in mine)


@pytest.mark.parametrize("level", LEVELS)
def test_every_decision_is_legal_in_the_real_state(level: BotLevel) -> None:
    for index, position in enumerate(_sample(level, positions())):
        state = position.state
        seat = state.turn
        rules = state.rules
        decision = decide(view(state, seat), rules, level, index, position.memory)
        try:
            after = _apply_all(state, seat, decision.actions)
        except RuleViolation as error:  # pragma: no cover - the failure message
            raise AssertionError(f"{position.label} {level}: {decision} -> {error.code}") from None
        _check_shape(state, decision.actions, after)
        assert decision.reason
        assert decision.level is level


@pytest.mark.parametrize("level", [BotLevel.EASY, BotLevel.NORMAL, BotLevel.HARD, BotLevel.EXPERT])
def test_no_plus_101_when_a_free_discard_exists(level: BotLevel) -> None:
    """Never the okey or a playable tile thrown without reason (the finish is exempt)."""
    for index, position in enumerate(_sample(level, positions()[::3])):
        state = position.state
        if state.phase is Phase.DRAW:
            continue
        seat = state.turn
        decision = decide(view(state, seat), state.rules, level, index, position.memory)
        before = _apply_all(state, seat, decision.actions[:-1])
        last = decision.actions[-1]
        if not isinstance(last, Discard):
            continue
        _after, events = apply(before, seat, last)
        if not any(event.kind is EventKind.PENALTY for event in events):
            continue
        for tile in before.seats[seat].rack:
            try:
                _state, others = apply(before, seat, Discard(tile))
            except RuleViolation:
                continue
            assert any(e.kind is EventKind.PENALTY for e in others), (
                f"{position.label} {level}: threw {last.tile} for +101 though {tile} was free"
            )


def _same_view_other_hidden(state: HandState, seed: int) -> HandState:
    """The same position with the other racks and the stock dealt differently from the tiles
    the seat cannot see (same sizes): the seat's view is unchanged."""
    seat = state.turn
    hidden = [tile for i, s in enumerate(state.seats) if i != seat for tile in s.rack]
    hidden.extend(state.stock)
    random.Random(seed).shuffle(hidden)
    seats = list(state.seats)
    position = 0
    for i, s in enumerate(state.seats):
        if i == seat:
            continue
        size = len(s.rack)
        seats[i] = dataclasses.replace(s, rack=tuple(hidden[position : position + size]))
        position += size
    return dataclasses.replace(state, seats=tuple(seats), stock=tuple(hidden[position:]))


@pytest.mark.parametrize("level", LEVELS)
def test_decisions_need_nothing_outside_the_view(level: BotLevel) -> None:
    for index, position in enumerate(_sample(level, positions()[::4])):
        state = position.state
        seat = state.turn
        other = _same_view_other_hidden(state, index)
        assert other != state or not state.stock
        seen = view(state, seat)
        assert view(other, seat) == seen
        first = decide(seen, state.rules, level, index, position.memory)
        second = decide(view(other, seat), other.rules, level, index, position.memory)
        assert first == second
        _apply_all(state, seat, first.actions)
        _apply_all(other, seat, second.actions)


@pytest.mark.parametrize("level", LEVELS)
def test_deterministic_for_a_seed(level: BotLevel) -> None:
    for index, position in enumerate(_sample(level, positions()[::7])):
        state = position.state
        seen = view(state, state.turn)
        once = decide(seen, state.rules, level, 1000 + index, position.memory)
        again = decide(seen, state.rules, level, 1000 + index, position.memory)
        assert once == again


def test_fallback_is_the_random_level() -> None:
    for index, position in enumerate(positions()[::25]):
        state = position.state
        seen = view(state, state.turn)
        assert fallback_decision(seen, state.rules, index) == decide(
            seen, state.rules, BotLevel.RANDOM, index
        )


def test_shadow_state_holds_no_hidden_tile() -> None:
    for position in positions()[::10]:
        state = position.state
        seat = state.turn
        shadow = shadow_state(view(state, seat), state.rules, position.memory)
        assert shadow.seats[seat] == state.seats[seat] or (
            shadow.seats[seat].rack == state.seats[seat].rack
        )
        assert len(shadow.stock) == len(state.stock)
        for i, s in enumerate(shadow.seats):
            assert len(s.rack) == len(state.seats[i].rack)
        # The placeholders are the unseen tiles in id order: the same for any hidden deal.
        other = _same_view_other_hidden(state, 3)
        assert shadow_state(view(other, seat), other.rules, position.memory) == shadow


def test_a_view_that_is_not_the_seats_turn_is_refused() -> None:
    state = positions()[0].state
    waiting = (state.turn + 1) % 4
    with pytest.raises(RuleViolation):
        decide(view(state, waiting), state.rules, BotLevel.NORMAL, 0)


def test_memory_tracks_thrown_and_taken_tiles() -> None:
    position = next(p for p in positions() if p.state.this_turn.taken is not None)
    state = position.state
    taken = state.this_turn.taken
    assert taken is not None
    memory = position.memory
    assert (state.turn, taken.id) in memory.taken
    assert any(tile_id == taken.id for _seat, tile_id in memory.thrown)
    # From views alone: the discard that left its pile was taken by the next seat.
    before = BotMemory(state.turn, thrown=((((state.turn - 1) % 4), taken.id),))
    after = before.observe_view(view(state, state.turn))
    assert (state.turn, taken.id) in after.taken


def test_duplicate_bench_plays_without_illegal_actions() -> None:
    figures = bots_bench.run(20, BotLevel.HARD, BotLevel.NORMAL, 5, workers=1)
    assert figures["illegal_actions"] == 0
    assert figures["stuck_hands"] == 0
    assert figures["deals"] == 20
    ci95 = figures["ci95"]
    difference = figures["difference"]
    assert isinstance(ci95, list)
    assert isinstance(difference, float)
    assert ci95[0] <= difference <= ci95[1]
    for preset in ("boombala", "north_sultan"):
        for candidate, reference in (
            (BotLevel.HARD, BotLevel.NORMAL),
            (BotLevel.EASY, BotLevel.RANDOM),
        ):
            figures = bots_bench.run(3, candidate, reference, 5, preset=preset, workers=1)
            assert figures["illegal_actions"] == 0
            assert figures["stuck_hands"] == 0


@settings(max_examples=300, deadline=None)
@given(
    indicator=st.integers(0, 103),
    rack_ids=st.lists(st.integers(0, 105), min_size=0, max_size=22, unique=True),
)
def test_a_racks_looseness_in_one_pass_is_each_tiles_own(
    indicator: int, rack_ids: list[int]
) -> None:
    """``rack_looseness`` (the rollouts' discard order) gives every tile exactly what
    ``looseness`` gives it alone: twins, neighbours across 13-1, the same number in other
    colours, okeys and false jokers included."""
    okey = Okey(ALL_TILES[indicator])
    rack = [ALL_TILES[tile_id] for tile_id in rack_ids if tile_id != indicator]
    assert rack_looseness(rack, okey) == [looseness(tile, rack, okey) for tile in rack]


def test_expert_worlds_hold_only_unseen_tiles_and_keep_taken_ones() -> None:
    """A sampled world keeps everything the seat sees, deals only the tiles it has not seen
    (each once, the racks' sizes kept), and a tile another seat took and holds stays there."""
    checked_taken = 0
    for index, position in enumerate(positions()[::9]):
        state = position.state
        seat = state.turn
        shadow = shadow_state(view(state, seat), state.rules, position.memory)
        world = sample_world(shadow, seat, position.memory, random.Random(index))
        assert world is not None
        assert view(world, seat) == view(state, seat)
        hidden = sorted(
            tile.id for i, s in enumerate(state.seats) if i != seat for tile in s.rack
        ) + [tile.id for tile in state.stock]
        dealt = [tile.id for i, s in enumerate(world.seats) if i != seat for tile in s.rack]
        dealt += [tile.id for tile in world.stock]
        assert sorted(dealt) == sorted(hidden)
        for taker, tile_id in position.memory.taken:
            if taker != seat and any(t.id == tile_id for t in state.seats[taker].rack):
                assert any(t.id == tile_id for t in world.seats[taker].rack)
                checked_taken += 1
    assert checked_taken > 0


def test_expert_weighs_rivals_and_sometimes_overrules_hard() -> None:
    """The expert plays HARD's turn unless its rollouts find a better one: over many positions
    it keeps most of HARD's turns and changes some, and its reasons say which."""
    same = changed = 0
    for index, position in enumerate(positions()[::15]):
        state = position.state
        seen = view(state, state.turn)
        budget = ExpertBudget(playouts=24, seconds=None, margin=1.0)
        hard = entry_points.decide(seen, state.rules, BotLevel.HARD, index, position.memory)
        expert = entry_points.decide(
            seen, state.rules, BotLevel.EXPERT, index, position.memory, budget=budget
        )
        assert expert.reason.startswith("expert:")
        if expert.actions == hard.actions:
            same += 1
        else:
            changed += 1
            assert "beats hard's turn" in expert.reason
            _apply_all(state, state.turn, expert.actions)
    assert same > changed > 0


def test_paired_gain_and_may_win() -> None:
    """A rival's gain over HARD's turn is HARD's points less the rival's, world by world: its
    mean and standard error; a rival refused in a world (an infinite score), or weighed in
    fewer than two worlds, has none and cannot win."""
    budget = ExpertBudget(margin=2.0, settle_z=2.5)
    mean, error = paired_gain([10.0, 12.0, 14.0], [20.0, 20.0, 20.0]) or (0.0, 0.0)
    assert mean == 8.0 and math.isclose(error, 2.0 / math.sqrt(3.0))
    assert may_win([10.0, 12.0, 14.0], [20.0, 20.0, 20.0], budget)
    # Ten points worse in every world: no noise to hope on.
    assert not may_win([30.0, 30.0, 30.0], [20.0, 20.0, 20.0], budget)
    # One point better on average, but noisy enough that it may still win by two.
    assert may_win([19.0, 29.0, 9.0, 19.0], [20.0, 20.0, 20.0, 20.0], budget)
    # One point better every time: never by the margin.
    assert not may_win([19.0, 19.0, 19.0], [20.0, 20.0, 20.0], budget)
    assert paired_gain([10.0, math.inf], [20.0, 20.0]) is None
    assert paired_gain([10.0], [20.0]) is None
    assert not may_win([10.0, math.inf, 10.0], [20.0, 20.0, 20.0], budget)


def _rollouts(reason: str) -> int | None:
    """The rollouts an expert's reason says it played (None: it played none)."""
    found = re.search(r"\((\d+) rollouts\)", reason)
    return int(found.group(1)) if found else None


def test_the_expert_stops_playing_rivals_that_cannot_win() -> None:
    """From ``settle_after`` worlds on, the expert plays only the rivals that may still beat
    HARD's turn by the margin: over many positions it plays fewer rollouts than a search that
    never settles, never more, and the same turn in nearly every position (a rival it stopped
    playing could not, by then, plausibly have won)."""
    never = ExpertBudget(playouts=48, seconds=None, settle_after=10**6)
    settling = dataclasses.replace(never, settle_after=4)
    weighed = fewer = same = 0
    for index, position in enumerate(positions()[::11]):
        state = position.state
        seat = state.turn
        seen = view(state, seat)
        full = entry_points.decide(
            seen, state.rules, BotLevel.EXPERT, index, position.memory, budget=never
        )
        settled = entry_points.decide(
            seen, state.rules, BotLevel.EXPERT, index, position.memory, budget=settling
        )
        _apply_all(state, seat, settled.actions)
        played_full, played = _rollouts(full.reason), _rollouts(settled.reason)
        if played_full is None:
            assert played is None and settled.actions == full.actions
            continue
        assert played is not None and played <= played_full
        weighed += 1
        fewer += played < played_full
        same += settled.actions == full.actions
    assert weighed > 20
    assert fewer > weighed / 4
    assert same >= 0.8 * weighed


def test_expert_time_budget_still_answers_a_legal_turn() -> None:
    """With almost no time, the expert weighs one world and still answers a legal turn."""
    budget = ExpertBudget(playouts=400, seconds=1e-6)
    for index, position in enumerate(positions()[::97]):
        state = position.state
        seat = state.turn
        decision = entry_points.decide(
            view(state, seat), state.rules, BotLevel.EXPERT, index, position.memory, budget=budget
        )
        after = _apply_all(state, seat, decision.actions)
        _check_shape(state, decision.actions, after)


def test_rollout_player_throws_its_loosest_tile() -> None:
    """The rollouts' greedy discard: a lone high tile before a tile in a run or a pair."""
    position = next(
        p for p in positions() if p.state.phase is Phase.PLAY and not p.state.this_turn.taken
    )
    state = position.state
    seat = state.turn
    order = RolloutPlayer(random.Random(0)).discard_order(state, seat)
    assert sorted(t.id for t in order) == sorted(t.id for t in state.seats[seat].rack)
    okey = state.okey
    assert not okey.is_wild(order[0]) or all(okey.is_wild(t) for t in order)


def test_rollout_players_pay_no_plus_101_they_could_avoid() -> None:
    """The expert's rollout players (Boombala, where a take that cannot go down is given back
    for +101): they never give a tile back, and throw a tile the table could take only when
    every other tile of the rack is one too or an okey. (The random player's blind takes and
    discards cost several +101s a hand there, which drowned the rollouts' scores.)"""
    rules = RuleSet.preset("boombala")
    playable_throws = 0
    for number in range(12):
        state = deal(rules, number % 4, shuffled_deck(random.Random(number)))
        players = [RolloutPlayer(random.Random(number * 4 + seat)) for seat in range(4)]
        turns = 0
        while not state.ended and turns < 300:
            turns += 1
            seat = state.turn
            steps = players[seat].turn(state)
            before = state
            for action, after, events in steps:
                assert not isinstance(action, GiveBack)
                kinds = {event.kind for event in events}
                if isinstance(action, Discard) and EventKind.PENALTY in kinds:
                    playable_throws += 1
                    okey = before.okey
                    faces = playable_faces(before.table_melds(), rules)
                    assert all(
                        okey.is_wild(tile) or okey.plays_as(tile) in faces
                        for tile in before.seats[seat].rack
                    )
                before = after
            state = steps[-1][1]
        assert state.ended
    assert playable_throws < 12


def test_the_expert_weighs_holding_an_opening_back() -> None:
    """Where HARD opens after a draw, the expert's rivals include the same turn without the
    opening: a single discard, with no +101, the seat still closed after it. After a take
    there is no such rival (an unopened seat must open with the taken tile)."""
    held = after_take = 0
    for index, position in enumerate(positions()[::2]):
        state = position.state
        seat = state.turn
        if state.phase is Phase.DRAW or state.seats[seat].opened_as is not None:
            continue
        seen = view(state, seat)
        shadow = shadow_state(seen, state.rules, position.memory)
        hard = entry_points.decide(seen, state.rules, BotLevel.HARD, index, position.memory)
        if not any(isinstance(action, (Open, OpenPairs)) for action in hard.actions):
            continue
        rivals = turn_candidates(shadow, seat, hard, TEST_BUDGET)
        holding = [c for c in rivals[1:] if not any(isinstance(a, (Open, OpenPairs)) for a in c)]
        if state.this_turn.taken is not None:
            assert holding == []
            after_take += 1
            continue
        assert 0 < len(holding) <= TEST_BUDGET.held
        for rival in holding:
            assert len(rival) == 1 and isinstance(rival[0], Discard)
            after, events = apply(state, seat, rival[0])
            assert not any(event.kind is EventKind.PENALTY for event in events)
            assert after.seats[seat].opened_as is None
        held += 1
    assert held > 0 and after_take > 0
