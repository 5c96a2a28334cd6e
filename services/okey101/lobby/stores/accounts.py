"""Players and their credentials: guests, accounts, and the refresh tokens of their logins
(``lobby_players``, ``lobby_refresh_tokens``).

Every login, registration, refresh and logout is one transaction that stores its answer
(``answers``). A login, refresh or logout locks the row it reads (the device's player, the
refresh token) with ``FOR UPDATE`` *before* it looks up a stored answer, so a retry racing its
own first attempt waits and then finds the answer, and a refresh token is rotated exactly once.
A username and a device are unique constraints: a violation is answered as what already exists.
The answer is built by the caller's ``respond`` from what the change made (``lobby.records.Login``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final, TypeVar

from google.protobuf.message import Message
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.credentials import RefreshToken, digest, new_id, new_secret, same_digest
from okey101.lobby.errors import Conflict, Exists, Invalid, Missing, Unauthorized
from okey101.lobby.models import players, refresh_tokens
from okey101.lobby.records import (
    ACCOUNT,
    GUEST,
    US,
    AccessIssuer,
    Login,
    PlayerRow,
    Tokens,
    now_us,
)
from okey101.lobby.stores.answers import ANSWERS
from okey101.platform.database import Database, row_mapping
from okey101.platform.idempotency import CallKey, Once

_M = TypeVar("_M", bound=Message)

#: How long a refresh token's row is kept after it expired.
TOKENS_KEPT_AFTER_EXPIRY_US: Final = 24 * 3600 * US


def _player_row(row: Any) -> PlayerRow:
    data = row_mapping(row)
    player = PlayerRow(**{name: data[name] for name in PlayerRow.__dataclass_fields__})
    # Names stored before issue #32 were checked without their ends but kept with them (a
    # trailing newline, say), which the table now refuses; without them they pass its check.
    name = player.display_name.strip()
    return player if name == player.display_name else dataclasses.replace(player, display_name=name)


class Accounts:
    """Players, credentials and refresh tokens (module docstring). ``issue_access`` signs
    access tokens; refresh tokens live ``refresh_seconds``."""

    def __init__(
        self, database: Database, issue_access: AccessIssuer, *, refresh_seconds: float
    ) -> None:
        self.database = database
        self._issue_access = issue_access
        self._refresh_us = int(refresh_seconds * US)

    async def _issue(
        self, session: AsyncConnection, player_id: str, family_id: str | None = None
    ) -> Tokens:
        now = now_us()
        refresh = RefreshToken.new()
        expires = now + self._refresh_us
        family_id = family_id or new_id("fam")
        await session.execute(
            refresh_tokens.insert().values(
                token_id=refresh.token_id,
                family_id=family_id,
                player_id=player_id,
                secret_hash=digest(refresh.secret),
                created_us=now,
                expires_us=expires,
            )
        )
        access = self._issue_access(player_id, family_id)
        return Tokens(
            access_token=access.token,
            access_expires_us=int(access.expires_at * US),
            refresh_token=str(refresh),
            refresh_expires_us=expires,
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

    async def player_by_device(self, device_id: str) -> PlayerRow | None:
        async with self.database.read() as session:
            row = (
                await session.execute(select(players).where(players.c.device_id == device_id))
            ).one_or_none()
        return None if row is None else _player_row(row)

    async def player_by_username(self, username: str) -> PlayerRow | None:
        async with self.database.read() as session:
            row = (
                await session.execute(select(players).where(players.c.username == username))
            ).one_or_none()
        return None if row is None else _player_row(row)

    async def login_guest(
        self,
        device_id: str,
        display_name: str,
        guest_secret: str,
        call: Once[CallKey, _M],
        respond: Callable[[Login], _M],
    ) -> _M:
        """The device's guest, made on its first login (which returns its secret once)."""

        async def work(session: AsyncConnection) -> _M:
            guest = await self._player_for_update(session, players.c.device_id, device_id)
            if guest is None:
                stored = await ANSWERS.claim(session, call)
                if stored is not None:
                    return stored
                if guest_secret:
                    raise Unauthorized("BAD_GUEST_SECRET")
                if not display_name:
                    raise Invalid("FIELD_REQUIRED", field="display_name")
                secret = new_secret()
                row = PlayerRow(
                    player_id=new_id("p"),
                    kind=GUEST,
                    display_name=display_name,
                    username=None,
                    password_hash=None,
                    device_id=device_id,
                    guest_secret_hash=digest(secret),
                    created_us=now_us(),
                )
                await session.execute(players.insert().values(**row.__dict__))
                tokens = await self._issue(session, row.player_id)
                answer = respond(Login(row, tokens, guest_secret=secret))
                await ANSWERS.remember(session, call, answer)
                return answer
            if guest.kind != GUEST:
                raise Conflict("GUEST_UPGRADED", username=guest.username or "")
            if not guest_secret:
                stored = await ANSWERS.claim(session, call)
                if stored is not None:  # a retry of the device's first login
                    return stored
                raise Unauthorized("GUEST_SECRET_REQUIRED")
            if not same_digest(guest_secret, guest.guest_secret_hash):
                raise Unauthorized("BAD_GUEST_SECRET")
            stored = await ANSWERS.claim(session, call)
            if stored is not None:
                return stored
            name = display_name or guest.display_name
            if name != guest.display_name:
                await session.execute(
                    update(players)
                    .where(players.c.player_id == guest.player_id)
                    .values(display_name=name)
                )
            tokens = await self._issue(session, guest.player_id)
            answer = respond(Login(dataclasses.replace(guest, display_name=name), tokens))
            await ANSWERS.remember(session, call, answer)
            return answer

        try:
            return await self.database.transaction(work)
        except IntegrityError:
            # Two first logins of one device raced: the other made the guest.
            return await self.database.transaction(work)

    async def register_account(
        self,
        username: str,
        display_name: str,
        password_hash: str | None,
        guest_id: str | None,
        call: Once[CallKey, _M],
        respond: Callable[[Login], _M],
    ) -> _M:
        """A new account, or the guest ``guest_id`` turned into one. ``password_hash`` is None
        when the username exists and the password matched it (a retry): only a stored answer
        can then be returned."""

        async def work(session: AsyncConnection) -> _M:
            stored = await ANSWERS.claim(session, call)
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
                name = display_name or guest.display_name
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
                name = display_name or username
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
            account = PlayerRow(player_id, ACCOUNT, name, username, None, None, None, created)
            answer = respond(Login(account, await self._issue(session, player_id)))
            await ANSWERS.remember(session, call, answer)
            return answer

        try:
            return await self.database.transaction(work)
        except IntegrityError:
            raise Exists("USERNAME_TAKEN", username=username) from None

    async def login_account(
        self,
        account: PlayerRow,
        new_hash: str | None,
        call: Once[CallKey, _M],
        respond: Callable[[Login], _M],
    ) -> _M:
        """Tokens for ``account``, whose password the caller has checked (``new_hash``: the
        password re-hashed with current parameters)."""

        async def work(session: AsyncConnection) -> _M:
            stored = await ANSWERS.claim(session, call)
            if stored is not None:
                return stored
            if new_hash is not None:
                await session.execute(
                    update(players)
                    .where(players.c.player_id == account.player_id)
                    .values(password_hash=new_hash)
                )
            answer = respond(Login(account, await self._issue(session, account.player_id)))
            await ANSWERS.remember(session, call, answer)
            return answer

        return await self.database.transaction(work)

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
        self, refresh_token: str, call: Once[CallKey, _M], respond: Callable[[Tokens], _M]
    ) -> _M:
        """Rotate a refresh token; a used one revokes its family (REFRESH_TOKEN_REUSED).
        ``call`` is keyed by the token's id (``token_caller``)."""
        reused = False

        async def work(session: AsyncConnection) -> _M | None:
            nonlocal reused
            row = await self._refresh_row(session, refresh_token)
            stored = await ANSWERS.claim(session, call)
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
            answer = respond(await self._issue(session, row.player_id, row.family_id))
            await ANSWERS.remember(session, call, answer)
            return answer

        answer = await self.database.transaction(work)
        if reused or answer is None:
            raise Unauthorized("REFRESH_TOKEN_REUSED")
        return answer

    async def logout(
        self,
        refresh_token: str,
        all_sessions: bool,
        call: Once[CallKey, _M],
        respond: Callable[[int], _M],
    ) -> _M:
        """Revoke the token's login (its family), or every token of its player; ``respond``
        is given how many tokens were revoked. ``call`` is keyed by the token's id."""

        async def work(session: AsyncConnection) -> _M:
            row = await self._refresh_row(session, refresh_token)
            stored = await ANSWERS.claim(session, call)
            if stored is not None:
                return stored
            if all_sessions:
                revoked = await self._revoke(session, refresh_tokens.c.player_id == row.player_id)
            else:
                revoked = await self._revoke(session, refresh_tokens.c.family_id == row.family_id)
            answer = respond(revoked)
            await ANSWERS.remember(session, call, answer)
            return answer

        return await self.database.transaction(work)

    async def revoked_since(self, since_us: int, limit: int) -> list[tuple[str, int]]:
        """The logins (refresh-token families) revoked at or after ``since_us``, as (family id,
        when), oldest first, at most ``limit`` (``ListRevokedLogins``)."""
        revoked_us = func.max(refresh_tokens.c.revoked_us).label("revoked_us")
        query = (
            select(refresh_tokens.c.family_id, revoked_us)
            .where(refresh_tokens.c.revoked_us >= since_us)
            .group_by(refresh_tokens.c.family_id)
            .order_by(revoked_us, refresh_tokens.c.family_id)
            .limit(limit)
        )
        async with self.database.read() as session:
            rows = (await session.execute(query)).all()
        return [(row.family_id, int(row.revoked_us)) for row in rows]

    @staticmethod
    async def prune(session: AsyncConnection, now: int) -> None:
        """Forget refresh tokens long expired."""
        await session.execute(
            delete(refresh_tokens).where(
                refresh_tokens.c.expires_us < now - TOKENS_KEPT_AFTER_EXPIRY_US
            )
        )


def token_caller(refresh_token: str) -> str:
    """The caller a refresh or logout is keyed by: its refresh token's id (an unreadable token
    is refused before its key is used)."""
    parsed = RefreshToken.parse(refresh_token)
    return f"refresh:{'' if parsed is None else parsed.token_id}"


__all__ = ["TOKENS_KEPT_AFTER_EXPIRY_US", "Accounts", "token_caller"]
