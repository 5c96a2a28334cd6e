"""LobbyService's quick match: JoinQuickMatch, LeaveQuickMatch, GetQuickMatchStatus (the queue
is ``lobby.stores.quick_match``, the matching ``lobby.matchmaker``; docs/lobby.md, Quick match)."""

from __future__ import annotations

from okey.v1 import lobby_pb2
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.chips import stakes
from okey101.lobby.messages import join_quick_match_answer, preset_name, ticket_message
from okey101.lobby.records import now_us
from okey101.lobby.rpc import checks
from okey101.lobby.rpc.base import LobbyCalls
from okey101.lobby.staked_seats import check_covers
from okey101.lobby.stores import answers
from okey101.platform.auth import require_claims
from okey101.platform.handlers import Context
from okey101.platform.ids import check_request_id


class QuickMatchCalls(LobbyCalls):
    """Quick match (module docstring)."""

    async def JoinQuickMatch(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.JoinQuickMatchRequest, context: Context
    ) -> lobby_pb2.JoinQuickMatchResponse:
        async def work() -> lobby_pb2.JoinQuickMatchResponse:
            check_request_id(request.request_id)
            checks.enum_value(request.preset, checks.PRESET_VALUES, "preset")
            stakes.check_stake(self.options.chips.stakes, request.stake)
            player = await self._caller()
            if request.stake:
                # Refused now, with the balance; the stake itself is held when the table is
                # made (``matchmaker``).
                chips = self.options.chips

                async def covered(session: AsyncConnection) -> None:
                    await check_covers(session, chips, player.player_id, request.stake, now_us())

                await self.database.transaction(covered)
            limit = self.options.limits.quick_match
            subject = f"player:{player.player_id}"
            async with self._counted("quick_match", subject, limit, request.request_id):
                answer = await self.repository.queue.join(
                    player,
                    preset_name(request.preset),
                    request.stake,
                    self.options.quick_match_wait_seconds,
                    answers.once(
                        "JoinQuickMatch", subject, request, lobby_pb2.JoinQuickMatchResponse
                    ),
                    join_quick_match_answer,
                )
            self.matchmaker.wake()
            return answer

        return await self._answer(request, context, work)

    async def LeaveQuickMatch(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.LeaveQuickMatchRequest, context: Context
    ) -> lobby_pb2.LeaveQuickMatchResponse:
        async def work() -> lobby_pb2.LeaveQuickMatchResponse:
            check_request_id(request.request_id)
            ticket_id = checks.identifier(request.ticket_id, "ticket_id")
            player = await self._caller()
            call = answers.once(
                "LeaveQuickMatch",
                f"player:{player.player_id}",
                request,
                lobby_pb2.LeaveQuickMatchResponse,
            )

            async def leave() -> lobby_pb2.LeaveQuickMatchResponse:
                status = await self.repository.queue.leave(ticket_id, player.player_id)
                return lobby_pb2.LeaveQuickMatchResponse(ticket=ticket_message(status))

            return await answers.kept_after(self.database, call, leave)

        return await self._answer(request, context, work)

    async def GetQuickMatchStatus(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.GetQuickMatchStatusRequest, context: Context
    ) -> lobby_pb2.GetQuickMatchStatusResponse:
        async def work() -> lobby_pb2.GetQuickMatchStatusResponse:
            ticket_id = checks.identifier(request.ticket_id, "ticket_id")
            claims = require_claims()
            status = await self.repository.queue.status(ticket_id, claims.subject)
            return lobby_pb2.GetQuickMatchStatusResponse(ticket=ticket_message(status))

        return await self._answer(request, context, work)


__all__ = ["QuickMatchCalls"]
