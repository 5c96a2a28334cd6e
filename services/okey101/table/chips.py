"""What a staked table's change owes the lobby's ledger (``LobbyService.RecordTableChips``).

The lobby owns the chips (docs/chips.md): it holds a player's stake in the table's pot before
it seats them (``SitRequest.stake_hold_key``, kept with the seat: ``SeatRecord.hold_key``), and
moves, pays out or refunds the pot when the table tells it what happened. ``owed`` turns a
change's numbered events into outbox rows (kind ``chips``), written with the change in its one
write, so the ledger follows exactly what the table committed:

- a seat holding a stake freed before the start (its SEAT_LEFT) -> SEAT_FREED, that seat (its
  stake is refunded);
- MATCH_STARTED -> MATCH_STARTED, every seat: a player's with their hold, a bot's empty (its
  stake comes from the house);
- MATCH_ENDED -> MATCH_ENDED, every seat with its place from the match result (partners: the
  team's place); a player who went away is still named (the bot played for them);
- TABLE_CLOSED -> MATCH_ABANDONED, every seat holding a stake (before the start, the players'
  holds; during the match, all four), even none: the lobby refunds whatever the pot holds.

The outbox sends them to the lobby in order, in batches, until it has them; the lobby records
each once by its key (the table and the event's sequence number). An unstaked table owes none:
``change.seal`` asks only when the table has a stake, so a move of an unstaked table costs
nothing here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from okey.v1 import common_pb2, lobby_pb2

from okey101.engine.hand import SEATS
from okey101.platform import convert
from okey101.table.errors import Invalid
from okey101.table.journal import OutboxColumns
from okey101.table.player_events import place
from okey101.table.records import TableRecord

#: The outbox rows' kind.
KIND: Final = "chips"
#: The largest stake a table takes (chips a seat): four of them and any sum of pots stay far
#: inside the ledger's 64-bit integers.
MAX_STAKE: Final = 10**12
#: The largest table fee, in percent of the pot.
MAX_FEE_PERCENT: Final = 50


def check_stake(stake: int, fee_percent: int) -> None:
    """A CreateTable's stake and fee (INVALID_ARGUMENT otherwise): a stake of at most
    ``MAX_STAKE`` (0: none), a fee of at most ``MAX_FEE_PERCENT``, and a fee only with a stake."""
    if stake > MAX_STAKE:
        raise Invalid("STAKE_TOO_LARGE", stake=str(stake), maximum=str(MAX_STAKE))
    if fee_percent > MAX_FEE_PERCENT:
        raise Invalid("BAD_FEE_PERCENT", fee_percent=str(fee_percent), maximum=str(MAX_FEE_PERCENT))
    if fee_percent and not stake:
        raise Invalid("FEE_WITHOUT_STAKE")


def owed(
    before: TableRecord,
    after: TableRecord,
    events: Iterable[common_pb2.Event],
    now_us: int,
) -> list[OutboxColumns]:
    """The rows owed to the lobby's ledger for ``events`` (numbered) of a change that took the
    table from ``before`` to ``after`` (module docstring)."""
    rows: list[OutboxColumns] = []
    for event in events:
        kind = event.kind
        if kind == common_pb2.EVENT_KIND_SEAT_LEFT:
            if before.state != common_pb2.TABLE_STATE_WAITING or event.seat >= SEATS:
                continue  # during the match the seat stays theirs, and so does the stake
            freed = before.seats[event.seat]
            if not freed.hold_key:
                continue
            seats = [_seat(event.seat, freed.player_id, freed.hold_key)]
            record = _record(after, event, lobby_pb2.TABLE_CHIPS_EVENT_KIND_SEAT_FREED, seats)
        elif kind == common_pb2.EVENT_KIND_MATCH_STARTED:
            seats = _every_seat(after)
            record = _record(after, event, lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_STARTED, seats)
        elif kind == common_pb2.EVENT_KIND_MATCH_ENDED:
            result = event.match_result
            seats = _every_seat(after)
            for seat in seats:
                seat.place = place(result, seat.seat)
            record = _record(after, event, lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ENDED, seats)
        elif kind == common_pb2.EVENT_KIND_TABLE_CLOSED:
            if before.state == common_pb2.TABLE_STATE_PLAYING:
                seats = _every_seat(before)
            else:  # before the start: the seats players hold with a stake
                seats = [
                    _seat(index, seat.player_id, seat.hold_key)
                    for index, seat in enumerate(before.seats)
                    if seat.hold_key and seat.held
                ]
            record = _record(after, event, lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ABANDONED, seats)
        else:
            continue
        rows.append(
            OutboxColumns(
                table_id=after.table_id,
                kind=KIND,
                key=record.key,
                payload=record.SerializeToString(),
                created_us=now_us,
                next_attempt_us=now_us,
            )
        )
    return rows


def _record(
    table: TableRecord,
    event: common_pb2.Event,
    kind: lobby_pb2.TableChipsEventKind,
    seats: list[lobby_pb2.TableChipsSeat],
) -> lobby_pb2.TableChipsRecord:
    return lobby_pb2.TableChipsRecord(
        key=f"{KIND}/{table.table_id}/{event.sequence}",
        kind=kind,
        table_id=table.table_id,
        stake=table.stake,
        fee_percent=table.fee_percent,
        seats=seats,
        partners=bool(convert.rules_from_proto(table.rules_message()).partners),
    )


def _every_seat(table: TableRecord) -> list[lobby_pb2.TableChipsSeat]:
    """The four seats of a match: a player's (sat in, away or left alike) with their hold, a
    bot's empty."""
    return [
        _seat(index, seat.player_id, seat.hold_key)
        if seat.kind == "player"
        else lobby_pb2.TableChipsSeat(seat=index)
        for index, seat in enumerate(table.seats)
    ]


def _seat(index: int, player_id: str, hold_key: str) -> lobby_pb2.TableChipsSeat:
    return lobby_pb2.TableChipsSeat(seat=index, player_id=player_id, hold_key=hold_key)


__all__ = ["KIND", "MAX_FEE_PERCENT", "MAX_STAKE", "check_stake", "owed"]
