"""TableService: live tables that lose nothing, on any number of pods.

The database is the truth (``store``): a table is its row (settings, seats, the current hand's
state, ``state_version``, ``last_sequence``) plus its append-only event log. A call loads the
row, computes the change (moves go through the rules service, which holds nothing), and commits
it in one transaction that only succeeds if the row's ``state_version`` is unchanged. Any pod
can serve any call; nothing is kept in memory that the database does not also hold (the views
cache below is a cache: a miss asks the rules service).

Background work (``runtime``): due timers (turn deadlines, bot steps, the next deal, the start
of a table that filled) are claimed by any free pod; finished hands and matches go to scoring
through the outbox; a watchdog publishes live tables, outbox backlog and stuck tables. What a
change obliges the table to do next is committed with the change (a timer, an outbox row), never
left to a step after it: a call answered from its stored answer never reaches such a step.

Who plays what:

- A player acts only for their own seat (PERMISSION_DENIED NOT_YOUR_SEAT otherwise); services
  (the lobby, this service's own bot driver) act for any seat.
- Bot seats, and seats of players who are away (they left during the match, or missed
  ``missed_turns_before_away`` turns in a row), are played by the bot service, or by the
  engine's fallback when it cannot be reached.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import hashlib
import json
import os
import secrets
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import grpc
import grpc.aio
import structlog
from google.protobuf.message import Message
from grpc_status import rpc_status
from okey.v1 import (
    bot_pb2,
    bot_pb2_grpc,
    common_pb2,
    rules_pb2,
    rules_pb2_grpc,
    scoring_pb2,
    table_pb2,
    table_pb2_grpc,
)

from okey101.engine.bots.entry_points import fallback_decision
from okey101.engine.errors import InvalidInput, OkeyError, RuleViolation
from okey101.engine.fair_deal import commitment, deck_order, parse_seed
from okey101.engine.hand import RULES_VERSION, SEATS
from okey101.engine.match import MatchState, new_match, record_hand
from okey101.platform import convert
from okey101.platform.auth import Access, AccessPolicy, Claims, require_claims
from okey101.platform.clients import Peers
from okey101.platform.errors import Internal
from okey101.table import metrics
from okey101.table.errors import (
    Conflict,
    Denied,
    Invalid,
    Missing,
    NotReady,
    Stale,
    check_id,
    check_request_id,
)
from okey101.table.feed import SAFETY_POLL_SECONDS, TableFeed
from okey101.table.limits import ActLimiter
from okey101.table.records import MatchRecord, SeatRecord, TableRecord, seats_to_json
from okey101.table.store import (
    Change,
    Committed,
    EventDraft,
    Move,
    StoredEvent,
    TableStore,
    TimerSet,
)

NAME: Final = "table"
SERVICE_NAME: Final = "okey.v1.TableService"

_PLAYER_OR_SERVICE: Final[tuple[Access, ...]] = ("player", "service")
_SERVICE: Final[tuple[Access, ...]] = ("service",)
_PLAYER: Final[tuple[Access, ...]] = ("player",)
METHOD_ACCESS: Final[dict[str, tuple[Access, ...]]] = {
    "CreateTable": _SERVICE,
    "GetTable": _PLAYER_OR_SERVICE,
    "ListTables": _SERVICE,
    "Sit": _PLAYER_OR_SERVICE,
    "Leave": _PLAYER_OR_SERVICE,
    "Start": _PLAYER_OR_SERVICE,
    "Act": _PLAYER_OR_SERVICE,
    "GetSeatView": _PLAYER_OR_SERVICE,
    "WatchTable": _PLAYER_OR_SERVICE,
    "SetDealSeed": _PLAYER,
    "GetHandRecord": _PLAYER_OR_SERVICE,
    "CloseTable": _PLAYER_OR_SERVICE,
}


def access_policy() -> AccessPolicy:
    policy = AccessPolicy()
    policy.declare_service(SERVICE_NAME, METHOD_ACCESS)
    return policy


ACCESS: Final = access_policy()

_log = structlog.get_logger("okey101.table")
_M = TypeVar("_M", bound=Message)

#: The caller name of moves this service makes for automatic seats (request ids are scoped by
#: caller: these never collide with a client's).
AUTOPLAY_CALLER: Final = "table:autoplay"
_MAX_ACTIONS: Final = 32
_MAX_EVENTS_PER_READ: Final = 500
_VIEW_CACHE_SIZE: Final = 2048

Clock = Callable[[], float]


@dataclass(frozen=True)
class TableOptions:
    """The table service's own knobs (``OKEY_TABLE_*`` variables; see docs/configuration.md)."""

    #: How long a bot (or an away player's bot) waits before its turn, so people can follow.
    bot_move_seconds: float = 0.8
    #: The pause between a hand's end and the next deal (the score sheet is on screen).
    next_hand_seconds: float = 5.0
    #: A player's turn time where the rule set leaves it to the table (turn_seconds 0); 0: none.
    default_turn_seconds: int = 60
    #: Turns in a row a player may miss before a bot keeps the seat until they are back.
    missed_turns_before_away: int = 2
    #: How often the timer worker looks for due timers when nothing wakes it.
    poll_seconds: float = 0.5
    #: How long a claimed timer is this pod's before another may take it over.
    timer_lease_seconds: float = 15.0
    #: No pod alive for longer than this: the gap is not charged to players' turns.
    outage_seconds: float = 5.0
    #: A timer overdue by more than this counts as a stuck table.
    stuck_seconds: float = 60.0
    #: Deadline of each call to the rules and bot services.
    peer_timeout_seconds: float = 3.0
    #: How often the watchdog refreshes the deployment-wide gauges.
    watchdog_seconds: float = 5.0

    @classmethod
    def from_environ(cls, environ: dict[str, str] | None = None) -> TableOptions:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for spec in dataclasses.fields(cls):
            raw = env.get(f"OKEY_TABLE_{spec.name.upper()}")
            if raw is None or not raw.strip():
                continue
            try:
                number = float(raw) if spec.type == "float" else int(raw)
            except ValueError:
                raise ValueError(
                    f"OKEY_TABLE_{spec.name.upper()} must be a number, not {raw!r}"
                ) from None
            if number < 0:
                raise ValueError(f"OKEY_TABLE_{spec.name.upper()} must not be negative")
            values[spec.name] = number
        return cls(**values)


def _us(seconds: float) -> int:
    return round(seconds * 1_000_000)


def _timestamp(micros: int) -> Any:
    from google.protobuf.timestamp_pb2 import Timestamp

    stamp = Timestamp()
    stamp.FromMicroseconds(micros)
    return stamp


# --------------------------------------------------------------------------------------------
# Errors from the rules and bot services


def _peer_error(error: grpc.aio.AioRpcError, unavailable_code: str) -> OkeyError:
    """A rules-service rejection as the same coded error here (the sentence is rendered again
    in the caller's language); an outage as UNAVAILABLE."""
    code = error.code()
    # CANCELLED too: a peer that is stopping may cancel a call that raced its shutdown. All of
    # these are worth a retry with the same request id, so the caller gets UNAVAILABLE.
    if code in (
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    ):
        return NotReady(unavailable_code)
    reason, params = "INTERNAL", {}
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    if status is not None:
        from google.rpc import error_details_pb2

        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason, params = info.reason, dict(info.metadata)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return InvalidInput(reason, **params)
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return RuleViolation(reason, **params)
    _log.error("unexpected answer from a peer", code=code.name, reason=reason)
    return Internal("INTERNAL")


# --------------------------------------------------------------------------------------------
# The service


