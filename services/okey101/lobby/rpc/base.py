"""What every LobbyService RPC shares: the servicer's stores and peers (``LobbyCalls``), the
answer wrapper (``_answer``: the request's language, SERVICE_STARTING until migrated, a database
outage as DATABASE_UNAVAILABLE, a coded error as its status, a peer's error passed on as the peer
gave it), rate-limit counting (``_counted``), the calling client's address (``_client``) and the
calling player (``_caller``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NoReturn, TypeVar

from grpc_status import rpc_status
from okey.v1 import lobby_pb2
from prometheus_client import Counter

from okey101.engine.errors import OkeyError
from okey101.lobby.chips.settings import ChipSettings
from okey101.lobby.credentials import Passwords
from okey101.lobby.errors import Denied, Limited, Missing, NotReady, status_of
from okey101.lobby.matchmaker import Matchmaker
from okey101.lobby.messages import revoked_logins_answer
from okey101.lobby.peer_clients import ScoringClient, TableClient
from okey101.lobby.push.providers import PushProviders
from okey101.lobby.records import US, AccessToken, PlayerRow, now_us
from okey101.lobby.stores import LobbyRepository
from okey101.lobby.stores.rate_limits import Limits, RateLimit, address_subject
from okey101.platform.addresses import TrustedProxies, grpc_client_address
from okey101.platform.auth import (
    TOKEN_LEEWAY_SECONDS,
    JwksVerifier,
    SigningKey,
    TokenIssuer,
    require_claims,
)
from okey101.platform.database import Database
from okey101.platform.errors import Language, request_language
from okey101.platform.handlers import Context
from okey101.platform.logs import get_logger
from okey101.platform.peer_calls import PeerError, forward
from okey101.platform.peer_channels import PeerChannels

NAME: Final = "lobby"
#: How many revoked logins one ListRevokedLogins answer holds at most.
REVOKED_PAGE: Final = 1_000

RATE_LIMITED: Final = Counter(
    "okey_lobby_rate_limited_total", "Calls refused by a rate limit, by action.", ("action",)
)

log = get_logger(service=NAME)
_R = TypeVar("_R")


@dataclass(frozen=True)
class Options:
    """What tests (and ``Settings``) tune."""

    access_token_seconds: float = 900.0
    quick_match_wait_seconds: float = 30.0
    limits: Limits = field(default_factory=Limits)
    #: Whose ``x-forwarded-for`` is believed when a limit asks for the client's address.
    trusted_proxies: TrustedProxies = field(default_factory=TrustedProxies.from_env)
    #: The operator's chip settings (grants, stake levels, the table fee; docs/chips.md).
    chips: ChipSettings = field(default_factory=ChipSettings)


class LobbyCalls:
    """The state and helpers every group of RPCs uses (module docstring)."""

    def __init__(
        self,
        database: Database,
        signing_key: SigningKey,
        *,
        published: Mapping[str, Any],
        verifier: JwksVerifier,
        peers: PeerChannels,
        options: Options,
        refresh_token_seconds: float,
        lease_seconds: float,
        passwords: Passwords | None = None,
        push: PushProviders | None = None,
    ) -> None:
        issuer = TokenIssuer(signing_key)
        ttl = options.access_token_seconds

        def issue(player_id: str, session_id: str) -> AccessToken:
            now = time.time()
            token = issuer.issue(
                player_id, "player", ttl_seconds=ttl, now=now, session_id=session_id
            )
            return AccessToken(token, now + ttl)

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
        self.matchmaker = Matchmaker(self.repository, self.tables, chips=options.chips)
        #: The push platforms this lobby sends through (``lobby.push.providers``).
        self.push = push or PushProviders()

    async def revoked_logins(self, since_us: int) -> lobby_pb2.ListRevokedLoginsResponse:
        """The logins revoked at or after ``since_us`` that may still have live access tokens
        (``ListRevokedLogins``; the lobby's own follower reads it too, without gRPC)."""
        now = now_us()
        # Older revocations than the last access token's lifetime (and leeway) matter no more.
        lasts_us = int((self.options.access_token_seconds + TOKEN_LEEWAY_SECONDS) * US)
        since_us = max(since_us, now - lasts_us)
        rows = await self.repository.accounts.revoked_since(since_us, REVOKED_PAGE + 1)
        return revoked_logins_answer(rows, lasts_us=lasts_us, as_of_us=now, page=REVOKED_PAGE)

    async def prepare(self) -> None:
        """Migrate the database to the service's latest schema; calls are served from then."""
        await self.database.migrate_to_serve(NAME)

    async def _answer(
        self, request: object, context: Context, work: Callable[[], Awaitable[_R]]
    ) -> _R:
        language = request_language(request, context.invocation_metadata())
        try:
            with self.database.serving(NotReady, log=log):
                return await work()
        except OkeyError as error:
            await abort_call(context, error, language)
        except PeerError as error:
            await forward(context, error)

    @contextlib.asynccontextmanager
    async def _counted(
        self, action: str, subject: str, limit: RateLimit, request_id: str
    ) -> AsyncIterator[None]:
        """The block, its request counted against ``limit`` first (RATE_LIMITED over it), once
        per request id: a retry after UNAVAILABLE, or of a call whose answer was lost, is not
        counted again. A refusal (any other error) makes the request id count again if it is
        sent again: a login refused for its password, sent again with another, is a new guess."""
        retry_after = await self.repository.limits.hit(action, subject, limit, request_id)
        if retry_after is not None:
            RATE_LIMITED.labels(action).inc()
            raise Limited("RATE_LIMITED", retry_after_ms=retry_after, action=action)
        try:
            yield
        except (OkeyError, PeerError) as error:
            if not isinstance(error, NotReady):
                await self.repository.limits.uncount(action, subject, request_id)
            raise

    def _client(self, context: Context) -> str:
        """The calling client's address as a rate limit's subject (``limits.address_subject``),
        through the trusted proxies only (``platform.addresses``)."""
        return address_subject(grpc_client_address(context, self.options.trusted_proxies))

    async def _caller(self) -> PlayerRow:
        """The player whose token the call carries."""
        claims = require_claims()
        if claims.kind != "player":
            raise Denied("PLAYER_TOKEN_REQUIRED")
        player = await self.repository.accounts.player(claims.subject)
        if player is None:
            raise Missing("PLAYER_NOT_FOUND", player_id=claims.subject)
        return player


async def abort_call(context: Context, error: OkeyError, language: Language) -> NoReturn:
    """End the call with the lobby's status for ``error``."""
    status = rpc_status.to_status(status_of(error, language))
    await context.abort(status.code, status.details, status.trailing_metadata)
    raise AssertionError("abort returned")


__all__ = ["NAME", "LobbyCalls", "Options", "abort_call", "log"]
