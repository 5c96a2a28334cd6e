"""Recording hands (RecordHand) exactly once, and reading a match's recorded hands back.

However deliveries race: a hand is looked up first (the usual redelivery ends there). Otherwise
one write transaction makes sure its match's row exists (``INSERT ... ON CONFLICT DO NOTHING``),
locks it (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` already
serialises writers), looks for the hand again, and inserts it ``ON CONFLICT DO NOTHING``. The
primary key (hand id) and the unique (match, hand number) make a second row impossible; a
delivery that loses a race reads the winner's row and answers with its stored answer, byte for
byte (``platform.idempotency``: the answer is kept on the hand's row, keyed by the hand id,
whatever the request id). A delivery whose content (the request without request_id and locale)
differs from the stored one is FAILED_PRECONDITION HAND_ALREADY_RECORDED.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Final

from okey.v1 import scoring_pb2
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.engine.hand import SEATS
from okey101.engine.result import EndReason
from okey101.engine.seat import PenaltyReason
from okey101.platform.convert import result_lines
from okey101.platform.database import Database, insert_ignoring_conflicts
from okey101.platform.idempotency import Once, Raced, RowAnswers, Stored, StoredAnswers
from okey101.scoring.errors import Conflict, Invalid
from okey101.scoring.messages import lines_json, sheet_row
from okey101.scoring.models import hand_seats, hands, matches
from okey101.scoring.records import AttrRow, RecordedHand, now_us
from okey101.scoring.validation import CheckedHand, rules_json

#: RecordHand's answers, kept on the hand's row.
STORE: Final = RowAnswers(hands.c.hand_id, hands.c.content_hash, hands.c.response)
ANSWERS: Final = StoredAnswers[str](
    STORE, lambda hand_id: Conflict("HAND_ALREADY_RECORDED", hand_id=hand_id)
)
_HandCall = Once[str, scoring_pb2.RecordHandResponse]


def _penalty_names(reasons: Iterable[PenaltyReason]) -> str:
    return ",".join(reason.value for reason in reasons)


def _opened_name(checked: CheckedHand, seat: int) -> str:
    opened = checked.state.seats[seat].opened_as
    return "" if opened is None else opened.value


def running_totals(recorded: Sequence[RecordedHand]) -> list[list[int]]:
    """Each seat's match total after each hand."""
    totals = [0] * SEATS
    out = []
    for hand in recorded:
        totals = [total + seat.points for total, seat in zip(totals, hand.seats, strict=True)]
        out.append(totals)
    return out


async def hands_of(session: AsyncConnection, match_id: str) -> list[RecordedHand]:
    """The match's recorded hands in hand order, each with its seats."""
    rows = (
        await session.execute(
            select(hands).where(hands.c.match_id == match_id).order_by(hands.c.hand_number)
        )
    ).all()
    seats: dict[str, list[Any]] = defaultdict(list)
    for seat in (
        await session.execute(
            select(hand_seats)
            .where(hand_seats.c.match_id == match_id)
            .order_by(hand_seats.c.hand_id, hand_seats.c.seat)
        )
    ).all():
        seats[seat.hand_id].append(seat)
    return [RecordedHand(row, tuple(seats[row.hand_id])) for row in rows]


async def lock_match(session: AsyncConnection, match_id: str) -> Any:
    """The match's row, locked for this transaction (None if there is none)."""
    query = select(matches).where(matches.c.match_id == match_id).with_for_update()
    return (await session.execute(query)).first()


