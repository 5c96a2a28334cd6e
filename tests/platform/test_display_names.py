"""Names other players are shown (issue #32): one check in the platform (``platform.names``),
the same answer from every service that takes one.

A display name full of control characters (ESC sequences, a newline, NUL, U+202E) was refused by
the lobby's LoginGuest but taken by TableService.Sit with a player's own token and shown to every
other seat. Now the lobby (LoginGuest, RegisterAccount, HostTable's and CreateTournament's names)
and the table (Sit, CreateTable) refuse it alike, INVALID_ARGUMENT ``BAD_DISPLAY_NAME``, and the
table is left as it was. The real lobby and table run on 127.0.0.1 port 0 and are called
through the generated stubs.
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
from sqlalchemy import update

from okey101.engine.errors import OkeyError
from okey101.lobby import start_lobby
from okey101.lobby.models import players
from okey101.platform.config import settings_for_tests
from okey101.platform.errors import status_code_of
from okey101.platform.names import DISPLAY_NAME_MAX, TITLE_MAX, shown_name

from support.lobby import operator_auth
from support.service_stack import running_stack

OYNA = common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_OYNA)

#: Names that must never reach another player's screen, and the character each is refused for.
HOSTILE = {
    "\x1b[2J\x1b[31mAdmin": "U+001B",  # ESC: clear the screen, recolour
    "Ali\nSystem: you lost": "U+000A",  # a newline: a line that looks like the server's
    "Ali\x00": "U+0000",
    "\u202eilA": "U+202E",  # RIGHT-TO-LEFT OVERRIDE: text that reads backwards
    "Ali\u2066x\u2069": "U+2066",  # a bidi isolate
    "A\u200bli": "U+200B",  # ZERO WIDTH SPACE: a name that looks like another's
    "Ali\u2028Veli": "U+2028",  # LINE SEPARATOR
    "Ali\u00a0Veli": "U+00A0",  # NO-BREAK SPACE
    "Ali\x7f": "U+007F",  # DEL
    "Ali\u0085": "U+0085",  # NEXT LINE (C1)
    "Ali\ue000": "U+E000",  # private use
}


# ---------------------------------------------------------------------------------------------
# The check


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_the_check_refuses_what_does_not_draw_as_itself(name: str) -> None:
    with pytest.raises(OkeyError) as caught:
        shown_name(name, "display_name")
    error = caught.value
    assert error.code == "BAD_DISPLAY_NAME"
    assert status_code_of(error) == grpc.StatusCode.INVALID_ARGUMENT
    assert error.params["field"] == "display_name"
    assert error.params["character"] == HOSTILE[name]
    assert name[int(error.params["position"]) - 1] == chr(int(HOSTILE[name][2:], 16))
    assert "U+" in error.message("en") and "U+" in error.message("tr")
    assert error.message("en") != error.message("tr")


def test_the_check_keeps_the_names_people_have() -> None:
    for name in ("Ayşe", "Çağrı Öztürk", "İğdır", "李雷", "Zoë 🙂", "O'Brien-Smith", "[/]"):
        assert shown_name(name, "display_name") == name
    assert shown_name("  Ayşe  ", "display_name") == "Ayşe"
    assert shown_name("   ", "display_name") == ""
    assert shown_name("x" * DISPLAY_NAME_MAX, "display_name") == "x" * DISPLAY_NAME_MAX
    with pytest.raises(OkeyError) as caught:
        shown_name("x" * (DISPLAY_NAME_MAX + 1), "display_name")
    assert caught.value.code == "BAD_LENGTH"
    assert caught.value.params == {"field": "display_name", "minimum": 1, "maximum": 32}
    assert shown_name("x" * TITLE_MAX, "name", maximum=TITLE_MAX) == "x" * TITLE_MAX


# ---------------------------------------------------------------------------------------------
# The services


@contextlib.asynccontextmanager
async def lobby_stub(var_dir: Path) -> AsyncIterator[Any]:
    var_dir.mkdir(parents=True, exist_ok=True)
    settings = settings_for_tests(
        "lobby",
        var_dir=var_dir,
        database_url=f"sqlite+aiosqlite:///{var_dir / 'lobby.db'}",
        jwks_port=0,
        log_level="warning",
    )
    async with start_lobby(settings) as lobby:
        channel = grpc.aio.insecure_channel(lobby.target)
        try:
            yield lobby_pb2_grpc.LobbyServiceStub(channel)
        finally:
            await channel.close()


def test_sit_refuses_with_a_players_token_what_the_lobby_refuses(
    tmp_path: Path, refusal: Callable[[grpc.RpcError], Any]
) -> None:
    async def scenario() -> None:
        async with (
            running_stack(tmp_path / "table") as stack,
            lobby_stub(tmp_path / "lobby") as lobby,
        ):
            table = stack.table_stub()
            created = await table.CreateTable(
                table_pb2.CreateTableRequest(request_id="create", rules=OYNA),
                metadata=stack.service_auth(),
            )
            table_id = created.table.table_id
            before = (
                await table.GetTable(
                    table_pb2.GetTableRequest(table_id=table_id), metadata=stack.service_auth()
                )
            ).table
            for name, character in HOSTILE.items():
                with pytest.raises(grpc.aio.AioRpcError) as at_lobby:
                    await lobby.LoginGuest(
                        lobby_pb2.LoginGuestRequest(
                            request_id=uuid.uuid4().hex,
                            device_id=f"device-{uuid.uuid4().hex}",
                            display_name=name,
                            locale="tr-TR",
                        )
                    )
                with pytest.raises(grpc.aio.AioRpcError) as at_table:
                    await table.Sit(
                        table_pb2.SitRequest(
                            request_id=uuid.uuid4().hex,
                            table_id=table_id,
                            seat=1,
                            display_name=name,
                            locale="tr-TR",
                        ),
                        metadata=stack.player_auth("p-hostile"),
                    )
                lobby_said, table_said = refusal(at_lobby.value), refusal(at_table.value)
                assert lobby_said == table_said, name  # the same code, reason, sentence
                assert lobby_said.code == grpc.StatusCode.INVALID_ARGUMENT
                assert lobby_said.reason == "BAD_DISPLAY_NAME"
                assert lobby_said.metadata["field"] == "display_name"
                assert lobby_said.metadata["character"] == character
                assert lobby_said.locale == "tr-TR"
            # Bad input changed nothing: no seat taken, no event, no new version.
            after = (
                await table.GetTable(
                    table_pb2.GetTableRequest(table_id=table_id), metadata=stack.service_auth()
                )
            ).table
            assert after == before
            # A name people have sits, trimmed, and every seat sees it as it was sent.
            sat = await table.Sit(
                table_pb2.SitRequest(
                    request_id="good", table_id=table_id, seat=1, display_name="  Çağrı 🙂 "
                ),
                metadata=stack.player_auth("p-good"),
            )
            assert sat.table.seats[1].display_name == "Çağrı 🙂"
            # A service's Sit is checked the same way (the lobby's, for another player).
            with pytest.raises(grpc.aio.AioRpcError) as by_service:
                await table.Sit(
                    table_pb2.SitRequest(
                        request_id="service-sit",
                        table_id=table_id,
                        seat=2,
                        player_id="p-other",
                        display_name="\u202eevil",
                    ),
                    metadata=stack.service_auth(),
                )
            assert refusal(by_service.value).reason == "BAD_DISPLAY_NAME"

    asyncio.run(scenario())


def test_every_name_shown_to_others_is_checked_alike(
    tmp_path: Path, refusal: Callable[[grpc.RpcError], Any]
) -> None:
    """RegisterAccount's display name, HostTable's and CreateTournament's names at the lobby,
    CreateTable's at the table: each refused for the same reason, naming its field."""

    async def scenario() -> None:
        async with (
            running_stack(tmp_path / "table") as stack,
            lobby_stub(tmp_path / "lobby") as lobby,
        ):
            guest = await lobby.LoginGuest(
                lobby_pb2.LoginGuestRequest(
                    request_id="g", device_id="device-names", display_name="  Ayşe "
                )
            )
            assert guest.player.display_name == "Ayşe"  # kept without the spaces it came with
            auth = (("authorization", f"Bearer {guest.tokens.access_token}"),)
            calls = [
                (
                    lobby.RegisterAccount(
                        lobby_pb2.RegisterAccountRequest(
                            request_id="r",
                            username="ayse",
                            password="correct horse battery",
                            display_name="Ayşe\x1b]0;owned\x07",
                        )
                    ),
                    "display_name",
                ),
                (
                    lobby.HostTable(
                        lobby_pb2.HostTableRequest(request_id="h", rules=OYNA, name="Masa\u202e1"),
                        metadata=auth,
                    ),
                    "name",
                ),
                (
                    lobby.CreateTournament(
                        lobby_pb2.CreateTournamentRequest(
                            request_id="t", name="Kupa\n2", rules=OYNA, max_players=4
                        ),
                        metadata=operator_auth(tmp_path / "lobby"),  # who may create one
                    ),
                    "name",
                ),
                (
                    stack.table_stub().CreateTable(
                        table_pb2.CreateTableRequest(
                            request_id="c", rules=OYNA, name="Masa\x1b[5m"
                        ),
                        metadata=stack.service_auth(),
                    ),
                    "name",
                ),
            ]
            for call, field in calls:
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await call
                said = refusal(caught.value)
                assert (said.code, said.reason) == (
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "BAD_DISPLAY_NAME",
                ), field
                assert said.metadata["field"] == field
            listed = await stack.table_stub().ListTables(
                table_pb2.ListTablesRequest(), metadata=stack.service_auth()
            )
            assert list(listed.tables) == []  # nothing was created

    asyncio.run(scenario())


