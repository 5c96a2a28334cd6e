"""LobbyService's organiser role: GrantOrganiser and RevokeOrganiser, an operator's calls with a
service token (the store is ``lobby.stores.organisers``; docs/tournaments.md, Who may organise).

Each checks its whole request first (a refusal writes nothing), then changes the role and
records the change with the operator (the token's subject), the reason and the request id in
one transaction that also claims the request id's stored answer: a retry is answered as the
first call was. Granting an organiser again, or revoking a player who is none, changes nothing
(``changed`` false). Each logs one line.
"""

from __future__ import annotations

from typing import Final, TypeVar

from google.protobuf.message import Message
from okey.v1 import lobby_pb2

from okey101.lobby.errors import Invalid, Missing
from okey101.lobby.messages import player_message
from okey101.lobby.rpc import checks
from okey101.lobby.rpc.base import LobbyCalls, log
from okey101.lobby.stores import answers
from okey101.lobby.stores.organisers import GRANT, REVOKE
from okey101.platform.auth import require_claims
from okey101.platform.handlers import Context
from okey101.platform.ids import check_request_id

#: An operator's reason, in characters.
REASON_MAX: Final = 500

_M = TypeVar("_M", bound=Message)


class OrganiserCalls(LobbyCalls):
    """The organiser role (module docstring)."""

    async def _change_organiser(
        self,
        method: str,
        action: str,
        request: lobby_pb2.GrantOrganiserRequest | lobby_pb2.RevokeOrganiserRequest,
        answer_type: type[_M],
    ) -> _M:
        check_request_id(request.request_id)
        player_id = checks.identifier(request.player_id, "player_id")
        reason = request.reason.strip()
        if not reason:
            raise Invalid("FIELD_REQUIRED", field="reason")
        checks.length(reason, "reason", 1, REASON_MAX)
        operator = require_claims().subject
        call = answers.once(method, f"service:{operator}", request, answer_type)
        player = await self.repository.accounts.player(player_id)
        if player is None:
            raise Missing("PLAYER_NOT_FOUND", player_id=player_id)
        shown = player_message(player, own=False, organiser=action == GRANT)

        def respond(changed: bool) -> _M:
            return answer_type(player=shown, changed=changed)

        answer = await self.repository.organisers.change(
            player_id,
            action,
            operator=operator,
            reason=reason,
            request_id=request.request_id,
            call=call,
            respond=respond,
        )
        log.info(
            "organiser role changed",
            player_id=player_id,
            action=action,
            changed=getattr(answer, "changed", False),
            by=operator,
            reason=reason[:200],
        )
        return answer

    async def GrantOrganiser(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.GrantOrganiserRequest, context: Context
    ) -> lobby_pb2.GrantOrganiserResponse:
        async def work() -> lobby_pb2.GrantOrganiserResponse:
            return await self._change_organiser(
                "GrantOrganiser", GRANT, request, lobby_pb2.GrantOrganiserResponse
            )

        return await self._answer(request, context, work)

    async def RevokeOrganiser(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.RevokeOrganiserRequest, context: Context
    ) -> lobby_pb2.RevokeOrganiserResponse:
        async def work() -> lobby_pb2.RevokeOrganiserResponse:
            return await self._change_organiser(
                "RevokeOrganiser", REVOKE, request, lobby_pb2.RevokeOrganiserResponse
            )

        return await self._answer(request, context, work)


__all__ = ["REASON_MAX", "OrganiserCalls"]
