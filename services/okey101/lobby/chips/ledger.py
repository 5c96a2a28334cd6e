"""The ledger: the one place that writes chips (``post``), and its reads.

**Double entry.** Every movement is one transaction of entries, each an account and a signed
amount, that sum to zero: a chip leaves one account for each chip that enters another. Entries
that do not sum to zero, an unknown account or reason, are a programming error
(``LedgerError``), never written.

**Once per cause.** A transaction is keyed by the idempotency key of its cause
(``grant:start:<player>``, ``payout:<table>``, ``refund:<hold>``, ...; docs/chips.md lists
them), unique in ``lobby_chip_transactions``. Posting a key again returns the first
transaction and changes nothing; posting it again with other entries is ``KeyReused`` (a
programming error, or a request id reused). Two transactions racing with one key: the second's
``INSERT ... ON CONFLICT DO NOTHING`` waits for the first (PostgreSQL; SQLite's writers take
turns) and then finds it.

**Never overdrawn.** A debit of a player's, a pot's or a pool's account is one conditional
``UPDATE ... SET balance = balance - x WHERE balance >= x``: under concurrency the second of two
debits that together exceed the balance re-reads the row once the first commits, matches
nothing and is refused (``InsufficientChips`` for a player, with the balance and the amount),
on SQLite and PostgreSQL alike. The house's accounts may go negative. Every balance is kept
within ``BALANCE_LIMIT``, far inside BIGINT, so no sum overflows.

**Balances are derived.** ``lobby_chip_balances`` caches each account's balance; each entry
records the balance after it; ``okey101 audit chips`` recomputes both from the entries alone.

**Locks in one order.** Balance rows are updated in account order, and only after the
transaction's key is claimed; entries are inserted after every balance row is locked, so an
account's entries are numbered (``entry_id``) in the order its balance changed. A caller that
also locks a pot row (``stakes``, ``table_chips``) locks it before it posts.

``post`` runs inside the caller's transaction (an ``AsyncConnection`` from
``Database.transaction``), within a savepoint: a refusal (InsufficientChips) leaves nothing of
the transaction behind, so a caller may catch it and go on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.chips import accounts
from okey101.lobby.errors import Conflict, InsufficientChips
from okey101.lobby.models import chip_balances, chip_entries, chip_transactions
from okey101.platform.database import dialect_insert, insert_ignoring_conflicts

#: Why chips moved (``lobby_chip_transactions.reason``; WalletEntryReason in lobby.proto).
GRANT: Final = "grant"
DAILY_GRANT: Final = "daily_grant"
STAKE: Final = "stake"
PAYOUT: Final = "payout"
FEE: Final = "fee"
REFUND: Final = "refund"
PRIZE: Final = "prize"
ENTRY_FEE: Final = "entry_fee"
ADJUSTMENT: Final = "adjustment"
REASONS: Final = frozenset(
    {GRANT, DAILY_GRANT, STAKE, PAYOUT, FEE, REFUND, PRIZE, ENTRY_FEE, ADJUSTMENT}
)

#: No balance goes past this, either way (int64 ends at about 9.2e18).
BALANCE_LIMIT: Final = 10**18
#: The longest idempotency key.
KEY_MAX: Final = 255

_t = chip_transactions.c
_e = chip_entries.c
_b = chip_balances.c


class LedgerError(Exception):
    """A programming error: entries that do not balance, an unknown account or reason, a pot
    asked to pay more than it holds. Never an answer to a player's input."""


class KeyReused(LedgerError):
    """A key posted again with other entries (or another reason) than its first transaction."""


@dataclass(frozen=True, order=True)
class Entry:
    """One account's side of a transaction: chips into it (positive) or out (negative)."""

    account: str
    amount: int


@dataclass(frozen=True)
class Posted:
    """A transaction as posted: its id, whether this call made it (False: it existed, and
    nothing changed), its entries, and each account's balance right after it."""

    transaction_id: int
    key: str
    reason: str
    created: bool
    created_us: int
    entries: tuple[Entry, ...]
    balances: Mapping[str, int] = field(default_factory=dict)

    def amount_of(self, account: str) -> int:
        return sum(entry.amount for entry in self.entries if entry.account == account)