class Hands:
    """Recorded hands (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def record(self, checked: CheckedHand) -> tuple[scoring_pb2.RecordHandResponse, bool]:
        """Store the hand once; every delivery gets the first delivery's answer. The flag says
        whether this delivery stored it."""
        call = Once(checked.request.hand_id, checked.fingerprint, scoring_pb2.RecordHandResponse)
        return await ANSWERS.answer_once(
            self.database,
            call,
            lambda session: self._record(session, checked, call),
            raced=(IntegrityError,),
        )

    async def _record(
        self, session: AsyncConnection, checked: CheckedHand, call: _HandCall
    ) -> tuple[scoring_pb2.RecordHandResponse, bool]:
        request = checked.request
        rules = checked.rules
        now = now_us()
        dialect = self.database.dialect
        await session.execute(
            insert_ignoring_conflicts(matches, dialect).values(
                match_id=request.match_id,
                table_id=request.table_id,
                tournament_id=request.tournament_id,
                tournament_round=0,
                preset=rules.name,
                rules_json=rules_json(rules),
                partners=rules.partners,
                created_at_us=now,
                ended=False,
            )
        )
        match = await lock_match(session, request.match_id)
        assert match is not None
        found = await ANSWERS.recall(session, call)
        if found is not None:
            return found, False
        other = await session.scalar(
            select(hands.c.hand_id)
            .where(hands.c.request_id == request.request_id, hands.c.hand_id != request.hand_id)
            .limit(1)
        )
        if other is not None:  # the id is bound to the other hand's delivery (AIP-155)
            raise Invalid("REQUEST_ID_REUSED", request_id=request.request_id)
        for field, recorded, given in (
            ("table_id", match.table_id, request.table_id),
            ("tournament_id", match.tournament_id, request.tournament_id),
            ("final_state.rules", match.rules_json, rules_json(rules)),
        ):
            if recorded != given:
                raise Conflict("MATCH_MISMATCH", match_id=request.match_id, field=field)
        if match.ended:
            raise Conflict("MATCH_ALREADY_ENDED", match_id=request.match_id)
        taken = (
            await session.execute(
                select(hands.c.hand_id).where(
                    hands.c.match_id == request.match_id,
                    hands.c.hand_number == request.hand_number,
                )
            )
        ).scalar()
        if taken is not None:
            raise Conflict(
                "HAND_NUMBER_TAKEN",
                match_id=request.match_id,
                hand_number=request.hand_number,
                recorded_hand_id=taken,
            )
        before = (
            await session.execute(
                select(hand_seats.c.seat, func.sum(hand_seats.c.points))
                .join(hands, hands.c.hand_id == hand_seats.c.hand_id)
                .where(
                    hands.c.match_id == request.match_id,
                    hands.c.hand_number < request.hand_number,
                )
                .group_by(hand_seats.c.seat)
            )
        ).all()
        running = [0] * SEATS
        for seat, points in before:
            running[seat] = int(points or 0)
        result = checked.result
        running = [total + points for total, points in zip(running, result.scores, strict=True)]
        finish = result.finish
        hand_row: dict[str, Any] = {
            "hand_id": request.hand_id,
            "match_id": request.match_id,
            "hand_number": request.hand_number,
            "table_id": request.table_id,
            "tournament_id": request.tournament_id,
            "rules_version": checked.state.version,
            "reason": result.reason.value,
            "winner_seat": finish.winner if finish is not None else None,
            "with_okey": finish.with_okey if finish is not None else False,
            "after_pairs": finish.after_pairs if finish is not None else False,
            "one_go": finish.one_go if finish is not None else False,
            "multiplier": finish.multiplier if finish is not None else 1,
            "end_time_us": checked.end_time_us,
            "server_seed_sha256": request.deal.server_seed_sha256.lower(),
            "server_seed": request.deal.server_seed.lower(),
            "player_seeds": json.dumps(list(request.deal.player_seeds)),
            "final_state": request.final_state.SerializeToString(deterministic=True),
            "request_id": request.request_id,
            "recorded_at_us": now,
        }
        seat_rows = [
            {
                "hand_id": request.hand_id,
                "seat": seat.seat,
                "match_id": request.match_id,
                "player_id": seat.player_id,
                "display_name": seat.display_name,
                "bot": seat.bot,
                "preset": rules.name,
                "void": result.reason is EndReason.VOID,
                "points": result.scores[seat.seat],
                "penalty_points": result.penalties[seat.seat],
                "penalty_count": len(checked.penalties[seat.seat]),
                "penalties": _penalty_names(checked.penalties[seat.seat]),
                "opened_as": _opened_name(checked, seat.seat),
                "finished": finish is not None and finish.winner == seat.seat,
                "score_lines": lines_json(result_lines(result, seat.seat)),
            }
            for seat in checked.seats
        ]
        as_read = RecordedHand(AttrRow(hand_row), tuple(AttrRow(row) for row in seat_rows))
        response = scoring_pb2.RecordHandResponse(
            row=sheet_row(as_read, running, partners=rules.partners)
        )
        answer = response.SerializeToString(deterministic=True)
        hand_row.update(STORE.columns(Stored(call.asked, answer)))
        inserted = (
            await session.execute(
                insert_ignoring_conflicts(hands, dialect)
                .values(**hand_row)
                .returning(hands.c.hand_id)
            )
        ).first()
        if inserted is None:
            raise Raced()
        await session.execute(hand_seats.insert(), seat_rows)
        return response, True

    # ----------------------------------------------------------------------------------------
    # RecordMatch


__all__ = ["ANSWERS", "STORE", "Hands", "hands_of", "lock_match", "running_totals"]
