"""``okey101 audit chips`` and ``okey101 chips adjust`` against a running lobby, on SQLite and
PostgreSQL: a healthy ledger balances and its totals prove the identity; a ledger tampered with
behind the lobby's back (a cached balance, an entry, a closed pot) is caught with the
difference named; the pairs report finds the player who keeps losing to one other; an operator's
adjustment goes through the lobby with a service token from the local signing key."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import uuid
from collections.abc import Callable
from typing import Any

from okey.v1 import lobby_pb2
from sqlalchemy import update

from okey101.cli import main
from okey101.lobby.chips import accounts
from okey101.lobby.models import chip_balances, chip_entries, chip_pots

from support.chips import ABANDONED, ENDED, STARTED, ChipsWorld, Player, record, seat
from support.lobby import run


async def _cli(*argv: str) -> tuple[int, str, str]:
    """``okey101 argv`` in a thread of its own (it runs its own event loop, or blocks on gRPC
    while this loop serves the lobby): its exit status, stdout and stderr."""

    def call() -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(list(argv))
        return status, out.getvalue(), err.getvalue()

    return await asyncio.to_thread(call)


async def _audit(url: str, *more: str) -> tuple[int, dict[str, Any]]:
    status, out, _err = await _cli("audit", "chips", "--database-url", url, "--json", *more)
    return status, json.loads(out)


async def _match(
    world: ChipsWorld, table: str, players: list[Player], places: list[int], stake: int = 100
) -> None:
    """A staked match of ``players`` (the other seats bots') to its end with ``places``."""
    keys = [await world.hold(p, table, stake) for p in players]
    seats = [seat(i, p, k) for i, (p, k) in enumerate(zip(players, keys, strict=True))]
    seats += [seat(i) for i in range(len(players), 4)]
    await world.record(record(STARTED, table, *seats))
    for item, place in zip(seats, places, strict=True):
        item.place = place
    await world.record(record(ENDED, table, *seats))


def test_a_healthy_ledger_balances_and_proves_the_identity(
    chips: Callable[..., Any], chips_database: str
) -> None:
    async def scenario() -> None:
        async with chips() as world:
            status, found = await _audit(chips_database)
            assert status == 0 and found["chips_balanced"] and found["transactions"] == 0
            a, b, c = [await world.player(name) for name in ("A", "B", "C")]
            await _match(world, "t-1", [a, b], [1, 2, 3, 4])  # a wins 380 of 400
            await _match(world, "t-2", [a, c], [3, 4, 1, 2])  # a bot wins: to house:bots
            keys = [await world.hold(p, "t-3", 50) for p in (b, c)]
            await world.record(
                record(STARTED, "t-3", seat(0, b, keys[0]), seat(1, c, keys[1]), seat(2), seat(3))
            )  # in play
            await world.stub.AdjustChips(
                lobby_pb2.AdjustChipsRequest(
                    request_id="adj", player_id=c.player_id, amount=-30, reason="chargeback"
                ),
                metadata=world.operator,
            )
            status, found = await _audit(chips_database)
            assert status == 0, found
            assert found["chips_balanced"] and found["differences"] == []
            totals = found["totals"]
            assert totals["house:grants"] == -3000
            assert totals["house:adjustments"] == 30
            assert totals["house:fees"] == 40
            # Two bots' stakes at each table (100, 100, 50), one bot's win (380).
            assert totals["house:bots"] == -400 + 380 - 100
            assert totals["pots"] == 200
            assert found["created"] == 3000 - 30
            assert found["destroyed"] == totals["house:fees"] + totals["house:bots"]
            assert totals["players"] == 1180 + 850 + 820
            assert found["circulating"] == totals["players"] + totals["pots"] == 2970 + 80
            status, text, _ = await _cli("audit", "chips", "--database-url", chips_database)
            assert status == 0 and text.startswith("chips balanced: yes")

    run(scenario())


def test_a_tampered_ledger_is_caught_with_its_differences(
    chips: Callable[..., Any], chips_database: str
) -> None:
    async def scenario() -> None:
        async with chips() as world:
            a, b = await world.player("A"), await world.player("B")
            await _match(world, "t-paid", [a, b], [2, 1, 3, 4])
            # A cached balance changed behind the ledger's back.
            async with world.database.write() as session:
                await session.execute(
                    update(chip_balances)
                    .where(chip_balances.c.account == accounts.player(a.player_id))
                    .values(balance=chip_balances.c.balance + 500)
                )
            status, found = await _audit(chips_database)
            assert status == 1 and not found["chips_balanced"]
            assert found["differences"] == [
                {
                    "check": "cached_balance",
                    "account": accounts.player(a.player_id),
                    "cached": 1400,
                    "entries": 900,
                }
            ]
            status, text, _ = await _cli("audit", "chips", "--database-url", chips_database)
            assert status == 1 and "chips balanced: NO" in text and "cached_balance" in text
            # An entry changed: its transaction no longer sums to zero, its account's running
            # balance breaks, the identity fails.
            async with world.database.write() as session:
                await session.execute(
                    update(chip_entries)
                    .where(chip_entries.c.account == accounts.player(b.player_id))
                    .where(chip_entries.c.amount > 0)
                    .values(amount=chip_entries.c.amount + 1)
                )
                await session.execute(
                    update(chip_pots).where(chip_pots.c.table_id == "t-paid").values(state="open")
                )
            status, found = await _audit(chips_database)
            checks = {difference["check"] for difference in found["differences"]}
            assert status == 1
            assert {
                "cached_balance",
                "unbalanced_transaction",
                "balance_after",
                "identity",
            } <= checks, found["differences"]
            # A pot "settled" with chips still in it.
            c = await world.player("C")
            await world.hold(c, "t-open", 100)
            async with world.database.write() as session:
                await session.execute(
                    update(chip_pots).where(chip_pots.c.table_id == "t-open").values(state="paid")
                )
            status, found = await _audit(chips_database)
            assert {
                "check": "closed_pot_not_empty",
                "table_id": "t-open",
                "state": "paid",
                "balance": 100,
            } in found["differences"]
            await world.record(record(ABANDONED, "t-open"))  # a settled pot: nothing moves

    run(scenario())


def test_the_pairs_report_finds_chips_flowing_one_way(
    chips: Callable[..., Any], chips_database: str
) -> None:
    async def scenario() -> None:
        async with chips(chips_starting_grant=5000) as world:
            dumper, taker, honest = [await world.player(n) for n in ("D", "T", "H")]
            for number in range(5):  # D always loses to T
                await _match(world, f"t-dump-{number}", [dumper, taker], [4, 1, 2, 3])
            for number in range(2):  # H and T: one each
                places = [1, 2, 3, 4] if number else [2, 1, 3, 4]
                await _match(world, f"t-fair-{number}", [honest, taker], places)
            status, found = await _audit(chips_database, "--pairs", "--min-matches", "3")
            assert status == 0
            (pair,) = found["pairs"]
            assert (pair["from_player"], pair["to_player"]) == (dumper.player_id, taker.player_id)
            assert pair["matches"] == 5
            assert (pair["matches_from_to"], pair["matches_to_from"]) == (5, 0)
            # Each match: D lost 100 of the 300 lost (the bots 200), T won 280: a third of it
            # from D.
            assert pair["net_chips"] == round(5 * 100 * 280 / 300, 2) == 466.67
            status, found = await _audit(chips_database, "--pairs", "--min-matches", "2")
            assert [p["to_player"] for p in found["pairs"]] == [taker.player_id]  # H: net 0
            status, text, _ = await _cli(
                "audit", "chips", "--database-url", chips_database, "--pairs"
            )
            assert f"{dumper.player_id} -> {taker.player_id}: 466.67 chips over 5 matches" in text

    run(scenario())


def test_an_operator_adjusts_chips_from_the_command_line(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips() as world:
            ayse = await world.player()
            target = world.client.lobby.target
            base = ["chips", "adjust", "--lobby", target, "--var-dir", str(world.var_dir)]
            request_id = uuid.uuid4().hex
            granted = [*base, "--player", ayse.player_id, "--amount", "120", "--reason",
                       "a lost match refunded", "--request-id", request_id, "--json"]  # fmt: skip
            status, out, err = await _cli(*granted)
            assert status == 0, err
            answer = json.loads(out)
            assert (answer["balance"], answer["entry"]["note"]) == ("1120", "a lost match refunded")
            assert await _cli(*granted) == (0, out, "")  # a retry: the same answer
            status, out, err = await _cli(
                *base, "--player", ayse.player_id, "--amount", "-5000", "--reason", "x"
            )
            assert status == 1 and "FAILED_PRECONDITION" in err and "1120" in err
            status, out, err = await _cli(
                *base, "--player", ayse.player_id, "--amount", "-120", "--reason", "undo"
            )
            assert status == 0 and "balance 1000" in out
            assert (await world.wallet(ayse)).balance == 1000
            assert (await world.audit()).chips_balanced

    run(scenario())
