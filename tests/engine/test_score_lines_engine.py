"""Score lines: each seat's points itemized with their reasons (``engine.result.ScoreLine``).

Over random playouts of every preset, and over the rule texts' worked examples: a seat's lines
add up to its points exactly, and each line says what the final state shows (the finish, how the
seat opened, the tiles and okeys left, each +101 and what it was for, every doubling and why).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.hand import HandState, Phase
from okey101.engine.playout import RandomPlayer, play_out
from okey101.engine.result import Doubling, EndReason, Finish, HandResult, ScoreLine
from okey101.engine.result import ScoreLineKind as K
from okey101.engine.rules import OkeyInLosersHand, RuleSet
from okey101.engine.scoring import score_hand
from okey101.engine.seat import OpenedAs, PenaltyReason, Seat
from okey101.engine.tiles import Okey, Tile, face_number, tiles_from_names

CONFIGS: dict[str, RuleSet] = {
    "oyna": RuleSet.preset("oyna"),
    "boombala": RuleSet.preset("boombala"),
    "north_sultan": RuleSet.preset("north_sultan"),
    "boombala_partners": RuleSet.preset("boombala").with_overrides({"partners": True}),
}
HANDS = 40


def _finish_reasons(rules: RuleSet, finish: Finish) -> list[Doubling]:
    reasons = []
    if finish.with_okey and rules.double_with_okey:
        reasons.append(Doubling.OKEY_FINISH)
    if finish.after_pairs and rules.double_after_pairs_opening:
        reasons.append(Doubling.PAIRS_FINISH)
    if finish.one_go:
        reasons.append(Doubling.ONE_GO)
    return reasons


def check_lines(state: HandState, result: HandResult) -> None:
    """Every seat's lines add up to its points and say what ``state`` shows."""
    rules = state.rules
    okey = state.okey
    if result.reason is EndReason.VOID:
        assert result.lines == ()
        return
    assert len(result.lines) == 4
    finish = result.finish
    reasons = _finish_reasons(rules, finish) if finish is not None else []
    finish_doubles = (finish.multiplier.bit_length() - 1) if finish is not None else 0
    for index, (seat, lines) in enumerate(zip(state.seats, result.lines, strict=True)):
        assert sum(line.points for line in lines) == result.scores[index], (index, lines)
        _check_doublings(lines)
        penalties = [line for line in lines if line.kind is K.PENALTY]
        assert [line.penalty for line in penalties] == list(seat.penalties)
        assert all(line.points == rules.penalty_points for line in penalties)
        assert sum(line.points for line in penalties) == result.penalties[index]
        # +101s and the shown indicator come last, after the hand's own points.
        tail = len(penalties) + (1 if seat.showed_indicator and rules.indicator_show_points else 0)
        own, rest = list(lines[: len(lines) - tail]), lines[len(lines) - tail :]
        assert all(line.kind in (K.PENALTY, K.INDICATOR_SHOWN) for line in rest)
        if seat.showed_indicator and rules.indicator_show_points:
            assert rest[0] == ScoreLine(K.INDICATOR_SHOWN, rules.indicator_show_points)
        doubled = [line for line in own if line.kind is K.DOUBLED]
        finish_lines = [
            line for line in doubled if Doubling.OPENED_WITH_PAIRS not in line.doubled_for
        ]
        if finish is not None and index == finish.winner:
            assert own[0] == ScoreLine(K.FINISHED, rules.finish_points)
            assert len(finish_lines) == finish_doubles
            assert [r for line in finish_lines for r in line.doubled_for] == reasons
            assert [line.kind for line in own[1:]] == [K.DOUBLED] * finish_doubles
            continue
        if seat.opened_as is None:
            assert own[0] == ScoreLine(K.NEVER_OPENED, rules.never_opened_points)
            capped = [line for line in own if line.kind is K.CAPPED]
            if capped:
                assert rules.never_opened_cap
                assert sum(line.points for line in own) == rules.never_opened_cap
            assert [r for line in finish_lines for r in line.doubled_for] == reasons
            continue
        counted = [tile for tile in seat.rack if not okey.is_wild(tile)]
        okeys = len(seat.rack) - len(counted)
        assert own[0] == ScoreLine(
            K.RACK_SUM,
            sum(face_number(okey.plays_as(tile)) for tile in counted),
            count=len(counted),
        )
        okey_lines = [line for line in own if line.kind is K.OKEY_IN_HAND]
        if okeys:
            assert okey_lines == [
                ScoreLine(K.OKEY_IN_HAND, okeys * rules.okey_in_hand_points, count=okeys)
            ]
            position = own.index(okey_lines[0])
            if rules.okey_in_losers_hand is OkeyInLosersHand.IN_HAND_SUM:
                assert position == 1  # doubled with the hand
            else:
                assert position == len(own) - 1  # never doubled
        else:
            assert okey_lines == []
        pairs = [line for line in doubled if Doubling.OPENED_WITH_PAIRS in line.doubled_for]
        base = own[0].points + (
            okey_lines[0].points if okey_lines and own[1] is okey_lines[0] else 0
        )
        assert len(pairs) == (1 if seat.opened_as is OpenedAs.PAIRS and base else 0)
        assert [r for line in finish_lines for r in line.doubled_for] == (reasons if base else [])


