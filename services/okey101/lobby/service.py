"""LobbyService (protos/okey/v1/lobby.proto): players and tokens, the table directory, private
tables, quick match and tournaments.

``LobbyServicer`` answers the RPCs: each checks its request, calls the repository and, for
tables, the table service (``peers``), and builds the answer; an ``OkeyError`` ends the call with
its status and a sentence in the request's language, a table service error is passed on as it is.
Until the database is migrated (``prepare``) calls are UNAVAILABLE SERVICE_STARTING; a database
that cannot be reached is UNAVAILABLE DATABASE_UNAVAILABLE.

``start_lobby(settings)`` runs the whole lobby in-process (gRPC, the JWKS over HTTP, the
matchmaker and the tournament driver) as ``okey101 serve lobby`` does; ``serve_lobby`` runs it
until SIGTERM. The decisions behind it are in ``docs/lobby.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NoReturn, TypeVar

import grpc
import grpc.aio
from grpc_status import rpc_status
from okey.v1 import common_pb2, lobby_pb2, lobby_pb2_grpc, table_pb2
from prometheus_client import Counter
from sqlalchemy.exc import DBAPIError

from okey101.engine.errors import OkeyError
from okey101.lobby import tournaments as bracket
from okey101.lobby.credentials import Passwords
from okey101.lobby.errors import (
    Denied,
    Exists,
    Invalid,
    Limited,
    Missing,
    NotReady,
    Unauthorized,
    status_of,
)
from okey101.lobby.idempotency import check_request_id
from okey101.lobby.jwks_http import JwksServer, start_jwks_server
from okey101.lobby.peers import PeerError, ScoringClient, TableClient, derived_request_id
from okey101.lobby.repository import (
    PRESETS,
    TOURNAMENT_STATES,
    AccessToken,
    LobbyRepository,
    Once,
    PlayerRow,
    RateLimit,
    RoundTable,
    TournamentRow,
    preset_name,
    timestamp,
)
from okey101.lobby.workers import (
    HostingFinisher,
    Matchmaker,
    TournamentDriver,
    host_table_calls,
)
from okey101.platform import convert, paging
from okey101.platform.auth import (
    Access,
    AccessPolicy,
    Claims,
    JwksVerifier,
    SigningKey,
    TokenIssuer,
    bearer_token,
    jwks_of,
    require_claims,
    signing_key_for,
)
from okey101.platform.clients import Peers
from okey101.platform.config import ConfigError, Settings
from okey101.platform.database import Database, outage_as
from okey101.platform.errors import Language, request_language
from okey101.platform.handlers import Context
from okey101.platform.logs import configure_logging, get_logger
from okey101.platform.server import ServerHandle, until_signalled

NAME: Final = "lobby"
SERVICE_NAME: Final = lobby_pb2.DESCRIPTOR.services_by_name["LobbyService"].full_name

#: Page sizes (default, maximum) from lobby.proto.
TABLES_PAGE: Final = (50, 200)
TOURNAMENTS_PAGE: Final = (50, 200)
STANDINGS_PAGE: Final = (100, 500)
#: The fewest registered players a tournament starts with.
MIN_TOURNAMENT_PLAYERS: Final = 2

USERNAME: Final = re.compile(r"[a-z0-9_.-]{3,32}")

_NONE: Final[tuple[Access, ...]] = ("none",)
_PLAYER: Final[tuple[Access, ...]] = ("player",)
_PLAYER_OR_SERVICE: Final[tuple[Access, ...]] = ("player", "service")
#: Every RPC's "Auth:" line in lobby.proto. RegisterAccount takes no token or a guest's: it is
#: declared open and reads an optional token itself.
METHOD_ACCESS: Final[dict[str, tuple[Access, ...]]] = {
    "LoginGuest": _NONE,
    "RegisterAccount": _NONE,
    "LoginAccount": _NONE,
    "RefreshTokens": _NONE,
    "Logout": _NONE,
    "GetJwks": _NONE,
    "GetPlayer": _PLAYER_OR_SERVICE,
    "BrowseTables": _PLAYER,
    "HostTable": _PLAYER,
    "JoinTable": _PLAYER,
    "LeaveTable": _PLAYER,
    "JoinQuickMatch": _PLAYER,
    "LeaveQuickMatch": _PLAYER,
    "GetQuickMatchStatus": _PLAYER,
    "CreateTournament": _PLAYER_OR_SERVICE,
    "RegisterForTournament": _PLAYER,
    "StartTournament": _PLAYER_OR_SERVICE,
    "GetTournament": _PLAYER_OR_SERVICE,
    "ListTournaments": _PLAYER_OR_SERVICE,
    "GetTournamentStandings": _PLAYER_OR_SERVICE,
}


def access_policy() -> AccessPolicy:
    """Which tokens each LobbyService call accepts (and the platform's open methods)."""
    policy = AccessPolicy()
    policy.declare_service(SERVICE_NAME, METHOD_ACCESS)
    return policy


ACCESS: Final = access_policy()

LOGINS: Final = Counter(
    "okey_lobby_logins_total",
    "Logins that succeeded, by kind (guest, account, refresh).",
    ("kind",),
)
LOGIN_FAILURES: Final = Counter(
    "okey_lobby_login_failures_total",
    "Credentials refused, by reason (the error code).",
    ("reason",),
)
RATE_LIMITED: Final = Counter(
    "okey_lobby_rate_limited_total", "Calls refused by a rate limit, by action.", ("action",)
)

_log = get_logger(service=NAME)
_R = TypeVar("_R")


@dataclass(frozen=True)
class Limits:
    """Rate limits per subject, shared by every lobby pod (the database counts); ``serve``
    takes them from the settings (``OKEY_*_LIMIT_PER_MINUTE``)."""

    login: RateLimit = field(default_factory=lambda: RateLimit(10, 60.0))
    host_table: RateLimit = field(default_factory=lambda: RateLimit(10, 60.0))
    quick_match: RateLimit = field(default_factory=lambda: RateLimit(20, 60.0))


@dataclass(frozen=True)
class Options:
    """What tests (and ``Settings``) tune."""

    access_token_seconds: float = 900.0
    quick_match_wait_seconds: float = 30.0
    limits: Limits = field(default_factory=Limits)


# --------------------------------------------------------------------------------------------
# Checking requests


def _length(value: str, field_name: str, minimum: int, maximum: int) -> str:
    if not minimum <= len(value) <= maximum or (value and not value.isprintable()):
        raise Invalid("BAD_LENGTH", field=field_name, minimum=minimum, maximum=maximum)
    return value


def _name(value: str, field_name: str, *, required: bool, maximum: int = 32) -> str:
    value = value.strip()
    if not value and not required:
        return ""
    if not value:
        raise Invalid("FIELD_REQUIRED", field=field_name)
    return _length(value, field_name, 1, maximum)


def _username(value: str) -> str:
    if not value:
        raise Invalid("FIELD_REQUIRED", field="username")
    lowered = value.lower()
    if USERNAME.fullmatch(lowered) is None:
        raise Invalid("BAD_USERNAME")
    return lowered


def _password(value: str) -> str:
    if not value:
        raise Invalid("FIELD_REQUIRED", field="password")
    if not 8 <= len(value) <= 128:
        raise Invalid("BAD_LENGTH", field="password", minimum=8, maximum=128)
    return value


def _id(value: str, field_name: str) -> str:
    if not value:
        raise Invalid("FIELD_REQUIRED", field=field_name)
    return _length(value, field_name, 1, 128)


def _enum(value: int, known: Collection[int], field_name: str) -> int:
    if value not in known:
        raise Invalid("BAD_FIELD", field=field_name, value=str(value))
    return value


_BOT_LEVELS: Final = {
    common_pb2.BOT_LEVEL_UNSPECIFIED,
    common_pb2.BOT_LEVEL_RANDOM,
    common_pb2.BOT_LEVEL_EASY,
    common_pb2.BOT_LEVEL_NORMAL,
    common_pb2.BOT_LEVEL_HARD,
}
_VISIBILITIES: Final = {
    common_pb2.TABLE_VISIBILITY_UNSPECIFIED,
    common_pb2.TABLE_VISIBILITY_PUBLIC,
    common_pb2.TABLE_VISIBILITY_PRIVATE,
}
_PRESET_VALUES: Final = {common_pb2.RULE_PRESET_UNSPECIFIED, *PRESETS.values()}
_TABLE_STATES: Final = {
    common_pb2.TABLE_STATE_WAITING,
    common_pb2.TABLE_STATE_PLAYING,
    common_pb2.TABLE_STATE_FINISHED,
    common_pb2.TABLE_STATE_CLOSED,
}


def _rules(message: common_pb2.RuleSet) -> str:
    """The preset a rule set plays (checking every knob the engine knows)."""
    return convert.rules_from_proto(message).name


# --------------------------------------------------------------------------------------------


class LobbyServicer(lobby_pb2_grpc.LobbyServiceServicer):
    """okey.v1.LobbyService (module docstring)."""

    def __init__(
        self,
        database: Database,
        signing_key: SigningKey,
        *,
        published: Mapping[str, Any],
        verifier: JwksVerifier,
        peers: Peers,
        options: Options,
        refresh_token_seconds: float,
        lease_seconds: float,
        passwords: Passwords | None = None,
    ) -> None:
        issuer = TokenIssuer(signing_key)
        ttl = options.access_token_seconds

        def issue(player_id: str) -> AccessToken:
            import time

            now = time.time()
            return AccessToken(
                issuer.issue(player_id, "player", ttl_seconds=ttl, now=now), now + ttl
            )

        self.database = database
        self.repository = LobbyRepository(
            database, issue, refresh_seconds=refresh_token_seconds, lease_seconds=lease_seconds
        )
        self.published = published
        self.verifier = verifier
        self.tables = TableClient(peers)
        self.scoring = ScoringClient(peers)
        self.options = options
        self.passwords = passwords or Passwords()
        self.matchmaker = Matchmaker(self.repository, self.tables)
        self.ready = False

    async def prepare(self) -> None:
        """Migrate the database to the service's latest schema; calls are served from then."""
        try:
            await self.database.migrate(NAME)
        except (OSError, DBAPIError) as error:
            raise ConfigError(f"cannot migrate the {NAME} database: {error}") from None
        self.ready = True

    async def _answer(
        self, request: object, context: Context, work: Callable[[], Awaitable[_R]]
    ) -> _R:
        language = request_language(request, context.invocation_metadata())
        try:
            if not self.ready:
                raise NotReady("SERVICE_STARTING")
            with outage_as(NotReady, log=_log):
                return await work()
        except OkeyError as error:
            await _abort(context, error, language)
        except PeerError as error:
            await _forward(context, error)

    @contextlib.asynccontextmanager
    async def _counted(
        self, action: str, subject: str, limit: RateLimit, request_id: str
    ) -> AsyncIterator[None]:
        """The block, its request counted against ``limit`` first (RATE_LIMITED over it), once
        per request id: a retry after UNAVAILABLE, or of a call whose answer was lost, is not
        counted again. A refusal (any other error) makes the request id count again if it is
        sent again: a login refused for its password, sent again with another, is a new guess."""
        retry_after = await self.repository.hit(action, subject, limit, request_id)
        if retry_after is not None:
            RATE_LIMITED.labels(action).inc()
            raise Limited("RATE_LIMITED", retry_after_ms=retry_after, action=action)
        try:
            yield
        except (OkeyError, PeerError) as error:
            if not isinstance(error, NotReady):
                await self.repository.uncount(action, subject, request_id)
            raise

    async def _caller(self) -> PlayerRow:
        """The player whose token the call carries."""
        claims = require_claims()
        if claims.kind != "player":
            raise Denied("PLAYER_TOKEN_REQUIRED")
        player = await self.repository.player(claims.subject)
        if player is None:
            raise Missing("PLAYER_NOT_FOUND", player_id=claims.subject)
        return player

    # ----------------------------------------------------------------------------------------
    # Players and tokens

    async def LoginGuest(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.LoginGuestRequest, context: Context
    ) -> lobby_pb2.LoginGuestResponse:
        async def work() -> lobby_pb2.LoginGuestResponse:
            check_request_id(request.request_id)
            _length(request.device_id, "device_id", 8, 128)
            _name(request.display_name, "display_name", required=False)
            if len(request.guest_secret) > 128:
                raise Unauthorized("BAD_GUEST_SECRET")
            limit = self.options.limits.login
            async with self._counted(
                "login", f"device:{request.device_id}", limit, request.request_id
            ):
                try:
                    answer = await self.repository.login_guest(request)
                except Unauthorized as error:
                    LOGIN_FAILURES.labels(error.code).inc()
                    raise
            LOGINS.labels("guest").inc()
            return answer

        return await self._answer(request, context, work)

    async def RegisterAccount(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.RegisterAccountRequest, context: Context
    ) -> lobby_pb2.RegisterAccountResponse:
        async def work() -> lobby_pb2.RegisterAccountResponse:
            check_request_id(request.request_id)
            username = _username(request.username)
            password = _password(request.password)
            _name(request.display_name, "display_name", required=False)
            guest_id = await self._optional_player(context)
            limit = self.options.limits.login
            async with self._counted("login", f"account:{username}", limit, request.request_id):
                existing = await self.repository.player_by_username(username)
                if existing is not None:
                    matched, _ = await self.passwords.verify(existing.password_hash, password)
                    if not matched:
                        raise Exists("USERNAME_TAKEN", username=username)
                    # Possibly a retry: only its stored answer is returned.
                    return await self.repository.register_account(request, username, None, guest_id)
                hashed = await self.passwords.hash(password)
                answer = await self.repository.register_account(request, username, hashed, guest_id)
            LOGINS.labels("register").inc()
            return answer

        return await self._answer(request, context, work)

    async def _optional_player(self, context: Context) -> str | None:
        """The player of an optional token (RegisterAccount): None without one."""
        token = bearer_token(context.invocation_metadata())
        if token is None:
            return None
        claims: Claims = await self.verifier.verify_fresh(token)
        if claims.kind != "player":
            raise Denied("PLAYER_TOKEN_REQUIRED")
        return claims.subject

    async def LoginAccount(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.LoginAccountRequest, context: Context
    ) -> lobby_pb2.LoginAccountResponse:
        async def work() -> lobby_pb2.LoginAccountResponse:
            check_request_id(request.request_id)
            if not request.username:
                raise Invalid("FIELD_REQUIRED", field="username")
            if not request.password:
                raise Invalid("FIELD_REQUIRED", field="password")
            username = request.username.lower()[:64]
            limit = self.options.limits.login
            async with self._counted("login", f"account:{username}", limit, request.request_id):
                account = await self.repository.player_by_username(username)
                matched, new_hash = await self.passwords.verify(
                    account.password_hash if account else None, request.password[:1024]
                )
                if account is None or not matched:
                    LOGIN_FAILURES.labels("BAD_CREDENTIALS").inc()
                    raise Unauthorized("BAD_CREDENTIALS")
                answer = await self.repository.login_account(request, account, new_hash)
            LOGINS.labels("account").inc()
            return answer

        return await self._answer(request, context, work)

    async def RefreshTokens(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.RefreshTokensRequest, context: Context
    ) -> lobby_pb2.RefreshTokensResponse:
        async def work() -> lobby_pb2.RefreshTokensResponse:
            check_request_id(request.request_id)
            if not request.refresh_token:
                raise Invalid("FIELD_REQUIRED", field="refresh_token")
            try:
                answer = await self.repository.refresh(request)
            except Unauthorized as error:
                LOGIN_FAILURES.labels(error.code).inc()
                if error.code == "REFRESH_TOKEN_REUSED":
                    _log.warning("a spent refresh token was presented: its login is revoked")
                raise
            LOGINS.labels("refresh").inc()
            return answer

        return await self._answer(request, context, work)

    async def Logout(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.LogoutRequest, context: Context
    ) -> lobby_pb2.LogoutResponse:
        async def work() -> lobby_pb2.LogoutResponse:
            check_request_id(request.request_id)
            if not request.refresh_token:
                raise Invalid("FIELD_REQUIRED", field="refresh_token")
            return await self.repository.logout(request)

        return await self._answer(request, context, work)

    async def GetJwks(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.GetJwksRequest, context: Context
    ) -> lobby_pb2.GetJwksResponse:
        async def work() -> lobby_pb2.GetJwksResponse:
            keys = [
                lobby_pb2.Jwk(**{name: str(key.get(name, "")) for name in _JWK_FIELDS})
                for key in self.published.get("keys", ())
            ]
            return lobby_pb2.GetJwksResponse(
                keys=keys, jwks_json=json.dumps(self.published, separators=(",", ":"))
            )

        return await self._answer(request, context, work)

    async def GetPlayer(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.GetPlayerRequest, context: Context
    ) -> lobby_pb2.GetPlayerResponse:
        async def work() -> lobby_pb2.GetPlayerResponse:
            claims = require_claims()
            player_id = request.player_id
            if not player_id:
                if claims.kind != "player":
                    raise Invalid("FIELD_REQUIRED", field="player_id")
                player_id = claims.subject
            _id(player_id, "player_id")
            player = await self.repository.player(player_id)
            if player is None:
                raise Missing("PLAYER_NOT_FOUND", player_id=player_id)
            own = claims.kind == "player" and claims.subject == player_id
            return lobby_pb2.GetPlayerResponse(player=player.message(own=own))

        return await self._answer(request, context, work)

    # ----------------------------------------------------------------------------------------
    # Tables

    async def BrowseTables(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.BrowseTablesRequest, context: Context
    ) -> lobby_pb2.BrowseTablesResponse:
        async def work() -> lobby_pb2.BrowseTablesResponse:
            _enum(request.preset, _PRESET_VALUES, "preset")
            states = list(request.states) or [
                common_pb2.TABLE_STATE_WAITING,
                common_pb2.TABLE_STATE_PLAYING,
            ]
            for state in states:
                _enum(state, _TABLE_STATES, "states")
            size = paging.page_size(
                request.page_size, default=TABLES_PAGE[0], maximum=TABLES_PAGE[1]
            )
            bound = paging.fingerprint("tables", request.preset, *request.states)
            after = paging.decode_token(request.page_token, bound, (int, str))
            index, token = (0, "") if after is None else (int(after[0]), str(after[1]))
            if not 0 <= index < len(states):
                raise Invalid("PAGE_TOKEN_INVALID")
            answer = lobby_pb2.BrowseTablesResponse()
            while len(answer.tables) < size:
                page = await self.tables.list(
                    table_pb2.ListTablesRequest(
                        preset=request.preset,
                        states=[states[index]],
                        visibility=common_pb2.TABLE_VISIBILITY_PUBLIC,
                        page_size=size - len(answer.tables),
                        page_token=token,
                        locale=request.locale,
                    )
                )
                for table in page.tables:
                    table.invite_code = ""
                    answer.tables.append(table)
                token = page.next_page_token
                if not token:
                    index += 1
                    if index == len(states):
                        return answer
            answer.next_page_token = paging.encode_token([index, token], bound)
            return answer

        return await self._answer(request, context, work)

    async def HostTable(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.HostTableRequest, context: Context
    ) -> lobby_pb2.HostTableResponse:
        async def work() -> lobby_pb2.HostTableResponse:
            check_request_id(request.request_id)
            player = await self._caller()
            _rules(request.rules)
            _length(request.name, "name", 0, 64)
            _enum(request.visibility, _VISIBILITIES, "visibility")
            if request.host_seat >= bracket.SEATS:
                raise Invalid("BAD_SEAT", seat=request.host_seat)
            taken = {request.host_seat}
            for bot in request.bots:
                if bot.seat >= bracket.SEATS:
                    raise Invalid("BAD_SEAT", seat=bot.seat)
                if bot.seat in taken:
                    raise Invalid("DUPLICATE_SEAT", seat=bot.seat)
                taken.add(bot.seat)
                _enum(bot.level, _BOT_LEVELS, "bots.level")
            once = Once.of("HostTable", f"player:{player.player_id}", request)
            stored = await self.repository.stored(once, lobby_pb2.HostTableResponse)
            if stored is not None:
                return stored
            key = (player.player_id, request.request_id)
            seats = [
                table_pb2.SeatSetup(
                    seat=request.host_seat,
                    kind=common_pb2.OCCUPANT_KIND_PLAYER,
                    player_id=player.player_id,
                )
            ] + [
                table_pb2.SeatSetup(
                    seat=bot.seat, kind=common_pb2.OCCUPANT_KIND_BOT, bot_level=bot.level
                )
                for bot in request.bots
            ]
            create = table_pb2.CreateTableRequest(
                request_id=derived_request_id("host-create", *key),
                rules=request.rules,
                name=request.name,
                visibility=request.visibility or common_pb2.TABLE_VISIBILITY_PUBLIC,
                seats=seats,
                host_player_id=player.player_id,
                start_when_full=request.start_when_full,
                locale=request.locale,
            )
            sit = table_pb2.SitRequest(
                request_id=derived_request_id("host-sit", *key),
                seat=request.host_seat,
                player_id=player.player_id,
                display_name=player.display_name,
                locale=request.locale,
            )
            limit = self.options.limits.host_table
            subject = f"player:{player.player_id}"
            async with self._counted("host_table", subject, limit, request.request_id):
                # Owed from here on: if this call goes no further, a finisher makes the calls.
                await self.repository.begin_hosting(create, sit)
                created, sat = await host_table_calls(self.repository, self.tables, create, sit)
            table = sat.table
            table.invite_code = created.invite_code
            answer = lobby_pb2.HostTableResponse(table=table, seat=sat.seat)
            await self.repository.store(once, answer, hosting=create.request_id)
            return answer

        return await self._answer(request, context, work)

    async def JoinTable(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.JoinTableRequest, context: Context
    ) -> lobby_pb2.JoinTableResponse:
        async def work() -> lobby_pb2.JoinTableResponse:
            check_request_id(request.request_id)
            player = await self._caller()
            if request.HasField("seat") and request.seat >= bracket.SEATS:
                raise Invalid("BAD_SEAT", seat=request.seat)
            target = request.WhichOneof("target")
            if target == "invite_code":
                _length(request.invite_code, "invite_code", 1, 64)
                found = await self.repository.table_by_invite(request.invite_code)
                if found is None:
                    raise Missing("BAD_INVITE_CODE", invite_code=request.invite_code)
                table_id = found
            elif target == "table_id":
                table_id = _id(request.table_id, "table_id")
                table = await self.tables.get(table_id, request.locale)
                if table.visibility == common_pb2.TABLE_VISIBILITY_PRIVATE and not (
                    table.host_player_id == player.player_id
                    or any(seat.player_id == player.player_id for seat in table.seats)
                ):
                    # A private table is found by its code only: its id alone says nothing.
                    raise Missing("TABLE_NOT_FOUND", table_id=table_id)
            else:
                raise Invalid("FIELD_REQUIRED", field="table_id")
            sit = table_pb2.SitRequest(
                request_id=derived_request_id("join", player.player_id, request.request_id),
                table_id=table_id,
                player_id=player.player_id,
                display_name=player.display_name,
                invite_code=request.invite_code,
                locale=request.locale,
            )
            if request.HasField("seat"):
                sit.seat = request.seat
            sat = await self.tables.sit(sit)
            return lobby_pb2.JoinTableResponse(table=sat.table, seat=sat.seat)

        return await self._answer(request, context, work)

    async def LeaveTable(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.LeaveTableRequest, context: Context
    ) -> lobby_pb2.LeaveTableResponse:
        async def work() -> lobby_pb2.LeaveTableResponse:
            check_request_id(request.request_id)
            player = await self._caller()
            table_id = _id(request.table_id, "table_id")
            table = await self.tables.leave(
                table_pb2.LeaveRequest(
                    request_id=derived_request_id("leave", player.player_id, request.request_id),
                    table_id=table_id,
                    player_id=player.player_id,
                    locale=request.locale,
                )
            )
            return lobby_pb2.LeaveTableResponse(table=table)

        return await self._answer(request, context, work)

    # ----------------------------------------------------------------------------------------
    # Quick match

    async def JoinQuickMatch(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.JoinQuickMatchRequest, context: Context
    ) -> lobby_pb2.JoinQuickMatchResponse:
        async def work() -> lobby_pb2.JoinQuickMatchResponse:
            check_request_id(request.request_id)
            _enum(request.preset, _PRESET_VALUES, "preset")
            player = await self._caller()
            limit = self.options.limits.quick_match
            subject = f"player:{player.player_id}"
            async with self._counted("quick_match", subject, limit, request.request_id):
                answer = await self.repository.join_queue(
                    request,
                    player,
                    preset_name(request.preset),
                    self.options.quick_match_wait_seconds,
                )
            self.matchmaker.wake()
            return answer

        return await self._answer(request, context, work)

    async def LeaveQuickMatch(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.LeaveQuickMatchRequest, context: Context
    ) -> lobby_pb2.LeaveQuickMatchResponse:
        async def work() -> lobby_pb2.LeaveQuickMatchResponse:
            check_request_id(request.request_id)
            ticket_id = _id(request.ticket_id, "ticket_id")
            player = await self._caller()
            ticket = await self.repository.leave_queue(ticket_id, player.player_id)
            return lobby_pb2.LeaveQuickMatchResponse(ticket=ticket)

        return await self._answer(request, context, work)

    async def GetQuickMatchStatus(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.GetQuickMatchStatusRequest, context: Context
    ) -> lobby_pb2.GetQuickMatchStatusResponse:
        async def work() -> lobby_pb2.GetQuickMatchStatusResponse:
            ticket_id = _id(request.ticket_id, "ticket_id")
            claims = require_claims()
            ticket = await self.repository.ticket(ticket_id, claims.subject)
            return lobby_pb2.GetQuickMatchStatusResponse(ticket=ticket)

        return await self._answer(request, context, work)

    # ----------------------------------------------------------------------------------------
    # Tournaments

    async def _tournament_message(self, tournament_id: str) -> lobby_pb2.Tournament:
        row = await self.repository.tournament(tournament_id)
        tables = await self.repository.round_tables(tournament_id)
        return tournament_message(row, tables)

    async def CreateTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.CreateTournamentRequest, context: Context
    ) -> lobby_pb2.CreateTournamentResponse:
        async def work() -> lobby_pb2.CreateTournamentResponse:
            check_request_id(request.request_id)
            _name(request.name, "name", required=True, maximum=64)
            preset = _rules(request.rules)
            if not 4 <= request.max_players <= 1024:
                raise Invalid("BAD_FIELD", field="max_players", value=str(request.max_players))
            if request.advance_per_table > 3:
                raise Invalid(
                    "BAD_FIELD", field="advance_per_table", value=str(request.advance_per_table)
                )
            if request.rounds > 32:
                raise Invalid("BAD_FIELD", field="rounds", value=str(request.rounds))
            _enum(request.bot_level, _BOT_LEVELS, "bot_level")
            claims = require_claims()
            creator = claims.subject if claims.kind == "player" else ""
            tournament_id = await self.repository.create_tournament(
                request, f"{claims.kind}:{claims.subject}", creator, preset
            )
            tournament = await self._tournament_message(tournament_id)
            return lobby_pb2.CreateTournamentResponse(tournament=tournament)

        return await self._answer(request, context, work)

    async def RegisterForTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.RegisterForTournamentRequest, context: Context
    ) -> lobby_pb2.RegisterForTournamentResponse:
        async def work() -> lobby_pb2.RegisterForTournamentResponse:
            check_request_id(request.request_id)
            tournament_id = _id(request.tournament_id, "tournament_id")
            player = await self._caller()
            await self.repository.register(tournament_id, player)
            tournament = await self._tournament_message(tournament_id)
            return lobby_pb2.RegisterForTournamentResponse(tournament=tournament)

        return await self._answer(request, context, work)

    async def StartTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.StartTournamentRequest, context: Context
    ) -> lobby_pb2.StartTournamentResponse:
        async def work() -> lobby_pb2.StartTournamentResponse:
            check_request_id(request.request_id)
            tournament_id = _id(request.tournament_id, "tournament_id")
            claims = require_claims()
            once = Once.of("StartTournament", f"{claims.kind}:{claims.subject}", request)
            stored = await self.repository.stored(once, lobby_pb2.StartTournamentResponse)
            if stored is not None:
                return stored
            caller = claims.subject if claims.kind == "player" else None
            return await self.repository.start_tournament(
                tournament_id,
                caller,
                MIN_TOURNAMENT_PLAYERS,
                once,
                lobby_pb2.StartTournamentResponse,
                # As started: no round planned yet (the driver plans round 1 next).
                lambda row: lobby_pb2.StartTournamentResponse(
                    tournament=tournament_message(row, [])
                ),
            )

        return await self._answer(request, context, work)

    async def GetTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.GetTournamentRequest, context: Context
    ) -> lobby_pb2.GetTournamentResponse:
        async def work() -> lobby_pb2.GetTournamentResponse:
            tournament_id = _id(request.tournament_id, "tournament_id")
            return lobby_pb2.GetTournamentResponse(
                tournament=await self._tournament_message(tournament_id)
            )

        return await self._answer(request, context, work)

    async def ListTournaments(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.ListTournamentsRequest, context: Context
    ) -> lobby_pb2.ListTournamentsResponse:
        async def work() -> lobby_pb2.ListTournamentsResponse:
            names = {int(number): name for name, number in TOURNAMENT_STATES.items()}
            states = [names.get(int(state)) for state in request.states]
            if None in states:
                raise Invalid("BAD_FIELD", field="states", value=str(list(request.states)))
            size = paging.page_size(
                request.page_size, default=TOURNAMENTS_PAGE[0], maximum=TOURNAMENTS_PAGE[1]
            )
            bound = paging.fingerprint("tournaments", *request.states)
            after = paging.decode_token(request.page_token, bound, (int, str))
            key = None if after is None else (int(after[0]), str(after[1]))
            rows, next_key = await self.repository.tournament_page(
                [state for state in states if state], key, size
            )
            answer = lobby_pb2.ListTournamentsResponse()
            for row in rows:
                tables = await self.repository.round_tables(row.tournament_id)
                answer.tournaments.append(tournament_message(row, tables))
            if next_key is not None:
                answer.next_page_token = paging.encode_token(list(next_key), bound)
            return answer

        return await self._answer(request, context, work)

    async def GetTournamentStandings(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.GetTournamentStandingsRequest, context: Context
    ) -> lobby_pb2.GetTournamentStandingsResponse:
        async def work() -> lobby_pb2.GetTournamentStandingsResponse:
            tournament_id = _id(request.tournament_id, "tournament_id")
            size = paging.page_size(
                request.page_size, default=STANDINGS_PAGE[0], maximum=STANDINGS_PAGE[1]
            )
            bound = paging.fingerprint("standings", tournament_id)
            after = paging.decode_token(request.page_token, bound, (int,))
            row = await self.repository.tournament(tournament_id)
            entries = await self.repository.entries(tournament_id)
            rows = {entry.player_id: data for entry, data in entries}
            ranked = bracket.standings(
                (entry for entry, _ in entries), started=row.started_us is not None
            )
            start = 0 if after is None else int(after[0])
            page = ranked[start : start + size]
            answer = lobby_pb2.GetTournamentStandingsResponse()
            for rank, entry in page:
                data = rows[entry.player_id]
                answer.standings.append(
                    lobby_pb2.TournamentStanding(
                        rank=rank,
                        player_id=entry.player_id,
                        display_name=data.display_name,
                        round_reached=entry.round_reached,
                        eliminated=entry.eliminated,
                        table_id=data.table_id,
                        match_total=entry.match_total,
                        matches_won=data.matches_won,
                        hands_finished=entry.hands_finished,
                        penalty_points=entry.penalty_points,
                        won_last_match=entry.won_last,
                    )
                )
            if start + size < len(ranked):
                answer.next_page_token = paging.encode_token([start + size], bound)
            return answer

        return await self._answer(request, context, work)


