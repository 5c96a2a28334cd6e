"""The rule set: every point where the three rule texts differ is a knob.

``RuleSet`` is a frozen dataclass; the presets ``oyna`` (the default), ``boombala`` and
``north_sultan`` are values of it, one per published rule text (docs/rules.md names them). A table
may be created with a custom mix:
``RuleSet.preset("oyna").with_overrides({"run_may_end_12_13_1": True})``.

Where a text is silent the preset takes the reading docs/rules.md records; each knob's comment
names the texts and, where it applies, the reading taken. docs/rules.md has the table of where
the three differ, with each row's knobs, and every knob's value per preset.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from okey101.engine.errors import InvalidInput


class LeftDiscardPolicy(enum.StrEnum):
    """What a player may do with the tile their left-hand neighbour discarded."""

    # oyna: only if it can be used this turn (unopened: to open or hand-finish with it);
    # a take that cannot be used is refused at once.
    USE_THIS_TURN = "use_this_turn"
    # boombala: it must go on the table this turn; if it cannot, it is given back for +101
    # and the player draws from the stock instead.
    GIVE_BACK_FOR_PENALTY = "give_back_for_penalty"
    # north_sultan: unopened players only to open with it (or an identical tile) this turn;
    # opened players take it freely.
    OPENED_TAKE_FREELY = "opened_take_freely"


class StockOutPolicy(enum.StrEnum):
    """What happens when the last tile of the stock has been drawn."""

    # oyna: the hand ends when the player who drew the last tile discards; nobody may take it.
    ENDS_ON_LAST_DISCARD = "ends_on_last_discard"
    # north_sultan: the next player may take that last discard; if they do not, the hand ends.
    NEXT_MAY_TAKE_LAST_DISCARD = "next_may_take_last_discard"


class OneGoFinish(enum.StrEnum):
    """Which opening-and-finishing-in-one-turn counts as a finish of its own."""

    # oyna "elden": finishing in the turn you open while nobody else has opened; the others score
    # 404 (808 with the okey) and the finisher -202 (-404 with the okey, the reading taken).
    WHILE_NOBODY_OPENED = "while_nobody_opened"
    # boombala: opening and finishing in the same turn, whoever else opened: -202, others doubled.
    SAME_TURN = "same_turn"
    # north_sultan "hand finish": the whole hand laid down in one turn by a player who had not
    # opened, with no lay-offs or okey taken back: everything doubled again.
    HAND_FINISH = "hand_finish"


class OkeyInLosersHand(enum.StrEnum):
    """How an okey left in a loser's hand is scored."""

    # oyna: +101 each, added after doubling (never doubled); only for players who opened.
    ADDED_UNDOUBLED = "added_undoubled"
    # boombala, north_sultan: it counts 101 inside the hand sum, so it is doubled with it.
    IN_HAND_SUM = "in_hand_sum"


