"""What the scoring service checks before it stores anything: pure functions, no I/O.

``check_hand`` reads a RecordHandRequest into a ``CheckedHand``: the ids and seats well formed,
the final state a valid engine state that has ended (``platform.convert``), the deal's revealed
seed matching its commitment, and the result one the engine gives. The result is recomputed from
what the request carries:

1. the finish must be the one the final state shows: the winner's rack empty and theirs the last
   move; ``with_okey`` (the last discard is an okey), ``after_pairs`` (the winner opened with
   pairs), ``one_go`` and the multiplier as the engine's own finish rule reads that state under
   the rule set (``engine.hand``);
2. a stock-out has no finish and an empty stock; a void hand needs all four opened with pairs;
3. each seat's points, +101 points and penalty reasons must be what the engine's
   ``score_hand`` gives for that state, reason and finish; so must its score lines, where the
   request has them (a request without them gets the engine's: they are what is stored).

Anything else is INVALID_ARGUMENT: SCORE_MISMATCH naming the first field that differs, what was
reported and what the rules give; nothing is stored.

``check_match`` reads a RecordMatchRequest; ``replay_match`` then adds up the recorded hands with
the engine's ``match.record_hand`` and checks the reported totals, winners and team totals (a
match its table's deadline cut short, ``ended_by_deadline``, ends with its last hand).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from okey.v1 import common_pb2, scoring_pb2

from okey101.engine import hand as engine_hand
from okey101.engine.hand import SEATS, HandState
from okey101.engine.match import MatchState, new_match, record_hand
from okey101.engine.result import EndReason, Finish, HandResult, ScoreLine
from okey101.engine.rules import RuleSet
from okey101.engine.scoring import score_hand
from okey101.engine.seat import OpenedAs, PenaltyReason
from okey101.platform import convert
from okey101.platform.idempotency import fingerprint
from okey101.platform.ids import check_id, check_request_id, shown_value
from okey101.scoring.errors import Conflict, Invalid

HEX: Final = re.compile(r"(?:[0-9a-fA-F]{2})*")
NAME_LENGTH: Final = 256


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """Who held a seat: ``player_id`` is the seat's player (empty for a bot seat of its own),
    ``bot`` that a bot played all of it (then it is neither rated nor counted in the player's
    hand statistics)."""

    seat: int
    player_id: str
    display_name: str
    bot: bool


@dataclass(frozen=True, slots=True)
class CheckedHand:
    request: scoring_pb2.RecordHandRequest
    #: The request's fingerprint (``platform.idempotency``: without its request id and locale),
    #: what must be the same for a delivery to be "the same" (a retry with a new request id, or
    #: in another language, is).
    fingerprint: bytes
    seats: tuple[SeatInfo, ...]
    state: HandState
    result: HandResult
    #: Each seat's penalty reasons, as scored (none for a void hand).
    penalties: tuple[tuple[PenaltyReason, ...], ...]
    end_time_us: int

    @property
    def rules(self) -> RuleSet:
        return self.state.rules


@dataclass(frozen=True, slots=True)
class CheckedMatch:
    request: scoring_pb2.RecordMatchRequest
    #: The request's fingerprint (``platform.idempotency``: without its request id and locale),
    #: what must be the same for a delivery to be "the same" (a retry with a new request id, or
    #: in another language, is).
    fingerprint: bytes
    seats: tuple[SeatInfo, ...]
    rules: RuleSet
    hand_ids: tuple[str, ...]


# --------------------------------------------------------------------------------------------
# Small checks


def check_seats(
    seats: Sequence[scoring_pb2.SeatPlayer], field: str = "seats"
) -> tuple[SeatInfo, ...]:
    """Four seats in order 0-3. A seat a person played has their player id; a bot seat may
    name the player whose seat a bot kept for the whole hand or match (scoring.proto's
    SeatPlayer), or no one. A player holds one seat at most."""
    if len(seats) != SEATS:
        raise Invalid("WRONG_SEAT_COUNT", seats=len(seats), field=field)
    out = []
    seen: set[str] = set()
    for index, seat in enumerate(seats):
        where = f"{field}[{index}]"
        if seat.seat != index:
            raise Invalid("BAD_FIELD", field=f"{where}.seat", value=str(seat.seat))
        check_id(seat.player_id, f"{where}.player_id", required=not seat.bot)
        if seat.player_id:
            if seat.player_id in seen:
                raise Invalid("DUPLICATE_PLAYER", player_id=seat.player_id, field=where)
            seen.add(seat.player_id)
        if len(seat.display_name) > NAME_LENGTH:
            raise Invalid("BAD_FIELD", field=f"{where}.display_name", value="too long")
        out.append(SeatInfo(index, seat.player_id, seat.display_name, seat.bot))
    return tuple(out)


def _check_deal(deal: common_pb2.DealRecord, hand_id: str) -> None:
    if deal.hand_id and deal.hand_id != hand_id:
        raise Invalid("BAD_FIELD", field="deal.hand_id", value=shown_value(deal.hand_id))
    commitment = deal.server_seed_sha256.lower()
    if not commitment:
        raise Invalid("FIELD_REQUIRED", field="deal.server_seed_sha256")
    if len(commitment) != 64 or not HEX.fullmatch(commitment):
        raise Invalid("BAD_FIELD", field="deal.server_seed_sha256", value=shown_value(commitment))
    if not deal.server_seed:
        raise Invalid("FIELD_REQUIRED", field="deal.server_seed")
    if not HEX.fullmatch(deal.server_seed):
        raise Invalid("BAD_FIELD", field="deal.server_seed", value="not hex")
    if hashlib.sha256(bytes.fromhex(deal.server_seed)).hexdigest() != commitment:
        raise Invalid("DEAL_SEED_MISMATCH", field="deal.server_seed")
    if len(deal.player_seeds) > SEATS:
        raise Invalid("BAD_FIELD", field="deal.player_seeds", value=f"{len(deal.player_seeds)}")
    for index, seed in enumerate(deal.player_seeds):
        if not HEX.fullmatch(seed) or len(seed) > 256:
            raise Invalid("BAD_FIELD", field=f"deal.player_seeds[{index}]", value="not hex")


def timestamp_us(stamp: object) -> int:
    seconds = int(getattr(stamp, "seconds", 0))
    nanos = int(getattr(stamp, "nanos", 0))
    return seconds * 1_000_000 + nanos // 1000


# --------------------------------------------------------------------------------------------
# RecordHand


def _mismatch(field: str, reported: object, expected: object) -> Invalid:
    return Invalid("SCORE_MISMATCH", field=field, reported=str(reported), expected=str(expected))


def expected_finish(state: HandState, winner: int) -> Finish:
    """The finish the engine gave ``winner`` in this final state (module docstring, 1)."""
    where = "final_state.result.finish.winner_seat"
    me = state.seats[winner]
    if me.rack or not me.discards or state.turn != winner:
        finished = [i for i, seat in enumerate(state.seats) if not seat.rack]
        raise _mismatch(where, winner, finished[0] if finished else "no seat finished")
    # The engine's own finish rule reads the seat's opening, the turn and this turn's play,
    # none of which the finishing discard changes: the final state reads as the state it was
    # computed from.
    return engine_hand.finish_of(state, winner, me.discards[-1])


def expected_result(state: HandState, reported: HandResult) -> HandResult:
    """The engine's result for the final state, ended as reported (module docstring)."""
    field = "final_state.result"
    finish: Finish | None = None
    if reported.reason is EndReason.FINISHED:
        assert reported.finish is not None
        finish = expected_finish(state, reported.finish.winner)
        for name in ("with_okey", "after_pairs", "one_go", "multiplier"):
            told, due = getattr(reported.finish, name), getattr(finish, name)
            if told != due:
                raise _mismatch(f"{field}.finish.{name}", told, due)
    elif reported.reason is EndReason.STOCK_OUT:
        if state.stock:
            raise _mismatch(f"{field}.reason", "HAND_END_REASON_STOCK_OUT", "the stock is not out")
        if any(not seat.rack for seat in state.seats):
            raise _mismatch(f"{field}.reason", "HAND_END_REASON_STOCK_OUT", "a finish")
    elif not (
        state.rules.all_pairs_voids_hand
        and all(seat.opened_as is OpenedAs.PAIRS for seat in state.seats)
    ):
        raise _mismatch(f"{field}.reason", "HAND_END_REASON_VOID", "not all four opened with pairs")
    return score_hand(state, reported.reason, finish)