class TableServicer(table_pb2_grpc.TableServiceServicer):
    """TableService over a ``TableStore`` (module docstring)."""

    def __init__(
        self,
        store: TableStore,
        peers: Peers,
        *,
        options: TableOptions | None = None,
        clock: Clock = time.time,
        feed: TableFeed | None = None,
    ) -> None:
        self.store = store
        self.peers = peers
        self.options = options or TableOptions()
        self.clock = clock
        self.feed = feed or TableFeed()
        self._rules = rules_pb2_grpc.RulesServiceStub(peers.channel("rules"))
        self._bot = bot_pb2_grpc.BotServiceStub(peers.channel("bot"))
        # The views of the latest state this pod computed, per table: (state_version, the four
        # seats' views, the spectator's). A miss asks the rules service.
        self._views: OrderedDict[str, tuple[int, list[Any], Any]] = OrderedDict()
        self._hands: OrderedDict[str, dict[str, Any]] = OrderedDict()
        #: Called after every commit that sets a timer due now (the timer worker wakes).
        self.on_timer_due: Callable[[], None] = lambda: None
        #: How fast each player may send moves at each table (``limits``).
        self.act_limits = ActLimiter()

    # ----------------------------------------------------------------------------------------
    # Small helpers

    def now_us(self) -> int:
        return _us(self.clock())

    async def _load(self, table_id: str) -> TableRecord:
        check_id(table_id, "table_id")
        record = await self.store.load(table_id)
        if record is None:
            raise Missing("TABLE_NOT_FOUND", table_id=table_id)
        return record

    async def _replay(self, caller: str, method: str, request: Any, kind: type[_M]) -> _M | None:
        """The first answer to ``request``'s request id, if it was answered. The id answered a
        call about another table: INVALID_ARGUMENT REQUEST_ID_REUSED (a retry repeats the
        request unchanged; a new change needs a new id)."""
        check_request_id(request.request_id)
        stored = await self.store.answer(caller, method, request.request_id)
        return _answered(stored, request, kind)

    async def _commit(self, change: Change) -> Committed:
        committed = await self.store.commit(change)
        if committed.events:
            self.feed.publish(change.table_id, committed.last_sequence)
        if change.timer is not None and change.timer.due_us <= self.now_us():
            self.on_timer_due()
        return committed

    def _remember_views(
        self, table_id: str, version: int, views: Sequence[Any], spectator: Any
    ) -> None:
        self._views[table_id] = (version, list(views), spectator)
        self._views.move_to_end(table_id)
        while len(self._views) > _VIEW_CACHE_SIZE:
            self._views.popitem(last=False)

    async def _rules_call(self, method: str, request: Any, locale: str = "") -> Any:
        call = getattr(self._rules, method)
        try:
            return await call(
                request, metadata=self.peers.metadata(), timeout=self.options.peer_timeout_seconds
            )
        except grpc.aio.AioRpcError as error:
            raise _peer_error(error, "RULES_UNAVAILABLE") from None

    # ----------------------------------------------------------------------------------------
    # Messages

    def table_message(self, record: TableRecord, claims: Claims | None) -> common_pb2.Table:
        show_code = (
            claims is None
            or claims.kind == "service"
            or (record.host_player_id == claims.subject or record.played_by(claims.subject))
        )
        message = common_pb2.Table(
            table_id=record.table_id,
            match_id=record.match_id,
            name=record.name,
            rules=record.rules_message(),
            visibility=record.visibility,  # type: ignore[arg-type]
            invite_code=record.invite_code if show_code else "",
            state=record.state,  # type: ignore[arg-type]
            host_player_id=record.host_player_id,
            seats=[seat.occupant(index) for index, seat in enumerate(record.seats)],
            hand_number=record.hand_number,
            match_totals=list(record.match.totals),
            last_sequence=record.last_sequence,
            state_version=record.state_version,
            tournament_id=record.tournament_id,
            tournament_round=record.tournament_round,
        )
        message.create_time.FromMicroseconds(record.created_us)
        if record.match_result is not None:
            message.match_result.ParseFromString(record.match_result)
        return message

    async def _deal_record(self, record: TableRecord, *, reveal: bool) -> common_pb2.DealRecord:
        """The current hand's fairness record (its seed only if ``reveal``). Hand rows never
        change what they publish, so they are kept here once read."""
        if not record.hand_id:
            return common_pb2.DealRecord()
        hand = self._hands.get(record.hand_id)
        if hand is None:
            row = await self.store.hand(record.hand_id)
            if row is None:
                return common_pb2.DealRecord()
            hand = {
                key: row[key] for key in ("hand_id", "commitment", "player_seeds", "server_seed")
            }
            self._hands[record.hand_id] = hand
            while len(self._hands) > _VIEW_CACHE_SIZE:
                self._hands.popitem(last=False)
        return _deal_record_of(hand, reveal=reveal)

    def decorate(
        self,
        view: common_pb2.SeatView,
        record: TableRecord,
        deal: common_pb2.DealRecord,
    ) -> common_pb2.SeatView:
        """A rules-service view with the table's fields filled in."""
        view.table_id = record.table_id
        view.hand_id = record.hand_id
        view.hand_number = record.hand_number
        view.as_of_sequence = record.last_sequence
        view.state_version = record.state_version
        for index, seat in enumerate(record.seats):
            if index < len(view.seats):
                view.seats[index].occupant.CopyFrom(seat.occupant(index))
        if record.turn_deadline_us is not None and record.hand_live:
            view.turn_deadline.FromMicroseconds(record.turn_deadline_us)
        view.deal.CopyFrom(deal)
        del view.match_totals[:]
        view.match_totals.extend(record.match.totals)
        return view

    async def seat_view(self, record: TableRecord, seat: int | None) -> common_pb2.SeatView:
        """What ``seat`` (a spectator for None) may know now, as of ``record``."""
        state = record.state_message()
        if state is None:
            view = common_pb2.SeatView(
                rules=record.rules_message(),
                seats=[common_pb2.SeatPublic(seat=index) for index in range(SEATS)],
            )
            if seat is not None:
                view.seat = seat
            return self.decorate(view, record, common_pb2.DealRecord())
        cached = self._views.get(record.table_id)
        if cached is not None and cached[0] == record.state_version:
            source = cached[1][seat] if seat is not None else cached[2]
            view = common_pb2.SeatView()
            view.CopyFrom(source)
        else:
            request = rules_pb2.ViewHandRequest(state=state)
            if seat is not None:
                request.seat = seat
            view = (await self._rules_call("ViewHand", request)).view
        deal = await self._deal_record(record, reveal=not record.hand_live)
        return self.decorate(view, record, deal)

    # ----------------------------------------------------------------------------------------
    # Access

    def _acting_seat(self, record: TableRecord, claims: Claims, requested: int) -> int:
        if requested >= SEATS:
            raise Missing("SEAT_NOT_FOUND", seat=requested)
        if claims.kind == "service":
            return requested
        own = record.seat_of(claims.subject)
        if own != requested:
            raise Denied("NOT_YOUR_SEAT", seat=requested)
        return requested

    def _viewing_seat(self, record: TableRecord, claims: Claims, seat: int | None) -> int | None:
        if seat is not None and seat >= SEATS:
            raise Missing("SEAT_NOT_FOUND", seat=seat)
        if claims.kind == "service":
            return seat
        if seat is not None:
            if record.seat_of(claims.subject) != seat:
                raise Denied("NOT_YOUR_SEAT", seat=seat)
            return seat
        if record.visibility == common_pb2.TABLE_VISIBILITY_PRIVATE and not (
            record.played_by(claims.subject) or record.host_player_id == claims.subject
        ):
            raise Denied("PRIVATE_TABLE")
        return None

    # ----------------------------------------------------------------------------------------
    # CreateTable, GetTable, ListTables

    async def CreateTable(  # noqa: N802 (the generated servicer's names)
        self, request: table_pb2.CreateTableRequest, context: Any
    ) -> table_pb2.CreateTableResponse:
        claims = require_claims()
        replayed = await self._replay(
            claims.subject, "CreateTable", request, table_pb2.CreateTableResponse
        )
        if replayed is not None:
            return replayed
        rules = convert.rules_from_proto(request.rules)
        new_match(rules)  # the engine's check of the match knobs
        if len(request.name) > 64:
            raise Invalid("BAD_FIELD", field="name", value=request.name[:70])
        if len(request.seats) > SEATS:
            raise Invalid("BAD_FIELD", field="seats", value=str(len(request.seats)))
        seats = [SeatRecord() for _ in range(SEATS)]
        given: set[int] = set()
        for index, setup in enumerate(request.seats):
            field = f"seats[{index}]"
            if setup.seat >= SEATS or setup.seat in given:
                raise Invalid("BAD_FIELD", field=f"{field}.seat", value=str(setup.seat))
            given.add(setup.seat)
            if setup.kind == common_pb2.OCCUPANT_KIND_PLAYER:
                check_id(setup.player_id, f"{field}.player_id")
                seats[setup.seat] = SeatRecord(
                    kind="player", player_id=setup.player_id, reserved=True
                )
            elif setup.kind == common_pb2.OCCUPANT_KIND_BOT:
                seats[setup.seat] = SeatRecord(kind="bot", bot_level=_bot_level(setup.bot_level))
            elif setup.kind not in (common_pb2.OCCUPANT_KIND_EMPTY,):
                raise Invalid("BAD_FIELD", field=f"{field}.kind", value=str(setup.kind))
        visibility = request.visibility or common_pb2.TABLE_VISIBILITY_PUBLIC
        if visibility not in (
            common_pb2.TABLE_VISIBILITY_PUBLIC,
            common_pb2.TABLE_VISIBILITY_PRIVATE,
        ):
            raise Invalid("BAD_FIELD", field="visibility", value=str(request.visibility))
        if request.host_player_id:
            check_id(request.host_player_id, "host_player_id")
        if request.tournament_id:
            check_id(request.tournament_id, "tournament_id")
        now = self.now_us()
        table_id = f"t-{uuid.uuid4().hex}"
        resolved = convert.rules_to_proto(rules)
        row = {
            "table_id": table_id,
            "match_id": f"m-{uuid.uuid4().hex}",
            "name": request.name,
            "visibility": visibility,
            "invite_code": _invite_code()
            if visibility == common_pb2.TABLE_VISIBILITY_PRIVATE
            else "",
            "state": common_pb2.TABLE_STATE_WAITING,
            "host_player_id": request.host_player_id,
            "tournament_id": request.tournament_id,
            "tournament_round": request.tournament_round,
            "preset": rules.name,
            "rules": resolved.SerializeToString(),
            "rules_version": RULES_VERSION,
            "start_when_full": request.start_when_full,
            "created_us": now,
            "updated_us": now,
            "seats": seats_to_json(seats),
            "state_version": 0,
            "last_sequence": 0,
            "hand_number": 0,
            "hand_id": "",
            "dealer": 0,
            "hand_state": None,
            "match": MatchRecord().to_json(),
            "turn_deadline_us": None,
            "match_result": None,
        }
        record = TableRecord.from_row(row)
        response = table_pb2.CreateTableResponse(table=self.table_message(record, None))
        starts = _due_to_start(record)
        created = await self.store.create(
            row,
            (claims.subject, "CreateTable", request.request_id, response.SerializeToString()),
            timer=self._start_timer(now) if starts else None,
        )
        if not created:  # a retry raced this call and answered first
            replayed = await self._replay(
                claims.subject, "CreateTable", request, table_pb2.CreateTableResponse
            )
            assert replayed is not None
            return replayed
        structlog.contextvars.bind_contextvars(table_id=table_id)
        if starts:
            await self._start_when_full(table_id)
        return response

    async def GetTable(  # noqa: N802
        self, request: table_pb2.GetTableRequest, context: Any
    ) -> table_pb2.GetTableResponse:
        claims = require_claims()
        record = await self._load(request.table_id)
        if claims.kind == "player":
            self._viewing_seat(record, claims, None)
        return table_pb2.GetTableResponse(table=self.table_message(record, claims))

    async def ListTables(  # noqa: N802
        self, request: table_pb2.ListTablesRequest, context: Any
    ) -> table_pb2.ListTablesResponse:
        claims = require_claims()
        if request.page_size < 0:
            raise Invalid("BAD_FIELD", field="page_size", value=str(request.page_size))
        size = min(request.page_size or 50, 200)
        _known("preset", [request.preset], common_pb2.RulePreset.values())
        _known("states", request.states, common_pb2.TableState.values())
        _known("visibility", [request.visibility], common_pb2.TableVisibility.values())
        for field in ("tournament_id", "player_id"):  # filters: empty for any
            if getattr(request, field):
                check_id(getattr(request, field), field)
        preset = None
        if request.preset:
            preset = common_pb2.RulePreset.Name(request.preset).removeprefix("RULE_PRESET_").lower()
        fingerprint = hashlib.sha256(
            json.dumps(
                [request.preset, list(request.states), request.visibility, request.tournament_id,
                 request.player_id]
            ).encode()
        ).hexdigest()[:16]  # fmt: skip
        after = _read_page_token(request.page_token, fingerprint)
        records = await self.store.list_tables(
            preset=preset,
            states=list(request.states),
            visibility=request.visibility or None,
            tournament_id=request.tournament_id or None,
            player_id=request.player_id or None,
            after=after,
            limit=size + 1,
        )
        page, more = records[:size], len(records) > size
        token = ""
        if more:
            last = page[-1]
            token = _page_token((last.created_us, last.table_id), fingerprint)
        return table_pb2.ListTablesResponse(
            tables=[self.table_message(record, claims) for record in page], next_page_token=token
        )

    # ----------------------------------------------------------------------------------------
    # Sit, Leave, SetDealSeed, CloseTable

    async def Sit(  # noqa: N802
        self, request: table_pb2.SitRequest, context: Any
    ) -> table_pb2.SitResponse:
        claims = require_claims()
        replayed = await self._replay(claims.subject, "Sit", request, table_pb2.SitResponse)
        if replayed is not None:
            return replayed
        if claims.kind == "service":
            player_id = check_id(request.player_id, "player_id")
        else:
            player_id = claims.subject
        display_name = (request.display_name or player_id)[:64]
        seed = ""
        if request.deal_seed:
            seed = parse_seed(request.deal_seed, field="deal_seed").hex()
        for _attempt in range(5):
            record = await self._load(request.table_id)
            try:
                return await self._sit(record, claims, request, player_id, display_name, seed)
            except Stale:
                continue  # someone else sat meanwhile: decide again on the new state
        raise NotReady("DATABASE_UNAVAILABLE")

    async def _sit(
        self,
        record: TableRecord,
        claims: Claims,
        request: table_pb2.SitRequest,
        player_id: str,
        display_name: str,
        seed: str,
    ) -> table_pb2.SitResponse:
        if record.state == common_pb2.TABLE_STATE_FINISHED:
            raise Conflict("TABLE_FINISHED")
        if record.state == common_pb2.TABLE_STATE_CLOSED:
            raise Conflict("TABLE_CLOSED")
        requested = request.seat if request.HasField("seat") else None
        if requested is not None and requested >= SEATS:
            raise Missing("SEAT_NOT_FOUND", seat=requested)
        seats = list(record.seats)
        own = record.seat_of(player_id)
        now = self.now_us()
        change = Change.presence(record, now)
        if own is not None:
            if requested is not None and requested != own:
                raise Conflict("ALREADY_SEATED", seat=own)
            seat = own
            current = seats[own]
            if current.away or current.left:
                seats[own] = current.replace(
                    away=False, left=False, missed=0, display_name=display_name
                )
                change.drafts.append(
                    _presence(common_pb2.EVENT_KIND_SEAT_BACK, own, seats[own], record)
                )
                if record.hand_live and record.state_message().turn == own:  # type: ignore[union-attr]
                    # Their turn, now theirs again: a fresh turn clock, no bot step.
                    change.keep_timer = False
                    change.timer, deadline = self._turn_timer(record, seats, own, now)
                    change.updates["turn_deadline_us"] = deadline
            if seed:
                seats[own] = seats[own].replace(deal_seed=seed)
        else:
            if record.state != common_pb2.TABLE_STATE_WAITING:
                raise Conflict("ALREADY_STARTED")
            seat = self._free_seat(record, player_id, requested)
            target = seats[seat]
            reserved_for_player = target.reserved and target.player_id == player_id
            if (
                claims.kind == "player"
                and record.visibility == common_pb2.TABLE_VISIBILITY_PRIVATE
                and not reserved_for_player
                and record.host_player_id != player_id
                and request.invite_code != record.invite_code
            ):
                raise Denied("BAD_INVITE_CODE")
            seats[seat] = SeatRecord(
                kind="player", player_id=player_id, display_name=display_name, deal_seed=seed
            )
            change.drafts.append(
                _presence(common_pb2.EVENT_KIND_SEAT_TAKEN, seat, seats[seat], record)
            )
        change.updates["seats"] = seats_to_json(seats)
        after = dataclasses.replace(record, seats=tuple(seats))
        starts = _due_to_start(after)
        if starts:
            # The start is owed from this commit on: its timer is part of it.
            change.keep_timer = False
            change.timer = self._start_timer(now)

        def respond(events: Sequence[StoredEvent]) -> bytes:
            sequenced = dataclasses.replace(after, last_sequence=record.last_sequence + len(events))
            return table_pb2.SitResponse(
                table=self.table_message(sequenced, claims), seat=seat
            ).SerializeToString()

        change.answer = (claims.subject, "Sit", request.request_id, respond)
        committed = await self._commit(change)
        assert committed.answer is not None
        response = table_pb2.SitResponse.FromString(committed.answer)
        if starts:
            await self._start_when_full(record.table_id)
        return response

    def _free_seat(self, record: TableRecord, player_id: str, requested: int | None) -> int:
        seats = record.seats
        if requested is not None:
            target = seats[requested]
            if target.reserved and target.player_id != player_id:
                raise Conflict("SEAT_NOT_RESERVED_FOR_YOU", seat=requested)
            if target.held:
                raise Conflict("SEAT_TAKEN", seat=requested)
            return requested
        for index, seat in enumerate(seats):
            if seat.reserved and seat.player_id == player_id:
                return index
        for index, seat in enumerate(seats):
            if seat.kind == "empty":
                return index
        raise Conflict("NO_FREE_SEAT")

    async def Leave(  # noqa: N802
        self, request: table_pb2.LeaveRequest, context: Any
    ) -> table_pb2.LeaveResponse:
        claims = require_claims()
        replayed = await self._replay(claims.subject, "Leave", request, table_pb2.LeaveResponse)
        if replayed is not None:
            return replayed
        player_id = (
            check_id(request.player_id, "player_id") if claims.kind == "service" else claims.subject
        )
        for _attempt in range(5):
            record = await self._load(request.table_id)
            seat = record.seat_of(player_id)
            if seat is None:
                raise Conflict("NOT_SEATED")
            seats = list(record.seats)
            now = self.now_us()
            change = Change.presence(record, now)
            if record.state == common_pb2.TABLE_STATE_WAITING:
                seats[seat] = SeatRecord()
                change.keep_timer = False  # no longer full: no start is owed
            elif record.state == common_pb2.TABLE_STATE_PLAYING:
                seats[seat] = seats[seat].replace(left=True, away=True)
                state = record.state_message()
                if record.hand_live and state is not None and state.turn == seat:
                    change.keep_timer = False
                    change.timer = TimerSet("bot", now + _us(self.options.bot_move_seconds))
                    change.updates["turn_deadline_us"] = None
            else:
                raise Conflict("TABLE_FINISHED")
            change.drafts.append(
                _presence(common_pb2.EVENT_KIND_SEAT_LEFT, seat, seats[seat], record)
            )
            change.updates["seats"] = seats_to_json(seats)
            after = dataclasses.replace(
                record, seats=tuple(seats), last_sequence=record.last_sequence + 1
            )
            response = table_pb2.LeaveResponse(table=self.table_message(after, claims))
            change.answer = (
                claims.subject,
                "Leave",
                request.request_id,
                _constant(response.SerializeToString()),
            )
            try:
                await self._commit(change)
            except Stale:
                continue
            return response
        raise NotReady("DATABASE_UNAVAILABLE")

    async def SetDealSeed(  # noqa: N802
        self, request: table_pb2.SetDealSeedRequest, context: Any
    ) -> table_pb2.SetDealSeedResponse:
        claims = require_claims()
        replayed = await self._replay(
            claims.subject, "SetDealSeed", request, table_pb2.SetDealSeedResponse
        )
        if replayed is not None:
            return replayed
        seed = parse_seed(request.deal_seed, field="deal_seed").hex() if request.deal_seed else ""
        for _attempt in range(5):
            record = await self._load(request.table_id)
            seat = record.seat_of(claims.subject)
            if seat is None:
                raise Conflict("NOT_SEATED")
            if record.state == common_pb2.TABLE_STATE_FINISHED:
                raise Conflict("TABLE_FINISHED")  # no hand will be dealt again
            if record.state == common_pb2.TABLE_STATE_CLOSED:
                raise Conflict("TABLE_CLOSED")
            seats = list(record.seats)
            seats[seat] = seats[seat].replace(deal_seed=seed)
            change = Change.presence(record, self.now_us())
            change.updates["seats"] = seats_to_json(seats)
            response = table_pb2.SetDealSeedResponse(from_hand_number=record.hand_number + 1)
            change.answer = (
                claims.subject,
                "SetDealSeed",
                request.request_id,
                _constant(response.SerializeToString()),
            )
            try:
                await self._commit(change)
            except Stale:
                continue
            return response
        raise NotReady("DATABASE_UNAVAILABLE")

    async def CloseTable(  # noqa: N802
        self, request: table_pb2.CloseTableRequest, context: Any
    ) -> table_pb2.CloseTableResponse:
        claims = require_claims()
        replayed = await self._replay(
            claims.subject, "CloseTable", request, table_pb2.CloseTableResponse
        )
        if replayed is not None:
            return replayed
        for _attempt in range(5):
            record = await self._load(request.table_id)
            if claims.kind == "player":
                if record.host_player_id != claims.subject:
                    raise Denied("NOT_THE_HOST")
                if record.state != common_pb2.TABLE_STATE_WAITING:
                    raise Conflict("ALREADY_STARTED")
            if record.state in (common_pb2.TABLE_STATE_FINISHED, common_pb2.TABLE_STATE_CLOSED):
                raise Conflict(
                    "TABLE_FINISHED"
                    if record.state == common_pb2.TABLE_STATE_FINISHED
                    else "TABLE_CLOSED"
                )
            change = Change(record.table_id, record.state_version, game=True, now_us=self.now_us())
            change.drafts.append(
                EventDraft(common_pb2.Event(kind=common_pb2.EVENT_KIND_TABLE_CLOSED))
            )
            change.updates.update(state=common_pb2.TABLE_STATE_CLOSED, turn_deadline_us=None)
            after = dataclasses.replace(
                record,
                state=common_pb2.TABLE_STATE_CLOSED,
                state_version=record.state_version + 1,
                last_sequence=record.last_sequence + 1,
            )
            response = table_pb2.CloseTableResponse(table=self.table_message(after, claims))
            change.answer = (
                claims.subject,
                "CloseTable",
                request.request_id,
                _constant(response.SerializeToString()),
            )
            try:
                await self._commit(change)
            except Stale:
                continue
            _log.info("table closed", table_id=record.table_id, reason=request.reason[:200])
            return response
        raise NotReady("DATABASE_UNAVAILABLE")

    # ----------------------------------------------------------------------------------------
    # Start and deals

    async def Start(  # noqa: N802
        self, request: table_pb2.StartRequest, context: Any
    ) -> table_pb2.StartResponse:
        claims = require_claims()
        replayed = await self._replay(claims.subject, "Start", request, table_pb2.StartResponse)
        if replayed is not None:
            return replayed
        for _attempt in range(5):
            record = await self._load(request.table_id)
            if claims.kind == "player" and record.host_player_id != claims.subject:
                raise Denied("NOT_THE_HOST")
            answer = (claims.subject, "Start", request.request_id)
            try:
                committed = await self._start(
                    record,
                    fill_with_bots=request.fill_with_bots,
                    bot_level=request.bot_level,
                    answer=answer,
                    claims=claims,
                )
            except Stale:
                continue  # someone sat or left meanwhile: decide again on the new seats
            assert committed.answer is not None
            return table_pb2.StartResponse.FromString(committed.answer)
        raise NotReady("DATABASE_UNAVAILABLE")

    async def _start(
        self,
        record: TableRecord,
        *,
        fill_with_bots: bool,
        bot_level: int,
        answer: tuple[str, str, str] | None = None,
        claims: Claims | None = None,
    ) -> Committed:
        if record.state == common_pb2.TABLE_STATE_PLAYING:
            raise Conflict("ALREADY_STARTED")
        if record.state != common_pb2.TABLE_STATE_WAITING:
            raise Conflict(
                "TABLE_FINISHED"
                if record.state == common_pb2.TABLE_STATE_FINISHED
                else "TABLE_CLOSED"
            )
        seats = list(record.seats)
        if fill_with_bots:
            for index, seat in enumerate(seats):
                if not seat.held:
                    seats[index] = SeatRecord(kind="bot", bot_level=_bot_level(bot_level))
        empty = [index for index, seat in enumerate(seats) if not seat.held]
        if empty:
            raise Conflict("SEATS_EMPTY", seats=", ".join(map(str, empty)))
        now = self.now_us()
        # The seats as read: a Sit or Leave committed since makes this start stale, never undone.
        change = Change(
            record.table_id,
            record.state_version,
            game=True,
            now_us=now,
            expected_sequence=record.last_sequence,
        )
        change.drafts.append(EventDraft(common_pb2.Event(kind=common_pb2.EVENT_KIND_MATCH_STARTED)))
        change.updates.update(state=common_pb2.TABLE_STATE_PLAYING, seats=seats_to_json(seats))
        playing = dataclasses.replace(
            record, state=common_pb2.TABLE_STATE_PLAYING, seats=tuple(seats)
        )
        dealt, views = await self._deal_into(change, playing)
        if answer is not None:
            caller, method, request_id = answer

            def respond(events: Sequence[StoredEvent]) -> bytes:
                after = dataclasses.replace(
                    dealt,
                    state_version=events[-1].state_version,
                    last_sequence=events[-1].sequence,
                )
                return table_pb2.StartResponse(
                    table=self.table_message(after, claims)
                ).SerializeToString()

            change.answer = (caller, method, request_id, respond)
        committed = await self._commit(change)
        self._remember_views(record.table_id, committed.state_version, *views)
        metrics.HANDS_STARTED.labels(record.preset).inc()
        return committed

    def _start_timer(self, now: int) -> TimerSet:
        """The timer a change that fills a ``start_when_full`` table commits: the start is
        owed from then on. The call that filled the table tries it at once; the timer is due
        once that try's rules call would have timed out, so it only fires if the try failed or
        its pod died, and is retried (every second) until the table has started."""
        return TimerSet("start", now + _us(self.options.peer_timeout_seconds))

    async def _start_when_full(self, table_id: str) -> None:
        """The immediate try at a full table's start (``_start_timer``): a failure here is
        left to the timer, the change that filled the table being committed and answered."""
        try:
            record = await self._load(table_id)
            if _due_to_start(record):
                await self._start(record, fill_with_bots=False, bot_level=0)
        except (Stale, Conflict):
            return  # someone started it, or changed its seats, first
        except OkeyError as error:
            _log.info("table start left to its timer", table_id=table_id, code=error.code)

    async def _deal_into(
        self, change: Change, record: TableRecord
    ) -> tuple[TableRecord, tuple[list[Any], Any]]:
        """Add the next hand's deal to ``change``: the committed seed, the deck from the fair
        shuffle, the opening state from the rules service; the record as it will be."""
        hand_number = record.hand_number + 1
        hand_id = f"{record.table_id}-h{hand_number}"
        dealer = record.match.dealer
        server_seed = secrets.token_bytes(32)
        player_seeds = [
            bytes.fromhex(seat.deal_seed) if seat.deal_seed else None for seat in record.seats
        ]
        deck = deck_order(record.table_id, hand_number, server_seed, player_seeds)
        deck_ids = [tile.id for tile in deck]
        dealt = await self._rules_call(
            "DealHand",
            rules_pb2.DealHandRequest(
                rules=record.rules_message(), dealer=dealer, deck_tile_ids=deck_ids
            ),
        )
        state = dealt.state
        deal = common_pb2.DealRecord(
            hand_id=hand_id,
            server_seed_sha256=commitment(server_seed),
            player_seeds=[seed.hex() if seed else "" for seed in player_seeds],
        )
        event = common_pb2.Event(
            kind=common_pb2.EVENT_KIND_HAND_DEALT,
            seat=dealer,
            hand_id=hand_id,
            hand_number=hand_number,
            deal=deal,
        )
        event.tiles.append(dealt.views[0].indicator)
        draft = EventDraft(event)
        for seat in range(SEATS):
            rack = common_pb2.Event(private_tiles=[item.tile for item in dealt.views[seat].rack])
            draft.private[seat] = rack.SerializeToString()
        change.drafts.append(draft)
        after = dataclasses.replace(
            record,
            hand_number=hand_number,
            hand_id=hand_id,
            dealer=dealer,
            hand_state=state.SerializeToString(),
            _parsed={},
        )
        change.timer, deadline = self._turn_timer(
            after, list(record.seats), state.turn, change.now_us
        )
        change.drafts.append(_turn_started(state.turn, hand_id, hand_number, deadline))
        change.updates.update(
            hand_number=hand_number,
            hand_id=hand_id,
            dealer=dealer,
            hand_state=after.hand_state,
            turn_deadline_us=deadline,
        )
        change.hand_id = hand_id
        change.hand_insert = {
            "hand_id": hand_id,
            "table_id": record.table_id,
            "match_id": record.match_id,
            "hand_number": hand_number,
            "dealer": dealer,
            "rules_version": state.rules_version,
            "server_seed": server_seed.hex(),
            "commitment": deal.server_seed_sha256,
            "player_seeds": json.dumps(list(deal.player_seeds)),
            "deck": json.dumps(deck_ids),
            "seats": seats_to_json(record.seats),
            "started_us": change.now_us,
        }
        views = (list(dealt.views), dealt.spectator_view)
        return dataclasses.replace(after, turn_deadline_us=deadline), views

    def _turn_timer(
        self, record: TableRecord, seats: Sequence[SeatRecord], seat: int, now: int
    ) -> tuple[TimerSet | None, int | None]:
        """The timer for a turn that starts now, and the deadline players see (None: none)."""
        if seats[seat].automatic:
            return TimerSet("bot", now + _us(self.options.bot_move_seconds)), None
        seconds = record.rules_message().turn_seconds or self.options.default_turn_seconds
        if seconds <= 0:
            return None, None
        deadline = now + _us(seconds)
        return TimerSet("turn", deadline), deadline

    # ----------------------------------------------------------------------------------------
    # Act

    async def Act(  # noqa: N802
        self, request: table_pb2.ActRequest, context: Any
    ) -> table_pb2.ActResponse:
        claims = require_claims()
        check_request_id(request.request_id)
        check_id(request.table_id, "table_id")
        if claims.kind == "player":
            # RATE_LIMITED; a retry (the same request id) is not counted again.
            self.act_limits.check(claims.subject, request.table_id, request.request_id)
        record, stored = await self.store.load_for_request(
            request.table_id, claims.subject, "Act", request.request_id
        )
        replayed = _answered(stored, request, table_pb2.ActResponse)
        if replayed is not None:
            return replayed
        if record is None:
            raise Missing("TABLE_NOT_FOUND", table_id=request.table_id)
        if not request.actions:
            raise Invalid("EMPTY_MOVE", field="actions")
        if len(request.actions) > _MAX_ACTIONS:
            raise Invalid("BAD_FIELD", field="actions", value=f"{len(request.actions)} moves")
        if request.expected_state_version == 0:
            raise Invalid("FIELD_REQUIRED", field="expected_state_version")
        seat = self._acting_seat(record, claims, request.seat)
        source = (
            table_pb2.MOVE_SOURCE_PLAYER if claims.kind == "player" else table_pb2.MOVE_SOURCE_BOT
        )
        committed, _view = await self.apply_moves(
            record,
            seat,
            list(request.actions),
            expected_version=request.expected_state_version,
            source=source,
            answer=(claims.subject, "Act", request.request_id),
            back_from_away=claims.kind == "player",
        )
        assert committed.answer is not None
        return table_pb2.ActResponse.FromString(committed.answer)

    async def apply_moves(
        self,
        record: TableRecord,
        seat: int,
        actions: list[common_pb2.Action],
        *,
        expected_version: int,
        source: int,
        answer: tuple[str, str, str],
        back_from_away: bool = False,
    ) -> tuple[Committed, common_pb2.SeatView]:
        """Apply ``actions`` for ``seat`` through the rules service and commit them, with
        whatever follows (the next turn's timer, the hand's end, the match's end, the next
        deal's timer): one transaction, one new state_version."""
        if record.state != common_pb2.TABLE_STATE_PLAYING:
            if record.state == common_pb2.TABLE_STATE_WAITING:
                raise Conflict("TABLE_NOT_PLAYING")
            raise Conflict(
                "TABLE_FINISHED"
                if record.state == common_pb2.TABLE_STATE_FINISHED
                else "TABLE_CLOSED"
            )
        if expected_version != record.state_version:
            raise Stale("STALE_VERSION", version=expected_version, current=record.state_version)
        before = record.state_message()
        if before is None or not record.hand_live:
            raise Conflict("HAND_NOT_IN_PLAY")
        applied = await self._rules_call(
            "ApplyAction", rules_pb2.ApplyActionRequest(state=before, seat=seat, actions=actions)
        )
        state = applied.state
        now = self.now_us()
        change = Change(
            record.table_id, record.state_version, game=True, now_us=now, hand_id=record.hand_id
        )
        first_move_event: EventDraft | None = None
        for event in applied.events:
            draft = _split_private(event, record)
            first_move_event = first_move_event or draft
            change.drafts.append(draft)
        assert first_move_event is not None  # every applied move causes an event
        change.moves = [
            Move(seat, action.SerializeToString(), source, first_move_event, index)
            for index, action in enumerate(actions)
        ]
        for action in actions:
            metrics.MOVES.labels(
                action.WhichOneof("move") or "unknown", _SOURCE_LABELS.get(source, "other")
            ).inc()
        change.updates["hand_state"] = state.SerializeToString()
        after = dataclasses.replace(record, hand_state=change.updates["hand_state"], _parsed={})
        ended = state.phase == common_pb2.PHASE_ENDED
        if ended:
            after = await self._end_hand_into(change, after, state)
        new_turn = state.turn != before.turn or state.turn_number != before.turn_number

        def finalize(current: tuple[SeatRecord, ...]) -> None:
            # Who holds the seats now (a Leave may have raced this move): the timer of the next
            # turn, and the mover back from away, follow the seats as they are, not as read.
            nonlocal after
            seats = list(current)
            if back_from_away and (seats[seat].away or seats[seat].missed):
                was_away = seats[seat].away and not seats[seat].left
                seats[seat] = seats[seat].replace(away=False, left=False, missed=0)
                if was_away:
                    change.drafts.append(
                        _presence(common_pb2.EVENT_KIND_SEAT_BACK, seat, seats[seat], record)
                    )
                change.updates["seats"] = seats_to_json(seats)
            after = dataclasses.replace(after, seats=tuple(seats))
            if ended:
                return
            if new_turn:
                change.timer, deadline = self._turn_timer(after, seats, state.turn, now)
                change.updates["turn_deadline_us"] = deadline
                change.drafts.append(
                    _turn_started(state.turn, record.hand_id, record.hand_number, deadline)
                )
                after = dataclasses.replace(after, turn_deadline_us=deadline)
            elif seats[seat].automatic:
                change.timer = TimerSet("bot", now)  # the rest of the bot's turn, at once
            else:
                change.keep_timer = True

        change.finalize = finalize
        caller, method, request_id = answer
        views, spectator = list(applied.views), applied.spectator_view
        acting_view: list[common_pb2.SeatView] = []

        def respond(events: Sequence[StoredEvent]) -> bytes:
            final = dataclasses.replace(
                after, state_version=events[-1].state_version, last_sequence=events[-1].sequence
            )
            view = common_pb2.SeatView()
            view.CopyFrom(views[seat])
            self.decorate(view, final, common_pb2.DealRecord())
            acting_view.append(view)
            return table_pb2.ActResponse(
                events=[event.for_viewer(seat) for event in events], view=view
            ).SerializeToString()

        change.answer = (caller, method, request_id, respond)
        committed = await self._commit(change)
        if state.phase != common_pb2.PHASE_ENDED:
            self._remember_views(record.table_id, committed.state_version, views, spectator)
        return committed, acting_view[0]

    async def _end_hand_into(
        self, change: Change, record: TableRecord, state: common_pb2.HandState
    ) -> TableRecord:
        """The hand has ended: reveal the seed, record the result in the match, queue the hand
        (and the match, if it is over) for scoring, and set the next deal's timer."""
        hand = await self.store.hand(record.hand_id)
        if hand is None:
            raise Internal("INTERNAL")
        revealed = _deal_record_of(hand, reveal=True)
        for draft in change.drafts:
            if draft.event.kind == common_pb2.EVENT_KIND_HAND_ENDED:
                draft.event.deal.CopyFrom(revealed)
        rules = convert.rules_from_proto(record.rules_message())
        match = MatchState(
            rules=rules,
            dealer=record.match.dealer,
            hands=tuple(
                convert.hand_result_from_proto(common_pb2.HandResult.FromString(bytes.fromhex(r)))
                for r in record.match.results
            ),
            totals=record.match.totals,
        )
        result = convert.hand_result_from_proto(state.result)
        match = record_hand(match, result)
        match_record = MatchRecord(
            dealer=match.dealer,
            totals=tuple(match.totals),
            hand_ids=(*record.match.hand_ids, record.hand_id),
            results=(*record.match.results, state.result.SerializeToString().hex()),
        )
        end_us = change.now_us
        change.updates.update(
            match=match_record.to_json(), turn_deadline_us=None, dealer=match.dealer
        )
        change.hand_update = {
            "hand_id": record.hand_id,
            "ended_us": end_us,
            "result": state.result.SerializeToString(),
            "final_state": state.SerializeToString(),
        }
        seat_players = _seat_players(record.seats)
        record_hand_request = scoring_pb2.RecordHandRequest(
            request_id=f"table-{record.hand_id}"[:64],
            hand_id=record.hand_id,
            table_id=record.table_id,
            match_id=record.match_id,
            tournament_id=record.tournament_id,
            hand_number=record.hand_number,
            seats=seat_players,
            final_state=state,
            deal=revealed,
            end_time=_timestamp(end_us),
        )
        change.outbox.append(("hand", record.hand_id, record_hand_request.SerializeToString()))
        metrics.HANDS_FINISHED.labels(record.preset).inc()
        after = dataclasses.replace(
            record, match=match_record, turn_deadline_us=None, dealer=match.dealer
        )
        if not match.ended:
            change.timer = TimerSet("deal", end_us + _us(self.options.next_hand_seconds))
            return after
        result_message = common_pb2.MatchResult(
            match_id=record.match_id,
            table_id=record.table_id,
            seats=[
                common_pb2.MatchSeatResult(
                    seat=index,
                    player_id=player.player_id,
                    display_name=player.display_name,
                    total=match.totals[index],
                    winner=index in match.winners,
                )
                for index, player in enumerate(seat_players)
            ],
            team_totals=list(match.team_totals()) if rules.partners else [],
            hands_played=match.hands_played,
            hand_ids=list(match_record.hand_ids),
            ended_at=_timestamp(end_us),
        )
        change.drafts.append(
            EventDraft(
                common_pb2.Event(
                    kind=common_pb2.EVENT_KIND_MATCH_ENDED, match_result=result_message
                )
            )
        )
        change.updates.update(
            state=common_pb2.TABLE_STATE_FINISHED, match_result=result_message.SerializeToString()
        )
        record_match_request = scoring_pb2.RecordMatchRequest(
            request_id=f"table-{record.match_id}"[:64],
            result=result_message,
            rules=record.rules_message(),
            seats=seat_players,
            tournament_id=record.tournament_id,
            tournament_round=record.tournament_round,
        )
        change.outbox.append(("match", record.match_id, record_match_request.SerializeToString()))
        change.timer = None
        metrics.MATCHES_FINISHED.labels(record.preset).inc()
        return dataclasses.replace(
            after,
            state=common_pb2.TABLE_STATE_FINISHED,
            match_result=result_message.SerializeToString(),
        )

    # ----------------------------------------------------------------------------------------
    # Views and streams

    async def GetSeatView(  # noqa: N802
        self, request: table_pb2.GetSeatViewRequest, context: Any
    ) -> table_pb2.GetSeatViewResponse:
        claims = require_claims()
        record = await self._load(request.table_id)
        seat = self._viewing_seat(
            record, claims, request.seat if request.HasField("seat") else None
        )
        return table_pb2.GetSeatViewResponse(view=await self.seat_view(record, seat))

    async def WatchTable(  # noqa: N802
        self, request: table_pb2.WatchTableRequest, context: Any
    ) -> AsyncIterator[table_pb2.WatchTableResponse]:
        claims = require_claims()
        record = await self._load(request.table_id)
        seat = self._viewing_seat(
            record, claims, request.seat if request.HasField("seat") else None
        )
        table_id = record.table_id
        after = request.after_sequence
        self.feed.watching(table_id, +1)
        try:
            if request.start_with_view:
                view = await self.seat_view(record, seat)
                after = view.as_of_sequence
                yield table_pb2.WatchTableResponse(view=view)
            elif after > record.last_sequence:
                raise Invalid(
                    "SEQUENCE_AHEAD", after_sequence=after, last_sequence=record.last_sequence
                )
            while True:
                events = await self.store.events_after(table_id, after, limit=_MAX_EVENTS_PER_READ)
                for stored in events:
                    yield table_pb2.WatchTableResponse(event=stored.for_viewer(seat))
                    after = stored.sequence
                    if stored.kind == common_pb2.EVENT_KIND_TABLE_CLOSED:
                        return
                if len(events) < _MAX_EVENTS_PER_READ:
                    await self.feed.wait_beyond(table_id, after, SAFETY_POLL_SECONDS)
        finally:
            self.feed.watching(table_id, -1)

    # ----------------------------------------------------------------------------------------
    # Hand records

    async def GetHandRecord(  # noqa: N802
        self, request: table_pb2.GetHandRecordRequest, context: Any
    ) -> table_pb2.GetHandRecordResponse:
        claims = require_claims()
        check_id(request.hand_id, "hand_id")
        record = await self.hand_record(request.hand_id)
        if claims.kind == "player" and not any(
            occupant.player_id == claims.subject for occupant in record.seats
        ):
            raise Denied("NOT_AT_HAND", hand_id=request.hand_id)
        return table_pb2.GetHandRecordResponse(record=record)

    async def hand_record(self, hand_id: str) -> table_pb2.HandRecord:
        """The full record of an ended hand (NOT_FOUND, or HAND_IN_PLAY while it is live)."""
        hand = await self.store.hand(hand_id)
        if hand is None:
            raise Missing("HAND_NOT_FOUND", hand_id=hand_id)
        if hand["ended_us"] is None:
            raise Conflict("HAND_IN_PLAY", hand_id=hand_id)
        table = await self.store.load(hand["table_id"])
        assert table is not None
        final = common_pb2.HandState.FromString(bytes(hand["final_state"]))
        seats = [
            SeatRecord.from_json(item).occupant(index)
            for index, item in enumerate(json.loads(hand["seats"]))
        ]
        moves = [
            table_pb2.RecordedMove(
                sequence=row["sequence"],
                seat=row["seat"],
                action=common_pb2.Action.FromString(bytes(row["action"])),
                source=row["source"],
                time=_timestamp(row["time_us"]),
            )
            for row in await self.store.moves(hand_id)
        ]
        return table_pb2.HandRecord(
            hand_id=hand_id,
            table_id=hand["table_id"],
            match_id=hand["match_id"],
            hand_number=hand["hand_number"],
            rules_version=hand["rules_version"],
            rules=final.rules,
            dealer=hand["dealer"],
            deal=_deal_record_of(hand, reveal=True),
            deck_tile_ids=json.loads(hand["deck"]),
            moves=moves,
            result=common_pb2.HandResult.FromString(bytes(hand["result"])),
            seats=seats,
        )

    # ----------------------------------------------------------------------------------------
    # Automatic play: bots, away players, timeouts, the next deal (called by the timer worker)

    async def play_due(self, table_id: str) -> None:
        """Do what the table's due timer is for (the start of a full table, a timed-out turn, a
        bot's step, the next deal). Any pod may run this for any table: every step is a change
        committed against the version it was computed from, so a step another pod made first is
        simply not made again; a step that fails leaves the timer to be retried."""
        record = await self.store.load(table_id)
        if record is not None and _due_to_start(record):
            await self._start(record, fill_with_bots=False, bot_level=0)
            return
        if record is None or record.state != common_pb2.TABLE_STATE_PLAYING:
            await self._drop_timer(table_id, record)
            return
        if not record.hand_live:
            await self._deal_next(record)
            return
        state = record.state_message()
        assert state is not None
        seat = state.turn
        source = table_pb2.MOVE_SOURCE_BOT
        if not record.seats[seat].automatic:
            if record.turn_deadline_us is not None and record.turn_deadline_us > self.now_us():
                await self.store.postpone_timer(table_id, record.turn_deadline_us)
                return
            if record.turn_deadline_us is None:
                await self._drop_timer(table_id, record)
                return
            record = await self._time_out(record, seat)
            source = table_pb2.MOVE_SOURCE_TIMEOUT
        for _step in range(4):  # a turn is at most: draw or take, then put down and discard
            turn_before = state.turn_number
            view = await self.seat_view(record, seat)
            actions = await self._bot_actions(record, seat, view)
            await self.apply_moves(
                record,
                seat,
                actions,
                expected_version=record.state_version,
                source=source,
                answer=(
                    AUTOPLAY_CALLER,
                    "Act",
                    f"auto-{record.hand_id}-v{record.state_version}"[:64],
                ),
            )
            record = await self._load(table_id)
            state = record.state_message()
            if (
                state is None
                or not record.hand_live
                or state.turn != seat
                or state.turn_number != turn_before
                or record.state != common_pb2.TABLE_STATE_PLAYING
            ):
                return

    async def _drop_timer(self, table_id: str, record: TableRecord | None) -> None:
        if record is None:
            return
        change = Change(
            table_id, record.state_version, game=False, now_us=self.now_us(), timer=None
        )
        with contextlib.suppress(Stale):
            await self.store.commit(change)

    async def _deal_next(self, record: TableRecord) -> None:
        change = Change(record.table_id, record.state_version, game=True, now_us=self.now_us())
        _after, views = await self._deal_into(change, record)
        committed = await self._commit(change)
        self._remember_views(record.table_id, committed.state_version, *views)
        metrics.HANDS_STARTED.labels(record.preset).inc()

    async def _time_out(self, record: TableRecord, seat: int) -> TableRecord:
        """The seat's time ran out: say so, count the miss (away after too many), and let a bot
        play the rest of the turn."""
        metrics.TURN_TIMEOUTS.inc()
        seats = list(record.seats)
        missed = seats[seat].missed + 1
        away = missed >= self.options.missed_turns_before_away
        seats[seat] = seats[seat].replace(missed=missed, away=away or seats[seat].away)
        now = self.now_us()
        change = Change.presence(record, now, keep_timer=False)
        change.drafts.append(
            EventDraft(
                common_pb2.Event(
                    kind=common_pb2.EVENT_KIND_TURN_TIMED_OUT,
                    seat=seat,
                    hand_id=record.hand_id,
                    hand_number=record.hand_number,
                )
            )
        )
        if away:
            change.drafts.append(
                _presence(common_pb2.EVENT_KIND_SEAT_AWAY, seat, seats[seat], record)
            )
        change.updates.update(seats=seats_to_json(seats), turn_deadline_us=None)
        # If this pod dies now, whoever claims the timer next plays the bot's step.
        change.timer = TimerSet("bot", now)
        await self.store.commit(change)
        fresh = await self.store.load(record.table_id)
        assert fresh is not None
        if fresh.last_sequence:
            self.feed.publish(record.table_id, fresh.last_sequence)
        return fresh

    async def _bot_actions(
        self, record: TableRecord, seat: int, view: common_pb2.SeatView
    ) -> list[common_pb2.Action]:
        level = record.seats[seat].bot_level or common_pb2.BOT_LEVEL_NORMAL
        digest = hashlib.sha256(
            f"{record.hand_id}|{view.turn_number}|{view.phase}|{record.state_version}".encode()
        ).digest()
        seed = int.from_bytes(digest[:8], "big")
        request = bot_pb2.NextStepRequest(view=view, phase=view.phase, level=level, seed=seed)  # type: ignore[arg-type]
        if level == common_pb2.BOT_LEVEL_HARD:
            history = await self.store.events_after(
                record.table_id, 0, limit=1000, hand_id=record.hand_id
            )
            request.history.extend(stored.for_viewer(seat) for stored in history)
        try:
            answer = await self._bot.NextStep(
                request, metadata=self.peers.metadata(), timeout=self.options.peer_timeout_seconds
            )
            return list(answer.actions)
        except grpc.aio.AioRpcError as error:
            problem = _peer_error(error, "BOT_UNAVAILABLE")
            if not isinstance(problem, NotReady):
                raise problem from None
        metrics.BOT_FALLBACKS.inc()
        engine_view = convert.seat_view_from_proto(view)
        rules = convert.rules_from_proto(view.rules)
        decision = fallback_decision(engine_view, rules, seed)
        return [convert.action_to_proto(action) for action in decision.actions]


