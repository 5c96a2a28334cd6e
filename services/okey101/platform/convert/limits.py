"""The bounds a message is read within, and the refusal of a field that cannot be.

Shared by every reader (``*_from_proto``) of the package.
"""

from __future__ import annotations

from typing import Final

from okey101.engine.errors import InvalidInput

#: The most tiles a rack ever holds (the starting player's 22).
MAX_RACK: Final = 22
#: Bounds on a hand state's counters (turns, lay-offs) and on a seat's penalties: far above
#: any real hand, far below where the API's integers would overflow.
MAX_COUNT: Final = 100_000
MAX_PENALTIES: Final = 1_000


def bad_field(field: str, value: object) -> InvalidInput:
    """A field holding a value that cannot be (BAD_FIELD, with the field's path and what it
    held: an enum's unknown or unspecified value, a count past its bound, ...)."""
    return InvalidInput("BAD_FIELD", field=field, value=str(value))