def _reasons(values: Sequence[int]) -> str:
    names = common_pb2.PenaltyReason.DESCRIPTOR.values_by_number
    return ",".join(names[v].name if v in names else str(v) for v in values) or "none"


def _lines(lines: Sequence[ScoreLine]) -> str:
    return " + ".join(f"{line.kind.value} {line.points}" for line in lines) or "none"


def check_hand(request: scoring_pb2.RecordHandRequest) -> CheckedHand:
    """The request read and checked (module docstring); ``Invalid`` if it is not a hand the
    engine could have ended so."""
    check_request_id(request.request_id)
    hand_id = check_id(request.hand_id, "hand_id")
    check_id(request.match_id, "match_id")
    check_id(request.table_id, "table_id")
    check_id(request.tournament_id, "tournament_id", required=False)
    if request.hand_number < 1:
        raise Invalid("BAD_FIELD", field="hand_number", value=str(request.hand_number))
    seats = check_seats(request.seats)
    if not request.HasField("final_state"):
        raise Invalid("FIELD_REQUIRED", field="final_state")
    if not request.HasField("deal"):
        raise Invalid("FIELD_REQUIRED", field="deal")
    if not request.HasField("end_time"):
        raise Invalid("FIELD_REQUIRED", field="end_time")
    _check_deal(request.deal, hand_id)
    state = convert.hand_state_from_proto(request.final_state, field="final_state")
    reported = state.result
    if reported is None:
        raise Invalid("HAND_NOT_ENDED", hand_id=hand_id)
    message = request.final_state.result
    if reported.reason is not EndReason.FINISHED and message.HasField("finish"):
        raise _mismatch("final_state.result.finish", "set", "unset (no finish)")
    expected = expected_result(state, reported)
    void = reported.reason is EndReason.VOID
    penalties = tuple(() if void else seat.penalties for seat in state.seats)
    for seat in range(SEATS):
        where = f"final_state.result.scores[{seat}]"
        if reported.scores[seat] != expected.scores[seat]:
            raise _mismatch(f"{where}.points", reported.scores[seat], expected.scores[seat])
        if reported.penalties[seat] != expected.penalties[seat]:
            raise _mismatch(
                f"{where}.penalty_points", reported.penalties[seat], expected.penalties[seat]
            )
        told = [int(value) for value in message.scores[seat].penalties]
        due = [int(convert.penalty_reason_to_proto(reason)) for reason in penalties[seat]]
        if told != due:
            raise _mismatch(f"{where}.penalties", _reasons(told), _reasons(due))
        if reported.lines and reported.lines[seat] != expected.lines[seat]:
            raise _mismatch(
                f"{where}.lines", _lines(reported.lines[seat]), _lines(expected.lines[seat])
            )
    return CheckedHand(
        request=request,
        fingerprint=fingerprint(request),
        seats=seats,
        state=state,
        result=expected,
        penalties=penalties,
        end_time_us=timestamp_us(request.end_time),
    )


