"""What the table tells the lobby about a staked table's chips (``RecordTableChips``, sent by the
table's outbox), and what it does to the pot: ``record_table_chips``.

- ``SEAT_FREED``: the named hold, if still ``held``, goes back to its player.
- ``MATCH_STARTED``: the holds of the seats listed go ``in_play``; a bot's seat (no player)
  gets its stake from ``house:bots`` (key ``botstake:<table>:<seat>``, kept as a hold of no
  player); any other hold of the table still ``held`` (a seat left before the start, whose
  SEAT_FREED has not come yet) is refunded. The pot is ``started``.
- ``MATCH_ENDED``: the pot is paid out once (key ``payout:<table>``): the fee and the
  remainder to ``house:fees``, an equal share to each seat placed first (``payouts``), a
  bot's share to ``house:bots``; its holds are ``paid``, the pot ``paid`` and empty. A player
  who left during the match still owns their seat (a bot played it) and is paid if it wins.
- ``MATCH_ABANDONED``: every hold of the pot, players' and bots', is refunded; the pot is
  ``refunded`` and empty.

Each record locks its pot's row first. A record for a table without a pot, or one that came
already (its pot's state says so, or its hold's), changes nothing. The table's outbox may send
a record again or late: a MATCH_ENDED that comes before its MATCH_STARTED starts the match
from its own seats first; a MATCH_STARTED or SEAT_FREED after the pot was settled does
nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from okey.v1 import lobby_pb2
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.chips import accounts, ledger, stakes
from okey101.lobby.chips.payouts import split_pot, winning_seats
from okey101.lobby.models import chip_holds, chip_pots
from okey101.platform.database import insert_ignoring_conflicts
from okey101.platform.logs import get_logger

#: What a record did, for the call's log line.
NOTHING: Final = "nothing"
REFUNDED: Final = "refunded"
STARTED: Final = "started"
PAID: Final = "paid"
ABANDONED: Final = "abandoned"

_h = chip_holds.c
_p = chip_pots.c
log = get_logger(service="lobby", component="chips")


async def record_table_chips(
    session: AsyncConnection, record: lobby_pb2.TableChipsRecord, now_us: int
) -> str:
    """Apply ``record`` (checked by the caller) in ``session``'s transaction: what it did."""
    kind = record.kind
    if kind == lobby_pb2.TABLE_CHIPS_EVENT_KIND_SEAT_FREED:
        refunded = False
        for seat in record.seats:
            if seat.hold_key:
                known = await stakes.hold_of(session, seat.hold_key)
                if known is not None and known.table_id == record.table_id:
                    refunded |= await stakes.refund_hold(
                        session, hold_key=seat.hold_key, now_us=now_us
                    )
        return REFUNDED if refunded else NOTHING
    pot = await stakes.lock_pot(session, record.table_id)
    if pot is None or pot.state in stakes.SETTLED:
        return NOTHING
    if (record.stake, record.fee_percent) != (pot.stake, pot.fee_percent) and record.stake:
        # The pot's stake and fee, fixed by its first hold, are what it pays by.
        log.warning(
            "a table's chips record disagrees with its pot",
            table_id=pot.table_id,
            record_stake=record.stake,
            pot_stake=pot.stake,
            record_fee=record.fee_percent,
            pot_fee=pot.fee_percent,
        )
    if kind == lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_STARTED:
        if pot.state != stakes.OPEN:
            return NOTHING
        await _start(session, pot, record.seats, now_us)
        return STARTED
    if kind == lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ENDED:
        if pot.state == stakes.OPEN:  # its MATCH_STARTED has not come: the seats here say it
            await _start(session, pot, record.seats, now_us)
        await _pay(session, pot, record, now_us)
        return PAID
    if kind == lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ABANDONED:
        await _abandon(session, pot, now_us)
        return ABANDONED
    raise ledger.LedgerError(f"unknown table chips event kind {kind}")


