"""What players receive and what services log, over whole hands played through the lobby.

People log in through the lobby (a guest upgraded to an account with a password, guests, tokens
refreshed), host and join public tables with a bot at one seat, and play every hand through
TableService.Act with their own tokens, each watching their own seat's stream while a stranger
watches as a spectator. Meanwhile every log line of every service (lobby, table, rules, bot,
scoring; JSON, at debug level, so more than a cluster writes) is captured.

- Nothing a player receives names a tile hidden from them at that moment: their seat's stream,
  the answers to their moves (events and view) and the views they ask for; the spectator's
  stream names no tile hidden from everyone and carries no private tiles. The check is
  ``test_table_leaks``'s (``support.hand_replay``: each hand replayed from its record), applied
  to what players with their own tokens receive, answers included.
- No log line holds a rack (a list of tile ids, or tiles in notation) or a token, refresh
  token, guest secret, password or private key; and the call lines are there, with the table
  and hand ids docs/architecture.md promises (the capture did capture).

The short version plays one table's hand; ``make soak`` plays three tables of four hands.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import structlog
from okey.v1 import common_pb2, lobby_pb2, lobby_pb2_grpc, table_pb2, table_pb2_grpc

from okey101.engine.bots.entry_points import fallback_decision
from okey101.lobby import Limits, Options, start_lobby
from okey101.lobby.stores.rate_limits import RateLimit
from okey101.platform import convert, logs

from support.abuse import rack_in, secret_in, soak
from support.hand_replay import LIVE_END, HandReplay, hidden_from, tiles_named
from support.lobby import lobby_settings
from support.service_stack import running_stack

ACTIVE = (common_pb2.PHASE_FIRST, common_pb2.PHASE_DRAW, common_pb2.PHASE_PLAY)


@contextlib.contextmanager
def captured_logs() -> Iterator[io.StringIO]:
    """Every log line of this process (structlog and the standard library), as JSON at debug
    level, into a buffer; the configuration before is put back after."""
    saved_config = structlog.get_config()
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    saved_state = dict(logs._state)
    buffer = io.StringIO()
    logs.configure_logging("json", "debug", force=True, file=buffer)
    try:
        yield buffer
    finally:
        structlog.configure(**saved_config)
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        logs._state.update(saved_state)


@dataclass
class Person:
    name: str
    player_id: str = ""
    access: str = ""
    secrets: list[str] = field(default_factory=list)
    #: Everything this person received as a seat: (table, seat, message) in arrival order.
    received: list[tuple[str, int | None, Any]] = field(default_factory=list)
    #: How many Act calls this person made (each must have its log line).
    acts: int = 0

    @property
    def auth(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.access}"),)


async def log_in(lobby: Any, name: str, *, account: bool = False) -> Person:
    """A guest (with a secret), upgraded to an account with a password if ``account``; its
    tokens refreshed once, so old and new tokens are both about."""
    person = Person(name)
    device = f"device-{name}-{uuid.uuid4().hex[:8]}"
    guest = await lobby.LoginGuest(
        lobby_pb2.LoginGuestRequest(
            request_id=uuid.uuid4().hex, device_id=device, display_name=name
        )
    )
    person.player_id = guest.player.player_id
    person.secrets += [guest.guest_secret, guest.tokens.access_token, guest.tokens.refresh_token]
    access, refresh = guest.tokens.access_token, guest.tokens.refresh_token
    if account:
        password = f"correct horse {uuid.uuid4().hex}"
        upgraded = await lobby.RegisterAccount(
            lobby_pb2.RegisterAccountRequest(
                request_id=uuid.uuid4().hex,
                username=f"abuse_{uuid.uuid4().hex[:10]}",
                password=password,
            ),
            metadata=(("authorization", f"Bearer {access}"),),
        )
        person.secrets.append(password)
        person.secrets += [upgraded.tokens.access_token, upgraded.tokens.refresh_token]
        refresh = upgraded.tokens.refresh_token
        # A wrong password, for the log line of a refusal.
        with contextlib.suppress(grpc.aio.AioRpcError):
            await lobby.LoginAccount(
                lobby_pb2.LoginAccountRequest(
                    request_id=uuid.uuid4().hex,
                    username=upgraded.player.username,
                    password=password + "!",
                )
            )
        person.secrets.append(password + "!")
    rotated = await lobby.RefreshTokens(
        lobby_pb2.RefreshTokensRequest(request_id=uuid.uuid4().hex, refresh_token=refresh)
    )
    person.access = rotated.tokens.access_token
    person.secrets += [rotated.tokens.access_token, rotated.tokens.refresh_token]
    return person


async def watch(tables: Any, table_id: str, person: Person, seat: int | None) -> None:
    """The person's stream of the table (their seat's, or a spectator's) until the match ends."""
    request = table_pb2.WatchTableRequest(table_id=table_id, start_with_view=True)
    if seat is not None:
        request.seat = seat
    async for item in tables.WatchTable(request, metadata=person.auth):
        message = item.view if item.HasField("view") else item.event
        person.received.append((table_id, seat, message))
        if item.HasField("event") and item.event.kind == common_pb2.EVENT_KIND_MATCH_ENDED:
            return


