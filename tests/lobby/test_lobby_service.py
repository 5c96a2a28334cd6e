"""LobbyService over real gRPC, without the table: players, tokens, the JWKS, rate limits, stored
answers, the quick-match queue, tournament registration, the tournament lease, the schema and
the process. On SQLite (a temporary file) and PostgreSQL (a database of its own per test, dropped
after; skipped without OKEY_TEST_DATABASE_URL).

The lobby runs in-process exactly as ``okey101 serve lobby`` runs it (``start_lobby``: the
platform's server, its auth and interceptors, the JWKS over HTTP, the background workers) and is
called through the generated stubs. Tables, quick matches and tournaments with the real table,
scoring, rules and bot services are in ``test_lobby_stack.py``; the helpers both use are in
``support.lobby``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import jwt
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from okey.v1 import common_pb2, lobby_pb2, lobby_pb2_grpc
from sqlalchemy import select

from okey101.lobby import Limits, Options
from okey101.lobby.errors import CATALOGUE
from okey101.lobby.messages import created_tournament_answer
from okey101.lobby.models import players, queue, refresh_tokens, requests
from okey101.lobby.records import LeaseLost, PlayerRow
from okey101.lobby.stores import answers
from okey101.lobby.stores.quick_match import QuickMatchQueue
from okey101.lobby.stores.rate_limits import RateLimit
from okey101.lobby.stores.tournaments import NewTournament, Tournaments
from okey101.platform.auth import (
    JwksVerifier,
    SigningKey,
    TokenIssuer,
    dev_signing_key,
    fetch_jwks_url,
)
from okey101.platform.database import Database
from okey101.services import built_services

from support.databases import fresh_database, postgres_database
from support.lobby import (
    bearer,
    lobby_client,
    lobby_settings,
    make_organiser,
    operator_auth,
    refused,
    run,
)

PASSWORD = "correct horse battery"


# ---------------------------------------------------------------------------------------------
# Databases


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, or a PostgreSQL database dropped afterwards."""
    yield from fresh_database(request.param, tmp_path, "lobby")


# ---------------------------------------------------------------------------------------------
# Guests


def test_a_guest_needs_the_secret_of_its_first_login(tmp_path: Path, database_url: str) -> None:
    async def scenario() -> None:
        async with lobby_client(lobby_settings(tmp_path, database_url)) as client:
            stub = client.stub
            first = lobby_pb2.LoginGuestRequest(
                request_id="first-login", device_id="device-0001", display_name="Ayşe"
            )
            answer = await stub.LoginGuest(first)
            assert answer.player.kind == lobby_pb2.PLAYER_KIND_GUEST
            assert answer.player.display_name == "Ayşe"
            assert len(answer.guest_secret) >= 40
            # A retried first login (the answer was lost) gets the same secret and tokens.
            again = await stub.LoginGuest(first)
            assert again == answer
            # A later login needs the secret: a device id alone is not an identity.
            missing = await refused(
                stub.LoginGuest(
                    lobby_pb2.LoginGuestRequest(request_id="two", device_id="device-0001")
                )
            )
            assert (missing.code, missing.reason) == (
                grpc.StatusCode.UNAUTHENTICATED,
                "GUEST_SECRET_REQUIRED",
            )
            wrong = await refused(
                stub.LoginGuest(
                    lobby_pb2.LoginGuestRequest(
                        request_id="three", device_id="device-0001", guest_secret="x" * 43,
                        locale="tr",
                    )
                )
            )  # fmt: skip
            assert (wrong.code, wrong.reason) == (
                grpc.StatusCode.UNAUTHENTICATED,
                "BAD_GUEST_SECRET",
            )
            assert wrong.locale == "tr-TR" and "sırrı" in wrong.message
            later = await stub.LoginGuest(
                lobby_pb2.LoginGuestRequest(
                    request_id="four", device_id="device-0001",
                    guest_secret=answer.guest_secret, display_name="Ayşe K.",
                )
            )  # fmt: skip
            assert later.player.player_id == answer.player.player_id
            assert later.guest_secret == ""
            assert later.player.display_name == "Ayşe K."
            assert later.tokens.refresh_token != answer.tokens.refresh_token
            # The access token is a player token other services accept.
            profile = await stub.GetPlayer(
                lobby_pb2.GetPlayerRequest(), metadata=bearer(later.tokens.access_token)
            )
            assert profile.player.player_id == answer.player.player_id
            # Only digests are kept: no secret, no refresh token, no access token in plain.
            async with client.lobby.servicer.database.read() as session:
                row = (await session.execute(select(players))).one()
                assert (
                    row.guest_secret_hash
                    == hashlib.sha256(answer.guest_secret.encode()).hexdigest()
                )
                payloads = [value for (value,) in await session.execute(select(requests.c.payload))]
                hashes = [
                    value
                    for (value,) in await session.execute(select(refresh_tokens.c.secret_hash))
                ]
            secrets_sent = [answer.guest_secret, answer.tokens.access_token,
                            answer.tokens.refresh_token.split(".")[2]]  # fmt: skip
            for secret in secrets_sent:
                assert all(secret.encode() not in payload for payload in payloads if payload)
                assert secret not in hashes

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Accounts


