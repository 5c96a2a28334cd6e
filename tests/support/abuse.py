"""The abuse suite's harness (``tests/abuse/``; its own tests, that it can tell right from
wrong, are ``tests/abuse/test_abuse_harness.py``).

``open_world`` runs every service as the other integration tests run them (rules, bot, scoring
and table through ``service_stack.running_stack``, the lobby through ``start_lobby`` with the
settings of ``support.lobby``) inside an event loop of its own in a background thread, so
that blocking clients (and hypothesis, which drives plain functions) can call them through the
generated stubs and real sockets. The table runs on a ``ManualClock``: turn timers never fall due
by themselves, so a table where a person is to move stays exactly as it is until someone acts.

The world holds what the abuse tests aim at: guests logged in through the lobby, a table in play
(four people, no timer), a private table waiting for players, a finished match recorded in
scoring, a closed table, a tournament and a quick-match ticket. ``snapshot(service)`` reads back
everything a call to that service could change; ``call`` makes one call and reads its status and
rich error details; ``settle`` waits until background work (bots, the outbox, the lobby's
workers) has stopped changing anything.

Tests marked ``soak`` (``soak`` below) are the long versions: ``make soak`` runs them.

``act`` and ``view_of`` are a seat's move and view at a table of the world.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

import grpc
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import FieldDescriptor, MethodDescriptor, ServiceDescriptor
from google.rpc import error_details_pb2, status_pb2
from okey.v1 import (
    bot_pb2,
    common_pb2,
    lobby_pb2,
    rules_pb2,
    scoring_pb2,
    table_pb2,
)
from sqlalchemy import select

from okey101.bot import service as bot_service
from okey101.lobby import ACCESS as LOBBY_ACCESS
from okey101.lobby import Limits, Lobby, Options, start_lobby
from okey101.lobby import models as lobby_models
from okey101.lobby.stores.rate_limits import RateLimit
from okey101.platform.auth import Access, AccessPolicy
from okey101.rules import service as rules_service
from okey101.scoring import ACCESS as SCORING_ACCESS
from okey101.stack import free_port
from okey101.table.service import ACCESS as TABLE_ACCESS

from support.lobby import lobby_settings
from support.service_stack import ManualClock, Stack, running_stack
from support.tables import decide_for, one_hand_rules

ROOT: Final = Path(__file__).resolve().parents[2]
SOAK: Final = os.environ.get("OKEY_SOAK") == "1"

#: The long versions: marked ``soak``, run only by ``make soak`` (which sets OKEY_SOAK=1), so
#: that ``make test``, which runs every test, skips them.
_Test = TypeVar("_Test", bound=Callable[..., Any])


def soak(test: _Test) -> _Test:
    skip = pytest.mark.skipif(not SOAK, reason="the long version: make soak (OKEY_SOAK=1)")
    return pytest.mark.soak(skip(test))  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------
# The API as the protos describe it

#: service short name -> (the generated module, the service's name in it).
MODULES: Final[dict[str, Any]] = {
    "rules": (rules_pb2, "RulesService"),
    "bot": (bot_pb2, "BotService"),
    "scoring": (scoring_pb2, "ScoringService"),
    "table": (table_pb2, "TableService"),
    "lobby": (lobby_pb2, "LobbyService"),
}
POLICIES: Final[dict[str, AccessPolicy]] = {
    "rules": rules_service.ACCESS,
    "bot": bot_service.ACCESS,
    "scoring": SCORING_ACCESS,
    "table": TABLE_ACCESS,
    "lobby": LOBBY_ACCESS,
}


def service_descriptor(service: str) -> ServiceDescriptor:
    module, name = MODULES[service]
    return module.DESCRIPTOR.services_by_name[name]  # type: ignore[no-any-return]


def every_rpc() -> list[tuple[str, str]]:
    """(service, method) for every RPC of every service, in proto order."""
    return [
        (service, method.name)
        for service in MODULES
        for method in service_descriptor(service).methods
    ]


def method_of(service: str, method: str) -> MethodDescriptor:
    return service_descriptor(service).methods_by_name[method]  # type: ignore[no-any-return]


def request_class(service: str, method: str) -> Any:
    return message_factory.GetMessageClass(method_of(service, method).input_type)


def full_name(service: str, method: str) -> str:
    return f"/{service_descriptor(service).full_name}/{method}"


_RPC_LINE = re.compile(r"^\s*rpc\s+(\w+)\s*\(")
_AUTH = re.compile(r"Auth:\s*([^.]*)")


def documented_access() -> dict[tuple[str, str], frozenset[Access]]:
    """Every RPC's "Auth:" line in the protos, read as the token kinds it names: "service",
    "player or service", "none", "none, or player" (a guest upgrading)."""
    found: dict[tuple[str, str], frozenset[Access]] = {}
    for service, (module, name) in MODULES.items():
        lines = (ROOT / "protos" / module.DESCRIPTOR.name).read_text().splitlines()
        inside = False
        comment: list[str] = []
        for line in lines:
            if line.startswith(f"service {name} "):
                inside = True
                continue
            if not inside:
                continue
            if line.startswith("}"):
                break
            stripped = line.strip()
            if stripped.startswith("//"):
                comment.append(stripped[2:].strip())
                continue
            rpc = _RPC_LINE.match(line)
            if rpc:
                # The asides in brackets name kinds too ("the table's own use"): left out.
                auth = _AUTH.search(re.sub(r"\([^)]*\)", "", " ".join(comment)))
                assert auth, f"{service}.{rpc.group(1)} has no Auth: line"
                words = set(re.findall(r"player|service|none", auth.group(1)))
                found[(service, rpc.group(1))] = frozenset(words)  # type: ignore[arg-type]
            comment = []
    return found


# ---------------------------------------------------------------------------------------------
# Outcomes of calls

#: What a refused call may end with (common.proto's list, less the codes of outages and bugs).
REFUSALS: Final = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)
UPPER_SNAKE: Final = re.compile(r"[A-Z][A-Z0-9_]*")


@dataclass
class Outcome:
    """How one call ended: OK with its response (the first message of a stream), or a status
    with the ErrorInfo and LocalizedMessage of its rich details."""

    code: grpc.StatusCode
    response: Any = None
    reason: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    message: str = ""
    locale: str = ""
    details: str = ""
    #: Problems with the rich status itself (not exactly one ErrorInfo and one LocalizedMessage,
    #: another domain, a reason that is not UPPER_SNAKE).
    malformed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.code == grpc.StatusCode.OK

    def __str__(self) -> str:
        if self.ok:
            return "OK"
        return f"{self.code.name} {self.reason} {self.metadata} {self.details!r}"


def outcome_of_error(error: grpc.RpcError) -> Outcome:
    code = error.code()  # type: ignore[attr-defined]
    outcome = Outcome(code, details=error.details() or "")  # type: ignore[attr-defined]
    raw = next(
        (
            value
            for key, value in (error.trailing_metadata() or ())  # type: ignore[attr-defined]
            if key == "grpc-status-details-bin"
        ),
        None,
    )
    if raw is None:
        outcome.malformed.append("no grpc-status-details-bin")
        return outcome
    status = status_pb2.Status.FromString(raw)
    infos, messages = [], []
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            infos.append(info)
        elif detail.Is(error_details_pb2.LocalizedMessage.DESCRIPTOR):
            localized = error_details_pb2.LocalizedMessage()
            detail.Unpack(localized)
            messages.append(localized)
    if len(infos) != 1 or len(messages) != 1 or len(status.details) != 2:
        outcome.malformed.append(f"{len(infos)} ErrorInfo, {len(messages)} LocalizedMessage")
    if status.code != code.value[0]:
        outcome.malformed.append(f"Status.code {status.code} is not the call's {code.name}")
    if infos:
        outcome.reason = infos[0].reason
        outcome.metadata = dict(infos[0].metadata)
        if infos[0].domain != "okey101":
            outcome.malformed.append(f"domain {infos[0].domain!r}")
        if not UPPER_SNAKE.fullmatch(infos[0].reason):
            outcome.malformed.append(f"reason {infos[0].reason!r}")
    if messages:
        outcome.message, outcome.locale = messages[0].message, messages[0].locale
        if messages[0].locale not in ("en-US", "tr-TR") or not messages[0].message.strip():
            outcome.malformed.append(f"sentence {messages[0].locale!r} {messages[0].message!r}")
    return outcome


def expected_locale(request: Any) -> str | None:
    """The sentence's locale a request asks for when that is plain to see (None: not plain)."""
    locale = getattr(request, "locale", "")
    if locale in ("", "en", "en-GB", "en-US"):
        return "en-US"
    if locale in ("tr", "tr-TR"):
        return "tr-TR"
    return None


