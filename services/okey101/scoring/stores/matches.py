"""Recording matches (RecordMatch) exactly once, and reading a match's score sheet.

RecordMatch locks the match's row (made by its first recorded hand), checks the hands against
what was recorded, adds them up with the engine, writes each seat's line and the ratings
(``stores.ratings``), and stores its answer on the match's row (``platform.idempotency``: keyed
by the match id, whatever the request id), all in one transaction. A delivery whose content
differs from the recorded one is FAILED_PRECONDITION MATCH_ALREADY_RECORDED; one that comes
before all its hands is HANDS_MISSING (not stored: the outbox's retry succeeds once they are in).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from okey.v1 import scoring_pb2
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.engine.hand import SEATS
from okey101.engine.match import MatchState
from okey101.engine.result import EndReason
from okey101.platform.database import Database
from okey101.platform.idempotency import Once, RowAnswers, Stored, StoredAnswers
from okey101.scoring.errors import Conflict, Invalid, Missing
from okey101.scoring.messages import seat_player, sheet_row, timestamp
from okey101.scoring.models import match_players, matches
from okey101.scoring.records import RecordedHand, SheetData, now_us
from okey101.scoring.stores.hands import hands_of, lock_match, running_totals
from okey101.scoring.stores.ratings import RatingStore
from okey101.scoring.validation import CheckedMatch, replay_match, rules_json, timestamp_us

#: How many missing hand ids HANDS_MISSING names.
MISSING_SHOWN: Final = 5

#: RecordMatch's answers, kept on the match's row.
STORE: Final = RowAnswers(matches.c.match_id, matches.c.content_hash, matches.c.response)
ANSWERS: Final = StoredAnswers[str](
    STORE, lambda match_id: Conflict("MATCH_ALREADY_RECORDED", match_id=match_id)
)
_MatchCall = Once[str, scoring_pb2.RecordMatchResponse]


class Matches:
    """Recorded matches and their score sheets (module docstring)."""

    def __init__(self, database: Database, ratings: RatingStore) -> None:
        self.database = database
        self.ratings = ratings

    async def record(self, checked: CheckedMatch) -> tuple[scoring_pb2.RecordMatchResponse, bool]:
        """Store the match's result and ratings once (``hands.Hands.record``)."""
        call = Once(
            checked.request.result.match_id, checked.fingerprint, scoring_pb2.RecordMatchResponse
        )
        return await ANSWERS.answer_once(
            self.database, call, lambda session: self._record(session, checked, call)
        )

    async def _record(
        self, session: AsyncConnection, checked: CheckedMatch, call: _MatchCall
    ) -> tuple[scoring_pb2.RecordMatchResponse, bool]:
        request = checked.request
        result = request.result
        match_id = result.match_id
        match = await lock_match(session, match_id)
        if match is None:
            raise self._missing(match_id, checked.hand_ids)
        found = ANSWERS.replay(call, STORE.stored_of(match))
        if found is not None:
            return found, False
        other = await session.scalar(
            select(matches.c.match_id)
            .where(matches.c.request_id == request.request_id, matches.c.match_id != match_id)
            .limit(1)
        )
        if other is not None:  # the id is bound to the other match's result (AIP-155)
            raise Invalid("REQUEST_ID_REUSED", request_id=request.request_id)
        for field, recorded, given in (
            ("result.table_id", match.table_id, result.table_id),
            ("tournament_id", match.tournament_id, request.tournament_id),
            ("rules", match.rules_json, rules_json(checked.rules)),
        ):
            if recorded != given:
                raise Conflict("MATCH_MISMATCH", match_id=match_id, field=field)
        recorded = await hands_of(session, match_id)
        recorded_ids = [hand.row.hand_id for hand in recorded]
        missing = [hand_id for hand_id in checked.hand_ids if hand_id not in set(recorded_ids)]
        if missing:
            raise self._missing(match_id, missing)
        if list(checked.hand_ids) != recorded_ids:
            raise Invalid(
                "SCORE_MISMATCH",
                field="result.hand_ids",
                reported=",".join(checked.hand_ids),
                expected=",".join(recorded_ids),
            )
        state = replay_match(checked, [hand.result() for hand in recorded])
        ended_at = (
            timestamp_us(result.ended_at)
            if result.HasField("ended_at")
            else max(hand.row.end_time_us for hand in recorded)
        )
        lines = self._match_lines(checked, state, recorded, ended_at, match)
        await session.execute(match_players.insert(), lines)
        changes = await self.ratings.rate(session, checked, state, match_id, match.preset, ended_at)
        answer = scoring_pb2.RecordMatchResponse(rating_changes=changes)
        answer.result.CopyFrom(result)
        answer.result.ended_at.CopyFrom(timestamp(ended_at))
        await session.execute(
            update(matches)
            .where(matches.c.match_id == match_id)
            .values(
                ended=True,
                ended_at_us=ended_at,
                hands_played=state.hands_played,
                winner_seats=",".join(str(seat) for seat in state.winners),
                tournament_round=request.tournament_round,
                request_id=request.request_id,
                **STORE.columns(Stored(call.asked, answer.SerializeToString(deterministic=True))),
                recorded_at_us=now_us(),
            )
        )
        return answer, True

    @staticmethod
    def _missing(match_id: str, missing: Sequence[str]) -> Conflict:
        shown = ",".join(missing[:MISSING_SHOWN]) + ("..." if len(missing) > MISSING_SHOWN else "")
        return Conflict("HANDS_MISSING", match_id=match_id, count=len(missing), missing=shown)

    @staticmethod
    def _match_lines(
        checked: CheckedMatch,
        state: MatchState,
        recorded: Sequence[RecordedHand],
        ended_at: int,
        match: Any,
    ) -> list[dict[str, Any]]:
        totals = state.totals
        if checked.rules.partners:
            teams = state.team_totals()
            keys = [teams[seat % 2] for seat in range(SEATS)]
        else:
            keys = list(totals)
        lines = []
        for seat in checked.seats:
            # Hands the seat's player played themselves (a bot seat's: every hand it played).
            held = sum(
                1
                for hand in recorded
                if hand.reason is not EndReason.VOID
                and hand.seats[seat.seat].player_id == seat.player_id
                and (not hand.seats[seat.seat].bot or not seat.player_id)
            )
            lines.append(
                {
                    "match_id": match.match_id,
                    "seat": seat.seat,
                    "player_id": seat.player_id,
                    "display_name": checked.request.result.seats[seat.seat].display_name
                    or seat.display_name,
                    "bot": seat.bot,
                    "total": totals[seat.seat],
                    "place": 1 + sum(1 for key in keys if key < keys[seat.seat]),
                    "winner": seat.seat in state.winners,
                    "hands_played": held,
                    "preset": match.preset,
                    "tournament_id": match.tournament_id,
                    "tournament_round": checked.request.tournament_round,
                    "ended_at_us": ended_at,
                }
            )
        return lines

    # ----------------------------------------------------------------------------------------

    # ----------------------------------------------------------------------------------------
    # The score sheet

    async def score_sheet(self, match_id: str, after: int | None, size: int) -> SheetData:
        """A page of the match's score sheet: the hands after hand number ``after``."""
        async with self.database.read() as session:
            match = (
                await session.execute(select(matches).where(matches.c.match_id == match_id))
            ).first()
            if match is None:
                raise Missing("MATCH_NOT_FOUND", match_id=match_id)
            recorded = await hands_of(session, match_id)
            if match.ended:
                lines = (
                    await session.execute(
                        select(match_players)
                        .where(match_players.c.match_id == match_id)
                        .order_by(match_players.c.seat)
                    )
                ).all()
                seats = [seat_player(line) for line in lines]
            else:
                latest = recorded[-1].seats if recorded else ()
                seats = [seat_player(seat) for seat in latest]
        running = running_totals(recorded)
        rows: list[scoring_pb2.ScoreSheetRow] = []
        next_key = None
        for hand, totals in zip(recorded, running, strict=True):
            if after is not None and hand.row.hand_number <= after:
                continue
            if len(rows) == size:
                next_key = rows[-1].hand_number
                break
            rows.append(sheet_row(hand, totals, partners=match.partners))
        return SheetData(
            match=match,
            seats=seats,
            rows=rows,
            totals=running[-1] if running else [0] * SEATS,
            next_key=next_key,
        )


__all__ = ["ANSWERS", "MISSING_SHOWN", "STORE", "Matches"]
