"""Stakes: a player's stake held in a table's pot when they sit, refunded exactly once if the
seat is freed before the match starts; the stake levels a table may be played for.

The lobby's seating flows (HostTable, JoinTable, quick match) call, in the transaction that
seats the player:

- ``check_stake(settings, stake)``: INVALID_ARGUMENT ``BAD_STAKE`` for a stake that is not one
  of the operator's levels (0, no stake, is always fine);
- ``hold_stake(session, key=..., player_id=..., table_id=..., stake=..., fee_percent=...,
  now_us=...)``: the pot opened if it is new (its stake and fee fixed then), the stake moved
  from the player to the pot under the ledger key ``key`` (the ``SitRequest.stake_hold_key``
  the table keeps with the seat), the hold recorded ``held``. Idempotent on ``key``.
  FAILED_PRECONDITION ``INSUFFICIENT_CHIPS`` (the balance in the sentence) if the player cannot
  cover it, ``CHIP_POT_CLOSED`` once the match has started;
- ``refund_hold(session, hold_key=..., now_us=...)``: a hold still ``held`` goes back to its
  player (ledger key ``refund:<hold_key>``); True if this call refunded it.

A hold moves ``held`` -> ``in_play`` (the match started with it) -> ``paid`` (the pot paid
out), or ``held``/``in_play`` -> ``refunded``: each only from the state before it, under the
pot's row lock, so no stake is refunded twice or both refunded and paid. What the table tells
the lobby afterwards is ``table_chips``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.chips import accounts, ledger
from okey101.lobby.chips.settings import ChipSettings
from okey101.lobby.chips.wallets import ensure_wallet
from okey101.lobby.errors import Conflict, Invalid
from okey101.lobby.models import chip_holds, chip_pots
from okey101.platform.config import Settings
from okey101.platform.database import insert_ignoring_conflicts

#: Holds.
HELD: Final = "held"
IN_PLAY: Final = "in_play"
REFUNDED: Final = "refunded"
PAID: Final = "paid"
#: Pots.
OPEN: Final = "open"
STARTED: Final = "started"
POT_PAID: Final = "paid"
POT_REFUNDED: Final = "refunded"
#: A pot no longer takes, gives back or pays anything.
SETTLED: Final = frozenset({POT_PAID, POT_REFUNDED})

_h = chip_holds.c
_p = chip_pots.c


@dataclass(frozen=True)
class Pot:
    table_id: str
    stake: int
    fee_percent: int
    state: str


@dataclass(frozen=True)
class Hold:
    hold_key: str
    table_id: str
    #: "" for a bot's stake (the house's).
    player_id: str
    seat: int | None
    amount: int
    state: str

    @property
    def account(self) -> str:
        """Whose chips they are: the player's, or the house's for a bot."""
        return accounts.player(self.player_id) if self.player_id else accounts.BOTS


def check_stake(settings_or_levels: ChipSettings | Settings | Iterable[int], stake: int) -> None:
    """INVALID_ARGUMENT ``BAD_STAKE`` unless ``stake`` is 0 (no stake) or one of the levels."""
    if isinstance(settings_or_levels, ChipSettings):
        levels = tuple(settings_or_levels.stakes)
    elif isinstance(settings_or_levels, Settings):
        levels = tuple(settings_or_levels.chip_stakes)
    else:
        levels = tuple(settings_or_levels)
    if stake == 0 or stake in levels:
        return
    shown = ", ".join(str(level) for level in sorted(levels)) or "none"
    raise Invalid("BAD_STAKE", stake=stake, stakes=shown)


async def hold_stake(
    session: AsyncConnection,
    *,
    key: str,
    player_id: str,
    table_id: str,
    stake: int,
    fee_percent: int,
    now_us: int,
    starting_grant: int = 0,
) -> None:
    """Hold ``player_id``'s stake in ``table_id``'s pot (module docstring). ``starting_grant``:
    the operator's (``ChipSettings.starting_grant``), credited first if this is the player's
    first touch of their wallet."""
    if stake <= 0 or not 0 <= fee_percent <= 100:
        raise ledger.LedgerError(f"a stake of {stake} with a fee of {fee_percent}% is not held")
    async with session.begin_nested():  # a refusal leaves no pot or hold behind either
        pot = await _opened_pot(session, table_id, stake, fee_percent, now_us)
        known = await hold_of(session, key)
        if known is not None:
            if (known.player_id, known.table_id, known.amount) != (player_id, table_id, stake):
                raise ledger.KeyReused(f"hold {key!r} was made for another stake: {known}")
            return
        if pot.state != OPEN:
            raise Conflict("CHIP_POT_CLOSED", table_id=table_id)
        if pot.stake != stake:
            raise ledger.LedgerError(f"table {table_id} is played for {pot.stake}, not {stake}")
        await ensure_wallet(session, player_id, starting_grant=starting_grant, now_us=now_us)
        await ledger.post(
            session,
            key,
            ledger.STAKE,
            [(accounts.player(player_id), -stake), (accounts.pot(table_id), stake)],
            player_id=player_id,
            table_id=table_id,
            now_us=now_us,
        )
        await session.execute(
            chip_holds.insert().values(
                hold_key=key,
                table_id=table_id,
                player_id=player_id,
                amount=stake,
                state=HELD,
                created_us=now_us,
            )
        )


async def refund_hold(session: AsyncConnection, *, hold_key: str, now_us: int) -> bool:
    """Give a hold still ``held`` back to its player: True if this call did."""
    known = await hold_of(session, hold_key)
    if known is None or known.state != HELD:
        return False
    await lock_pot(session, known.table_id)  # the pot's lock first, as every pot change
    hold = await hold_of(session, hold_key, lock=True)
    if hold is None or hold.state != HELD:
        return False
    await refund(session, hold, now_us)
    return True


async def refund(session: AsyncConnection, hold: Hold, now_us: int) -> None:
    """Give ``hold`` (held or in play; its pot locked) back to whose it was."""
    await ledger.post(
        session,
        f"refund:{hold.hold_key}",
        ledger.REFUND,
        [(accounts.pot(hold.table_id), -hold.amount), (hold.account, hold.amount)],
        player_id=hold.player_id or None,
        table_id=hold.table_id,
        now_us=now_us,
    )
    await session.execute(
        update(chip_holds)
        .where(_h.hold_key == hold.hold_key)
        .values(state=REFUNDED, settled_us=now_us)
    )


async def _opened_pot(
    session: AsyncConnection, table_id: str, stake: int, fee_percent: int, now_us: int
) -> Pot:
    """``table_id``'s pot, opened with this stake and fee if it is new, locked."""
    await session.execute(
        insert_ignoring_conflicts(chip_pots, session.dialect.name).values(
            table_id=table_id,
            stake=stake,
            fee_percent=fee_percent,
            state=OPEN,
            created_us=now_us,
        )
    )
    pot = await lock_pot(session, table_id)
    if pot is None:
        raise ledger.LedgerError(f"the pot of {table_id} was opened and is gone")
    return pot