# --------------------------------------------------------------------------------------------
# RecordMatch


def check_match(request: scoring_pb2.RecordMatchRequest) -> CheckedMatch:
    """The request's own consistency; what it claims about the hands is ``replay_match``'s."""
    check_request_id(request.request_id)
    if not request.HasField("result"):
        raise Invalid("FIELD_REQUIRED", field="result")
    result = request.result
    check_id(result.match_id, "result.match_id")
    check_id(result.table_id, "result.table_id")
    check_id(request.tournament_id, "tournament_id", required=False)
    if not request.tournament_id and request.tournament_round:
        raise Invalid("BAD_FIELD", field="tournament_round", value=f"{request.tournament_round}")
    seats = check_seats(request.seats)
    if len(result.seats) != SEATS:
        raise Invalid("WRONG_SEAT_COUNT", seats=len(result.seats), field="result.seats")
    for index, line in enumerate(result.seats):
        if line.seat != index:
            raise Invalid("BAD_FIELD", field=f"result.seats[{index}].seat", value=f"{line.seat}")
        if line.player_id != seats[index].player_id:
            raise Invalid(
                "BAD_FIELD",
                field=f"result.seats[{index}].player_id",
                value=shown_value(line.player_id),
            )
    if not result.hand_ids:
        raise Invalid("FIELD_REQUIRED", field="result.hand_ids")
    hand_ids = tuple(result.hand_ids)
    for index, hand_id in enumerate(hand_ids):
        check_id(hand_id, f"result.hand_ids[{index}]")
    if len(set(hand_ids)) != len(hand_ids):
        raise Invalid("BAD_FIELD", field="result.hand_ids", value="a hand listed twice")
    rules = convert.rules_from_proto(request.rules, field="rules")
    new_match(rules)  # the engine's own check of the match knobs
    return CheckedMatch(
        request=request,
        fingerprint=fingerprint(request),
        seats=seats,
        rules=rules,
        hand_ids=hand_ids,
    )