_JWK_FIELDS: Final = ("kty", "crv", "kid", "x", "alg", "use")


def tournament_message(row: TournamentRow, tables: list[RoundTable]) -> lobby_pb2.Tournament:
    """A tournament as lobby.proto describes it."""
    message = lobby_pb2.Tournament(
        tournament_id=row.tournament_id,
        name=row.name,
        rules=convert.rules_to_proto(
            convert.rules_from_proto(common_pb2.RuleSet.FromString(row.rules))
        ),
        max_players=row.max_players,
        advance_per_table=row.advance_per_table,
        state=TOURNAMENT_STATES[row.state],
        registered_players=row.registered,
        current_round=row.current_round,
        winner_player_id=row.winner_player_id,
        creator_player_id=row.creator_player_id,
        bot_level=row.bot_level,  # type: ignore[arg-type]
        create_time=timestamp(row.created_us),
        planned_rounds=row.planned_rounds,
    )
    if row.started_us is not None:
        message.start_time.CopyFrom(timestamp(row.started_us))
    rounds: dict[int, lobby_pb2.TournamentRound] = {}
    for table in tables:
        entry = rounds.get(table.round)
        if entry is None:
            entry = rounds[table.round] = lobby_pb2.TournamentRound(
                number=table.round, advance_per_table=table.advance or 1
            )
        if table.table_id:
            entry.table_ids.append(table.table_id)
        if table.state == "finished":
            entry.tables_finished += 1
    message.rounds.extend(rounds[number] for number in sorted(rounds))
    return message


