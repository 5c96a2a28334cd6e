"""Push notifications over real gRPC: a lobby in-process, as ``okey101 serve lobby`` runs it,
sending to local FCM, APNs and webhook servers that check each request as the providers'
documentation specifies it (``support.push_servers``); the table's events recorded as its
outbox records them (``RecordPlayerEvents``), or played at a real table."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest
from okey.v1 import common_pb2, lobby_pb2, table_pb2

from okey101.engine.bots.entry_points import fallback_decision
from okey101.lobby.errors import SENTENCES
from okey101.lobby.push import texts
from okey101.lobby.push.devices import MAX_DEVICES
from okey101.platform import convert
from okey101.stack import free_port

from support.databases import TEST_DATABASE_ENV, postgres_database
from support.lobby import bearer, lobby_client, refused, run
from support.lobby_peers import lobby_for, peers_running
from support.push_servers import Reply, local_providers

APNS_TOKEN = "a1" * 32
FCM_TOKEN = "fcm-token:APA91b" + "x" * 40
TURN = lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED
FCM_ERROR = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
ROOT = Path(__file__).resolve().parents[2]


def _fcm_error(status: int, name: str, code: str, **extra: Any) -> Reply:
    details = [{"@type": FCM_ERROR, "errorCode": code}]
    return Reply.of(
        status, {"error": {"code": status, "status": name, "details": details}}, **extra
    )


# ---------------------------------------------------------------------------------------------
# Registering


def test_registering_again_updates_the_device_and_a_token_moves_to_who_registers_it(
    push_world: Any,
) -> None:
    """The same platform and token again: the same device id, the new language. Another
    player registering the token takes the device over (its pending notifications are not
    theirs). Unregistering by token or id removes it once; a retry answers as the first did."""

    async def scenario() -> None:
        async with push_world() as world:
            ayse, mehmet = await world.client.guest(name="Ayşe"), await world.client.guest()
            first = await world.register(ayse, "fcm", FCM_TOKEN, "en")
            assert first.startswith("pd_")
            assert await world.register(ayse, "fcm", FCM_TOKEN, "tr-TR") == first
            (device,) = await world.devices()
            assert (device.player_id, device.language) == (ayse.player.player_id, "tr")
            # An APNs token is case-insensitive hex: the same device in either case.
            apns = await world.register(ayse, "apns", APNS_TOKEN.upper())
            assert await world.register(ayse, "apns", APNS_TOKEN) == apns

            assert await world.register(mehmet, "fcm", FCM_TOKEN) == first
            owners = {row.device_id: row.player_id for row in await world.devices()}
            assert owners == {first: mehmet.player.player_id, apns: ayse.player.player_id}

            request = lobby_pb2.UnregisterPushDeviceRequest(request_id="un-1", token=FCM_TOKEN)
            auth = bearer(mehmet.tokens.access_token)
            assert (await world.stub.UnregisterPushDevice(request, metadata=auth)).removed
            assert (await world.stub.UnregisterPushDevice(request, metadata=auth)).removed
            again = lobby_pb2.UnregisterPushDeviceRequest(request_id="un-2", token=FCM_TOKEN)
            assert not (await world.stub.UnregisterPushDevice(again, metadata=auth)).removed
            # Another player's device is not the caller's to remove.
            theirs = lobby_pb2.UnregisterPushDeviceRequest(request_id="un-3", device_id=apns)
            assert not (await world.stub.UnregisterPushDevice(theirs, metadata=auth)).removed
            mine = lobby_pb2.UnregisterPushDeviceRequest(request_id="un-4", device_id=apns)
            ayse_auth = bearer(ayse.tokens.access_token)
            assert (await world.stub.UnregisterPushDevice(mine, metadata=ayse_auth)).removed
            assert await world.devices() == []

    run(scenario())


def test_bad_devices_are_refused_with_a_reason_and_both_sentences_and_change_nothing(
    push_world: Any,
) -> None:
    too_long = "x" * 4097
    cases = [
        (99, FCM_TOKEN, "en", "INVALID_ARGUMENT", "BAD_PUSH_PLATFORM", {"value": "99"}),
        (0, FCM_TOKEN, "en", "INVALID_ARGUMENT", "BAD_PUSH_PLATFORM", {"value": "0"}),
        (1, "", "en", "INVALID_ARGUMENT", "FIELD_REQUIRED", {"field": "token"}),
        (1, too_long, "en", "INVALID_ARGUMENT", "BAD_LENGTH", {"field": "token"}),
        (1, "a token with spaces", "en", "INVALID_ARGUMENT", "BAD_PUSH_TOKEN", {}),
        (2, "not-hex" * 10, "en", "INVALID_ARGUMENT", "BAD_PUSH_TOKEN", {"platform": "APNS"}),
        (3, "http://example.com/hook", "en", "INVALID_ARGUMENT", "BAD_WEBHOOK_URL", {}),
        (3, "https://10.1.2.3/hook", "en", "INVALID_ARGUMENT", "BAD_WEBHOOK_URL", {}),
        (3, "https://user:pw@example.com/", "en", "INVALID_ARGUMENT", "BAD_WEBHOOK_URL", {}),
        (3, "https://[::1]:8443/", "en", "INVALID_ARGUMENT", "BAD_WEBHOOK_URL", {}),
        (3, "ftp://example.com/", "en", "INVALID_ARGUMENT", "BAD_WEBHOOK_URL", {}),
        (1, FCM_TOKEN, "de", "INVALID_ARGUMENT", "BAD_PUSH_LANGUAGE", {"language": "de"}),
        (1, FCM_TOKEN, "", "INVALID_ARGUMENT", "FIELD_REQUIRED", {"field": "language"}),
        (2, APNS_TOKEN, "tr", "FAILED_PRECONDITION", "PUSH_PLATFORM_NOT_CONFIGURED", {}),
    ]

    async def scenario() -> None:
        # APNs is off here; webhooks may not go to loopback hosts (as in production).
        async with push_world(without=("apns",), push_webhook_allow_loopback=False) as world:
            guest = await world.client.guest()
            for platform, token, language, code, reason, params in cases:
                for locale in ("en", "tr"):
                    failure = await refused(
                        world.stub.RegisterPushDevice(
                            lobby_pb2.RegisterPushDeviceRequest(
                                request_id=uuid.uuid4().hex,
                                platform=platform,
                                token=token,
                                language=language,
                                locale=locale,
                            ),
                            metadata=bearer(guest.tokens.access_token),
                        )
                    )
                    what = (platform, token[:30], language, locale)
                    assert (failure.code.name, failure.reason) == (code, reason), what
                    assert params.items() <= failure.metadata.items(), what
                    assert failure.message == SENTENCES.render(reason, locale, failure.metadata)
                    assert failure.locale == {"en": "en-US", "tr": "tr-TR"}[locale]
            assert await world.devices() == []
            # Loopback webhooks too are refused without the operator's setting.
            loopback = await refused(
                world.stub.RegisterPushDevice(
                    lobby_pb2.RegisterPushDeviceRequest(
                        request_id="loop",
                        platform=lobby_pb2.PUSH_PLATFORM_WEBHOOK,
                        token=world.providers.webhook.url("x"),
                        language="en",
                    ),
                    metadata=bearer(guest.tokens.access_token),
                )
            )
            assert loopback.reason == "BAD_WEBHOOK_URL"
            unregister = await refused(
                world.stub.UnregisterPushDevice(
                    lobby_pb2.UnregisterPushDeviceRequest(request_id="u", locale="tr"),
                    metadata=bearer(guest.tokens.access_token),
                )
            )
            assert (unregister.reason, unregister.metadata) == (
                "FIELD_REQUIRED",
                {"field": "device_id"},
            )
            assert "device_id" in unregister.message and unregister.locale == "tr-TR"

    run(scenario())


def test_a_player_keeps_ten_devices_and_the_oldest_goes(push_world: Any) -> None:
    async def scenario() -> None:
        async with push_world() as world:
            guest = await world.client.guest()
            ids = [
                await world.register(guest, "fcm", f"token-{index}")
                for index in range(MAX_DEVICES + 2)
            ]
            kept = {row.device_id for row in await world.devices()}
            assert kept == set(ids[2:])
            # Registering an old token again makes it the newest: the next one to go is ids[3].
            await world.register(guest, "fcm", "token-2")
            await world.register(guest, "fcm", "token-new")
            kept = {row.device_id for row in await world.devices()}
            assert ids[2] in kept and ids[3] not in kept and len(kept) == MAX_DEVICES

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Sending


def test_each_event_goes_once_to_every_device_while_no_stream_is_open_and_not_while_one_is(
    push_world: Any, stream: Any
) -> None:
    """Three devices (FCM in English, APNs in Turkish, a webhook): a TURN_STARTED reaches each
    once, in its language, with its data, over HTTP/2 where the provider speaks it, through an
    OAuth token the local FCM issued. With a WatchPlayer stream open, the next one reaches no
    device (dropped as told by the stream); once the stream is closed, the one after does."""

    async def scenario() -> None:
        async with push_world() as world:
            fcm, apns, webhook = world.providers.fcm, world.providers.apns, world.providers.webhook
            guest = await world.client.guest(name="Üç")
            player_id = guest.player.player_id
            await world.register(guest, "fcm", FCM_TOKEN, "en")
            apns_device = await world.register(guest, "apns", APNS_TOKEN, "tr")
            await world.register(guest, "webhook", webhook.url("mine"), "tr")

            await world.record(player_id, table_id="t-one")
            rows = await world.settled(3)
            assert [(row.state, row.attempts) for row in rows] == [("sent", 1)] * 3
            await asyncio.sleep(1.0)  # nothing more comes
            assert (len(fcm.sends()), len(apns.sends()), len(webhook.sends())) == (1, 1, 1)

            (message,) = fcm.messages()
            assert message["token"] == FCM_TOKEN
            assert message["notification"] == {"title": "Your turn", "body": texts.TEXTS.render(
                "TURN_STARTED_BODY", "en", {})}  # fmt: skip
            assert message["data"]["kind"] == "TURN_STARTED"
            assert (message["data"]["table_id"], message["data"]["seat"]) == ("t-one", "2")
            assert message["data"]["sequence"] == "1"
            assert message["android"]["collapse_key"] == "table-t-one"
            assert fcm.token_requests == 1 and fcm.accepted[0].http_version == "2"

            (sent,) = apns.accepted
            assert sent.path == f"/3/device/{APNS_TOKEN}" and sent.http_version == "2"
            assert sent.headers["apns-collapse-id"] == "table-t-one"
            assert sent.json()["aps"]["alert"] == {
                "title": "Sıra sende",
                "body": "Okey masanda hamle sırası sende.",
            }
            (document,) = webhook.documents()
            assert (document["kind"], document["language"], document["title"]) == (
                "TURN_STARTED",
                "tr",
                "Sıra sende",
            )
            assert document["player_id"] == player_id and document["sequence"] == 1
            assert webhook.accepted[0].headers["x-okey-delivery"] == document["delivery_id"]
            assert {row.device_id for row in rows} >= {apns_device}

            watching = stream(world.client, guest.tokens.access_token)
            await watching.until(1)  # the snapshot: the stream is open
            await world.record(player_id, table_id="t-two")
            rows = await world.settled(6)
            assert [(row.state, row.reason) for row in rows[3:]] == [("dropped", "stream")] * 3
            await watching.until(2)  # the stream told the player
            await watching.close()
            async with asyncio.timeout(5):  # the stream's presence goes with it
                while await _present(world):
                    await asyncio.sleep(0.05)

            await world.record(player_id, table_id="t-three")
            rows = await world.settled(9)
            assert [row.state for row in rows[6:]] == ["sent"] * 3
            assert (len(fcm.sends()), len(apns.sends()), len(webhook.sends())) == (2, 2, 2)
            assert [m["data"]["sequence"] for m in fcm.messages()] == ["1", "3"]
            assert world.providers.violations() == []

    run(scenario())


async def _present(world: Any) -> int:
    from okey101.lobby.models import player_presence

    return await world.client.count(player_presence)


async def _play_when_told(peers: Any, token: str, table_id: str, fcm: Any) -> None:
    """Play seat 0 as a player away from the app would: each turn only once its notification
    has come (``support.lobby_peers.play_seat``, waiting for the phone)."""
    auth, tables, told, seed = bearer(token), peers.tables, 0, 11
    while True:
        table = (
            await tables.GetTable(table_pb2.GetTableRequest(table_id=table_id), metadata=auth)
        ).table
        if table.state in (common_pb2.TABLE_STATE_FINISHED, common_pb2.TABLE_STATE_CLOSED):
            return
        view = (
            await tables.GetSeatView(
                table_pb2.GetSeatViewRequest(table_id=table_id, seat=0), metadata=auth
            )
        ).view
        starts = view.phase in (common_pb2.PHASE_FIRST, common_pb2.PHASE_DRAW)
        if (
            table.state != common_pb2.TABLE_STATE_PLAYING
            or view.turn != 0
            or view.HasField("result")
            or not (starts or view.phase == common_pb2.PHASE_PLAY)
        ):
            await asyncio.sleep(0.02)
            continue
        if starts and len(fcm.accepted) == told:
            await fcm.until(told + 1, timeout=15)  # the phone buzzes: "Your turn"
        told = len(fcm.accepted)
        decision = fallback_decision(
            convert.seat_view_from_proto(view), convert.rules_from_proto(view.rules), seed
        )
        seed += 1
        with contextlib.suppress(grpc.aio.AioRpcError):  # stale: read the view again
            await tables.Act(
                table_pb2.ActRequest(
                    request_id=uuid.uuid4().hex,
                    table_id=table_id,
                    seat=0,
                    actions=[convert.action_to_proto(action) for action in decision.actions],
                    expected_state_version=view.state_version,
                ),
                metadata=auth,
            )


def test_a_tables_turns_are_pushed_once_each_while_no_stream_is_open(tmp_path: Path) -> None:
    """A player with an FCM device and no stream hosts a one-hand table with three bots and
    plays it, each turn once the phone has been told: every TURN_STARTED the table's outbox
    recorded reaches the device exactly once, with its table, seat and deadline, and nothing
    comes for the seats the bots play."""

    async def scenario() -> None:
        port = free_port()
        async with (
            local_providers(tmp_path / "push") as providers,
            peers_running(tmp_path, lobby_address=f"127.0.0.1:{port}") as peers,
            lobby_client(lobby_for(tmp_path, peers, port=port, **providers.settings())) as client,
        ):
            guest = await client.guest(name="Host")
            auth = bearer(guest.tokens.access_token)
            await client.stub.RegisterPushDevice(
                lobby_pb2.RegisterPushDeviceRequest(
                    request_id="dev",
                    platform=lobby_pb2.PUSH_PLATFORM_FCM,
                    token=FCM_TOKEN,
                    language="en",
                ),
                metadata=auth,
            )
            hosted = await client.stub.HostTable(
                lobby_pb2.HostTableRequest(
                    request_id="host",
                    name="Pushed",
                    rules=common_pb2.RuleSet(
                        preset=common_pb2.RULE_PRESET_BOOMBALA,
                        match_end=common_pb2.MATCH_END_FIXED_HANDS,
                        match_hands=1,
                    ),
                    visibility=common_pb2.TABLE_VISIBILITY_PRIVATE,
                    host_seat=0,
                    bots=[
                        lobby_pb2.BotSeat(seat=seat, level=common_pb2.BOT_LEVEL_RANDOM)
                        for seat in (1, 2, 3)
                    ],
                    start_when_full=True,
                ),
                metadata=auth,
            )
            table_id = hosted.table.table_id
            await asyncio.wait_for(
                _play_when_told(peers, guest.tokens.access_token, table_id, providers.fcm), 120
            )
            events = client.lobby.servicer.repository.player_events
            player_id = guest.player.player_id

            async def turns() -> list[lobby_pb2.PlayerEvent]:
                return [e for e in await events.after(player_id, 0, limit=1000) if e.kind == TURN]

            async with asyncio.timeout(30):  # the table's outbox has told the lobby
                while not any(
                    e.kind == lobby_pb2.PLAYER_EVENT_KIND_MATCH_ENDED
                    for e in await events.after(player_id, 0, limit=1000)
                ):
                    await asyncio.sleep(0.1)
            told = await turns()
            assert told and all((e.table_id, e.seat) == (table_id, 0) for e in told)
            async with asyncio.timeout(30):
                while True:
                    rows = await _rows(client)
                    if len(rows) == len(told) and all(r.state in ("sent", "dropped") for r in rows):
                        break
                    await asyncio.sleep(0.1)
            assert sorted(row.sequence for row in rows) == sorted(e.sequence for e in told)
            assert all((row.state, row.attempts) == ("sent", 1) for row in rows)
            await asyncio.sleep(1.0)  # nothing more comes
            messages = providers.fcm.messages()
            assert [int(m["data"]["sequence"]) for m in messages] == [e.sequence for e in told]
            for message, event in zip(messages, told, strict=True):
                assert (message["data"]["table_id"], message["data"]["seat"]) == (table_id, "0")
                assert message["data"]["deadline"] == event.deadline.ToJsonString()
            assert providers.violations() == []

    run(scenario())


async def _rows(client: Any) -> list[Any]:
    from sqlalchemy import select

    from okey101.lobby.models import push_outbox

    async with client.lobby.servicer.database.read() as session:
        return list((await session.execute(select(push_outbox))).all())


def test_a_busy_provider_is_retried_after_its_retry_after_and_sent_once(
    push_world: Any,
) -> None:
    """FCM answers 503 with Retry-After: 1, APNs 429 then 503, the webhook 500 twice: each
    notification goes again no sooner than told, is accepted once, and its row says how many
    attempts it took."""

    async def scenario() -> None:
        async with push_world() as world:
            fcm, apns, webhook = world.providers.fcm, world.providers.apns, world.providers.webhook
            guest = await world.client.guest()
            await world.register(guest, "fcm", FCM_TOKEN)
            await world.register(guest, "apns", APNS_TOKEN)
            await world.register(guest, "webhook", webhook.url("busy"))
            fcm.fail_next(FCM_TOKEN, _fcm_error(503, "UNAVAILABLE", "UNAVAILABLE", retry_after="1"))
            apns.fail_next(
                APNS_TOKEN,
                Reply.of(429, {"reason": "TooManyRequests"}),
                Reply.of(503, {"reason": "ServiceUnavailable"}),
            )
            webhook.fail_next("/hook/busy", Reply.of(500), Reply.of(500, retry_after="1"))
            await world.record(guest.player.player_id)
            rows = await world.settled(3, timeout=30)
            assert all(row.state == "sent" for row in rows)
            by_platform = {device.platform: device.device_id for device in await world.devices()}
            attempts = {row.device_id: row.attempts for row in rows}
            assert attempts[by_platform["fcm"]] == 2
            assert attempts[by_platform["apns"]] == 3
            assert attempts[by_platform["webhook"]] == 3
            first, second = fcm.sends()
            assert second.at - first.at >= 1.0
            a1, a2, a3 = apns.sends()
            # Backed off: about 1 s, then about 2 s (each with a tenth of jitter).
            assert a2.at - a1.at >= 0.85 and a3.at - a2.at >= 1.75
            assert len(fcm.accepted) == len(apns.accepted) == len(webhook.accepted) == 1
            # The same delivery id on every attempt.
            assert len({request.headers["apns-id"] for request in apns.sends()}) == 1
            await asyncio.sleep(1.0)
            assert len(fcm.sends()) == 2 and len(apns.sends()) == 3 and len(webhook.sends()) == 3
            assert world.providers.violations() == []

    run(scenario())


def test_a_turn_that_is_over_is_not_pushed(push_world: Any) -> None:
    """A TURN_STARTED whose deadline has passed is dropped unsent; one whose provider asks for
    a wait beyond its deadline is dropped then; one whose table has a later event of the
    player's by the time it could go (a retry) is dropped as superseded, and the later one
    goes."""

    async def scenario() -> None:
        async with push_world() as world:
            fcm = world.providers.fcm
            guest = await world.client.guest()
            player_id = guest.player.player_id
            await world.register(guest, "fcm", FCM_TOKEN)

            await world.record(player_id, table_id="t-late", deadline_in=-1.0)
            (row,) = await world.settled(1)
            assert (row.state, row.reason, row.attempts) == ("dropped", "expired", 0)
            assert fcm.sends() == []

            fcm.fail_next(FCM_TOKEN, _fcm_error(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED",
                                                retry_after="30"))  # fmt: skip
            await world.record(player_id, table_id="t-short", deadline_in=5.0)
            rows = await world.settled(2)
            assert (rows[1].state, rows[1].reason, rows[1].attempts) == ("dropped", "expired", 1)

            fcm.fail_next(FCM_TOKEN, _fcm_error(503, "UNAVAILABLE", "UNAVAILABLE",
                                                retry_after="2"))  # fmt: skip
            await world.record(player_id, table_id="t-next")
            async with asyncio.timeout(5):
                while len(fcm.sends()) < 2:
                    await asyncio.sleep(0.02)
            await world.record(player_id, table_id="t-next")  # the next turn, same table
            rows = await world.settled(4)
            assert [(r.state, r.reason) for r in rows[2:]] == [
                ("dropped", "superseded"),
                ("sent", None),
            ]
            assert [m["data"]["sequence"] for m in fcm.messages()] == ["4"]

    run(scenario())


def test_a_token_the_provider_says_is_gone_removes_its_device(push_world: Any) -> None:
    """FCM's UNREGISTERED (404) and INVALID_ARGUMENT about the token (400), APNs' Unregistered
    (410) and BadDeviceToken (400), a webhook's 410: each device is removed, with what it had
    pending, and gets nothing more. A 400 about the message itself drops that one only."""

    async def scenario() -> None:
        async with push_world() as world:
            fcm, apns, webhook = world.providers.fcm, world.providers.apns, world.providers.webhook
            guest = await world.client.guest()
            tokens = {
                "fcm-gone": "fcm-gone-token",
                "fcm-bad": "fcm-bad-token",
                "fcm-data": "fcm-data-token",
                "apns-gone": "b2" * 32,
                "apns-bad": "c3" * 32,
            }
            fcm.fail_next(tokens["fcm-gone"], _fcm_error(404, "NOT_FOUND", "UNREGISTERED"))
            fcm.fail_next(
                tokens["fcm-bad"], _fcm_error(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT")
            )
            bad_data = {
                "error": {
                    "code": 400,
                    "status": "INVALID_ARGUMENT",
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.BadRequest",
                            "fieldViolations": [{"field": "message.data[0].value"}],
                        }
                    ],
                }
            }
            fcm.fail_next(tokens["fcm-data"], Reply.of(400, bad_data))
            apns.fail_next(tokens["apns-gone"], Reply.of(410, {"reason": "Unregistered"}))
            apns.fail_next(tokens["apns-bad"], Reply.of(400, {"reason": "BadDeviceToken"}))
            webhook.fail_next("/hook/gone", Reply.of(410))
            for name, token in tokens.items():
                await world.register(guest, name.split("-")[0], token)
            kept = await world.register(guest, "webhook", webhook.url("kept"))
            await world.register(guest, "webhook", webhook.url("gone"))
            await world.record(guest.player.player_id, table_id="t-1")
            rows = await world.settled(2)  # the gone devices' rows went with them
            remaining = {row.device_id for row in await world.devices()}
            data_device = next(
                row.device_id for row in await world.devices() if row.token == tokens["fcm-data"]
            )
            assert remaining == {kept, data_device}
            reasons = {row.device_id: (row.state, row.reason) for row in rows}
            assert reasons == {kept: ("sent", None), data_device: ("dropped", "rejected")}

            await world.record(guest.player.player_id, table_id="t-2")
            rows = await world.settled(4)
            assert sorted(row.state for row in rows[2:]) == ["sent", "sent"]
            assert len(fcm.sends()) == 4 and len(apns.sends()) == 2 and len(webhook.sends()) == 3

    run(scenario())


def test_tournament_notifications_speak_the_devices_language(push_world: Any) -> None:
    """TOURNAMENT_STARTING and TOURNAMENT_SEATED (the lobby's own events) and SEAT_AWAY reach a
    Turkish device in Turkish and an English one in English, with the tournament's data; a
    kind that is not pushed (MATCH_ENDED) reaches none."""

    async def scenario() -> None:
        async with push_world() as world:
            guest = await world.client.guest()
            player_id = guest.player.player_id
            await world.register(guest, "fcm", FCM_TOKEN, "tr")
            await world.register(guest, "webhook", world.providers.webhook.url("en"), "en")
            events = world.client.lobby.servicer.repository.player_events

            async def told(session: Any) -> None:
                starting = lobby_pb2.PlayerEvent(
                    kind=lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_STARTING, tournament_id="cup-1"
                )
                starting.start_time.FromMicroseconds(int(time.time() * 1_000_000))
                await events.append(session, player_id, starting)

            await world.client.lobby.servicer.database.transaction(told)
            await world.settled(2)

            async def seated(session: Any) -> None:
                await events.append(
                    session,
                    player_id,
                    lobby_pb2.PlayerEvent(
                        kind=lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_SEATED,
                        tournament_id="cup-1",
                        round=2,
                        table_id="t-cup",
                        seat=1,
                    ),
                )

            await world.client.lobby.servicer.database.transaction(seated)
            await world.settled(4)
            await world.record(player_id, lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY, table_id="t-cup")
            await world.settled(6)
            await world.record(player_id, lobby_pb2.PLAYER_EVENT_KIND_MATCH_ENDED, table_id="t-cup")
            await asyncio.sleep(1.0)
            rows = await world.settled(6)
            assert len(rows) == 6 and all(row.state == "sent" for row in rows)
            turkish = [m["notification"] for m in world.providers.fcm.messages()]
            assert turkish == [
                {"title": "Turnuvan başlıyor", "body": "İlk turun masaları şimdi kuruluyor."},
                {"title": "Masan hazır", "body": "Turnuvanın 2. turu başlıyor: yerine geç."},
                {"title": "Yerinde bir bot oynuyor", "body": "Yerini geri almak için masaya dön."},
            ]
            english = [(d["title"], d["body"]) for d in world.providers.webhook.documents()]
            assert english == [
                ("Your tournament is starting", "The tables of the first round are being set now."),
                ("Your table is ready", "Round 2 of your tournament: take your seat."),
                ("A bot is playing your seat", "Come back to the table to play your seat again."),
            ]
            # A scheduled tournament's check-in, and a cancel, are pushed too.
            for settled, kind in (
                (8, lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_CHECK_IN_OPEN),
                (10, lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_CANCELLED),
            ):

                async def scheduled(session: Any, kind: int = kind) -> None:
                    await events.append(
                        session,
                        player_id,
                        lobby_pb2.PlayerEvent(kind=kind, tournament_id="cup-2"),  # type: ignore[arg-type]
                    )

                await world.client.lobby.servicer.database.transaction(scheduled)
                await world.settled(settled)
            assert [m["notification"]["title"] for m in world.providers.fcm.messages()[3:]] == [
                "Turnuvana katılımını onayla",
                "Turnuvan iptal edildi",
            ]
            seated_data = world.providers.fcm.messages()[1]["data"]
            assert seated_data == {
                "kind": "TOURNAMENT_SEATED",
                "sequence": "2",
                "table_id": "t-cup",
                "seat": "1",
                "tournament_id": "cup-1",
                "round": "2",
            }
            assert "start_time" in world.providers.fcm.messages()[0]["data"]

    run(scenario())


def test_the_receivers_check_in_docs_push_md_verifies_a_real_delivery(push_world: Any) -> None:
    """The Python receiver of docs/push.md, run as written, accepts a webhook the lobby sent,
    and refuses it with one byte changed, under another secret, or five minutes too late."""
    guide = (ROOT / "docs" / "push.md").read_text()
    code = re.search(r"```python\n(.*?)```", guide, re.DOTALL)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(compile(code.group(1), "docs/push.md", "exec"), namespace)
    check = namespace["verified"]

    async def scenario() -> None:
        async with push_world() as world:
            webhook = world.providers.webhook
            guest = await world.client.guest()
            await world.register(guest, "webhook", webhook.url("doc"))
            await world.record(guest.player.player_id)
            (request,) = await webhook.until(1)
            headers, body, secret = request.headers, request.body, webhook.secret
            assert check(secret, headers, body)
            assert not check(secret, headers, body.replace(b"TURN", b"TURM"))
            assert not check(b"another secret of at least thirty-two bytes", headers, body)
            late = int(headers["x-okey-timestamp"]) + 301
            assert not check(secret, headers, body, now=late)

    run(scenario())


@pytest.mark.skipif(not os.environ.get(TEST_DATABASE_ENV), reason=f"{TEST_DATABASE_ENV} not set")
def test_two_lobbies_on_postgresql_push_each_event_once_and_see_each_others_streams(
    push_world: Any, stream: Any
) -> None:
    """Two lobby processes on one PostgreSQL, both senders running: 40 events recorded through
    either reach the device 40 times, each once. A stream open on one lobby keeps every sender
    from pushing its player's next event, whichever lobby recorded it. Then two claims racing
    on 100 due notifications (FOR UPDATE SKIP LOCKED) take each exactly once between them."""

    async def scenario(url: str) -> None:
        async with push_world(database_url=url, lobbies=2) as world:
            first, second = world.clients
            fcm = world.providers.fcm
            guest = await first.guest()
            player_id = guest.player.player_id
            device_id = await world.register(guest, "fcm", FCM_TOKEN)
            for index in range(40):
                via = world.clients[index % 2]
                await world.record(player_id, table_id=f"t-{index}", via=via)
            rows = await world.settled(40, timeout=60)
            assert all(row.state == "sent" and row.attempts == 1 for row in rows)
            pushed = sorted(int(m["data"]["sequence"]) for m in fcm.messages())
            assert pushed == list(range(1, 41)) and len(fcm.sends()) == 40

            watching = stream(first, guest.tokens.access_token)
            await watching.until(1)
            await world.record(player_id, table_id="t-watched", via=second)
            rows = await world.settled(41)
            assert (rows[-1].state, rows[-1].reason) == ("dropped", "stream")
            await watching.close()
            assert len(fcm.sends()) == 40 and world.providers.violations() == []

        # The lobbies are gone: 100 notifications due, and two claims racing for them.
        from okey101.lobby.push.outbox import PushOutbox
        from okey101.platform.database import Database

        databases = [Database(url), Database(url)]
        try:

            async def due(session: Any) -> None:
                for sequence in range(1000, 1100):
                    event = lobby_pb2.PlayerEvent(kind=TURN, table_id=f"t-{sequence}",
                                                  sequence=sequence)  # fmt: skip
                    await PushOutbox.enqueue(session, player_id, event)

            await databases[0].transaction(due)
            outboxes = [PushOutbox(database) for database in databases]
            everything = frozenset({"fcm"})
            taken: list[list[int]] = [[], []]

            async def claim_all(index: int) -> None:
                while True:
                    claim = await outboxes[index].claim(7, 60_000_000, everything)
                    if not claim.due:
                        return
                    taken[index] += [due.sequence for due in claim.due]
                    assert {due.device.device_id for due in claim.due} == {device_id}

            await asyncio.gather(claim_all(0), claim_all(1))
            assert sorted(taken[0] + taken[1]) == list(range(1000, 1100))
            assert taken[0] and taken[1]  # both took some: neither waited for the other
        finally:
            for database in databases:
                await database.dispose()

    with postgres_database("okey_push") as url:
        run(scenario(url))


def test_nothing_configured_refuses_every_platform(push_world: Any) -> None:
    async def scenario() -> None:
        async with push_world(without=("fcm", "apns", "webhook")) as world:
            guest = await world.client.guest()
            failure = await refused(
                world.stub.RegisterPushDevice(
                    lobby_pb2.RegisterPushDeviceRequest(
                        request_id="n",
                        platform=lobby_pb2.PUSH_PLATFORM_FCM,
                        token=FCM_TOKEN,
                        language="en",
                    ),
                    metadata=bearer(guest.tokens.access_token),
                )
            )
            assert (failure.code, failure.reason, failure.metadata) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "PUSH_PLATFORM_NOT_CONFIGURED",
                {"platform": "FCM"},
            )

    run(scenario())
