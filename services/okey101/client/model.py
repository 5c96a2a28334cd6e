"""What the client knows of its table between messages, and how it tells the player about it.

``TableModel`` keeps the latest view (a WatchTable view, an Act answer or a GetSeatView answer,
whichever is newest by ``as_of_sequence``) and reads every event: an event the view does not yet
include makes the view stale, and the screen fetches a fresh one (GetSeatView). The server is the
authority for everything a view holds (playable tiles, who may take what); the client does not
replay the rules on events, it only says what happened (``describe``), tracks the turn's
deadline, and notices hands and matches ending.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from okey.v1 import common_pb2, scoring_pb2

from okey101.client.i18n import CATALOGUE, Strings
from okey101.client.render import meld_plain, tiles_plain
from okey101.client.shown import shown

_PENALTY_KEYS = {
    common_pb2.PENALTY_REASON_OKEY_DISCARDED: "reason_okey",
    common_pb2.PENALTY_REASON_PLAYABLE_DISCARDED: "reason_playable",
    common_pb2.PENALTY_REASON_GAVE_BACK: "reason_gave_back",
    common_pb2.PENALTY_REASON_CHARGED_BEFORE: "reason_before",
}


@dataclass(frozen=True)
class EventOutcome:
    """What an event means for the screen."""

    #: The view no longer shows everything: fetch a fresh one.
    stale: bool
    #: A hand ended (the event carries its result).
    hand_ended: bool = False
    #: The match ended (the event carries its result).
    match_ended: bool = False
    #: The table closed: no more events.
    closed: bool = False


class TableModel:
    """The latest view of a table and a log of what happened at it."""

    def __init__(self, strings: Strings, seat: int | None, log_size: int = 200) -> None:
        self.strings = strings
        self.seat = seat
        self.view: common_pb2.SeatView | None = None
        self.last_sequence = 0
        self.deadline: datetime | None = None
        self.log: deque[str] = deque(maxlen=log_size)
        self.hand_results: dict[int, common_pb2.HandResult] = {}
        self.match_result: common_pb2.MatchResult | None = None
        self.names: dict[int, str] = {}
        #: Each hand's match totals before its result (SeatView.match_totals), by hand number.
        self.totals_before: dict[int, tuple[int, ...]] = {}
        #: Each ended hand's racks, face up (HAND_ENDED's revealed_racks), by hand number.
        self.revealed: dict[int, list[common_pb2.RevealedRack]] = {}
        #: The match after each ended hand: totals and what ends it (HAND_ENDED).
        self.progress: dict[int, common_pb2.MatchProgress] = {}

    # Views -------------------------------------------------------------------------------------

    def on_view(self, view: common_pb2.SeatView) -> bool:
        """Take ``view`` if it is at least as new as the one held; whether it was taken."""
        if self.view is not None and view.as_of_sequence < self.view.as_of_sequence:
            return False
        self.view = view
        self.last_sequence = max(self.last_sequence, view.as_of_sequence)
        self.deadline = (
            view.turn_deadline.ToDatetime(tzinfo=UTC) if view.HasField("turn_deadline") else None
        )
        if view.hand_number:
            self.totals_before[view.hand_number] = tuple(view.match_totals)
        for public in view.seats:
            if public.HasField("occupant") and public.occupant.display_name:
                self.names[public.seat] = public.occupant.display_name
        return True

    @property
    def stale(self) -> bool:
        return self.view is None or self.view.as_of_sequence < self.last_sequence

    # Events ------------------------------------------------------------------------------------

    def on_event(self, event: common_pb2.Event) -> EventOutcome:
        self.last_sequence = max(self.last_sequence, event.sequence)
        kind = event.kind
        if kind == common_pb2.EVENT_KIND_TURN_STARTED:
            self.deadline = (
                event.turn_deadline.ToDatetime(tzinfo=UTC)
                if event.HasField("turn_deadline")
                else None
            )
        if event.HasField("occupant") and event.occupant.display_name:
            self.names[event.occupant.seat] = event.occupant.display_name
        line = self.describe(event)
        if line:
            self.log.append(line)
        if kind == common_pb2.EVENT_KIND_HAND_ENDED:
            self.hand_results[event.hand_number] = event.hand_result
            self.revealed[event.hand_number] = list(event.revealed_racks)
            if event.HasField("match_progress"):
                self.progress[event.hand_number] = event.match_progress
        if kind == common_pb2.EVENT_KIND_MATCH_ENDED:
            self.match_result = event.match_result
        return EventOutcome(
            stale=self.stale,
            hand_ended=kind == common_pb2.EVENT_KIND_HAND_ENDED,
            match_ended=kind == common_pb2.EVENT_KIND_MATCH_ENDED,
            closed=kind == common_pb2.EVENT_KIND_TABLE_CLOSED,
        )

    def name(self, seat: int) -> str:
        """How a seat is called on screen: "you" for the viewer's own, else the occupant's
        name, else "Seat N"."""
        if self.seat is not None and seat == self.seat:
            return self.strings("you")
        return shown(self.names.get(seat, "")) or self.strings("seat_label", seat=seat)

    def seconds_left(self, now: datetime) -> int | None:
        if self.deadline is None:
            return None
        return max(0, int((self.deadline - now).total_seconds() + 0.999))

    def describe(self, event: common_pb2.Event) -> str:
        """One line for the log, in the player's language; empty for events not worth one."""
        kind = event.kind
        seat_of = event.seat if event.HasField("seat") else None
        if kind == common_pb2.EVENT_KIND_SEAT_TAKEN and event.HasField("occupant"):
            seat_of = event.occupant.seat
        # The viewer's own seat has sentences of its own, the verb in the second person.
        own = self.seat is not None and seat_of == self.seat
        language = self.strings.language

        def s(key: str, **params: object) -> str:
            # The viewer's own moves have sentences of their own ("You took R7." / "R7 aldın.").
            if own and f"{key}_own" in CATALOGUE:
                return self.strings(f"{key}_own", **params)
            return self.strings(key, **params)

        name = self.name(event.seat) if event.HasField("seat") else ""
        tile = tiles_plain(event.tiles, language)
        simple = {
            common_pb2.EVENT_KIND_MATCH_STARTED: "ev_match_started",
            common_pb2.EVENT_KIND_TURN_TIMED_OUT: "ev_turn_timed_out",
            common_pb2.EVENT_KIND_STOCK_OUT: "ev_stock_out",
            common_pb2.EVENT_KIND_DECLINED_LAST_DISCARD: "ev_declined",
            common_pb2.EVENT_KIND_MATCH_ENDED: "ev_match_ended",
            common_pb2.EVENT_KIND_TABLE_CLOSED: "ev_table_closed",
            common_pb2.EVENT_KIND_TOOK: "ev_took",
            common_pb2.EVENT_KIND_GAVE_BACK: "ev_gave_back",
            common_pb2.EVENT_KIND_DISCARDED: "ev_discarded",
            common_pb2.EVENT_KIND_SEAT_LEFT: "ev_seat_left",
            common_pb2.EVENT_KIND_SEAT_AWAY: "ev_seat_away",
            common_pb2.EVENT_KIND_SEAT_BACK: "ev_seat_back",
        }
        if kind in simple:
            return s(simple[kind], name=name, tile=tile)
        if kind == common_pb2.EVENT_KIND_SEAT_TAKEN:
            seat = event.occupant.seat if event.HasField("occupant") else event.seat
            return s("ev_seat_taken", name=self.name(seat), seat=seat)
        if kind == common_pb2.EVENT_KIND_HAND_DEALT:
            return s("ev_hand_dealt", number=event.hand_number, name=name, tile=tile)
        if kind == common_pb2.EVENT_KIND_TURN_STARTED:
            return ""  # the state line says whose turn it is
        if kind == common_pb2.EVENT_KIND_DREW:
            if event.private_tiles:
                return s("ev_drew_own", tile=tiles_plain(event.private_tiles, language))
            return s("ev_drew", name=name)
        if kind == common_pb2.EVENT_KIND_PENALTY:
            reason = s(_PENALTY_KEYS.get(event.penalty_reason, "reason_before"))
            return s("ev_penalty", name=name, points=event.points, reason=reason)
        if kind == common_pb2.EVENT_KIND_OPENED:
            return s(
                "ev_opened", name=name, points=event.points, tiles=meld_plain(event.meld, language)
            )
        if kind == common_pb2.EVENT_KIND_MELDED:
            return s("ev_melded", name=name, tiles=meld_plain(event.meld, language))
        if kind == common_pb2.EVENT_KIND_LAID_OFF:
            return s("ev_laid_off", name=name, tiles=tile, index=event.meld_index)
        if kind == common_pb2.EVENT_KIND_TOOK_OKEY:
            return s("ev_took_okey", name=name, index=event.meld_index)
        if kind == common_pb2.EVENT_KIND_SHOWED_INDICATOR:
            return s("ev_showed_indicator", name=name, points=event.points)
        if kind == common_pb2.EVENT_KIND_HAND_ENDED:
            return s("ev_hand_ended", number=event.hand_number)
        return ""