async def _abort(context: Context, error: OkeyError, language: Language) -> NoReturn:
    """End the call with the lobby's status for ``error``."""
    status = rpc_status.to_status(status_of(error, language))
    await context.abort(status.code, status.details, status.trailing_metadata)
    raise AssertionError("abort returned")


async def _forward(context: Context, error: PeerError) -> NoReturn:
    """End the call with a peer's error as the peer gave it."""
    await context.abort(error.code, error.details, error.trailing)
    raise AssertionError("abort returned")


# --------------------------------------------------------------------------------------------
# Running it


def published_jwks(signing_key: SigningKey, settings: Settings) -> dict[str, Any]:
    """The keys the lobby publishes: its signing key first, then the keys of ``--jwks-file``
    (older keys still verifying tokens while keys rotate)."""
    keys = list(jwks_of(signing_key)["keys"])
    if settings.jwks_file is not None:
        try:
            extra = json.loads(settings.jwks_file.read_text())
        except (OSError, ValueError) as error:
            raise ConfigError(f"cannot read the JWKS file {settings.jwks_file}: {error}") from None
        known = {key["kid"] for key in keys}
        for key in extra.get("keys", ()):
            if isinstance(key, dict) and key.get("kid") not in known and key.get("kty") == "OKP":
                keys.append({name: str(value) for name, value in key.items()})
    return {"keys": keys}