def _check_doublings(lines: Sequence[ScoreLine]) -> None:
    """Each DOUBLED line adds what was counted before it."""
    for position, line in enumerate(lines):
        if line.kind is K.DOUBLED:
            assert line.points == sum(before.points for before in lines[:position])
            assert line.doubled_for


@pytest.mark.parametrize("config", CONFIGS)
def test_lines_add_up_over_random_hands(config: str) -> None:
    rules = CONFIGS[config]
    seen: set[K] = set()
    for number in range(HANDS):
        base = 7919 * (list(CONFIGS).index(config) + 1) + 17 * number
        state = deal(rules, number % 4, shuffled_deck(random.Random(base)))
        players = [RandomPlayer(random.Random(base * 4 + seat)) for seat in range(4)]
        final, _stats = play_out(state, players, max_turns=200)
        assert final.result is not None
        check_lines(final, final.result)
        seen.update(line.kind for seat in final.result.lines for line in seat)
    # The sample is wide enough to reach the common lines.
    assert {K.RACK_SUM, K.NEVER_OPENED, K.PENALTY} <= seen


# --- The rule texts' worked examples -----------------------------------------------------------


def _state(
    rules: RuleSet,
    indicator: str,
    racks: Sequence[Sequence[str]],
    opened: Sequence[OpenedAs | None],
    penalties: Sequence[Sequence[PenaltyReason]] = ((), (), (), ()),
) -> HandState:
    (indicator_tile,) = tiles_from_names([indicator])
    used: list[Tile] = [indicator_tile]
    seats = []
    for names, opened_as, charged in zip(racks, opened, penalties, strict=True):
        rack = tiles_from_names(list(names), used=used)
        used.extend(rack)
        seats.append(Seat(rack=rack, opened_as=opened_as, penalties=tuple(charged)))
    return HandState(
        rules=rules,
        okey=Okey(indicator_tile),
        dealer=3,
        turn=0,
        phase=Phase.ENDED,
        seats=tuple(seats),
    )


OYNA = CONFIGS["oyna"]
BOOMBALA = CONFIGS["boombala"]
NORTH_SULTAN = CONFIGS["north_sultan"]