async def play(tables: Any, table_id: str, person: Person, seat: int, seed: int) -> None:
    """Play the seat as its person would until the match ends, keeping every answer."""
    while True:
        table = (
            await tables.GetTable(
                table_pb2.GetTableRequest(table_id=table_id), metadata=person.auth
            )
        ).table
        if table.state in (common_pb2.TABLE_STATE_FINISHED, common_pb2.TABLE_STATE_CLOSED):
            return
        view = (
            await tables.GetSeatView(
                table_pb2.GetSeatViewRequest(table_id=table_id, seat=seat), metadata=person.auth
            )
        ).view
        person.received.append((table_id, seat, view))
        if view.turn != seat or view.phase not in ACTIVE or view.HasField("result"):
            await asyncio.sleep(0.02)
            continue
        decision = fallback_decision(
            convert.seat_view_from_proto(view), convert.rules_from_proto(view.rules), seed
        )
        seed += 1
        person.acts += 1
        try:
            answer = await tables.Act(
                table_pb2.ActRequest(
                    request_id=uuid.uuid4().hex,
                    table_id=table_id,
                    seat=seat,
                    actions=[convert.action_to_proto(action) for action in decision.actions],
                    expected_state_version=view.state_version,
                ),
                metadata=person.auth,
            )
        except grpc.aio.AioRpcError as error:
            assert error.code() == grpc.StatusCode.ABORTED, error  # stale: look again
            continue
        person.received.extend((table_id, seat, event) for event in answer.events)
        person.received.append((table_id, seat, answer.view))


def leaks(replays: dict[str, HandReplay], received: list[tuple[str, int | None, Any]]) -> int:
    """Check every message against the hand replayed; how many were checked."""
    checked = 0
    hand_id = ""
    for table_id, seat, message in received:
        if isinstance(message, common_pb2.SeatView):
            if not message.hand_id or message.phase == common_pb2.PHASE_ENDED:
                continue
            state, shown = replays[message.hand_id].at(message.as_of_sequence)
        else:
            if message.hand_id:
                hand_id = message.hand_id
            if not hand_id or message.kind in LIVE_END:
                continue
            state, shown = replays[hand_id].at(message.sequence)
            if seat is None:
                assert not message.private_tiles, (table_id, message.sequence)
        if state.result is not None:
            continue
        leaked = tiles_named(message) & hidden_from(state, seat, shown)
        assert not leaked, (table_id, seat, type(message).__name__, sorted(leaked))
        checked += 1
    return checked


@contextlib.asynccontextmanager
async def lobby_and_peers(var_dir: Path) -> AsyncIterator[tuple[Any, Any, Any]]:
    async with running_stack(var_dir) as stack:
        settings = lobby_settings(
            var_dir, table_address=stack.table.target, scoring_address=stack.scoring.target
        )
        # Every player here calls from 127.0.0.1: out of the limits per client address' way.
        per_address = RateLimit(100_000, 60.0)
        limits = Limits(new_guest_per_address=per_address, host_table_per_address=per_address)
        options = Options(access_token_seconds=3600, limits=limits)
        async with start_lobby(settings, options=options) as lobby:
            channel = grpc.aio.insecure_channel(lobby.target)
            tables = grpc.aio.insecure_channel(stack.table.target)
            try:
                yield (
                    stack,
                    lobby_pb2_grpc.LobbyServiceStub(channel),
                    table_pb2_grpc.TableServiceStub(tables),
                )
            finally:
                await channel.close()
                await tables.close()