def test_accounts_hash_with_argon2_and_a_guest_keeps_its_id(
    tmp_path: Path, database_url: str
) -> None:
    async def scenario() -> None:
        async with lobby_client(lobby_settings(tmp_path, database_url)) as client:
            stub = client.stub
            guest = await client.guest(device="device-upgrade")
            register = lobby_pb2.RegisterAccountRequest(
                request_id="register-1", username="Mehmet", password=PASSWORD
            )
            account = await stub.RegisterAccount(
                register, metadata=bearer(guest.tokens.access_token)
            )
            assert account.player.player_id == guest.player.player_id
            assert account.player.kind == lobby_pb2.PLAYER_KIND_ACCOUNT
            assert account.player.username == "mehmet"
            assert account.player.display_name == "Ayşe"
            retried = await stub.RegisterAccount(
                register, metadata=bearer(guest.tokens.access_token)
            )
            assert retried == account
            async with client.lobby.servicer.database.read() as session:
                stored = (
                    await session.execute(
                        select(players.c.password_hash).where(players.c.username == "mehmet")
                    )
                ).scalar_one()
            assert stored.startswith("$argon2id$") and PASSWORD not in stored
            taken = await refused(
                stub.RegisterAccount(
                    lobby_pb2.RegisterAccountRequest(
                        request_id="register-2", username="MEHMET", password="another password"
                    )
                )
            )
            assert (taken.code, taken.reason) == (grpc.StatusCode.ALREADY_EXISTS, "USERNAME_TAKEN")
            # The device's guest is now the account: a guest login is turned away to it.
            upgraded = await refused(
                stub.LoginGuest(
                    lobby_pb2.LoginGuestRequest(
                        request_id="g2", device_id="device-upgrade", guest_secret=guest.guest_secret
                    )
                )
            )
            assert (upgraded.code, upgraded.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "GUEST_UPGRADED",
            )
            login = await stub.LoginAccount(
                lobby_pb2.LoginAccountRequest(request_id="l1", username="Mehmet", password=PASSWORD)
            )
            assert login.player.player_id == guest.player.player_id
            wrong = await refused(
                stub.LoginAccount(
                    lobby_pb2.LoginAccountRequest(
                        request_id="l2", username="mehmet", password="nope"
                    )
                )
            )
            unknown = await refused(
                stub.LoginAccount(
                    lobby_pb2.LoginAccountRequest(
                        request_id="l3", username="nobody", password=PASSWORD
                    )
                )
            )
            # Either way the same answer: which part was wrong is not told.
            assert (wrong.code, wrong.reason, wrong.message) == (
                unknown.code, unknown.reason, unknown.message,
            )  # fmt: skip
            assert wrong.reason == "BAD_CREDENTIALS"
            # A second upgrade of the same player: it is an account already.
            again = await refused(
                stub.RegisterAccount(
                    lobby_pb2.RegisterAccountRequest(
                        request_id="register-3", username="mehmet2", password=PASSWORD
                    ),
                    metadata=bearer(login.tokens.access_token),
                )
            )
            assert (again.code, again.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "ALREADY_ACCOUNT",
            )
            # A fresh account without a guest behind it.
            fresh = await stub.RegisterAccount(
                lobby_pb2.RegisterAccountRequest(
                    request_id="register-4",
                    username="zeynep",
                    password=PASSWORD,
                    display_name="Zeynep",
                )
            )
            assert fresh.player.player_id != guest.player.player_id
            assert await client.count(players) == 2

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Tokens


def test_refresh_tokens_rotate_and_a_reused_one_revokes_the_login(
    tmp_path: Path, database_url: str
) -> None:
    async def scenario() -> None:
        async with lobby_client(lobby_settings(tmp_path, database_url)) as client:
            stub = client.stub
            guest = await client.guest()
            first = guest.tokens.refresh_token
            rotate = lobby_pb2.RefreshTokensRequest(request_id="rotate-1", refresh_token=first)
            rotated = await stub.RefreshTokens(rotate)
            assert rotated.tokens.refresh_token != first
            jwt.decode(rotated.tokens.access_token, options={"verify_signature": False})
            # A retry of the same rotation gets the same tokens and spends nothing more.
            assert await stub.RefreshTokens(rotate) == rotated
            # The spent token again, as a new request: a thief or a confused client. The whole
            # login is revoked, the token just issued included.
            reused = await refused(
                stub.RefreshTokens(
                    lobby_pb2.RefreshTokensRequest(request_id="rotate-2", refresh_token=first)
                )
            )
            assert (reused.code, reused.reason) == (
                grpc.StatusCode.UNAUTHENTICATED,
                "REFRESH_TOKEN_REUSED",
            )
            revoked = await refused(
                stub.RefreshTokens(
                    lobby_pb2.RefreshTokensRequest(
                        request_id="rotate-3", refresh_token=rotated.tokens.refresh_token
                    )
                )
            )
            assert revoked.reason == "REFRESH_TOKEN_REVOKED"
            forged = await refused(
                stub.RefreshTokens(
                    lobby_pb2.RefreshTokensRequest(
                        request_id="rotate-4", refresh_token=first.rsplit(".", 1)[0] + ".forged"
                    )
                )
            )
            assert forged.reason == "REFRESH_TOKEN_INVALID"

            # Logout revokes the login's refresh tokens; other logins of the player live on.
            login = await stub.LoginGuest(
                lobby_pb2.LoginGuestRequest(
                    request_id="again", device_id="device-tokens", display_name="T"
                )
            )
            other = await stub.LoginGuest(
                lobby_pb2.LoginGuestRequest(
                    request_id="again-2", device_id="device-tokens",
                    guest_secret=login.guest_secret,
                )
            )  # fmt: skip
            out = await stub.Logout(
                lobby_pb2.LogoutRequest(
                    request_id="out-1", refresh_token=login.tokens.refresh_token
                )
            )
            assert out.revoked == 1
            gone = await refused(
                stub.RefreshTokens(
                    lobby_pb2.RefreshTokensRequest(
                        request_id="after-out", refresh_token=login.tokens.refresh_token
                    )
                )
            )
            assert gone.reason == "REFRESH_TOKEN_REVOKED"
            alive = await stub.RefreshTokens(
                lobby_pb2.RefreshTokensRequest(
                    request_id="other-alive", refresh_token=other.tokens.refresh_token
                )
            )
            everywhere = await stub.Logout(
                lobby_pb2.LogoutRequest(
                    request_id="out-2", refresh_token=alive.tokens.refresh_token, all_sessions=True
                )
            )
            assert everywhere.revoked == 1  # the other login's live token
            live = await client.count(
                refresh_tokens,
                refresh_tokens.c.player_id == login.player.player_id,
                refresh_tokens.c.revoked_us.is_(None),
                refresh_tokens.c.used_us.is_(None),
            )
            assert live == 0

    run(scenario())


