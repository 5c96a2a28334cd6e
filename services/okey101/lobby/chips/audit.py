"""The books, proven from the ledger's entries alone (``okey101 audit chips``), and the report of
pairs of players whose chips flow one way (``--pairs``). Read only: nothing is ever changed.

**The checks** (each failure is one difference, named by its ``check``):

- ``cached_balance``: every account's balance recomputed as the sum of its entries equals the
  cached ``lobby_chip_balances`` row (an account missing on either side counts as 0);
- ``balance_after``: each entry's recorded ``balance_after`` equals the running sum of its
  account's entries up to it, in entry order (the first break per account is listed);
- ``unbalanced_transaction`` / ``empty_transaction``: every transaction's entries sum to zero,
  and it has entries;
- ``unknown_account``: every entry names an account of a known kind;
- ``negative_balance``: no player's, pot's or pool's balance is below zero;
- ``closed_pot_not_empty``: every pot paid out or refunded holds nothing;
- ``pot_holds_mismatch``: every open or started pot holds exactly its stakes still held or in
  play (``lobby_chip_holds``), and ``pot_without_row``: no pot account without its pot;
- ``identity``: the chips in circulation equal the chips created less the chips destroyed.

**The identity.** With this account set, chips come into circulation (players' wallets, pots,
pools) only from the two sources, ``house:grants`` and ``house:adjustments``, and leave it only
into the two sinks, ``house:fees`` and ``house:bots``. So, from the entries:

    created    = -(balance of house:grants + balance of house:adjustments)
    destroyed  =   balance of house:fees   + balance of house:bots
    circulating=   players + pots + pools  = created - destroyed

which is the sum of every balance being zero, itself the sum of every transaction being zero.
The sources' balances are negative (they give), a take by an operator moves chips back into
``house:adjustments`` (it destroys them, counted as less created); ``house:bots`` is positive
when bots took more from the players than the house staked for them, and negative when the
players won more from bots than bots won: bots then put chips into circulation, and its
"destroyed" share is negative.

**Pairs.** For every table whose pot was paid out, each player's result is the sum of their
entries at that table (stake, refund, payout: won or lost), and the bots' the house's
``house:bots`` entries there. The losers' chips are attributed to the winners in proportion:
a loser who lost L of the table's total losses T gave each winner who won W the amount
``L * W / T`` (the fee is the part of T no winner took). Summed over every table two players
shared, per pair: the matches they played together, the net chips that went from one to the
other, and in how many of those matches the chips went each way. Pairs with at least
``min_matches`` matches, the largest net first: the shape of chip dumping, for a person to
judge; nothing is done to anyone.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.chips import accounts, ledger, stakes
from okey101.lobby.models import (
    chip_balances,
    chip_entries,
    chip_holds,
    chip_pots,
    chip_transactions,
)
from okey101.platform.database import Database

_t = chip_transactions.c
_e = chip_entries.c
_b = chip_balances.c
_h = chip_holds.c
_p = chip_pots.c


@dataclass
class Audit:
    """What the audit found: its differences, and the totals it computed from the entries."""

    differences: list[dict[str, Any]] = field(default_factory=list)
    #: Each kind's total (``accounts.KINDS``), from the entries.
    totals: dict[str, int] = field(default_factory=dict)
    transactions: int = 0
    entries: int = 0
    accounts: int = 0

    @property
    def chips_balanced(self) -> bool:
        return not self.differences

    @property
    def created(self) -> int:
        return -(self.totals.get(accounts.GRANTS, 0) + self.totals.get(accounts.ADJUSTMENTS, 0))

    @property
    def destroyed(self) -> int:
        return self.totals.get(accounts.FEES, 0) + self.totals.get(accounts.BOTS, 0)

    @property
    def circulating(self) -> int:
        return sum(self.totals.get(kind, 0) for kind in ("players", "pots", "pools"))

    def as_json(self) -> dict[str, Any]:
        return {
            "chips_balanced": self.chips_balanced,
            "differences": self.differences,
            "totals": self.totals,
            "created": self.created,
            "destroyed": self.destroyed,
            "circulating": self.circulating,
            "transactions": self.transactions,
            "entries": self.entries,
            "accounts": self.accounts,
        }


@contextlib.asynccontextmanager
async def snapshot(database: Database) -> AsyncIterator[AsyncConnection]:
    """A read-only transaction that sees one moment of the ledger, whatever a running lobby
    writes meanwhile (PostgreSQL: REPEATABLE READ; SQLite: a read transaction under WAL)."""
    if database.dialect != "postgresql":
        async with database.read() as session:
            yield session
        return
    engine = database.engine.execution_options(
        isolation_level="REPEATABLE READ", postgresql_readonly=True
    )
    async with engine.begin() as session:
        yield session


async def audit_chips(session: AsyncConnection) -> Audit:
    """Every check of the module docstring, in ``session`` (a ``snapshot``: the checks read
    the ledger several times and must see it at one moment)."""
    audit = Audit(totals={kind: 0 for kind in accounts.KINDS})
    found = audit.differences
    sums = {
        row.account: int(row.total)
        for row in await session.execute(
            select(_e.account, func.sum(_e.amount).label("total")).group_by(_e.account)
        )
    }
    cached = {
        row.account: int(row.balance)
        for row in await session.execute(select(_b.account, _b.balance))
    }
    audit.accounts = len(set(sums) | set(cached))
    for account in sorted(set(sums) | set(cached)):
        derived, kept = sums.get(account, 0), cached.get(account, 0)
        if derived != kept:
            found.append(
                {"check": "cached_balance", "account": account, "cached": kept, "entries": derived}
            )
    for account, total in sorted(sums.items()):
        try:
            kind = accounts.kind_of(account)
        except ValueError:
            found.append({"check": "unknown_account", "account": account, "balance": total})
            continue
        audit.totals[kind] += total
        if total < 0 and not accounts.may_go_negative(account):
            found.append({"check": "negative_balance", "account": account, "balance": total})
    found.extend(await _transactions(session, audit))
    found.extend(await _chains(session))
    found.extend(await _pots(session, sums))
    if audit.circulating != audit.created - audit.destroyed:
        found.append(
            {
                "check": "identity",
                "circulating": audit.circulating,
                "created": audit.created,
                "destroyed": audit.destroyed,
            }
        )
    return audit


async def _transactions(session: AsyncConnection, audit: Audit) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    audit.transactions = int(
        await session.scalar(select(func.count()).select_from(chip_transactions)) or 0
    )
    audit.entries = int(await session.scalar(select(func.count()).select_from(chip_entries)) or 0)
    unbalanced = await session.execute(
        select(_e.transaction_id, _t.key, func.sum(_e.amount).label("total"))
        .join(chip_transactions, _t.transaction_id == _e.transaction_id)
        .group_by(_e.transaction_id, _t.key)
        .having(func.sum(_e.amount) != 0)
        .order_by(_e.transaction_id)
    )
    for row in unbalanced:
        found.append(
            {
                "check": "unbalanced_transaction",
                "transaction_id": int(row.transaction_id),
                "key": row.key,
                "sum": int(row.total),
            }
        )
    empty = await session.execute(
        select(_t.transaction_id, _t.key)
        .outerjoin(chip_entries, _e.transaction_id == _t.transaction_id)
        .where(_e.entry_id.is_(None))
        .order_by(_t.transaction_id)
    )
    for blank in empty:
        found.append(
            {
                "check": "empty_transaction",
                "transaction_id": int(blank.transaction_id),
                "key": blank.key,
            }
        )
    return found


async def _chains(session: AsyncConnection) -> list[dict[str, Any]]:
    """Each entry's balance_after against its account's running sum (streamed: any size)."""
    found: list[dict[str, Any]] = []
    account, running, broken = None, 0, False
    rows = await session.stream(
        select(_e.account, _e.entry_id, _e.amount, _e.balance_after).order_by(
            _e.account, _e.entry_id
        )
    )
    async for row in rows:
        if row.account != account:
            account, running, broken = row.account, 0, False
        running += int(row.amount)
        if not broken and int(row.balance_after) != running:
            broken = True
            found.append(
                {
                    "check": "balance_after",
                    "account": row.account,
                    "entry_id": int(row.entry_id),
                    "recorded": int(row.balance_after),
                    "running": running,
                }
            )
    return found


async def _pots(session: AsyncConnection, sums: dict[str, int]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    pots = {row.table_id: row.state for row in await session.execute(select(_p.table_id, _p.state))}
    held = {
        row.table_id: int(row.total)
        for row in await session.execute(
            select(_h.table_id, func.sum(_h.amount).label("total"))
            .where(_h.state.in_((stakes.HELD, stakes.IN_PLAY)))
            .group_by(_h.table_id)
        )
    }
    for table_id, state in sorted(pots.items()):
        chips = sums.get(accounts.pot(table_id), 0)
        if state in stakes.SETTLED:
            if chips != 0:
                found.append(
                    {"check": "closed_pot_not_empty", "table_id": table_id, "state": state,
                     "balance": chips}
                )  # fmt: skip
        elif chips != held.get(table_id, 0):
            found.append(
                {"check": "pot_holds_mismatch", "table_id": table_id, "state": state,
                 "balance": chips, "holds": held.get(table_id, 0)}
            )  # fmt: skip
    for account in sorted(sums):
        table_id = accounts.table_of(account)
        if table_id is not None and table_id not in pots:
            found.append({"check": "pot_without_row", "account": account, "balance": sums[account]})
    return found


# --------------------------------------------------------------------------------------------
# Pairs


@dataclass
class _Pair:
    matches: int = 0
    #: Chips attributed from the first player of the pair (in name order) to the second.
    net: Fraction = field(default_factory=Fraction)
    first_gave: int = 0
    second_gave: int = 0


BOTS = "(bots)"


async def chip_pairs(session: AsyncConnection, *, min_matches: int) -> list[dict[str, Any]]:
    """The pairs report (module docstring), the largest net flow first."""
    paid = select(_t.table_id).where(_t.reason == ledger.PAYOUT)
    rows = await session.execute(
        select(_t.table_id, _e.account, _t.reason, func.sum(_e.amount).label("total"))
        .join(chip_transactions, _t.transaction_id == _e.transaction_id)
        .where(_t.table_id.in_(paid), _e.account.notlike(accounts.POT_PREFIX + "%"))
        .group_by(_t.table_id, _e.account, _t.reason)
    )
    tables: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for row in rows:
        tables[row.table_id][row.account][row.reason] = int(row.total)
    pairs: dict[tuple[str, str], _Pair] = defaultdict(_Pair)
    for by_account in tables.values():
        results = _results(by_account)
        players = sorted(p for p in results if p != BOTS)
        flows = _flows(results)
        for index, first in enumerate(players):
            for second in players[index + 1 :]:
                pair = pairs[(first, second)]
                pair.matches += 1
                given = flows.get((first, second), Fraction(0)) - flows.get(
                    (second, first), Fraction(0)
                )
                pair.net += given
                if given > 0:
                    pair.first_gave += 1
                elif given < 0:
                    pair.second_gave += 1
    report: list[dict[str, Any]] = []
    for (first, second), pair in pairs.items():
        if pair.matches < min_matches or pair.net == 0:
            continue
        giver, taker = (first, second) if pair.net > 0 else (second, first)
        gave, took = (
            (pair.first_gave, pair.second_gave)
            if pair.net > 0
            else (pair.second_gave, pair.first_gave)
        )
        report.append(
            {
                "from_player": giver,
                "to_player": taker,
                "matches": pair.matches,
                "net_chips": round(float(abs(pair.net)), 2),
                "matches_from_to": gave,
                "matches_to_from": took,
            }
        )
    report.sort(
        key=lambda line: (-float(line["net_chips"]), -int(line["matches"]), line["from_player"])
    )
    return report


def _results(by_account: dict[str, dict[str, int]]) -> dict[str, int]:
    """Each player's (and the bots') result at one table: players who staked and were not
    refunded (who played), and the bots if they staked."""
    results: dict[str, int] = {}
    for account, by_reason in by_account.items():
        if by_reason.get(ledger.STAKE, 0) + by_reason.get(ledger.REFUND, 0) >= 0:
            continue  # no stake in play: refunded before the start, or never staked
        player_id = accounts.player_of(account)
        if player_id is not None:
            results[player_id] = sum(by_reason.values())
        elif account == accounts.BOTS:
            results[BOTS] = sum(by_reason.values())
    return results


def _flows(results: dict[str, int]) -> dict[tuple[str, str], Fraction]:
    """Each loser's loss attributed to the winners, in proportion to what each won."""
    losses = {who: -result for who, result in results.items() if result < 0}
    gains = {who: result for who, result in results.items() if result > 0}
    lost = sum(losses.values())
    if not lost:
        return {}
    return {
        (loser, winner): Fraction(loss * gain, lost)
        for loser, loss in losses.items()
        for winner, gain in gains.items()
    }


