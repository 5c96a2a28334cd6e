"""Staked tables and tournament entry fees over real gRPC: the lobby with the real table,
scoring, rules and bot services (the table telling the lobby of its chips through its outbox),
on SQLite and on PostgreSQL. Every scenario ends with the books proved from the entries alone
(``okey101 audit chips``' check)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest
from okey.v1 import common_pb2, lobby_pb2, table_pb2

from okey101.lobby.chips import accounts, ledger
from okey101.lobby.chips.audit import audit_chips, snapshot
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.stack import free_port

from support.databases import TEST_DATABASE_ENV, postgres_database
from support.lobby import Client, bearer, failure, lobby_client, make_organiser, refused, run
from support.lobby_peers import Peers, lobby_for, peers_running, play_seat

ONE_HAND = common_pb2.RuleSet(
    preset=common_pb2.RULE_PRESET_BOOMBALA,
    match_end=common_pb2.MATCH_END_FIXED_HANDS,
    match_hands=1,
)
BOTS = [lobby_pb2.BotSeat(seat=seat, level=common_pb2.BOT_LEVEL_RANDOM) for seat in (1, 2, 3)]
DATABASES = [
    "sqlite",
    pytest.param(
        "postgresql",
        marks=pytest.mark.skipif(
            not os.environ.get(TEST_DATABASE_ENV),
            reason=f"{TEST_DATABASE_ENV} is not set: the PostgreSQL runs are skipped",
        ),
    ),
]


@contextlib.contextmanager
def database_url(database: str) -> Iterator[str | None]:
    """The test's own PostgreSQL database (dropped afterwards), or None for SQLite files."""
    if database == "postgresql":
        with postgres_database() as url:
            yield url
    else:
        yield None


@asynccontextmanager
async def stack(
    tmp_path: Path, url: str | None, **settings: Any
) -> AsyncIterator[tuple[Peers, Client]]:
    """Peers and a lobby the table reports to, on ``url`` (one PostgreSQL database the two
    services share, their tables prefixed apart) or SQLite files."""
    port = free_port()
    async with (
        peers_running(tmp_path, url, lobby_address=f"127.0.0.1:{port}") as peers,
        lobby_client(lobby_for(tmp_path, peers, port=port, database_url=url, **settings)) as client,
    ):
        yield peers, client


async def wallet(client: Client, token: str) -> lobby_pb2.GetWalletResponse:
    answer: lobby_pb2.GetWalletResponse = await client.stub.GetWallet(
        lobby_pb2.GetWalletRequest(), metadata=bearer(token)
    )
    return answer


async def until(predicate: Any, what: str, timeout: float = 30.0) -> Any:
    async with asyncio.timeout(timeout):
        while True:
            value = await predicate()
            if value:
                return value
            await asyncio.sleep(0.05)
    raise AssertionError(what)


async def books_balanced(client: Client) -> None:
    async with snapshot(client.lobby.servicer.database) as session:
        report = await audit_chips(session)
    assert report.chips_balanced, report.differences


async def balance_of(client: Client, account: str) -> int:
    async with client.lobby.servicer.database.read() as session:
        return await ledger.balance(session, account)


def operator(tmp_path: Path) -> tuple[tuple[str, str], ...]:
    """An operator's service token, signed with the local-mode key the lobby uses."""
    return bearer(TokenIssuer(dev_signing_key(tmp_path)).issue("service:operator", "service"))