def test_a_name_stored_before_the_check_still_sits_without_its_ends(tmp_path: Path) -> None:
    """The lobby used to check a name without its ends but keep them ("Legacy\\n"). Such a
    player still hosts and sits: the lobby reads the name without them, as the check passes."""

    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            settings = settings_for_tests(
                "lobby",
                var_dir=tmp_path,
                database_url=f"sqlite+aiosqlite:///{tmp_path / 'lobby.db'}",
                jwks_port=0,
                log_level="warning",
                table_address=stack.table.target,
                scoring_address=stack.scoring.target,
            )
            async with start_lobby(settings) as lobby:
                channel = grpc.aio.insecure_channel(lobby.target)
                stub = lobby_pb2_grpc.LobbyServiceStub(channel)
                try:
                    guest = await stub.LoginGuest(
                        lobby_pb2.LoginGuestRequest(
                            request_id="g", device_id="device-legacy", display_name="Legacy"
                        )
                    )
                    async with lobby.servicer.database.write() as session:
                        await session.execute(
                            update(players)
                            .where(players.c.player_id == guest.player.player_id)
                            .values(display_name="\tLegacy\n")
                        )
                    auth = (("authorization", f"Bearer {guest.tokens.access_token}"),)
                    hosted = await stub.HostTable(
                        lobby_pb2.HostTableRequest(request_id="h", rules=OYNA), metadata=auth
                    )
                    assert hosted.table.seats[hosted.seat].display_name == "Legacy"
                finally:
                    await channel.close()

    asyncio.run(scenario())