class MatchEnd(enum.StrEnum):
    """When a match ends."""

    # oyna: when a total reaches the target (1,000); lowest total wins, ties share.
    TARGET_TOTAL = "target_total"
    # boombala, north_sultan: after a fixed number of hands.
    FIXED_HANDS = "fixed_hands"


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Every knob of Okey 101 that the three texts set differently (see docs/rules.md)."""

    name: str = "oyna"

    # --- Melds -------------------------------------------------------------------------------
    # 12-13-1 is a run, the 1 counting 1 (boombala, north_sultan); 13-1-2 is never a run.
    run_may_end_12_13_1: bool = False

    # --- Opening -----------------------------------------------------------------------------
    opening_min_points: int = 101
    opening_min_pairs: int = 5
    # Lay off and make new melds in the turn you open (oyna, north_sultan); boombala: next turn.
    lay_off_in_opening_turn: bool = True
    # north_sultan: laying off or taking an okey back in the opening turn spoils a hand finish.
    opening_turn_play_spoils_hand_finish: bool = False

    # --- After a pairs opening ---------------------------------------------------------------
    # A pairs opener may lay off on runs and sets (all three; boombala silent: yes, else a pairs
    # opener could never finish).
    pairs_opener_may_lay_off: bool = True
    # north_sultan: at most this many tiles laid off per turn by a pairs opener (0: no limit).
    pairs_opener_lay_off_limit: int = 0
    # Players who opened with runs/sets may put pairs down once someone opened with pairs
    # (oyna, north_sultan; boombala silent: no).
    runs_openers_may_pair_after_pairs_opening: bool = True

    # --- The okey on the table ---------------------------------------------------------------
    # Take an okey back by putting the tile it stands for in its place (oyna, north_sultan;
    # boombala silent: never, the okey stays).
    may_take_okey_back: bool = True
    # From a three-tile set: oyna only by completing it to all four colours; north_sultan never.
    okey_back_from_three_set: bool = True

    # --- The left discard --------------------------------------------------------------------
    left_discard: LeftDiscardPolicy = LeftDiscardPolicy.USE_THIS_TURN
    # oyna: the taken tile may not be thrown straight back.
    taken_tile_may_not_be_discarded: bool = True
    # oyna: the taken tile may not be the finishing discard.
    taken_tile_may_not_finish: bool = True

    # --- Indicator, stock --------------------------------------------------------------------
    # boombala: showing the indicator's twin from the hand on one's first turn scores this.
    indicator_show_points: int = 0
    stock_out: StockOutPolicy = StockOutPolicy.ENDS_ON_LAST_DISCARD

    # --- Scoring -----------------------------------------------------------------------------
    finish_points: int = -101
    never_opened_points: int = 202
    penalty_points: int = 101
    okey_in_hand_points: int = 101
    okey_in_losers_hand: OkeyInLosersHand = OkeyInLosersHand.ADDED_UNDOUBLED
    # The finish doubles after a pairs opening (oyna, north_sultan; boombala: no).
    double_after_pairs_opening: bool = True
    # Finishing by discarding an okey doubles (all three).
    double_with_okey: bool = True
    one_go_finish: OneGoFinish = OneGoFinish.WHILE_NOBODY_OPENED
    # Each doubling that applies to a finish doubles again (oyna, north_sultan: the okey and a
    # pairs opening or one go together make x4); boombala: a finish "with the okey, or in one
    # go" doubles once, however many of them apply (-202, never-opened 404; never -404 / 808).
    finish_doublings_stack: bool = True
    # north_sultan: never-opened players are capped at 4x (808); 0: no cap.
    never_opened_cap: int = 0
    # All four opening with pairs voids the hand, +101s wiped, same dealer (all three).
    all_pairs_voids_hand: bool = True

    # --- Match -------------------------------------------------------------------------------
    match_end: MatchEnd = MatchEnd.TARGET_TOTAL
    match_target: int = 1000
    # With MatchEnd.FIXED_HANDS: how many (boombala: the host picks 1-11, odd; north_sultan: 11).
    match_hands: int = 11
    # boombala option: opposite seats (0+2, 1+3) add up.
    partners: bool = False
    # Turn time in seconds (0: the table's setting; north_sultan 45).
    turn_seconds: int = 0

    # --- Bots --------------------------------------------------------------------------------
    # Players and spectators are told which seats are bots (oyna, boombala: silent, so they are);
    # north_sultan: "To keep the atmosphere of the table, bots are not individually labelled".
    # Not a rule of play: the table service reads it (docs/table.md#bots-unlabelled).
    bots_labelled: bool = True

    # ------------------------------------------------------------------------------------------
    @staticmethod
    def preset(name: str) -> RuleSet:
        """The preset of one rule text: ``oyna``, ``boombala`` or ``north_sultan``."""
        try:
            return PRESETS[name]
        except KeyError:
            raise InvalidInput("UNKNOWN_PRESET", preset=str(name)) from None

    def with_overrides(self, overrides: Mapping[str, Any]) -> RuleSet:
        """A copy with some knobs changed; unknown knobs and bad values are refused clearly."""
        fields = {field.name: field for field in dataclasses.fields(self)}
        changes: dict[str, Any] = {}
        for key, value in overrides.items():
            field = fields.get(key)
            if field is None or key == "name":
                raise InvalidInput("UNKNOWN_RULE", rule=str(key))
            changes[key] = _coerce(key, getattr(self, key), value)
        return dataclasses.replace(self, **changes)

    def knobs(self) -> dict[str, Any]:
        """Every knob and its value, enums as their string values (for APIs and docs)."""
        out: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            out[field.name] = value.value if isinstance(value, enum.Enum) else value
        return out


def _coerce(key: str, current: Any, value: Any) -> Any:
    if isinstance(current, enum.Enum):
        try:
            return type(current)(value)
        except ValueError:
            raise InvalidInput("BAD_RULE_VALUE", rule=key, value=str(value)) from None
    if isinstance(current, bool):
        if isinstance(value, bool):
            return value
        raise InvalidInput("BAD_RULE_VALUE", rule=key, value=str(value))
    if isinstance(current, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise InvalidInput("BAD_RULE_VALUE", rule=key, value=str(value))
    raise InvalidInput("BAD_RULE_VALUE", rule=key, value=str(value))


OYNA = RuleSet()

BOOMBALA = RuleSet(
    name="boombala",
    run_may_end_12_13_1=True,
    lay_off_in_opening_turn=False,
    runs_openers_may_pair_after_pairs_opening=False,
    may_take_okey_back=False,
    okey_back_from_three_set=False,
    left_discard=LeftDiscardPolicy.GIVE_BACK_FOR_PENALTY,
    taken_tile_may_not_be_discarded=False,
    taken_tile_may_not_finish=False,
    indicator_show_points=-101,
    stock_out=StockOutPolicy.ENDS_ON_LAST_DISCARD,
    okey_in_losers_hand=OkeyInLosersHand.IN_HAND_SUM,
    double_after_pairs_opening=False,
    one_go_finish=OneGoFinish.SAME_TURN,
    finish_doublings_stack=False,
    match_end=MatchEnd.FIXED_HANDS,
    match_hands=11,
)

NORTH_SULTAN = RuleSet(
    name="north_sultan",
    run_may_end_12_13_1=True,
    opening_turn_play_spoils_hand_finish=True,
    pairs_opener_lay_off_limit=2,
    okey_back_from_three_set=False,
    left_discard=LeftDiscardPolicy.OPENED_TAKE_FREELY,
    taken_tile_may_not_be_discarded=False,
    taken_tile_may_not_finish=False,
    stock_out=StockOutPolicy.NEXT_MAY_TAKE_LAST_DISCARD,
    okey_in_losers_hand=OkeyInLosersHand.IN_HAND_SUM,
    one_go_finish=OneGoFinish.HAND_FINISH,
    never_opened_cap=808,
    match_end=MatchEnd.FIXED_HANDS,
    match_hands=11,
    turn_seconds=45,
    bots_labelled=False,
)

PRESETS: dict[str, RuleSet] = {rules.name: rules for rules in (OYNA, BOOMBALA, NORTH_SULTAN)}
