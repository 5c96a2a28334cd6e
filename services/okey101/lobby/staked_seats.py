"""Seating a player at a staked table (docs/chips.md, Stakes): the stake moves into the table's
pot before the player sits, and back if the table refuses the seat.

``sit_staked`` holds the stake (``chips.stakes.hold_stake``: player -> the table's pot, refused
with INSUFFICIENT_CHIPS when the balance does not cover it) and records the sit as owed
(``stores.staked_seats``) in one transaction, then asks the table service to seat the player with
the hold's key (``SitRequest.stake_hold_key``, which the table keeps with the seat). The table's
verdict settles it: seated, the hold stays in the pot until the match starts or the seat is freed
(the table's chips records); refused, the hold is refunded, in the transaction that ends the owed
sit. With no verdict (the table service away, this pod killed), the sit stays owed and
``finish_staked_seats`` (run by every pod's ``HostingFinisher``) repeats it with the same request
id until the table answers: a stake is refunded only on a refusal, so a seat is never taken
without its stake and a stake never held for a seat that was not.

The hold's key is derived from the sit's request id, which is derived from the caller's own
request (``peer_clients.derived_request_id``): a retry holds and sits nothing twice.
"""

from __future__ import annotations

from okey.v1 import table_pb2
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.engine.errors import OkeyError
from okey101.lobby.chips import accounts, ledger, stakes, wallets
from okey101.lobby.chips.settings import ChipSettings
from okey101.lobby.errors import InsufficientChips
from okey101.lobby.peer_clients import TableClient
from okey101.lobby.records import now_us
from okey101.lobby.stores import LobbyRepository
from okey101.platform.logs import get_logger
from okey101.platform.peer_calls import PeerError

_log = get_logger(service="lobby")


def hold_key_of(sit_request_id: str) -> str:
    """The key of the stake held for the sit ``sit_request_id``."""
    return f"hold:{sit_request_id}"


async def chips_to_stake(
    session: AsyncConnection, chips: ChipSettings, player_id: str, now_us: int
) -> int:
    """The chips ``player_id`` may stake now (their starting grant credited first if this is
    their first touch of their wallet: a write)."""
    await wallets.ensure_wallet(
        session, player_id, starting_grant=chips.starting_grant, now_us=now_us
    )
    return await ledger.balance(session, accounts.player(player_id))


async def check_covers(
    session: AsyncConnection, chips: ChipSettings, player_id: str, stake: int, now_us: int
) -> None:
    """INSUFFICIENT_CHIPS, with the balance, unless ``player_id`` can stake ``stake``."""
    balance = await chips_to_stake(session, chips, player_id, now_us)
    if balance < stake:
        raise InsufficientChips(balance=balance, needed=stake)


async def sit_staked(
    repository: LobbyRepository,
    tables: TableClient,
    sit: table_pb2.SitRequest,
    *,
    stake: int,
    fee_percent: int,
    starting_grant: int,
) -> table_pb2.SitResponse:
    """Seat ``sit.player_id`` at the staked table ``sit.table_id`` (module docstring). Raises
    INSUFFICIENT_CHIPS before anything is sent, the table's refusal (``PeerError``) once the
    stake is refunded, and PEER_UNAVAILABLE with the sit left owed."""
    owed = table_pb2.SitRequest()
    owed.CopyFrom(sit)
    owed.stake_hold_key = hold_key_of(sit.request_id)

    async def hold(session: AsyncConnection) -> None:
        now = now_us()
        await stakes.hold_stake(
            session,
            key=owed.stake_hold_key,
            player_id=owed.player_id,
            table_id=owed.table_id,
            stake=stake,
            fee_percent=fee_percent,
            now_us=now,
            starting_grant=starting_grant,
        )
        await repository.staked_seats.begin(
            session, owed.stake_hold_key, owed.SerializeToString(), now
        )

    await repository.database.transaction(hold)
    return await _settle(repository, tables, owed)


async def _settle(
    repository: LobbyRepository, tables: TableClient, owed: table_pb2.SitRequest
) -> table_pb2.SitResponse:
    """Send the owed sit and settle its stake by the table's verdict."""
    try:
        sat = await tables.sit(owed)
    except PeerError:

        async def refund(session: AsyncConnection) -> None:
            await stakes.refund_hold(session, hold_key=owed.stake_hold_key, now_us=now_us())
            await repository.staked_seats.end(session, owed.stake_hold_key)

        await repository.database.transaction(refund)
        raise

    async def seated(session: AsyncConnection) -> None:
        await repository.staked_seats.end(session, owed.stake_hold_key)

    await repository.database.transaction(seated)
    return sat


async def finish_staked_seats(
    repository: LobbyRepository, tables: TableClient, begun_before_us: int
) -> int:
    """Settle the sits owed since before ``begun_before_us`` (module docstring); how many
    were. Stops at the first the table service gives no verdict on: the rest would wait on it
    too."""
    finished = 0
    for data in await repository.staked_seats.unfinished(begun_before_us, 20):
        owed = table_pb2.SitRequest.FromString(data)
        try:
            await _settle(repository, tables, owed)
        except PeerError as error:
            _log.info(
                "staked seat refused; stake refunded",
                table_id=owed.table_id,
                reason=error.reason,
            )
        except OkeyError as error:
            _log.info("staked seat not settled yet", code=error.code)
            break
        finished += 1
    return finished


__all__ = [
    "check_covers",
    "chips_to_stake",
    "finish_staked_seats",
    "hold_key_of",
    "sit_staked",
]