def test_expired_forged_missing_and_wrong_kind_tokens_are_refused(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with lobby_client(lobby_settings(tmp_path)) as client:
            stub = client.stub
            guest = await client.guest()
            key = dev_signing_key(tmp_path)
            player = guest.player.player_id
            expired = TokenIssuer(key).issue(
                player, "player", ttl_seconds=60, now=time.time() - 3600
            )
            stranger = SigningKey.generate()
            forged = jwt.encode(
                {"iss": "okey101", "sub": player, "kind": "player", "iat": int(time.time()),
                 "exp": int(time.time()) + 600, "jti": "x"},
                stranger.private_key, algorithm="EdDSA", headers={"kid": key.kid},
            )  # fmt: skip
            service = TokenIssuer(key).issue("service:table", "service")
            call = lobby_pb2.GetQuickMatchStatusRequest(ticket_id="q_x")
            for token, code, reason in (
                (expired, grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED"),
                (forged, grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID"),
                ("not-a-jwt", grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID"),
                (service, grpc.StatusCode.PERMISSION_DENIED, "TOKEN_WRONG_KIND"),
            ):
                found = await refused(stub.GetQuickMatchStatus(call, metadata=bearer(token)))
                assert (found.code, found.reason) == (code, reason)
            missing = await refused(stub.GetQuickMatchStatus(call))
            assert (missing.code, missing.reason) == (
                grpc.StatusCode.UNAUTHENTICATED,
                "TOKEN_MISSING",
            )
            # RegisterAccount takes no token, or a guest's: a forged one is refused, not ignored.
            upgrade = await refused(
                stub.RegisterAccount(
                    lobby_pb2.RegisterAccountRequest(
                        request_id="r", username="forger", password=PASSWORD
                    ),
                    metadata=bearer(forged),
                )
            )
            assert (upgrade.code, upgrade.reason) == (
                grpc.StatusCode.UNAUTHENTICATED,
                "TOKEN_INVALID",
            )
            assert await client.count(players, players.c.username == "forger") == 0

    run(scenario())


def test_the_jwks_over_grpc_and_http_verifies_the_lobbys_tokens(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with lobby_client(lobby_settings(tmp_path)) as client:
            guest = await client.guest()
            jwks = await client.stub.GetJwks(lobby_pb2.GetJwksRequest())
            kid = jwt.get_unverified_header(guest.tokens.access_token)["kid"]
            assert [key.kid for key in jwks.keys] == [kid]
            assert (jwks.keys[0].kty, jwks.keys[0].crv, jwks.keys[0].alg) == (
                "OKP",
                "Ed25519",
                "EdDSA",
            )
            document = json.loads(jwks.jwks_json)
            served = await asyncio.to_thread(
                lambda: json.loads(urllib.request.urlopen(client.lobby.jwks_url, timeout=5).read())
            )
            assert served == document
            # What another service does with OKEY_JWKS_URL pointing at the lobby.
            verifier = JwksVerifier({}, fetch=fetch_jwks_url(client.lobby.jwks_url))
            await verifier.refresh()
            claims = verifier.verify(guest.tokens.access_token)
            assert (claims.subject, claims.kind) == (guest.player.player_id, "player")
            assert claims.expires_at - claims.issued_at == 900
            missing = client.lobby.jwks_url.replace("/.well-known/jwks.json", "/keys")
            with pytest.raises(urllib.error.HTTPError) as caught:
                await asyncio.to_thread(urllib.request.urlopen, missing, None, 5)
            assert caught.value.code == 404

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Rate limits


def test_rate_limits_hold_across_two_lobbies_on_one_database(
    tmp_path: Path, database_url: str
) -> None:
    limits = Limits(login=RateLimit(3, 60.0), quick_match=RateLimit(2, 60.0))
    options = Options(limits=limits)

    async def scenario() -> None:
        first_dir, second_dir = tmp_path / "a", tmp_path / "b"
        second_dir.mkdir(parents=True)
        async with lobby_client(lobby_settings(first_dir, database_url), options=options) as one:
            (second_dir / "dev-signing-key.pem").write_bytes(
                (first_dir / "dev-signing-key.pem").read_bytes()
            )
            async with lobby_client(
                lobby_settings(second_dir, database_url), options=options
            ) as two:
                guest = await one.guest(device="device-limited")
                request = lobby_pb2.LoginGuestRequest(
                    device_id="device-limited", guest_secret=guest.guest_secret
                )
                for index, client in enumerate((two, one)):
                    request.request_id = f"ok-{index}"
                    await client.stub.LoginGuest(request)
                request.request_id = "over"
                request.locale = "tr-TR"
                limited = await refused(two.stub.LoginGuest(request))
                assert (limited.code, limited.reason) == (
                    grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED",
                )  # fmt: skip
                assert 0 < int(limited.metadata["retry_after_ms"]) <= 60_000
                assert limited.metadata["action"] == "login"
                assert limited.message.startswith("Çok fazla istek")
                # Another device is not limited by this one.
                await two.guest(device="device-other")

                auth = bearer(guest.tokens.access_token)
                for index, client in enumerate((one, two)):
                    await client.stub.JoinQuickMatch(
                        lobby_pb2.JoinQuickMatchRequest(request_id=f"q{index}"), metadata=auth
                    )
                join = lobby_pb2.JoinQuickMatchRequest(request_id="q-over")
                over = await refused(one.stub.JoinQuickMatch(join, metadata=auth))
                assert over.reason == "RATE_LIMITED" and over.metadata["action"] == "quick_match"
                assert await one.count(queue) == 1

    run(scenario())


def test_a_retry_is_never_counted_again_by_a_rate_limit(tmp_path: Path, database_url: str) -> None:
    """Every rate limit counts a request id once: a first login retried (its answer lost), a
    HostTable retried while the table service is down (UNAVAILABLE each time), a quick-match
    join retried: none of them reaches the limit, however often. A login refused for its
    password counts each time it is sent, even with the same request id: guessing is limited
    whatever the ids."""
    from okey101.bench.rules_bench import free_port

    limits = Limits(
        # An hour per window: no token comes back while the test runs, however slow the machine.
        login=RateLimit(3, 3600.0),
        host_table=RateLimit(2, 3600.0),
        quick_match=RateLimit(2, 3600.0),
    )
    settings = lobby_settings(
        tmp_path, database_url, table_address=f"127.0.0.1:{free_port()}"
    )  # nothing listens there: the table service is down

    async def scenario() -> None:
        async with lobby_client(settings, options=Options(limits=limits)) as client:
            stub = client.stub
            first = lobby_pb2.LoginGuestRequest(
                request_id="first-login", device_id="device-retried", display_name="Ayşe"
            )
            answers = [await stub.LoginGuest(first) for _ in range(6)]
            assert all(answer == answers[0] for answer in answers)
            again = lobby_pb2.LoginGuestRequest(
                request_id="second-login",
                device_id="device-retried",
                guest_secret=answers[0].guest_secret,
            )
            await stub.LoginGuest(again)  # the second request counted: two of three
            auth = bearer(answers[0].tokens.access_token)

            host = lobby_pb2.HostTableRequest(request_id="host-1", start_when_full=True)
            for _ in range(5):
                down = await refused(stub.HostTable(host, metadata=auth))
                assert (down.code, down.reason) == (
                    grpc.StatusCode.UNAVAILABLE, "PEER_UNAVAILABLE",
                )  # fmt: skip
            other = await refused(
                stub.HostTable(lobby_pb2.HostTableRequest(request_id="host-2"), metadata=auth)
            )
            assert other.reason == "PEER_UNAVAILABLE"
            over = await refused(
                stub.HostTable(lobby_pb2.HostTableRequest(request_id="host-3"), metadata=auth)
            )
            assert (over.reason, over.metadata["action"]) == ("RATE_LIMITED", "host_table")
            assert (await refused(stub.HostTable(host, metadata=auth))).reason == (
                "PEER_UNAVAILABLE"
            )

            join = lobby_pb2.JoinQuickMatchRequest(request_id="join-1")
            tickets = [await stub.JoinQuickMatch(join, metadata=auth) for _ in range(4)]
            assert all(ticket == tickets[0] for ticket in tickets)

            await stub.RegisterAccount(
                lobby_pb2.RegisterAccountRequest(
                    request_id="register", username="guesser", password=PASSWORD
                )
            )  # one of the username's three
            guess = lobby_pb2.LoginAccountRequest(
                request_id="guess", username="guesser", password="not the password"
            )
            reasons = [(await refused(stub.LoginAccount(guess))).reason for _ in range(3)]
            assert reasons == ["BAD_CREDENTIALS", "BAD_CREDENTIALS", "RATE_LIMITED"]

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Bad input


def test_bad_input_is_invalid_argument_with_a_reason_and_changes_nothing(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with lobby_client(lobby_settings(tmp_path)) as client:
            stub = client.stub
            guest = await client.guest()
            await make_organiser(stub, guest, operator_auth(tmp_path))  # creates tournaments
            auth = bearer(guest.tokens.access_token)
            cases: list[tuple[Any, str, dict[str, str]]] = [
                (stub.LoginGuest(lobby_pb2.LoginGuestRequest(
                    request_id="a", device_id="short", display_name="x", locale="tr")),
                 "BAD_LENGTH", {"field": "device_id", "minimum": "8", "maximum": "128"}),
                (stub.LoginGuest(lobby_pb2.LoginGuestRequest(device_id="device-0002")),
                 "FIELD_REQUIRED", {"field": "request_id"}),
                (stub.LoginGuest(lobby_pb2.LoginGuestRequest(
                    request_id="no spaces", device_id="device-0002", display_name="x")),
                 "BAD_REQUEST_ID", {}),
                (stub.LoginGuest(lobby_pb2.LoginGuestRequest(
                    request_id="a", device_id="device-0003")),
                 "FIELD_REQUIRED", {"field": "display_name"}),
                (stub.RegisterAccount(lobby_pb2.RegisterAccountRequest(
                    request_id="a", username="no", password=PASSWORD)), "BAD_USERNAME", {}),
                (stub.RegisterAccount(lobby_pb2.RegisterAccountRequest(
                    request_id="a", username="someone", password="short")),
                 "BAD_LENGTH", {"field": "password", "minimum": "8", "maximum": "128"}),
                (stub.JoinQuickMatch(lobby_pb2.JoinQuickMatchRequest(
                    request_id="a", preset=99), metadata=auth),  # type: ignore[arg-type]
                 "BAD_FIELD", {"field": "preset", "value": "99"}),
                (stub.CreateTournament(lobby_pb2.CreateTournamentRequest(
                    request_id="a", name="Cup", max_players=3), metadata=auth),
                 "BAD_FIELD", {"field": "max_players", "value": "3"}),
                (stub.CreateTournament(lobby_pb2.CreateTournamentRequest(
                    request_id="a", name="Cup", max_players=8,
                    rules=common_pb2.RuleSet(match_hands=-1)), metadata=auth),
                 "BAD_RULE_VALUE",
                 {"rule": "match_hands", "value": "-1", "field": "rules.match_hands"}),
                (stub.ListTournaments(lobby_pb2.ListTournamentsRequest(page_token="junk"),
                                      metadata=auth), "PAGE_TOKEN_INVALID", {}),
                (stub.ListTournaments(lobby_pb2.ListTournamentsRequest(page_size=-1),
                                      metadata=auth),
                 "BAD_FIELD", {"field": "page_size", "value": "-1"}),
                (stub.HostTable(lobby_pb2.HostTableRequest(
                    request_id="a", host_seat=1, bots=[lobby_pb2.BotSeat(seat=1)]),
                    metadata=auth), "DUPLICATE_SEAT", {"seat": "1"}),
                (stub.HostTable(lobby_pb2.HostTableRequest(request_id="a", host_seat=4),
                                metadata=auth), "BAD_SEAT", {"seat": "4"}),
            ]  # fmt: skip
            for call, reason, parameters in cases:
                found = await refused(call)
                assert (found.code, found.reason) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
                assert found.metadata == parameters, reason
                assert found.message
            # The first case asked in Turkish.
            turkish = await refused(
                stub.LoginGuest(lobby_pb2.LoginGuestRequest(
                    request_id="a", device_id="short", display_name="x", locale="tr"))
            )  # fmt: skip
            assert turkish.locale == "tr-TR" and "karakter" in turkish.message
            # A request id answered once, sent again with a different request.
            create = lobby_pb2.CreateTournamentRequest(request_id="same", name="Cup", max_players=8)
            await stub.CreateTournament(create, metadata=auth)
            create.name = "Another cup"
            reused = await refused(stub.CreateTournament(create, metadata=auth))
            assert (reused.code, reused.reason) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "REQUEST_ID_REUSED",
            )
            assert await client.count(players) == 1
            listed = await stub.ListTournaments(lobby_pb2.ListTournamentsRequest(), metadata=auth)
            assert [item.name for item in listed.tournaments] == ["Cup"]
            unknown = await refused(
                stub.GetTournament(
                    lobby_pb2.GetTournamentRequest(tournament_id="t_none"), metadata=auth
                )
            )
            assert (unknown.code, unknown.reason) == (
                grpc.StatusCode.NOT_FOUND,
                "TOURNAMENT_NOT_FOUND",
            )
            nobody = await refused(
                stub.GetPlayer(lobby_pb2.GetPlayerRequest(player_id="p_none"), metadata=auth)
            )
            assert (nobody.code, nobody.reason) == (grpc.StatusCode.NOT_FOUND, "PLAYER_NOT_FOUND")

    run(scenario())


def test_every_sentence_names_the_same_parameters_in_both_languages() -> None:
    import string

    for code, sentences in CATALOGUE.items():
        names = {
            language: {field for _, field, _, _ in string.Formatter().parse(text) if field}
            for language, text in sentences.items()
        }
        assert set(names) == {"en", "tr"}, code
        assert names["en"] == names["tr"], code


# ---------------------------------------------------------------------------------------------
# The quick-match queue (matching needs the table: test_lobby_stack.py)


def test_a_player_holds_one_ticket_and_only_they_may_see_or_cancel_it(tmp_path: Path) -> None:
    async def scenario() -> None:
        settings = lobby_settings(tmp_path, quick_match_wait_seconds=600)
        async with lobby_client(settings) as client:
            stub = client.stub
            alice, bob = await client.guest(name="Alice"), await client.guest(name="Bob")
            auth = bearer(alice.tokens.access_token)
            joined = await stub.JoinQuickMatch(
                lobby_pb2.JoinQuickMatchRequest(
                    request_id="j1", preset=common_pb2.RULE_PRESET_BOOMBALA
                ),
                metadata=auth,
            )
            ticket = joined.ticket
            assert ticket.state == lobby_pb2.QUICK_MATCH_STATE_WAITING
            assert ticket.preset == common_pb2.RULE_PRESET_BOOMBALA
            assert ticket.players_waiting == 1
            wait = ticket.bots_fill_time.ToMicroseconds() - ticket.enqueue_time.ToMicroseconds()
            assert wait == 600_000_000
            again = await stub.JoinQuickMatch(
                lobby_pb2.JoinQuickMatchRequest(request_id="j2"), metadata=auth
            )
            assert again.ticket.ticket_id == ticket.ticket_id
            other = await refused(
                stub.GetQuickMatchStatus(
                    lobby_pb2.GetQuickMatchStatusRequest(ticket_id=ticket.ticket_id),
                    metadata=bearer(bob.tokens.access_token),
                )
            )
            assert (other.code, other.reason) == (
                grpc.StatusCode.PERMISSION_DENIED,
                "NOT_YOUR_TICKET",
            )
            cancel = await refused(
                stub.LeaveQuickMatch(
                    lobby_pb2.LeaveQuickMatchRequest(request_id="l", ticket_id=ticket.ticket_id),
                    metadata=bearer(bob.tokens.access_token),
                )
            )
            assert cancel.code == grpc.StatusCode.PERMISSION_DENIED
            left = await stub.LeaveQuickMatch(
                lobby_pb2.LeaveQuickMatchRequest(request_id="l", ticket_id=ticket.ticket_id),
                metadata=auth,
            )
            assert left.ticket.state == lobby_pb2.QUICK_MATCH_STATE_CANCELLED
            status = await stub.GetQuickMatchStatus(
                lobby_pb2.GetQuickMatchStatusRequest(ticket_id=ticket.ticket_id), metadata=auth
            )
            assert status.ticket.state == lobby_pb2.QUICK_MATCH_STATE_CANCELLED
            unknown = await refused(
                stub.GetQuickMatchStatus(
                    lobby_pb2.GetQuickMatchStatusRequest(ticket_id="q_none"), metadata=auth
                )
            )
            assert (unknown.code, unknown.reason) == (grpc.StatusCode.NOT_FOUND, "TICKET_NOT_FOUND")
            # After leaving, a new join makes a new ticket.
            new = await stub.JoinQuickMatch(
                lobby_pb2.JoinQuickMatchRequest(request_id="j3"), metadata=auth
            )
            assert new.ticket.ticket_id != ticket.ticket_id

    run(scenario())


def test_two_claimers_on_postgresql_take_disjoint_groups() -> None:
    """The matcher's claim: ``FOR UPDATE SKIP LOCKED`` gives two pods different tickets."""
    with postgres_database() as url:

        async def scenario() -> None:
            database = Database(url)
            try:
                await database.migrate("lobby")
                tickets = QuickMatchQueue(database)
                now = int(time.time() * 1_000_000)
                async with database.write() as session:
                    for index in range(8):
                        await session.execute(
                            players.insert().values(
                                player_id=f"p{index}", kind="guest", display_name=f"P{index}",
                                created_us=now,
                            )
                        )  # fmt: skip
                        await session.execute(
                            queue.insert().values(
                                ticket_id=f"q{index}", player_id=f"p{index}", display_name="x",
                                preset="oyna", state="waiting", enqueue_us=now + index,
                                bots_fill_us=now + 10**9, updated_us=now,
                            )
                        )  # fmt: skip
                claimed = asyncio.Event()
                release = asyncio.Event()

                async def first() -> list[str]:
                    async with database.write() as session:
                        group = await tickets.claim_group(session, "oyna")
                        claimed.set()
                        await release.wait()
                        return [ticket.ticket_id for ticket in group]

                async def second() -> list[str]:
                    await claimed.wait()
                    async with database.write() as session:
                        group = await tickets.claim_group(session, "oyna")
                        release.set()
                        return [ticket.ticket_id for ticket in group]

                one, two = await asyncio.gather(first(), second())
                assert one == ["q0", "q1", "q2", "q3"]
                assert two == ["q4", "q5", "q6", "q7"]
            finally:
                await database.dispose()

        run(scenario())


# ---------------------------------------------------------------------------------------------
# Tournaments without tables


def test_tournament_registration_start_and_standings_before_the_start(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with lobby_client(lobby_settings(tmp_path)) as client:
            stub = client.stub
            guests = [await client.guest(name=f"Player {index}") for index in range(6)]
            await make_organiser(stub, guests[0], operator_auth(tmp_path))
            creator = bearer(guests[0].tokens.access_token)
            created = await stub.CreateTournament(
                lobby_pb2.CreateTournamentRequest(
                    request_id="c1", name="Small cup", max_players=4, advance_per_table=2,
                    rules=common_pb2.RuleSet(
                        preset=common_pb2.RULE_PRESET_BOOMBALA,
                        match_end=common_pb2.MATCH_END_FIXED_HANDS, match_hands=1,
                    ),
                ),
                metadata=creator,
            )  # fmt: skip
            tournament = created.tournament
            assert tournament.state == lobby_pb2.TOURNAMENT_STATE_REGISTERING
            assert tournament.rules.match_hands == 1 and tournament.rules.partners is False
            assert tournament.creator_player_id == guests[0].player.player_id
            tid = tournament.tournament_id
            alone = await refused(
                stub.StartTournament(
                    lobby_pb2.StartTournamentRequest(request_id="s0", tournament_id=tid),
                    metadata=creator,
                )
            )
            assert (alone.code, alone.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION, "TOURNAMENT_TOO_FEW_PLAYERS",
            )  # fmt: skip
            for index, guest in enumerate(guests[:4]):
                answer = await stub.RegisterForTournament(
                    lobby_pb2.RegisterForTournamentRequest(
                        request_id=f"r{index}", tournament_id=tid
                    ),
                    metadata=bearer(guest.tokens.access_token),
                )
                assert answer.tournament.registered_players == index + 1
            twice = await stub.RegisterForTournament(
                lobby_pb2.RegisterForTournamentRequest(request_id="again", tournament_id=tid),
                metadata=creator,
            )
            assert twice.tournament.registered_players == 4
            full = await refused(
                stub.RegisterForTournament(
                    lobby_pb2.RegisterForTournamentRequest(request_id="r9", tournament_id=tid),
                    metadata=bearer(guests[4].tokens.access_token),
                )
            )
            assert (full.code, full.reason, full.metadata["max_players"]) == (
                grpc.StatusCode.FAILED_PRECONDITION, "TOURNAMENT_FULL", "4",
            )  # fmt: skip
            standings = await stub.GetTournamentStandings(
                lobby_pb2.GetTournamentStandingsRequest(tournament_id=tid, page_size=3),
                metadata=creator,
            )
            assert [line.rank for line in standings.standings] == [1, 1, 1]
            assert [line.display_name for line in standings.standings] == [
                "Player 0", "Player 1", "Player 2",
            ]  # fmt: skip
            rest = await stub.GetTournamentStandings(
                lobby_pb2.GetTournamentStandingsRequest(
                    tournament_id=tid, page_size=3, page_token=standings.next_page_token
                ),
                metadata=creator,
            )
            assert [line.display_name for line in rest.standings] == ["Player 3"]
            assert rest.next_page_token == ""
            stranger = await refused(
                stub.StartTournament(
                    lobby_pb2.StartTournamentRequest(request_id="s1", tournament_id=tid),
                    metadata=bearer(guests[5].tokens.access_token),
                )
            )
            assert (stranger.code, stranger.reason) == (
                grpc.StatusCode.PERMISSION_DENIED, "NOT_TOURNAMENT_CREATOR",
            )  # fmt: skip
            # The lobby runs no table here, so stop the driver from trying: lease it elsewhere.
            await client.lobby.driver.release()
            for task in client.lobby.tasks:
                task.cancel()
            start = lobby_pb2.StartTournamentRequest(request_id="s2", tournament_id=tid)
            started = await stub.StartTournament(start, metadata=creator)
            assert started.tournament.state == lobby_pb2.TOURNAMENT_STATE_RUNNING
            assert started.tournament.current_round == 1
            assert await stub.StartTournament(start, metadata=creator) == started
            twice_started = await refused(
                stub.StartTournament(
                    lobby_pb2.StartTournamentRequest(request_id="s3", tournament_id=tid),
                    metadata=creator,
                )
            )
            assert twice_started.reason == "TOURNAMENT_NOT_REGISTERING"
            late = await refused(
                stub.RegisterForTournament(
                    lobby_pb2.RegisterForTournamentRequest(request_id="late", tournament_id=tid),
                    metadata=bearer(guests[5].tokens.access_token),
                )
            )
            assert late.reason == "TOURNAMENT_NOT_REGISTERING"
            # Newest first, paged by key.
            for index in range(2):
                await stub.CreateTournament(
                    lobby_pb2.CreateTournamentRequest(
                        request_id=f"more{index}", name=f"Cup {index}", max_players=8
                    ),
                    metadata=creator,
                )
            page = await stub.ListTournaments(
                lobby_pb2.ListTournamentsRequest(page_size=2), metadata=creator
            )
            assert [item.name for item in page.tournaments] == ["Cup 1", "Cup 0"]
            following = await stub.ListTournaments(
                lobby_pb2.ListTournamentsRequest(page_size=2, page_token=page.next_page_token),
                metadata=creator,
            )
            assert [item.name for item in following.tournaments] == ["Small cup"]
            running = await stub.ListTournaments(
                lobby_pb2.ListTournamentsRequest(states=[lobby_pb2.TOURNAMENT_STATE_RUNNING]),
                metadata=creator,
            )
            assert [item.tournament_id for item in running.tournaments] == [tid]

    run(scenario())


def test_one_pod_holds_a_tournament_lease_until_it_expires(
    tmp_path: Path, database_url: str
) -> None:
    async def scenario() -> None:
        database = Database(database_url)
        try:
            await database.migrate("lobby")

            one = Tournaments(database, lease_seconds=0.5)
            two = Tournaments(database, lease_seconds=0.5)
            create = lobby_pb2.CreateTournamentRequest(request_id="c", name="Cup", max_players=8)
            created = await one.create(
                NewTournament(
                    name="Cup", rules=b"", preset="oyna", max_players=8, advance_per_table=1,
                    planned_rounds=0, bot_level=0, creator_player_id="",
                ),
                answers.once(
                    "CreateTournament", "service:test", create,
                    lobby_pb2.CreateTournamentResponse,
                ),
                created_tournament_answer,
            )  # fmt: skip
            tid = created.tournament.tournament_id
            for index in range(5):
                player = await _player(database, f"p{index}")
                await one.register(tid, player)
            once = answers.once(
                "StartTournament",
                "service:test",
                lobby_pb2.StartTournamentRequest(request_id="s", tournament_id=tid),
                lobby_pb2.StartTournamentResponse,
            )

            def respond(row: Any) -> lobby_pb2.StartTournamentResponse:
                return lobby_pb2.StartTournamentResponse(
                    tournament=lobby_pb2.Tournament(
                        tournament_id=row.tournament_id, current_round=row.current_round
                    )
                )

            started = await one.start(tid, None, 2, once, respond)
            assert started.tournament.current_round == 1
            # The answer was stored with the start: a retry (here from another pod, as after a
            # pod died before answering) gets it, not TOURNAMENT_NOT_REGISTERING.
            assert await two.start(tid, None, 2, once, respond) == started
            assert await one.acquire_lease(tid, "pod-a")
            assert not await two.acquire_lease(tid, "pod-b")
            assert await one.acquire_lease(tid, "pod-a")  # a renewal
            await asyncio.sleep(0.7)
            assert await two.acquire_lease(tid, "pod-b")
            assert await two.lease(tid) is not None
            holder, _expires, generation = await two.lease(tid)  # type: ignore[misc]
            assert (holder, generation) == ("pod-b", 2)
            # The old holder's writes are fenced off: nothing changes.
            with pytest.raises(LeaseLost):
                await one.plan_round(tid, 1, "pod-a")
            assert await one.round_tables(tid) == []
            await two.plan_round(tid, 1, "pod-b")
            tables = await two.round_tables(tid)
            assert [len([seat for seat in table.seats if seat]) for table in tables] == [3, 2]
            assert [table.advance for table in tables] == [1, 1]
            await two.release_leases("pod-b")
            assert await one.acquire_lease(tid, "pod-a")
        finally:
            await database.dispose()

    run(scenario())


async def _player(database: Database, player_id: str) -> Any:
    row = PlayerRow(player_id, "guest", player_id.upper(), None, None, None, None, 1)
    async with database.write() as session:
        await session.execute(players.insert().values(**row.__dict__))
    return row


# ---------------------------------------------------------------------------------------------
# The process


def test_serve_lobby_starts_alone_serves_the_jwks_and_stops_on_sigterm(tmp_path: Path) -> None:
    """``okey101 serve lobby`` with nothing else running: SERVING, the JWKS over HTTP, exit 0."""
    from okey101.stack import free_ports

    assert "lobby" in built_services()
    port, metrics, jwks_port = free_ports(3)
    env = {**os.environ, "OKEY_LOG_FORMAT": "json"}
    env.pop("OKEY_DATABASE_URL", None)
    command = [
        sys.executable, "-m", "okey101.cli", "serve", "lobby", "--port", str(port),
        "--metrics-port", str(metrics), "--jwks-port", str(jwks_port), "--var-dir", str(tmp_path),
    ]  # fmt: skip
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        from okey101.stack import wait_serving_sync

        wait_serving_sync(f"127.0.0.1:{port}", timeout=60)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            health: Any = health_pb2_grpc.HealthStub(channel)
            status = health.Check(
                health_pb2.HealthCheckRequest(service="okey.v1.LobbyService"), timeout=10
            ).status
            assert status == health_pb2.HealthCheckResponse.SERVING
            stub: Any = lobby_pb2_grpc.LobbyServiceStub(channel)
            guest = stub.LoginGuest(
                lobby_pb2.LoginGuestRequest(
                    request_id="r", device_id="device-process", display_name="P"
                ),
                timeout=10,
            )
        url = f"http://127.0.0.1:{jwks_port}/.well-known/jwks.json"
        verifier = JwksVerifier({}, fetch=fetch_jwks_url(url))
        asyncio.run(verifier.refresh())
        assert verifier.verify(guest.tokens.access_token).subject == guest.player.player_id
        assert (tmp_path / "lobby.db").exists()
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=30)
        assert process.returncode == 0, err[-2000:]
        events = [json.loads(line)["event"] for line in err.splitlines() if line.startswith("{")]
        assert "serving" in events and "stopped" in events
        # Never a secret or a token in a log line.
        assert guest.guest_secret not in err and guest.tokens.access_token not in err
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_while_keys_rotate_the_lobby_publishes_the_new_key_first_and_the_old_one_too(
    tmp_path: Path,
) -> None:
    """Rotation: the new key signs (``--signing-key-file``), the old public key stays published
    (``--jwks-file``) until tokens signed with it have expired; both verify."""
    from okey101.lobby.service import published_jwks
    from okey101.platform.auth import jwks_of

    new, old = SigningKey.generate(), SigningKey.generate()
    (tmp_path / "old.json").write_text(json.dumps(jwks_of(old)))
    settings = lobby_settings(tmp_path, jwks_file=tmp_path / "old.json")
    published = published_jwks(new, settings)
    assert [key["kid"] for key in published["keys"]] == [new.kid, old.kid]
    verifier = JwksVerifier(published)
    for key in (new, old):
        token = TokenIssuer(key).issue("p_someone", "player")
        assert verifier.verify(token).subject == "p_someone"
    # The signing key is never published twice, and only Ed25519 keys are taken from the file.
    (tmp_path / "mixed.json").write_text(
        json.dumps({"keys": [*jwks_of(new)["keys"], {"kty": "RSA", "kid": "rsa", "n": "x"}]})
    )
    mixed = published_jwks(new, lobby_settings(tmp_path, jwks_file=tmp_path / "mixed.json"))
    assert [key["kid"] for key in mixed["keys"]] == [new.kid]
