"""What the selection is worth, as the line under the rack shows it: a group's verdict from
RulesService.ValidateMelds (its kind, tiles, value and what each okey stands for, or the first
reason it is no meld) and the opening's total against its minimum (ValidateOpening)."""

from __future__ import annotations

from collections.abc import Sequence

from okey.v1 import common_pb2, rules_pb2
from rich.text import Text

from okey101.client.i18n import Strings
from okey101.client.render import face_name, meld_text, tiles_plain

_KIND_KEYS = {
    common_pb2.MELD_KIND_RUN: "kind_run",
    common_pb2.MELD_KIND_SET: "kind_set",
    common_pb2.MELD_KIND_PAIR: "kind_pair",
}


def verdict_line(
    verdict: rules_pb2.MeldVerdict, tiles: Sequence[common_pb2.Tile], s: Strings
) -> Text:
    """ "run R5 R6 ★Y6=R7 = 18", or the tiles and the first reason they are not a meld."""
    if not verdict.valid:
        reason = verdict.violations[0].message if verdict.violations else "?"
        return Text(
            s("group_invalid", tiles=tiles_plain(tiles, s.language), reason=reason), style="red"
        )
    meld = verdict.meld
    out = Text(s(_KIND_KEYS.get(meld.kind, "kind_run")) + " ", style="green")
    out.append_text(meld_text(meld, s.language))
    if meld.kind != common_pb2.MELD_KIND_PAIR:
        out.append(f" = {meld.value}")
    stands = [
        s(
            "okey_stands_for",
            okey="★" if item.tile.wild else "◆",
            face=face_name(item.stands_for, s.language),
        )
        for item in meld.tiles
        if item.tile.wild and item.HasField("stands_for")
    ]
    if stands:
        out.append(f" ({', '.join(stands)})", style="dim")
    return out


def opening_line(opening: rules_pb2.ValidateOpeningResponse, s: Strings) -> Text:
    if opening.kind == common_pb2.OPENING_KIND_PAIRS:
        line = Text(s("opening_pairs", count=opening.pair_count, minimum=opening.minimum))
    else:
        line = Text(s("opening_total", value=opening.value, minimum=opening.minimum))
    if opening.valid:
        line.append(" ✓ " + s("opening_ok"), style="bold green")
    elif opening.violations:
        line.append(" · " + opening.violations[0].message, style="yellow")
    return line


__all__ = ["opening_line", "verdict_line"]