def normalized(entries: Iterable[Entry | tuple[str, int]]) -> tuple[Entry, ...]:
    """``entries`` merged by account (a bot's two seats both pay ``house:bots``), zeros left
    out, in account order; ``LedgerError`` unless they sum to zero and name real accounts."""
    merged: dict[str, int] = {}
    for item in entries:
        account, amount = (item.account, item.amount) if isinstance(item, Entry) else item
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise LedgerError(f"an amount is a whole number of chips, not {amount!r}")
        try:
            accounts.kind_of(account)
        except ValueError as error:
            raise LedgerError(str(error)) from None
        merged[account] = merged.get(account, 0) + amount
    normal = tuple(Entry(a, x) for a, x in sorted(merged.items()) if x != 0)
    if sum(entry.amount for entry in normal) != 0:
        raise LedgerError(f"entries must sum to zero: {normal}")
    if not normal:
        raise LedgerError("a transaction moves chips: every entry is zero")
    if any(abs(entry.amount) > BALANCE_LIMIT for entry in normal):
        raise LedgerError(f"an entry past the ledger's limit: {normal}")
    return normal


async def post(
    session: AsyncConnection,
    key: str,
    reason: str,
    entries: Iterable[Entry | tuple[str, int]],
    *,
    now_us: int,
    player_id: str | None = None,
    table_id: str | None = None,
    tournament_id: str | None = None,
    note: str | None = None,
) -> Posted:
    """Post one transaction of ``entries`` under ``key`` in ``session``'s transaction (module
    docstring): the transaction, new or as first posted. ``InsufficientChips`` if a player's
    balance does not cover their debit (nothing written)."""
    normal = normalized(entries)
    if reason not in REASONS:
        raise LedgerError(f"unknown reason {reason!r}")
    if not 0 < len(key) <= KEY_MAX:
        raise LedgerError(f"an idempotency key is 1 to {KEY_MAX} characters: {key!r}")
    async with session.begin_nested():
        claimed = await session.execute(
            insert_ignoring_conflicts(chip_transactions, session.dialect.name)
            .values(
                key=key,
                reason=reason,
                player_id=player_id,
                table_id=table_id,
                tournament_id=tournament_id,
                note=note,
                created_us=now_us,
            )
            .returning(_t.transaction_id)
        )
        transaction_id = claimed.scalar_one_or_none()
        if transaction_id is None:
            return await _posted_before(session, key, reason, normal)
        balances = {entry.account: await _apply(session, entry, now_us) for entry in normal}
        await session.execute(
            chip_entries.insert(),
            [
                {
                    "transaction_id": transaction_id,
                    "account": entry.account,
                    "amount": entry.amount,
                    "balance_after": balances[entry.account],
                }
                for entry in normal
            ],
        )
    return Posted(int(transaction_id), key, reason, True, now_us, normal, balances)


async def _apply(session: AsyncConnection, entry: Entry, now_us: int) -> int:
    """Move ``entry`` into its account's balance: the balance after it."""
    account, amount = entry.account, entry.amount
    if amount < 0 and not accounts.may_go_negative(account):
        debited = await session.execute(
            update(chip_balances)
            .where(_b.account == account, _b.balance >= -amount)
            .values(balance=_b.balance + amount, updated_us=now_us)
            .returning(_b.balance)
        )
        after = debited.scalar_one_or_none()
        if after is None:
            held = await balance(session, account)
            if accounts.player_of(account) is not None:
                raise InsufficientChips(balance=held, needed=-amount)
            raise LedgerError(f"{account} holds {held} chips and cannot pay {-amount}")
        return int(after)
    # A credit, or the house's debit: one upsert, refused past the limit.
    insert = dialect_insert(chip_balances, session.dialect.name).values(
        account=account, balance=amount, updated_us=now_us
    )
    within = (
        _b.balance <= BALANCE_LIMIT - amount if amount > 0 else _b.balance >= amount - BALANCE_LIMIT
    )
    upserted = await session.execute(
        insert.on_conflict_do_update(
            index_elements=["account"],
            set_={"balance": _b.balance + amount, "updated_us": now_us},
            where=within,
        ).returning(_b.balance)
    )
    after = upserted.scalar_one_or_none()
    if after is None:
        raise Conflict("CHIP_BALANCE_LIMIT", limit=BALANCE_LIMIT)
    return int(after)


