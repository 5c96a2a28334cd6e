"""What the table service keeps about a table, as Python values: seats, the match so far, and
the row they live in. A record reads its row (``TableRecord.from_row``) and gives it
(``to_row``; a new table's from ``TableRecord.new``); the service decides with them.

A seat is held by nobody, a player, or a bot. A player's seat is *played automatically* (by the
bot service, or the engine's fallback) while the player is away: they left during the match, or
missed ``missed_turns_before_away`` turns in a row (the table's own number if it was created
with one, else the service's). Sitting again (or acting) brings them back.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from okey.v1 import common_pb2

from okey101.engine.hand import SEATS

SeatKind = Literal["empty", "player", "bot"]

#: A bot seat's name when none was given: a name, as a player's is. That it is a bot is the
#: occupant's kind (OCCUPANT_KIND_BOT), which clients show in their own language.
_BOT_NAMES = ("Ayşe", "Mehmet", "Zeynep", "Emre")


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
    #: The player was forfeited (a tournament's no-show or disqualification: LeaveRequest's
    #: forfeit): a bot plays the seat to the end of the match; the player cannot take it back.
    forfeited: bool = False
    #: Turns in a row whose time ran out.
    missed: int = 0
    #: The seed the seat adds to deals (hex; empty for none).
    deal_seed: str = ""
    #: A staked table's player seat: the key of the ledger transaction in which the lobby
    #: holds the player's stake (``SitRequest.stake_hold_key``; ``chips``). Empty otherwise.
    hold_key: str = ""

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
                forfeited=self.forfeited,
            )
        return common_pb2.SeatOccupant(seat=seat, kind=common_pb2.OCCUPANT_KIND_EMPTY)

    def replace(self, **changes: Any) -> SeatRecord:
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        if not self.hold_key:
            # Left out when empty: an unstaked table's seats are stored as before #36, which a
            # pod of the release before (whose ``from_json`` knows no hold_key) still reads.
            del data["hold_key"]
        if not self.forfeited:
            del data["forfeited"]  # likewise: seats stored as before a forfeit existed
        return data

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
class DealInfo:
    """A hand's fairness record as the live table keeps it: published from the deal on but
    for the server seed, which is revealed when the hand ends."""

    hand_id: str
    commitment: str
    player_seeds: tuple[str, ...]
    server_seed: str

    def record(self, *, reveal: bool) -> common_pb2.DealRecord:
        return common_pb2.DealRecord(
            hand_id=self.hand_id,
            server_seed_sha256=self.commitment,
            player_seeds=list(self.player_seeds),
            server_seed=self.server_seed if reveal else "",
        )


@dataclass(frozen=True)
class TimerRecord:
    """The table's timer: what is due (``kind``: "turn" a player's deadline, "bot" a bot's or
    away player's step, "deal" the next hand, "start" a full table's first deal) and when, and
    the pod that holds it until ``claimed_until_us`` (0: no pod; ``timers``)."""

    kind: str
    due_us: int
    claimed_until_us: int = 0
    claimed_by: str = ""


class TimerColumns(TypedDict):
    """The row's ``timer_*`` columns."""

    timer_kind: str | None
    timer_due_us: int | None
    timer_claimed_until_us: int | None
    timer_claimed_by: str


def timer_columns(timer: TimerRecord | None) -> TimerColumns:
    """The row's ``timer_*`` columns for ``timer`` (None: no timer)."""
    if timer is None:
        return {
            "timer_kind": None,
            "timer_due_us": None,
            "timer_claimed_until_us": None,
            "timer_claimed_by": "",
        }
    return {
        "timer_kind": timer.kind,
        "timer_due_us": timer.due_us,
        "timer_claimed_until_us": timer.claimed_until_us or None,
        "timer_claimed_by": timer.claimed_by,
    }


def timer_from_row(row: Mapping[str, Any]) -> TimerRecord | None:
    """The timer of a row's ``timer_*`` columns (``timer_columns``' inverse)."""
    if row["timer_kind"] is None:
        return None
    return TimerRecord(
        row["timer_kind"],
        row["timer_due_us"],
        row["timer_claimed_until_us"] or 0,
        row["timer_claimed_by"] or "",
    )