# --------------------------------------------------------------------------------------------
# Helpers


_SOURCE_LABELS: Final[dict[int, str]] = {
    table_pb2.MOVE_SOURCE_PLAYER: "player",
    table_pb2.MOVE_SOURCE_BOT: "bot",
    table_pb2.MOVE_SOURCE_TIMEOUT: "timeout",
}


def _due_to_start(record: TableRecord) -> bool:
    """A waiting ``start_when_full`` table whose every seat is held: its start is owed."""
    return (
        record.state == common_pb2.TABLE_STATE_WAITING
        and record.start_when_full
        and all(seat.held for seat in record.seats)
    )


def _answered(stored: tuple[str, bytes] | None, request: Any, kind: type[_M]) -> _M | None:
    if stored is None:
        return None
    table_id, answer = stored
    if getattr(request, "table_id", table_id) != table_id:
        raise Invalid("REQUEST_ID_REUSED", request_id=request.request_id)
    return kind.FromString(answer)


def _constant(answer: bytes) -> Callable[[Sequence[StoredEvent]], bytes]:
    """An answer that does not depend on the events' numbers."""
    return lambda _events: answer


def _known(field: str, values: Sequence[int], known: Sequence[int]) -> None:
    """An enum value this service does not know is malformed input (not a filter that
    matches nothing, and not an error of ours)."""
    for value in values:
        if value not in known:
            raise Invalid("BAD_FIELD", field=field, value=str(value))