# --------------------------------------------------------------------------------------------
# The score sheet, as the screen and ``simulate`` print it


@dataclass(frozen=True)
class SheetRow:
    hand_number: int
    note: str
    points: tuple[int, ...]
    totals: tuple[int, ...]


def hand_note(
    strings: Strings,
    reason: int,
    winner: int | None,
    marks: scoring_pb2.HandMarks | common_pb2.Finish | None,
    name: str,
    own: bool = False,
) -> str:
    """ "finished by X ×2 (with the okey)", "stock ran out", "void hand"."""
    if reason == common_pb2.HAND_END_REASON_VOID:
        return strings("sheet_void")
    if reason == common_pb2.HAND_END_REASON_STOCK_OUT or winner is None:
        return strings("sheet_stock_out")
    note = strings("sheet_finished_by_own") if own else strings("sheet_finished_by", name=name)
    if marks is not None:
        extras = [
            strings(key)
            for key, on in (
                ("sheet_with_okey", marks.with_okey),
                ("sheet_after_pairs", marks.after_pairs),
                ("sheet_one_go", marks.one_go),
            )
            if on
        ]
        if marks.multiplier > 1:
            note += " " + strings("sheet_doubled", multiplier=marks.multiplier)
        if extras:
            note += f" ({', '.join(extras)})"
    return note