@dataclass(frozen=True)
class TableRecord:
    """One row of ``table_tables``, decoded: the table's settings, seats and match, and where
    its log stands (``revision``, ``state_version``, ``last_sequence``). The hand's state is not
    here: the live table keeps it (``live``), and the row holds a snapshot of it."""

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
    match: MatchRecord
    turn_deadline_us: int | None
    match_result: bytes | None
    #: Every write advances it (``journal``); a write from an older one changes nothing.
    revision: int = 0
    #: The sequence number the row's snapshot of the hand state is as of.
    snapshot_sequence: int = 0
    timer: TimerRecord | None = None
    #: When the row was last written.
    updated_us: int = 0
    #: Chips each seat stakes on the match (0: not a staked table), and the table fee in
    #: percent of the pot; set at creation.
    stake: int = 0
    fee_percent: int = 0
    #: Turns in a row a player may miss before a bot keeps their seat (0: the service's
    #: ``missed_turns_before_away``); set at creation (the lobby's tournament tables say 1).
    missed_turns_before_away: int = 0
    #: The match ends with the first hand that ends at or after this instant, or at it if it
    #: passes between hands (None: no deadline); set at creation (a tournament round's limit).
    match_deadline_us: int | None = None
    _parsed: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def new(
        cls,
        *,
        table_id: str,
        match_id: str,
        preset: str,
        rules: bytes,
        rules_version: str,
        seats: Sequence[SeatRecord],
        created_us: int,
        name: str = "",
        visibility: int = common_pb2.TABLE_VISIBILITY_PUBLIC,
        invite_code: str = "",
        host_player_id: str = "",
        tournament_id: str = "",
        tournament_round: int = 0,
        start_when_full: bool = False,
        stake: int = 0,
        fee_percent: int = 0,
        missed_turns_before_away: int = 0,
        match_deadline_us: int | None = None,
    ) -> TableRecord:
        """A new table: waiting, its match not begun, no hand, no timer, never written."""
        return cls(
            table_id=table_id,
            match_id=match_id,
            name=name,
            visibility=visibility,
            invite_code=invite_code,
            state=common_pb2.TABLE_STATE_WAITING,
            host_player_id=host_player_id,
            tournament_id=tournament_id,
            tournament_round=tournament_round,
            preset=preset,
            rules=rules,
            rules_version=rules_version,
            start_when_full=start_when_full,
            created_us=created_us,
            seats=tuple(seats),
            state_version=0,
            last_sequence=0,
            hand_number=0,
            hand_id="",
            dealer=0,
            match=MatchRecord(),
            turn_deadline_us=None,
            match_result=None,
            updated_us=created_us,
            stake=stake,
            fee_percent=fee_percent,
            missed_turns_before_away=missed_turns_before_away,
            match_deadline_us=match_deadline_us,
        )

    def to_row(self) -> dict[str, Any]:
        """The table's row (``from_row``'s inverse; the hand's state, which the live table keeps,
        is not here: ``hand_state`` is left as the row has it)."""
        return {
            "table_id": self.table_id,
            "match_id": self.match_id,
            "name": self.name,
            "visibility": self.visibility,
            "invite_code": self.invite_code,
            "state": self.state,
            "host_player_id": self.host_player_id,
            "tournament_id": self.tournament_id,
            "tournament_round": self.tournament_round,
            "preset": self.preset,
            "rules": self.rules,
            "rules_version": self.rules_version,
            "start_when_full": self.start_when_full,
            "created_us": self.created_us,
            "updated_us": self.updated_us,
            "seats": seats_to_json(self.seats),
            "state_version": self.state_version,
            "last_sequence": self.last_sequence,
            "hand_number": self.hand_number,
            "hand_id": self.hand_id,
            "dealer": self.dealer,
            "match": self.match.to_json(),
            "turn_deadline_us": self.turn_deadline_us,
            "match_result": self.match_result,
            "revision": self.revision,
            "snapshot_sequence": self.snapshot_sequence,
            **timer_columns(self.timer),
            "stake": self.stake,
            "fee_percent": self.fee_percent,
            "missed_turns_before_away": self.missed_turns_before_away,
            "match_deadline_us": self.match_deadline_us,
        }

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
            match=MatchRecord.from_json(row["match"]),
            turn_deadline_us=row["turn_deadline_us"],
            match_result=None if row["match_result"] is None else bytes(row["match_result"]),
            revision=row["revision"],
            snapshot_sequence=row["snapshot_sequence"],
            timer=timer_from_row(row),
            updated_us=row["updated_us"],
            stake=row["stake"],
            fee_percent=row["fee_percent"],
            missed_turns_before_away=row["missed_turns_before_away"],
            match_deadline_us=row["match_deadline_us"],
        )

    def replace(self, **changes: Any) -> TableRecord:
        """A copy with ``changes`` (the parsed rule set carried over: it never changes).

        Copied field by field rather than through ``__init__`` (``dataclasses.replace``), which
        costs more than the rest of planning a move: a change makes a few copies of its record,
        and every field set here is one ``from_row`` or the planners build."""
        copy = object.__new__(TableRecord)
        fields = copy.__dict__
        fields.update(self.__dict__)
        for name, value in changes.items():
            if name not in fields:
                raise TypeError(f"TableRecord has no field {name!r}")
            fields[name] = value
        return copy

    def rules_message(self) -> common_pb2.RuleSet:
        cached = self._parsed.get("rules")
        if cached is None:
            cached = common_pb2.RuleSet.FromString(self.rules)
            self._parsed["rules"] = cached
        return cached

    @property
    def due_to_start(self) -> bool:
        """A waiting ``start_when_full`` table whose every seat is held: its start is owed."""
        return (
            self.state == common_pb2.TABLE_STATE_WAITING
            and self.start_when_full
            and all(seat.held for seat in self.seats)
        )

    @property
    def pot(self) -> int:
        """Chips in the table's pot: the stakes held for the seats players took (before the
        start), every seat's once the match has started (a bot's from the house), none once it
        ended or the table closed (paid out or refunded)."""
        if not self.stake:
            return 0
        if self.state == common_pb2.TABLE_STATE_WAITING:
            return self.stake * sum(1 for seat in self.seats if seat.hold_key and seat.held)
        if self.state == common_pb2.TABLE_STATE_PLAYING:
            return self.stake * SEATS
        return 0

    def deadline_passed(self, now_us: int) -> bool:
        """The table has a match deadline and ``now_us`` is at or after it: the match ends at
        the end of the hand in play, or now if no hand is in play."""
        return self.match_deadline_us is not None and now_us >= self.match_deadline_us

    def seat_of(self, player_id: str) -> int | None:
        """The seat ``player_id`` holds (sat in, even if away or left), if any."""
        for index, seat in enumerate(self.seats):
            if seat.kind == "player" and not seat.reserved and seat.player_id == player_id:
                return index
        return None

    def played_by(self, player_id: str) -> bool:
        """``player_id`` holds or is reserved a seat here (may see a private table)."""
        return any(seat.kind == "player" and seat.player_id == player_id for seat in self.seats)
