"""Scoring properties over hand states built directly, and the rule texts' worked examples.

The README: "Discarding the okey, or a playable tile, costs +101 ... These +101s are never
doubled"; "others after a doubled finish: x2 (x4 ...); never-opened 404 / 808" (North Sultan
capped at 808); "okey left in a loser's hand: oyna +101 each, never doubled; Boombala and North
Sultan: counts 101 inside the hand sum (so it is doubled with it)"; a void hand wipes the +101s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from okey101.engine.hand import HandState, Phase
from okey101.engine.result import EndReason, Finish, HandResult
from okey101.engine.rules import RuleSet
from okey101.engine.scoring import score_hand
from okey101.engine.seat import OpenedAs, PenaltyReason, Seat
from okey101.engine.tiles import ALL_TILES, Okey, Tile, tiles_from_names

OYNA = RuleSet.preset("oyna")
BOOMBALA = RuleSet.preset("boombala")
NORTH_SULTAN = RuleSet.preset("north_sultan")
PRESETS = (OYNA, BOOMBALA, NORTH_SULTAN)
MULTIPLIERS = (1, 2, 4, 8)
ANY_PRESET = st.sampled_from(PRESETS)

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)


@dataclasses.dataclass(frozen=True)
class Case:
    state: HandState
    finish: Finish
    # The okeys not used in any rack (to add to one).
    spare_okeys: tuple[Tile, ...]


def _okey_tiles(okey: Okey) -> tuple[Tile, Tile]:
    return ALL_TILES[okey.face * 2], ALL_TILES[okey.face * 2 + 1]


@st.composite
def cases(
    draw: st.DrawFn,
    rules: st.SearchStrategy[RuleSet] = ANY_PRESET,
    *,
    okeys_in_racks: bool = True,
) -> Case:
    ruleset = draw(rules)
    indicator = draw(st.integers(0, 103))
    okey = Okey(ALL_TILES[indicator])
    okey_ids = {tile.id for tile in _okey_tiles(okey)}
    pool = [
        tile
        for tile in ALL_TILES
        if tile.id != indicator and (okeys_in_racks or tile.id not in okey_ids)
    ]
    order = draw(st.permutations(pool))
    winner = draw(st.integers(0, 3))
    seats = []
    position = 0
    for index in range(4):
        size = 0 if index == winner else draw(st.integers(0, 14))
        rack = tuple(order[position : position + size])
        position += size
        seats.append(
            Seat(
                rack=rack,
                opened_as=draw(st.sampled_from([None, OpenedAs.RUNS, OpenedAs.PAIRS])),
                penalties=tuple(draw(st.lists(st.sampled_from(list(PenaltyReason)), max_size=4))),
                showed_indicator=draw(st.booleans()),
            )
        )
    used = {tile.id for seat in seats for tile in seat.rack}
    state = HandState(
        rules=ruleset,
        okey=okey,
        dealer=draw(st.integers(0, 3)),
        turn=winner,
        phase=Phase.ENDED,
        seats=tuple(seats),
    )
    finish = Finish(
        winner=winner,
        with_okey=draw(st.booleans()),
        after_pairs=draw(st.booleans()),
        one_go=draw(st.booleans()),
        multiplier=draw(st.sampled_from(MULTIPLIERS)),
    )
    spare = tuple(tile for tile in _okey_tiles(okey) if tile.id not in used)
    return Case(state, finish, spare)


def _with_seat(state: HandState, index: int, **changes: object) -> HandState:
    seats = list(state.seats)
    seats[index] = dataclasses.replace(seats[index], **changes)  # type: ignore[arg-type]
    return dataclasses.replace(state, seats=tuple(seats))


def _with_multiplier(finish: Finish, multiplier: int) -> Finish:
    return dataclasses.replace(finish, multiplier=multiplier)


def _scores(state: HandState, finish: Finish | None) -> tuple[int, ...]:
    reason = EndReason.FINISHED if finish is not None else EndReason.STOCK_OUT
    return score_hand(state, reason, finish).scores


def _losers(case: Case) -> list[int]:
    return [index for index in range(4) if index != case.finish.winner]


def _plain(state: HandState) -> HandState:
    """No +101s and no shown indicator anywhere: the hand's own points only."""
    for index in range(4):
        state = _with_seat(state, index, penalties=(), showed_indicator=False)
    return state


