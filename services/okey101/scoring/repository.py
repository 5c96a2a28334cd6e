"""The scoring service's persistence: recording hands and matches exactly once, and the queries
behind score sheets, standings, leaderboards and players' statistics.

Exactly once, however deliveries race:

- A hand is looked up first (the usual redelivery ends there). Otherwise one write transaction
  makes sure its match's row exists (``INSERT ... ON CONFLICT DO NOTHING``), locks it (``SELECT
  ... FOR UPDATE`` on PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` already serialises writers), looks
  for the hand again, and inserts it ``ON CONFLICT DO NOTHING``. The primary key (hand id) and
  the unique (match, hand number) make a second row impossible; a delivery that loses a race
  reads the winner's row and answers with its stored answer, byte for byte.
- A delivery whose content (the request without request_id and locale) differs from the stored
  one is FAILED_PRECONDITION HAND_ALREADY_RECORDED; the same for matches.
- RecordMatch locks the match row, checks the hands, adds them up with the engine, writes each
  seat's line and the ratings (rows locked in one global order: player id within mode and
  preset, so two matches never deadlock), and stores its answer on the match row.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from google.protobuf.timestamp_pb2 import Timestamp
from okey.v1 import common_pb2, scoring_pb2
from sqlalchemy import and_, case, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.engine.hand import SEATS
from okey101.engine.match import MatchState
from okey101.engine.result import EndReason, Finish, HandResult
from okey101.engine.seat import PenaltyReason
from okey101.platform import convert
from okey101.platform.database import Database, insert_ignoring_conflicts
from okey101.scoring import ratings
from okey101.scoring.errors import Conflict, Invalid, Missing
from okey101.scoring.models import (
    hand_seats,
    hands,
    match_players,
    matches,
    rating_changes,
)
from okey101.scoring.models import ratings as rating_rows
from okey101.scoring.validation import (
    CheckedHand,
    CheckedMatch,
    SeatInfo,
    replay_match,
    rules_json,
    timestamp_us,
)

#: How many missing hand ids HANDS_MISSING names.
MISSING_SHOWN: Final = 5

_END_REASONS: Final = {
    EndReason.FINISHED: common_pb2.HAND_END_REASON_FINISHED,
    EndReason.STOCK_OUT: common_pb2.HAND_END_REASON_STOCK_OUT,
    EndReason.VOID: common_pb2.HAND_END_REASON_VOID,
}
PRESETS: Final[dict[str, common_pb2.RulePreset]] = {
    "oyna": common_pb2.RULE_PRESET_OYNA,
    "boombala": common_pb2.RULE_PRESET_BOOMBALA,
    "north_sultan": common_pb2.RULE_PRESET_NORTH_SULTAN,
}


class _Raced(Exception):
    """Another delivery stored the row first: read it."""


def now_us() -> int:
    return time.time_ns() // 1000


def timestamp(us: int) -> Timestamp:
    return Timestamp(seconds=us // 1_000_000, nanos=(us % 1_000_000) * 1000)


def _penalty_names(reasons: Iterable[PenaltyReason]) -> str:
    return ",".join(reason.value for reason in reasons)


def _opened_name(checked: CheckedHand, seat: int) -> str:
    opened = checked.state.seats[seat].opened_as
    return "" if opened is None else opened.value


def _penalties_of(text: str) -> list[common_pb2.PenaltyReason]:
    return [
        convert.penalty_reason_to_proto(PenaltyReason(name)) for name in text.split(",") if name
    ]


# --------------------------------------------------------------------------------------------
# Score-sheet rows


@dataclass(frozen=True, slots=True)
class _Hand:
    """A recorded hand and its four seats, as read back."""

    row: Any
    seats: tuple[Any, ...]

    @property
    def reason(self) -> EndReason:
        return EndReason(self.row.reason)

    def result(self) -> HandResult:
        """The engine's HandResult of the recorded hand (for the match's replay)."""
        finish = None
        if self.row.winner_seat is not None:
            finish = Finish(
                self.row.winner_seat,
                self.row.with_okey,
                self.row.after_pairs,
                self.row.one_go,
                self.row.multiplier,
            )
        return HandResult(
            self.reason,
            finish,
            tuple(seat.points for seat in self.seats),
            tuple(seat.penalty_points for seat in self.seats),
        )


def sheet_row(hand: _Hand, running: Sequence[int], *, partners: bool) -> scoring_pb2.ScoreSheetRow:
    row = hand.row
    message = scoring_pb2.ScoreSheetRow(
        hand_number=row.hand_number,
        hand_id=row.hand_id,
        reason=_END_REASONS[hand.reason],
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
            penalties=_penalties_of(seat.penalties),
        )
    if partners:
        message.running_team_totals.extend([running[0] + running[2], running[1] + running[3]])
    return message


def _running_totals(recorded: Sequence[_Hand]) -> list[list[int]]:
    totals = [0] * SEATS
    out = []
    for hand in recorded:
        totals = [total + seat.points for total, seat in zip(totals, hand.seats, strict=True)]
        out.append(totals)
    return out


async def _hands_of(session: AsyncConnection, match_id: str) -> list[_Hand]:
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
    return [_Hand(row, tuple(seats[row.hand_id])) for row in rows]


# --------------------------------------------------------------------------------------------
# Read models


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Any]
    next_key: list[Any] | None


@dataclass(frozen=True, slots=True)
class SheetData:
    match: Any
    seats: list[scoring_pb2.SeatPlayer]
    rows: list[scoring_pb2.ScoreSheetRow]
    totals: list[int]
    next_key: int | None


@dataclass(frozen=True, slots=True)
class StandingLine:
    player_id: str
    display_name: str
    matches: int
    wins: int
    total_points: int
    hands: int
    hands_finished: int
    rank: int = 0


@dataclass(frozen=True, slots=True)
class StatsData:
    hands: int
    matches: int
    wins: int
    points: int
    opened: int
    finished: int
    penalties: int
    free_for_all: ratings.Rating | None
    partners: ratings.Rating | None


def rating_message(rating: ratings.Rating) -> scoring_pb2.Rating:
    return scoring_pb2.Rating(
        mu=rating.mu, sigma=rating.sigma, ordinal=rating.ordinal, matches=rating.matches
    )


def _mode_message(mode: str) -> scoring_pb2.RatingMode:
    return (
        scoring_pb2.RATING_MODE_PARTNERS
        if mode == ratings.PARTNERS
        else scoring_pb2.RATING_MODE_FREE_FOR_ALL
    )


class ScoringRepository:
    """Everything the scoring service stores and reads, over one ``Database``."""

    def __init__(self, database: Database) -> None:
        self.database = database

    # ----------------------------------------------------------------------------------------
    # RecordHand

    async def record_hand(
        self, checked: CheckedHand
    ) -> tuple[scoring_pb2.RecordHandResponse, bool]:
        """Store the hand once; every delivery gets the first delivery's answer. The flag says
        whether this delivery stored it."""
        hand_id = checked.request.hand_id
        async with self.database.read() as session:
            stored = await self._stored_hand(session, hand_id)
        if stored is not None:
            return self._same_hand(stored, checked), False
        try:
            return await self.database.transaction(
                lambda session: self._record_hand(session, checked)
            )
        except (IntegrityError, _Raced):
            async with self.database.read() as session:
                stored = await self._stored_hand(session, hand_id)
            if stored is None:
                raise
            return self._same_hand(stored, checked), False

    @staticmethod
    async def _stored_hand(session: AsyncConnection, hand_id: str) -> Any:
        query = select(hands.c.content_hash, hands.c.response).where(hands.c.hand_id == hand_id)
        return (await session.execute(query)).first()

    @staticmethod
    def _same_hand(stored: Any, checked: CheckedHand) -> scoring_pb2.RecordHandResponse:
        if stored.content_hash != checked.content_hash:
            raise Conflict("HAND_ALREADY_RECORDED", hand_id=checked.request.hand_id)
        return scoring_pb2.RecordHandResponse.FromString(stored.response)

    async def _lock_match(self, session: AsyncConnection, match_id: str) -> Any:
        query = select(matches).where(matches.c.match_id == match_id).with_for_update()
        return (await session.execute(query)).first()

    async def _record_hand(
        self, session: AsyncConnection, checked: CheckedHand
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
        match = await self._lock_match(session, request.match_id)
        assert match is not None
        stored = await self._stored_hand(session, request.hand_id)
        if stored is not None:
            return self._same_hand(stored, checked), False
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
            "content_hash": checked.content_hash,
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
            }
            for seat in checked.seats
        ]
        as_read = _Hand(_AttrRow(hand_row), tuple(_AttrRow(row) for row in seat_rows))
        response = scoring_pb2.RecordHandResponse(
            row=sheet_row(as_read, running, partners=rules.partners)
        )
        hand_row["response"] = response.SerializeToString(deterministic=True)
        inserted = (
            await session.execute(
                insert_ignoring_conflicts(hands, dialect)
                .values(**hand_row)
                .returning(hands.c.hand_id)
            )
        ).first()
        if inserted is None:
            raise _Raced()
        await session.execute(hand_seats.insert(), seat_rows)
        return response, True

    # ----------------------------------------------------------------------------------------
    # RecordMatch

    async def record_match(
        self, checked: CheckedMatch
    ) -> tuple[scoring_pb2.RecordMatchResponse, bool]:
        """Store the match's result and ratings once (see ``record_hand``)."""
        match_id = checked.request.result.match_id
        async with self.database.read() as session:
            stored = await self._stored_match(session, match_id)
        if stored is not None and stored.response is not None:
            return self._same_match(stored, checked), False
        return await self.database.transaction(lambda session: self._record_match(session, checked))

    @staticmethod
    async def _stored_match(session: AsyncConnection, match_id: str) -> Any:
        query = select(matches.c.content_hash, matches.c.response).where(
            matches.c.match_id == match_id
        )
        return (await session.execute(query)).first()

    @staticmethod
    def _same_match(stored: Any, checked: CheckedMatch) -> scoring_pb2.RecordMatchResponse:
        if stored.content_hash != checked.content_hash:
            raise Conflict("MATCH_ALREADY_RECORDED", match_id=checked.request.result.match_id)
        return scoring_pb2.RecordMatchResponse.FromString(stored.response)

    async def _record_match(
        self, session: AsyncConnection, checked: CheckedMatch
    ) -> tuple[scoring_pb2.RecordMatchResponse, bool]:
        request = checked.request
        result = request.result
        match_id = result.match_id
        match = await self._lock_match(session, match_id)
        if match is None:
            raise self._missing(match_id, checked.hand_ids)
        if match.response is not None:
            return self._same_match(match, checked), False
        for field, recorded, given in (
            ("result.table_id", match.table_id, result.table_id),
            ("tournament_id", match.tournament_id, request.tournament_id),
            ("rules", match.rules_json, rules_json(checked.rules)),
        ):
            if recorded != given:
                raise Conflict("MATCH_MISMATCH", match_id=match_id, field=field)
        recorded = await _hands_of(session, match_id)
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
        changes = await self._rate(session, checked, state, match_id, match.preset)
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
                content_hash=checked.content_hash,
                response=answer.SerializeToString(deterministic=True),
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
        recorded: Sequence[_Hand],
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

    async def _rate(
        self,
        session: AsyncConnection,
        checked: CheckedMatch,
        state: MatchState,
        match_id: str,
        preset: str,
    ) -> list[scoring_pb2.RatingChange]:
        # Bots are not rated: a seat a bot played all match counts as no one's.
        players = ["" if seat.bot else seat.player_id for seat in checked.seats]
        sides = ratings.sides(players, state.totals, partners=checked.rules.partners)
        if not sides:
            return []
        mode = ratings.PARTNERS if checked.rules.partners else ratings.FREE_FOR_ALL
        rated = sorted({player for side in sides for player in side.players})
        names = {seat.player_id: self._name(checked, seat) for seat in checked.seats}
        winners = {players[seat] for seat in state.winners if players[seat]}
        now = now_us()
        start = ratings.initial()
        keys = [ratings.ALL_PRESETS, preset] if preset != ratings.ALL_PRESETS else [preset]
        await session.execute(
            insert_ignoring_conflicts(rating_rows, self.database.dialect),
            [
                {
                    "player_id": player,
                    "mode": mode,
                    "preset": key,
                    "display_name": names[player],
                    "mu": start.mu,
                    "sigma": start.sigma,
                    "ordinal": start.ordinal,
                    "matches": 0,
                    "wins": 0,
                    "updated_at_us": now,
                }
                for key in keys
                for player in rated
            ],
        )
        changes: list[scoring_pb2.RatingChange] = []
        for key in keys:
            rows = (
                await session.execute(
                    select(rating_rows)
                    .where(
                        rating_rows.c.mode == mode,
                        rating_rows.c.preset == key,
                        rating_rows.c.player_id.in_(rated),
                    )
                    .order_by(rating_rows.c.player_id)
                    .with_for_update()
                )
            ).all()
            before = {
                row.player_id: ratings.Rating(row.mu, row.sigma, row.matches, row.wins)
                for row in rows
            }
            after = ratings.rate(sides, before, winners)
            for player in rated:
                new = after[player]
                await session.execute(
                    update(rating_rows)
                    .where(
                        rating_rows.c.player_id == player,
                        rating_rows.c.mode == mode,
                        rating_rows.c.preset == key,
                    )
                    .values(
                        display_name=names[player],
                        mu=new.mu,
                        sigma=new.sigma,
                        ordinal=new.ordinal,
                        matches=new.matches,
                        wins=new.wins,
                        updated_at_us=now,
                    )
                )
            await session.execute(
                rating_changes.insert(),
                [
                    {
                        "match_id": match_id,
                        "player_id": player,
                        "mode": mode,
                        "preset": key,
                        "mu_before": before[player].mu,
                        "sigma_before": before[player].sigma,
                        "matches_before": before[player].matches,
                        "mu_after": after[player].mu,
                        "sigma_after": after[player].sigma,
                        "matches_after": after[player].matches,
                    }
                    for player in rated
                ],
            )
            if key == ratings.ALL_PRESETS:
                changes = [
                    scoring_pb2.RatingChange(
                        player_id=player,
                        mode=_mode_message(mode),
                        before=rating_message(before[player]),
                        after=rating_message(after[player]),
                    )
                    for player in players
                    if player in after
                ]
        return changes

    @staticmethod
    def _name(checked: CheckedMatch, seat: SeatInfo) -> str:
        return checked.request.result.seats[seat.seat].display_name or seat.display_name

    # ----------------------------------------------------------------------------------------
    # Reads

    async def score_sheet(self, match_id: str, after: int | None, size: int) -> SheetData:
        async with self.database.read() as session:
            match = (
                await session.execute(select(matches).where(matches.c.match_id == match_id))
            ).first()
            if match is None:
                raise Missing("MATCH_NOT_FOUND", match_id=match_id)
            recorded = await _hands_of(session, match_id)
            if match.ended:
                lines = (
                    await session.execute(
                        select(match_players)
                        .where(match_players.c.match_id == match_id)
                        .order_by(match_players.c.seat)
                    )
                ).all()
                seats = [
                    scoring_pb2.SeatPlayer(
                        seat=line.seat,
                        player_id=line.player_id,
                        display_name=line.display_name,
                        bot=line.bot,
                    )
                    for line in lines
                ]
            else:
                latest = recorded[-1].seats if recorded else ()
                seats = [
                    scoring_pb2.SeatPlayer(
                        seat=seat.seat,
                        player_id=seat.player_id,
                        display_name=seat.display_name,
                        bot=seat.bot,
                    )
                    for seat in latest
                ]
        running = _running_totals(recorded)
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

    async def standings(
        self, tournament_id: str, round_number: int, after: list[Any] | None, size: int
    ) -> Page:
        """Players of the tournament's recorded matches: most wins, then the lowest sum of
        totals; equal lines share a rank; player id breaks the order, never the rank."""
        async with self.database.read() as session:
            conditions = [match_players.c.tournament_id == tournament_id]
            if round_number:
                conditions.append(match_players.c.tournament_round == round_number)
            lines = (
                await session.execute(
                    select(match_players)
                    .where(*conditions, match_players.c.player_id != "")
                    .order_by(match_players.c.ended_at_us)
                )
            ).all()
            match_ids = sorted({line.match_id for line in lines})
            hand_counts: dict[str, tuple[int, int]] = {}
            if match_ids:
                for player, played, finished in (
                    await session.execute(
                        select(
                            hand_seats.c.player_id,
                            func.count(),
                            func.sum(case((hand_seats.c.finished, 1), else_=0)),
                        )
                        .where(
                            hand_seats.c.match_id.in_(match_ids),
                            hand_seats.c.player_id != "",
                            hand_seats.c.void.is_(False),
                            hand_seats.c.bot.is_(False),
                        )
                        .group_by(hand_seats.c.player_id)
                    )
                ).all():
                    hand_counts[player] = (int(played), int(finished or 0))
        totals: dict[str, dict[str, Any]] = {}
        for line in lines:
            entry = totals.setdefault(
                line.player_id, {"name": line.display_name, "matches": 0, "wins": 0, "points": 0}
            )
            entry["name"] = line.display_name or entry["name"]
            entry["matches"] += 1
            entry["wins"] += 1 if line.winner else 0
            entry["points"] += line.total
        ordered = sorted(
            totals.items(), key=lambda item: (-item[1]["wins"], item[1]["points"], item[0])
        )
        standings: list[StandingLine] = []
        for position, (player, entry) in enumerate(ordered, start=1):
            rank = position
            if standings:
                previous = standings[-1]
                if (previous.wins, previous.total_points) == (entry["wins"], entry["points"]):
                    rank = previous.rank
            played, finished = hand_counts.get(player, (0, 0))
            standings.append(
                StandingLine(
                    player_id=player,
                    display_name=entry["name"],
                    matches=entry["matches"],
                    wins=entry["wins"],
                    total_points=entry["points"],
                    hands=played,
                    hands_finished=finished,
                    rank=rank,
                )
            )
        if after is not None:
            wins, points, player = int(after[0]), int(after[1]), str(after[2])
            standings = [
                line
                for line in standings
                if (-line.wins, line.total_points, line.player_id) > (-wins, points, player)
            ]
        page = standings[:size]
        next_key = None
        if len(standings) > size:
            last = page[-1]
            next_key = [last.wins, last.total_points, last.player_id]
        return Page(page, next_key)

    async def leaderboard(
        self, mode: str, preset: str, min_matches: int, after: list[Any] | None, size: int
    ) -> Page:
        """Best first by (ordinal desc, player id asc), continuing strictly after ``after``."""
        table = rating_rows
        base = [table.c.mode == mode, table.c.preset == preset, table.c.matches >= min_matches]
        query = select(table).where(*base)
        if after is not None:
            ordinal, player = float(after[0]), str(after[1])
            query = query.where(
                or_(
                    table.c.ordinal < ordinal,
                    and_(table.c.ordinal == ordinal, table.c.player_id > player),
                )
            )
        query = query.order_by(table.c.ordinal.desc(), table.c.player_id).limit(size + 1)
        async with self.database.read() as session:
            rows = list((await session.execute(query)).all())
            page = rows[:size]
            entries: list[tuple[int, Any]] = []
            if page:
                first = page[0]
                above = (
                    await session.execute(
                        select(func.count())
                        .select_from(table)
                        .where(*base, table.c.ordinal > first.ordinal)
                    )
                ).scalar_one()
                ties = (
                    await session.execute(
                        select(func.count())
                        .select_from(table)
                        .where(
                            *base,
                            table.c.ordinal == first.ordinal,
                            table.c.player_id < first.player_id,
                        )
                    )
                ).scalar_one()
                position = above + ties + 1
                for index, row in enumerate(page):
                    # Equal ordinals share a rank (1, 2, 2, 4).
                    if row.ordinal == first.ordinal:
                        rank = above + 1
                    elif index and row.ordinal == page[index - 1].ordinal:
                        rank = entries[-1][0]
                    else:
                        rank = position + index
                    entries.append((rank, row))
        next_key = None
        if len(rows) > size:
            last = page[-1]
            next_key = [last.ordinal, last.player_id]
        return Page(entries, next_key)

    async def player_stats(self, player_id: str, preset: str | None) -> StatsData:
        seat_filter = [
            hand_seats.c.player_id == player_id,
            hand_seats.c.void.is_(False),
            hand_seats.c.bot.is_(False),
        ]
        line_filter = [match_players.c.player_id == player_id]
        if preset is not None:
            seat_filter.append(hand_seats.c.preset == preset)
            line_filter.append(match_players.c.preset == preset)
        async with self.database.read() as session:
            hands_row = (
                await session.execute(
                    select(
                        func.count(),
                        func.coalesce(func.sum(hand_seats.c.points), 0),
                        func.coalesce(
                            func.sum(case((hand_seats.c.opened_as != "", 1), else_=0)), 0
                        ),
                        func.coalesce(func.sum(case((hand_seats.c.finished, 1), else_=0)), 0),
                        func.coalesce(func.sum(hand_seats.c.penalty_count), 0),
                    ).where(*seat_filter)
                )
            ).one()
            match_row = (
                await session.execute(
                    select(
                        func.count(),
                        func.coalesce(func.sum(case((match_players.c.winner, 1), else_=0)), 0),
                    ).where(*line_filter)
                )
            ).one()
            found = (
                await session.execute(
                    select(rating_rows).where(
                        rating_rows.c.player_id == player_id,
                        rating_rows.c.preset == (preset or ratings.ALL_PRESETS),
                    )
                )
            ).all()
        by_mode = {
            row.mode: ratings.Rating(row.mu, row.sigma, row.matches, row.wins) for row in found
        }
        return StatsData(
            hands=int(hands_row[0]),
            matches=int(match_row[0]),
            wins=int(match_row[1]),
            points=int(hands_row[1]),
            opened=int(hands_row[2]),
            finished=int(hands_row[3]),
            penalties=int(hands_row[4]),
            free_for_all=by_mode.get(ratings.FREE_FOR_ALL),
            partners=by_mode.get(ratings.PARTNERS),
        )

    async def player_history(
        self, player_id: str, after: list[Any] | None, size: int
    ) -> tuple[list[scoring_pb2.PlayerMatch], list[Any] | None]:
        """The player's ended matches, newest first (end time, then match id, descending)."""
        query = (
            select(match_players, matches.c.table_id)
            .join(matches, matches.c.match_id == match_players.c.match_id)
            .where(match_players.c.player_id == player_id)
        )
        if after is not None:
            ended, match_id = int(after[0]), str(after[1])
            query = query.where(
                or_(
                    match_players.c.ended_at_us < ended,
                    and_(match_players.c.ended_at_us == ended, match_players.c.match_id < match_id),
                )
            )
        query = query.order_by(
            match_players.c.ended_at_us.desc(), match_players.c.match_id.desc()
        ).limit(size + 1)
        async with self.database.read() as session:
            rows = list((await session.execute(query)).all())
            page = rows[:size]
            changes: dict[str, Any] = {}
            if page:
                for change in (
                    await session.execute(
                        select(rating_changes).where(
                            rating_changes.c.player_id == player_id,
                            rating_changes.c.preset == ratings.ALL_PRESETS,
                            rating_changes.c.match_id.in_([row.match_id for row in page]),
                        )
                    )
                ).all():
                    changes[change.match_id] = change
        out = []
        for row in page:
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
            change_row = changes.get(row.match_id)
            if change_row is not None:
                change = change_row
                message.rating_change.CopyFrom(
                    scoring_pb2.RatingChange(
                        player_id=player_id,
                        mode=_mode_message(change.mode),
                        before=rating_message(
                            ratings.Rating(
                                change.mu_before, change.sigma_before, change.matches_before
                            )
                        ),
                        after=rating_message(
                            ratings.Rating(
                                change.mu_after, change.sigma_after, change.matches_after
                            )
                        ),
                    )
                )
            out.append(message)
        next_key = None
        if len(rows) > size:
            last = page[-1]
            next_key = [last.ended_at_us, last.match_id]
        return out, next_key


class _AttrRow:
    """A dict read by attribute, like a result row (to build a row before it is stored)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


__all__ = [
    "PRESETS",
    "Page",
    "ScoringRepository",
    "SheetData",
    "StandingLine",
    "StatsData",
    "now_us",
    "rating_message",
    "sheet_row",
    "timestamp",
]
