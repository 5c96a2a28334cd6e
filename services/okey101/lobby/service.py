"""LobbyService (protos/okey/v1/lobby.proto): players and tokens, the table directory, private
tables, quick match, tournaments and chips.

``LobbyServicer`` answers the RPCs, a group per module of ``rpc`` (players and tokens, tables,
quick match, tournaments, the organiser role, the player's own stream, push devices, wallets
and chips): each checks its request, calls the lobby's stores (``stores``, ``chips``) and, for
tables, the table service (``peer_clients``), and builds the answer (``messages``); an
``OkeyError`` ends the call with its status and a sentence in the request's language, a table
service error is passed on as it is.
Until the database is migrated (``prepare``) calls are UNAVAILABLE SERVICE_STARTING; a
database that cannot be reached is UNAVAILABLE DATABASE_UNAVAILABLE.

``start_lobby(settings)`` runs the whole lobby in-process (gRPC, the JWKS over HTTP, the
matchmaker, the tournament driver, the hosting finisher and the push sender, ``lobby.push``) as
``okey101 serve lobby`` does;
``serve_lobby`` runs it until SIGTERM. The decisions behind it are in ``docs/lobby.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Final

import grpc
import grpc.aio
from okey.v1 import lobby_pb2, lobby_pb2_grpc
from sqlalchemy.engine import make_url

from okey101.lobby.chips.settings import ChipSettings
from okey101.lobby.credentials import Passwords
from okey101.lobby.hosting_finisher import HostingFinisher
from okey101.lobby.jwks_http import JwksServer, start_jwks_server
from okey101.lobby.push.providers import PushProviders, providers_for
from okey101.lobby.push.sender import PushSender
from okey101.lobby.rpc.base import NAME, Options, log
from okey101.lobby.rpc.organisers import OrganiserCalls
from okey101.lobby.rpc.player_stream import PlayerStreamCalls
from okey101.lobby.rpc.players import PlayerCalls
from okey101.lobby.rpc.push import PushCalls
from okey101.lobby.rpc.quick_match import QuickMatchCalls
from okey101.lobby.rpc.tables import TableCalls
from okey101.lobby.rpc.tournaments import MIN_TOURNAMENT_PLAYERS, TournamentCalls
from okey101.lobby.rpc.wallet import WalletCalls
from okey101.lobby.stores import LobbyRepository
from okey101.lobby.stores.player_events import NOTIFY_CHANNEL
from okey101.lobby.stores.rate_limits import Limits, RateLimit
from okey101.lobby.tournament_driver import TournamentDriver
from okey101.lobby.tournament_scheduler import TournamentScheduler
from okey101.platform.auth import (
    Access,
    AccessPolicy,
    JwksVerifier,
    SigningKey,
    jwks_of,
    signing_key_for,
)
from okey101.platform.config import ConfigError, Settings
from okey101.platform.database import Database
from okey101.platform.listener import PostgresListener
from okey101.platform.logs import configure_logging
from okey101.platform.peer_channels import PeerChannels
from okey101.platform.server import ServerHandle, until_signalled

SERVICE_NAME: Final = lobby_pb2.DESCRIPTOR.services_by_name["LobbyService"].full_name

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
    "ListRevokedLogins": ("service",),
    "GetPlayer": _PLAYER_OR_SERVICE,
    "BrowseTables": _PLAYER,
    "HostTable": _PLAYER,
    "JoinTable": _PLAYER,
    "LeaveTable": _PLAYER,
    "JoinQuickMatch": _PLAYER,
    "LeaveQuickMatch": _PLAYER,
    "GetQuickMatchStatus": _PLAYER,
    "GrantOrganiser": ("service",),
    "RevokeOrganiser": ("service",),
    "CreateTournament": _PLAYER_OR_SERVICE,
    "RegisterForTournament": _PLAYER,
    "UnregisterFromTournament": _PLAYER,
    "CheckInToTournament": _PLAYER,
    "StopTournamentSeries": _PLAYER_OR_SERVICE,
    "PauseTournament": _PLAYER_OR_SERVICE,
    "ResumeTournament": _PLAYER_OR_SERVICE,
    "DisqualifyFromTournament": _PLAYER_OR_SERVICE,
    "StartTournament": _PLAYER_OR_SERVICE,
    "CancelTournament": _PLAYER_OR_SERVICE,
    "GetTournament": _PLAYER_OR_SERVICE,
    "ListTournaments": _PLAYER_OR_SERVICE,
    "GetTournamentStandings": _PLAYER_OR_SERVICE,
    "WatchPlayer": _PLAYER,
    "RecordPlayerEvents": ("service",),
    "RegisterPushDevice": _PLAYER,
    "UnregisterPushDevice": _PLAYER,
    "GetWallet": _PLAYER_OR_SERVICE,
    "ListWalletEntries": _PLAYER_OR_SERVICE,
    "ClaimDailyChips": _PLAYER,
    "AdjustChips": ("service",),
    "ListStakeLevels": _PLAYER_OR_SERVICE,
    "RecordTableChips": ("service",),
}


#: Which tokens each call accepts (and the platform's open methods).
ACCESS: Final = AccessPolicy.of_service(SERVICE_NAME, METHOD_ACCESS)


class LobbyServicer(
    PlayerCalls,
    TableCalls,
    QuickMatchCalls,
    TournamentCalls,
    OrganiserCalls,
    PlayerStreamCalls,
    PushCalls,
    WalletCalls,
    lobby_pb2_grpc.LobbyServiceServicer,
):
    """okey.v1.LobbyService: its groups of RPCs (module docstring) as one servicer."""


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
    peers: PeerChannels
    tasks: list[asyncio.Task[None]]
    #: On PostgreSQL: other pods' players' events, heard (``stores.player_events``).
    listener: PostgresListener | None = None
    #: The push platforms' senders and the loop that sends (``lobby.push``).
    push: PushProviders | None = None
    sender: PushSender | None = None

    @property
    def target(self) -> str:
        return self.handle.target

    @property
    def jwks_url(self) -> str:
        return f"http://127.0.0.1:{self.jwks.port}/.well-known/jwks.json"

    async def stop(self, grace: float | None = None) -> None:
        """Drain gRPC, stop the workers (giving tournament leases up), close everything."""
        await self.handle.stop(grace)
        if self.sender is not None:
            await self.sender.stop()
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.listener is not None:
            await self.listener.stop()
        await self.servicer.repository.presence.release()
        if self.push is not None:
            await self.push.aclose()
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
            new_guest_per_address=RateLimit(settings.new_guest_limit_per_address_per_minute, 60.0),
            host_table_per_address=RateLimit(
                settings.host_table_limit_per_address_per_minute, 60.0
            ),
        ),
        chips=ChipSettings.from_settings(settings),
    )
    published = published_jwks(signing_key, settings)
    verifier = JwksVerifier(published)
    push = providers_for(settings)
    database = Database.for_service(NAME, settings)
    peers = PeerChannels(settings, signing_key=signing_key)
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
        push=push,
    )
    try:
        jwks = start_jwks_server(settings.host, settings.jwks_port, lambda: published)
    except OSError as error:
        await database.dispose()
        await push.aclose()
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
            revocations=servicer.revoked_logins,
            # Every other service asks for the revoked logins every few seconds.
            routine=frozenset({f"/{SERVICE_NAME}/ListRevokedLogins"}),
        )
    except BaseException:
        await asyncio.to_thread(jwks.close)
        await database.dispose()
        await push.aclose()
        raise
    driver = TournamentDriver(
        servicer.repository, servicer.tables, servicer.scoring, interval=driver_interval
    )
    sender = PushSender(servicer.repository.push_outbox, push)
    tasks = [
        asyncio.ensure_future(servicer.matchmaker.run()),
        asyncio.ensure_future(driver.run()),
        asyncio.ensure_future(
            TournamentScheduler(servicer.repository, minimum_players=MIN_TOURNAMENT_PLAYERS).run()
        ),
        asyncio.ensure_future(
            HostingFinisher(servicer.repository, servicer.tables, chips=options.chips).run()
        ),
        asyncio.ensure_future(_housekeeping(servicer.repository)),
        asyncio.ensure_future(sender.run()),
        asyncio.ensure_future(servicer.repository.presence.run()),
    ]
    listener = None
    if database.dialect == "postgresql":
        wakes = servicer.repository.player_events.wakes
        listener = PostgresListener(
            make_url(database.url).set(drivername="postgresql").render_as_string(False),
            NOTIFY_CHANNEL,
            wakes.notified,
            wakes.wake_all,
            server_settings={"application_name": "okey101-lobby-listener"},
        )
        listener.start()
    log.info("lobby ready", jwks_port=jwks.port, holder=driver.holder)
    return Lobby(handle, servicer, jwks, driver, peers, tasks, listener, push, sender)


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
            log.warning("housekeeping failed", error=str(error)[:300])
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
    "RateLimit",
    "open_lobby",
    "published_jwks",
    "register",
    "serve_lobby",
    "start_lobby",
]
