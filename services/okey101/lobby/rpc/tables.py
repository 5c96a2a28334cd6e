"""LobbyService's tables: BrowseTables, HostTable, JoinTable, LeaveTable, each made of calls to
the table service with request ids derived from the caller's (docs/lobby.md, Tables)."""

from __future__ import annotations

from typing import Final

from okey.v1 import common_pb2, lobby_pb2, table_pb2

from okey101.lobby import bracket
from okey101.lobby.chips import stakes
from okey101.lobby.errors import Invalid, Missing
from okey101.lobby.hosting_finisher import host_table_calls
from okey101.lobby.peer_clients import derived_request_id
from okey101.lobby.rpc import checks
from okey101.lobby.rpc.base import LobbyCalls
from okey101.lobby.staked_seats import hold_key_of, sit_staked
from okey101.lobby.stores import answers
from okey101.platform import bot_seats, paging
from okey101.platform.handlers import Context
from okey101.platform.ids import check_request_id
from okey101.platform.names import TITLE_MAX

#: BrowseTables' page size (default, maximum) from lobby.proto.
TABLES_PAGE: Final = (50, 200)


def _takes_a_free_seat(table: common_pb2.Table, player_id: str) -> bool:
    """Whether sitting ``player_id`` at ``table`` takes a free seat before the start (a seat
    that needs a stake), rather than their own seat again."""
    return table.state == common_pb2.TABLE_STATE_WAITING and not any(
        seat.player_id == player_id for seat in table.seats
    )


class TableCalls(LobbyCalls):
    """Tables (module docstring)."""

    async def BrowseTables(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.BrowseTablesRequest, context: Context
    ) -> lobby_pb2.BrowseTablesResponse:
        async def work() -> lobby_pb2.BrowseTablesResponse:
            checks.enum_value(request.preset, checks.PRESET_VALUES, "preset")
            states = list(request.states) or [
                common_pb2.TABLE_STATE_WAITING,
                common_pb2.TABLE_STATE_PLAYING,
            ]
            for state in states:
                checks.enum_value(state, checks.TABLE_STATES, "states")
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
                    bot_seats.hide_bots(table)  # the table service tells the lobby the truth
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
            checks.rules_preset(request.rules)
            table_name = checks.name(request.name, "name", required=False, maximum=TITLE_MAX)
            checks.enum_value(request.visibility, checks.VISIBILITIES, "visibility")
            if request.host_seat >= bracket.SEATS:
                raise Invalid("BAD_SEAT", seat=request.host_seat)
            taken = {request.host_seat}
            for bot in request.bots:
                if bot.seat >= bracket.SEATS:
                    raise Invalid("BAD_SEAT", seat=bot.seat)
                if bot.seat in taken:
                    raise Invalid("DUPLICATE_SEAT", seat=bot.seat)
                taken.add(bot.seat)
                checks.enum_value(bot.level, checks.BOT_LEVELS, "bots.level")
            stakes.check_stake(self.options.chips.stakes, request.stake)
            subject = f"player:{player.player_id}"
            call = answers.once("HostTable", subject, request, lobby_pb2.HostTableResponse)
            stored = await answers.peek(self.database, call)
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
                name=table_name,
                visibility=request.visibility or common_pb2.TABLE_VISIBILITY_PUBLIC,
                seats=seats,
                host_player_id=player.player_id,
                start_when_full=request.start_when_full,
                locale=request.locale,
                stake=request.stake,
                fee_percent=self.options.chips.fee_percent if request.stake else 0,
            )
            sit = table_pb2.SitRequest(
                request_id=derived_request_id("host-sit", *key),
                seat=request.host_seat,
                player_id=player.player_id,
                display_name=player.display_name,
                locale=request.locale,
            )
            hostings = self.repository.hostings
            limits = self.options.limits
            # Per player, and per client address over all its players (guests are cheap to
            # make). The address's count is keyed by player too: two players' request ids
            # are not one request.
            async with (
                self._counted("host_table", subject, limits.host_table, request.request_id),
                self._counted(
                    "host_table",
                    self._client(context),
                    limits.host_table_per_address,
                    f"{player.player_id}\0{request.request_id}",
                ),
            ):
                # Owed from here on: if this call goes no further, a finisher makes the calls.
                await hostings.begin(
                    create.request_id, create.SerializeToString(), sit.SerializeToString()
                )
                created, sat = await host_table_calls(
                    self.repository, self.tables, create, sit, self.options.chips
                )
            table = sat.table
            table.invite_code = created.invite_code
            bot_seats.hide_bots(table)
            answer = lobby_pb2.HostTableResponse(table=table, seat=sat.seat)
            await hostings.finish(create.request_id, call, answer)
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
                checks.length(request.invite_code, "invite_code", 1, 64)
                found = await self.repository.directory.table_by_invite(request.invite_code)
                if found is None:
                    raise Missing("BAD_INVITE_CODE", invite_code=request.invite_code)
                table_id = found
                table = await self.tables.get(table_id, request.locale)
            elif target == "table_id":
                table_id = checks.identifier(request.table_id, "table_id")
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
            if table.stake and (
                _takes_a_free_seat(table, player.player_id)
                or await self._staked_before(hold_key_of(sit.request_id))
            ):
                sat = await sit_staked(
                    self.repository,
                    self.tables,
                    sit,
                    stake=table.stake,
                    fee_percent=table.fee_percent,
                    starting_grant=self.options.chips.starting_grant,
                )
            else:
                sat = await self.tables.sit(sit)
            bot_seats.hide_bots(sat.table)
            return lobby_pb2.JoinTableResponse(table=sat.table, seat=sat.seat)

        return await self._answer(request, context, work)

    async def _staked_before(self, hold_key: str) -> bool:
        """Whether this JoinTable held its stake already: it is a retry (its answer lost, say
        to a lobby pod killed once the table had seated the player), which must send the table
        the same staked SitRequest again, hold key and all. Sent without it, the table would
        find the seat theirs but the request id bound to another request (REQUEST_ID_REUSED);
        ``sit_staked`` holds nothing twice and the table answers as it first did."""
        async with self.database.read() as session:
            return await stakes.hold_of(session, hold_key) is not None

    async def LeaveTable(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.LeaveTableRequest, context: Context
    ) -> lobby_pb2.LeaveTableResponse:
        async def work() -> lobby_pb2.LeaveTableResponse:
            check_request_id(request.request_id)
            player = await self._caller()
            table_id = checks.identifier(request.table_id, "table_id")
            table = await self.tables.leave(
                table_pb2.LeaveRequest(
                    request_id=derived_request_id("leave", player.player_id, request.request_id),
                    table_id=table_id,
                    player_id=player.player_id,
                    locale=request.locale,
                )
            )
            bot_seats.hide_bots(table)
            return lobby_pb2.LeaveTableResponse(table=table)

        return await self._answer(request, context, work)


__all__ = ["TABLES_PAGE", "TableCalls"]
