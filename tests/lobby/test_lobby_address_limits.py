"""The lobby's limits per client address (issue #32): one client could mint unlimited guests (40
LoginGuest calls with fresh device ids, 40 answered), each with HostTable and Act budgets of its
own. Now a client address may create ``OKEY_NEW_GUEST_LIMIT_PER_ADDRESS_PER_MINUTE`` guests a
minute (10) and its players together may host ``OKEY_HOST_TABLE_LIMIT_PER_ADDRESS_PER_MINUTE``
tables a minute (30), on top of the limits per device and per player; over them a call is
RESOURCE_EXHAUSTED ``RATE_LIMITED`` with ``retry_after_ms``, as every other limit answers.

The client's address is the connection's peer, or, behind a configured trusted proxy, the
address the proxy says it was called from (``platform.addresses``). Every test here calls from
127.0.0.1. The lobby, and for HostTable the real table with its peers, run on 127.0.0.1 port 0
and are called through the generated stubs.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from okey.v1 import common_pb2, lobby_pb2, lobby_pb2_grpc, table_pb2
from sqlalchemy import func, select

from okey101.lobby import Limits, Lobby, Options, start_lobby
from okey101.lobby.models import players
from okey101.lobby.stores.rate_limits import RateLimit, address_subject
from okey101.platform.addresses import TrustedProxies
from okey101.platform.config import Settings, load_settings, settings_for_tests

from support.service_stack import running_stack

#: The defaults a deployment runs with (the settings as read with nothing set).
DEFAULTS = load_settings("lobby", {}, {})
OYNA = common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_OYNA)
#: The limits' windows in the tests that fill them: an hour, so that no window ends while a test
#: runs (a minute's could, and let a call through); the counts are the defaults.
HOUR = 3600.0


def settings(var_dir: Path, **changes: Any) -> Settings:
    return settings_for_tests(
        "lobby",
        var_dir=var_dir,
        database_url=f"sqlite+aiosqlite:///{var_dir / 'lobby.db'}",
        jwks_port=0,
        log_level="warning",
        **changes,
    )


@contextlib.asynccontextmanager
async def lobby_at(
    lobby_settings: Settings, options: Options | None = None
) -> AsyncIterator[tuple[Lobby, Any]]:
    async with start_lobby(lobby_settings, options=options) as lobby:
        channel = grpc.aio.insecure_channel(lobby.target)
        try:
            yield lobby, lobby_pb2_grpc.LobbyServiceStub(channel)
        finally:
            await channel.close()


async def guests(lobby: Lobby) -> int:
    async with lobby.servicer.database.read() as session:
        return int((await session.execute(select(func.count()).select_from(players))).scalar_one())


def login(device: str, request_id: str | None = None, **fields: Any) -> Any:
    return lobby_pb2.LoginGuestRequest(
        request_id=request_id or uuid.uuid4().hex,
        device_id=device,
        display_name=fields.pop("display_name", "Ayşe"),
        **fields,
    )


def test_the_defaults_are_what_a_lobby_serves_with(tmp_path: Path) -> None:
    assert DEFAULTS.new_guest_limit_per_address_per_minute == 10
    assert DEFAULTS.host_table_limit_per_address_per_minute == 30
    assert Limits().new_guest_per_address == RateLimit(10, 60.0)
    assert Limits().host_table_per_address == RateLimit(30, 60.0)
    chosen = settings(
        tmp_path,
        new_guest_limit_per_address_per_minute=7,
        host_table_limit_per_address_per_minute=8,
    )

    async def scenario() -> None:
        async with lobby_at(chosen) as (lobby, _stub):
            limits = lobby.servicer.options.limits
            assert limits.new_guest_per_address == RateLimit(7, 60.0)
            assert limits.host_table_per_address == RateLimit(8, 60.0)

    asyncio.run(scenario())


def test_one_address_creates_ten_guests_a_minute_by_default(
    tmp_path: Path, refusal: Callable[[grpc.RpcError], Any]
) -> None:
    """Fresh device ids do not help, nor does one request id sent with each (not a retry of
    one call), nor an X-Forwarded-For header from a client no proxy is trusted for. A guest
    that exists logs in again whatever the count: only creating one is limited."""
    limit = DEFAULTS.new_guest_limit_per_address_per_minute
    options = Options(limits=Limits(new_guest_per_address=RateLimit(limit, HOUR)))

    async def scenario() -> None:
        async with lobby_at(settings(tmp_path), options) as (lobby, stub):
            first = await stub.LoginGuest(login("device-first", "same-id"))
            for index in range(1, limit):
                await stub.LoginGuest(
                    login(f"device-{index:04d}", "same-id"),
                    metadata=(("x-forwarded-for", f"198.51.100.{index}"),),
                )
            assert await guests(lobby) == limit
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.LoginGuest(
                    login("device-over", "same-id", locale="tr-TR"),
                    metadata=(("x-forwarded-for", "198.51.100.200"),),
                )
            said = refusal(caught.value)
            assert (said.code, said.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
            assert said.metadata["action"] == "new_guest"
            assert 0 < int(said.metadata["retry_after_ms"]) <= HOUR * 1000
            assert said.message.startswith("Çok fazla istek")
            assert await guests(lobby) == limit  # refused: nobody made
            # An existing guest (the device's secret) is not a new one: let in.
            again = await stub.LoginGuest(
                login("device-first", guest_secret=first.guest_secret, display_name="")
            )
            assert again.player.player_id == first.player.player_id
            # A retry of a refused call is judged again, and refused again.
            with pytest.raises(grpc.aio.AioRpcError) as retried:
                await stub.LoginGuest(login("device-over", "same-id"))
            assert refusal(retried.value).reason == "RATE_LIMITED"

    asyncio.run(scenario())


def test_behind_a_trusted_proxy_each_client_address_is_counted_apart(
    tmp_path: Path, refusal: Callable[[grpc.RpcError], Any]
) -> None:
    """With 127.0.0.1 a trusted proxy, the address it forwards is the client: two clients
    behind it have a count each; an IPv6 client is counted by its /64."""
    options = Options(
        limits=Limits(new_guest_per_address=RateLimit(2, 3600.0)),
        trusted_proxies=TrustedProxies.parse("127.0.0.1"),
    )

    def via(address: str) -> tuple[tuple[str, str], ...]:
        return (("x-forwarded-for", f"10.9.9.9, {address}"),)

    async def scenario() -> None:
        async with lobby_at(settings(tmp_path), options) as (_lobby, stub):
            for client in ("203.0.113.1", "203.0.113.2", "2001:db8:1:2::1"):
                for device in ("a", "b"):
                    await stub.LoginGuest(login(f"device-{client}-{device}"), metadata=via(client))
            for client in ("203.0.113.1", "203.0.113.2", "2001:db8:1:2:ffff::9"):
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.LoginGuest(login(f"device-{client}-c"), metadata=via(client))
                assert refusal(caught.value).reason == "RATE_LIMITED", client
            await stub.LoginGuest(login("device-new-client"), metadata=via("203.0.113.3"))

    asyncio.run(scenario())


def test_address_subjects() -> None:
    assert address_subject("203.0.113.7") == "address:203.0.113.7"
    assert address_subject("::ffff:203.0.113.7") == "address:203.0.113.7"
    assert address_subject("2001:db8:1:2:3:4:5:6") == address_subject("2001:db8:1:2::9")
    assert address_subject("2001:db8:1:2::9") == "address:2001:db8:1:2::/64"
    assert address_subject("2001:db8:1:3::9") != address_subject("2001:db8:1:2::9")
    assert address_subject("unknown") == "address:unknown"


def test_one_addresss_players_host_thirty_tables_a_minute_by_default(
    tmp_path: Path, refusal: Callable[[grpc.RpcError], Any]
) -> None:
    """Each player may host 10 tables a minute, and all the players of one address together
    30 (the defaults): a fourth guest of an address whose three have hosted 30 is refused its
    first, and no table is made for it."""
    per_player = DEFAULTS.host_table_limit_per_minute
    per_address = DEFAULTS.host_table_limit_per_address_per_minute
    assert per_address % per_player == 0 and per_address > per_player

    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            chosen = settings(
                tmp_path,
                table_address=stack.table.target,
                scoring_address=stack.scoring.target,
            )
            limits = Limits(
                host_table=RateLimit(per_player, HOUR),
                host_table_per_address=RateLimit(per_address, HOUR),
            )
            async with lobby_at(chosen, Options(limits=limits)) as (_lobby, stub):
                tokens = []
                for index in range(per_address // per_player + 1):
                    guest = await stub.LoginGuest(login(f"device-host-{index}"))
                    tokens.append((("authorization", f"Bearer {guest.tokens.access_token}"),))

                def host(request_id: str) -> Any:
                    return lobby_pb2.HostTableRequest(
                        request_id=request_id,
                        rules=OYNA,
                        visibility=common_pb2.TABLE_VISIBILITY_PRIVATE,
                    )

                for auth in tokens[:-1]:
                    for number in range(per_player):
                        await stub.HostTable(host(f"h{number}"), metadata=auth)
                    with pytest.raises(grpc.aio.AioRpcError) as own:
                        await stub.HostTable(host("one-more"), metadata=auth)
                    assert refusal(own.value).reason == "RATE_LIMITED"  # the player's limit
                table = stack.table_stub()
                listed = await table.ListTables(
                    table_pb2.ListTablesRequest(page_size=100), metadata=stack.service_auth()
                )
                assert len(listed.tables) == per_address
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.HostTable(host("h0"), metadata=tokens[-1])
                said = refusal(caught.value)
                assert (said.code, said.reason) == (
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    "RATE_LIMITED",
                )
                assert said.metadata["action"] == "host_table"
                assert 0 < int(said.metadata["retry_after_ms"]) <= HOUR * 1000
                listed = await table.ListTables(
                    table_pb2.ListTablesRequest(page_size=100), metadata=stack.service_auth()
                )
                assert len(listed.tables) == per_address  # refused: no table made

    asyncio.run(scenario())
