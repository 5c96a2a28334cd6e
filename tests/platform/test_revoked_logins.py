"""A revoked login's tokens stop working everywhere, over real gRPC, and its streams end.

A player's access token names its login (claim ``sid``); Logout (or a reused refresh token)
revokes the login in the lobby, which lists it in ``ListRevokedLogins``; every service follows
that list (here every 0.2 s) and then refuses the login's tokens with UNAUTHENTICATED
``TOKEN_REVOKED`` and ends the WatchTable streams they opened with the same error. Another login
of the same player is untouched (unless ``all_sessions``), and a fresh login resumes the stream
from the sequence it saw.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import jwt
import pytest
from okey.v1 import lobby_pb2, table_pb2, table_pb2_grpc

from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.platform.revocations import RevokedLogin, RevokedLogins
from okey101.stack import free_port
from okey101.table.runtime import start_table

from support.lobby import bearer, lobby_client, lobby_settings, run
from support.service_stack import FAST, peer_services, table_settings
from support.tables import error_of, one_hand_rules

POLL = 0.2


async def guest(stub: Any, device: str, secret: str = "") -> Any:
    return await stub.LoginGuest(
        lobby_pb2.LoginGuestRequest(
            request_id=uuid.uuid4().hex, device_id=device, display_name="Ayşe",
            guest_secret=secret,
        ),
        timeout=30,
    )  # fmt: skip


async def logout(stub: Any, refresh_token: str, *, all_sessions: bool = False) -> int:
    answer = await stub.Logout(
        lobby_pb2.LogoutRequest(
            request_id=uuid.uuid4().hex, refresh_token=refresh_token, all_sessions=all_sessions
        )
    )
    return int(answer.revoked)


async def player_call(stub: Any, player_id: str, token: str) -> None:
    await stub.GetPlayer(lobby_pb2.GetPlayerRequest(player_id=player_id), metadata=bearer(token))


async def refused_within(call: Any, seconds: float) -> tuple[grpc.StatusCode, str, str]:
    """The error ``call()`` fails with once it fails, asked every 50 ms for ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            await call()
        except grpc.aio.AioRpcError as error:
            return error_of(error)
        if time.monotonic() > deadline:
            raise AssertionError(f"still accepted after {seconds} s")
        await asyncio.sleep(0.05)


def sid_of(token: str) -> str:
    return str(jwt.decode(token, options={"verify_signature": False})["sid"])


def test_logging_out_refuses_that_logins_tokens_and_no_other(tmp_path: Path) -> None:
    async def scenario() -> None:
        settings = lobby_settings(tmp_path, revocation_poll_seconds=POLL)
        async with lobby_client(settings) as client:
            stub = client.stub
            device = f"device-{uuid.uuid4().hex}"
            first = await guest(stub, device)
            second = await guest(stub, device, first.guest_secret)
            player = first.player.player_id
            assert second.player.player_id == player
            one, two = first.tokens.access_token, second.tokens.access_token
            # Each login is its own session, named in its tokens.
            assert sid_of(one) != sid_of(two)
            await player_call(stub, player, one)
            assert await logout(stub, first.tokens.refresh_token) == 1
            code, reason, sentence = await refused_within(
                lambda: player_call(stub, player, one), 5 * POLL + 5
            )
            assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_REVOKED")
            assert "log in again" in sentence
            # The other login of the same player still works, and so does a new one.
            await player_call(stub, player, two)
            third = await guest(stub, device, first.guest_secret)
            await player_call(stub, player, third.tokens.access_token)
            # Everywhere at once: every login of the player.
            assert await logout(stub, third.tokens.refresh_token, all_sessions=True) == 2
            for token in (two, third.tokens.access_token):
                code, reason, _ = await refused_within(
                    lambda token=token: player_call(stub, player, token), 5 * POLL + 5
                )
                assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_REVOKED")

    run(scenario())


def test_list_revoked_logins_is_for_services_and_pages(tmp_path: Path) -> None:
    async def scenario() -> None:
        settings = lobby_settings(tmp_path)
        async with lobby_client(settings) as client:
            stub = client.stub
            issuer = TokenIssuer(dev_signing_key(tmp_path))
            service = bearer(issuer.issue("service:table", "service"))
            logins = [await guest(stub, f"device-{uuid.uuid4().hex}") for _ in range(3)]
            before = await stub.ListRevokedLogins(
                lobby_pb2.ListRevokedLoginsRequest(), metadata=service
            )
            assert list(before.logins) == [] and not before.more
            for login in logins:
                await logout(stub, login.tokens.refresh_token)
            answer = await stub.ListRevokedLogins(
                lobby_pb2.ListRevokedLoginsRequest(), metadata=service
            )
            listed = [entry.session_id for entry in answer.logins]
            assert listed == [sid_of(login.tokens.access_token) for login in logins]
            times = [entry.revoked_us for entry in answer.logins]
            assert times == sorted(times) and times[-1] <= answer.as_of_us
            for entry in answer.logins:
                # Listed until the login's last access token (900 s, and the leeway) is over.
                assert entry.forget_after_us - entry.revoked_us == 905_000_000
            later = await stub.ListRevokedLogins(
                lobby_pb2.ListRevokedLoginsRequest(since_us=times[1]), metadata=service
            )
            assert [entry.session_id for entry in later.logins] == listed[1:]
            # Players may not read it; a time before the epoch is refused and names its field.
            with pytest.raises(grpc.aio.AioRpcError) as denied:
                await stub.ListRevokedLogins(
                    lobby_pb2.ListRevokedLoginsRequest(),
                    metadata=bearer(logins[0].tokens.access_token),
                )
            assert denied.value.code() in (
                grpc.StatusCode.PERMISSION_DENIED,
                grpc.StatusCode.UNAUTHENTICATED,  # that login is revoked by now
            )
            fresh = await guest(stub, f"device-{uuid.uuid4().hex}")
            with pytest.raises(grpc.aio.AioRpcError) as wrong_kind:
                await stub.ListRevokedLogins(
                    lobby_pb2.ListRevokedLoginsRequest(),
                    metadata=bearer(fresh.tokens.access_token),
                )
            assert error_of(wrong_kind.value)[:2] == (
                grpc.StatusCode.PERMISSION_DENIED,
                "TOKEN_WRONG_KIND",
            )
            with pytest.raises(grpc.aio.AioRpcError) as negative:
                await stub.ListRevokedLogins(
                    lobby_pb2.ListRevokedLoginsRequest(since_us=-1), metadata=service
                )
            code, reason, sentence = error_of(negative.value)
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_FIELD")
            assert "since_us" in sentence

    run(scenario())


