"""A player's (or a spectator's) connection to the public API: log in, find a table, play.

Everything here goes through the generated stubs of ``okey.v1`` and the public services only
(LobbyService and TableService for play, RulesService for hints, ScoringService for score
sheets), as any frontend would; the terminal client, ``okey101 simulate``, the end-to-end
tests and docs/integration.md's example all use it.

- ``GuestStore`` keeps a device id and the guest secret LobbyService gives on a device's first
  login in the var dir, so the next start logs in as the same player.
- ``Tokens`` holds the access and refresh tokens and refreshes the access token (RefreshTokens)
  a minute before it expires; every call's metadata comes from it.
- ``Player`` logs in (LoginGuest), quick-matches (JoinQuickMatch, seated by the player's own
  stream, WatchPlayer) or hosts a table with bots (HostTable, for a chosen match
  length, which quick match does not offer), either for a stake, and opens a ``TableSession``;
  it reads the player's chips (GetWallet, ListWalletEntries, ListStakeLevels).
- ``TableSession`` is one seat (or a spectator) at one table: the resumable event stream, Act
  with a request id and the view's state_version, the seat's view, the rule hints and the score
  sheet.

State-changing calls carry a fresh request id, repeated unchanged on every retry of the same
change (common.proto, IDEMPOTENCY): a retry after UNAVAILABLE or DEADLINE_EXCEEDED is safe, and
a rate limit's refusal (RESOURCE_EXHAUSTED ``RATE_LIMITED``) is waited out for its
``retry_after_ms`` and sent again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

import grpc
import grpc.aio
from okey.v1 import (
    common_pb2,
    lobby_pb2,
    lobby_pb2_grpc,
    rules_pb2,
    rules_pb2_grpc,
    scoring_pb2,
    scoring_pb2_grpc,
    table_pb2,
    table_pb2_grpc,
)

from okey101.client.errors import RETRYABLE, Rejection, rate_limit_wait
from okey101.client.resume import Backoff, Reconnecting, ResumableWatch
from okey101.platform.config import SERVICE_PORTS

PRESETS: Final[dict[str, common_pb2.RulePreset]] = {
    "oyna": common_pb2.RULE_PRESET_OYNA,
    "boombala": common_pb2.RULE_PRESET_BOOMBALA,
    "north_sultan": common_pb2.RULE_PRESET_NORTH_SULTAN,
}
PRESET_NAMES: Final[dict[int, str]] = {int(value): name for name, value in PRESETS.items()}
#: How long one unary call may take before it is retried (or given up).
CALL_TIMEOUT: Final = 10.0
#: Attempts of one idempotent call on UNAVAILABLE / DEADLINE_EXCEEDED: with the back-off,
#: about 16 s, long enough for a restarted service (a new pod, a process) to come back.
ATTEMPTS: Final = 8
#: Refresh the access token this many seconds before it expires.
REFRESH_MARGIN: Final = 60.0

Reply = TypeVar("Reply")
#: The metadata key a table's calls carry its id in, for routing (docs/integration.md).
TABLE_ID_HEADER: Final = "x-okey-table-id"


def new_request_id() -> str:
    """A fresh request id (32 hex digits: within common.proto's 1-64 of [A-Za-z0-9._:-])."""
    return uuid.uuid4().hex


def default_address(service: str) -> str:
    return f"127.0.0.1:{SERVICE_PORTS[service][0]}"


@dataclass(frozen=True)
class Endpoints:
    """Where the public services listen (the defaults of docs/architecture.md on one machine)."""

    lobby: str = field(default_factory=lambda: default_address("lobby"))
    table: str = field(default_factory=lambda: default_address("table"))
    scoring: str = field(default_factory=lambda: default_address("scoring"))
    rules: str = field(default_factory=lambda: default_address("rules"))


async def call(
    method: Callable[..., Awaitable[Reply]],
    request: Any,
    metadata: Callable[[], Awaitable[tuple[tuple[str, str], ...]]],
    *,
    attempts: int = ATTEMPTS,
    timeout: float = CALL_TIMEOUT,
) -> Reply:
    """One unary call, retried unchanged on UNAVAILABLE and DEADLINE_EXCEEDED (after a
    back-off) and on a rate limit's refusal (after the ``retry_after_ms`` it asks for); the
    request carries its request_id, if it has one, so a retried change applies once and a
    rate limit does not count it again."""
    for attempt in range(1, attempts + 1):
        try:
            return await method(request, metadata=await metadata(), timeout=timeout)
        except grpc.aio.AioRpcError as error:
            wait = rate_limit_wait(error)
            if (wait is None and error.code() not in RETRYABLE) or attempt == attempts:
                raise
            await asyncio.sleep(Backoff().delay(attempt) if wait is None else wait)
    raise AssertionError("unreachable")  # pragma: no cover


# --------------------------------------------------------------------------------------------
# The guest's identity on this device


@dataclass
class GuestIdentity:
    """What LobbyService needs to log this device's guest in again, and the table the guest
    last sat at (so a client started again during a match goes back to it)."""

    device_id: str
    guest_secret: str = ""
    display_name: str = ""
    player_id: str = ""
    table_id: str = ""
    seat: int = -1


class GuestStore:
    """The guest identity under ``var_dir/client/``, one file per lobby address (a fresh
    local stack and a shared one are different lobbies with different guests)."""

    def __init__(self, var_dir: Path, lobby: str) -> None:
        safe = "".join(ch if ch.isalnum() else "_" for ch in lobby)
        self.path = var_dir / "client" / f"guest-{safe}.json"

    def load(self) -> GuestIdentity | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or not isinstance(data.get("device_id"), str):
            return None
        text = {
            key: str(data.get(key, ""))
            for key in ("device_id", "guest_secret", "display_name", "player_id", "table_id")
        }
        seat = data.get("seat", -1)
        return GuestIdentity(**text, seat=seat if isinstance(seat, int) else -1)

    def remember_table(self, seating: Seating | None) -> None:
        """Keep (or, with None, forget) the table the guest sits at."""
        identity = self.load()
        if identity is None:
            return
        identity.table_id = seating.table_id if seating is not None else ""
        identity.seat = seating.seat if seating is not None else -1
        self.save(identity)

    def last_table(self) -> Seating | None:
        identity = self.load()
        if identity is None or not identity.table_id or not 0 <= identity.seat < 4:
            return None
        return Seating(identity.table_id, identity.seat)

    def save(self, identity: GuestIdentity) -> None:
        """Written to a temporary file then renamed, readable by the owner only (it holds the
        guest secret)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(asdict(identity), indent=2), encoding="utf-8")
        os.chmod(temporary, 0o600)
        temporary.replace(self.path)


# --------------------------------------------------------------------------------------------
# Tokens


class Tokens:
    """A login's tokens; ``metadata()`` refreshes the access token shortly before it expires."""

    def __init__(
        self,
        lobby: lobby_pb2_grpc.LobbyServiceStub,
        tokens: lobby_pb2.AuthTokens,
        locale: str,
        relogin: Callable[[], Awaitable[lobby_pb2.AuthTokens]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._lobby = lobby
        self._tokens = tokens
        self._locale = locale
        self._relogin = relogin
        self._clock = clock
        self._lock = asyncio.Lock()

    @property
    def access_token(self) -> str:
        return self._tokens.access_token

    async def metadata(self) -> tuple[tuple[str, str], ...]:
        expires = self._tokens.access_token_expire_time.ToSeconds()
        if expires and self._clock() > expires - REFRESH_MARGIN:
            async with self._lock:  # one refresh for every call that found the token old
                expires = self._tokens.access_token_expire_time.ToSeconds()
                if self._clock() > expires - REFRESH_MARGIN:
                    await self._refresh()
        return (("authorization", f"Bearer {self._tokens.access_token}"),)

    async def _refresh(self) -> None:
        request = lobby_pb2.RefreshTokensRequest(
            request_id=new_request_id(),
            refresh_token=self._tokens.refresh_token,
            locale=self._locale,
        )
        try:
            answer = await call(self._lobby.RefreshTokens, request, _no_metadata)
            self._tokens = answer.tokens
        except grpc.aio.AioRpcError as error:
            # A refresh token that expired or was revoked: log in again, if we can.
            if error.code() != grpc.StatusCode.UNAUTHENTICATED or self._relogin is None:
                raise
            self._tokens = await self._relogin()


async def _no_metadata() -> tuple[tuple[str, str], ...]:
    return ()


# --------------------------------------------------------------------------------------------
# The player


@dataclass(frozen=True)
class Seating:
    """Where the player sits: a table and a seat."""

    table_id: str
    seat: int


class Player:
    """A guest logged in through LobbyService, with channels to the public services."""

    def __init__(self, endpoints: Endpoints, locale: str = "en-GB") -> None:
        self.endpoints = endpoints
        self.locale = locale
        self._channels = {
            name: grpc.aio.insecure_channel(getattr(endpoints, name))
            for name in ("lobby", "table", "scoring", "rules")
        }
        self.lobby = lobby_pb2_grpc.LobbyServiceStub(self._channels["lobby"])
        self.table = table_pb2_grpc.TableServiceStub(self._channels["table"])
        self.scoring = scoring_pb2_grpc.ScoringServiceStub(self._channels["scoring"])
        self.rules = rules_pb2_grpc.RulesServiceStub(self._channels["rules"])
        self.tokens: Tokens | None = None
        self.profile = lobby_pb2.Player()

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()

    async def __aenter__(self) -> Player:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def metadata(self) -> tuple[tuple[str, str], ...]:
        if self.tokens is None:
            raise RuntimeError("log in first")
        return await self.tokens.metadata()

    # Logging in ------------------------------------------------------------------------------

    async def login_guest(
        self, store: GuestStore | None, display_name: str = ""
    ) -> lobby_pb2.Player:
        """LoginGuest as this device's guest (a new one the first time, kept in ``store``).

        A device the lobby does not know with our secret (the stack's database was reset) is
        logged in as a new guest rather than refused for ever.
        """
        identity = store.load() if store is not None else None
        if identity is None:
            identity = GuestIdentity(device_id=f"okey101-cli-{uuid.uuid4().hex}")
        try:
            answer = await self._login(identity, display_name)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAUTHENTICATED or not identity.guest_secret:
                raise
            identity = GuestIdentity(device_id=f"okey101-cli-{uuid.uuid4().hex}")
            answer = await self._login(identity, display_name)
        if answer.guest_secret:
            identity.guest_secret = answer.guest_secret
        identity.player_id = answer.player.player_id
        identity.display_name = answer.player.display_name
        if store is not None:
            store.save(identity)
        saved = identity

        async def relogin() -> lobby_pb2.AuthTokens:
            again = await self._login(saved, "")
            return again.tokens

        self.tokens = Tokens(self.lobby, answer.tokens, self.locale, relogin)
        self.profile = answer.player
        return answer.player

    async def _login(
        self, identity: GuestIdentity, display_name: str
    ) -> lobby_pb2.LoginGuestResponse:
        request = lobby_pb2.LoginGuestRequest(
            request_id=new_request_id(),
            device_id=identity.device_id,
            display_name=display_name or identity.display_name or _default_name(),
            guest_secret=identity.guest_secret,
            locale=self.locale,
        )
        answer: lobby_pb2.LoginGuestResponse = await call(
            self.lobby.LoginGuest, request, _no_metadata
        )
        return answer

    # Finding a table -------------------------------------------------------------------------

    async def quick_match(
        self,
        preset: str,
        on_wait: Callable[[lobby_pb2.QuickMatchTicket], None] | None = None,
        *,
        stake: int = 0,
        timeout: float = 600.0,
    ) -> Seating:
        """JoinQuickMatch, seated by the player's own stream (WatchPlayer), not by polling: the
        stream is open (its snapshot read) before the ticket is asked for, so the
        QUICK_MATCH_SEATED that follows is never missed (a player waits in one queue at a
        time: it is this ticket's). ``stake``: the chips each seat plays for (0: none); a
        balance that does not cover it is FAILED_PRECONDITION INSUFFICIENT_CHIPS."""
        opened = asyncio.Event()
        seated = asyncio.ensure_future(
            self.next_player_event(lobby_pb2.PLAYER_EVENT_KIND_QUICK_MATCH_SEATED, opened)
        )
        try:
            async with asyncio.timeout(timeout):
                await _first_of(opened.wait(), seated)
                request = lobby_pb2.JoinQuickMatchRequest(
                    request_id=new_request_id(),
                    preset=PRESETS[preset],
                    locale=self.locale,
                    stake=stake,
                )
                ticket = (await call(self.lobby.JoinQuickMatch, request, self.metadata)).ticket
                if ticket.state == lobby_pb2.QUICK_MATCH_STATE_MATCHED:
                    return Seating(ticket.table_id, ticket.seat)
                if ticket.state != lobby_pb2.QUICK_MATCH_STATE_WAITING:
                    raise QuickMatchCancelled(ticket.ticket_id)
                if on_wait is not None:
                    on_wait(ticket)
                event = await seated
                return Seating(event.table_id, event.seat)
        except TimeoutError:
            raise TimeoutError(f"no table within {timeout:.0f} s") from None
        finally:
            seated.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await seated

    async def next_player_event(self, kind: int, opened: asyncio.Event) -> lobby_pb2.PlayerEvent:
        """The first event of ``kind`` on the player's own stream after it opened (``opened``
        is set once its snapshot is read). A stream that breaks is opened again after the last
        sequence seen; one whose events expired starts again from a snapshot."""
        after: int | None = None  # None: start with a snapshot
        backoff = Backoff()
        attempt = 0
        while True:
            stream = self.lobby.WatchPlayer(
                lobby_pb2.WatchPlayerRequest(
                    after_sequence=after or 0,
                    start_with_snapshot=after is None,
                    locale=self.locale,
                ),
                metadata=await self.metadata(),
            )
            try:
                async for message in stream:
                    attempt = 0
                    if message.HasField("snapshot"):
                        after = message.snapshot.as_of_sequence
                        opened.set()
                    else:
                        event: lobby_pb2.PlayerEvent = message.event
                        after = event.sequence
                        if event.kind == kind:
                            return event
            except grpc.aio.AioRpcError as error:
                if error.code() == grpc.StatusCode.OUT_OF_RANGE:
                    after = None
                elif error.code() not in RETRYABLE:
                    raise
            finally:
                stream.cancel()
            attempt += 1
            await asyncio.sleep(backoff.delay(attempt))

    async def host_with_bots(
        self,
        preset: str,
        *,
        hands: int | None = None,
        bot_level: common_pb2.BotLevel = common_pb2.BOT_LEVEL_NORMAL,
        seat: int = 0,
        turn_seconds: int | None = None,
        visibility: common_pb2.TableVisibility = common_pb2.TABLE_VISIBILITY_PRIVATE,
        stake: int = 0,
    ) -> Seating:
        """HostTable: a table (private unless said otherwise) with bots in the other three
        seats, started at once. ``hands`` makes the match that many hands long (a custom rule
        set); ``stake`` the chips each seat plays for (0: none; the host's is held as they
        sit)."""
        rules = common_pb2.RuleSet(preset=PRESETS[preset])
        if hands is not None:
            rules.match_end = common_pb2.MATCH_END_FIXED_HANDS
            rules.match_hands = hands
        if turn_seconds is not None:
            rules.turn_seconds = turn_seconds
        request = lobby_pb2.HostTableRequest(
            request_id=new_request_id(),
            rules=rules,
            visibility=visibility,
            host_seat=seat,
            bots=[
                lobby_pb2.BotSeat(seat=other, level=bot_level)
                for other in range(4)
                if other != seat
            ],
            start_when_full=True,
            locale=self.locale,
            stake=stake,
        )
        answer = await call(self.lobby.HostTable, request, self.metadata)
        return Seating(answer.table.table_id, answer.seat)

    # Chips ---------------------------------------------------------------------------------------

    async def wallet(self) -> lobby_pb2.GetWalletResponse:
        """The player's balance, the chips held in play and the daily grant (GetWallet)."""
        request = lobby_pb2.GetWalletRequest(locale=self.locale)
        answer: lobby_pb2.GetWalletResponse = await call(
            self.lobby.GetWallet, request, self.metadata
        )
        return answer

    async def wallet_entries(
        self, page_size: int = 50, page_token: str = ""
    ) -> lobby_pb2.ListWalletEntriesResponse:
        """A page of the player's wallet entries, newest first (ListWalletEntries)."""
        request = lobby_pb2.ListWalletEntriesRequest(
            page_size=page_size, page_token=page_token, locale=self.locale
        )
        answer: lobby_pb2.ListWalletEntriesResponse = await call(
            self.lobby.ListWalletEntries, request, self.metadata
        )
        return answer

    async def stake_levels(self) -> lobby_pb2.ListStakeLevelsResponse:
        """The stakes a table may be played for and the table fee (ListStakeLevels)."""
        request = lobby_pb2.ListStakeLevelsRequest(locale=self.locale)
        answer: lobby_pb2.ListStakeLevelsResponse = await call(
            self.lobby.ListStakeLevels, request, self.metadata
        )
        return answer

    def session(self, table_id: str, seat: int | None) -> TableSession:
        return TableSession(self, table_id, seat)

    async def rejoin(self, seating: Seating, preset: str | None = None) -> bool:
        """Go back to ``seating`` if its match is still on with this player in that seat (and,
        given ``preset``, of that preset): Sit there again (a bot kept the seat while the
        player was away; sitting where one already sits changes nothing). False otherwise."""
        session = self.session(seating.table_id, seating.seat)
        try:
            table = await session.get_table()
        except grpc.aio.AioRpcError as error:
            if error.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.PERMISSION_DENIED):
                return False
            raise
        if table.state != common_pb2.TABLE_STATE_PLAYING or seating.seat >= len(table.seats):
            return False
        if table.seats[seating.seat].player_id != self.profile.player_id:
            return False
        if preset is not None and table.rules.preset != PRESETS[preset]:
            return False
        await session.sit_again()
        return True


async def _first_of(waiting: Awaitable[Any], failing: asyncio.Future[Any]) -> None:
    """Until ``waiting`` is done; raises what ``failing`` raised if it ends first."""
    task = asyncio.ensure_future(waiting)
    try:
        await asyncio.wait((task, failing), return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            failing.result()  # it ended first: its error (or an answer before the stream opened)
            raise RuntimeError("the player's stream ended before it opened")
    finally:
        task.cancel()


class QuickMatchCancelled(Exception):
    """The quick-match ticket was cancelled before a table was found."""


def _default_name() -> str:
    user = os.environ.get("USER") or os.environ.get("USERNAME") or "guest"
    return user[:32]


# --------------------------------------------------------------------------------------------
# One seat at one table


class TableSession:
    """A seat at a table (``seat`` None: a spectator), through TableService and the hints of
    RulesService."""

    def __init__(self, player: Player, table_id: str, seat: int | None) -> None:
        self.player = player
        self.table_id = table_id
        self.seat = seat

    @property
    def locale(self) -> str:
        return self.player.locale

    async def table_metadata(self) -> tuple[tuple[str, str], ...]:
        """The player's token and the table's id (``x-okey-table-id``: a deployment sends each
        table's calls to the pod that keeps it live, docs/integration.md)."""
        return (*await self.player.metadata(), (TABLE_ID_HEADER, self.table_id))

    async def close(self) -> None:
        """Close the player's channels (the session is the last user of its player)."""
        await self.player.close()

    def watch(
        self,
        *,
        after_sequence: int = 0,
        start_with_view: bool = True,
        on_reconnect: Callable[[Reconnecting], None] | None = None,
        backoff: Backoff | None = None,
    ) -> ResumableWatch:
        """The table's stream from ``after_sequence`` (or the current view), resumed from the
        last sequence seen whenever the connection drops."""

        async def open_stream(
            after: int, with_view: bool
        ) -> AsyncIterator[table_pb2.WatchTableResponse]:
            request = table_pb2.WatchTableRequest(
                table_id=self.table_id,
                after_sequence=after,
                start_with_view=with_view,
                locale=self.locale,
            )
            if self.seat is not None:
                request.seat = self.seat
            stream = self.player.table.WatchTable(request, metadata=await self.table_metadata())
            try:
                async for item in stream:
                    yield item
            finally:
                stream.cancel()

        return ResumableWatch(
            open_stream,
            after_sequence=after_sequence,
            start_with_view=start_with_view,
            on_reconnect=on_reconnect,
            backoff=backoff,
        )

    async def act(
        self, actions: Sequence[common_pb2.Action], state_version: int
    ) -> table_pb2.ActResponse:
        """Act: the moves against ``state_version`` (the view they were decided on)."""
        if self.seat is None:
            raise RuntimeError("a spectator cannot act")
        request = table_pb2.ActRequest(
            request_id=new_request_id(),
            table_id=self.table_id,
            seat=self.seat,
            actions=list(actions),
            expected_state_version=state_version,
            locale=self.locale,
        )
        answer: table_pb2.ActResponse = await call(
            self.player.table.Act, request, self.table_metadata
        )
        return answer

    async def seat_view(self, min_sequence: int = 0) -> common_pb2.SeatView:
        """The seat's view, at least as new as ``min_sequence`` (the last event seen: the table
        process asked may not have heard of it yet)."""
        request = table_pb2.GetSeatViewRequest(
            table_id=self.table_id, locale=self.locale, min_sequence=min_sequence
        )
        if self.seat is not None:
            request.seat = self.seat
        answer = await call(self.player.table.GetSeatView, request, self.table_metadata)
        view: common_pb2.SeatView = answer.view
        return view

    async def get_table(self) -> common_pb2.Table:
        request = table_pb2.GetTableRequest(table_id=self.table_id, locale=self.locale)
        answer = await call(self.player.table.GetTable, request, self.table_metadata)
        table: common_pb2.Table = answer.table
        return table

    async def wallet(self) -> lobby_pb2.GetWalletResponse:
        """The player's chips (the table's title shows the balance)."""
        return await self.player.wallet()

    async def wallet_entries(self, page_token: str = "") -> lobby_pb2.ListWalletEntriesResponse:
        """A page of the player's wallet history, newest first."""
        return await self.player.wallet_entries(page_token=page_token)

    async def sit_again(self) -> None:
        """Sit at our own seat again during a match (a bot kept it while we were away)."""
        request = table_pb2.SitRequest(
            request_id=new_request_id(), table_id=self.table_id, locale=self.locale
        )
        if self.seat is not None:
            request.seat = self.seat
        await call(self.player.table.Sit, request, self.table_metadata)

    # Hints from RulesService ------------------------------------------------------------------

    async def validate_melds(
        self, view: common_pb2.SeatView, groups: Sequence[common_pb2.TileGroup]
    ) -> rules_pb2.ValidateMeldsResponse:
        request = rules_pb2.ValidateMeldsRequest(
            rules=view.rules,
            indicator_tile_id=view.indicator.id,
            groups=list(groups),
            locale=self.locale,
        )
        answer: rules_pb2.ValidateMeldsResponse = await call(
            self.player.rules.ValidateMelds, request, self.player.metadata
        )
        return answer

    async def validate_opening(
        self, view: common_pb2.SeatView, groups: Sequence[common_pb2.TileGroup]
    ) -> rules_pb2.ValidateOpeningResponse:
        request = rules_pb2.ValidateOpeningRequest(
            rules=view.rules,
            indicator_tile_id=view.indicator.id,
            rack_tile_ids=[item.tile.id for item in view.rack],
            groups=list(groups),
            locale=self.locale,
        )
        if view.turn_progress.HasField("taken"):
            request.taken_tile_id = view.turn_progress.taken.id
        answer: rules_pb2.ValidateOpeningResponse = await call(
            self.player.rules.ValidateOpening, request, self.player.metadata
        )
        return answer

    async def best_opening(self, view: common_pb2.SeatView) -> rules_pb2.BestOpeningResponse:
        request = rules_pb2.BestOpeningRequest(
            rules=view.rules,
            indicator_tile_id=view.indicator.id,
            rack_tile_ids=[item.tile.id for item in view.rack],
            locale=self.locale,
        )
        if view.turn_progress.HasField("taken"):
            request.required_tile_id = view.turn_progress.taken.id
        answer: rules_pb2.BestOpeningResponse = await call(
            self.player.rules.BestOpening, request, self.player.metadata
        )
        return answer

    # The score sheet ---------------------------------------------------------------------------

    async def score_sheet(self, match_id: str) -> scoring_pb2.ScoreSheet:
        request = scoring_pb2.GetScoreSheetRequest(match_id=match_id, locale=self.locale)
        answer = await call(self.player.scoring.GetScoreSheet, request, self.player.metadata)
        sheet: scoring_pb2.ScoreSheet = answer.sheet
        return sheet

    async def score_sheet_through(
        self, match_id: str, hand_number: int, *, wait: float = 3.0, ended: bool = False
    ) -> scoring_pb2.ScoreSheet | None:
        """The score sheet once it holds ``hand_number`` (0: as it is now). The table hands
        results to scoring through an outbox, so a row may arrive a moment after its hand
        ends. With ``ended``, also until the match's end is recorded (winners set). None if
        it does not within ``wait`` seconds or scoring cannot be reached."""
        deadline = time.monotonic() + wait
        while True:
            try:
                sheet = await self.score_sheet(match_id)
            except grpc.aio.AioRpcError as error:
                rejection = Rejection.of(error)
                if rejection.code not in (grpc.StatusCode.NOT_FOUND, *RETRYABLE):
                    return None
            else:
                has_row = hand_number == 0 or any(r.hand_number >= hand_number for r in sheet.rows)
                if has_row and (sheet.ended or not ended):
                    return sheet
            if time.monotonic() > deadline:
                return None
            await asyncio.sleep(0.2)
