"""Text from the server as the terminal may show it: the one place it is made safe.

Names, sentences and ids come from other people (a display name is whatever its player sent)
and are drawn on this terminal. A control character there is an instruction to the terminal,
not text: ESC starts escape sequences that move the cursor, recolour, retitle the window or
worse; a newline or a bidi override (U+202E) rearranges what follows. The server refuses such
names now (``platform.names``), but a client must not rely on every server, or on names stored
before that. So every server-sent string is passed through ``shown`` where it is drawn: each
character that does not draw as itself (the same Unicode categories ``platform.names`` refuses)
becomes U+FFFD, which shows that something was there. Rich markup is not this helper's concern:
the screen draws server text as ``Text``, never as markup.
"""

from __future__ import annotations

import unicodedata
from typing import Final

from okey101.platform.names import UNSHOWN_CATEGORIES

#: What stands in for a character that does not draw as itself.
REPLACEMENT: Final = "\ufffd"


def shown(text: str) -> str:
    """``text`` with every character that does not draw as itself replaced (module docstring);
    a plain space stays."""
    if text.isprintable():  # nearly always: nothing to replace
        return text
    return "".join(
        REPLACEMENT
        if character != " " and unicodedata.category(character) in UNSHOWN_CATEGORIES
        else character
        for character in text
    )


__all__ = ["REPLACEMENT", "shown"]
