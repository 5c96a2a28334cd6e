"""Names other people are shown: one check for every service that takes one.

A display name (LoginGuest, RegisterAccount, TableService.Sit), a table's name (HostTable,
CreateTable) and a tournament's name are drawn on other players' screens and terminals, so they
hold only characters that draw as themselves. Refused, anywhere in the value, as
INVALID_ARGUMENT ``BAD_DISPLAY_NAME`` (the field, the first such character as ``U+XXXX`` and its
position, from 1):

- control characters (Unicode ``Cc``: NUL, newline, ESC, which starts a terminal's escape
  sequences);
- format characters (``Cf``: the bidi overrides and isolates such as U+202E, which reorder what
  follows on screen, zero-width characters, the soft hyphen);
- line and paragraph separators (``Zl``, ``Zp``) and every space but U+0020 (a name that looks
  like another's, or like nothing);
- surrogates, private-use and unassigned code points (``Cs``, ``Co``, ``Cn``), which draw as
  nothing or as anything.

This is the same set ``str.isprintable`` refuses, written out so it does not move with Python's
Unicode tables unnoticed. Spaces at either end are dropped; what is left is 1 to ``maximum``
characters (``BAD_LENGTH`` otherwise). An empty value is the caller's to judge (required, or a
default such as the player's id).
"""

from __future__ import annotations

import unicodedata
from typing import Final

from okey101.platform.errors import InvalidArgument

#: The longest display name (the lobby has always allowed 32).
DISPLAY_NAME_MAX: Final = 32
#: The longest table or tournament name.
TITLE_MAX: Final = 64
#: Unicode general categories that never draw as themselves (module docstring).
UNSHOWN_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})


def unshown(text: str) -> int | None:
    """The index of the first character of ``text`` that does not draw as itself, or None."""
    for index, character in enumerate(text):
        if character != " " and unicodedata.category(character) in UNSHOWN_CATEGORIES:
            return index
    return None


def shown_name(value: str, field: str, *, maximum: int = DISPLAY_NAME_MAX) -> str:
    """``value`` without the spaces at its ends, checked (module docstring); "" if empty."""
    index = unshown(value)
    if index is not None:
        raise InvalidArgument(
            "BAD_DISPLAY_NAME",
            field=field,
            character=f"U+{ord(value[index]):04X}",
            position=index + 1,  # counted from 1, as a person reads it
        )
    name = value.strip(" ")
    if len(name) > maximum:
        raise InvalidArgument("BAD_LENGTH", field=field, minimum=1, maximum=maximum)
    return name


__all__ = ["DISPLAY_NAME_MAX", "TITLE_MAX", "UNSHOWN_CATEGORIES", "shown_name", "unshown"]