def replay_match(checked: CheckedMatch, results: Sequence[HandResult]) -> MatchState:
    """The match the engine makes of its hands in order; the reported result must be it."""
    match_id = checked.request.result.match_id
    match = new_match(checked.rules)
    # A table's match deadline may have cut the match short: it ends with its last hand.
    cut_short = checked.request.result.ended_by_deadline
    for index, result in enumerate(results):
        if match.ended:
            raise Conflict("MATCH_NOT_OVER", match_id=match_id, field="result.hand_ids")
        match = record_hand(match, result, last=cut_short and index == len(results) - 1)
    if not match.ended:
        raise Conflict("MATCH_NOT_OVER", match_id=match_id)
    reported = checked.request.result
    for seat, line in enumerate(reported.seats):
        where = f"result.seats[{seat}]"
        if line.total != match.totals[seat]:
            raise _mismatch(f"{where}.total", line.total, match.totals[seat])
        if line.winner != (seat in match.winners):
            raise _mismatch(f"{where}.winner", line.winner, seat in match.winners)
    teams = list(match.team_totals()) if checked.rules.partners else []
    if list(reported.team_totals) != teams:
        shown = ",".join(str(total) for total in teams) or "none"
        told = ",".join(str(total) for total in reported.team_totals) or "none"
        raise _mismatch("result.team_totals", told, shown)
    if reported.hands_played != match.hands_played:
        raise _mismatch("result.hands_played", reported.hands_played, match.hands_played)
    if reported.ended_by_deadline != match.cut_short:
        raise _mismatch("result.ended_by_deadline", reported.ended_by_deadline, match.cut_short)
    return match


def rules_json(rules: RuleSet) -> str:
    """A rule set as canonical JSON (every knob, sorted): equal sets, equal strings."""
    return json.dumps(rules.knobs(), sort_keys=True, separators=(",", ":"))


def rules_from_json(text: str) -> RuleSet:
    knobs = json.loads(text)
    name = knobs.pop("name")
    return RuleSet.preset(name).with_overrides(knobs)


__all__ = [
    "CheckedHand",
    "CheckedMatch",
    "SeatInfo",
    "check_hand",
    "check_id",
    "check_match",
    "check_request_id",
    "check_seats",
    "expected_finish",
    "expected_result",
    "replay_match",
    "rules_from_json",
    "rules_json",
    "timestamp_us",
]
