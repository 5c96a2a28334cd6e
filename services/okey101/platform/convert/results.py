"""How a hand ended: its Finish and its HandResult."""

from __future__ import annotations

from okey.v1 import common_pb2

from okey101.engine.errors import InvalidInput
from okey101.engine.hand import SEATS, HandState
from okey101.engine.result import EndReason, Finish, HandResult
from okey101.platform.convert.enums import END_REASONS, PENALTIES, end_reason_from_proto
from okey101.platform.convert.limits import bad_field


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


def hand_result_to_proto(result: HandResult, state: HandState) -> common_pb2.HandResult:
    """A hand's result; each seat's penalty reasons come from ``state`` (none for a void hand,
    whose +101s are wiped)."""
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
        )
    return message


def hand_result_from_proto(message: common_pb2.HandResult, *, field: str = "result") -> HandResult:
    reason = end_reason_from_proto(message.reason, field=f"{field}.reason")
    finish: Finish | None = None
    if reason is EndReason.FINISHED:
        if not message.HasField("finish"):
            raise bad_field(f"{field}.finish", "unset")
        finish = finish_from_proto(message.finish, field=f"{field}.finish")
    if len(message.scores) != SEATS:
        raise bad_field(f"{field}.scores", f"{len(message.scores)} seats")
    for index, score in enumerate(message.scores):
        if score.seat != index:
            raise InvalidInput("UNKNOWN_SEAT", seat=score.seat, field=f"{field}.scores[{index}]")
    return HandResult(
        reason,
        finish,
        tuple(score.points for score in message.scores),
        tuple(score.penalty_points for score in message.scores),
    )