async def _start(
    session: AsyncConnection,
    pot: stakes.Pot,
    seats: Iterable[lobby_pb2.TableChipsSeat],
    now_us: int,
) -> None:
    table_id = pot.table_id
    in_play: set[str] = set()
    for seat in sorted(seats, key=lambda s: s.seat):
        if not seat.player_id:
            await _bot_stake(session, pot, seat.seat, now_us)
            continue
        hold = await stakes.hold_of(session, seat.hold_key, lock=True) if seat.hold_key else None
        if (
            hold is None
            or hold.table_id != table_id
            or hold.player_id != seat.player_id
            or hold.state != stakes.HELD
        ):
            # The table seated a player whose stake the lobby does not hold: they play for
            # nothing in the pot (a bug on one side; the audit still balances).
            log.warning(
                "a seat started without its stake held",
                table_id=table_id,
                seat=seat.seat,
                player_id=seat.player_id,
                hold_key=seat.hold_key,
                found=None if hold is None else hold.state,
            )
            continue
        await session.execute(
            update(chip_holds)
            .where(_h.hold_key == hold.hold_key)
            .values(state=stakes.IN_PLAY, seat=seat.seat)
        )
        in_play.add(hold.hold_key)
    for hold in await stakes.holds_of(session, table_id, (stakes.HELD,), lock=True):
        if hold.hold_key not in in_play:
            await stakes.refund(session, hold, now_us)
    await session.execute(
        update(chip_pots).where(_p.table_id == table_id).values(state=stakes.STARTED)
    )


async def _bot_stake(session: AsyncConnection, pot: stakes.Pot, seat: int, now_us: int) -> None:
    """A bot's stake at ``seat``, from the house, kept as a hold of no player."""
    key = f"botstake:{pot.table_id}:{seat}"
    await ledger.post(
        session,
        key,
        ledger.STAKE,
        [(accounts.BOTS, -pot.stake), (accounts.pot(pot.table_id), pot.stake)],
        table_id=pot.table_id,
        now_us=now_us,
    )
    await session.execute(
        insert_ignoring_conflicts(chip_holds, session.dialect.name).values(
            hold_key=key,
            table_id=pot.table_id,
            player_id="",
            seat=seat,
            amount=pot.stake,
            state=stakes.IN_PLAY,
            created_us=now_us,
        )
    )


async def _pay(
    session: AsyncConnection, pot: stakes.Pot, record: lobby_pb2.TableChipsRecord, now_us: int
) -> None:
    table_id = pot.table_id
    winners = winning_seats(((s.seat, s.place) for s in record.seats), partners=record.partners)
    if not winners:  # the caller checks a first place is named: a result without one pays back
        log.warning("a match ended without a winner: its stakes are refunded", table_id=table_id)
        await _abandon(session, pot, now_us)
        return
    chips = await ledger.balance(session, accounts.pot(table_id))
    if chips > 0:
        split = split_pot(chips, pot.fee_percent, winners)
        owner = {s.seat: s.player_id for s in record.seats}
        entries: list[tuple[str, int]] = [
            (accounts.pot(table_id), -chips),
            (accounts.FEES, split.kept),
        ]
        for seat, share in split.shares.items():
            player_id = owner.get(seat, "")
            entries.append((accounts.player(player_id) if player_id else accounts.BOTS, share))
        await ledger.post(
            session, f"payout:{table_id}", ledger.PAYOUT, entries, table_id=table_id, now_us=now_us
        )
    await session.execute(
        update(chip_holds)
        .where(_h.table_id == table_id, _h.state.in_((stakes.HELD, stakes.IN_PLAY)))
        .values(state=stakes.PAID, settled_us=now_us)
    )
    await _settle(session, table_id, stakes.POT_PAID, now_us)


async def _abandon(session: AsyncConnection, pot: stakes.Pot, now_us: int) -> None:
    states = (stakes.HELD, stakes.IN_PLAY)
    for hold in await stakes.holds_of(session, pot.table_id, states, lock=True):
        await stakes.refund(session, hold, now_us)
    await _settle(session, pot.table_id, stakes.POT_REFUNDED, now_us)


async def _settle(session: AsyncConnection, table_id: str, state: str, now_us: int) -> None:
    left = await ledger.balance(session, accounts.pot(table_id))
    if left != 0:
        raise ledger.LedgerError(f"the pot of {table_id} holds {left} chips once {state}")
    await session.execute(
        update(chip_pots).where(_p.table_id == table_id).values(state=state, settled_us=now_us)
    )


__all__ = ["ABANDONED", "NOTHING", "PAID", "REFUNDED", "STARTED", "record_table_chips"]
