"""Every memory the conversions keep: answers remembered by an object's identity or by bytes.

A table sends the same melds with every move, and the same few rule sets again and again.
Reading a meld (checking it is the meld it says it is) and writing one (a message per tile) cost
more than the rest of a move once the table has a dozen, so read melds are remembered by their
bytes, and what is written for a meld by the meld object itself: the object an earlier read
returned, or one the engine made. Rule sets likewise: read by their message's bytes, written by
the RuleSet object (then, for a RuleSet not seen before, by its value).

One mechanism for all of them, ``Memo``; the code that fills each memory is where its values are
built (``melds``, ``rules``, ``wire``).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final

#: How many entries each meld memory keeps (then it starts again: a table re-teaches its melds
#: in one move).
MELD_MEMORY_SIZE: Final = 4096


class Memo(dict[Hashable, Any]):
    """A dict of at most ``limit`` entries, emptied when full.

    A key made of values is read with the dict's own ``get`` (no Python frame on the hot path)
    and written with ``remember``. A key that names an object by ``id`` is written with that
    object, its owner (``remember_owned``), and read with ``owned``, which answers only for that
    very object: holding the owner keeps its id from being reused while the entry lives.
    """

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def remember(self, key: Hashable, value: object) -> None:
        if len(self) >= self.limit:
            self.clear()
        self[key] = value

    def owned(self, key: Hashable, owner: object) -> Any:
        """The value stored under ``key`` for this very ``owner``, or None."""
        known = self.get(key)
        if known is None or known[0] is not owner:
            return None
        return known[1]

    def remember_owned(self, key: Hashable, owner: object, value: object) -> None:
        self.remember(key, (owner, value))


#: A HandState's table meld read whole: (its bytes, the indicator's id, id(rules)) -> TableMeld,
#: owned by the rule set (an error is raised afresh every time, never remembered).
READ_MELDS: Final = Memo(MELD_MEMORY_SIZE)
#: ``meld_to_proto(meld, okey)`` serialized: (id(meld), okey face) -> bytes, owned by the meld.
MELD_BYTES: Final = Memo(MELD_MEMORY_SIZE)
#: A HandState holding just one table meld, serialized: (id(item),) -> bytes, owned by the
#: TableMeld.
STATE_MELD_BYTES: Final = Memo(MELD_MEMORY_SIZE)
#: A SeatView holding just one table meld, serialized: (id(meld), okey face, index, owner seat)
#: -> bytes, owned by the meld.
VIEW_MELD_BYTES: Final = Memo(MELD_MEMORY_SIZE)
#: The four meld memories.
MELD_MEMORIES: Final = (READ_MELDS, MELD_BYTES, STATE_MELD_BYTES, VIEW_MELD_BYTES)

#: ``rules_from_proto``: a RuleSet message's deterministic bytes -> RuleSet (``field`` only
#: names where an error is, and errors are never remembered).
READ_RULES: Final = Memo(256)
#: A rule set's message by identity: id(rules) -> RuleSet message, owned by the RuleSet. Tried
#: first: states read from requests share the RuleSet ``READ_RULES`` holds, and hashing or
#: comparing a RuleSet's every knob costs more than the lookup.
RULES_MESSAGES: Final = Memo(64)
#: A rule set's message by value: RuleSet -> RuleSet message (for a RuleSet not met before).
RULES_MESSAGES_BY_VALUE: Final = Memo(64)

#: A SeatView holding just one seat's face-up entry, serialized: (id(seat), seat number, okey
#: face, penalty points) -> bytes, owned by the Seat (a hand's seats change one at a time, so a
#: view made on every move rebuilds one entry of four).
VIEW_SEAT_BYTES: Final = Memo(MELD_MEMORY_SIZE)
#: Each tile's rack entry for a hand's table: (id(table), okey face, id(rules)) -> the list, owned
#: by the table's tuple (the table changes with a meld laid, not with a draw or a discard).
RACK_ENTRIES_BY_TABLE: Final = Memo(MELD_MEMORY_SIZE)