_LINE_KEYS = {
    common_pb2.SCORE_LINE_KIND_FINISHED: "line_finished",
    common_pb2.SCORE_LINE_KIND_NEVER_OPENED: "line_never_opened",
    common_pb2.SCORE_LINE_KIND_RACK_SUM: "line_rack_sum",
    common_pb2.SCORE_LINE_KIND_OKEY_IN_HAND: "line_okey_in_hand",
    common_pb2.SCORE_LINE_KIND_DOUBLED: "line_doubled",
    common_pb2.SCORE_LINE_KIND_CAPPED: "line_capped",
    common_pb2.SCORE_LINE_KIND_INDICATOR_SHOWN: "line_indicator",
    common_pb2.SCORE_LINE_KIND_PENALTY: "line_penalty",
}
_DOUBLING_KEYS = {
    common_pb2.DOUBLING_REASON_OKEY_FINISH: "sheet_with_okey",
    common_pb2.DOUBLING_REASON_PAIRS_FINISH: "sheet_after_pairs",
    common_pb2.DOUBLING_REASON_ONE_GO: "sheet_one_go",
    common_pb2.DOUBLING_REASON_OPENED_WITH_PAIRS: "line_opened_with_pairs",
}


def score_reasons(strings: Strings, score: common_pb2.SeatScore) -> str:
    """A seat's points as its score lines say them: "rack 24 + okey 101 + ×2 (with the okey)
    +125 = 250"; empty where there are none (a void hand, a sheet from before lines)."""
    if not score.lines:
        return ""
    parts = []
    for line in score.lines:
        why = ", ".join(strings(_DOUBLING_KEYS.get(r, "sheet_one_go")) for r in line.doubled_for)
        if line.kind == common_pb2.SCORE_LINE_KIND_PENALTY:
            why = strings(_PENALTY_KEYS.get(line.penalty_reason, "reason_before"))
        key = _LINE_KEYS.get(line.kind, "line_rack_sum")
        parts.append(strings(key, points=f"{line.points:+d}", count=line.count, why=why))
    return strings("line_sum", lines=" ".join(parts), points=score.points)


