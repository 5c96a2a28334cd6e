"""Who may organise and how tournaments are listed (issue #37, points 1 and 6), over real gRPC
against a lobby on SQLite and PostgreSQL: only an organiser's player token (or a service's)
creates a tournament, a guest and a plain account are refused with nothing written; an operator
grants and revokes the role with a service token, idempotently, with a reason, recorded; the
operator's command line does the same; a tournament's description and category are stored and
shown, bad ones refused; ListTournaments filters by category and time and pages within them."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import uuid
from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp
from okey.v1 import lobby_pb2
from sqlalchemy import select

from okey101.cli import main
from okey101.lobby.models import organiser_changes, organisers, requests, tournaments

from support.chips import ChipsWorld
from support.lobby import bearer, make_organiser, refused, run


def _create(request_id: str = "", **fields: Any) -> lobby_pb2.CreateTournamentRequest:
    fields.setdefault("name", "Cup")
    fields.setdefault("max_players", 8)
    return lobby_pb2.CreateTournamentRequest(request_id=request_id or uuid.uuid4().hex, **fields)


async def _account(world: ChipsWorld, name: str) -> Any:
    """A guest upgraded to a registered account (its LoginGuestResponse: the id and tokens
    stay)."""
    guest = await world.client.guest(name=name)
    await world.stub.RegisterAccount(
        lobby_pb2.RegisterAccountRequest(
            request_id=uuid.uuid4().hex,
            username=f"acc-{uuid.uuid4().hex[:10]}",
            password="a-good-password",
        ),
        metadata=bearer(guest.tokens.access_token),
    )
    return guest


def _grant(player_id: str, request_id: str = "", reason: str = "runs the weekly cup") -> Any:
    return lobby_pb2.GrantOrganiserRequest(
        request_id=request_id or uuid.uuid4().hex, player_id=player_id, reason=reason
    )


def _revoke(player_id: str, request_id: str = "", reason: str = "stopped organising") -> Any:
    return lobby_pb2.RevokeOrganiserRequest(
        request_id=request_id or uuid.uuid4().hex, player_id=player_id, reason=reason
    )


def test_only_an_organiser_creates_tournaments(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips() as world:
            stub, client = world.stub, world.client
            guest = await client.guest(name="Misafir")
            account = await _account(world, "Ayşe")
            auth = bearer(account.tokens.access_token)
            player_id = account.player.player_id
            written = await client.count(requests)
            for who in (guest, account):
                no = await refused(
                    stub.CreateTournament(_create(), metadata=bearer(who.tokens.access_token))
                )
                assert (no.code, no.reason) == (grpc.StatusCode.PERMISSION_DENIED,
                                                "NOT_AN_ORGANISER")  # fmt: skip
                assert "organiser" in no.message
            turkish = await refused(stub.CreateTournament(_create(locale="tr"), metadata=auth))
            assert "organizatör" in turkish.message
            assert await client.count(tournaments) == 0
            assert await client.count(requests) == written
            seen = await stub.GetPlayer(lobby_pb2.GetPlayerRequest(), metadata=auth)
            assert not seen.player.organiser

            # The operator grants the role: the account creates, as itself.
            granted = await stub.GrantOrganiser(
                _grant(player_id, "grant-1"), metadata=world.operator
            )
            assert granted.changed and granted.player.organiser
            assert granted.player.player_id == player_id
            again = await stub.GrantOrganiser(_grant(player_id, "grant-1"), metadata=world.operator)
            assert again == granted  # a retry: the first answer
            twice = await stub.GrantOrganiser(_grant(player_id), metadata=world.operator)
            assert not twice.changed and twice.player.organiser
            for token in (auth, world.operator):
                seen = await stub.GetPlayer(
                    lobby_pb2.GetPlayerRequest(player_id=player_id), metadata=token
                )
                assert seen.player.organiser
            made = await stub.CreateTournament(_create(name="Weekly cup"), metadata=auth)
            assert made.tournament.creator_player_id == player_id
            # The guest is still refused, and a service still creates (operators, benches).
            no = await refused(
                stub.CreateTournament(_create(), metadata=bearer(guest.tokens.access_token))
            )
            assert no.reason == "NOT_AN_ORGANISER"
            by_service = await stub.CreateTournament(_create(), metadata=world.service)
            assert by_service.tournament.creator_player_id == ""

            # Revoked: no more tournaments; the one made stays, its creator's.
            revoked = await stub.RevokeOrganiser(
                _revoke(player_id, "revoke-1"), metadata=world.operator
            )
            assert revoked.changed and not revoked.player.organiser
            assert (
                await stub.RevokeOrganiser(_revoke(player_id, "revoke-1"), metadata=world.operator)
                == revoked
            )
            assert not (
                await stub.RevokeOrganiser(_revoke(player_id), metadata=world.operator)
            ).changed
            no = await refused(stub.CreateTournament(_create(), metadata=auth))
            assert no.reason == "NOT_AN_ORGANISER"
            assert await client.count(tournaments) == 2
            kept = await stub.GetTournament(
                lobby_pb2.GetTournamentRequest(tournament_id=made.tournament.tournament_id),
                metadata=auth,
            )
            assert kept.tournament.state == lobby_pb2.TOURNAMENT_STATE_REGISTERING
            assert kept.tournament.creator_player_id == player_id
            seen = await stub.GetPlayer(lobby_pb2.GetPlayerRequest(), metadata=auth)
            assert not seen.player.organiser

            # What was recorded: the two changes (not the calls that changed nothing), with
            # who, why and the request.
            async with world.database.read() as session:
                changes = (
                    await session.execute(
                        select(organiser_changes).order_by(organiser_changes.c.change_id)
                    )
                ).all()
            recorded = [
                (c.player_id, c.action, c.operator, c.reason, c.request_id) for c in changes
            ]
            assert recorded == [
                (player_id, "grant", "operator:test", "runs the weekly cup", "grant-1"),
                (player_id, "revoke", "operator:test", "stopped organising", "revoke-1"),
            ]  # fmt: skip
            assert changes[0].changed_us <= changes[1].changed_us
            assert await client.count(organisers) == 0

    run(scenario())


def test_granting_and_revoking_are_an_operators_calls(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips() as world:
            stub, client = world.stub, world.client
            guest = await client.guest(name="Misafir")
            account = await _account(world, "Can")
            auth = bearer(account.tokens.access_token)
            player_id = account.player.player_id
            # A player's token, the account's own or anyone's, is refused.
            for call in (stub.GrantOrganiser(_grant(player_id), metadata=auth),
                         stub.RevokeOrganiser(_revoke(player_id), metadata=auth)):  # fmt: skip
                no = await refused(call)
                assert no.code == grpc.StatusCode.PERMISSION_DENIED
            # A reason is required; a guest cannot be one; an unknown player is not found.
            for request, reason, code in (
                (_grant(player_id, reason=""), "FIELD_REQUIRED", grpc.StatusCode.INVALID_ARGUMENT),
                (_grant(player_id, reason="   "), "FIELD_REQUIRED",
                 grpc.StatusCode.INVALID_ARGUMENT),
                (_grant(player_id, reason="x" * 501), "BAD_LENGTH",
                 grpc.StatusCode.INVALID_ARGUMENT),
                (_grant(""), "FIELD_REQUIRED", grpc.StatusCode.INVALID_ARGUMENT),
                (_grant(player_id, request_id="no spaces please"), "BAD_REQUEST_ID",
                 grpc.StatusCode.INVALID_ARGUMENT),
                (_grant(guest.player.player_id), "ORGANISER_NEEDS_ACCOUNT",
                 grpc.StatusCode.FAILED_PRECONDITION),
                (_grant("p_nobody"), "PLAYER_NOT_FOUND", grpc.StatusCode.NOT_FOUND),
            ):  # fmt: skip
                no = await refused(stub.GrantOrganiser(request, metadata=world.operator))
                assert (no.code, no.reason) == (code, reason), request
            no = await refused(
                stub.RevokeOrganiser(_revoke(player_id, reason=""), metadata=world.operator)
            )
            assert no.reason == "FIELD_REQUIRED"
            assert await client.count(organisers) == 0
            assert await client.count(organiser_changes) == 0
            # A request id sent again with another request.
            await stub.GrantOrganiser(_grant(player_id, "same"), metadata=world.operator)
            other = await _account(world, "Deniz")
            no = await refused(
                stub.GrantOrganiser(_grant(other.player.player_id, "same"), metadata=world.operator)
            )
            assert no.reason == "REQUEST_ID_REUSED"
            assert await client.count(organisers) == 1
            assert await client.count(organiser_changes) == 1
            # A guest who upgrades to an account may then be granted.
            await stub.RegisterAccount(
                lobby_pb2.RegisterAccountRequest(
                    request_id=uuid.uuid4().hex, username="misafir-now", password="pass-word-1"
                ),
                metadata=bearer(guest.tokens.access_token),
            )
            made = await stub.GrantOrganiser(
                _grant(guest.player.player_id), metadata=world.operator
            )
            assert made.changed and made.player.kind == lobby_pb2.PLAYER_KIND_ACCOUNT

    run(scenario())


def test_a_description_and_a_category_are_stored_and_bad_ones_refused(
    chips: Callable[..., Any],
) -> None:
    async def scenario() -> None:
        async with chips() as world:
            stub, client = world.stub, world.client
            organiser = await client.guest(name="Organiser")
            await make_organiser(stub, organiser, world.operator)
            auth = bearer(organiser.tokens.access_token)
            description = "Every Friday at 20:00.\nBoombala rules, 5 hands a match. İyi şanslar!"
            made = await stub.CreateTournament(
                _create(description=f"  {description} ", category="weekly-friday"), metadata=auth
            )
            assert made.tournament.description == description
            assert made.tournament.category == "weekly-friday"
            seen = await stub.GetTournament(
                lobby_pb2.GetTournamentRequest(tournament_id=made.tournament.tournament_id),
                metadata=auth,
            )
            assert (seen.tournament.description, seen.tournament.category) == (
                description,
                "weekly-friday",
            )
            longest = await stub.CreateTournament(
                _create(description="d" * 500, category="c" * 32), metadata=world.service
            )
            assert len(longest.tournament.description) == 500
            plain = await stub.CreateTournament(_create(), metadata=auth)
            assert (plain.tournament.description, plain.tournament.category) == ("", "")
            written = await client.count(requests)
            for fields, reason in (
                ({"description": "d" * 501}, "BAD_LENGTH"),
                ({"description": "bell\x07"}, "BAD_LENGTH"),
                ({"category": "Weekly"}, "BAD_CATEGORY"),
                ({"category": "c" * 33}, "BAD_CATEGORY"),
                ({"category": "week ly"}, "BAD_CATEGORY"),
                ({"category": "haftalık"}, "BAD_CATEGORY"),
                ({"category": "weekly_cup"}, "BAD_CATEGORY"),
            ):
                no = await refused(stub.CreateTournament(_create(**fields), metadata=auth))
                assert (no.code, no.reason) == (grpc.StatusCode.INVALID_ARGUMENT, reason), fields
                assert no.metadata.get("field") == next(iter(fields))
            turkish = await refused(
                stub.CreateTournament(_create(category="X", locale="tr"), metadata=auth)
            )
            assert "kategorisi" in turkish.message
            assert await client.count(tournaments) == 3
            assert await client.count(requests) == written

    run(scenario())


def _at(micros: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromMicroseconds(micros)
    return stamp


async def _names(stub: Any, auth: Any, **fields: Any) -> list[str]:
    """Every tournament ListTournaments gives with ``fields``, one at a time (paged by 1)."""
    found: list[str] = []
    token = ""
    while True:
        page = await stub.ListTournaments(
            lobby_pb2.ListTournamentsRequest(page_size=1, page_token=token, **fields),
            metadata=auth,
        )
        found += [t.name for t in page.tournaments]
        token = page.next_page_token
        if not token:
            return found


def test_tournaments_are_listed_by_category_and_time_and_paged(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips() as world:
            stub, client = world.stub, world.client
            organiser = await client.guest(name="Organiser")
            await make_organiser(stub, organiser, world.operator)
            auth = bearer(organiser.tokens.access_token)
            made: dict[str, Any] = {}
            for name, category in (("W1", "weekly"), ("B1", "beginners"), ("W2", "weekly"),
                                   ("N1", ""), ("W3", "weekly"), ("B2", "beginners")):  # fmt: skip
                answer = await stub.CreateTournament(
                    _create(name=name, category=category), metadata=auth
                )
                made[name] = answer.tournament
            # W2 starts (two players registered, a service starts it).
            for index in range(2):
                player = await client.guest(name=f"P{index}")
                await stub.RegisterForTournament(
                    lobby_pb2.RegisterForTournamentRequest(
                        request_id=uuid.uuid4().hex, tournament_id=made["W2"].tournament_id
                    ),
                    metadata=bearer(player.tokens.access_token),
                )
            started = await stub.StartTournament(
                lobby_pb2.StartTournamentRequest(
                    request_id=uuid.uuid4().hex, tournament_id=made["W2"].tournament_id
                ),
                metadata=world.service,
            )
            start_us = started.tournament.start_time.ToMicroseconds()
            created = {name: t.create_time.ToMicroseconds() for name, t in made.items()}

            assert await _names(stub, auth) == ["B2", "W3", "N1", "W2", "B1", "W1"]
            assert await _names(stub, auth, category="weekly") == ["W3", "W2", "W1"]
            assert await _names(stub, auth, category="beginners") == ["B2", "B1"]
            assert await _names(stub, auth, category="monthly") == []
            window = {"created_after": _at(created["W2"]), "created_before": _at(created["B2"])}
            assert await _names(stub, auth, **window) == ["W3", "N1", "W2"]
            assert await _names(stub, auth, category="weekly", **window) == ["W3", "W2"]
            assert await _names(
                stub, auth, created_after=_at(created["W3"]), category="beginners"
            ) == ["B2"]
            assert await _names(stub, auth, created_before=_at(created["W1"])) == []
            # Started: only W2, and it is no longer registering.
            assert await _names(stub, auth, started_after=_at(start_us)) == ["W2"]
            assert await _names(stub, auth, started_before=_at(start_us + 1)) == ["W2"]
            assert await _names(stub, auth, started_before=_at(start_us)) == []
            registering = [lobby_pb2.TOURNAMENT_STATE_REGISTERING]
            assert await _names(stub, auth, states=registering, category="weekly") == ["W3", "W1"]
            # A page of two, then the rest; the token is bound to the filters.
            first = await stub.ListTournaments(
                lobby_pb2.ListTournamentsRequest(page_size=2, category="weekly"), metadata=auth
            )
            assert [t.name for t in first.tournaments] == ["W3", "W2"]
            assert first.tournaments[0].category == "weekly"
            rest = await stub.ListTournaments(
                lobby_pb2.ListTournamentsRequest(
                    page_size=2, category="weekly", page_token=first.next_page_token
                ),
                metadata=auth,
            )
            assert [t.name for t in rest.tournaments] == ["W1"] and not rest.next_page_token
            token = first.next_page_token
            for other in (
                lobby_pb2.ListTournamentsRequest(category="beginners"),
                lobby_pb2.ListTournamentsRequest(category=""),
                lobby_pb2.ListTournamentsRequest(
                    category="weekly", created_after=_at(created["W1"])
                ),
                lobby_pb2.ListTournamentsRequest(category="weekly", started_before=_at(start_us)),
                lobby_pb2.ListTournamentsRequest(category="weekly", states=registering),
            ):
                other.page_size, other.page_token = 2, token
                no = await refused(stub.ListTournaments(other, metadata=auth))
                assert no.reason == "PAGE_TOKEN_INVALID", other
            no = await refused(
                stub.ListTournaments(lobby_pb2.ListTournamentsRequest(category="Weekly!"),
                                     metadata=auth)
            )  # fmt: skip
            assert (no.code, no.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_CATEGORY")
            for bad in (Timestamp(seconds=-62_135_596_801), Timestamp(seconds=0, nanos=-1),
                        Timestamp(seconds=253_402_300_800)):  # fmt: skip
                no = await refused(
                    stub.ListTournaments(
                        lobby_pb2.ListTournamentsRequest(started_before=bad), metadata=auth
                    )
                )
                assert (no.reason, no.metadata["field"]) == ("BAD_FIELD", "started_before")
            # A service lists too.
            assert await _names(stub, world.service, category="beginners") == ["B2", "B1"]

    run(scenario())


async def _cli(*argv: str) -> tuple[int, str, str]:
    """``okey101 argv`` in a thread of its own (it blocks on gRPC while this loop serves the
    lobby): its exit status, stdout and stderr."""

    def call() -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(list(argv))
        return status, out.getvalue(), err.getvalue()

    return await asyncio.to_thread(call)


def test_an_operator_grants_and_revokes_from_the_command_line(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips() as world:
            stub = world.stub
            account = await _account(world, "Elif")
            auth = bearer(account.tokens.access_token)
            player_id = account.player.player_id
            guest = await world.client.guest(name="Misafir")
            base = ["--lobby", world.client.lobby.target, "--var-dir", str(world.var_dir)]
            request_id = uuid.uuid4().hex
            grant = ["organisers", "grant", *base, "--player", player_id, "--reason",
                     "runs the Friday cup", "--request-id", request_id, "--json"]  # fmt: skip
            status, out, err = await _cli(*grant)
            assert status == 0, err
            answer = json.loads(out)
            assert answer["changed"] is True and answer["player"]["organiser"] is True
            assert await _cli(*grant) == (0, out, "")  # a retry: the same answer
            made = await stub.CreateTournament(_create(), metadata=auth)
            assert made.tournament.creator_player_id == player_id
            status, out, err = await _cli(
                "organisers", "grant", *base, "--player", player_id, "--reason", "again"
            )
            assert status == 0 and "an organiser (unchanged)" in out, (out, err)
            status, out, err = await _cli(
                "organisers", "grant", *base, "--player", guest.player.player_id, "--reason", "x"
            )
            assert status == 1 and "FAILED_PRECONDITION" in err and "guest" in err
            status, out, err = await _cli(
                "organisers", "revoke", *base, "--player", player_id, "--reason", "   "
            )
            assert status == 1 and "INVALID_ARGUMENT" in err
            status, out, err = await _cli(
                "organisers", "revoke", *base, "--player", player_id, "--reason", "moved away"
            )
            assert status == 0 and f"{player_id}: not an organiser" in out, (out, err)
            assert "(unchanged)" not in out
            no = await refused(stub.CreateTournament(_create(), metadata=auth))
            assert no.reason == "NOT_AN_ORGANISER"
            status, _out, err = await _cli("organisers", "grant", "--player", player_id)
            assert status == 2  # --reason missing: argparse's usage error
            async with world.database.read() as session:
                actions = [
                    (row.action, row.operator, row.reason)
                    for row in await session.execute(
                        select(organiser_changes).order_by(organiser_changes.c.change_id)
                    )
                ]
            assert actions == [("grant", "operator:okey101-cli", "runs the Friday cup"),
                               ("revoke", "operator:okey101-cli", "moved away")]  # fmt: skip

    run(scenario())
