"""Provably fair deck orders: a documented function anyone can recompute.

Before a hand is dealt the table publishes ``commitment(server_seed)`` (SHA-256 of the seed's
bytes, hex). The deck order is then

1. ``key = server_seed`` (32 random bytes from the OS);
2. ``message(counter) = "okey101-deal/1" | table_id | hand_number | seed_0 | ... | seed_3 |
   counter``, fields joined by ``"|"`` (ASCII), each player seed as lowercase hex or empty when
   the seat added none, ``hand_number`` and ``counter`` in decimal; ``counter`` runs 0, 1, 2, ...;
3. the byte stream ``HMAC-SHA256(key, message(0)) || HMAC-SHA256(key, message(1)) || ...``,
   read four bytes at a time as big-endian unsigned integers ``u``;
4. Fisher-Yates over the tile ids 0-105 in order: for ``i`` from 105 down to 1, draw
   ``j`` uniform in ``0..i`` and swap positions ``i`` and ``j``. A draw takes the next ``u``
   and rejects it when ``u >= 2**32 - (2**32 % (i + 1))`` (so every ``j`` is equally likely),
   else ``j = u % (i + 1)``.

When the hand ends the server seed is revealed: its SHA-256 must equal the commitment, and
``deck_order`` of the published inputs must give the deck the hand was dealt from. The player
seeds make the order unpredictable to the server as well, provided a player picks theirs after
seeing the commitment. Test vectors: ``docs/fair-deals.md`` (and
``tests/engine/test_fair_deal.py``).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Sequence

from okey101.engine.errors import InvalidInput
from okey101.engine.tiles import TILE_COUNT, Tile, tile_by_id

SCHEME = "okey101-deal/1"
SERVER_SEED_BYTES = 32
#: A player's seed: 8 to 32 bytes (16 to 64 hex digits).
PLAYER_SEED_BYTES = (8, 32)
SEATS = 4
_SPACE = 2**32


def commitment(server_seed: bytes) -> str:
    """The published commitment to a server seed: lowercase hex SHA-256 of its bytes."""
    return hashlib.sha256(server_seed).hexdigest()


def parse_seed(text: str, *, field: str, server: bool = False) -> bytes:
    """A seed given as hex; ``InvalidInput`` (BAD_SEED) if it is not hex of an allowed size."""
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        raise InvalidInput("BAD_SEED", field=field) from None
    low, high = (SERVER_SEED_BYTES, SERVER_SEED_BYTES) if server else PLAYER_SEED_BYTES
    if not low <= len(seed) <= high or len(text) != 2 * len(seed):
        raise InvalidInput("BAD_SEED", field=field)
    return seed


def _words(key: bytes, prefix: str) -> Iterator[int]:
    counter = 0
    while True:
        block = hmac.new(key, f"{prefix}|{counter}".encode("ascii"), hashlib.sha256).digest()
        for offset in range(0, len(block), 4):
            yield int.from_bytes(block[offset : offset + 4], "big")
        counter += 1


def deck_order(
    table_id: str,
    hand_number: int,
    server_seed: bytes,
    player_seeds: Sequence[bytes | None] = (None, None, None, None),
) -> tuple[Tile, ...]:
    """The deck (all 106 tiles, dealing order) the inputs determine; see the module docstring."""
    if len(server_seed) != SERVER_SEED_BYTES:
        raise InvalidInput("BAD_SEED", field="server_seed")
    if len(player_seeds) != SEATS:
        raise InvalidInput("BAD_SEED", field="player_seeds")
    if "|" in table_id or not table_id.isascii():
        raise InvalidInput("BAD_FIELD", field="table_id", value=table_id)
    if hand_number < 1:
        raise InvalidInput("BAD_FIELD", field="hand_number", value=str(hand_number))
    seeds = "|".join(seed.hex() if seed else "" for seed in player_seeds)
    words = _words(server_seed, f"{SCHEME}|{table_id}|{hand_number}|{seeds}")
    order = list(range(TILE_COUNT))
    for i in range(TILE_COUNT - 1, 0, -1):
        span = i + 1
        limit = _SPACE - _SPACE % span
        word = next(words)
        while word >= limit:
            word = next(words)
        j = word % span
        order[i], order[j] = order[j], order[i]
    return tuple(tile_by_id(tile_id) for tile_id in order)