def sheet_rows(
    sheet: scoring_pb2.ScoreSheet,
    strings: Strings,
    names: Sequence[str],
    own_seat: int | None = None,
) -> list[SheetRow]:
    """The rows of a ScoringService score sheet."""
    rows = []
    for row in sheet.rows:
        winner = row.winner_seat if row.HasField("winner_seat") else None
        name = names[winner] if winner is not None and winner < len(names) else ""
        rows.append(
            SheetRow(
                hand_number=row.hand_number,
                note=hand_note(
                    strings, row.reason, winner, row.marks, name, own=winner == own_seat
                ),
                points=tuple(score.points for score in row.scores),
                totals=tuple(row.running_totals),
            )
        )
    return rows


def rows_from_results(
    results: dict[int, common_pb2.HandResult],
    totals_before: dict[int, tuple[int, ...]],
    strings: Strings,
    names: Sequence[str],
    own_seat: int | None = None,
) -> list[SheetRow]:
    """Rows from the HAND_ENDED events the client saw, when scoring has not answered: each
    hand's points, and running totals from the view's match totals before that hand."""
    rows = []
    for number in sorted(results):
        result = results[number]
        winner = result.finish.winner_seat if result.HasField("finish") else None
        name = names[winner] if winner is not None and winner < len(names) else ""
        points = tuple(score.points for score in result.scores)
        before = tuple(totals_before.get(number, ())) or (0,) * len(points)
        totals = tuple(a + b for a, b in zip(before, points, strict=False))
        finish = result.finish if result.HasField("finish") else None
        own = winner is not None and winner == own_seat
        note = hand_note(strings, result.reason, winner, finish, name, own=own)
        rows.append(SheetRow(number, note, points, totals))
    return rows


# --------------------------------------------------------------------------------------------
# The match's target, as the title and the reveal say it


def number_text(strings: Strings, value: int) -> str:
    """``1,000`` in English, ``1.000`` in Turkish."""
    text = f"{value:,}"
    return text.replace(",", ".") if strings.language == "tr" else text


def match_target(strings: Strings, match_end: int, target_total: int, match_hands: int) -> str:
    """What ends the match: "to 1,000" / "1.000 puanlık maç", "of 8 hands" / "8 ellik maç";
    empty where the rules do not say."""
    if match_end == common_pb2.MATCH_END_TARGET_TOTAL and target_total:
        return strings("target_total", target=number_text(strings, target_total))
    if match_end == common_pb2.MATCH_END_FIXED_HANDS and match_hands:
        return strings("target_hands", hands=match_hands)
    return ""


def view_target(strings: Strings, view: common_pb2.SeatView) -> str:
    """The match's target from a view's rule set (the rules' own default where unset)."""
    rules = view.rules
    target = rules.match_target if rules.HasField("match_target") else 1000
    hands = rules.match_hands if rules.HasField("match_hands") else 0
    return match_target(strings, rules.match_end, target, hands)