def check_refusal(outcome: Outcome, request: Any, what: str) -> None:
    """A refused call ended as common.proto says refusals end."""
    assert outcome.code in REFUSALS, f"{what}: {outcome}"
    assert not outcome.malformed, f"{what}: {outcome}: {outcome.malformed}"
    # A request too large to read is refused on its size alone: its locale was never read
    # (docs/integration.md), so its sentence follows the call's accept-language, not the body.
    wanted = expected_locale(request) if outcome.reason != "MESSAGE_TOO_LARGE" else None
    if wanted is not None:
        assert outcome.locale == wanted, f"{what}: sentence in {outcome.locale}, not {wanted}"


# ---------------------------------------------------------------------------------------------
# The services in a thread of their own

_T = TypeVar("_T")


class Background:
    """An event loop in a daemon thread; ``run`` hands it a coroutine and waits."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Awaitable[_T], timeout: float = 120.0) -> _T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)  # type: ignore[arg-type]

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


@dataclass
class Guest:
    """A player logged in through the lobby."""

    player_id: str
    access_token: str
    refresh_token: str
    device_id: str
    secret: str

    @property
    def auth(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.access_token}"),)


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


#: Lobby tables a snapshot compares whole. Left out: stored answers and rate-limit counters
#: (a refusal may count against a limit, and a definitive error may be stored as the answer),
#: tournament leases (renewed by the driver on its own).
LOBBY_TABLES: Final = (
    lobby_models.players,
    lobby_models.refresh_tokens,
    lobby_models.tables,
    lobby_models.queue,
    lobby_models.tournaments,
    lobby_models.tournament_players,
    lobby_models.tournament_tables,
    lobby_models.chip_transactions,
    lobby_models.chip_entries,
    lobby_models.chip_balances,
    lobby_models.chip_holds,
    lobby_models.chip_pots,
    lobby_models.chip_daily_claims,
)

#: Methods that never change anything: their successes need no settling.
READS: Final = frozenset(
    {
        "GetTable",
        "ListTables",
        "GetSeatView",
        "GetHints",
        "WatchTable",
        "GetHandRecord",
        "GetJwks",
        "GetPlayer",
        "BrowseTables",
        "GetQuickMatchStatus",
        "GetTournament",
        "ListTournaments",
        "GetTournamentStandings",
        "GetScoreSheet",
        "GetStandings",
        "GetLeaderboard",
        "GetPlayerStats",
        "GetPlayerHistory",
        "ListStakeLevels",
    }
)


@dataclass(repr=False)
class World:
    """Every service running, and the objects the abuse tests aim at (module docstring)."""

    background: Background
    var_dir: Path
    clock: ManualClock
    stack: Stack
    lobby: Lobby
    channels: dict[str, grpc.Channel]
    guests: list[Guest]
    #: The objects the tests aim at, by role: live, waiting, finished, closed (tables).
    tables: dict[str, str] = field(default_factory=dict)
    invite_code: str = ""
    finished_match: str = ""
    finished_hand: str = ""
    tournament_id: str = ""
    ticket_id: str = ""
    #: Request ids already used, with the table each was used for (REQUEST_ID_REUSED).
    used_request_ids: list[str] = field(default_factory=list)
    account: tuple[str, str] = ("", "")
    #: The account's player id (the organiser role is granted to accounts only).
    account_id: str = ""
    #: What each refusal reason came with, across the run: a reason means one status.
    reasons: dict[str, set[grpc.StatusCode]] = field(default_factory=dict)
    #: What was made by successful calls while fuzzing (ids to aim at next).
    extra_ids: dict[str, list[str]] = field(default_factory=dict)
    _stop: asyncio.Event | None = None
    _done: Any = None

    def __repr__(self) -> str:  # hypothesis prints it with every failing example
        return f"World({self.var_dir})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    # -- calling ------------------------------------------------------------------------------

    def service_auth(self) -> tuple[tuple[str, str], ...]:
        return self.stack.service_auth()

    def call(
        self,
        service: str,
        method: str,
        request: Any,
        metadata: tuple[tuple[str, str], ...] = (),
        *,
        timeout: float = 30.0,
        raw: bytes | None = None,
    ) -> Outcome:
        """One call, blocking. A stream's first message is its response; a stream still open
        (nothing to send yet) when ``stream_wait`` runs out counts as OK."""
        descriptor = method_of(service, method)
        channel = self.channels[service]
        output = message_factory.GetMessageClass(descriptor.output_type)
        serialize: Callable[[Any], bytes] = (
            (lambda _: raw) if raw is not None else (lambda message: message.SerializeToString())
        )
        path = full_name(service, method)
        try:
            if descriptor.server_streaming:
                stream = channel.unary_stream(
                    path, request_serializer=serialize, response_deserializer=output.FromString
                )(request, metadata=metadata, timeout=1.5)
                try:
                    first = next(stream)
                except StopIteration:
                    return Outcome(grpc.StatusCode.OK)
                except grpc.RpcError as error:
                    if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:  # type: ignore[attr-defined]
                        return Outcome(grpc.StatusCode.OK)  # open, waiting for events
                    raise
                finally:
                    stream.cancel()
                return Outcome(grpc.StatusCode.OK, first)
            answer = channel.unary_unary(
                path, request_serializer=serialize, response_deserializer=output.FromString
            )(request, metadata=metadata, timeout=timeout)
            return Outcome(grpc.StatusCode.OK, answer)
        except grpc.RpcError as error:
            outcome = outcome_of_error(error)
            if outcome.reason:
                self.reasons.setdefault(outcome.reason, set()).add(outcome.code)
            return outcome

    def ok(self, service: str, method: str, request: Any, metadata: Any = None) -> Any:
        """A call that must succeed (the world's own set-up and reads); its response."""
        outcome = self.call(service, method, request, metadata or self.service_auth())
        assert outcome.ok, f"{service}.{method}: {outcome}"
        return outcome.response

    # -- reading the state back ---------------------------------------------------------------

    def table(self, table_id: str) -> common_pb2.Table:
        request = table_pb2.GetTableRequest(table_id=table_id)
        return self.ok("table", "GetTable", request).table  # type: ignore[no-any-return]

    def snapshot(self, service: str) -> dict[str, Any]:
        """Everything a call to ``service`` could change (rules and bot hold nothing)."""
        state: dict[str, Any] = {}
        if service in ("table", "lobby"):
            state["tables"] = self._all_tables()
        if service == "lobby":
            state["lobby"] = self.background.run(self._lobby_rows())
        if service == "scoring":
            state["scoring"] = self._scoring()
        return state

    def _all_tables(self) -> list[bytes]:
        rows: list[bytes] = []
        token = ""
        while True:
            page = self.ok(
                "table",
                "ListTables",
                table_pb2.ListTablesRequest(page_size=200, page_token=token),
            )
            rows.extend(table.SerializeToString(deterministic=True) for table in page.tables)
            token = page.next_page_token
            if not token:
                return sorted(rows)

    async def _lobby_rows(self) -> dict[str, list[tuple[Any, ...]]]:
        rows: dict[str, list[tuple[Any, ...]]] = {}
        async with self.lobby.servicer.database.read() as session:
            for table in LOBBY_TABLES:
                result = await session.execute(select(table))
                rows[table.name] = sorted((tuple(row) for row in result), key=repr)
        return rows

    def _scoring(self) -> list[bytes]:
        reads: list[Any] = [
            self.ok(
                "scoring",
                "GetScoreSheet",
                scoring_pb2.GetScoreSheetRequest(match_id=self.finished_match),
            ),
            self.ok("scoring", "GetLeaderboard", scoring_pb2.GetLeaderboardRequest()),
        ]
        for guest in self.guests[:4]:
            reads.append(
                self.ok(
                    "scoring",
                    "GetPlayerStats",
                    scoring_pb2.GetPlayerStatsRequest(player_id=guest.player_id),
                )
            )
            reads.append(
                self.ok(
                    "scoring",
                    "GetPlayerHistory",
                    scoring_pb2.GetPlayerHistoryRequest(player_id=guest.player_id),
                )
            )
        return [read.SerializeToString(deterministic=True) for read in reads]

    def settle(self, service: str, *, limit: float = 90.0) -> dict[str, Any]:
        """Wait until background work has stopped (bots playing out a table someone started,
        the outbox, the lobby's matchmaker and tournament driver) and nothing changes for a
        while; the state then. The table's timers and outbox say whether it is still at work;
        the lobby's workers tick every half second, so a quiet lobby is one that stayed the
        same for longer than that."""
        quiet = 0.6 if service == "lobby" else 0.2
        ends = time.monotonic() + limit
        state = self.snapshot(service)
        while time.monotonic() < ends:
            time.sleep(quiet)
            if self.background.run(self._table_at_work()):
                state = self.snapshot(service)
                continue
            again = self.snapshot(service)
            if again == state:
                return state
            state = again
        raise AssertionError(f"{service}: the state kept changing for {limit} s")

    async def _table_at_work(self) -> bool:
        """A timer is due (a bot's step, a deal; the clock stands still, so nothing else falls
        due) or a finished hand waits in the outbox."""
        store = self.stack.servicer.store
        now = self.stack.servicer.now_us()
        due = await store.next_due_us()
        _, backlog, _ = await store.figures(now, 60_000_000)
        return (due is not None and due <= now) or backlog > 0

    # -- what the tests aim at -----------------------------------------------------------------

    def live_table(self) -> common_pb2.Table:
        return self.table(self.tables["live"])

    def seat_to_move(self) -> tuple[int, Guest]:
        """The live table's seat whose turn it is, and its player."""
        view = self.ok(
            "table",
            "GetSeatView",
            table_pb2.GetSeatViewRequest(table_id=self.tables["live"], seat=0),
        ).view
        return view.turn, self.guests[view.turn]

    def ensure_fixtures(self) -> None:
        """Put back the objects a successful call used up (a live table that is no longer a
        person's to move, a waiting table someone started)."""
        live = self.live_table()
        state = live.state
        if state != common_pb2.TABLE_STATE_PLAYING or any(
            seat.kind != common_pb2.OCCUPANT_KIND_PLAYER or seat.away for seat in live.seats
        ):
            self.tables["live"] = self.background.run(self._live_table())
        waiting = self.table(self.tables["waiting"])
        if waiting.state != common_pb2.TABLE_STATE_WAITING:
            self.tables["waiting"], self.invite_code = self.background.run(self._waiting_table())

    # -- building it ---------------------------------------------------------------------------

    async def _login(self, name: str) -> Guest:
        device = f"device-{name}-{uuid.uuid4().hex[:8]}"
        stub = self.lobby_stub()
        answer = await stub.LoginGuest(
            lobby_pb2.LoginGuestRequest(
                request_id=uuid.uuid4().hex, device_id=device, display_name=name
            )
        )
        # The lobby's own access token lives 15 minutes; the soak runs longer. One signed with
        # the same key for longer is the same player to every service.
        long_lived = self.stack.issuer.issue(answer.player.player_id, "player", ttl_seconds=14400)
        return Guest(
            answer.player.player_id,
            long_lived,
            answer.tokens.refresh_token,
            device,
            answer.guest_secret,
        )

    def lobby_stub(self) -> Any:
        from okey.v1 import lobby_pb2_grpc

        return lobby_pb2_grpc.LobbyServiceStub(self.stack.channel(self.lobby.target))

    async def _table(self, rules: common_pb2.RuleSet, **fields: Any) -> common_pb2.Table:
        request_id = f"abuse-create-{uuid.uuid4().hex}"
        answer = await self.stack.table_stub().CreateTable(
            table_pb2.CreateTableRequest(request_id=request_id, rules=rules, **fields),
            metadata=self.service_auth(),
        )
        return answer.table  # type: ignore[no-any-return]

    async def _sit(self, table_id: str, seat: int, guest: Guest, code: str = "") -> None:
        request_id = f"abuse-sit-{uuid.uuid4().hex}"
        await self.stack.table_stub().Sit(
            table_pb2.SitRequest(
                request_id=request_id, table_id=table_id, seat=seat, invite_code=code
            ),
            metadata=guest.auth,
        )
        self.used_request_ids.append(request_id)

    async def _live_table(self) -> str:
        """Four people at a started table with no turn timer: it waits for the one to move."""
        rules = one_hand_rules(common_pb2.RULE_PRESET_OYNA, turn_seconds=0)
        table = await self._table(rules, name="live")
        for seat in range(4):
            await self._sit(table.table_id, seat, self.guests[seat])
        await self.stack.table_stub().Start(
            table_pb2.StartRequest(
                request_id=f"abuse-start-{uuid.uuid4().hex}", table_id=table.table_id
            ),
            metadata=self.service_auth(),
        )
        return table.table_id

    async def _waiting_table(self) -> tuple[str, str]:
        """A private table hosted by the first guest, who sits at seat 0; three seats free."""
        table = await self._table(
            one_hand_rules(),
            name="waiting",
            visibility=common_pb2.TABLE_VISIBILITY_PRIVATE,
            host_player_id=self.guests[0].player_id,
        )
        await self._sit(table.table_id, 0, self.guests[0])
        return table.table_id, table.invite_code

    async def _build(self) -> None:
        self.guests = [await self._login(name) for name in ("ada", "bea", "cem", "deniz", "ece")]
        stub = self.lobby_stub()
        username, password = "abuse.account", f"pw-{uuid.uuid4().hex}"
        registered = await stub.RegisterAccount(
            lobby_pb2.RegisterAccountRequest(
                request_id=uuid.uuid4().hex,
                username=username,
                password=password,
                display_name="Account",
            )
        )
        self.account = (username, password)
        self.account_id = registered.player.player_id
        self.tables["live"] = await self._live_table()
        self.tables["waiting"], self.invite_code = await self._waiting_table()
        # A match the four guests began and left: bots played it out; scoring recorded it.
        rules = one_hand_rules(common_pb2.RULE_PRESET_BOOMBALA)
        finished = await self._table(rules, name="finished")
        for seat in range(4):
            await self._sit(finished.table_id, seat, self.guests[seat])
        tables = self.stack.table_stub()
        await tables.Start(
            table_pb2.StartRequest(
                request_id=f"abuse-start-{uuid.uuid4().hex}", table_id=finished.table_id
            ),
            metadata=self.service_auth(),
        )
        # The seat to move leaves last: no bot moves while the others leave. (A Leave that
        # commits while a bot's move is being computed can leave the next away seat without
        # its bot timer: reported to the table's owner.)
        view = await tables.GetSeatView(
            table_pb2.GetSeatViewRequest(table_id=finished.table_id, seat=0),
            metadata=self.service_auth(),
        )
        turn = view.view.turn
        for seat in sorted(range(4), key=lambda seat: seat == turn):
            request_id = f"abuse-leave-{uuid.uuid4().hex}"
            await tables.Leave(
                table_pb2.LeaveRequest(request_id=request_id, table_id=finished.table_id),
                metadata=self.guests[seat].auth,
            )
            self.used_request_ids.append(request_id)
        self.tables["finished"] = finished.table_id
        self.finished_match = finished.match_id
        self.finished_hand = f"{finished.table_id}-h1"
        closed = await self._table(one_hand_rules(), name="closed")
        await tables.CloseTable(
            table_pb2.CloseTableRequest(
                request_id=f"abuse-close-{uuid.uuid4().hex}", table_id=closed.table_id
            ),
            metadata=self.service_auth(),
        )
        self.tables["closed"] = closed.table_id
        tournament = await stub.CreateTournament(
            lobby_pb2.CreateTournamentRequest(
                request_id=uuid.uuid4().hex, name="Abuse cup", max_players=8
            ),
            metadata=self.service_auth(),  # an operator's: no guest may organise
        )
        self.tournament_id = tournament.tournament.tournament_id
        await stub.RegisterForTournament(
            lobby_pb2.RegisterForTournamentRequest(
                request_id=uuid.uuid4().hex, tournament_id=self.tournament_id
            ),
            metadata=self.guests[1].auth,
        )
        ticket = await stub.JoinQuickMatch(
            lobby_pb2.JoinQuickMatchRequest(request_id=uuid.uuid4().hex),
            metadata=self.guests[2].auth,
        )
        self.ticket_id = ticket.ticket.ticket_id

    def wait_finished(self) -> None:
        """Until the finished table's match is over and scoring holds its sheet."""
        ends = time.monotonic() + 120
        while time.monotonic() < ends:
            table = self.table(self.tables["finished"])
            if table.state == common_pb2.TABLE_STATE_FINISHED:
                sheet = self.call(
                    "scoring",
                    "GetScoreSheet",
                    scoring_pb2.GetScoreSheetRequest(match_id=self.finished_match),
                    self.service_auth(),
                )
                if sheet.ok and sheet.response.sheet.ended:
                    return
            time.sleep(0.1)
        raise AssertionError("the bots did not finish the match")

    def close(self) -> None:
        for channel in self.channels.values():
            channel.close()
        if self._stop is not None:
            self.background.loop.call_soon_threadsafe(self._stop.set)
            with contextlib.suppress(Exception):
                self._done.result(60)
        self.background.close()


@contextlib.contextmanager
def open_world(var_dir: Path) -> Iterator[World]:
    """Every service running in a background thread, with the world built (module docstring)."""
    background = Background()
    clock = ManualClock()
    started: asyncio.Future[World] = asyncio.Future(loop=background.loop)

    async def serve() -> None:
        stop = asyncio.Event()
        try:
            lobby_port = free_port()
            async with running_stack(
                var_dir, clock=clock, lobby_address=f"127.0.0.1:{lobby_port}"
            ) as stack:
                # Webhooks on (to 127.0.0.1): RegisterPushDevice has a platform to accept.
                secret = var_dir / "webhook-secret"
                secret.write_text("abuse-world-webhook-secret-" + "s" * 32)
                settings = lobby_settings(
                    var_dir,
                    port=lobby_port,
                    table_address=stack.table.target,
                    scoring_address=stack.scoring.target,
                    push_webhook_secret_file=secret,
                    push_webhook_allow_loopback=True,
                )
                # Every player of the world calls from 127.0.0.1: the limits per client
                # address would hold them all to one address's share.
                per_address = RateLimit(100_000, 60.0)
                limits = Limits(
                    new_guest_per_address=per_address, host_table_per_address=per_address
                )
                async with start_lobby(
                    settings, options=Options(quick_match_wait_seconds=3600.0, limits=limits)
                ) as lobby:
                    channels = {
                        name: grpc.insecure_channel(
                            lobby.target if name == "lobby" else getattr(stack, name).target
                        )
                        for name in MODULES
                    }
                    world = World(background, var_dir, clock, stack, lobby, channels, [])
                    world._stop = stop
                    await world._build()
                    started.set_result(world)
                    await stop.wait()
        except BaseException as error:
            if not started.done():
                started.set_exception(error)
            raise

    done = asyncio.run_coroutine_threadsafe(serve(), background.loop)

    async def wait() -> World:
        return await started

    world = background.run(wait())
    world._done = done
    try:
        world.wait_finished()
        yield world
    finally:
        world.close()


# ---------------------------------------------------------------------------------------------
# Racks and secrets in log lines

_NOTATION = re.compile(r"(?<![A-Za-z0-9])(?:[RYBK](?:1[0-3]|[1-9])|FJ)(?![A-Za-z0-9])")
_NUMBER_LIST = re.compile(r"\[\s*\d{1,3}(?:\s*,\s*\d{1,3}){2,}\s*\]")
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.")
#: A log line naming this many tiles (by notation or as a list of ids) is a rack.
RACK_TILES: Final = 3


def _tile_lists(value: Any) -> Iterator[list[int]]:
    """Every list of tile ids (integers 0-105) in a parsed JSON value."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _tile_lists(item)
    elif isinstance(value, list):
        numbers = [item for item in value if isinstance(item, int) and not isinstance(item, bool)]
        if numbers and len(numbers) == len(value) and _could_be_tiles(numbers):
            yield numbers
        for item in value:
            yield from _tile_lists(item)


def _could_be_tiles(numbers: list[int]) -> bool:
    """Tile ids, each physical tile once (so [0, 0, 0, 0], a row of totals, is not)."""
    return all(0 <= n <= 105 for n in numbers) and len(set(numbers)) == len(numbers)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def rack_in(line: str) -> str | None:
    """Why a log line looks like it holds a rack (a list of tile ids or several tiles in
    notation), or None."""
    try:
        parsed = json.loads(line)
    except ValueError:
        parsed = line
    for numbers in _tile_lists(parsed):
        if len(numbers) >= RACK_TILES:
            return f"a list of tile ids {numbers}"
    for text in _strings(parsed):
        tiles = _NOTATION.findall(text)
        if len(tiles) >= RACK_TILES:
            return f"tiles in notation {tiles}"
        for listed in _NUMBER_LIST.finditer(text):
            numbers = [int(n) for n in re.findall(r"\d+", listed.group(0))]
            if _could_be_tiles(numbers):
                return f"a list of tile ids {listed.group(0)}"
    return None


def secret_in(line: str, secrets: Iterator[str] | list[str]) -> str | None:
    """Why a log line holds a token, password or secret, or None."""
    for secret in secrets:
        if secret and secret in line:
            return f"the secret {secret[:12]}..."
    if _JWT.search(line):
        return "something shaped like a JWT"
    if "PRIVATE KEY" in line:
        return "a private key"
    return None


# ---------------------------------------------------------------------------------------------
# Moves at the table


def view_of(world: World, table_id: str, seat: int, guest: Guest) -> common_pb2.SeatView:
    request = table_pb2.GetSeatViewRequest(table_id=table_id, seat=seat)
    return world.ok("table", "GetSeatView", request, guest.auth).view  # type: ignore[no-any-return]


def act(table_id: str, seat: int, view: common_pb2.SeatView, **fields: Any) -> Any:
    return table_pb2.ActRequest(
        request_id=fields.pop("request_id", uuid.uuid4().hex),
        table_id=table_id,
        seat=seat,
        actions=fields.pop("actions", None) or default_moves(view),
        expected_state_version=fields.pop("version", view.state_version),
        **fields,
    )


def default_moves(view: common_pb2.SeatView) -> list[common_pb2.Action]:
    """What the seat's player would play if it is their turn, else a discard."""
    return decide_for(view) if view.turn == view.seat else [a_discard(view)]


def a_discard(view: common_pb2.SeatView) -> common_pb2.Action:
    return common_pb2.Action(discard=common_pb2.DiscardAction(tile_id=view.rack[0].tile.id))


__all__ = [
    "REFUSALS",
    "SOAK",
    "Background",
    "FieldDescriptor",
    "Guest",
    "Outcome",
    "World",
    "a_discard",
    "act",
    "bearer",
    "check_refusal",
    "documented_access",
    "every_rpc",
    "expected_locale",
    "full_name",
    "method_of",
    "open_world",
    "rack_in",
    "request_class",
    "secret_in",
    "service_descriptor",
    "soak",
    "view_of",
]