async def _posted_before(
    session: AsyncConnection, key: str, reason: str, normal: tuple[Entry, ...]
) -> Posted:
    found = await transaction_by_key(session, key)
    if found is None:  # the conflicting row vanished: only a rolled-back racer does that
        raise LedgerError(f"transaction {key!r} conflicted but cannot be read")
    if found.reason != reason or found.entries != normal:
        raise KeyReused(f"{key!r} was posted with other entries: {found.entries}")
    return found


async def transaction_by_key(session: AsyncConnection, key: str) -> Posted | None:
    """The transaction posted under ``key`` (``created`` False), or None."""
    row = (
        await session.execute(
            select(_t.transaction_id, _t.reason, _t.created_us).where(_t.key == key)
        )
    ).first()
    if row is None:
        return None
    lines = (
        await session.execute(
            select(_e.account, _e.amount, _e.balance_after)
            .where(_e.transaction_id == row.transaction_id)
            .order_by(_e.account)
        )
    ).all()
    return Posted(
        int(row.transaction_id),
        key,
        row.reason,
        False,
        int(row.created_us),
        tuple(Entry(line.account, int(line.amount)) for line in lines),
        {line.account: int(line.balance_after) for line in lines},
    )


async def exists(session: AsyncConnection, key: str) -> bool:
    """Whether a transaction was posted under ``key``."""
    return (await session.scalar(select(_t.transaction_id).where(_t.key == key))) is not None


async def balance(session: AsyncConnection, account: str) -> int:
    """``account``'s balance (0 for an account never touched)."""
    found = await session.scalar(select(_b.balance).where(_b.account == account))
    return int(found or 0)


@dataclass(frozen=True)
class Line:
    """One entry of an account with its transaction (a wallet's line)."""

    entry_id: int
    transaction_id: int
    amount: int
    balance_after: int
    reason: str
    table_id: str
    tournament_id: str
    note: str
    created_us: int


async def lines(
    session: AsyncConnection, account: str, *, before_entry: int | None, limit: int
) -> list[Line]:
    """``account``'s entries newest first, those before ``before_entry`` (None: the newest),
    at most ``limit``."""
    query = (
        select(
            _e.entry_id,
            _e.transaction_id,
            _e.amount,
            _e.balance_after,
            _t.reason,
            _t.table_id,
            _t.tournament_id,
            _t.note,
            _t.created_us,
        )
        .join(chip_transactions, _t.transaction_id == _e.transaction_id)
        .where(_e.account == account)
        .order_by(_e.entry_id.desc())
        .limit(limit)
    )
    if before_entry is not None:
        query = query.where(_e.entry_id < before_entry)
    return [_line(row) for row in await session.execute(query)]


async def line_of(session: AsyncConnection, transaction_id: int, account: str) -> Line | None:
    """``account``'s entry in transaction ``transaction_id``."""
    query = (
        select(
            _e.entry_id,
            _e.transaction_id,
            _e.amount,
            _e.balance_after,
            _t.reason,
            _t.table_id,
            _t.tournament_id,
            _t.note,
            _t.created_us,
        )
        .join(chip_transactions, _t.transaction_id == _e.transaction_id)
        .where(_e.transaction_id == transaction_id, _e.account == account)
    )
    row = (await session.execute(query)).first()
    return None if row is None else _line(row)


def _line(row: Any) -> Line:
    return Line(
        entry_id=int(row.entry_id),
        transaction_id=int(row.transaction_id),
        amount=int(row.amount),
        balance_after=int(row.balance_after),
        reason=row.reason,
        table_id=row.table_id or "",
        tournament_id=row.tournament_id or "",
        note=row.note or "",
        created_us=int(row.created_us),
    )


__all__ = [
    "ADJUSTMENT",
    "BALANCE_LIMIT",
    "DAILY_GRANT",
    "ENTRY_FEE",
    "FEE",
    "GRANT",
    "KEY_MAX",
    "PAYOUT",
    "PRIZE",
    "REASONS",
    "REFUND",
    "STAKE",
    "Entry",
    "KeyReused",
    "LedgerError",
    "Line",
    "Posted",
    "balance",
    "exists",
    "line_of",
    "lines",
    "normalized",
    "post",
    "transaction_by_key",
]
