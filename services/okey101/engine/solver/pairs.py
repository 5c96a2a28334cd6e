"""Pairs: as many as a hand holds, okeys partnering singles first."""

from __future__ import annotations

from okey101.engine.melds import make_pair
from okey101.engine.solver.arrangement import Arrangement, Hand, tile_id
from okey101.engine.tiles import Tile, face_number


def most_pairs_bound(hand: Hand) -> int:
    """A cheap upper bound on ``best_pairs(hand).pair_count`` (with or without a required
    tile): two tiles of a face make a pair, an okey at most one more. A quick "no" for the many
    hands that hold too few pairs to open."""
    okey_face = hand.okey.face
    seen = 0  # a bit per face held an odd number of times so far
    pairs = 0
    for tile in hand.tiles:
        tile_id = tile.id
        if tile_id >= 104:
            face = okey_face
        elif tile_id >> 1 == okey_face:
            pairs += 1  # an okey partners a single or another okey
            continue
        else:
            face = tile_id >> 1
        bit = 1 << face
        if seen & bit:
            pairs += 1
        seen ^= bit
    return min(pairs, (len(hand.tiles) - 1) // 2)


def best_pairs(hand: Hand, *, required: Tile | None = None, keep_one: bool = True) -> Arrangement:
    """As many pairs as the hand holds (okeys partner singles, then each other).

    ``required`` must be in a pair (else the empty arrangement); ``keep_one`` leaves a tile to
    discard.
    """
    okey = hand.okey
    by_face: dict[int, list[Tile]] = {}
    wild: list[Tile] = []
    for tile in sorted(hand.tiles, key=tile_id):
        if okey.is_wild(tile):
            wild.append(tile)
        else:
            by_face.setdefault(okey.plays_as(tile), []).append(tile)
    if required is not None:
        if okey.is_wild(required):
            wild.sort(key=lambda tile: tile.id != required.id)
        else:
            by_face[okey.plays_as(required)].sort(key=lambda tile: tile.id != required.id)
    pairs: list[tuple[Tile, Tile]] = []
    singles: list[Tile] = []
    for face in sorted(by_face, key=lambda face: -face_number(face)):
        tiles = by_face[face]
        for index in range(0, len(tiles) - 1, 2):
            pairs.append((tiles[index], tiles[index + 1]))
        if len(tiles) % 2:
            singles.append(tiles[-1])
    # The required single (if any) gets an okey first; then the highest singles.
    singles.sort(
        key=lambda tile: (required is None or tile.id != required.id, -okey.plays_as(tile) % 13)
    )
    for single in singles:
        if not wild:
            break
        pairs.append((single, wild.pop(0)))
    while len(wild) >= 2:
        pairs.append((wild.pop(0), wild.pop(0)))
    if required is not None and not any(required in pair for pair in pairs):
        return Arrangement(0, (), hand.tiles)
    if keep_one:
        while pairs and 2 * len(pairs) >= len(hand.tiles):
            # Drop a pair without the required tile.
            for index in range(len(pairs) - 1, -1, -1):
                if required is None or required not in pairs[index]:
                    del pairs[index]
                    break
            else:
                return Arrangement(0, (), hand.tiles)
    melds = tuple(make_pair(pair, okey) for pair in pairs)
    used = {tile.id for pair in pairs for tile in pair}
    leftover = tuple(tile for tile in hand.tiles if tile.id not in used)
    okeys = tuple(
        (tile, face)
        for meld in melds
        for tile, face in zip(meld.tiles, meld.stands_for, strict=True)
        if okey.is_wild(tile)
    )
    return Arrangement(0, melds, leftover, okeys)
