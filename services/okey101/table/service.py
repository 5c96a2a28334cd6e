"""TableService over gRPC: each call reads what it needs, asks the table core, and answers.

Live tables are kept in the serving pod's memory (``live``) and changed through the table core
(``core``: plan in memory, one write, publish); the database is the log every pod can rebuild a
table from, so any pod serves any table. Moves are applied with the engine in this process.
Answers that the core keeps serialized (a move's, a view, a stream's events) are sent as they
are, never parsed and serialized again (``platform.registration``).

Who plays what:

- A player acts only for their own seat (PERMISSION_DENIED NOT_YOUR_SEAT otherwise); services
  (the lobby) act for any seat.
- Bot seats, and seats of players who are away (they left during the match, or missed
  ``missed_turns_before_away`` turns in a row), are played by the bot service, or by the
  engine's fallback when it cannot be reached (``autoplay``).
- A staked table's free seats are the lobby's to give, with the stake it holds
  (``SitRequest.stake_hold_key``); what moves chips is owed to its ledger (``chips``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import secrets
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

import grpc
import grpc.aio
import structlog
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp
from okey.v1 import common_pb2, table_pb2

from okey101.engine.errors import OkeyError
from okey101.engine.fair_deal import parse_seed
from okey101.engine.hand import RULES_VERSION, SEATS
from okey101.engine.match import new_match
from okey101.platform import convert, paging, timestamps
from okey101.platform.auth import Access, AccessPolicy, Claims, require_claims
from okey101.platform.convert import wire
from okey101.platform.errors import Language, abort_with, request_language, rich_status
from okey101.platform.ids import check_id, check_request_id, shown_value
from okey101.platform.interceptors import check_streamed
from okey101.platform.names import TITLE_MAX, shown_name
from okey101.platform.registration import add_servicer
from okey101.platform.waiting import wait_set
from okey101.table import answers, disguise, metrics
from okey101.table.answers import AnswerKey
from okey101.table.autoplay import SOURCE_LABELS, Autoplay
from okey101.table.chips import check_stake
from okey101.table.core import TableCore
from okey101.table.dealing import bot_level, plan_start
from okey101.table.errors import (
    Conflict,
    Denied,
    Invalid,
    Missing,
)
from okey101.table.journal import EventRow
from okey101.table.limits import ActLimiter
from okey101.table.live import LiveTable
from okey101.table.moves import action_kinds, plan_moves
from okey101.table.options import TableOptions
from okey101.table.records import SeatRecord, TableRecord
from okey101.table.seating import (
    plan_back,
    plan_close,
    plan_leave,
    plan_set_deal_seed,
    plan_sit,
)
from okey101.table.turns import start_timer
from okey101.table.views import SeatViews, table_message

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
    "GetHints": _PLAYER_OR_SERVICE,
    "WatchTable": _PLAYER_OR_SERVICE,
    "Play": _PLAYER_OR_SERVICE,
    "SetDealSeed": _PLAYER,
    "GetHandRecord": _PLAYER_OR_SERVICE,
    "CloseTable": _PLAYER_OR_SERVICE,
}
#: The calls answered with bytes the table keeps serialized (stored answers, views, events).
SENT_AS_WRITTEN: Final = frozenset(
    {
        "Sit",
        "Leave",
        "SetDealSeed",
        "CloseTable",
        "Start",
        "Act",
        "GetSeatView",
        "WatchTable",
        "Play",
    }
)


#: Which tokens each call accepts (and the platform's open methods).
ACCESS: Final = AccessPolicy.of_service(SERVICE_NAME, METHOD_ACCESS)

_log = structlog.get_logger("okey101.table")

#: The most turns in a row CreateTable may let a player miss before a bot keeps their seat.
MAX_MISSED_TURNS_BEFORE_AWAY: Final = 10
_MAX_ACTIONS: Final = 32
_MAX_EVENTS_PER_READ: Final = 500
#: A watcher with nothing new looks at the log on its own this often (a lost notification
#: costs at most this much delay, never an event).
SAFETY_POLL_SECONDS: Final = 5.0

#: The events after which a WatchTable stream ends (the table takes no more moves).
_LAST_EVENTS: Final = frozenset(
    {common_pb2.EVENT_KIND_MATCH_ENDED, common_pb2.EVENT_KIND_TABLE_CLOSED}
)
_OVER: Final = frozenset({common_pb2.TABLE_STATE_FINISHED, common_pb2.TABLE_STATE_CLOSED})

_VIEW_FIELD: Final = table_pb2.GetSeatViewResponse.DESCRIPTOR.fields_by_name["view"].number
_WATCH_FIELDS: Final = table_pb2.WatchTableResponse.DESCRIPTOR.fields_by_name
_WATCH_EVENT: Final[int] = _WATCH_FIELDS["event"].number
_WATCH_VIEW: Final[int] = _WATCH_FIELDS["view"].number
_WATCH_CHANGE: Final[int] = _WATCH_FIELDS["change"].number
_CHANGE_FIELDS: Final = table_pb2.TableChange.DESCRIPTOR.fields_by_name
_CHANGE_EVENT: Final[int] = _CHANGE_FIELDS["events"].number
_CHANGE_VIEW: Final[int] = _CHANGE_FIELDS["view"].number


_PLAY_FIELDS: Final = table_pb2.PlayResponse.DESCRIPTOR.fields_by_name
_PLAY_VIEW: Final[int] = _PLAY_FIELDS["view"].number
_PLAY_CHANGE: Final[int] = _PLAY_FIELDS["change"].number
_PLAY_ACTED: Final[int] = _PLAY_FIELDS["acted"].number


def _change_message(
    events: Sequence[EventRow], seat: int | None, views: SeatViews, *, field: int = _WATCH_CHANGE
) -> bytes:
    """A ``TableChange`` as field ``field`` of a stream's message (WatchTable's ``change``, or
    Play's): ``events`` as ``seat`` sees them and, when they reach the revision ``views``
    shows, that seat's view (serialized, as the stream sends it)."""
    body = b"".join(wire.length_delimited(_CHANGE_EVENT, e.copy_for(seat)) for e in events)
    if events[-1].sequence == views.record.last_sequence:
        body += wire.length_delimited(_CHANGE_VIEW, views.of(seat))
    return wire.length_delimited(field, body)