def test_no_player_receives_a_hidden_tile_and_no_log_line_holds_a_rack_or_a_secret(
    tmp_path: Path,
) -> None:
    play_and_scan(tmp_path, table_count=1, hands=1)


@soak
def test_soak_no_hidden_tile_and_no_rack_or_secret_in_the_logs_over_many_hands(
    tmp_path: Path,
) -> None:
    play_and_scan(tmp_path, table_count=3, hands=4)


def play_and_scan(tmp_path: Path, *, table_count: int, hands: int) -> None:
    """``table_count`` tables of ``hands`` hands each, played and watched at once; then every
    message checked and every log line scanned."""

    async def scenario() -> tuple[list[Person], dict[str, HandReplay], list[str]]:
        async with lobby_and_peers(tmp_path) as (stack, lobby, tables):
            spectator = await log_in(lobby, "spectator")
            people = [spectator]
            table_ids = []
            work = []
            rules = common_pb2.RuleSet(
                preset=common_pb2.RULE_PRESET_BOOMBALA,
                match_end=common_pb2.MATCH_END_FIXED_HANDS,
                match_hands=hands,
            )
            for index in range(table_count):
                host = await log_in(lobby, f"host{index}", account=True)
                guests = [await log_in(lobby, f"guest{index}{n}") for n in range(2)]
                people += [host, *guests]
                hosted = await lobby.HostTable(
                    lobby_pb2.HostTableRequest(
                        request_id=uuid.uuid4().hex,
                        rules=rules,
                        name=f"abuse {index}",
                        host_seat=0,
                        bots=[lobby_pb2.BotSeat(seat=3, level=common_pb2.BOT_LEVEL_HARD)],
                        start_when_full=True,
                    ),
                    metadata=host.auth,
                )
                table_id = hosted.table.table_id
                table_ids.append(table_id)
                for seat, person in ((0, host), (1, guests[0]), (2, guests[1])):
                    if seat:
                        await lobby.JoinTable(
                            lobby_pb2.JoinTableRequest(
                                request_id=uuid.uuid4().hex, table_id=table_id, seat=seat
                            ),
                            metadata=person.auth,
                        )
                    work.append(watch(tables, table_id, person, seat))
                    work.append(play(tables, table_id, person, seat, seed=index * 10 + seat))
                work.append(watch(tables, table_id, spectator, None))
            await asyncio.wait_for(asyncio.gather(*work), 300)
            replays: dict[str, HandReplay] = {}
            for table_id in table_ids:
                for number in range(1, hands + 1):
                    hand_id = f"{table_id}-h{number}"
                    record = (
                        await tables.GetHandRecord(
                            table_pb2.GetHandRecordRequest(hand_id=hand_id),
                            metadata=stack.service_auth(),
                        )
                    ).record
                    replays[hand_id] = HandReplay(record)
            secrets = [secret for person in people for secret in person.secrets]
            secrets.append(stack.service_auth()[0][1].removeprefix("Bearer "))
            key = (tmp_path / "dev-signing-key.pem").read_text()
            secrets += [line for line in key.splitlines() if line and "-----" not in line]
            return people, replays, secrets

    with captured_logs() as buffer:
        people, replays, secrets = asyncio.run(scenario())
    checked = sum(leaks(replays, person.received) for person in people)
    assert checked > table_count * hands * 4 * 30, checked

    lines = buffer.getvalue().splitlines()
    calls = [line for line in lines if '"event": "rpc"' in line]
    acts = [line for line in calls if "/okey.v1.TableService/Act" in line]
    # One line per Act call the people made (how many a hand takes varies with the deal).
    made = sum(person.acts for person in people)
    assert made > table_count * hands * 4, made
    assert len(acts) >= made, (len(acts), made)
    assert all('"table_id"' in line and '"request_id"' in line for line in acts)
    assert any("/okey.v1.BotService/NextStep" in line for line in calls)
    assert any("/okey.v1.ScoringService/RecordHand" in line for line in calls)
    assert any("/okey.v1.LobbyService/RegisterAccount" in line for line in calls)
    for number, line in enumerate(lines):
        rack = rack_in(line)
        assert rack is None, f"log line {number} holds a rack ({rack}): {line[:500]}"
        secret = secret_in(line, secrets)
        assert secret is None, f"log line {number} holds {secret}: {line[:300]}"