def _bot_level(level: int) -> int:
    if level not in common_pb2.BotLevel.values():
        raise Invalid("BAD_FIELD", field="bot_level", value=str(level))
    return level or common_pb2.BOT_LEVEL_NORMAL


def _invite_code() -> str:
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud without mistakes
    return "".join(secrets.choice(alphabet) for _ in range(8))


def _presence(kind: int, seat: int, occupant: SeatRecord, record: TableRecord) -> EventDraft:
    event = common_pb2.Event(
        kind=kind,  # type: ignore[arg-type]
        seat=seat,
        occupant=occupant.occupant(seat),
        hand_id=record.hand_id if record.hand_live else "",
        hand_number=record.hand_number if record.hand_live else 0,
    )
    return EventDraft(event)


def _turn_started(seat: int, hand_id: str, hand_number: int, deadline_us: int | None) -> EventDraft:
    event = common_pb2.Event(
        kind=common_pb2.EVENT_KIND_TURN_STARTED, seat=seat, hand_id=hand_id, hand_number=hand_number
    )
    if deadline_us is not None:
        event.turn_deadline.FromMicroseconds(deadline_us)
    return EventDraft(event)


def _split_private(event: common_pb2.Event, record: TableRecord) -> EventDraft:
    """A rules-service event (the acting seat's copy) as everyone's copy plus the seat's own."""
    public = common_pb2.Event()
    public.CopyFrom(event)
    public.hand_id = record.hand_id
    public.hand_number = record.hand_number
    draft = EventDraft(public)
    if event.private_tiles:
        del public.private_tiles[:]
        draft.private[event.seat] = common_pb2.Event(
            private_tiles=event.private_tiles
        ).SerializeToString()
    return draft


