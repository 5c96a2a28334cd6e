"""Unregistering from a tournament before its start (issue #37, point 2) over real gRPC, on
SQLite and on PostgreSQL: the place freed, the entry fee refunded once, a re-registration
paying again, refusals after the start and for a player not registered, and the books proved
from the entries alone (``okey101 audit chips``' check)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from okey.v1 import lobby_pb2
from sqlalchemy import select

from okey101.lobby.chips import accounts
from okey101.lobby.models import tournament_players

from support.chips import ChipsWorld, Player, chips_world_with_tables
from support.lobby import make_organiser, refused, run

FEE = 50
REFUND = lobby_pb2.WALLET_ENTRY_REASON_REFUND
ENTRY_FEE = lobby_pb2.WALLET_ENTRY_REASON_ENTRY_FEE


async def _cup(world: ChipsWorld, entry_fee: int = FEE) -> tuple[str, Any]:
    """A new tournament (its id) and its organiser's auth."""
    organiser = await world.client.guest(name="Organiser")
    await make_organiser(world.stub, organiser, world.operator)
    auth = (("authorization", f"Bearer {organiser.tokens.access_token}"),)
    created = await world.stub.CreateTournament(
        lobby_pb2.CreateTournamentRequest(
            request_id=uuid.uuid4().hex, name="Cup", max_players=8, entry_fee=entry_fee
        ),
        metadata=auth,
    )
    return created.tournament.tournament_id, auth


async def _register(world: ChipsWorld, player: Player, tournament_id: str) -> Any:
    return await world.stub.RegisterForTournament(
        lobby_pb2.RegisterForTournamentRequest(
            request_id=uuid.uuid4().hex, tournament_id=tournament_id
        ),
        metadata=player.auth,
    )


def _unregister(world: ChipsWorld, player: Player, tournament_id: str, request_id: str = "") -> Any:
    return world.stub.UnregisterFromTournament(
        lobby_pb2.UnregisterFromTournamentRequest(
            request_id=request_id or uuid.uuid4().hex, tournament_id=tournament_id
        ),
        metadata=player.auth,
    )


async def _reasons(world: ChipsWorld, player: Player, tournament_id: str) -> list[int]:
    """The reasons of the player's wallet entries for the tournament, oldest first."""
    answer = await world.stub.ListWalletEntries(
        lobby_pb2.ListWalletEntriesRequest(page_size=200), metadata=player.auth
    )
    return [e.reason for e in reversed(answer.entries) if e.tournament_id == tournament_id]


async def _registrations(world: ChipsWorld, tournament_id: str) -> dict[str, int]:
    p = tournament_players.c
    async with world.database.read() as session:
        rows = await session.execute(
            select(p.player_id, p.registration).where(p.tournament_id == tournament_id)
        )
        return {str(player): int(number) for player, number in rows}


async def _balanced(world: ChipsWorld) -> None:
    report = await world.audit()
    assert report.chips_balanced, report.differences


_with_tables = chips_world_with_tables


def test_unregistering_refunds_the_fee_once_and_frees_the_place(
    chips: Callable[..., Any],
) -> None:
    async def scenario() -> None:
        async with chips() as world:
            tournament_id, _ = await _cup(world)
            players = [await world.player(f"P{n}") for n in range(3)]
            for player in players:
                await _register(world, player, tournament_id)
            start = world.starting_grant
            assert (await world.wallet(players[0])).balance == start - FEE
            assert await _registrations(world, tournament_id) == {
                players[0].player_id: 1,
                players[1].player_id: 2,
                players[2].player_id: 3,
            }
            answer = await _unregister(world, players[0], tournament_id, "u1")
            assert answer.tournament.registered_players == 2
            assert answer.tournament.prize_pool == 2 * FEE
            assert (await world.wallet(players[0])).balance == start
            assert await _reasons(world, players[0], tournament_id) == [ENTRY_FEE, REFUND]
            # The registrations stay 1, 2, ... in their order.
            assert await _registrations(world, tournament_id) == {
                players[1].player_id: 1,
                players[2].player_id: 2,
            }
            # A retry with the same request id answers as the first and refunds nothing.
            again = await _unregister(world, players[0], tournament_id, "u1")
            assert again == answer
            assert (await world.wallet(players[0])).balance == start
            assert await _reasons(world, players[0], tournament_id) == [ENTRY_FEE, REFUND]
            # A new request when no longer registered is refused, and moves nothing.
            gone = await refused(_unregister(world, players[0], tournament_id))
            assert (gone.code, gone.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "NOT_REGISTERED",
            )
            assert gone.message
            assert await world.balance(accounts.pool(tournament_id)) == 2 * FEE
            await _balanced(world)

    run(scenario())