# --- +101s -------------------------------------------------------------------------------------


@SETTINGS
@given(cases(), st.booleans())
def test_penalties_are_never_multiplied(case: Case, stock_out: bool) -> None:
    finish = None if stock_out else case.finish
    wiped = case.state
    for index in range(4):
        wiped = _with_seat(wiped, index, penalties=())
    with_penalties = _scores(case.state, finish)
    without = _scores(wiped, finish)
    for index, seat in enumerate(case.state.seats):
        assert with_penalties[index] - without[index] == 101 * len(seat.penalties)
    reason = EndReason.STOCK_OUT if stock_out else EndReason.FINISHED
    result = score_hand(case.state, reason, finish)
    assert result.penalties == tuple(101 * len(seat.penalties) for seat in case.state.seats)


@SETTINGS
@given(cases(), st.sampled_from(MULTIPLIERS))
def test_penalties_add_the_same_whatever_the_multiplier(case: Case, other: int) -> None:
    wiped = case.state
    for index in range(4):
        wiped = _with_seat(wiped, index, penalties=())
    for finish in (case.finish, _with_multiplier(case.finish, other)):
        diff = [
            a - b for a, b in zip(_scores(case.state, finish), _scores(wiped, finish), strict=True)
        ]
        assert diff == [101 * len(seat.penalties) for seat in case.state.seats]


# --- Doubling ----------------------------------------------------------------------------------


@SETTINGS
@given(cases(okeys_in_racks=False), st.sampled_from((1, 2, 4)))
def test_doubling_doubles_an_opened_losers_hand_without_okeys(case: Case, m: int) -> None:
    state = _plain(case.state)
    once = _scores(state, _with_multiplier(case.finish, m))
    twice = _scores(state, _with_multiplier(case.finish, 2 * m))
    for index in _losers(case):
        if state.seats[index].opened_as is not None:
            assert twice[index] == 2 * once[index]


@SETTINGS
@given(cases(rules=st.just(OYNA), okeys_in_racks=False), st.sampled_from((1, 2, 4)))
def test_oyna_opened_loser_scores_hand_times_multiplier(case: Case, m: int) -> None:
    state = _plain(case.state)
    scores = _scores(state, _with_multiplier(case.finish, m))
    okey_number = state.okey.face % 13 + 1
    for index in _losers(case):
        seat = state.seats[index]
        if seat.opened_as is None:
            continue
        hand = sum(okey_number if t.is_false_joker else t.number or 0 for t in seat.rack)
        factor = 2 if seat.opened_as is OpenedAs.PAIRS else 1
        assert scores[index] == hand * factor * m


@SETTINGS
@given(cases(), st.sampled_from((1, 2, 4)))
def test_doubling_doubles_a_never_opened_loser_up_to_the_cap(case: Case, m: int) -> None:
    state = _plain(case.state)
    rules = state.rules
    once = _scores(state, _with_multiplier(case.finish, m))
    twice = _scores(state, _with_multiplier(case.finish, 2 * m))
    for index in _losers(case):
        if state.seats[index].opened_as is None:
            expected = 2 * once[index]
            if rules.never_opened_cap:
                expected = min(expected, rules.never_opened_cap)
            assert twice[index] == expected
            uncapped = 202 * 2 * m
            cap = rules.never_opened_cap
            assert twice[index] == (min(uncapped, cap) if cap else uncapped)


def test_north_sultan_never_opened_is_capped_at_808() -> None:
    state = HandState(
        rules=NORTH_SULTAN,
        okey=Okey(ALL_TILES[0]),
        dealer=0,
        turn=0,
        phase=Phase.ENDED,
        seats=(Seat(rack=()), Seat(rack=()), Seat(rack=()), Seat(rack=(ALL_TILES[50],))),
    )
    finish = Finish(0, True, True, True, 8)
    assert score_hand(state, EndReason.FINISHED, finish).scores == (-808, 808, 808, 808)
    oyna = dataclasses.replace(state, rules=OYNA)
    assert score_hand(oyna, EndReason.FINISHED, finish).scores == (-808, 1616, 1616, 1616)