class _Outcomes:
    """Play's answered acts, serialized, in order, waiting for the stream to send them, and the
    event that wakes the stream (an act answered, the table changed, the reader ended)."""

    def __init__(self) -> None:
        self.ready: collections.deque[bytes] = collections.deque()
        self.woken = asyncio.Event()

    def put(self, outcome: bytes) -> None:
        self.ready.append(outcome)
        self.woken.set()


class TableServicer:
    """TableService (module docstring)."""

    def __init__(self, core: TableCore, autoplay: Autoplay) -> None:
        self.core = core
        self.autoplay = autoplay
        self.store = core.store
        self.options: TableOptions = core.options
        self.clock = core.clock
        #: How fast each player may send moves at each table (``limits``).
        self.act_limits = ActLimiter()
        #: The waits for scoring to acknowledge a match, by match id: one per match however
        #: many of its streams are holding its MATCH_ENDED event.
        self._scoring_waits: dict[str, asyncio.Task[None]] = {}

    def now_us(self) -> int:
        return self.core.now_us()

    async def _live(self, table_id: str) -> LiveTable:
        check_id(table_id, "table_id")
        return await self.core.tables.get(table_id)

    # ----------------------------------------------------------------------------------------
    # Access

    @staticmethod
    def _acting_seat(record: TableRecord, claims: Claims, requested: int) -> int:
        if requested >= SEATS:
            raise Invalid("BAD_SEAT", seat=requested)
        if claims.kind != "service" and record.seat_of(claims.subject) != requested:
            raise Denied("NOT_YOUR_SEAT", seat=requested)
        return requested

    @staticmethod
    def _viewing_seat(record: TableRecord, claims: Claims, seat: int | None) -> int | None:
        if seat is not None and seat >= SEATS:
            raise Invalid("BAD_SEAT", seat=seat)
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
        key = self._key(claims, "CreateTable", request)
        replayed = await answers.recall(self.store.database, key)
        if replayed is not None:
            return table_pb2.CreateTableResponse.FromString(replayed)
        rules = convert.rules_from_proto(request.rules)
        new_match(rules)  # the engine's check of the match knobs
        name = shown_name(request.name, "name", maximum=TITLE_MAX)
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
                seats[setup.seat] = SeatRecord(kind="bot", bot_level=bot_level(setup.bot_level))
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
        check_stake(request.stake, request.fee_percent)
        if request.missed_turns_before_away > MAX_MISSED_TURNS_BEFORE_AWAY:
            raise Invalid(
                "BAD_FIELD",
                field="missed_turns_before_away",
                value=str(request.missed_turns_before_away),
            )
        now = self.now_us()
        deadline = _match_deadline_us(request, now)
        table_id = f"t-{uuid.uuid4().hex}"
        record = TableRecord.new(
            table_id=table_id,
            match_id=f"m-{uuid.uuid4().hex}",
            preset=rules.name,
            rules=convert.rules_to_proto(rules).SerializeToString(),
            rules_version=RULES_VERSION,
            seats=disguise.named_bots(seats, table_id),
            created_us=now,
            name=name,
            visibility=visibility,
            invite_code=(
                _invite_code() if visibility == common_pb2.TABLE_VISIBILITY_PRIVATE else ""
            ),
            host_player_id=request.host_player_id,
            tournament_id=request.tournament_id,
            tournament_round=request.tournament_round,
            start_when_full=request.start_when_full,
            stake=request.stake,
            fee_percent=request.fee_percent,
            missed_turns_before_away=request.missed_turns_before_away,
            match_deadline_us=deadline,
        )
        response = table_pb2.CreateTableResponse(table=table_message(record, None))
        starts = record.due_to_start
        if starts:  # the start is owed from the table's first write (held by no pod yet)
            record = record.replace(timer=start_timer(now, self.options))
        if not await self.core.create(record, key, response.SerializeToString()):
            # A retry raced this call and answered first.
            replayed = await answers.recall(self.store.database, key)
            assert replayed is not None
            return table_pb2.CreateTableResponse.FromString(replayed)
        structlog.contextvars.bind_contextvars(table_id=table_id)
        if starts:
            await self._start_when_full(table_id)
        return response

    async def GetTable(  # noqa: N802
        self, request: table_pb2.GetTableRequest, context: Any
    ) -> table_pb2.GetTableResponse:
        claims = require_claims()
        live = await self._live(request.table_id)
        if claims.kind == "player":
            self._viewing_seat(live.record, claims, None)
        return table_pb2.GetTableResponse(table=table_message(live.record, claims))

    async def ListTables(  # noqa: N802
        self, request: table_pb2.ListTablesRequest, context: Any
    ) -> table_pb2.ListTablesResponse:
        claims = require_claims()
        size = paging.page_size(request.page_size, default=50, maximum=200)
        _known("preset", [request.preset], common_pb2.RulePreset.values())
        _known("states", request.states, common_pb2.TableState.values())
        _known("visibility", [request.visibility], common_pb2.TableVisibility.values())
        for field in ("tournament_id", "player_id"):  # filters: empty for any
            if getattr(request, field):
                check_id(getattr(request, field), field)
        preset = None
        if request.preset:
            preset = common_pb2.RulePreset.Name(request.preset).removeprefix("RULE_PRESET_").lower()
        bound_to = paging.fingerprint(
            request.preset, list(request.states), request.visibility, request.tournament_id,
            request.player_id,
        )  # fmt: skip
        key = paging.decode_token(request.page_token, bound_to, (int, str))
        records = await self.store.list_tables(
            preset=preset,
            states=list(request.states),
            visibility=request.visibility or None,
            tournament_id=request.tournament_id or None,
            player_id=request.player_id or None,
            after=None if key is None else (int(key[0]), str(key[1])),
            limit=size + 1,
        )
        page, more = records[:size], len(records) > size
        token = ""
        if more:
            last = page[-1]
            token = paging.encode_token((last.created_us, last.table_id), bound_to)
        return table_pb2.ListTablesResponse(
            tables=[table_message(record, claims) for record in page], next_page_token=token
        )

    # ----------------------------------------------------------------------------------------
    # Sit, Leave, SetDealSeed, CloseTable, Start

    async def Sit(  # noqa: N802
        self, request: table_pb2.SitRequest, context: Any
    ) -> bytes:
        claims = require_claims()
        key = self._key(claims, "Sit", request)
        check_id(request.table_id, "table_id")
        player_id = (
            check_id(request.player_id, "player_id") if claims.kind == "service" else claims.subject
        )
        # Checked as the lobby checks it: a player's own Sit must not show the other seats
        # what the lobby would refuse (control characters, bidi overrides).
        display_name = shown_name(request.display_name, "display_name") or player_id[:64]
        seed = parse_seed(request.deal_seed, field="deal_seed").hex() if request.deal_seed else ""
        requested = request.seat if request.HasField("seat") else None
        hold_key = check_id(request.stake_hold_key, "stake_hold_key", required=False)
        now = self.now_us()
        options = self.options

        def plan(live: LiveTable) -> Any:
            change, _seat = plan_sit(
                live.record, live.state, live.deal, claims=claims, player_id=player_id,
                display_name=display_name, seed=seed, requested=requested,
                invite_code=request.invite_code, now_us=now, options=options, answer=key,
                hold_key=hold_key,
            )  # fmt: skip
            return change

        outcome = await self.core.change(request.table_id, plan, answer_key=key)
        if outcome.sealed is not None and outcome.sealed.record.due_to_start:
            await self._start_when_full(request.table_id)
        assert outcome.answer is not None
        return outcome.answer

    async def Leave(  # noqa: N802
        self, request: table_pb2.LeaveRequest, context: Any
    ) -> bytes:
        claims = require_claims()
        key = self._key(claims, "Leave", request)
        check_id(request.table_id, "table_id")
        player_id = (
            check_id(request.player_id, "player_id") if claims.kind == "service" else claims.subject
        )
        now = self.now_us()
        options = self.options
        outcome = await self.core.change(
            request.table_id,
            lambda live: plan_leave(
                live.record, live.state, live.deal, claims=claims, player_id=player_id,
                now_us=now, options=options, answer=key,
                forfeit=request.forfeit and claims.kind == "service",
            ),
            answer_key=key,
        )  # fmt: skip
        assert outcome.answer is not None
        return outcome.answer

    async def SetDealSeed(  # noqa: N802
        self, request: table_pb2.SetDealSeedRequest, context: Any
    ) -> bytes:
        claims = require_claims()
        key = self._key(claims, "SetDealSeed", request)
        check_id(request.table_id, "table_id")
        seed = parse_seed(request.deal_seed, field="deal_seed").hex() if request.deal_seed else ""
        now = self.now_us()
        outcome = await self.core.change(
            request.table_id,
            lambda live: plan_set_deal_seed(
                live.record, live.state, live.deal, player_id=claims.subject, seed=seed,
                now_us=now, answer=key,
            ),
            answer_key=key,
        )  # fmt: skip
        assert outcome.answer is not None
        return outcome.answer

    async def CloseTable(  # noqa: N802
        self, request: table_pb2.CloseTableRequest, context: Any
    ) -> bytes:
        claims = require_claims()
        key = self._key(claims, "CloseTable", request)
        check_id(request.table_id, "table_id")
        now = self.now_us()
        outcome = await self.core.change(
            request.table_id,
            lambda live: plan_close(
                live.record, live.state, live.deal, claims=claims, now_us=now, answer=key
            ),
            answer_key=key,
        )
        if outcome.sealed is not None:
            _log.info("table closed", table_id=request.table_id, reason=request.reason[:200])
        assert outcome.answer is not None
        return outcome.answer

    async def Start(  # noqa: N802
        self, request: table_pb2.StartRequest, context: Any
    ) -> bytes:
        claims = require_claims()
        key = self._key(claims, "Start", request)
        check_id(request.table_id, "table_id")
        now = self.now_us()
        options = self.options

        def plan(live: LiveTable) -> Any:
            if claims.kind == "player" and live.record.host_player_id != claims.subject:
                raise Denied("NOT_THE_HOST")
            return plan_start(
                live.record, live.state, live.deal, fill_with_bots=request.fill_with_bots,
                level=request.bot_level, now_us=now, options=options, answer=key, claims=claims,
            )  # fmt: skip

        outcome = await self.core.change(request.table_id, plan, answer_key=key)
        assert outcome.answer is not None
        return outcome.answer

    async def _start_when_full(self, table_id: str) -> None:
        """The immediate try at a full table's start: a failure here is left to the start's
        timer, the change that filled the table being written and answered."""
        now = self.now_us()
        options = self.options

        def plan(live: LiveTable) -> Any:
            if not live.record.due_to_start:
                raise Conflict("ALREADY_STARTED")
            return plan_start(
                live.record, live.state, live.deal, fill_with_bots=False, level=0, now_us=now,
                options=options,
            )  # fmt: skip

        try:
            await self.core.change(table_id, plan)
        except Conflict:
            return  # someone started it, or changed its seats, first
        except OkeyError as error:
            _log.info("table start left to its timer", table_id=table_id, code=error.code)

    # ----------------------------------------------------------------------------------------
    # Act

    async def Act(  # noqa: N802
        self, request: table_pb2.ActRequest, context: Any
    ) -> bytes:
        return await self._act(request, require_claims())

    async def _act(self, request: table_pb2.ActRequest, claims: Claims) -> bytes:
        """Act's answer, serialized (Act and Play's acts alike)."""
        check_request_id(request.request_id)
        check_id(request.table_id, "table_id")
        if claims.kind == "player":
            # RATE_LIMITED; a retry (the same request id) is not counted again.
            self.act_limits.check(claims.subject, request.table_id, request.request_id)
        key = self._key(claims, "Act", request)
        live = await self.core.tables.get(request.table_id)
        known = live.answers.recall(key)
        if known is not None:
            return known
        if not request.actions:
            raise Invalid("EMPTY_MOVE", field="actions")
        if len(request.actions) > _MAX_ACTIONS:
            raise Invalid("BAD_FIELD", field="actions", value=f"{len(request.actions)} moves")
        if request.expected_state_version == 0:
            raise Invalid("FIELD_REQUIRED", field="expected_state_version")
        source = (
            table_pb2.MOVE_SOURCE_PLAYER if claims.kind == "player" else table_pb2.MOVE_SOURCE_BOT
        )
        actions = list(request.actions)
        now = self.now_us()
        options = self.options

        def plan(table: LiveTable) -> Any:
            seat = self._acting_seat(table.record, claims, request.seat)
            return plan_moves(
                table.record, table.state, table.deal, seat, actions,
                expected_version=request.expected_state_version, source=source, now_us=now,
                options=options, answer=key, back_from_away=claims.kind == "player",
            )  # fmt: skip

        outcome = await self.core.change(request.table_id, plan, answer_key=key)
        if outcome.sealed is not None:
            label = SOURCE_LABELS.get(source, "other")
            for kind in action_kinds(actions):
                metrics.MOVES.labels(kind, label).inc()
        assert outcome.answer is not None
        return outcome.answer

    # ----------------------------------------------------------------------------------------
    # Views and streams

    async def GetSeatView(  # noqa: N802
        self, request: table_pb2.GetSeatViewRequest, context: Any
    ) -> bytes:
        claims = require_claims()
        live = await self._live(request.table_id)
        seat = self._viewing_seat(
            live.record, claims, request.seat if request.HasField("seat") else None
        )
        if request.min_sequence > live.record.last_sequence:
            # The caller has seen an event this copy has not: another process wrote it, and
            # its notification has not arrived (or was missed). Read the table again.
            await self.core.tables.reload(live)
            if request.min_sequence > live.record.last_sequence:
                raise Invalid(
                    "SEQUENCE_AHEAD",
                    after_sequence=request.min_sequence,
                    last_sequence=live.record.last_sequence,
                )
        return wire.length_delimited(_VIEW_FIELD, live.views.of(seat))

    async def GetHints(  # noqa: N802
        self, request: table_pb2.GetHintsRequest, context: Any
    ) -> table_pb2.GetHintsResponse:
        """The seat's hints from its view of the table as it is now (cached per revision)."""
        claims = require_claims()
        live = await self._live(request.table_id)
        seat = self._viewing_seat(live.record, claims, request.seat)
        assert seat is not None
        views = live.views
        response = table_pb2.GetHintsResponse(
            state_version=views.record.state_version, as_of_sequence=views.record.last_sequence
        )
        hints = views.hints(seat)
        if hints is None or views.state is None:
            response.hints.seat = seat
            return response
        language = request_language(request, context.invocation_metadata())
        response.hints.CopyFrom(convert.seat_hints_to_proto(hints, views.state.okey, language))
        return response

    async def WatchTable(  # noqa: N802
        self, request: table_pb2.WatchTableRequest, context: Any
    ) -> AsyncIterator[bytes]:
        claims = require_claims()
        live = await self._live(request.table_id)
        seat = self._viewing_seat(
            live.record, claims, request.seat if request.HasField("seat") else None
        )
        table_id = live.table_id
        if request.return_to_seat and claims.kind == "player" and seat is not None:
            await self._return_to_seat(table_id, seat)
        after = request.after_sequence
        live.watchers += 1
        try:
            if request.start_with_view:
                views = live.views
                after = views.record.last_sequence
                yield wire.length_delimited(_WATCH_VIEW, views.of(seat))
            elif after > live.record.last_sequence:
                await self.core.tables.refresh(live)  # another pod may have logged them
                if after > live.record.last_sequence:
                    last = live.record.last_sequence
                    raise Invalid("SEQUENCE_AHEAD", after_sequence=after, last_sequence=last)
            last_sent = False
            while True:
                events = live.events_after(after, _MAX_EVENTS_PER_READ)
                if events is None:
                    events = await self.store.events_after(
                        table_id, after, limit=_MAX_EVENTS_PER_READ
                    )
                if request.changes and events:
                    if any(e.kind == common_pb2.EVENT_KIND_MATCH_ENDED for e in events):
                        await self._match_scored(live.record.match_id)
                    yield _change_message(events, seat, live.views)
                    after = events[-1].sequence
                    last_sent = any(event.kind in _LAST_EVENTS for event in events)
                    continue
                for event in events:
                    if event.kind == common_pb2.EVENT_KIND_MATCH_ENDED:
                        await self._match_scored(live.record.match_id)
                    yield wire.length_delimited(_WATCH_EVENT, event.copy_for(seat))
                    after = event.sequence
                    last_sent = last_sent or event.kind in _LAST_EVENTS
                if events:
                    continue
                if last_sent or (live.record.state in _OVER and live.record.last_sequence <= after):
                    return  # the match's (or table's) last event is sent: the stream ends, OK
                await live.wait_beyond(after, SAFETY_POLL_SECONDS)
                if live.stale:
                    await self.core.tables.fresh(live)
                elif live.record.last_sequence <= after:
                    # Nothing new here: the log, in case a notification was lost.
                    newer = await self.store.events_after(table_id, after, limit=1)
                    if newer:
                        self.core.tables.notified(table_id, live.record.revision + 1)
                        await self.core.tables.fresh(live)
        finally:
            live.watchers -= 1

    async def Play(  # noqa: N802
        self, requests: AsyncIterator[Any], context: Any
    ) -> AsyncIterator[bytes]:
        claims = require_claims()
        first = await anext(aiter(requests), None)
        check_streamed(first)
        if first is None or not first.HasField("open"):
            raise Invalid("FIELD_REQUIRED", field="open")
        opened: table_pb2.WatchTableRequest = first.open
        language = request_language(opened, context.invocation_metadata())
        try:
            async for message in self._play(opened, requests, claims, language):
                yield message
        except OkeyError as error:  # in the language the stream's open asked for
            await abort_with(context, error, language)

    async def _play(
        self,
        opened: table_pb2.WatchTableRequest,
        requests: AsyncIterator[Any],
        claims: Claims,
        language: Language,
    ) -> AsyncIterator[bytes]:
        """Play once its first message is read (``Play``)."""
        if not opened.HasField("seat"):
            raise Invalid("FIELD_REQUIRED", field="open.seat")
        live = await self._live(opened.table_id)
        seat = self._viewing_seat(live.record, claims, opened.seat)
        assert seat is not None
        table_id = live.table_id
        if opened.return_to_seat and claims.kind == "player":
            await self._return_to_seat(table_id, seat)
        outcomes = _Outcomes()
        reader = asyncio.create_task(
            self._play_acts(requests, claims, table_id, seat, language, outcomes)
        )
        reader.add_done_callback(lambda _done: outcomes.woken.set())
        after = opened.after_sequence
        live.watchers += 1
        live.listeners.add(outcomes.woken)
        try:
            if opened.start_with_view:
                after = live.views.record.last_sequence
                yield wire.length_delimited(_PLAY_VIEW, live.views.of(seat))
            elif after > live.record.last_sequence:
                await self.core.tables.refresh(live)
                if after > live.record.last_sequence:
                    last = live.record.last_sequence
                    raise Invalid("SEQUENCE_AHEAD", after_sequence=after, last_sequence=last)
            while True:
                events = live.events_after(after, _MAX_EVENTS_PER_READ)
                if events is None:
                    events = await self.store.events_after(
                        table_id, after, limit=_MAX_EVENTS_PER_READ
                    )
                message = b""
                if events:
                    if any(e.kind == common_pb2.EVENT_KIND_MATCH_ENDED for e in events):
                        await self._match_scored(live.record.match_id)
                    message = _change_message(events, seat, live.views, field=_PLAY_CHANGE)
                    after = events[-1].sequence
                if outcomes.ready:
                    message += outcomes.ready.popleft()
                if message:
                    yield message
                    if any(event.kind in _LAST_EVENTS for event in events):
                        return
                    continue
                if reader.done():
                    reader.result()  # the client closed its side, or the reader failed
                    return
                if live.record.state in _OVER and live.record.last_sequence <= after:
                    return
                # Woken by the table's next change, this stream's next answered act, or the
                # reader's end; the table is looked at again at least this often regardless.
                outcomes.woken.clear()
                if live.record.last_sequence <= after and not outcomes.ready:
                    await wait_set(outcomes.woken, SAFETY_POLL_SECONDS)
                if live.stale:
                    await self.core.tables.fresh(live)
        finally:
            live.watchers -= 1
            live.listeners.discard(outcomes.woken)
            reader.cancel()

    async def _play_acts(
        self,
        requests: AsyncIterator[Any],
        claims: Claims,
        table_id: str,
        seat: int,
        language: Language,
        outcomes: _Outcomes,
    ) -> None:
        """Play's acts, one after another: each applied as Act applies it, its outcome (OK, or
        the status Act would have ended with) queued for the stream."""
        async for request in requests:
            check_streamed(request)
            if not request.HasField("act"):
                raise Invalid("FIELD_REQUIRED", field="act")
            act: table_pb2.ActRequest = request.act
            if act.table_id not in ("", table_id):
                raise Invalid("BAD_FIELD", field="act.table_id", value=shown_value(act.table_id))
            if act.seat not in (0, seat):  # 0: unset (the field has no presence)
                raise Invalid("BAD_FIELD", field="act.seat", value=str(act.seat))
            act.table_id = table_id
            act.seat = seat
            outcome = table_pb2.ActOutcome(request_id=act.request_id)
            try:
                await self._act(act, claims)
                outcome.status.code = grpc.StatusCode.OK.value[0]
            except OkeyError as error:
                outcome.status.CopyFrom(rich_status(error, language))
            outcomes.put(wire.length_delimited(_PLAY_ACTED, outcome.SerializeToString()))

    async def _return_to_seat(self, table_id: str, seat: int) -> None:
        """``seat``'s player, watching it with ``return_to_seat``, has it back if it is away
        (``seating.plan_back``); a seat that is not away stays as it is."""
        now = self.now_us()
        options = self.options
        with contextlib.suppress(Conflict):  # not away (any more): nothing to return to
            await self.core.change(
                table_id,
                lambda live: plan_back(
                    live.record, live.state, live.deal, seat=seat, now_us=now, options=options
                ),
            )

    async def _match_scored(self, match_id: str) -> None:
        """Until scoring has acknowledged the match (the outbox's RecordMatch), so that its
        score sheet is there, ended, when the MATCH_ENDED event arrives; at most
        ``match_end_hold_seconds`` (scoring out of reach does not hold the event for ever).
        The streams of one match share one wait."""
        wait = self._scoring_waits.get(match_id)
        if wait is None:
            wait = self._scoring_waits[match_id] = asyncio.create_task(self._wait_scored(match_id))
            wait.add_done_callback(lambda _done: self._scoring_waits.pop(match_id, None))
        await asyncio.shield(wait)

    async def _wait_scored(self, match_id: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.options.match_end_hold_seconds
        pause = 0.01
        while not await self.store.outbox_delivered(match_id):
            if loop.time() >= deadline:
                _log.warning("match end sent before scoring recorded it", match_id=match_id)
                return
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.25)

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
        if claims.kind != "service":
            disguise.hide_bots_in_hand(record)
        return table_pb2.GetHandRecordResponse(record=record)

    async def hand_record(self, hand_id: str) -> table_pb2.HandRecord:
        """The full record of an ended hand (NOT_FOUND, or HAND_IN_PLAY while it is live)."""
        hand = await self.store.hand(hand_id)
        if hand is None:
            raise Missing("HAND_NOT_FOUND", hand_id=hand_id)
        if hand["ended_us"] is None:
            raise Conflict("HAND_IN_PLAY", hand_id=hand_id)
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
            deal=common_pb2.DealRecord(
                hand_id=hand["hand_id"],
                server_seed_sha256=hand["commitment"],
                player_seeds=json.loads(hand["player_seeds"]),
                server_seed=hand["server_seed"],
            ),
            deck_tile_ids=json.loads(hand["deck"]),
            moves=moves,
            result=common_pb2.HandResult.FromString(bytes(hand["result"])),
            seats=seats,
        )

    # ----------------------------------------------------------------------------------------
    # Stored answers

    @staticmethod
    def _key(claims: Claims, method: str, request: Message) -> AnswerKey:
        """Where the answer to ``request`` is stored, and what a retry must repeat
        (``answers.AnswerKey``)."""
        check_request_id(str(getattr(request, "request_id")))  # noqa: B009 (every such request)
        return AnswerKey.of(claims.subject, method, request)