def test_registering_again_pays_again_and_a_cancel_refunds_it_once(
    tmp_path: Path, chips_database: str
) -> None:
    async def scenario() -> None:
        async with _with_tables(tmp_path, chips_database) as world:
            tournament_id, organiser = await _cup(world)
            player, other = await world.player("Again"), await world.player("Other")
            start = world.starting_grant
            await _register(world, other, tournament_id)
            await _register(world, player, tournament_id)
            await _unregister(world, player, tournament_id)
            registered = await _register(world, player, tournament_id)
            assert registered.tournament.registered_players == 2
            assert registered.tournament.prize_pool == 2 * FEE
            assert (await world.wallet(player)).balance == start - FEE
            assert await _registrations(world, tournament_id) == {
                other.player_id: 1,
                player.player_id: 2,
            }
            # Out and in once more: each payment refunded exactly once.
            await _unregister(world, player, tournament_id)
            assert (await world.wallet(player)).balance == start
            await _register(world, player, tournament_id)
            assert (await world.wallet(player)).balance == start - FEE
            await world.stub.CancelTournament(
                lobby_pb2.CancelTournamentRequest(
                    request_id="c1", tournament_id=tournament_id, reason="test"
                ),
                metadata=organiser,
            )
            assert (await world.wallet(player)).balance == start
            assert (await world.wallet(other)).balance == start
            assert await world.balance(accounts.pool(tournament_id)) == 0
            assert await _reasons(world, player, tournament_id) == [ENTRY_FEE, REFUND] * 3
            # Cancelled: unregistering is refused (it no longer takes registrations).
            late = await refused(_unregister(world, other, tournament_id))
            assert (late.code, late.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "TOURNAMENT_NOT_REGISTERING",
            )
            await _balanced(world)

    run(scenario())


def test_unregistering_is_refused_after_the_start_and_for_a_player_not_registered(
    tmp_path: Path, chips_database: str
) -> None:
    async def scenario() -> None:
        async with _with_tables(tmp_path, chips_database) as world:
            tournament_id, organiser = await _cup(world)
            players = [await world.player(f"P{n}") for n in range(2)]
            stranger = await world.player("Stranger")
            for player in players:
                await _register(world, player, tournament_id)
            # Another player's token unregisters the caller only: not registered, refused.
            other = await refused(_unregister(world, stranger, tournament_id))
            assert (other.code, other.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "NOT_REGISTERED",
            )
            turkish = await refused(
                world.stub.UnregisterFromTournament(
                    lobby_pb2.UnregisterFromTournamentRequest(
                        request_id=uuid.uuid4().hex, tournament_id=tournament_id, locale="tr"
                    ),
                    metadata=stranger.auth,
                )
            )
            assert "kayıtlı değilsin" in turkish.message
            assert len(await _registrations(world, tournament_id)) == 2
            missing = await refused(_unregister(world, players[0], "no-such-cup"))
            assert missing.code == grpc.StatusCode.NOT_FOUND
            await world.stub.StartTournament(
                lobby_pb2.StartTournamentRequest(request_id="s1", tournament_id=tournament_id),
                metadata=organiser,
            )
            late = await refused(_unregister(world, players[0], tournament_id))
            assert (late.code, late.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "TOURNAMENT_NOT_REGISTERING",
            )
            assert (await world.wallet(players[0])).balance == world.starting_grant - FEE
            assert await world.balance(accounts.pool(tournament_id)) == 2 * FEE
            await _balanced(world)

    run(scenario())