def test_a_revoked_logins_watch_ends_token_revoked_and_a_new_login_resumes(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with peer_services(tmp_path) as peers:
            lobby_port = free_port()
            settings = table_settings(tmp_path, None, peers).replace(
                lobby_address=f"127.0.0.1:{lobby_port}", revocation_poll_seconds=POLL
            )
            async with start_table(settings, options=FAST) as (table, servicer):
                lobby = lobby_settings(
                    tmp_path,
                    port=lobby_port,
                    table_address=table.target,
                    scoring_address=peers[2].target,
                )
                async with lobby_client(lobby) as client:
                    channel = grpc.aio.insecure_channel(table.target)
                    try:
                        await watched_then_revoked(client.stub, channel, servicer, tmp_path)
                    finally:
                        await channel.close()

    run(scenario())


async def watched_then_revoked(
    lobby: Any, channel: grpc.aio.Channel, servicer: Any, var_dir: Path
) -> None:
    tables = table_pb2_grpc.TableServiceStub(channel)
    issuer = TokenIssuer(dev_signing_key(var_dir))
    service = bearer(issuer.issue("service:test", "service"))
    device = f"device-{uuid.uuid4().hex}"
    login = await guest(lobby, device)
    player, token = login.player.player_id, login.tokens.access_token
    created = await tables.CreateTable(
        table_pb2.CreateTableRequest(request_id=uuid.uuid4().hex, rules=one_hand_rules()),
        metadata=service,
    )
    table_id = created.table.table_id
    seated = [(player, token)] + [(name, issuer.issue(name, "player")) for name in ("b", "c", "d")]
    for seat, (_name, seat_token) in enumerate(seated):
        await tables.Sit(
            table_pb2.SitRequest(request_id=f"sit-{seat}", table_id=table_id, seat=seat),
            metadata=bearer(seat_token),
        )
    await tables.Start(
        table_pb2.StartRequest(request_id="start", table_id=table_id), metadata=service
    )
    stream = tables.WatchTable(
        table_pb2.WatchTableRequest(table_id=table_id, seat=0, start_with_view=True),
        metadata=bearer(token),
    )
    first = await stream.read()
    seen = first.view.as_of_sequence
    assert seen > 0
    assert (await servicer.core.tables.get(table_id)).watchers == 1
    # Nothing moves (four people, long timers): the stream waits for events as the login ends.
    await logout(lobby, login.tokens.refresh_token)
    began = time.monotonic()
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        while True:
            message = await asyncio.wait_for(stream.read(), timeout=10 * POLL + 10)
            assert message is not grpc.aio.EOF, "the stream ended without a status"
            seen = message.event.sequence or seen
    code, reason, sentence = error_of(ended.value)
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_REVOKED")
    assert sentence
    assert time.monotonic() - began < 10 * POLL + 5
    assert (await servicer.core.tables.get(table_id)).watchers == 0
    # The table refuses the token's other calls too; nothing changed at the table.
    with pytest.raises(grpc.aio.AioRpcError) as view:
        await tables.GetSeatView(
            table_pb2.GetSeatViewRequest(table_id=table_id, seat=0), metadata=bearer(token)
        )
    assert error_of(view.value)[:2] == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_REVOKED")
    # Logging in again resumes the stream from the sequence seen.
    again = await guest(lobby, device, login.guest_secret)
    resumed = tables.WatchTable(
        table_pb2.WatchTableRequest(table_id=table_id, seat=0, start_with_view=True),
        metadata=bearer(again.tokens.access_token),
    )
    view_again = (await asyncio.wait_for(resumed.read(), timeout=10)).view
    assert view_again.as_of_sequence == seen
    resumed.cancel()


def test_revoked_logins_are_forgotten_when_their_tokens_are_over_and_wake_their_watchers() -> None:
    now = [1_000.0]
    revoked = RevokedLogins(clock=lambda: now[0])
    woken: list[str] = []
    unwatch_a = revoked.watch("a", lambda: woken.append("a"))
    revoked.watch("b", lambda: woken.append("b"))
    unwatch_a()  # a stream that ended before the revocation
    assert revoked.watched == 1
    assert revoked.add([RevokedLogin("a", 1_010.0), RevokedLogin("b", 1_020.0)]) == 2
    assert woken == ["b"] and revoked.watched == 0
    assert revoked.is_revoked("a") and revoked.is_revoked("b") and not revoked.is_revoked("c")
    assert not revoked.is_revoked(None)
    # A stream opened with an already revoked login is told at once.
    revoked.watch("b", lambda: woken.append("b again"))
    assert woken == ["b", "b again"]
    now[0] = 1_015.0
    assert not revoked.is_revoked("a") and revoked.is_revoked("b")
    assert revoked.add([RevokedLogin("c", 1_014.0)]) == 0  # already over: not kept
    assert len(revoked) == 1