def register(server: grpc.aio.Server, servicer: LobbyServicer) -> list[str]:
    """Add LobbyService to ``server``; its full service name, for health and reflection."""
    lobby_pb2_grpc.add_LobbyServiceServicer_to_server(servicer, server)
    return [SERVICE_NAME]


@dataclass
class Lobby:
    """A running lobby: its gRPC server, JWKS server and background workers."""

    handle: ServerHandle
    servicer: LobbyServicer
    jwks: JwksServer
    driver: TournamentDriver
    peers: Peers
    tasks: list[asyncio.Task[None]]

    @property
    def target(self) -> str:
        return self.handle.target

    @property
    def jwks_url(self) -> str:
        return f"http://127.0.0.1:{self.jwks.port}/.well-known/jwks.json"

    async def stop(self, grace: float | None = None) -> None:
        """Drain gRPC, stop the workers (giving tournament leases up), close everything."""
        await self.handle.stop(grace)
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.driver.release()
        await asyncio.to_thread(self.jwks.close)
        await self.peers.close()
        await self.servicer.database.dispose()


async def open_lobby(
    settings: Settings,
    *,
    options: Options | None = None,
    passwords: Passwords | None = None,
    driver_interval: float = 0.5,
) -> Lobby:
    """Start the lobby as ``okey101 serve lobby`` does (module docstring)."""
    configure_logging(settings.log_format, settings.log_level)
    signing_key = signing_key_for(settings)
    if signing_key is None:
        raise ConfigError(
            "the lobby signs tokens: set OKEY_SIGNING_KEY_FILE (or OKEY_LOCAL_MODE=1 for a "
            "development key)"
        )
    options = options or Options(
        access_token_seconds=settings.access_token_seconds,
        quick_match_wait_seconds=settings.quick_match_wait_seconds,
        limits=Limits(
            login=RateLimit(settings.login_limit_per_minute, 60.0),
            host_table=RateLimit(settings.host_table_limit_per_minute, 60.0),
            quick_match=RateLimit(settings.quick_match_limit_per_minute, 60.0),
        ),
    )
    published = published_jwks(signing_key, settings)
    verifier = JwksVerifier(published)
    database = Database.for_service(NAME, settings)
    peers = Peers(settings, signing_key=signing_key)
    servicer = LobbyServicer(
        database,
        signing_key,
        published=published,
        verifier=verifier,
        peers=peers,
        options=options,
        refresh_token_seconds=settings.refresh_token_seconds,
        lease_seconds=settings.tournament_lease_seconds,
        passwords=passwords,
    )
    try:
        jwks = start_jwks_server(settings.host, settings.jwks_port, lambda: published)
    except OSError as error:
        await database.dispose()
        raise ConfigError(
            f"cannot serve the JWKS on {settings.host}:{settings.jwks_port}: {error}"
        ) from None
    try:
        handle = await ServerHandle.start(
            NAME,
            lambda server: register(server, servicer),
            settings,
            ready=servicer.prepare,
            access=ACCESS,
            verifier=verifier,
        )
    except BaseException:
        await asyncio.to_thread(jwks.close)
        await database.dispose()
        raise
    driver = TournamentDriver(
        servicer.repository, servicer.tables, servicer.scoring, interval=driver_interval
    )
    tasks = [
        asyncio.ensure_future(servicer.matchmaker.run()),
        asyncio.ensure_future(driver.run()),
        asyncio.ensure_future(HostingFinisher(servicer.repository, servicer.tables).run()),
        asyncio.ensure_future(_housekeeping(servicer.repository)),
    ]
    _log.info("lobby ready", jwks_port=jwks.port, holder=driver.holder)
    return Lobby(handle, servicer, jwks, driver, peers, tasks)


@contextlib.asynccontextmanager
async def start_lobby(settings: Settings, **options: Any) -> AsyncIterator[Lobby]:
    """``open_lobby`` as an async context manager that stops it at the end."""
    lobby = await open_lobby(settings, **options)
    try:
        yield lobby
    finally:
        await lobby.stop(grace=0)


async def _housekeeping(repository: LobbyRepository) -> None:
    while True:
        try:
            await repository.prune()
        except Exception as error:
            _log.warning("housekeeping failed", error=str(error)[:300])
        await asyncio.sleep(600)


async def serve_lobby(settings: Settings) -> None:
    """Run the lobby until SIGTERM or SIGINT, then drain and stop (as ``platform.server``)."""
    lobby = await open_lobby(settings)
    await until_signalled(lobby.handle, lobby.stop)


__all__ = [
    "ACCESS",
    "METHOD_ACCESS",
    "SERVICE_NAME",
    "Limits",
    "Lobby",
    "LobbyServicer",
    "Options",
    "access_policy",
    "open_lobby",
    "published_jwks",
    "register",
    "serve_lobby",
    "start_lobby",
    "tournament_message",
]
