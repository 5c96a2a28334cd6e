"""The lobby's chips (docs/chips.md): players' wallets on one double-entry ledger, stakes held
in staked tables' pots, and the pots paid out from what the table reports. A module per
concept:

- ``accounts``: the ledger's account names and kinds;
- ``ledger``: the one place that writes chips (``post``), and its reads;
- ``settings``: the operator's chip settings as the lobby uses them (``ChipSettings``);
- ``wallets``: the starting grant, the daily grant, operators' adjustments, what a wallet shows;
- ``stakes``: stake levels, a stake held when a player sits, refunded once if the seat is freed;
- ``payouts``: how a pot is split (pure arithmetic);
- ``table_chips``: what the table reports (``RecordTableChips``) and what it does to the pot;
- ``prizes``, ``tournament_chips``: tournaments' prize tables, entry fees and prizes;
- ``audit``: the books proven from the entries alone, and the pairs report
  (``okey101 audit chips``).

Every write runs in the caller's transaction (``Database.transaction``); the RPCs are
``lobby.rpc.wallet``.
"""

from __future__ import annotations

from okey101.lobby.chips.ledger import Entry, KeyReused, LedgerError, Posted, post
from okey101.lobby.chips.settings import ChipSettings
from okey101.lobby.chips.stakes import check_stake, hold_stake, pot_chips, refund_hold
from okey101.lobby.chips.table_chips import record_table_chips

__all__ = [
    "ChipSettings",
    "Entry",
    "KeyReused",
    "LedgerError",
    "Posted",
    "check_stake",
    "hold_stake",
    "post",
    "pot_chips",
    "record_table_chips",
    "refund_hold",
]
