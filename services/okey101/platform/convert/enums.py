"""The engine's enums and the ``okey.v1`` enums, both ways.

Each map engine -> message has its inverse (``*_BACK``, message number -> engine value); a
number with no engine value (an unknown or unspecified one) is refused as BAD_FIELD, named by
the enum value's name where the API knows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from okey.v1 import common_pb2

from okey101.engine.actions import End
from okey101.engine.hand import Phase
from okey101.engine.melds import MeldKind
from okey101.engine.result import Doubling, EndReason, ScoreLineKind
from okey101.engine.seat import OpenedAs, PenaltyReason
from okey101.engine.tiles import Colour
from okey101.platform.convert.limits import bad_field

COLOURS: Final[Mapping[Colour, common_pb2.Colour]] = {
    Colour.RED: common_pb2.COLOUR_RED,
    Colour.YELLOW: common_pb2.COLOUR_YELLOW,
    Colour.BLUE: common_pb2.COLOUR_BLUE,
    Colour.BLACK: common_pb2.COLOUR_BLACK,
}
COLOURS_BACK: Final[Mapping[int, Colour]] = {int(v): k for k, v in COLOURS.items()}

MELD_KINDS: Final[Mapping[MeldKind, common_pb2.MeldKind]] = {
    MeldKind.RUN: common_pb2.MELD_KIND_RUN,
    MeldKind.SET: common_pb2.MELD_KIND_SET,
    MeldKind.PAIR: common_pb2.MELD_KIND_PAIR,
}
MELD_KINDS_BACK: Final[Mapping[int, MeldKind]] = {int(v): k for k, v in MELD_KINDS.items()}

PHASES: Final[Mapping[Phase, common_pb2.Phase]] = {
    Phase.FIRST: common_pb2.PHASE_FIRST,
    Phase.DRAW: common_pb2.PHASE_DRAW,
    Phase.PLAY: common_pb2.PHASE_PLAY,
    Phase.ENDED: common_pb2.PHASE_ENDED,
}
PHASES_BACK: Final[Mapping[int, Phase]] = {int(v): k for k, v in PHASES.items()}

PENALTIES: Final[Mapping[PenaltyReason, common_pb2.PenaltyReason]] = {
    PenaltyReason.OKEY_DISCARDED: common_pb2.PENALTY_REASON_OKEY_DISCARDED,
    PenaltyReason.PLAYABLE_DISCARDED: common_pb2.PENALTY_REASON_PLAYABLE_DISCARDED,
    PenaltyReason.GAVE_BACK: common_pb2.PENALTY_REASON_GAVE_BACK,
    PenaltyReason.CHARGED_BEFORE: common_pb2.PENALTY_REASON_CHARGED_BEFORE,
}
PENALTIES_BACK: Final[Mapping[int, PenaltyReason]] = {int(v): k for k, v in PENALTIES.items()}

END_REASONS: Final[Mapping[EndReason, common_pb2.HandEndReason]] = {
    EndReason.FINISHED: common_pb2.HAND_END_REASON_FINISHED,
    EndReason.STOCK_OUT: common_pb2.HAND_END_REASON_STOCK_OUT,
    EndReason.VOID: common_pb2.HAND_END_REASON_VOID,
}
END_REASONS_BACK: Final[Mapping[int, EndReason]] = {int(v): k for k, v in END_REASONS.items()}

SCORE_LINE_KINDS: Final[Mapping[ScoreLineKind, common_pb2.ScoreLineKind]] = {
    ScoreLineKind.FINISHED: common_pb2.SCORE_LINE_KIND_FINISHED,
    ScoreLineKind.NEVER_OPENED: common_pb2.SCORE_LINE_KIND_NEVER_OPENED,
    ScoreLineKind.RACK_SUM: common_pb2.SCORE_LINE_KIND_RACK_SUM,
    ScoreLineKind.OKEY_IN_HAND: common_pb2.SCORE_LINE_KIND_OKEY_IN_HAND,
    ScoreLineKind.DOUBLED: common_pb2.SCORE_LINE_KIND_DOUBLED,
    ScoreLineKind.CAPPED: common_pb2.SCORE_LINE_KIND_CAPPED,
    ScoreLineKind.INDICATOR_SHOWN: common_pb2.SCORE_LINE_KIND_INDICATOR_SHOWN,
    ScoreLineKind.PENALTY: common_pb2.SCORE_LINE_KIND_PENALTY,
}
SCORE_LINE_KINDS_BACK: Final[Mapping[int, ScoreLineKind]] = {
    int(v): k for k, v in SCORE_LINE_KINDS.items()
}

DOUBLINGS: Final[Mapping[Doubling, common_pb2.DoublingReason]] = {
    Doubling.OKEY_FINISH: common_pb2.DOUBLING_REASON_OKEY_FINISH,
    Doubling.PAIRS_FINISH: common_pb2.DOUBLING_REASON_PAIRS_FINISH,
    Doubling.ONE_GO: common_pb2.DOUBLING_REASON_ONE_GO,
    Doubling.OPENED_WITH_PAIRS: common_pb2.DOUBLING_REASON_OPENED_WITH_PAIRS,
}
DOUBLINGS_BACK: Final[Mapping[int, Doubling]] = {int(v): k for k, v in DOUBLINGS.items()}

OPENINGS: Final[Mapping[OpenedAs | None, common_pb2.OpeningKind]] = {
    None: common_pb2.OPENING_KIND_NOT_OPENED,
    OpenedAs.RUNS: common_pb2.OPENING_KIND_RUNS,
    OpenedAs.PAIRS: common_pb2.OPENING_KIND_PAIRS,
}
OPENINGS_BACK: Final[Mapping[int, OpenedAs | None]] = {
    int(common_pb2.OPENING_KIND_UNSPECIFIED): None,  # read as "not opened" in requests
    **{int(v): k for k, v in OPENINGS.items()},
}

RUN_ENDS_BACK: Final[Mapping[int, End | None]] = {
    int(common_pb2.RUN_END_UNSPECIFIED): None,
    int(common_pb2.RUN_END_LOW): End.LOW,
    int(common_pb2.RUN_END_HIGH): End.HIGH,
}
RUN_ENDS: Final[Mapping[End | None, common_pb2.RunEnd]] = {
    None: common_pb2.RUN_END_UNSPECIFIED,
    End.LOW: common_pb2.RUN_END_LOW,
    End.HIGH: common_pb2.RUN_END_HIGH,
}

#: A preset's name -> its RulePreset, and back.
RULE_PRESETS: Final[Mapping[str, common_pb2.RulePreset]] = {
    "oyna": common_pb2.RULE_PRESET_OYNA,
    "boombala": common_pb2.RULE_PRESET_BOOMBALA,
    "north_sultan": common_pb2.RULE_PRESET_NORTH_SULTAN,
}
RULE_PRESETS_BACK: Final[Mapping[int, str]] = {int(v): k for k, v in RULE_PRESETS.items()}


def enum_from_proto(
    table: Mapping[int, Any], value: int, field: str, enum_name: str | None = None
) -> Any:
    """``table[value]``; BAD_FIELD at ``field`` for a number ``table`` does not hold."""
    try:
        return table[int(value)]
    except KeyError:
        raise bad_field(field, enum_value_name(enum_name, value)) from None


def enum_value_name(enum_name: str | None, value: int) -> str:
    """The name of ``value`` in the ``common.proto`` enum ``enum_name``, else its number."""
    if enum_name is not None:
        enum_type = common_pb2.DESCRIPTOR.enum_types_by_name[enum_name]
        known = enum_type.values_by_number.get(int(value))
        if known is not None:
            return str(known.name)
    return str(int(value))


def phase_to_proto(phase: Phase) -> common_pb2.Phase:
    return PHASES[phase]


def phase_from_proto(value: int, *, field: str = "phase") -> Phase:
    phase: Phase = enum_from_proto(PHASES_BACK, value, field, "Phase")
    return phase


def penalty_reason_to_proto(reason: PenaltyReason) -> common_pb2.PenaltyReason:
    return PENALTIES[reason]


def penalty_reason_from_proto(value: int, *, field: str = "penalties") -> PenaltyReason:
    reason: PenaltyReason = enum_from_proto(PENALTIES_BACK, value, field, "PenaltyReason")
    return reason


def opened_as_to_proto(opened_as: OpenedAs | None) -> common_pb2.OpeningKind:
    return OPENINGS[opened_as]


def opened_as_from_proto(value: int, *, field: str = "opened_as") -> OpenedAs | None:
    opened: OpenedAs | None = enum_from_proto(OPENINGS_BACK, value, field, "OpeningKind")
    return opened


def end_reason_to_proto(reason: EndReason) -> common_pb2.HandEndReason:
    return END_REASONS[reason]


def end_reason_from_proto(value: int, *, field: str = "reason") -> EndReason:
    reason: EndReason = enum_from_proto(END_REASONS_BACK, value, field, "HandEndReason")
    return reason


def colour_to_proto(colour: Colour | None) -> common_pb2.Colour:
    return common_pb2.COLOUR_UNSPECIFIED if colour is None else COLOURS[colour]
