"""The scoring service's rows as ``scoring_pb2`` messages (scoring.proto), and the enum maps
between the two. Answers that are stored (RecordHand's sheet row, RecordMatch's rating changes)
are built here inside the transaction that stores them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from google.protobuf.timestamp_pb2 import Timestamp
from okey.v1 import common_pb2, scoring_pb2

from okey101.engine.result import Doubling, EndReason, ScoreLine, ScoreLineKind
from okey101.engine.seat import OpenedAs, PenaltyReason
from okey101.platform import convert
from okey101.scoring import ratings
from okey101.scoring.records import RecordedHand

END_REASONS: Final = {
    EndReason.FINISHED: common_pb2.HAND_END_REASON_FINISHED,
    EndReason.STOCK_OUT: common_pb2.HAND_END_REASON_STOCK_OUT,
    EndReason.VOID: common_pb2.HAND_END_REASON_VOID,
}
PRESETS: Final[dict[str, common_pb2.RulePreset]] = {
    "oyna": common_pb2.RULE_PRESET_OYNA,
    "boombala": common_pb2.RULE_PRESET_BOOMBALA,
    "north_sultan": common_pb2.RULE_PRESET_NORTH_SULTAN,
}


def timestamp(us: int) -> Timestamp:
    return Timestamp(seconds=us // 1_000_000, nanos=(us % 1_000_000) * 1000)


def penalties_of(text: str) -> list[common_pb2.PenaltyReason]:
    """A seat's stored penalty reasons (comma-separated engine names) as the proto's."""
    return [
        convert.penalty_reason_to_proto(PenaltyReason(name)) for name in text.split(",") if name
    ]


def lines_json(lines: Sequence[ScoreLine]) -> str:
    """A seat's score lines as stored (``models.hand_seats.score_lines``)."""
    out = []
    for line in lines:
        item: dict[str, Any] = {"kind": line.kind.value, "points": line.points}
        if line.count:
            item["count"] = line.count
        if line.doubled_for:
            item["doubled_for"] = [reason.value for reason in line.doubled_for]
        if line.penalty is not None:
            item["penalty"] = line.penalty.value
        out.append(item)
    return json.dumps(out, separators=(",", ":"))


def lines_of(text: str) -> list[common_pb2.ScoreLine]:
    """Stored score lines as the proto's."""
    lines = []
    for item in json.loads(text or "[]"):
        penalty = item.get("penalty")
        lines.append(
            convert.score_line_to_proto(
                ScoreLine(
                    ScoreLineKind(item["kind"]),
                    int(item["points"]),
                    int(item.get("count", 0)),
                    tuple(Doubling(reason) for reason in item.get("doubled_for", ())),
                    None if penalty is None else PenaltyReason(penalty),
                )
            )
        )
    return lines


def opening_of(text: str) -> common_pb2.OpeningKind:
    """A stored opening (runs, pairs or "" for none) as the proto's."""
    return convert.opened_as_to_proto(OpenedAs(text) if text else None)


def sheet_row(
    hand: RecordedHand, running: Sequence[int], *, partners: bool
) -> scoring_pb2.ScoreSheetRow:
    """A recorded hand's line of the score sheet, with the running totals after it."""
    row = hand.row
    message = scoring_pb2.ScoreSheetRow(
        hand_number=row.hand_number,
        hand_id=row.hand_id,
        reason=END_REASONS[hand.reason],
        marks=scoring_pb2.HandMarks(
            with_okey=row.with_okey,
            after_pairs=row.after_pairs,
            one_go=row.one_go,
            multiplier=row.multiplier,
        ),
        running_totals=list(running),
        end_time=timestamp(row.end_time_us),
    )
    if row.winner_seat is not None:
        message.winner_seat = row.winner_seat
    for seat in hand.seats:
        message.scores.add(
            seat=seat.seat,
            points=seat.points,
            penalty_points=seat.penalty_points,
            penalties=penalties_of(seat.penalties),
            opened_as=opening_of(seat.opened_as),
            lines=lines_of(seat.score_lines),
        )
    if partners:
        message.running_team_totals.extend([running[0] + running[2], running[1] + running[3]])
    return message


def seat_player(row: Any) -> scoring_pb2.SeatPlayer:
    """Who held a seat, from a match line or a hand's seat row."""
    return scoring_pb2.SeatPlayer(
        seat=row.seat, player_id=row.player_id, display_name=row.display_name, bot=row.bot
    )


def rating_message(rating: ratings.Rating) -> scoring_pb2.Rating:
    return scoring_pb2.Rating(
        mu=rating.mu, sigma=rating.sigma, ordinal=rating.ordinal, matches=rating.matches
    )


def mode_message(mode: str) -> scoring_pb2.RatingMode:
    return (
        scoring_pb2.RATING_MODE_PARTNERS
        if mode == ratings.PARTNERS
        else scoring_pb2.RATING_MODE_FREE_FOR_ALL
    )


def rating_change(
    player_id: str, mode: str, before: ratings.Rating, after: ratings.Rating
) -> scoring_pb2.RatingChange:
    return scoring_pb2.RatingChange(
        player_id=player_id,
        mode=mode_message(mode),
        before=rating_message(before),
        after=rating_message(after),
    )


def player_match(row: Any, change: Any | None) -> scoring_pb2.PlayerMatch:
    """A player's line of an ended match (a ``scoring_match_players`` row joined with its
    table id) and what it did to their rating over every preset (a ``scoring_rating_changes``
    row, if it was rated)."""
    message = scoring_pb2.PlayerMatch(
        match_id=row.match_id,
        table_id=row.table_id,
        tournament_id=row.tournament_id,
        preset=PRESETS.get(row.preset, common_pb2.RULE_PRESET_UNSPECIFIED),
        seat=row.seat,
        total=row.total,
        place=row.place,
        winner=row.winner,
        hands_played=row.hands_played,
        end_time=timestamp(row.ended_at_us),
    )
    if change is not None:
        message.rating_change.CopyFrom(
            rating_change(
                row.player_id,
                change.mode,
                ratings.Rating(change.mu_before, change.sigma_before, change.matches_before),
                ratings.Rating(change.mu_after, change.sigma_after, change.matches_after),
            )
        )
    return message


__all__ = [
    "END_REASONS",
    "PRESETS",
    "mode_message",
    "penalties_of",
    "player_match",
    "rating_change",
    "rating_message",
    "seat_player",
    "sheet_row",
    "timestamp",
]