def register(server: grpc.aio.Server, servicer: TableServicer) -> list[str]:
    """Add TableService to ``server``; the calls of ``SENT_AS_WRITTEN`` answer with bytes."""
    return [
        add_servicer(server, servicer, table_pb2, "TableService", sent_as_written=SENT_AS_WRITTEN)
    ]


def _known(field: str, values: Any, known: Any) -> None:
    """An enum value this service does not know is malformed input (not a filter that
    matches nothing, and not an error of ours)."""
    for value in values:
        if value not in known:
            raise Invalid("BAD_FIELD", field=field, value=str(value))


def _match_deadline_us(request: table_pb2.CreateTableRequest, now_us: int) -> int | None:
    """A CreateTable's match deadline in microseconds (None: unset). INVALID_ARGUMENT: one a
    Timestamp cannot hold (BAD_MATCH_DEADLINE), or one not after ``now_us``
    (MATCH_DEADLINE_PASSED)."""
    if not request.HasField("match_deadline"):
        return None
    stamp = request.match_deadline
    if not timestamps.holds(stamp):
        raise Invalid("BAD_MATCH_DEADLINE", seconds=str(stamp.seconds), nanos=str(stamp.nanos))
    deadline = stamp.ToMicroseconds()
    if deadline <= now_us:
        raise Invalid("MATCH_DEADLINE_PASSED", deadline=stamp.ToJsonString())
    return deadline


def _invite_code() -> str:
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud without mistakes
    return "".join(secrets.choice(alphabet) for _ in range(8))


def _timestamp(micros: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromMicroseconds(micros)
    return stamp


__all__ = [
    "ACCESS",
    "METHOD_ACCESS",
    "NAME",
    "SERVICE_NAME",
    "TableOptions",
    "TableServicer",
    "register",
]
