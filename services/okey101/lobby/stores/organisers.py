"""Who may organise: the accounts holding the organiser role (``lobby_organisers``) and every
grant and revocation that changed it (``lobby_organiser_changes``); docs/tournaments.md, Who
may organise.

A grant or a revocation locks the player's row (``FOR UPDATE``), claims its request id's stored
answer, then changes the role and records the change in the same transaction: a retry is
answered as the first call was, and two operators granting at once record one change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

from google.protobuf.message import Message
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.errors import Conflict, Missing
from okey101.lobby.models import organiser_changes, organisers, players
from okey101.lobby.records import ACCOUNT, now_us
from okey101.lobby.stores.answers import ANSWERS
from okey101.platform.database import Database
from okey101.platform.idempotency import CallKey, Once

_M = TypeVar("_M", bound=Message)

#: A change's action.
GRANT: Final = "grant"
REVOKE: Final = "revoke"


class Organisers:
    """The organiser role (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def is_organiser(self, player_id: str) -> bool:
        async with self.database.read() as session:
            found = await session.execute(
                select(organisers.c.player_id).where(organisers.c.player_id == player_id)
            )
            return found.one_or_none() is not None

    async def change(
        self,
        player_id: str,
        action: str,
        *,
        operator: str,
        reason: str,
        request_id: str,
        call: Once[CallKey, _M],
        respond: Callable[[bool], _M],
    ) -> _M:
        """Grant (``GRANT``) or revoke (``REVOKE``) ``player_id``'s role; ``respond`` is told
        whether it changed. PLAYER_NOT_FOUND for no such player; a grant to a guest is
        ORGANISER_NEEDS_ACCOUNT."""

        async def work(session: AsyncConnection) -> _M:
            player = (
                await session.execute(
                    select(players.c.kind).where(players.c.player_id == player_id).with_for_update()
                )
            ).one_or_none()
            stored = await ANSWERS.claim(session, call)
            if stored is not None:
                return stored
            if player is None:
                raise Missing("PLAYER_NOT_FOUND", player_id=player_id)
            held = (
                await session.execute(
                    select(organisers.c.player_id).where(organisers.c.player_id == player_id)
                )
            ).one_or_none() is not None
            now = now_us()
            if action == GRANT:
                if player.kind != ACCOUNT:
                    raise Conflict("ORGANISER_NEEDS_ACCOUNT", player_id=player_id)
                changed = not held
                if changed:
                    await session.execute(
                        organisers.insert().values(
                            player_id=player_id,
                            granted_us=now,
                            granted_by=operator,
                            reason=reason,
                        )
                    )
            else:
                changed = held
                if changed:
                    await session.execute(
                        delete(organisers).where(organisers.c.player_id == player_id)
                    )
            if changed:
                await session.execute(
                    organiser_changes.insert().values(
                        player_id=player_id,
                        action=action,
                        operator=operator,
                        reason=reason,
                        request_id=request_id,
                        changed_us=now,
                    )
                )
            answer = respond(changed)
            await ANSWERS.remember(session, call, answer)
            return answer

        return await self.database.transaction(work)


__all__ = ["GRANT", "REVOKE", "Organisers"]
