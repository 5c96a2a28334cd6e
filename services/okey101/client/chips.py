"""Chips (docs/chips.md) as the terminal client shows them: a number of chips in the player's
language, the balance (``LobbyService.GetWallet``), a staked table's stake and pot (``Table.stake``,
``Table.pot``), a wallet entry as a line of the history (``ListWalletEntries``) and a match's
payout, read from the wallet's PAYOUT entries for that table.

Pure, but for ``payout_of``, which asks the wallet until the payout is there: the table tells the
lobby through an outbox, so the entry may come a moment after MATCH_ENDED.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC
from typing import Final

from okey.v1 import common_pb2, lobby_pb2
from rich.text import Text

from okey101.client.i18n import Language, Strings

#: Why chips moved, in the catalogue's words.
REASONS: Final[dict[int, str]] = {
    lobby_pb2.WALLET_ENTRY_REASON_GRANT: "entry_grant",
    lobby_pb2.WALLET_ENTRY_REASON_DAILY_GRANT: "entry_daily_grant",
    lobby_pb2.WALLET_ENTRY_REASON_STAKE: "entry_stake",
    lobby_pb2.WALLET_ENTRY_REASON_PAYOUT: "entry_payout",
    lobby_pb2.WALLET_ENTRY_REASON_FEE: "entry_fee",
    lobby_pb2.WALLET_ENTRY_REASON_REFUND: "entry_refund",
    lobby_pb2.WALLET_ENTRY_REASON_PRIZE: "entry_prize",
    lobby_pb2.WALLET_ENTRY_REASON_ENTRY_FEE: "entry_entry_fee",
    lobby_pb2.WALLET_ENTRY_REASON_ADJUSTMENT: "entry_adjustment",
}

#: Asks the wallet for its newest entries.
Entries = Callable[[], Awaitable[lobby_pb2.ListWalletEntriesResponse]]


def chips(amount: int, language: Language) -> str:
    """1000 -> ``1,000`` in English, ``1.000`` in Turkish."""
    text = f"{amount:,}"
    return text.replace(",", ".") if language == "tr" else text


def signed(amount: int, language: Language) -> str:
    """An entry's amount with its sign: ``+100``, ``-50``."""
    return ("+" if amount > 0 else "") + chips(amount, language)


def wallet_line(wallet: lobby_pb2.GetWalletResponse | None, s: Strings) -> str:
    """``Balance 1,000 · in play 100`` ("" before the wallet is known)."""
    if wallet is None:
        return ""
    line = s("chips_balance", chips=chips(wallet.balance, s.language))
    if wallet.held:
        line += " · " + s("chips_held", chips=chips(wallet.held, s.language))
    return line


def stake_line(table: common_pb2.Table | None, s: Strings) -> str:
    """``Stake 100 · Pot 400`` for a staked table ("" for an unstaked one)."""
    if table is None or not table.stake:
        return ""
    stake = s("chips_stake", chips=chips(table.stake, s.language))
    return f"{stake} · {s('chips_pot', chips=chips(table.pot, s.language))}"


def title_suffix(
    table: common_pb2.Table | None, wallet: lobby_pb2.GetWalletResponse | None, s: Strings
) -> str:
    """What the title adds after the table's rules: the stake and pot, the balance."""
    parts = [part for part in (stake_line(table, s), wallet_line(wallet, s)) if part]
    return " · ".join(parts)


def entry_text(entry: lobby_pb2.WalletEntry, s: Strings) -> tuple[str, str, str, str, str]:
    """One entry as the history's columns: when, what, chips (signed), balance after, what it
    belongs to (the table or tournament)."""
    when = ""
    if entry.create_time.seconds:
        moment = entry.create_time.ToDatetime(tzinfo=UTC).astimezone()
        when = moment.strftime("%d.%m %H:%M" if s.language == "tr" else "%d %b %H:%M")
    what = s(REASONS.get(entry.reason, "entry_other"))
    if entry.note:
        what = f"{what}: {entry.note}"
    belongs = ""
    if entry.table_id:
        belongs = s("entry_table", id=entry.table_id)
    elif entry.tournament_id:
        belongs = s("entry_tournament", id=entry.tournament_id)
    return (
        when,
        what,
        signed(entry.amount, s.language),
        chips(entry.balance_after, s.language),
        belongs,
    )


def is_winner(result: common_pb2.MatchResult, seat: int | None) -> bool:
    return seat is not None and any(item.winner for item in result.seats if item.seat == seat)


async def payout_of(
    entries: Entries, table_id: str, *, patience: float = 60.0, pause: float = 0.3
) -> int | None:
    """The chips the wallet's PAYOUT entries for ``table_id`` add up to, once there is one;
    None if none comes within ``patience`` seconds."""
    deadline = time.monotonic() + patience
    while True:
        answer = await entries()
        paid = [
            entry.amount
            for entry in answer.entries
            if entry.table_id == table_id and entry.reason == lobby_pb2.WALLET_ENTRY_REASON_PAYOUT
        ]
        if paid:
            return sum(paid)
        if time.monotonic() > deadline:
            return None
        await asyncio.sleep(pause)
        pause = min(pause * 2, 3.0)


def payout_text(kind: str, s: Strings, *, amount: int = 0, stake: int = 0) -> Text:
    """The result's line about the pot: ``waiting``, ``paid``, ``none`` or ``late``."""
    language = s.language
    if kind == "paid":
        line = s("payout_paid", chips=chips(amount, language), stake=chips(stake, language))
        return Text(line, style="bold yellow")
    if kind == "none":
        return Text(s("payout_none", stake=chips(stake, language)))
    if kind == "late":
        return Text(s("payout_late"), style="dim")
    return Text(s("payout_waiting"), style="dim")


__all__ = [
    "REASONS",
    "chips",
    "entry_text",
    "is_winner",
    "payout_of",
    "payout_text",
    "signed",
    "stake_line",
    "title_suffix",
    "wallet_line",
]
