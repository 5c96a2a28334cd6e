"""The lobby's storage: players, refresh tokens, stored answers, rate limits, the table
directory, the quick-match queue and tournaments (``models``), on SQLite or PostgreSQL.

Every change is one transaction (``Database.transaction``: retried on a transient failure).
Where two lobby pods could race:

- a login, refresh or logout locks the row it reads (the device's player, the refresh token) with
  ``FOR UPDATE`` before it looks up a stored answer, so a retry racing its own first attempt waits
  and then finds the answer, and a refresh token is rotated exactly once;
- other stored answers are claimed first (an ``INSERT ... ON CONFLICT DO NOTHING`` of the request
  key: a second transaction with the same key waits for the first and then reads its answer);
- uniqueness (a username, a device, one waiting ticket per player, one registration) is the
  database's unique constraints, and a violation is answered as what already exists;
- rate limits are one upsert that counts and returns the count (``hit``), in the transaction that
  marks the request id counted, so a retry is not counted again;
- tournament writes are fenced by the tournament's lease (``_fence``): a pod that lost the lease
  changes nothing.

On SQLite (one process in local mode) every write transaction begins with ``BEGIN IMMEDIATE``,
so writers simply take turns.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp
from okey.v1 import common_pb2, lobby_pb2, table_pb2
from sqlalchemy import and_, case, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby import tournaments as bracket
from okey101.lobby.credentials import RefreshToken, digest, new_id, new_secret, same_digest
from okey101.lobby.errors import Conflict, Denied, Exists, Invalid, Missing, Unauthorized
from okey101.lobby.idempotency import fingerprint, request_key, seal, unseal
from okey101.lobby.models import (
    hostings,
    players,
    queue,
    rate_limits,
    refresh_tokens,
    requests,
    tables,
    tournament_leases,
    tournament_players,
    tournament_tables,
    tournaments,
)
from okey101.platform.database import (
    Database,
    dialect_insert,
    insert_ignoring_conflicts,
    row_mapping,
)

_M = TypeVar("_M", bound=Message)
_T = TypeVar("_T")

US: Final = 1_000_000
GUEST: Final = "guest"
ACCOUNT: Final = "account"
WAITING: Final = "waiting"
MATCHED: Final = "matched"
CANCELLED: Final = "cancelled"
REGISTERING: Final = "registering"
RUNNING: Final = "running"
FINISHED: Final = "finished"
#: Tournament tables: planned (seating fixed), started (at the table service), finished.
PLANNED: Final = "planned"
STARTED: Final = "started"

TOURNAMENT_STATES: Final = {
    REGISTERING: lobby_pb2.TOURNAMENT_STATE_REGISTERING,
    RUNNING: lobby_pb2.TOURNAMENT_STATE_RUNNING,
    FINISHED: lobby_pb2.TOURNAMENT_STATE_FINISHED,
    "cancelled": lobby_pb2.TOURNAMENT_STATE_CANCELLED,
}
TICKET_STATES: Final = {
    WAITING: lobby_pb2.QUICK_MATCH_STATE_WAITING,
    MATCHED: lobby_pb2.QUICK_MATCH_STATE_MATCHED,
    CANCELLED: lobby_pb2.QUICK_MATCH_STATE_CANCELLED,
}
PRESETS: Final = {
    "oyna": common_pb2.RULE_PRESET_OYNA,
    "boombala": common_pb2.RULE_PRESET_BOOMBALA,
    "north_sultan": common_pb2.RULE_PRESET_NORTH_SULTAN,
}
#: How long stored answers, spent refresh tokens and rate-limit windows are kept.
ANSWERS_KEPT_US: Final = 48 * 3600 * US
TOKENS_KEPT_AFTER_EXPIRY_US: Final = 24 * 3600 * US
WINDOWS_KEPT_US: Final = 3600 * US


class LeaseLost(Exception):
    """This pod no longer holds the tournament's lease: it stops driving it."""


def now_us() -> int:
    return int(time.time() * US)


