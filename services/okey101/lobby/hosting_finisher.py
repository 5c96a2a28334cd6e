"""Finishing HostTable calls left half-done, in the background of every lobby pod
(``HostingFinisher``), and the table service calls a HostTable makes (``host_table_calls``).

HostTable makes two table service calls (create the table, seat the host; ``host_table_calls``)
after committing them as a ``lobby_hostings`` row, which it deletes with its stored answer. A row
left behind (the table service went away between or during the calls, the pod died, the caller
stopped retrying) is finished by any pod: every two seconds, rows older than a few seconds are made
again with the same derived request ids, so the table ends as the call would have left it (a full
``start_when_full`` table then starts), and a retry of the call gets that same table. A refusal from
the table service ends the row: nothing more is owed.

The same loop settles the seats at staked tables still owed (``staked_seats``): the host's seat
of a staked HostTable and every JoinTable at a staked table.
"""

from __future__ import annotations

import asyncio

from okey.v1 import common_pb2, table_pb2

from okey101.engine.errors import OkeyError
from okey101.lobby.chips.settings import ChipSettings
from okey101.lobby.errors import InsufficientChips
from okey101.lobby.messages import table_entry
from okey101.lobby.peer_clients import TableClient, close_table
from okey101.lobby.records import US, now_us
from okey101.lobby.staked_seats import finish_staked_seats, sit_staked
from okey101.lobby.stores import LobbyRepository
from okey101.platform.logs import get_logger
from okey101.platform.peer_calls import PeerError

_log = get_logger(service="lobby")


async def host_table_calls(
    repository: LobbyRepository,
    tables: TableClient,
    create: table_pb2.CreateTableRequest,
    sit: table_pb2.SitRequest,
    chips: ChipSettings,
) -> tuple[common_pb2.Table, table_pb2.SitResponse]:
    """A HostTable's table service calls: create the table, record it, seat the host. Each
    call's request id is derived from the HostTable's, so making them again (a retry, the
    finisher) repeats nothing. At a staked table the host's stake is held first
    (``staked_seats``). A refusal ends the hosting (nothing more is owed) and is raised; so is a
    host who cannot cover the stake, whose table is closed."""
    try:
        created = await tables.create(create)
        await repository.directory.record(
            table_entry(created, source="hosted", host_player_id=create.host_player_id)
        )
        seat = table_pb2.SitRequest()
        seat.CopyFrom(sit)
        seat.table_id = created.table_id
        if create.stake:
            try:
                sat = await sit_staked(
                    repository,
                    tables,
                    seat,
                    stake=create.stake,
                    fee_percent=create.fee_percent,
                    starting_grant=chips.starting_grant,
                )
            except InsufficientChips:
                await repository.hostings.end(create.request_id)
                await close_table(tables, created.table_id, "the host cannot cover the stake")
                raise
        else:
            sat = await tables.sit(seat)
    except PeerError:
        await repository.hostings.end(create.request_id)
        raise
    return created, sat


class HostingFinisher:
    """Finishes HostTable calls left half-done (module docstring)."""

    def __init__(
        self,
        repository: LobbyRepository,
        tables: TableClient,
        *,
        interval: float = 2.0,
        after_seconds: float = 5.0,
        chips: ChipSettings | None = None,
    ) -> None:
        self._repository = repository
        self._chips = chips or ChipSettings()
        self._tables = tables
        self._interval = interval
        self._after_us = int(after_seconds * US)

    async def run(self) -> None:
        while True:
            try:
                await self.finish_all()
            except Exception as error:
                _log.warning("finishing hostings failed; retrying", error=str(error)[:300])
            await asyncio.sleep(self._interval)

    async def finish_all(self) -> int:
        """Finish what can be finished now; how many were."""
        finished = await finish_staked_seats(
            self._repository, self._tables, now_us() - self._after_us
        )
        for hosting in await self._repository.hostings.unfinished(now_us() - self._after_us, 20):
            create = table_pb2.CreateTableRequest.FromString(hosting.create_request)
            sit = table_pb2.SitRequest.FromString(hosting.sit_request)
            try:
                created, _sat = await host_table_calls(
                    self._repository, self._tables, create, sit, self._chips
                )
            except InsufficientChips:
                _log.info("hosting refused: the host cannot cover the stake")
                continue
            except OkeyError as error:
                _log.info("hosting not finished yet", code=error.code)
                break  # the table service is away: the rest would wait on it too
            except PeerError as error:
                _log.warning("hosting refused by the table service", reason=error.reason)
                continue
            await self._repository.hostings.end(create.request_id)
            finished += 1
            _log.info("hosting finished", table_id=created.table_id)
        return finished


__all__ = ["HostingFinisher", "host_table_calls"]