async def lock_pot(session: AsyncConnection, table_id: str) -> Pot | None:
    """``table_id``'s pot, its row locked for this transaction (None: no pot)."""
    row = (
        await session.execute(select(chip_pots).where(_p.table_id == table_id).with_for_update())
    ).first()
    return None if row is None else _pot(row)


async def pot_of(session: AsyncConnection, table_id: str) -> Pot | None:
    """``table_id``'s pot as it is (None: the table has none)."""
    row = (await session.execute(select(chip_pots).where(_p.table_id == table_id))).first()
    return None if row is None else _pot(row)


async def pot_chips(session: AsyncConnection, table_id: str) -> int:
    """The chips in ``table_id``'s pot now (``Table.pot``)."""
    return await ledger.balance(session, accounts.pot(table_id))


async def hold_of(session: AsyncConnection, hold_key: str, *, lock: bool = False) -> Hold | None:
    query = select(chip_holds).where(_h.hold_key == hold_key)
    if lock:
        query = query.with_for_update()
    row = (await session.execute(query)).first()
    return None if row is None else _hold(row)


async def holds_of(
    session: AsyncConnection, table_id: str, states: Iterable[str], *, lock: bool = False
) -> list[Hold]:
    """``table_id``'s holds in ``states``, in key order."""
    query = (
        select(chip_holds)
        .where(_h.table_id == table_id, _h.state.in_(list(states)))
        .order_by(_h.hold_key)
    )
    if lock:
        query = query.with_for_update()
    return [_hold(row) for row in await session.execute(query)]


def _pot(row: Any) -> Pot:
    return Pot(row.table_id, int(row.stake), int(row.fee_percent), row.state)


def _hold(row: Any) -> Hold:
    return Hold(
        row.hold_key,
        row.table_id,
        row.player_id,
        None if row.seat is None else int(row.seat),
        int(row.amount),
        row.state,
    )


__all__ = [
    "HELD",
    "IN_PLAY",
    "OPEN",
    "PAID",
    "POT_PAID",
    "POT_REFUNDED",
    "REFUNDED",
    "SETTLED",
    "STARTED",
    "Hold",
    "Pot",
    "check_stake",
    "hold_of",
    "hold_stake",
    "holds_of",
    "lock_pot",
    "pot_chips",
    "pot_of",
    "refund",
    "refund_hold",
]
