"""How a hand ended: its Finish and its HandResult, with each seat's score lines."""

from __future__ import annotations

from okey.v1 import common_pb2

from okey101.engine.errors import InvalidInput
from okey101.engine.hand import SEATS, HandState
from okey101.engine.result import EndReason, Finish, HandResult, ScoreLine
from okey101.platform.convert.enums import (
    DOUBLINGS,
    DOUBLINGS_BACK,
    END_REASONS,
    OPENINGS,
    PENALTIES,
    SCORE_LINE_KINDS,
    SCORE_LINE_KINDS_BACK,
    end_reason_from_proto,
    enum_from_proto,
    penalty_reason_from_proto,
)
from okey101.platform.convert.limits import MAX_COUNT, bad_field


def finish_to_proto(finish: Finish) -> common_pb2.Finish:
    return common_pb2.Finish(
        winner_seat=finish.winner,
        with_okey=finish.with_okey,
        after_pairs=finish.after_pairs,
        one_go=finish.one_go,
        multiplier=finish.multiplier,
    )


def finish_from_proto(message: common_pb2.Finish, *, field: str = "finish") -> Finish:
    if message.winner_seat >= SEATS:
        raise InvalidInput("UNKNOWN_SEAT", seat=message.winner_seat, field=f"{field}.winner_seat")
    if message.multiplier not in (1, 2, 4, 8):
        raise bad_field(f"{field}.multiplier", message.multiplier)
    return Finish(
        message.winner_seat,
        message.with_okey,
        message.after_pairs,
        message.one_go,
        message.multiplier,
    )


def score_line_to_proto(line: ScoreLine) -> common_pb2.ScoreLine:
    message = common_pb2.ScoreLine(
        kind=SCORE_LINE_KINDS[line.kind],
        points=line.points,
        count=line.count,
        doubled_for=[DOUBLINGS[reason] for reason in line.doubled_for],
    )
    if line.penalty is not None:
        message.penalty_reason = PENALTIES[line.penalty]
    return message


def score_line_from_proto(message: common_pb2.ScoreLine, *, field: str) -> ScoreLine:
    """A score line as sent; BAD_FIELD for an unknown kind, doubling or penalty reason."""
    kind = enum_from_proto(SCORE_LINE_KINDS_BACK, message.kind, f"{field}.kind", "ScoreLineKind")
    if len(message.doubled_for) > MAX_COUNT:
        raise bad_field(f"{field}.doubled_for", f"{len(message.doubled_for)} reasons")
    doubled_for = tuple(
        enum_from_proto(DOUBLINGS_BACK, value, f"{field}.doubled_for[{i}]", "DoublingReason")
        for i, value in enumerate(message.doubled_for)
    )
    penalty = None
    if message.penalty_reason:
        penalty = penalty_reason_from_proto(message.penalty_reason, field=f"{field}.penalty_reason")
    return ScoreLine(kind, message.points, message.count, doubled_for, penalty)


def hand_result_to_proto(result: HandResult, state: HandState) -> common_pb2.HandResult:
    """A hand's result; each seat's penalty reasons and opening come from ``state`` (no
    penalties for a void hand, whose +101s are wiped), its score lines from ``result``."""
    message = common_pb2.HandResult(reason=END_REASONS[result.reason])
    if result.finish is not None:
        message.finish.CopyFrom(finish_to_proto(result.finish))
    void = result.reason is EndReason.VOID
    for seat, (points, penalty_points) in enumerate(
        zip(result.scores, result.penalties, strict=True)
    ):
        reasons = () if void else state.seats[seat].penalties
        message.scores.add(
            seat=seat,
            points=points,
            penalty_points=penalty_points,
            penalties=[PENALTIES[reason] for reason in reasons],
            opened_as=OPENINGS[state.seats[seat].opened_as],
            lines=[score_line_to_proto(line) for line in result_lines(result, seat)],
        )
    return message


def result_lines(result: HandResult, seat: int) -> tuple[ScoreLine, ...]:
    """A seat's score lines (none where the result has none)."""
    return result.lines[seat] if result.lines else ()


def hand_result_from_proto(message: common_pb2.HandResult, *, field: str = "result") -> HandResult:
    reason = end_reason_from_proto(message.reason, field=f"{field}.reason")
    finish: Finish | None = None
    if reason is EndReason.FINISHED:
        if not message.HasField("finish"):
            raise bad_field(f"{field}.finish", "unset")
        finish = finish_from_proto(message.finish, field=f"{field}.finish")
    if len(message.scores) != SEATS:
        raise bad_field(f"{field}.scores", f"{len(message.scores)} seats")
    lines = []
    for index, score in enumerate(message.scores):
        if score.seat != index:
            raise InvalidInput("UNKNOWN_SEAT", seat=score.seat, field=f"{field}.scores[{index}]")
        if len(score.lines) > MAX_COUNT:
            raise bad_field(f"{field}.scores[{index}].lines", f"{len(score.lines)} lines")
        lines.append(
            tuple(
                score_line_from_proto(line, field=f"{field}.scores[{index}].lines[{i}]")
                for i, line in enumerate(score.lines)
            )
        )
    # Lines are read where every seat has some (a void hand has none).
    return HandResult(
        reason,
        finish,
        tuple(score.points for score in message.scores),
        tuple(score.penalty_points for score in message.scores),
        tuple(lines) if all(lines) else (),
    )
