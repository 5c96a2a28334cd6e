"""Checking LobbyService requests: lengths, names, ids, enum values and rule sets, each refused
as INVALID_ARGUMENT with the field it names (``errors``). Names other players are shown are
checked by the platform's one check (``platform.names``), as the table checks them."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

from okey.v1 import common_pb2

from okey101.lobby.errors import Invalid
from okey101.lobby.messages import PRESETS
from okey101.platform import convert, names

USERNAME: Final = re.compile(r"[a-z0-9_.-]{3,32}")

BOT_LEVELS: Final = {
    common_pb2.BOT_LEVEL_UNSPECIFIED,
    common_pb2.BOT_LEVEL_RANDOM,
    common_pb2.BOT_LEVEL_EASY,
    common_pb2.BOT_LEVEL_NORMAL,
    common_pb2.BOT_LEVEL_HARD,
    common_pb2.BOT_LEVEL_EXPERT,
}
VISIBILITIES: Final = {
    common_pb2.TABLE_VISIBILITY_UNSPECIFIED,
    common_pb2.TABLE_VISIBILITY_PUBLIC,
    common_pb2.TABLE_VISIBILITY_PRIVATE,
}
PRESET_VALUES: Final = {common_pb2.RULE_PRESET_UNSPECIFIED, *PRESETS.values()}
TABLE_STATES: Final = {
    common_pb2.TABLE_STATE_WAITING,
    common_pb2.TABLE_STATE_PLAYING,
    common_pb2.TABLE_STATE_FINISHED,
    common_pb2.TABLE_STATE_CLOSED,
}


def length(value: str, field_name: str, minimum: int, maximum: int) -> str:
    if not minimum <= len(value) <= maximum or (value and not value.isprintable()):
        raise Invalid("BAD_LENGTH", field=field_name, minimum=minimum, maximum=maximum)
    return value


def name(
    value: str, field_name: str, *, required: bool, maximum: int = names.DISPLAY_NAME_MAX
) -> str:
    """A name other players are shown, as every service checks one (``platform.names``):
    without the spaces at its ends, "" if empty and not ``required``."""
    checked = names.shown_name(value, field_name, maximum=maximum)
    if not checked and required:
        raise Invalid("FIELD_REQUIRED", field=field_name)
    return checked


def username(value: str) -> str:
    if not value:
        raise Invalid("FIELD_REQUIRED", field="username")
    lowered = value.lower()
    if USERNAME.fullmatch(lowered) is None:
        raise Invalid("BAD_USERNAME")
    return lowered


def password(value: str) -> str:
    if not value:
        raise Invalid("FIELD_REQUIRED", field="password")
    if not 8 <= len(value) <= 128:
        raise Invalid("BAD_LENGTH", field="password", minimum=8, maximum=128)
    return value


def identifier(value: str, field_name: str) -> str:
    if not value:
        raise Invalid("FIELD_REQUIRED", field=field_name)
    return length(value, field_name, 1, 128)


def enum_value(value: int, known: Collection[int], field_name: str) -> int:
    if value not in known:
        raise Invalid("BAD_FIELD", field=field_name, value=str(value))
    return value


def rules_preset(message: common_pb2.RuleSet) -> str:
    """The preset a rule set plays (checking every knob the engine knows)."""
    return convert.rules_from_proto(message).name


__all__ = [
    "BOT_LEVELS",
    "PRESET_VALUES",
    "TABLE_STATES",
    "USERNAME",
    "VISIBILITIES",
    "enum_value",
    "identifier",
    "length",
    "name",
    "password",
    "rules_preset",
    "username",
]