# --- The okey left in a loser's hand ------------------------------------------------------------


def _okey_effect(case: Case, m: int, count: int) -> list[tuple[int, int]]:
    """(seat, points its ``count`` extra okeys add) for each loser, at multiplier ``m``."""
    state = _plain(case.state)
    okeys = case.spare_okeys[:count]
    assert len(okeys) == count
    finish = _with_multiplier(case.finish, m)
    out = []
    before = _scores(state, finish)
    for index in _losers(case):
        rack = state.seats[index].rack
        after = _scores(_with_seat(state, index, rack=(*rack, *okeys)), finish)
        out.append((index, after[index] - before[index]))
    return out


@SETTINGS
@given(
    cases(rules=st.just(OYNA), okeys_in_racks=False),
    st.sampled_from(MULTIPLIERS),
    st.sampled_from((1, 2)),
)
def test_oyna_okey_in_losers_hand_adds_exactly_101(case: Case, m: int, count: int) -> None:
    for index, added in _okey_effect(case, m, count):
        if case.state.seats[index].opened_as is None:
            assert added == 0  # a never-opened player scores only the fixed penalty
        else:
            assert added == 101 * count


@SETTINGS
@given(
    cases(rules=st.just(BOOMBALA), okeys_in_racks=False),
    st.sampled_from(MULTIPLIERS),
    st.sampled_from((1, 2)),
)
def test_boombala_okey_in_losers_hand_is_multiplied(case: Case, m: int, count: int) -> None:
    for index, added in _okey_effect(case, m, count):
        opened_as = case.state.seats[index].opened_as
        if opened_as is None:
            assert added == 0
        else:
            factor = 2 if opened_as is OpenedAs.PAIRS else 1
            assert added == 101 * count * m * factor


@SETTINGS
@given(cases(rules=st.just(NORTH_SULTAN), okeys_in_racks=False), st.sampled_from(MULTIPLIERS))
def test_north_sultan_okey_in_losers_hand_is_multiplied(case: Case, m: int) -> None:
    for index, added in _okey_effect(case, m, 1):
        opened_as = case.state.seats[index].opened_as
        if opened_as is None:
            assert added == 0
        else:
            assert added == 101 * m * (2 if opened_as is OpenedAs.PAIRS else 1)


# --- Void hands and the finisher ---------------------------------------------------------------


@SETTINGS
@given(cases())
def test_void_hand_scores_zero_and_wipes_penalties(case: Case) -> None:
    result = score_hand(case.state, EndReason.VOID, None)
    assert result.scores == (0, 0, 0, 0)
    assert result.penalties == (0, 0, 0, 0)
    assert result.reason is EndReason.VOID
    assert result.winner is None


@SETTINGS
@given(cases())
def test_finisher_scores_finish_points_times_multiplier(case: Case) -> None:
    state = _plain(case.state)
    winner = case.finish.winner
    result = score_hand(state, EndReason.FINISHED, case.finish)
    assert result.scores[winner] == state.rules.finish_points * case.finish.multiplier
    assert result.winner == winner
    # With its +101s and indicator show added on top, undoubled.
    seat = case.state.seats[winner]
    extra = 101 * len(seat.penalties)
    if seat.showed_indicator:
        extra += case.state.rules.indicator_show_points
    full = score_hand(case.state, EndReason.FINISHED, case.finish)
    assert full.scores[winner] == result.scores[winner] + extra


@SETTINGS
@given(cases())
def test_stock_out_has_no_finisher_and_multiplier_one(case: Case) -> None:
    state = _plain(case.state)
    out = score_hand(state, EndReason.STOCK_OUT, None)
    assert out.winner is None
    # Everyone, the would-be winner included, scores as a loser at x1.
    as_loser = _scores(state, _with_multiplier(case.finish, 1))
    for index in _losers(case):
        assert out.scores[index] == as_loser[index]
    # The would-be winner holds no tiles: 0 if it opened, else the fixed 202.
    expected = 202 if state.seats[case.finish.winner].opened_as is None else 0
    assert out.scores[case.finish.winner] == expected