@pytest.mark.parametrize("database", DATABASES)
def test_a_staked_table_holds_each_stake_pays_the_winner_and_refunds_a_seat_left(
    tmp_path: Path, database: str
) -> None:
    async def scenario() -> None:
        async with stack(tmp_path, url) as (peers, client):
            host, friend, poor = [await client.guest(name=n) for n in ("Host", "Friend", "Poor")]
            host_auth = bearer(host.tokens.access_token)
            start = (await wallet(client, host.tokens.access_token)).balance
            assert start == 1000  # the starting grant, on the first touch
            # A stake not among the levels is refused and writes nothing.
            bad = await refused(
                client.stub.HostTable(
                    lobby_pb2.HostTableRequest(request_id="h0", rules=ONE_HAND, stake=77),
                    metadata=host_auth,
                )
            )
            assert (bad.code, bad.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_STAKE")
            hosted = await client.stub.HostTable(
                lobby_pb2.HostTableRequest(
                    request_id="h1", rules=ONE_HAND, stake=100, host_seat=0,
                    bots=[lobby_pb2.BotSeat(seat=3, level=common_pb2.BOT_LEVEL_RANDOM)],
                ),
                metadata=host_auth,
            )  # fmt: skip
            table = hosted.table
            assert (table.stake, table.pot, table.fee_percent) == (100, 100, 5)
            assert (await wallet(client, host.tokens.access_token)).held == 100
            # A friend joins and leaves before the start: their stake comes back.
            friend_auth = bearer(friend.tokens.access_token)
            joined = await client.stub.JoinTable(
                lobby_pb2.JoinTableRequest(request_id="j1", table_id=table.table_id, seat=1),
                metadata=friend_auth,
            )
            assert joined.table.pot == 200
            assert (await wallet(client, friend.tokens.access_token)).balance == 900
            await client.stub.LeaveTable(
                lobby_pb2.LeaveTableRequest(request_id="l1", table_id=table.table_id),
                metadata=friend_auth,
            )

            async def refunded() -> bool:
                mine = await wallet(client, friend.tokens.access_token)
                return mine.balance == 1000 and mine.held == 0

            await until(refunded, "the friend's stake refunded")
            # A player who cannot cover the stake is refused before sitting, told the balance.
            await client.stub.AdjustChips(
                lobby_pb2.AdjustChipsRequest(
                    request_id="take", player_id=poor.player.player_id, amount=-950,
                    reason="test: a poor player",
                ),
                metadata=operator(tmp_path),
            )  # fmt: skip
            short = await refused(
                client.stub.JoinTable(
                    lobby_pb2.JoinTableRequest(request_id="j2", table_id=table.table_id),
                    metadata=bearer(poor.tokens.access_token),
                )
            )
            assert (short.code, short.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "INSUFFICIENT_CHIPS",
            )
            assert "50" in short.message
            # Friend sits for good; the host starts with bots in the empty seat.
            seated = await client.stub.JoinTable(
                lobby_pb2.JoinTableRequest(request_id="j3", table_id=table.table_id, seat=1),
                metadata=friend_auth,
            )
            # A retry (its answer lost) is the same staked sit again: the same seat, nothing
            # held twice.
            again = await client.stub.JoinTable(
                lobby_pb2.JoinTableRequest(request_id="j3", table_id=table.table_id, seat=1),
                metadata=friend_auth,
            )
            assert (again.seat, again.table.pot) == (seated.seat, seated.table.pot) == (1, 200)
            assert (await wallet(client, friend.tokens.access_token)).balance == 900
            started = await peers.tables.Start(
                table_pb2.StartRequest(
                    request_id="s1", table_id=table.table_id, fill_with_bots=True
                ),
                metadata=host_auth,
            )
            assert started.table.pot == 400  # two stakes, two from the house for its bots
            await asyncio.gather(
                play_seat(peers, host.tokens.access_token, table.table_id, 0, 1),
                play_seat(peers, friend.tokens.access_token, table.table_id, 1, 2),
            )

            async def paid() -> Any:
                a = await wallet(client, host.tokens.access_token)
                b = await wallet(client, friend.tokens.access_token)
                return (a, b) if a.held == 0 and b.held == 0 else None

            host_wallet, friend_wallet = await until(paid, "the pot paid out")
            # The pot (400) less the 5% fee (20) went to the winners: the two players' part
            # to them, the bots' to the house's bots account (which paid their 200); what an
            # equal split leaves over goes to the fees.
            won_by_players = host_wallet.balance + friend_wallet.balance - 1800
            won_by_bots = await balance_of(client, accounts.BOTS) + 200
            fees = await balance_of(client, accounts.FEES)
            assert won_by_players >= 0 and won_by_bots >= 0 and 20 <= fees <= 22
            assert won_by_players + won_by_bots + fees == 400
            assert await balance_of(client, accounts.pot(table.table_id)) == 0
            entries = await client.stub.ListWalletEntries(
                lobby_pb2.ListWalletEntriesRequest(), metadata=host_auth
            )
            reasons = [entry.reason for entry in entries.entries]
            assert lobby_pb2.WALLET_ENTRY_REASON_STAKE in reasons
            assert reasons[-1] == lobby_pb2.WALLET_ENTRY_REASON_GRANT
            await books_balanced(client)

    with database_url(database) as url:
        run(scenario())


@pytest.mark.parametrize("database", DATABASES)
def test_quick_match_at_a_stake_seats_only_that_stake_and_holds_it(
    tmp_path: Path, database: str
) -> None:
    async def scenario() -> None:
        async with stack(tmp_path, url, quick_match_wait_seconds=0.0) as (peers, client):
            rich, other = await client.guest(name="Rich"), await client.guest(name="Other")
            too_much = await refused(
                client.stub.JoinQuickMatch(
                    lobby_pb2.JoinQuickMatchRequest(request_id="q0", stake=10_000),
                    metadata=bearer(rich.tokens.access_token),
                )
            )
            assert too_much.reason == "BAD_STAKE"
            await client.stub.AdjustChips(
                lobby_pb2.AdjustChipsRequest(
                    request_id="give", player_id=rich.player.player_id, amount=500,
                    reason="test: a richer player",
                ),
                metadata=operator(tmp_path),
            )  # fmt: skip
            await client.stub.AdjustChips(
                lobby_pb2.AdjustChipsRequest(
                    request_id="take", player_id=other.player.player_id, amount=-600,
                    reason="test: a poorer player",
                ),
                metadata=operator(tmp_path),
            )  # fmt: skip
            poor = await refused(
                client.stub.JoinQuickMatch(
                    lobby_pb2.JoinQuickMatchRequest(request_id="q1", stake=500),
                    metadata=bearer(other.tokens.access_token),
                )
            )
            assert (poor.code, poor.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "INSUFFICIENT_CHIPS",
            )
            assert "400" in poor.message
            ticket = await client.stub.JoinQuickMatch(
                lobby_pb2.JoinQuickMatchRequest(request_id="q2", stake=500),
                metadata=bearer(rich.tokens.access_token),
            )
            assert ticket.ticket.stake == 500

            async def matched() -> Any:
                status = await client.stub.GetQuickMatchStatus(
                    lobby_pb2.GetQuickMatchStatusRequest(ticket_id=ticket.ticket.ticket_id),
                    metadata=bearer(rich.tokens.access_token),
                )
                return status.ticket if status.ticket.table_id else None

            seated = await until(matched, "the staked ticket matched")
            mine = await wallet(client, rich.tokens.access_token)
            assert (mine.balance, mine.held) == (1000, 500)
            table = (
                await peers.tables.GetTable(
                    table_pb2.GetTableRequest(table_id=seated.table_id),
                    metadata=bearer(rich.tokens.access_token),
                )
            ).table
            assert table.stake == 500 and table.pot == 2000
            await books_balanced(client)

    with database_url(database) as url:
        run(scenario())


@pytest.mark.parametrize("database", DATABASES)
def test_a_tournament_entry_fee_is_paid_into_its_pool_and_refunded_on_cancel(
    tmp_path: Path, database: str
) -> None:
    async def scenario() -> None:
        async with stack(tmp_path, url) as (_peers, client):
            creator = await client.guest(name="Organiser")
            await make_organiser(client.stub, creator, operator(tmp_path))
            auth = bearer(creator.tokens.access_token)
            bad = await refused(
                client.stub.CreateTournament(
                    lobby_pb2.CreateTournamentRequest(
                        request_id="t0", name="Cup", rules=ONE_HAND, max_players=8,
                        entry_fee=50,
                        prizes=[lobby_pb2.TournamentPrize(place=1, share_percent=80),
                                lobby_pb2.TournamentPrize(place=2, share_percent=30)],
                    ),
                    metadata=auth,
                )
            )  # fmt: skip
            assert (bad.code, bad.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PRIZE")
            created = await client.stub.CreateTournament(
                lobby_pb2.CreateTournamentRequest(
                    request_id="t1", name="Cup", rules=ONE_HAND, max_players=8, entry_fee=50,
                    prizes=[lobby_pb2.TournamentPrize(place=1, share_percent=70),
                            lobby_pb2.TournamentPrize(place=2, share_percent=30)],
                ),
                metadata=auth,
            )  # fmt: skip
            tournament_id = created.tournament.tournament_id
            assert created.tournament.entry_fee == 50
            assert [p.share_percent for p in created.tournament.prizes] == [70, 30]
            players = [await client.guest(name=f"P{n}") for n in range(3)]
            for player in players:
                answer = await client.stub.RegisterForTournament(
                    lobby_pb2.RegisterForTournamentRequest(
                        request_id=uuid.uuid4().hex, tournament_id=tournament_id
                    ),
                    metadata=bearer(player.tokens.access_token),
                )
            assert answer.tournament.prize_pool == 150
            assert (await wallet(client, players[0].tokens.access_token)).balance == 950
            await client.stub.CancelTournament(
                lobby_pb2.CancelTournamentRequest(
                    request_id="c1", tournament_id=tournament_id, reason="test"
                ),
                metadata=auth,
            )
            for player in players:
                assert (await wallet(client, player.tokens.access_token)).balance == 1000
            got = await client.stub.GetTournament(
                lobby_pb2.GetTournamentRequest(tournament_id=tournament_id), metadata=auth
            )
            assert got.tournament.prize_pool == 0
            await books_balanced(client)

    with database_url(database) as url:
        run(scenario())


@pytest.mark.parametrize("database", DATABASES)
def test_two_tables_at_once_for_a_balance_that_covers_one_stake_seat_it_once(
    tmp_path: Path, database: str
) -> None:
    async def scenario() -> None:
        async with stack(tmp_path, url) as (_peers, client):
            hosts = [await client.guest(name=f"Host {n}") for n in range(2)]
            tables = []
            for number, host in enumerate(hosts):
                hosted = await client.stub.HostTable(
                    lobby_pb2.HostTableRequest(
                        request_id=f"h{number}", rules=ONE_HAND, stake=500, host_seat=0
                    ),
                    metadata=bearer(host.tokens.access_token),
                )
                tables.append(hosted.table.table_id)
            player = await client.guest(name="Both")
            auth = bearer(player.tokens.access_token)
            await client.stub.AdjustChips(
                lobby_pb2.AdjustChipsRequest(
                    request_id="take", player_id=player.player.player_id, amount=-300,
                    reason="test: 700 covers one stake of 500",
                ),
                metadata=operator(tmp_path),
            )  # fmt: skip
            answers = await asyncio.gather(
                *(
                    client.stub.JoinTable(
                        lobby_pb2.JoinTableRequest(request_id=f"j-{table_id}", table_id=table_id),
                        metadata=auth,
                    )
                    for table_id in tables
                ),
                return_exceptions=True,
            )
            seated = [a for a in answers if isinstance(a, lobby_pb2.JoinTableResponse)]
            refusals = [a for a in answers if isinstance(a, grpc.aio.AioRpcError)]
            assert len(seated) == 1 and len(refusals) == 1, answers
            refusal = failure(refusals[0])
            assert (refusal.code, refusal.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "INSUFFICIENT_CHIPS",
            )
            mine = await wallet(client, player.tokens.access_token)
            assert (mine.balance, mine.held) == (200, 500)
            await books_balanced(client)

    with database_url(database) as url:
        run(scenario())
