"""Rule sets: a preset with knobs replaced, read and checked; every knob written, resolved.

Each enum knob's proto enum is matched to the engine's by name (buf STANDARD prefixes the
values), checked at import to cover every engine member.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import Final

from okey.v1 import common_pb2

from okey101.engine.errors import InvalidInput
from okey101.engine.rules import PRESETS, RuleSet
from okey101.platform.convert.enums import RULE_PRESETS, RULE_PRESETS_BACK
from okey101.platform.convert.memo import READ_RULES, RULES_MESSAGES, RULES_MESSAGES_BY_VALUE

_KNOBS: Final[tuple[str, ...]] = tuple(
    field.name for field in dataclasses.fields(RuleSet) if field.name != "name"
)
_RULE_FIELDS: Final = common_pb2.RuleSet.DESCRIPTOR.fields_by_name


def _enum_prefix(enum_name: str) -> str:
    """``LeftDiscardPolicy`` -> ``LEFT_DISCARD_POLICY_`` (how buf STANDARD prefixes values)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", enum_name).upper() + "_"


def _knob_enum_tables() -> dict[str, tuple[dict[int, enum.Enum], dict[enum.Enum, int]]]:
    """For each enum knob: proto number -> engine member, and back. Checked to cover both."""
    tables: dict[str, tuple[dict[int, enum.Enum], dict[enum.Enum, int]]] = {}
    defaults = RuleSet()
    for knob in _KNOBS:
        current = getattr(defaults, knob)
        enum_type = _RULE_FIELDS[knob].enum_type
        if not isinstance(current, enum.Enum) or enum_type is None:
            continue
        prefix = _enum_prefix(enum_type.name)
        forward: dict[int, enum.Enum] = {}
        for value in enum_type.values:
            if value.number == 0:
                continue
            forward[value.number] = type(current)[value.name.removeprefix(prefix)]
        back = {member: number for number, member in forward.items()}
        if len(back) != len(type(current)):
            raise RuntimeError(f"RuleSet.{knob}: the proto enum does not cover the engine's")
        tables[knob] = (forward, back)
    return tables


_KNOB_ENUMS: Final = _knob_enum_tables()

#: The range every integer knob must be in, so that no score a hand can reach overflows the
#: API's int32 points (the engine takes any integer; see the module docstring of ``rules``).
KNOB_LIMIT: Final = 100_000
#: Integer knobs that are counts, minimums or durations: never negative.
COUNT_KNOBS: Final = frozenset(
    {
        "opening_min_points",
        "opening_min_pairs",
        "pairs_opener_lay_off_limit",
        "never_opened_cap",
        "match_target",
        "match_hands",
        "turn_seconds",
    }
)


def rules_from_proto(message: common_pb2.RuleSet, *, field: str = "rules") -> RuleSet:
    """The preset with each knob present in ``message`` replacing the preset's value.

    BAD_RULE_VALUE for an enum value the engine does not know, and for an integer outside
    +-``KNOB_LIMIT`` (or negative, for a count, a minimum or a duration). Tables send the same
    few rule sets again and again: answers are remembered by the message's bytes.
    """
    data = message.SerializeToString(deterministic=True)
    rules: RuleSet | None = READ_RULES.get(data)
    if rules is None:
        rules = _rules_from_message(common_pb2.RuleSet.FromString(data), field)
        READ_RULES.remember(data, rules)
    return rules


def _rules_from_message(message: common_pb2.RuleSet, field: str) -> RuleSet:
    if message.preset == common_pb2.RULE_PRESET_UNSPECIFIED:
        name = "oyna"
    else:
        known = RULE_PRESETS_BACK.get(int(message.preset))
        if known is None:
            raise InvalidInput(
                "UNKNOWN_PRESET", preset=str(int(message.preset)), field=f"{field}.preset"
            )
        name = known
    overrides: dict[str, object] = {}
    for knob in _KNOBS:
        tables = _KNOB_ENUMS.get(knob)
        if tables is not None:
            number = int(getattr(message, knob))
            if number == 0:
                continue  # *_UNSPECIFIED: keep the preset's value
            member = tables[0].get(number)
            if member is None:
                raise InvalidInput(
                    "BAD_RULE_VALUE", rule=knob, value=str(number), field=f"{field}.{knob}"
                )
            overrides[knob] = member
        elif message.HasField(knob):
            value = getattr(message, knob)
            low = 0 if knob in COUNT_KNOBS else -KNOB_LIMIT
            if not isinstance(value, bool) and not low <= value <= KNOB_LIMIT:
                raise InvalidInput(
                    "BAD_RULE_VALUE", rule=knob, value=str(value), field=f"{field}.{knob}"
                )
            overrides[knob] = value
    return RuleSet.preset(name).with_overrides(overrides)


def rules_to_proto(rules: RuleSet) -> common_pb2.RuleSet:
    """Every knob present and resolved; ``custom`` when any differs from the preset."""
    preset = PRESETS.get(rules.name)
    message = common_pb2.RuleSet(
        preset=RULE_PRESETS.get(rules.name, common_pb2.RULE_PRESET_UNSPECIFIED),
        custom=preset is None or preset != rules,
    )
    for knob in _KNOBS:
        value = getattr(rules, knob)
        tables = _KNOB_ENUMS.get(knob)
        setattr(message, knob, tables[1][value] if tables is not None else value)
    return message


def rules_message(rules: RuleSet) -> common_pb2.RuleSet:
    """``rules_to_proto(rules)``, built once per rule set: shared, so callers copy it."""
    # ``RULES_MESSAGES.owned(id(rules), rules)`` written out: this runs twice a move.
    known = RULES_MESSAGES.get(id(rules))
    if known is not None and known[0] is rules:
        message_known: common_pb2.RuleSet = known[1]
        return message_known
    message: common_pb2.RuleSet | None = RULES_MESSAGES_BY_VALUE.get(rules)
    if message is None:
        message = rules_to_proto(rules)
        RULES_MESSAGES_BY_VALUE.remember(rules, message)
    RULES_MESSAGES.remember_owned(id(rules), rules, message)  # ``rules`` keeps its id unique
    return message