# --- The rule texts' worked examples -----------------------------------------------------------


def _state(
    rules: RuleSet,
    indicator: str,
    racks: Sequence[Sequence[str]],
    opened: Sequence[OpenedAs | None],
) -> HandState:
    (indicator_tile,) = tiles_from_names([indicator])
    used: list[Tile] = [indicator_tile]
    seats = []
    for names, opened_as in zip(racks, opened, strict=True):
        rack = tiles_from_names(list(names), used=used)
        used.extend(rack)
        seats.append(Seat(rack=rack, opened_as=opened_as))
    return HandState(
        rules=rules,
        okey=Okey(indicator_tile),
        dealer=3,
        turn=0,
        phase=Phase.ENDED,
        seats=tuple(seats),
    )


def _finished(state: HandState, finish: Finish) -> HandResult:
    return score_hand(state, EndReason.FINISHED, finish)


# oyna: "The okey is Yellow 6. You opened with a run and are finishing ... East opened with a run
# and has Red 3, Black 4 and Blue 9 left (H = 16). North opened with pairs and has Blue 2 and
# Blue 5 left (H = 7). West never opened." Seats: 0 you, 1 East, 2 North, 3 West.
OYNA_RACKS = [[], ["R3", "K4", "B9"], ["B2", "B5"], ["R12", "K13", "B1", "Y6"]]
OYNA_OPENED = [OpenedAs.RUNS, OpenedAs.RUNS, OpenedAs.PAIRS, None]


def test_oyna_worked_hand() -> None:
    state = _state(OYNA, "Y5", OYNA_RACKS, OYNA_OPENED)
    assert state.okey.face == tiles_from_names(["Y6"])[0].face
    result = _finished(state, Finish(0, False, False, False, 1))
    assert result.scores == (-101, 16, 14, 202)


def test_oyna_worked_hand_with_okey_in_easts_hand() -> None:
    racks = [[], ["R3", "K4", "Y6"], ["B2", "B5"], ["R12"]]
    state = _state(OYNA, "Y5", racks, OYNA_OPENED)
    ordinary = _finished(state, Finish(0, False, False, False, 1))
    assert ordinary.scores[1] == 108
    with_okey = _finished(state, Finish(0, True, False, False, 2))
    assert with_okey.scores[1] == 115
    assert with_okey.scores == (-202, 115, 28, 404)


def test_oyna_worked_hand_with_false_joker_in_easts_hand() -> None:
    racks = [[], ["R3", "K4", "FJ"], ["B2", "B5"], ["R12"]]
    state = _state(OYNA, "Y5", racks, OYNA_OPENED)
    assert _finished(state, Finish(0, False, False, False, 1)).scores[1] == 13


# Boombala: "Ayşe finished: -101. Mehmet had opened and kept 3, 9 and 12: 24. Can opened with pairs
# and kept a 5: 5 x 2 = 10. Deniz never opened: 202. Had Ayşe finished by throwing the okey, the
# scores would be -202, 48, 20 and 404."
BOOMBALA_RACKS = [[], ["Y3", "B9", "K12"], ["R5"], ["Y1", "Y2", "B7"]]
BOOMBALA_OPENED = [OpenedAs.RUNS, OpenedAs.RUNS, OpenedAs.PAIRS, None]


def test_boombala_worked_example() -> None:
    state = _state(BOOMBALA, "K7", BOOMBALA_RACKS, BOOMBALA_OPENED)
    result = _finished(state, Finish(0, False, False, False, 1))
    assert result.scores == (-101, 24, 10, 202)


def test_boombala_worked_example_with_the_okey() -> None:
    state = _state(BOOMBALA, "K7", BOOMBALA_RACKS, BOOMBALA_OPENED)
    result = _finished(state, Finish(0, True, False, False, 2))
    assert result.scores == (-202, 48, 20, 404)