def timestamp(us: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromMicroseconds(us)
    return stamp


def preset_name(value: int) -> str:
    for name, number in PRESETS.items():
        if number == value:
            return name
    return "oyna"


# --------------------------------------------------------------------------------------------
# Stored answers


@dataclass(frozen=True)
class Once:
    """One state-changing call: where its answer is stored and what it must match."""

    method: str
    caller: str
    request_id: str
    print_: bytes

    @classmethod
    def of(cls, method: str, caller: str, request: Message, *extra: str) -> Once:
        request_id = str(getattr(request, "request_id", ""))
        return cls(method, caller, request_id, fingerprint(request, extra))

    @property
    def key(self) -> str:
        return request_key(self.method, self.caller, self.request_id)


async def recall(session: AsyncConnection, once: Once, kind: type[_M]) -> _M | None:
    """The stored answer to ``once``, claiming its key if there is none (module docstring);
    REQUEST_ID_REUSED if it answered a different request."""
    dialect = session.dialect.name
    claimed = await session.execute(
        insert_ignoring_conflicts(requests, dialect).values(
            request_key=once.key, method=once.method, payload=None, created_us=now_us()
        )
    )
    if claimed.rowcount == 1:
        return None
    payload = (
        await session.execute(select(requests.c.payload).where(requests.c.request_key == once.key))
    ).scalar_one_or_none()
    if payload is None:
        return None
    try:
        print_, answer = unseal(once.method, once.caller, once.request_id, payload)
    except ValueError:
        raise Invalid("REQUEST_ID_REUSED") from None
    if print_ != once.print_:
        raise Invalid("REQUEST_ID_REUSED")
    return kind.FromString(answer)


async def remember(session: AsyncConnection, once: Once, answer: Message) -> None:
    """Store ``answer`` under ``once``'s key (claimed by ``recall`` in this transaction)."""
    payload = seal(
        once.method, once.caller, once.request_id, once.print_, answer.SerializeToString()
    )
    await session.execute(
        update(requests).where(requests.c.request_key == once.key).values(payload=payload)
    )


# --------------------------------------------------------------------------------------------
# Tokens


@dataclass(frozen=True)
class AccessToken:
    token: str
    expires_at: float


#: Signs a player's access token: ``issue(player_id)``.
AccessIssuer = Callable[[str], AccessToken]


@dataclass(frozen=True)
class Issued:
    """What a transaction that logs someone in hands back (the answer is built from it)."""

    player: lobby_pb2.Player
    tokens: lobby_pb2.AuthTokens


@dataclass(frozen=True)
class PlayerRow:
    player_id: str
    kind: str
    display_name: str
    username: str | None
    password_hash: str | None
    device_id: str | None
    guest_secret_hash: str | None
    created_us: int

    def message(self, *, own: bool) -> lobby_pb2.Player:
        return lobby_pb2.Player(
            player_id=self.player_id,
            display_name=self.display_name,
            kind=lobby_pb2.PLAYER_KIND_ACCOUNT
            if self.kind == ACCOUNT
            else lobby_pb2.PLAYER_KIND_GUEST,
            username=(self.username or "") if own else "",
            create_time=timestamp(self.created_us),
        )


def _player_row(row: Any) -> PlayerRow:
    data = row_mapping(row)
    return PlayerRow(**{name: data[name] for name in PlayerRow.__dataclass_fields__})


@dataclass(frozen=True)
class RateLimit:
    """At most ``limit`` calls per ``window_seconds`` (a fixed window)."""

    limit: int
    window_seconds: float


@dataclass(frozen=True)
class Ticket:
    ticket_id: str
    player_id: str
    display_name: str
    preset: str
    state: str
    enqueue_us: int
    bots_fill_us: int
    table_id: str | None
    seat: int | None

    def message(self, players_waiting: int) -> lobby_pb2.QuickMatchTicket:
        ticket = lobby_pb2.QuickMatchTicket(
            ticket_id=self.ticket_id,
            preset=PRESETS.get(self.preset, common_pb2.RULE_PRESET_OYNA),
            state=TICKET_STATES[self.state],
            enqueue_time=timestamp(self.enqueue_us),
            table_id=self.table_id or "",
            seat=self.seat or 0,
        )
        if self.state == WAITING:
            ticket.bots_fill_time.CopyFrom(timestamp(self.bots_fill_us))
            ticket.players_waiting = players_waiting
        return ticket


def _ticket(row: Any) -> Ticket:
    data = row_mapping(row)
    return Ticket(**{name: data[name] for name in Ticket.__dataclass_fields__})


@dataclass(frozen=True)
class TournamentRow:
    tournament_id: str
    name: str
    rules: bytes
    preset: str
    max_players: int
    advance_per_table: int
    planned_rounds: int
    bot_level: int
    state: str
    current_round: int
    winner_player_id: str
    creator_player_id: str
    registered: int
    created_us: int
    started_us: int | None
    finished_us: int | None


def _tournament(row: Any) -> TournamentRow:
    data = row_mapping(row)
    return TournamentRow(**{name: data[name] for name in TournamentRow.__dataclass_fields__})


@dataclass(frozen=True)
class RoundTable:
    tournament_id: str
    round: int
    table_index: int
    seats: list[str]
    advance: int
    table_id: str | None
    match_id: str | None
    state: str


def _round_table(row: Any) -> RoundTable:
    data = row_mapping(row)
    return RoundTable(
        tournament_id=data["tournament_id"],
        round=data["round"],
        table_index=data["table_index"],
        seats=list(json.loads(data["seats"])),
        advance=data["advance"],
        table_id=data["table_id"],
        match_id=data["match_id"],
        state=data["state"],
    )


# --------------------------------------------------------------------------------------------


class LobbyRepository:
    """The lobby's data (module docstring). ``issue_access`` signs access tokens."""

    def __init__(
        self,
        database: Database,
        issue_access: AccessIssuer,
        *,
        refresh_seconds: float,
        lease_seconds: float,
    ) -> None:
        self.database = database
        self._issue_access = issue_access
        self._refresh_us = int(refresh_seconds * US)
        self._lease_us = int(lease_seconds * US)

    async def _write(self, work: Callable[[AsyncConnection], Awaitable[_T]]) -> _T:
        return await self.database.transaction(work)

    def _insert(self, table: Any) -> Any:
        return dialect_insert(table, self.database.dialect)

    # ----------------------------------------------------------------------------------------
    # Rate limits

    async def hit(self, action: str, subject: str, limit: RateLimit, request_id: str) -> int | None:
        """Count one request of ``action`` by ``subject``; None if within ``limit`` (or if the
        request id was counted already: a retry is not counted again), else the milliseconds
        until the window ends. A request id counted is marked in ``lobby_requests`` (a row with
        no answer, ``method`` ``limit:<action>``) in the same transaction; a request refused
        by the limit is not marked, so once the window has passed it counts as new."""
        now = now_us()
        window = int(limit.window_seconds * US)
        start = now - now % window
        bucket = hashlib.sha256(f"{action}\0{subject}".encode()).hexdigest()
        marker = request_key(f"limit:{action}", subject, request_id)

        async def work(session: AsyncConnection) -> int | None:
            marked = await session.execute(
                insert_ignoring_conflicts(requests, self.database.dialect).values(
                    request_key=marker, method=f"limit:{action}", payload=None, created_us=now
                )
            )
            if marked.rowcount == 0:
                return None  # counted before: a retry
            statement = (
                self._insert(rate_limits)
                .values(bucket=bucket, window_start_us=start, action=action, count=1)
                .on_conflict_do_update(
                    index_elements=["bucket", "window_start_us"],
                    set_={"count": rate_limits.c.count + 1},
                )
                .returning(rate_limits.c.count)
            )
            count = int((await session.execute(statement)).scalar_one())
            if count <= limit.limit:
                return None
            await session.execute(delete(requests).where(requests.c.request_key == marker))
            return max(1, (start + window - now) // 1000)

        return await self._write(work)

    async def uncount(self, action: str, subject: str, request_id: str) -> None:
        """Forget that ``hit`` counted the request id: sent again, it counts again."""
        marker = request_key(f"limit:{action}", subject, request_id)

        async def work(session: AsyncConnection) -> None:
            await session.execute(delete(requests).where(requests.c.request_key == marker))

        await self._write(work)

    # ----------------------------------------------------------------------------------------
    # Players and tokens

    async def _issue(
        self, session: AsyncConnection, player_id: str, family_id: str | None = None
    ) -> lobby_pb2.AuthTokens:
        now = now_us()
        refresh = RefreshToken.new()
        expires = now + self._refresh_us
        await session.execute(
            refresh_tokens.insert().values(
                token_id=refresh.token_id,
                family_id=family_id or new_id("fam"),
                player_id=player_id,
                secret_hash=digest(refresh.secret),
                created_us=now,
                expires_us=expires,
            )
        )
        access = self._issue_access(player_id)
        return lobby_pb2.AuthTokens(
            access_token=access.token,
            access_token_expire_time=timestamp(int(access.expires_at * US)),
            refresh_token=str(refresh),
            refresh_token_expire_time=timestamp(expires),
        )

    async def _player_for_update(
        self, session: AsyncConnection, column: Any, value: str
    ) -> PlayerRow | None:
        row = (
            await session.execute(select(players).where(column == value).with_for_update())
        ).one_or_none()
        return None if row is None else _player_row(row)

    async def player(self, player_id: str) -> PlayerRow | None:
        async with self.database.read() as session:
            row = (
                await session.execute(select(players).where(players.c.player_id == player_id))
            ).one_or_none()
        return None if row is None else _player_row(row)

    async def player_by_username(self, username: str) -> PlayerRow | None:
        async with self.database.read() as session:
            row = (
                await session.execute(select(players).where(players.c.username == username))
            ).one_or_none()
        return None if row is None else _player_row(row)

    async def login_guest(
        self, request: lobby_pb2.LoginGuestRequest
    ) -> lobby_pb2.LoginGuestResponse:
        """The device's guest, made on its first login (module docstring, ``service``)."""
        once = Once.of("LoginGuest", f"device:{request.device_id}", request)

        async def work(session: AsyncConnection) -> lobby_pb2.LoginGuestResponse:
            guest = await self._player_for_update(session, players.c.device_id, request.device_id)
            if guest is None:
                stored = await recall(session, once, lobby_pb2.LoginGuestResponse)
                if stored is not None:
                    return stored
                if request.guest_secret:
                    raise Unauthorized("BAD_GUEST_SECRET")
                if not request.display_name:
                    raise Invalid("FIELD_REQUIRED", field="display_name")
                secret = new_secret()
                now = now_us()
                row = PlayerRow(
                    player_id=new_id("p"),
                    kind=GUEST,
                    display_name=request.display_name,
                    username=None,
                    password_hash=None,
                    device_id=request.device_id,
                    guest_secret_hash=digest(secret),
                    created_us=now,
                )
                await session.execute(players.insert().values(**row.__dict__))
                answer = lobby_pb2.LoginGuestResponse(
                    player=row.message(own=True),
                    tokens=await self._issue(session, row.player_id),
                    guest_secret=secret,
                )
                await remember(session, once, answer)
                return answer
            if guest.kind != GUEST:
                raise Conflict("GUEST_UPGRADED", username=guest.username or "")
            if not request.guest_secret:
                stored = await recall(session, once, lobby_pb2.LoginGuestResponse)
                if stored is not None:  # a retry of the device's first login
                    return stored
                raise Unauthorized("GUEST_SECRET_REQUIRED")
            if not same_digest(request.guest_secret, guest.guest_secret_hash):
                raise Unauthorized("BAD_GUEST_SECRET")
            stored = await recall(session, once, lobby_pb2.LoginGuestResponse)
            if stored is not None:
                return stored
            name = request.display_name or guest.display_name
            if name != guest.display_name:
                await session.execute(
                    update(players)
                    .where(players.c.player_id == guest.player_id)
                    .values(display_name=name)
                )
            profile = guest.message(own=True)
            profile.display_name = name
            answer = lobby_pb2.LoginGuestResponse(
                player=profile, tokens=await self._issue(session, guest.player_id)
            )
            await remember(session, once, answer)
            return answer

        try:
            return await self._write(work)
        except IntegrityError:
            # Two first logins of one device raced: the other made the guest.
            return await self._write(work)

    async def register_account(
        self,
        request: lobby_pb2.RegisterAccountRequest,
        username: str,
        password_hash: str | None,
        guest_id: str | None,
    ) -> lobby_pb2.RegisterAccountResponse:
        """A new account, or the guest ``guest_id`` turned into one. ``password_hash`` is None
        when the username exists and the password matched it (a retry): only a stored answer
        can then be returned."""
        caller = f"player:{guest_id}" if guest_id else f"username:{username}"
        once = Once.of("RegisterAccount", caller, request, username)

        async def work(session: AsyncConnection) -> lobby_pb2.RegisterAccountResponse:
            stored = await recall(session, once, lobby_pb2.RegisterAccountResponse)
            if stored is not None:
                return stored
            if password_hash is None:
                raise Exists("USERNAME_TAKEN", username=username)
            now = now_us()
            if guest_id is not None:
                guest = await self._player_for_update(session, players.c.player_id, guest_id)
                if guest is None:
                    raise Missing("PLAYER_NOT_FOUND", player_id=guest_id)
                if guest.kind != GUEST:
                    raise Conflict("ALREADY_ACCOUNT")
                name = request.display_name or guest.display_name
                await session.execute(
                    update(players)
                    .where(players.c.player_id == guest_id)
                    .values(
                        kind=ACCOUNT,
                        username=username,
                        password_hash=password_hash,
                        display_name=name,
                        upgraded_us=now,
                    )
                )
                player_id, created = guest_id, guest.created_us
            else:
                name = request.display_name or username
                player_id, created = new_id("p"), now
                await session.execute(
                    players.insert().values(
                        player_id=player_id,
                        kind=ACCOUNT,
                        display_name=name,
                        username=username,
                        password_hash=password_hash,
                        created_us=now,
                    )
                )
            profile = PlayerRow(
                player_id, ACCOUNT, name, username, None, None, None, created
            ).message(own=True)
            answer = lobby_pb2.RegisterAccountResponse(
                player=profile, tokens=await self._issue(session, player_id)
            )
            await remember(session, once, answer)
            return answer

        try:
            return await self._write(work)
        except IntegrityError:
            raise Exists("USERNAME_TAKEN", username=username) from None

    async def login_account(
        self, request: lobby_pb2.LoginAccountRequest, account: PlayerRow, new_hash: str | None
    ) -> lobby_pb2.LoginAccountResponse:
        """Tokens for ``account``, whose password the caller has checked (``new_hash``: the
        password re-hashed with current parameters)."""
        once = Once.of("LoginAccount", f"username:{account.username}", request)

        async def work(session: AsyncConnection) -> lobby_pb2.LoginAccountResponse:
            stored = await recall(session, once, lobby_pb2.LoginAccountResponse)
            if stored is not None:
                return stored
            if new_hash is not None:
                await session.execute(
                    update(players)
                    .where(players.c.player_id == account.player_id)
                    .values(password_hash=new_hash)
                )
            answer = lobby_pb2.LoginAccountResponse(
                player=account.message(own=True),
                tokens=await self._issue(session, account.player_id),
            )
            await remember(session, once, answer)
            return answer

        return await self._write(work)

    async def _refresh_row(self, session: AsyncConnection, token: str) -> Any:
        parsed = RefreshToken.parse(token)
        if parsed is None:
            raise Unauthorized("REFRESH_TOKEN_INVALID")
        row = (
            await session.execute(
                select(refresh_tokens)
                .where(refresh_tokens.c.token_id == parsed.token_id)
                .with_for_update()
            )
        ).one_or_none()
        if row is None or not same_digest(parsed.secret, row.secret_hash):
            raise Unauthorized("REFRESH_TOKEN_INVALID")
        return row

    async def _revoke(self, session: AsyncConnection, *where: Any) -> int:
        result = await session.execute(
            update(refresh_tokens)
            .where(
                refresh_tokens.c.revoked_us.is_(None), refresh_tokens.c.used_us.is_(None), *where
            )
            .values(revoked_us=now_us())
        )
        return int(result.rowcount)

    async def refresh(
        self, request: lobby_pb2.RefreshTokensRequest
    ) -> lobby_pb2.RefreshTokensResponse:
        """Rotate a refresh token; a used one revokes its family (REFRESH_TOKEN_REUSED)."""
        reused = False

        async def work(session: AsyncConnection) -> lobby_pb2.RefreshTokensResponse | None:
            nonlocal reused
            row = await self._refresh_row(session, request.refresh_token)
            once = Once.of("RefreshTokens", f"refresh:{row.token_id}", request)
            stored = await recall(session, once, lobby_pb2.RefreshTokensResponse)
            if stored is not None:
                return stored
            if row.revoked_us is not None:
                raise Unauthorized("REFRESH_TOKEN_REVOKED")
            if row.used_us is not None:
                # Someone holds a spent token: the thief or the owner; revoke the whole login.
                await self._revoke(session, refresh_tokens.c.family_id == row.family_id)
                reused = True
                return None
            if row.expires_us <= now_us():
                raise Unauthorized("REFRESH_TOKEN_EXPIRED")
            await session.execute(
                update(refresh_tokens)
                .where(refresh_tokens.c.token_id == row.token_id)
                .values(used_us=now_us())
            )
            answer = lobby_pb2.RefreshTokensResponse(
                tokens=await self._issue(session, row.player_id, row.family_id)
            )
            await remember(session, once, answer)
            return answer

        answer = await self._write(work)
        if reused or answer is None:
            raise Unauthorized("REFRESH_TOKEN_REUSED")
        return answer

    async def logout(self, request: lobby_pb2.LogoutRequest) -> lobby_pb2.LogoutResponse:
        """Revoke the token's login (its family), or every token of its player."""

        async def work(session: AsyncConnection) -> lobby_pb2.LogoutResponse:
            row = await self._refresh_row(session, request.refresh_token)
            once = Once.of("Logout", f"refresh:{row.token_id}", request)
            stored = await recall(session, once, lobby_pb2.LogoutResponse)
            if stored is not None:
                return stored
            if request.all_sessions:
                revoked = await self._revoke(session, refresh_tokens.c.player_id == row.player_id)
            else:
                revoked = await self._revoke(session, refresh_tokens.c.family_id == row.family_id)
            answer = lobby_pb2.LogoutResponse(revoked=revoked)
            await remember(session, once, answer)
            return answer

        return await self._write(work)

    # ----------------------------------------------------------------------------------------
    # Stored answers of calls that change other services

    async def stored(self, once: Once, kind: type[_M]) -> _M | None:
        """The answer stored for ``once`` without claiming it (None if there is none)."""
        async with self.database.read() as session:
            payload = (
                await session.execute(
                    select(requests.c.payload).where(requests.c.request_key == once.key)
                )
            ).scalar_one_or_none()
        if payload is None:
            return None
        try:
            print_, answer = unseal(once.method, once.caller, once.request_id, payload)
        except ValueError:
            raise Invalid("REQUEST_ID_REUSED") from None
        if print_ != once.print_:
            raise Invalid("REQUEST_ID_REUSED")
        return kind.FromString(answer)

    async def store(self, once: Once, answer: Message, *, hosting: str | None = None) -> None:
        """Keep ``answer`` for ``once`` (a retry gets it; the first stored answer wins), and
        end the ``hosting`` it answers in the same transaction."""

        async def work(session: AsyncConnection) -> None:
            if await recall(session, once, type(answer)) is None:
                await remember(session, once, answer)
            if hosting is not None:
                await session.execute(
                    delete(hostings).where(hostings.c.create_request_id == hosting)
                )

        await self._write(work)

    # ----------------------------------------------------------------------------------------
    # HostTable calls not yet done

    async def begin_hosting(
        self, create: table_pb2.CreateTableRequest, sit: table_pb2.SitRequest
    ) -> None:
        """Keep a HostTable's two table service requests until it is done (``end_hosting``)."""

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                insert_ignoring_conflicts(hostings, self.database.dialect).values(
                    create_request_id=create.request_id,
                    create_request=create.SerializeToString(),
                    sit_request=sit.SerializeToString(),
                    created_us=now_us(),
                )
            )

        await self._write(work)

    async def end_hosting(self, create_request_id: str) -> None:
        async def work(session: AsyncConnection) -> None:
            await session.execute(
                delete(hostings).where(hostings.c.create_request_id == create_request_id)
            )

        await self._write(work)

    async def unfinished_hostings(
        self, begun_before_us: int, limit: int
    ) -> list[tuple[table_pb2.CreateTableRequest, table_pb2.SitRequest]]:
        """HostTable calls begun before ``begun_before_us`` and not yet done, oldest first."""
        async with self.database.read() as session:
            rows = (
                await session.execute(
                    select(hostings.c.create_request, hostings.c.sit_request)
                    .where(hostings.c.created_us < begun_before_us)
                    .order_by(hostings.c.created_us)
                    .limit(limit)
                )
            ).all()
        return [
            (
                table_pb2.CreateTableRequest.FromString(bytes(row.create_request)),
                table_pb2.SitRequest.FromString(bytes(row.sit_request)),
            )
            for row in rows
        ]

    # ----------------------------------------------------------------------------------------
    # The table directory

    async def record_table(
        self,
        table: common_pb2.Table,
        *,
        source: str,
        host_player_id: str = "",
        session: AsyncConnection | None = None,
    ) -> None:
        """Remember a table the lobby made (its invite code, where it came from)."""
        values = {
            "table_id": table.table_id,
            "invite_code": table.invite_code or None,
            "visibility": "private"
            if table.visibility == common_pb2.TABLE_VISIBILITY_PRIVATE
            else "public",
            "host_player_id": host_player_id,
            "source": source,
            "preset": preset_name(table.rules.preset),
            "created_us": now_us(),
        }

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                insert_ignoring_conflicts(tables, self.database.dialect).values(**values)
            )

        if session is not None:
            await work(session)
        else:
            await self._write(work)

    async def table_by_invite(self, invite_code: str) -> str | None:
        async with self.database.read() as session:
            found = (
                await session.execute(
                    select(tables.c.table_id).where(tables.c.invite_code == invite_code)
                )
            ).scalar_one_or_none()
        return None if found is None else str(found)

    # ----------------------------------------------------------------------------------------
    # Quick match

    async def join_queue(
        self,
        request: lobby_pb2.JoinQuickMatchRequest,
        player: PlayerRow,
        preset: str,
        wait_seconds: float,
    ) -> lobby_pb2.JoinQuickMatchResponse:
        """The player's waiting ticket (a new one in ``preset``'s queue if none is held)."""
        once = Once.of("JoinQuickMatch", f"player:{player.player_id}", request)

        async def work(session: AsyncConnection) -> lobby_pb2.JoinQuickMatchResponse:
            stored = await recall(session, once, lobby_pb2.JoinQuickMatchResponse)
            if stored is not None:
                return stored
            held = (
                await session.execute(
                    select(queue).where(
                        queue.c.player_id == player.player_id, queue.c.state == WAITING
                    )
                )
            ).one_or_none()
            if held is not None:
                ticket = _ticket(held)
            else:
                now = now_us()
                ticket = Ticket(
                    ticket_id=new_id("q"),
                    player_id=player.player_id,
                    display_name=player.display_name,
                    preset=preset,
                    state=WAITING,
                    enqueue_us=now,
                    bots_fill_us=now + int(wait_seconds * US),
                    table_id=None,
                    seat=None,
                )
                await session.execute(queue.insert().values(**ticket.__dict__, updated_us=now))
            waiting = await self._waiting(session, ticket.preset)
            answer = lobby_pb2.JoinQuickMatchResponse(ticket=ticket.message(waiting))
            await remember(session, once, answer)
            return answer

        try:
            return await self._write(work)
        except IntegrityError:
            # The same player joined twice at once: the other call made the ticket.
            return await self._write(work)

    async def _waiting(self, session: AsyncConnection, preset: str) -> int:
        return int(
            (
                await session.execute(
                    select(func.count())
                    .select_from(queue)
                    .where(queue.c.preset == preset, queue.c.state == WAITING)
                )
            ).scalar_one()
        )

    async def ticket(self, ticket_id: str, player_id: str) -> lobby_pb2.QuickMatchTicket:
        async with self.database.read() as session:
            row = (
                await session.execute(select(queue).where(queue.c.ticket_id == ticket_id))
            ).one_or_none()
            if row is None:
                raise Missing("TICKET_NOT_FOUND", ticket_id=ticket_id)
            ticket = _ticket(row)
            if ticket.player_id != player_id:
                raise Denied("NOT_YOUR_TICKET", ticket_id=ticket_id)
            waiting = await self._waiting(session, ticket.preset)
        return ticket.message(waiting)

    async def leave_queue(self, ticket_id: str, player_id: str) -> lobby_pb2.QuickMatchTicket:
        """Cancel a waiting ticket (a matched one stays matched)."""

        async def work(session: AsyncConnection) -> lobby_pb2.QuickMatchTicket:
            row = (
                await session.execute(
                    select(queue).where(queue.c.ticket_id == ticket_id).with_for_update()
                )
            ).one_or_none()
            if row is None:
                raise Missing("TICKET_NOT_FOUND", ticket_id=ticket_id)
            ticket = _ticket(row)
            if ticket.player_id != player_id:
                raise Denied("NOT_YOUR_TICKET", ticket_id=ticket_id)
            if ticket.state == WAITING:
                await session.execute(
                    update(queue)
                    .where(queue.c.ticket_id == ticket_id)
                    .values(state=CANCELLED, updated_us=now_us())
                )
                ticket = Ticket(**{**ticket.__dict__, "state": CANCELLED})
            return ticket.message(await self._waiting(session, ticket.preset))

        return await self._write(work)

    async def ready_presets(self) -> list[str]:
        """Presets whose queue has a group ready: four waiting, or one past its bots-fill time."""
        now = now_us()
        async with self.database.read() as session:
            found = await session.execute(
                select(queue.c.preset, func.count(), func.min(queue.c.bots_fill_us))
                .where(queue.c.state == WAITING)
                .group_by(queue.c.preset)
            )
            return [
                str(preset)
                for preset, count, fill in found
                if count >= bracket.SEATS or fill <= now
            ]

    async def claim_group(self, session: AsyncConnection, preset: str) -> list[Ticket]:
        """The oldest waiting tickets of ``preset`` (four at most), locked for this
        transaction; tickets another pod holds are skipped (``FOR UPDATE SKIP LOCKED``)."""
        found = await session.execute(
            select(queue)
            .where(queue.c.preset == preset, queue.c.state == WAITING)
            .order_by(queue.c.enqueue_us, queue.c.ticket_id)
            .limit(bracket.SEATS)
            .with_for_update(skip_locked=True)
        )
        return [_ticket(row) for row in found]

    async def mark_matched(
        self, session: AsyncConnection, seated: Sequence[tuple[Ticket, int]], table_id: str
    ) -> None:
        now = now_us()
        for ticket, seat in seated:
            await session.execute(
                update(queue)
                .where(queue.c.ticket_id == ticket.ticket_id)
                .values(state=MATCHED, table_id=table_id, seat=seat, updated_us=now)
            )

    # ----------------------------------------------------------------------------------------
    # Tournaments

    async def create_tournament(
        self, request: lobby_pb2.CreateTournamentRequest, caller: str, creator: str, preset: str
    ) -> str:
        once = Once.of("CreateTournament", caller, request)

        async def work(session: AsyncConnection) -> str:
            stored = await recall(session, once, lobby_pb2.CreateTournamentResponse)
            if stored is not None:
                return stored.tournament.tournament_id
            tournament_id = new_id("t")
            await session.execute(
                tournaments.insert().values(
                    tournament_id=tournament_id,
                    name=request.name,
                    rules=request.rules.SerializeToString(deterministic=True),
                    preset=preset,
                    max_players=request.max_players,
                    advance_per_table=request.advance_per_table or 1,
                    planned_rounds=request.rounds,
                    bot_level=int(request.bot_level),
                    state=REGISTERING,
                    creator_player_id=creator,
                    created_us=now_us(),
                )
            )
            answer = lobby_pb2.CreateTournamentResponse(
                tournament=lobby_pb2.Tournament(tournament_id=tournament_id)
            )
            await remember(session, once, answer)
            return tournament_id

        return await self._write(work)

    async def _tournament_for_update(self, session: AsyncConnection, tournament_id: str) -> Any:
        row = (
            await session.execute(
                select(tournaments)
                .where(tournaments.c.tournament_id == tournament_id)
                .with_for_update()
            )
        ).one_or_none()
        if row is None:
            raise Missing("TOURNAMENT_NOT_FOUND", tournament_id=tournament_id)
        return _tournament(row)

    async def register(self, tournament_id: str, player: PlayerRow) -> None:
        """Register ``player`` (again: nothing changes)."""

        async def work(session: AsyncConnection) -> None:
            tournament = await self._tournament_for_update(session, tournament_id)
            known = (
                await session.execute(
                    select(tournament_players.c.player_id).where(
                        tournament_players.c.tournament_id == tournament_id,
                        tournament_players.c.player_id == player.player_id,
                    )
                )
            ).one_or_none()
            if known is not None:
                return
            if tournament.state != REGISTERING:
                raise Conflict(
                    "TOURNAMENT_NOT_REGISTERING",
                    tournament_id=tournament_id,
                    state=tournament.state,
                )
            if tournament.registered >= tournament.max_players:
                raise Conflict(
                    "TOURNAMENT_FULL",
                    tournament_id=tournament_id,
                    max_players=tournament.max_players,
                )
            await session.execute(
                tournament_players.insert().values(
                    tournament_id=tournament_id,
                    player_id=player.player_id,
                    display_name=player.display_name,
                    registration=tournament.registered + 1,
                )
            )
            await session.execute(
                update(tournaments)
                .where(tournaments.c.tournament_id == tournament_id)
                .values(registered=tournament.registered + 1)
            )

        await self._write(work)

    async def start_tournament(
        self,
        tournament_id: str,
        caller: str | None,
        minimum_players: int,
        once: Once,
        kind: type[_M],
        respond: Callable[[TournamentRow], _M],
    ) -> _M:
        """Start registration's end: round 1 is planned by whichever pod takes the lease.
        ``caller`` is the player starting it (None: a service). The answer (``respond`` of the
        tournament as started) is stored with the start, in its transaction, so a retry gets
        it even if the first call's answer was lost."""

        async def work(session: AsyncConnection) -> _M:
            tournament = await self._tournament_for_update(session, tournament_id)
            stored = await recall(session, once, kind)
            if stored is not None:
                return stored
            if caller is not None and caller != tournament.creator_player_id:
                raise Denied("NOT_TOURNAMENT_CREATOR", tournament_id=tournament_id)
            if tournament.state != REGISTERING:
                raise Conflict(
                    "TOURNAMENT_NOT_REGISTERING",
                    tournament_id=tournament_id,
                    state=tournament.state,
                )
            if tournament.registered < minimum_players:
                raise Conflict(
                    "TOURNAMENT_TOO_FEW_PLAYERS",
                    tournament_id=tournament_id,
                    minimum=minimum_players,
                    registered=tournament.registered,
                )
            await session.execute(
                update(tournaments)
                .where(tournaments.c.tournament_id == tournament_id)
                .values(state=RUNNING, current_round=1, started_us=now_us())
            )
            await session.execute(
                insert_ignoring_conflicts(tournament_leases, self.database.dialect).values(
                    tournament_id=tournament_id, holder="", expires_us=0, generation=0
                )
            )
            answer = respond(await self._tournament_for_update(session, tournament_id))
            await remember(session, once, answer)
            return answer

        return await self._write(work)

    async def tournament(self, tournament_id: str) -> TournamentRow:
        async with self.database.read() as session:
            row = (
                await session.execute(
                    select(tournaments).where(tournaments.c.tournament_id == tournament_id)
                )
            ).one_or_none()
        if row is None:
            raise Missing("TOURNAMENT_NOT_FOUND", tournament_id=tournament_id)
        return _tournament(row)

    async def tournament_page(
        self, states: Sequence[str], after: tuple[int, str] | None, size: int
    ) -> tuple[list[TournamentRow], tuple[int, str] | None]:
        """Tournaments newest first, after the key ``(created_us, id)``."""
        query = select(tournaments)
        if states:
            query = query.where(tournaments.c.state.in_(states))
        if after is not None:
            created, tournament_id = after
            query = query.where(
                or_(
                    tournaments.c.created_us < created,
                    and_(
                        tournaments.c.created_us == created,
                        tournaments.c.tournament_id < tournament_id,
                    ),
                )
            )
        query = query.order_by(
            tournaments.c.created_us.desc(), tournaments.c.tournament_id.desc()
        ).limit(size + 1)
        async with self.database.read() as session:
            rows = [_tournament(row) for row in await session.execute(query)]
        if len(rows) <= size:
            return rows, None
        last = rows[size - 1]
        return rows[:size], (last.created_us, last.tournament_id)

    async def round_tables(self, tournament_id: str) -> list[RoundTable]:
        async with self.database.read() as session:
            found = await session.execute(
                select(tournament_tables)
                .where(tournament_tables.c.tournament_id == tournament_id)
                .order_by(tournament_tables.c.round, tournament_tables.c.table_index)
            )
            return [_round_table(row) for row in found]

    async def entries(self, tournament_id: str) -> list[tuple[bracket.Entry, Any]]:
        """Every registered player: their standings entry and their row."""
        async with self.database.read() as session:
            found = await session.execute(
                select(tournament_players).where(
                    tournament_players.c.tournament_id == tournament_id
                )
            )
            rows = list(found)
        return [(_entry(row), row) for row in rows]

    # Driving (each write fenced by the lease) -----------------------------------------------

    async def running_tournaments(self) -> list[str]:
        async with self.database.read() as session:
            found = await session.execute(
                select(tournaments.c.tournament_id).where(tournaments.c.state == RUNNING)
            )
            return [str(value) for value in found.scalars()]

    async def acquire_lease(self, tournament_id: str, holder: str) -> bool:
        """Take or renew the lease on ``tournament_id``: True if ``holder`` has it now."""
        now = now_us()

        async def work(session: AsyncConnection) -> bool:
            result = await session.execute(
                update(tournament_leases)
                .where(
                    tournament_leases.c.tournament_id == tournament_id,
                    or_(
                        tournament_leases.c.holder == holder,
                        tournament_leases.c.expires_us < now,
                    ),
                )
                .values(
                    holder=holder,
                    expires_us=now + self._lease_us,
                    generation=tournament_leases.c.generation
                    + case((tournament_leases.c.holder == holder, 0), else_=1),
                )
            )
            return bool(result.rowcount == 1)

        return await self._write(work)

    async def release_leases(self, holder: str) -> None:
        """Give up every lease ``holder`` has (a graceful stop): another pod takes over now."""

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                update(tournament_leases)
                .where(tournament_leases.c.holder == holder)
                .values(expires_us=0)
            )

        await self._write(work)

    async def lease(self, tournament_id: str) -> tuple[str, int, int] | None:
        """(holder, expiry, generation) of a tournament's lease."""
        async with self.database.read() as session:
            row = (
                await session.execute(
                    select(tournament_leases).where(
                        tournament_leases.c.tournament_id == tournament_id
                    )
                )
            ).one_or_none()
        return None if row is None else (row.holder, row.expires_us, row.generation)

    async def _fence(self, session: AsyncConnection, tournament_id: str, holder: str) -> None:
        result = await session.execute(
            update(tournament_leases)
            .where(
                tournament_leases.c.tournament_id == tournament_id,
                tournament_leases.c.holder == holder,
                tournament_leases.c.expires_us >= now_us(),
            )
            .values(expires_us=now_us() + self._lease_us)
        )
        if result.rowcount != 1:
            raise LeaseLost(tournament_id)

    async def plan_round(self, tournament_id: str, round_number: int, holder: str) -> None:
        """Seat round ``round_number``: its entrants (not eliminated), best first."""

        async def work(session: AsyncConnection) -> None:
            await self._fence(session, tournament_id, holder)
            tournament = await self._tournament_for_update(session, tournament_id)
            if tournament.state != RUNNING or tournament.current_round != round_number:
                return
            exists = (
                await session.execute(
                    select(func.count())
                    .select_from(tournament_tables)
                    .where(
                        tournament_tables.c.tournament_id == tournament_id,
                        tournament_tables.c.round == round_number,
                    )
                )
            ).scalar_one()
            if exists:
                return
            rows = list(
                await session.execute(
                    select(tournament_players).where(
                        tournament_players.c.tournament_id == tournament_id,
                        tournament_players.c.eliminated == False,  # noqa: E712
                    )
                )
            )
            entries = sorted((_entry(row) for row in rows), key=bracket.entry_key)
            if round_number == 1:
                entries.sort(key=lambda entry: entry.registration)
            entrants = [entry.player_id for entry in entries]
            last = bracket.is_last_round(round_number, len(entrants), tournament.planned_rounds)
            for index, seats in enumerate(bracket.seat_round(entrants)):
                seated = sum(1 for player in seats if player != bracket.BOT)
                await session.execute(
                    tournament_tables.insert().values(
                        tournament_id=tournament_id,
                        round=round_number,
                        table_index=index,
                        seats=json.dumps(seats),
                        advance=bracket.advance_count(seated, tournament.advance_per_table, last),
                        state=PLANNED,
                    )
                )
            await session.execute(
                update(tournament_players)
                .where(
                    tournament_players.c.tournament_id == tournament_id,
                    tournament_players.c.player_id.in_(entrants),
                )
                .values(round_reached=round_number)
            )

        await self._write(work)

    async def table_started(
        self, table: RoundTable, table_id: str, match_id: str, holder: str
    ) -> None:
        async def work(session: AsyncConnection) -> None:
            await self._fence(session, table.tournament_id, holder)
            await session.execute(
                update(tournament_tables)
                .where(*_table_key(table), tournament_tables.c.state == PLANNED)
                .values(table_id=table_id, match_id=match_id, state=STARTED)
            )
            players_seated = [player for player in table.seats if player != bracket.BOT]
            await session.execute(
                update(tournament_players)
                .where(
                    tournament_players.c.tournament_id == table.tournament_id,
                    tournament_players.c.player_id.in_(players_seated),
                )
                .values(table_id=table_id)
            )

        await self._write(work)

    async def table_finished(
        self, table: RoundTable, lines: Sequence[bracket.MatchLine], holder: str
    ) -> None:
        """Record a finished table's result: each player's line of the match."""

        async def work(session: AsyncConnection) -> None:
            await self._fence(session, table.tournament_id, holder)
            result = await session.execute(
                update(tournament_tables)
                .where(*_table_key(table), tournament_tables.c.state == STARTED)
                .values(
                    state=FINISHED,
                    result=json.dumps([line.__dict__ for line in lines], sort_keys=True),
                )
            )
            if result.rowcount != 1:
                return  # recorded already
            for line in lines:
                await session.execute(
                    update(tournament_players)
                    .where(
                        tournament_players.c.tournament_id == table.tournament_id,
                        tournament_players.c.player_id == line.player_id,
                    )
                    .values(
                        won_last=line.winner,
                        match_total=line.total,
                        hands_finished=line.hands_finished,
                        penalty_points=line.penalty_points,
                        matches_won=tournament_players.c.matches_won + (1 if line.winner else 0),
                    )
                )

        await self._write(work)

    async def complete_round(self, tournament_id: str, round_number: int, holder: str) -> bool:
        """Once every table of the round has finished: advance its best, or end the tournament
        with its winner. True if the tournament has finished."""

        async def work(session: AsyncConnection) -> bool:
            await self._fence(session, tournament_id, holder)
            tournament = await self._tournament_for_update(session, tournament_id)
            if tournament.state != RUNNING or tournament.current_round != round_number:
                return bool(tournament.state == FINISHED)
            found = await session.execute(
                select(tournament_tables).where(
                    tournament_tables.c.tournament_id == tournament_id,
                    tournament_tables.c.round == round_number,
                )
            )
            rows = list(found)
            if not rows or any(row.state != FINISHED for row in rows):
                return False
            advancing: list[str] = []
            entrants: list[str] = []
            for row in rows:
                lines = [bracket.MatchLine(**line) for line in json.loads(row.result or "[]")]
                entrants += [player for player in json.loads(row.seats) if player]
                advancing += bracket.advancing(lines, row.advance)
            last = bracket.is_last_round(round_number, len(entrants), tournament.planned_rounds)
            # In the last round nobody advances; everyone but the winner is out (below).
            out = [] if last else [player for player in entrants if player not in set(advancing)]
            if out:
                await session.execute(
                    update(tournament_players)
                    .where(
                        tournament_players.c.tournament_id == tournament_id,
                        tournament_players.c.player_id.in_(out),
                    )
                    .values(eliminated=True)
                )
            if not last:
                await session.execute(
                    update(tournaments)
                    .where(tournaments.c.tournament_id == tournament_id)
                    .values(current_round=round_number + 1)
                )
                return False
            everyone = await session.execute(
                select(tournament_players).where(
                    tournament_players.c.tournament_id == tournament_id
                )
            )
            ranked = bracket.standings((_entry(row) for row in everyone), started=True)
            for rank, entry in ranked:
                await session.execute(
                    update(tournament_players)
                    .where(
                        tournament_players.c.tournament_id == tournament_id,
                        tournament_players.c.player_id == entry.player_id,
                    )
                    .values(final_rank=rank, eliminated=rank != 1)
                )
            await session.execute(
                update(tournaments)
                .where(tournaments.c.tournament_id == tournament_id)
                .values(
                    state=FINISHED,
                    winner_player_id=ranked[0][1].player_id if ranked else "",
                    finished_us=now_us(),
                )
            )
            await session.execute(
                delete(tournament_leases).where(tournament_leases.c.tournament_id == tournament_id)
            )
            return True

        return await self._write(work)

    # ----------------------------------------------------------------------------------------
    # Housekeeping

    async def prune(self) -> None:
        """Forget stored answers (and HostTable calls never done) past their keeping time,
        long-expired refresh tokens and old rate-limit windows."""
        now = now_us()

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                delete(requests).where(requests.c.created_us < now - ANSWERS_KEPT_US)
            )
            await session.execute(
                delete(hostings).where(hostings.c.created_us < now - ANSWERS_KEPT_US)
            )
            await session.execute(
                delete(refresh_tokens).where(
                    refresh_tokens.c.expires_us < now - TOKENS_KEPT_AFTER_EXPIRY_US
                )
            )
            await session.execute(
                delete(rate_limits).where(rate_limits.c.window_start_us < now - WINDOWS_KEPT_US)
            )

        await self._write(work)


def _table_key(table: RoundTable) -> tuple[Any, ...]:
    return (
        tournament_tables.c.tournament_id == table.tournament_id,
        tournament_tables.c.round == table.round,
        tournament_tables.c.table_index == table.table_index,
    )


def _entry(row: Any) -> bracket.Entry:
    return bracket.Entry(
        player_id=row.player_id,
        registration=row.registration,
        round_reached=row.round_reached,
        eliminated=bool(row.eliminated),
        won_last=bool(row.won_last),
        match_total=row.match_total,
        hands_finished=row.hands_finished,
        penalty_points=row.penalty_points,
    )


__all__ = [
    "ACCOUNT",
    "GUEST",
    "PRESETS",
    "AccessToken",
    "LeaseLost",
    "LobbyRepository",
    "Once",
    "PlayerRow",
    "RateLimit",
    "RoundTable",
    "Ticket",
    "TournamentRow",
    "now_us",
    "preset_name",
    "recall",
    "remember",
    "timestamp",
]
