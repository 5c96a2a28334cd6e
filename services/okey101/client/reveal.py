"""The hand's end, face up, as the score sheet shows it above its rows: each seat's rack, how it
opened and why it scored what it did (HAND_ENDED's score lines), then the match's totals and
its target."""

from __future__ import annotations

from okey.v1 import common_pb2
from rich.text import Text

from okey101.client.i18n import Strings
from okey101.client.model import TableModel, match_target, score_reasons
from okey101.client.render import tiles_text


def reveal_lines(model: TableModel, names: list[str], s: Strings, hand_number: int) -> list[Text]:
    """The hand's end, face up: each seat's rack, how it opened and why it scored what it
    did (its score lines), then the match's totals and its target."""
    result = model.hand_results.get(hand_number)
    if result is None:
        return []
    racks = {rack.seat: rack for rack in model.revealed.get(hand_number, [])}
    kinds = {
        common_pb2.OPENING_KIND_RUNS: "opened_runs",
        common_pb2.OPENING_KIND_PAIRS: "opened_pairs",
    }
    out = []
    for score in result.scores:
        if score.seat >= len(names):
            continue
        line = Text(f"{names[score.seat]}", style="bold")
        line.append(f" ({s(kinds.get(score.opened_as, 'not_opened'))}) ", style="dim")
        rack = racks.get(score.seat)
        if rack is not None and rack.tiles:
            line.append_text(tiles_text(rack.tiles, language=s.language))
        elif rack is not None:
            line.append(s("reveal_empty_rack"), style="dim")
        reasons = score_reasons(s, score)
        line.append("  " + (reasons or f"{score.points:+d}"))
        out.append(line)
    progress = model.progress.get(hand_number)
    if progress is not None and progress.totals:
        totals = " · ".join(
            f"{names[seat]} {total}"
            for seat, total in enumerate(progress.totals)
            if seat < len(names)
        )
        target = match_target(s, progress.match_end, progress.target_total, progress.match_hands)
        played = s("reveal_hands", played=progress.hands_played)
        out.append(
            Text(s("reveal_totals", totals=totals, target=f"{target} · {played}"), style="bold")
        )
    return out


__all__ = ["reveal_lines"]
