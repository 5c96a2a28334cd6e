"""A tournament's chips (docs/chips.md, Tournaments): entry fees into its prize pool
(``pool:<tournament>``), refunds when it is cancelled, and its prizes once the final ranking is
known. Each is posted in the transaction of the tournament's own change (the registration, the
cancel, the last round's completion), under a key derived from its cause, so a retried or
repeated change moves nothing twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.chips import accounts, ledger, prizes, wallets


def entry_key(tournament_id: str, player_id: str, registration: int = 1) -> str:
    """The key of a player's ``registration``-th entry fee for a tournament: the first is
    ``entry:<tournament>:<player>``, a later one (after unregistering) ends in ``:<n>``."""
    base = f"entry:{tournament_id}:{player_id}"
    return base if registration <= 1 else f"{base}:{registration}"


async def _entries_paid(session: AsyncConnection, tournament_id: str, player_id: str) -> int:
    """How many entry fees ``player_id`` has paid for the tournament (1, 2, ... in order)."""
    paid = 0
    while await ledger.exists(session, entry_key(tournament_id, player_id, paid + 1)):
        paid += 1
    return paid


async def pay_entry(
    session: AsyncConnection,
    *,
    tournament_id: str,
    player_id: str,
    fee: int,
    starting_grant: int,
    now_us: int,
) -> None:
    """``player_id`` pays ``fee`` into the pool (INSUFFICIENT_CHIPS, nothing written, if their
    balance does not cover it)."""
    await wallets.ensure_wallet(session, player_id, starting_grant=starting_grant, now_us=now_us)
    paid = await _entries_paid(session, tournament_id, player_id)
    key = entry_key(tournament_id, player_id, paid + 1)
    if paid and not await ledger.exists(
        session, f"refund:{entry_key(tournament_id, player_id, paid)}"
    ):
        key = entry_key(tournament_id, player_id, paid)  # still registered: the same payment
    await ledger.post(
        session,
        key,
        ledger.ENTRY_FEE,
        [(accounts.player(player_id), -fee), (accounts.pool(tournament_id), fee)],
        player_id=player_id,
        tournament_id=tournament_id,
        now_us=now_us,
    )


async def refund_entry(
    session: AsyncConnection, *, tournament_id: str, player_id: str, now_us: int
) -> bool:
    """Give ``player_id`` back the last entry fee they paid for the tournament, once (under
    ``refund:<its entry key>``): True if a fee was refunded now, False if they paid none or it
    was refunded already."""
    paid = await _entries_paid(session, tournament_id, player_id)
    if not paid:
        return False
    key = entry_key(tournament_id, player_id, paid)
    payment = await ledger.transaction_by_key(session, key)
    if payment is None:
        return False
    fee = payment.amount_of(accounts.pool(tournament_id))
    posted = await ledger.post(
        session,
        f"refund:{key}",
        ledger.REFUND,
        [(accounts.pool(tournament_id), -fee), (accounts.player(player_id), fee)],
        player_id=player_id,
        tournament_id=tournament_id,
        now_us=now_us,
    )
    return posted.created


async def refund_entries(
    session: AsyncConnection, *, tournament_id: str, player_ids: Iterable[str], now_us: int
) -> int:
    """Give every entry fee ``player_ids`` paid back (a cancelled tournament): each player's
    last payment, once (``refund_entry``); how many were refunded now."""
    refunded = 0
    for player_id in player_ids:
        if await refund_entry(
            session, tournament_id=tournament_id, player_id=player_id, now_us=now_us
        ):
            refunded += 1
    return refunded


async def pay_prizes(
    session: AsyncConnection,
    *,
    tournament_id: str,
    prize_table: str,
    ranking: Sequence[tuple[int, str]],
    now_us: int,
) -> prizes.Payments:
    """Pay the prizes of ``prize_table`` (``prizes.prizes_to_json``) by ``ranking`` ((rank,
    player id), best first) and empty the pool: one transaction, keyed by the tournament."""
    pool_account = accounts.pool(tournament_id)
    pool = await ledger.balance(session, pool_account)
    payments = prizes.prize_payments(pool, prizes.prizes_from_json(prize_table), ranking)
    entries: list[tuple[str, int]] = []
    for player_id, amount in payments.from_pool.items():
        entries += [(pool_account, -amount), (accounts.player(player_id), amount)]
    for player_id, amount in payments.from_house.items():
        entries += [(accounts.GRANTS, -amount), (accounts.player(player_id), amount)]
    if payments.to_house:
        entries += [(pool_account, -payments.to_house), (accounts.FEES, payments.to_house)]
    if entries:
        await ledger.post(
            session,
            f"prizes:{tournament_id}",
            ledger.PRIZE,
            entries,
            tournament_id=tournament_id,
            now_us=now_us,
        )
    return payments


async def prize_pool(session: AsyncConnection, tournament_id: str) -> int:
    """The chips in the tournament's pool now."""
    return await ledger.balance(session, accounts.pool(tournament_id))


__all__ = [
    "entry_key",
    "pay_entry",
    "pay_prizes",
    "prize_pool",
    "refund_entries",
    "refund_entry",
]
