"""The ledger's accounts: their names, their kinds, and which may go below zero.

An account is a string (docs/chips.md, The accounts):

- ``player:<player_id>``: a player's wallet; never negative.
- ``pot:<table_id>``: a staked table's pot (one table, one match, one pot); never negative, and
  empty once it is paid out or refunded.
- ``pool:<tournament_id>``: a tournament's prize pool (entry fees in, prizes out); never
  negative.
- ``house:grants``: where granted chips (the starting and daily grants) come from; it goes
  negative by every chip it grants.
- ``house:adjustments``: the other side of operators' grants and takes (AdjustChips).
- ``house:fees``: the table fees the house keeps, and the remainders of pots that do not
  divide evenly among their winners.
- ``house:bots``: pays bots' stakes and takes bots' winnings; its balance is the chips bots
  took out of circulation (positive) or put into it (negative).

The house's accounts may hold any balance; the others are debited only by a conditional
update that leaves them at zero or more (``ledger``).
"""

from __future__ import annotations

from typing import Final, Literal

PLAYER_PREFIX: Final = "player:"
POT_PREFIX: Final = "pot:"
POOL_PREFIX: Final = "pool:"

GRANTS: Final = "house:grants"
ADJUSTMENTS: Final = "house:adjustments"
FEES: Final = "house:fees"
BOTS: Final = "house:bots"
HOUSE: Final = frozenset({GRANTS, ADJUSTMENTS, FEES, BOTS})

#: An account's kind, as the audit totals them.
Kind = Literal[
    "players", "pots", "pools", "house:grants", "house:adjustments", "house:fees", "house:bots"
]
KINDS: Final[tuple[Kind, ...]] = (
    "players",
    "pots",
    "pools",
    "house:grants",
    "house:adjustments",
    "house:fees",
    "house:bots",
)


def player(player_id: str) -> str:
    return PLAYER_PREFIX + player_id


def pot(table_id: str) -> str:
    return POT_PREFIX + table_id


def pool(tournament_id: str) -> str:
    return POOL_PREFIX + tournament_id


def kind_of(account: str) -> Kind:
    """The kind of ``account`` (``ValueError`` for a name that is none of them)."""
    if account.startswith(PLAYER_PREFIX) and len(account) > len(PLAYER_PREFIX):
        return "players"
    if account.startswith(POT_PREFIX) and len(account) > len(POT_PREFIX):
        return "pots"
    if account.startswith(POOL_PREFIX) and len(account) > len(POOL_PREFIX):
        return "pools"
    if account == GRANTS:
        return "house:grants"
    if account == ADJUSTMENTS:
        return "house:adjustments"
    if account == FEES:
        return "house:fees"
    if account == BOTS:
        return "house:bots"
    raise ValueError(f"not a ledger account: {account!r}")


def may_go_negative(account: str) -> bool:
    """Whether ``account`` may be debited below zero: only the house's may."""
    return account in HOUSE


def player_of(account: str) -> str | None:
    """The player of a ``player:`` account (None for any other)."""
    return account[len(PLAYER_PREFIX) :] if account.startswith(PLAYER_PREFIX) else None


def table_of(account: str) -> str | None:
    """The table of a ``pot:`` account (None for any other)."""
    return account[len(POT_PREFIX) :] if account.startswith(POT_PREFIX) else None


__all__ = [
    "ADJUSTMENTS",
    "BOTS",
    "FEES",
    "GRANTS",
    "HOUSE",
    "KINDS",
    "PLAYER_PREFIX",
    "POOL_PREFIX",
    "POT_PREFIX",
    "Kind",
    "kind_of",
    "may_go_negative",
    "player",
    "player_of",
    "pool",
    "pot",
    "table_of",
]
