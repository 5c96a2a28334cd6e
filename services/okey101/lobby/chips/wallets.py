"""Players' wallets: the starting grant, the daily grant, operators' adjustments, and what a
wallet shows (its balance, the chips held in play, when the daily grant is next due).

- **Starting grant.** A player's first call that touches their wallet (GetWallet,
  ListWalletEntries, ClaimDailyChips, an adjustment, a stake held for them) posts
  ``grant:start:<player>`` from ``house:grants`` first: once, whatever races (the key is
  unique). With a starting grant of 0 nothing is posted.
- **Daily grant.** ``lobby_chip_daily_claims`` keeps each player's last claim and how many they
  have made: one upsert moves the claim forward only if the period has passed since the last
  (``... DO UPDATE ... WHERE last_claim_us <= now - period``), so two claims racing in one
  period credit one grant; the n-th claim's ledger key is ``daily:<player>:<n>``.
- **Adjustments.** An operator's grant (from ``house:adjustments``) or take (back to it),
  refused as INSUFFICIENT_CHIPS beyond the balance, with the operator's reason as the
  transaction's note.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.chips import accounts, ledger
from okey101.lobby.chips.settings import ChipSettings
from okey101.lobby.errors import Conflict
from okey101.lobby.models import chip_daily_claims, chip_holds
from okey101.lobby.records import US
from okey101.platform.database import dialect_insert

#: Hold states whose chips are still the player's, in a pot not yet paid out (``stakes``).
HELD_STATES = ("held", "in_play")

_d = chip_daily_claims.c
_h = chip_holds.c


def start_key(player_id: str) -> str:
    return f"grant:start:{player_id}"


async def ensure_wallet(
    session: AsyncConnection, player_id: str, *, starting_grant: int, now_us: int
) -> None:
    """Credit ``player_id``'s starting grant unless it was (module docstring)."""
    if starting_grant <= 0:
        return
    key = start_key(player_id)
    if await ledger.exists(session, key):
        return
    await ledger.post(
        session,
        key,
        ledger.GRANT,
        [(accounts.GRANTS, -starting_grant), (accounts.player(player_id), starting_grant)],
        player_id=player_id,
        now_us=now_us,
    )


@dataclass(frozen=True)
class Wallet:
    """What GetWallet shows."""

    balance: int
    held: int
    #: When the daily grant may next be claimed (None: the operator gives none).
    next_daily_us: int | None
    daily_amount: int


async def wallet(
    session: AsyncConnection, settings: ChipSettings, player_id: str, *, now_us: int
) -> Wallet:
    """``player_id``'s wallet now."""
    return Wallet(
        balance=await ledger.balance(session, accounts.player(player_id)),
        held=await held(session, player_id),
        next_daily_us=await next_daily_us(session, settings, player_id, now_us=now_us),
        daily_amount=max(settings.daily_amount, 0),
    )


async def held(session: AsyncConnection, player_id: str) -> int:
    """The player's chips in pots not yet paid out or refunded."""
    total = await session.scalar(
        select(func.coalesce(func.sum(_h.amount), 0)).where(
            _h.player_id == player_id, _h.state.in_(HELD_STATES)
        )
    )
    return int(total or 0)


async def next_daily_us(
    session: AsyncConnection, settings: ChipSettings, player_id: str, *, now_us: int
) -> int | None:
    """When ``player_id`` may next claim the daily grant: now if it is due (None: no grant)."""
    if settings.daily_amount <= 0:
        return None
    last = await session.scalar(select(_d.last_claim_us).where(_d.player_id == player_id))
    if last is None:
        return now_us
    return max(int(last) + settings.daily_period_us, now_us)


async def claim_daily(
    session: AsyncConnection, settings: ChipSettings, player_id: str, *, now_us: int
) -> tuple[ledger.Posted, int]:
    """Credit the daily grant if it is due: the transaction, and when the next is due.
    FAILED_PRECONDITION ``DAILY_CHIPS_DISABLED`` without a daily grant, ``DAILY_CHIPS_NOT_DUE``
    (with ``next_claim_time``, RFC 3339) within the period of the last."""
    amount = settings.daily_amount
    if amount <= 0:
        raise Conflict("DAILY_CHIPS_DISABLED")
    period = settings.daily_period_us
    insert = dialect_insert(chip_daily_claims, session.dialect.name).values(
        player_id=player_id, last_claim_us=now_us, claims=1
    )
    claimed = await session.execute(
        insert.on_conflict_do_update(
            index_elements=["player_id"],
            set_={"last_claim_us": now_us, "claims": _d.claims + 1},
            where=_d.last_claim_us <= now_us - period,
        ).returning(_d.claims)
    )
    number = claimed.scalar_one_or_none()
    if number is None:
        last = await session.scalar(select(_d.last_claim_us).where(_d.player_id == player_id))
        raise Conflict("DAILY_CHIPS_NOT_DUE", next_claim_time=rfc3339(int(last or 0) + period))
    posted = await ledger.post(
        session,
        f"daily:{player_id}:{int(number)}",
        ledger.DAILY_GRANT,
        [(accounts.GRANTS, -amount), (accounts.player(player_id), amount)],
        player_id=player_id,
        now_us=now_us,
    )
    return posted, now_us + period


async def adjust(
    session: AsyncConnection,
    player_id: str,
    amount: int,
    *,
    key: str,
    note: str,
    now_us: int,
) -> ledger.Posted:
    """An operator's grant (``amount`` > 0) or take (< 0) for ``player_id``, under ``key``;
    INSUFFICIENT_CHIPS for a take beyond the balance."""
    return await ledger.post(
        session,
        key,
        ledger.ADJUSTMENT,
        [(accounts.ADJUSTMENTS, -amount), (accounts.player(player_id), amount)],
        player_id=player_id,
        note=note,
        now_us=now_us,
    )


def rfc3339(us: int) -> str:
    """``us`` as RFC 3339 in UTC, rounded up to the second (never before the instant)."""
    seconds = math.ceil(us / US)
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    return moment.isoformat().replace("+00:00", "Z")


__all__ = [
    "HELD_STATES",
    "Wallet",
    "adjust",
    "claim_daily",
    "ensure_wallet",
    "held",
    "next_daily_us",
    "rfc3339",
    "start_key",
    "wallet",
]