def _deal_record_of(hand: dict[str, Any] | Any, *, reveal: bool) -> common_pb2.DealRecord:
    return common_pb2.DealRecord(
        hand_id=hand["hand_id"],
        server_seed_sha256=hand["commitment"],
        player_seeds=json.loads(hand["player_seeds"]),
        server_seed=hand["server_seed"] if reveal else "",
    )


def _seat_players(seats: Sequence[SeatRecord]) -> list[scoring_pb2.SeatPlayer]:
    players = []
    for index, seat in enumerate(seats):
        occupant = seat.occupant(index)
        players.append(
            scoring_pb2.SeatPlayer(
                seat=index,
                player_id=seat.player_id if seat.kind == "player" else "",
                display_name=occupant.display_name,
                bot=seat.kind == "bot",
            )
        )
    return players


def _page_token(key: tuple[int, str], fingerprint: str) -> str:
    raw = json.dumps({"k": list(key), "f": fingerprint}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _read_page_token(token: str, fingerprint: str) -> tuple[int, str] | None:
    if not token:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        created, table_id = data["k"]
        if (
            data["f"] != fingerprint
            or not isinstance(created, int)
            or not isinstance(table_id, str)
        ):
            raise ValueError
        return created, table_id
    except (ValueError, KeyError, TypeError):
        raise Invalid("PAGE_TOKEN_INVALID") from None


__all__ = [
    "ACCESS",
    "AUTOPLAY_CALLER",
    "METHOD_ACCESS",
    "NAME",
    "SERVICE_NAME",
    "TableOptions",
    "TableServicer",
    "access_policy",
]