def test_oyna_okey_finish_itemized() -> None:
    """oyna's worked hand, finished with the okey, East holding an okey and a +101."""
    state = _state(
        OYNA,
        "Y5",
        [[], ["R3", "K4", "Y6"], ["B2", "B5"], ["R12"]],
        [OpenedAs.RUNS, OpenedAs.RUNS, OpenedAs.PAIRS, None],
        [(), (PenaltyReason.PLAYABLE_DISCARDED,), (), ()],
    )
    result = score_hand(state, EndReason.FINISHED, Finish(0, True, False, False, 2))
    check_lines(state, result)
    okey = (Doubling.OKEY_FINISH,)
    assert result.lines[0] == (
        ScoreLine(K.FINISHED, -101),
        ScoreLine(K.DOUBLED, -101, doubled_for=okey),
    )
    assert result.lines[1] == (
        ScoreLine(K.RACK_SUM, 7, count=2),
        ScoreLine(K.DOUBLED, 7, doubled_for=okey),
        ScoreLine(K.OKEY_IN_HAND, 101, count=1),
        ScoreLine(K.PENALTY, 101, penalty=PenaltyReason.PLAYABLE_DISCARDED),
    )
    assert result.lines[2] == (
        ScoreLine(K.RACK_SUM, 7, count=2),
        ScoreLine(K.DOUBLED, 7, doubled_for=(Doubling.OPENED_WITH_PAIRS,)),
        ScoreLine(K.DOUBLED, 14, doubled_for=okey),
    )
    assert result.lines[3] == (
        ScoreLine(K.NEVER_OPENED, 202),
        ScoreLine(K.DOUBLED, 202, doubled_for=okey),
    )
    assert result.scores == (-202, 115 + 101, 28, 404)


def test_boombala_doubles_once_naming_every_reason() -> None:
    """Boombala: the okey thrown last in a one-go finish doubles once (-202, never 404)."""
    state = _state(
        BOOMBALA,
        "K7",
        [[], ["Y3", "B9", "K12", "K8"], ["R5"], ["Y1", "Y2", "B7"]],
        [OpenedAs.RUNS, OpenedAs.RUNS, OpenedAs.PAIRS, None],
    )
    result = score_hand(state, EndReason.FINISHED, Finish(0, True, False, True, 2))
    check_lines(state, result)
    both = (Doubling.OKEY_FINISH, Doubling.ONE_GO)
    assert result.lines[0] == (
        ScoreLine(K.FINISHED, -101),
        ScoreLine(K.DOUBLED, -101, doubled_for=both),
    )
    # The okey (K8) counts 101 inside the hand sum and is doubled with it.
    assert result.lines[1] == (
        ScoreLine(K.RACK_SUM, 24, count=3),
        ScoreLine(K.OKEY_IN_HAND, 101, count=1),
        ScoreLine(K.DOUBLED, 125, doubled_for=both),
    )
    assert result.lines[3] == (
        ScoreLine(K.NEVER_OPENED, 202),
        ScoreLine(K.DOUBLED, 202, doubled_for=both),
    )
    assert result.scores == (-202, 250, 20, 404)


def test_north_sultan_cap_is_a_line() -> None:
    """North Sultan: okey finish after a pairs opening in one go (x8): never-opened 808."""
    state = _state(
        NORTH_SULTAN,
        "K7",
        [[], ["Y3"], ["R5"], ["Y1", "Y2", "B7"]],
        [OpenedAs.PAIRS, OpenedAs.RUNS, OpenedAs.RUNS, None],
    )
    result = score_hand(state, EndReason.FINISHED, Finish(0, True, True, True, 8))
    check_lines(state, result)
    assert [line.doubled_for for line in result.lines[0][1:]] == [
        (Doubling.OKEY_FINISH,),
        (Doubling.PAIRS_FINISH,),
        (Doubling.ONE_GO,),
    ]
    assert result.lines[3][-1] == ScoreLine(K.CAPPED, 808 - 202 * 8)
    assert result.scores == (-808, 24, 40, 808)


def test_stock_out_and_void_lines() -> None:
    state = _state(
        OYNA,
        "Y5",
        [["R3"], ["K4"], ["B2"], ["R12"]],
        [OpenedAs.RUNS, OpenedAs.PAIRS, None, None],
        [(PenaltyReason.OKEY_DISCARDED,), (), (), ()],
    )
    stock_out = score_hand(state, EndReason.STOCK_OUT, None)
    check_lines(state, stock_out)
    assert stock_out.lines[0] == (
        ScoreLine(K.RACK_SUM, 3, count=1),
        ScoreLine(K.PENALTY, 101, penalty=PenaltyReason.OKEY_DISCARDED),
    )
    assert not any(line.kind is K.DOUBLED for line in stock_out.lines[2])
    void = score_hand(state, EndReason.VOID, None)
    assert void.lines == () and void.scores == (0, 0, 0, 0)