def text_report(audit: Audit, pairs: Iterable[dict[str, Any]] | None = None) -> str:
    """The audit (and the pairs report) as lines for a person."""
    lines = [
        f"chips balanced: {'yes' if audit.chips_balanced else 'NO'}"
        f" ({audit.transactions} transactions, {audit.entries} entries, "
        f"{audit.accounts} accounts)",
        f"created {audit.created} (grants and adjustments) - destroyed {audit.destroyed} "
        f"(fees and the bots' sink) = circulating {audit.circulating}",
        "totals: " + ", ".join(f"{kind} {total}" for kind, total in audit.totals.items()),
    ]
    if audit.differences:
        lines.append(f"{len(audit.differences)} differences:")
        lines.extend(
            "  " + " ".join(f"{key}={value}" for key, value in difference.items())
            for difference in audit.differences
        )
    if pairs is not None:
        listed = list(pairs)
        lines.append(f"pairs with chips flowing one way: {len(listed)}")
        lines.extend(
            f"  {line['from_player']} -> {line['to_player']}: {line['net_chips']} chips over "
            f"{line['matches']} matches ({line['matches_from_to']} one way, "
            f"{line['matches_to_from']} the other)"
            for line in listed
        )
    return "\n".join(lines)


__all__ = ["Audit", "audit_chips", "chip_pairs", "snapshot", "text_report"]
