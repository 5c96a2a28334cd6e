"""What the search maximises, and its marks.

An objective is an okey's worth where it stands: 0 (the opening value: the number it stands
for, every tile its number), a fixed worth (``least_leftover``: an okey kept in hand costs its
points), or ``COUNT_TILES`` (every tile and okey in a meld earns 1: how many tiles can go down).
"""

from __future__ import annotations

# Larger than any hand's value (22 tiles x 13 < 300): marks the required tile as used.
REQUIRED_BONUS = 10_000
IMPOSSIBLE = -(10**9)
# An objective: every tile and okey in a meld earns 1 (how many tiles can go down).
COUNT_TILES = -1
