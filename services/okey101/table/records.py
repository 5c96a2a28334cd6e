"""What the table service keeps about a table, as Python values: seats, the match so far, and
the row they live in. The store reads and writes these; the service decides with them.

A seat is held by nobody, a player, or a bot. A player's seat is *played automatically* (by the
bot service, or the engine's fallback) while the player is away: they left during the match, or
missed ``missed_turns_before_away`` turns in a row. Sitting again (or acting) brings them back.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from okey.v1 import common_pb2

from okey101.engine.hand import SEATS

SeatKind = Literal["empty", "player", "bot"]

_BOT_NAMES = ("Ayşe (bot)", "Mehmet (bot)", "Zeynep (bot)", "Emre (bot)")


@dataclass(frozen=True)
class SeatRecord:
    """Who holds one seat, and how they are doing."""

    kind: SeatKind = "empty"
    player_id: str = ""
    display_name: str = ""
    #: A bot's level, or the level of the bot that keeps an away player's seat (BotLevel value).
    bot_level: int = common_pb2.BOT_LEVEL_NORMAL
    #: Reserved for ``player_id`` (who must still sit) rather than sat in.
    reserved: bool = False
    #: The player left during the match: a bot keeps the seat until they sit again.
    left: bool = False
    #: The player is away (missed turns, or left): a bot plays for them.
    away: bool = False
    #: Turns in a row whose time ran out.
    missed: int = 0
    #: The seed the seat adds to deals (hex; empty for none).
    deal_seed: str = ""

    @property
    def held(self) -> bool:
        """Someone (a player who sat, or a bot) holds it."""
        return self.kind == "bot" or (self.kind == "player" and not self.reserved)

    @property
    def automatic(self) -> bool:
        """Its moves are the bot service's: a bot seat, or an away player's."""
        return self.kind == "bot" or self.away

    def occupant(self, seat: int) -> common_pb2.SeatOccupant:
        if self.kind == "bot":
            return common_pb2.SeatOccupant(
                seat=seat,
                kind=common_pb2.OCCUPANT_KIND_BOT,
                display_name=self.display_name or _BOT_NAMES[seat],
                bot_level=self.bot_level,  # type: ignore[arg-type]
            )
        if self.kind == "player" and not self.reserved:
            return common_pb2.SeatOccupant(
                seat=seat,
                kind=common_pb2.OCCUPANT_KIND_BOT if self.left else common_pb2.OCCUPANT_KIND_PLAYER,
                player_id=self.player_id,
                display_name=self.display_name,
                bot_level=self.bot_level if self.away else common_pb2.BOT_LEVEL_UNSPECIFIED,  # type: ignore[arg-type]
                away=self.away,
            )
        return common_pb2.SeatOccupant(seat=seat, kind=common_pb2.OCCUPANT_KIND_EMPTY)

    def replace(self, **changes: Any) -> SeatRecord:
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SeatRecord:
        return cls(**data)


def seats_to_json(seats: Sequence[SeatRecord]) -> str:
    return json.dumps([seat.to_json() for seat in seats], separators=(",", ":"))


def seats_from_json(text: str) -> tuple[SeatRecord, ...]:
    return tuple(SeatRecord.from_json(item) for item in json.loads(text))


@dataclass(frozen=True)
class MatchRecord:
    """The match so far: each hand's id and result (HandResult bytes, hex), the totals, the
    dealer of the next hand."""

    dealer: int = 0
    totals: tuple[int, ...] = (0,) * SEATS
    hand_ids: tuple[str, ...] = ()
    results: tuple[str, ...] = ()

    def to_json(self) -> str:
        return json.dumps(
            {
                "dealer": self.dealer,
                "totals": list(self.totals),
                "hand_ids": list(self.hand_ids),
                "results": list(self.results),
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> MatchRecord:
        data = json.loads(text)
        return cls(
            dealer=data["dealer"],
            totals=tuple(data["totals"]),
            hand_ids=tuple(data["hand_ids"]),
            results=tuple(data["results"]),
        )


@dataclass(frozen=True)
class TableRecord:
    """One row of ``table_tables``, decoded."""

    table_id: str
    match_id: str
    name: str
    visibility: int
    invite_code: str
    state: int
    host_player_id: str
    tournament_id: str
    tournament_round: int
    preset: str
    rules: bytes
    rules_version: str
    start_when_full: bool
    created_us: int
    seats: tuple[SeatRecord, ...]
    state_version: int
    last_sequence: int
    hand_number: int
    hand_id: str
    dealer: int
    hand_state: bytes | None
    match: MatchRecord
    turn_deadline_us: int | None
    match_result: bytes | None
    _parsed: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> TableRecord:
        return cls(
            table_id=row["table_id"],
            match_id=row["match_id"],
            name=row["name"],
            visibility=row["visibility"],
            invite_code=row["invite_code"],
            state=row["state"],
            host_player_id=row["host_player_id"],
            tournament_id=row["tournament_id"],
            tournament_round=row["tournament_round"],
            preset=row["preset"],
            rules=bytes(row["rules"]),
            rules_version=row["rules_version"],
            start_when_full=bool(row["start_when_full"]),
            created_us=row["created_us"],
            seats=seats_from_json(row["seats"]),
            state_version=row["state_version"],
            last_sequence=row["last_sequence"],
            hand_number=row["hand_number"],
            hand_id=row["hand_id"],
            dealer=row["dealer"],
            hand_state=None if row["hand_state"] is None else bytes(row["hand_state"]),
            match=MatchRecord.from_json(row["match"]),
            turn_deadline_us=row["turn_deadline_us"],
            match_result=None if row["match_result"] is None else bytes(row["match_result"]),
        )

    def rules_message(self) -> common_pb2.RuleSet:
        cached = self._parsed.get("rules")
        if cached is None:
            cached = common_pb2.RuleSet.FromString(self.rules)
            self._parsed["rules"] = cached
        return cached

    def state_message(self) -> common_pb2.HandState | None:
        """The current (or last) hand's state; the caller must not change it."""
        if self.hand_state is None:
            return None
        cached = self._parsed.get("state")
        if cached is None:
            cached = common_pb2.HandState.FromString(self.hand_state)
            self._parsed["state"] = cached
        return cached

    @property
    def hand_live(self) -> bool:
        """A hand is dealt and has not ended."""
        state = self.state_message()
        return state is not None and state.phase != common_pb2.PHASE_ENDED

    def seat_of(self, player_id: str) -> int | None:
        """The seat ``player_id`` holds (sat in, even if away or left), if any."""
        for index, seat in enumerate(self.seats):
            if seat.kind == "player" and not seat.reserved and seat.player_id == player_id:
                return index
        return None

    def played_by(self, player_id: str) -> bool:
        """``player_id`` holds or is reserved a seat here (may see a private table)."""
        return any(seat.kind == "player" and seat.player_id == player_id for seat in self.seats)
