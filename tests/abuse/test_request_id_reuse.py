"""A request id reused for a different request is refused, never answered with the first
request's answer (AIP-155; common.proto, IDEMPOTENCY): INVALID_ARGUMENT ``REQUEST_ID_REUSED``
with one ErrorInfo and a sentence, nothing changed, on every RPC of every service whose request
has a ``request_id``, over real gRPC (the abuse suite's world: every service on SQLite).

Where the request holds nothing but what scopes its id (LoginAccount: the username;
RefreshTokens: the refresh token), a "different request" has another caller: it is a call of
its own, answered as such, never with the first call's answer.

The table's journal on PostgreSQL is covered by ``test_table_journal`` and
``test_table_service::test_retries_answer_once_and_stale_moves_are_aborted``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from okey.v1 import common_pb2, lobby_pb2, scoring_pb2, table_pb2

from support.abuse import (
    Guest,
    World,
    act,
    check_refusal,
    every_rpc,
    open_world,
    request_class,
    view_of,
)
from support.scoring import MatchPlan, one_hand_matches, seat_players
from support.tables import one_hand_rules

Auth = tuple[tuple[str, str], ...]


@dataclass
class Reuse:
    """A first request (answered) and a different one under the same request id."""

    auth: Auth
    first: Any
    second: Any
    #: The second request has another caller (the request holds only its scope): its own call.
    own_call: bool = False
    second_auth: Auth | None = None


def _rid(method: str) -> str:
    return f"reuse-{method}-{uuid.uuid4().hex[:12]}"


def _with(request: Any, **fields: Any) -> Any:
    copy = type(request)()
    copy.CopyFrom(request)
    for name, value in fields.items():
        if isinstance(value, list):
            del getattr(copy, name)[:]
            getattr(copy, name).extend(value)
        else:
            setattr(copy, name, value)
    return copy


def _guest(world: World, name: str) -> Guest:
    return world.background.run(world._login(f"{name}-{uuid.uuid4().hex[:6]}"))


def _organiser(world: World, name: str) -> Guest:
    """A guest made an organiser, who may create tournaments: its account registered, then
    the role granted by a service."""
    guest = _guest(world, name)
    world.ok(
        "lobby",
        "RegisterAccount",
        lobby_pb2.RegisterAccountRequest(
            request_id=_rid("a"), username=f"org.{uuid.uuid4().hex[:10]}", password="a-good-pw"
        ),
        guest.auth,
    )
    world.ok(
        "lobby",
        "GrantOrganiser",
        lobby_pb2.GrantOrganiserRequest(
            request_id=_rid("g"), player_id=guest.player_id, reason="runs the cups"
        ),
    )
    return guest


def _new_table(world: World, **fields: Any) -> str:
    table = world.background.run(world._table(one_hand_rules(), **fields))
    return table.table_id  # type: ignore[no-any-return]


def _tournament(world: World, guest: Guest) -> str:
    made = world.ok(
        "lobby",
        "CreateTournament",
        lobby_pb2.CreateTournamentRequest(request_id=_rid("t"), name="Reuse cup", max_players=8),
        guest.auth,
    )
    return made.tournament.tournament_id  # type: ignore[no-any-return]


def _plan(index: int) -> MatchPlan:
    match_id = f"reuse-{uuid.uuid4().hex[:10]}"
    return MatchPlan(one_hand_matches()[index], match_id, seat_players(match_id))


# ---------------------------------------------------------------------------------------------
# One recipe per RPC with a request id


def login_guest(world: World) -> Reuse:
    device = f"device-reuse-{uuid.uuid4().hex[:8]}"
    first = lobby_pb2.LoginGuestRequest(
        request_id=_rid("LoginGuest"), device_id=device, display_name="Reuse"
    )
    return Reuse((), first, _with(first, display_name="Someone else"))


def register_account(world: World) -> Reuse:
    first = lobby_pb2.RegisterAccountRequest(
        request_id=_rid("RegisterAccount"),
        username=f"reuse.{uuid.uuid4().hex[:8]}",
        password="a-good-password",
        display_name="Reuse",
    )
    return Reuse((), first, _with(first, display_name="Someone else"))


def login_account(world: World) -> Reuse:
    accounts = []
    for _ in range(2):
        username = f"reuse.{uuid.uuid4().hex[:8]}"
        registered = world.call(
            "lobby",
            "RegisterAccount",
            lobby_pb2.RegisterAccountRequest(
                request_id=_rid("r"), username=username, password="a-good-password"
            ),
        )
        assert registered.ok, registered
        accounts.append(username)
    first = lobby_pb2.LoginAccountRequest(
        request_id=_rid("LoginAccount"), username=accounts[0], password="a-good-password"
    )
    return Reuse((), first, _with(first, username=accounts[1]), own_call=True)


def refresh_tokens(world: World) -> Reuse:
    one, two = _guest(world, "refresh"), _guest(world, "refresh")
    first = lobby_pb2.RefreshTokensRequest(
        request_id=_rid("RefreshTokens"), refresh_token=one.refresh_token
    )
    return Reuse((), first, _with(first, refresh_token=two.refresh_token), own_call=True)


def logout(world: World) -> Reuse:
    guest = _guest(world, "logout")
    first = lobby_pb2.LogoutRequest(request_id=_rid("Logout"), refresh_token=guest.refresh_token)
    return Reuse((), first, _with(first, all_sessions=True))


def host_table(world: World) -> Reuse:
    guest = _guest(world, "host")
    first = lobby_pb2.HostTableRequest(
        request_id=_rid("HostTable"), rules=one_hand_rules(), name="Reuse A"
    )
    return Reuse(guest.auth, first, _with(first, name="Reuse B"))


def join_table(world: World) -> Reuse:
    guest = _guest(world, "join")
    table_id = _new_table(world, name="join")
    first = lobby_pb2.JoinTableRequest(request_id=_rid("JoinTable"), table_id=table_id, seat=1)
    return Reuse(guest.auth, first, _with(first, seat=2))


def leave_table(world: World) -> Reuse:
    guest = _guest(world, "leave")
    tables = [_new_table(world, name="leave") for _ in range(2)]
    for table_id in tables:
        world.ok(
            "lobby",
            "JoinTable",
            lobby_pb2.JoinTableRequest(request_id=_rid("j"), table_id=table_id),
            guest.auth,
        )
    first = lobby_pb2.LeaveTableRequest(request_id=_rid("LeaveTable"), table_id=tables[0])
    return Reuse(guest.auth, first, _with(first, table_id=tables[1]))


def join_quick_match(world: World) -> Reuse:
    guest = _guest(world, "queue")
    first = lobby_pb2.JoinQuickMatchRequest(
        request_id=_rid("JoinQuickMatch"), preset=common_pb2.RULE_PRESET_BOOMBALA
    )
    return Reuse(guest.auth, first, _with(first, preset=common_pb2.RULE_PRESET_OYNA))


def leave_quick_match(world: World) -> Reuse:
    """Another ticket under the same id: here another player's (a player has one ticket)."""
    guest = _guest(world, "unqueue")
    joined = world.ok(
        "lobby",
        "JoinQuickMatch",
        lobby_pb2.JoinQuickMatchRequest(request_id=_rid("q")),
        guest.auth,
    )
    first = lobby_pb2.LeaveQuickMatchRequest(
        request_id=_rid("LeaveQuickMatch"), ticket_id=joined.ticket.ticket_id
    )
    return Reuse(guest.auth, first, _with(first, ticket_id=world.ticket_id))


def create_tournament(world: World) -> Reuse:
    guest = _organiser(world, "cup")
    first = lobby_pb2.CreateTournamentRequest(
        request_id=_rid("CreateTournament"), name="Reuse cup", max_players=8
    )
    return Reuse(guest.auth, first, _with(first, name="Another cup"))


def register_for_tournament(world: World) -> Reuse:
    host, guest = _organiser(world, "cup"), _guest(world, "player")
    cups = [_tournament(world, host) for _ in range(2)]
    first = lobby_pb2.RegisterForTournamentRequest(
        request_id=_rid("RegisterForTournament"), tournament_id=cups[0]
    )
    return Reuse(guest.auth, first, _with(first, tournament_id=cups[1]))


def unregister_from_tournament(world: World) -> Reuse:
    host, guest = _organiser(world, "cup"), _guest(world, "player")
    cups = [_tournament(world, host) for _ in range(2)]
    for cup in cups:
        world.ok(
            "lobby",
            "RegisterForTournament",
            lobby_pb2.RegisterForTournamentRequest(request_id=_rid("r"), tournament_id=cup),
            guest.auth,
        )
    first = lobby_pb2.UnregisterFromTournamentRequest(
        request_id=_rid("UnregisterFromTournament"), tournament_id=cups[0]
    )
    return Reuse(guest.auth, first, _with(first, tournament_id=cups[1]))


def cancel_tournament(world: World) -> Reuse:
    host = _organiser(world, "cup")
    cups = [_tournament(world, host) for _ in range(2)]
    first = lobby_pb2.CancelTournamentRequest(
        request_id=_rid("CancelTournament"), tournament_id=cups[0]
    )
    return Reuse(host.auth, first, _with(first, tournament_id=cups[1]))


def start_tournament(world: World) -> Reuse:
    host = _organiser(world, "cup")
    cups = [_tournament(world, host) for _ in range(2)]
    for cup in cups:
        for _ in range(2):
            world.ok(
                "lobby",
                "RegisterForTournament",
                lobby_pb2.RegisterForTournamentRequest(request_id=_rid("r"), tournament_id=cup),
                _guest(world, "player").auth,
            )
    first = lobby_pb2.StartTournamentRequest(
        request_id=_rid("StartTournament"), tournament_id=cups[0]
    )
    return Reuse(host.auth, first, _with(first, tournament_id=cups[1]))


def _register(world: World, guest: Guest, cup: str) -> None:
    world.ok(
        "lobby",
        "RegisterForTournament",
        lobby_pb2.RegisterForTournamentRequest(request_id=_rid("r"), tournament_id=cup),
        guest.auth,
    )


def _running(world: World, host: Guest) -> str:
    """A cup of two guests, started."""
    cup = _tournament(world, host)
    for _ in range(2):
        _register(world, _guest(world, "player"), cup)
    world.ok(
        "lobby",
        "StartTournament",
        lobby_pb2.StartTournamentRequest(request_id=_rid("s"), tournament_id=cup),
        host.auth,
    )
    return cup


def check_in_to_tournament(world: World) -> Reuse:
    """Two cups whose check-in windows open a moment after their creation."""
    host, guest = _organiser(world, "cup"), _guest(world, "player")
    start = Timestamp()
    start.FromMicroseconds(int((time.time() + 3601) * 1_000_000))
    cups = []
    for _ in range(2):
        made = world.ok(
            "lobby",
            "CreateTournament",
            lobby_pb2.CreateTournamentRequest(
                request_id=_rid("t"),
                name="Scheduled cup",
                max_players=8,
                start_time=start,
                check_in_minutes=60,
            ),
            host.auth,
        )
        cups.append(made.tournament.tournament_id)
        _register(world, guest, cups[-1])
    time.sleep(1.2)
    first = lobby_pb2.CheckInToTournamentRequest(
        request_id=_rid("CheckInToTournament"), tournament_id=cups[0]
    )
    return Reuse(guest.auth, first, _with(first, tournament_id=cups[1]))


def stop_tournament_series(world: World) -> Reuse:
    host = _organiser(world, "series")
    daily = lobby_pb2.TournamentRecurrence(
        frequency=lobby_pb2.RECURRENCE_FREQUENCY_DAILY, local_time="21:00", time_zone="UTC"
    )
    series = [
        world.ok(
            "lobby",
            "CreateTournament",
            lobby_pb2.CreateTournamentRequest(
                request_id=_rid("t"), name="Daily", max_players=8, recurrence=daily
            ),
            host.auth,
        ).tournament.series_id
        for _ in range(2)
    ]
    first = lobby_pb2.StopTournamentSeriesRequest(
        request_id=_rid("StopTournamentSeries"), series_id=series[0]
    )
    return Reuse(host.auth, first, _with(first, series_id=series[1]))


def pause_tournament(world: World) -> Reuse:
    host = _organiser(world, "cup")
    cups = [_running(world, host) for _ in range(2)]
    first = lobby_pb2.PauseTournamentRequest(
        request_id=_rid("PauseTournament"), tournament_id=cups[0]
    )
    return Reuse(host.auth, first, _with(first, tournament_id=cups[1]))


def resume_tournament(world: World) -> Reuse:
    host = _organiser(world, "cup")
    cups = [_running(world, host) for _ in range(2)]
    for cup in cups:
        world.ok(
            "lobby",
            "PauseTournament",
            lobby_pb2.PauseTournamentRequest(request_id=_rid("p"), tournament_id=cup),
            host.auth,
        )
    first = lobby_pb2.ResumeTournamentRequest(
        request_id=_rid("ResumeTournament"), tournament_id=cups[0]
    )
    return Reuse(host.auth, first, _with(first, tournament_id=cups[1]))


def disqualify_from_tournament(world: World) -> Reuse:
    host, guest = _organiser(world, "cup"), _guest(world, "player")
    cups = [_tournament(world, host) for _ in range(2)]
    for cup in cups:
        _register(world, guest, cup)
    first = lobby_pb2.DisqualifyFromTournamentRequest(
        request_id=_rid("DisqualifyFromTournament"),
        tournament_id=cups[0],
        player_id=guest.player_id,
        reason="Collusion",
    )
    return Reuse(host.auth, first, _with(first, tournament_id=cups[1]))


def record_hand(world: World) -> Reuse:
    rid = _rid("RecordHand")
    first, second = _plan(0).hand(1, request_id=rid), _plan(1).hand(1, request_id=rid)
    return Reuse(world.service_auth(), first, second)


def record_match(world: World) -> Reuse:
    plans = [_plan(0), _plan(1)]
    for plan in plans:
        world.ok("scoring", "RecordHand", plan.hand(1))
    rid = _rid("RecordMatch")
    first, second = (_with(plan.result(), request_id=rid) for plan in plans)
    return Reuse(world.service_auth(), first, second)


def create_table(world: World) -> Reuse:
    first = table_pb2.CreateTableRequest(
        request_id=_rid("CreateTable"), rules=one_hand_rules(), name="Reuse A"
    )
    return Reuse(world.service_auth(), first, _with(first, name="Reuse B"))


def sit(world: World) -> Reuse:
    player = world.stack.player_auth(f"p-reuse-{uuid.uuid4().hex[:8]}")
    first = table_pb2.SitRequest(request_id=_rid("Sit"), table_id=_new_table(world), seat=1)
    return Reuse(player, first, _with(first, seat=2))


def leave(world: World) -> Reuse:
    player = world.stack.player_auth(f"p-reuse-{uuid.uuid4().hex[:8]}")
    tables = [_new_table(world) for _ in range(2)]
    for table_id in tables:
        world.ok("table", "Sit", table_pb2.SitRequest(request_id=_rid("s"), table_id=table_id),
                 player)  # fmt: skip
    first = table_pb2.LeaveRequest(request_id=_rid("Leave"), table_id=tables[0])
    return Reuse(player, first, _with(first, table_id=tables[1]))


def start(world: World) -> Reuse:
    first = table_pb2.StartRequest(
        request_id=_rid("Start"), table_id=_new_table(world), fill_with_bots=True
    )
    return Reuse(world.service_auth(), first, _with(first, bot_level=common_pb2.BOT_LEVEL_EASY))


def act_turn(world: World) -> Reuse:
    """The reported case: a whole turn, then a discard under the turn's request id."""
    world.ensure_fixtures()
    live = world.tables["live"]
    turn, mover = world.seat_to_move()
    first = act(live, turn, view_of(world, live, turn, mover), request_id=_rid("Act"))
    return Reuse(mover.auth, first, first)  # the second is built once the turn is played


def set_deal_seed(world: World) -> Reuse:
    player = world.stack.player_auth(f"p-reuse-{uuid.uuid4().hex[:8]}")
    table_id = _new_table(world)
    world.ok("table", "Sit", table_pb2.SitRequest(request_id=_rid("s"), table_id=table_id), player)
    first = table_pb2.SetDealSeedRequest(
        request_id=_rid("SetDealSeed"), table_id=table_id, deal_seed="ab" * 16
    )
    return Reuse(player, first, _with(first, deal_seed="cd" * 16))


def close_table(world: World) -> Reuse:
    first = table_pb2.CloseTableRequest(
        request_id=_rid("CloseTable"), table_id=_new_table(world), reason="first"
    )
    return Reuse(world.service_auth(), first, _with(first, reason="another"))


def record_player_events(world: World) -> Reuse:
    """Two batches of a table's news for a player under one request id."""
    rid = _rid("RecordPlayerEvents")
    player_id = world.guests[0].player_id

    def batch(key: str) -> lobby_pb2.RecordPlayerEventsRequest:
        event = lobby_pb2.PlayerEvent(
            kind=lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY, table_id="t-news", seat=1
        )
        record = lobby_pb2.PlayerEventRecord(key=key, player_id=player_id, event=event)
        return lobby_pb2.RecordPlayerEventsRequest(request_id=rid, records=[record])

    first, second = batch(f"player/t-news/{rid}/1"), batch(f"player/t-news/{rid}/2")
    return Reuse(world.service_auth(), first, second)


def _hook(world: World) -> str:
    """A webhook address of the world's loopback (nothing listens: deliveries just fail)."""
    return f"http://127.0.0.1:9/hook-{uuid.uuid4().hex[:8]}"


def register_push_device(world: World) -> Reuse:
    first = lobby_pb2.RegisterPushDeviceRequest(
        request_id=_rid("RegisterPushDevice"),
        platform=lobby_pb2.PUSH_PLATFORM_WEBHOOK,
        token=_hook(world),
        language="en",
    )
    return Reuse(world.guests[4].auth, first, _with(first, language="tr"))


def unregister_push_device(world: World) -> Reuse:
    guest = world.guests[4]
    devices = [
        world.ok(
            "lobby",
            "RegisterPushDevice",
            lobby_pb2.RegisterPushDeviceRequest(
                request_id=_rid("r"),
                platform=lobby_pb2.PUSH_PLATFORM_WEBHOOK,
                token=_hook(world),
                language="en",
            ),
            guest.auth,
        ).device_id
        for _ in range(2)
    ]
    first = lobby_pb2.UnregisterPushDeviceRequest(
        request_id=_rid("UnregisterPushDevice"), device_id=devices[0]
    )
    return Reuse(guest.auth, first, _with(first, device_id=devices[1]))


def claim_daily_chips(world: World) -> Reuse:
    """The request holds nothing but its id: another player's claim under it is their own."""
    one, two = _guest(world, "daily"), _guest(world, "daily")
    first = lobby_pb2.ClaimDailyChipsRequest(request_id=_rid("ClaimDailyChips"))
    return Reuse(one.auth, first, _with(first, locale="tr"), own_call=True, second_auth=two.auth)


def grant_organiser(world: World) -> Reuse:
    accounts = [_organiser(world, "org") for _ in range(2)]
    first = lobby_pb2.GrantOrganiserRequest(
        request_id=_rid("GrantOrganiser"), player_id=accounts[0].player_id, reason="runs cups"
    )
    return Reuse(world.service_auth(), first, _with(first, player_id=accounts[1].player_id))


def revoke_organiser(world: World) -> Reuse:
    accounts = [_organiser(world, "org") for _ in range(2)]
    first = lobby_pb2.RevokeOrganiserRequest(
        request_id=_rid("RevokeOrganiser"), player_id=accounts[0].player_id, reason="stopped"
    )
    return Reuse(world.service_auth(), first, _with(first, reason="another reason"))


def adjust_chips(world: World) -> Reuse:
    first = lobby_pb2.AdjustChipsRequest(
        request_id=_rid("AdjustChips"),
        player_id=_guest(world, "adjust").player_id,
        amount=40,
        reason="a goodwill grant",
    )
    return Reuse(world.service_auth(), first, _with(first, amount=400))


def record_tournament_ranking(world: World) -> Reuse:
    """Two tournaments' rankings under one request id."""
    rid = _rid("RecordTournamentRanking")
    first = scoring_pb2.RecordTournamentRankingRequest(
        request_id=rid,
        tournament_id="t-reuse-1",
        places=[scoring_pb2.TournamentPlace(place=1, player_id="p-reuse")],
    )
    return Reuse(world.service_auth(), first, _with(first, tournament_id="t-reuse-2"))


def record_table_chips(world: World) -> Reuse:
    """Two batches of a table's chips records under one request id."""
    rid = _rid("RecordTableChips")

    def batch(key: str) -> lobby_pb2.RecordTableChipsRequest:
        record = lobby_pb2.TableChipsRecord(
            key=key, kind=lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ABANDONED, table_id="t-chips"
        )
        return lobby_pb2.RecordTableChipsRequest(request_id=rid, records=[record])

    first, second = batch(f"chips/t-chips/{rid}/1"), batch(f"chips/t-chips/{rid}/2")
    return Reuse(world.service_auth(), first, second)


RECIPES: dict[tuple[str, str], Callable[[World], Reuse]] = {
    ("lobby", "RegisterPushDevice"): register_push_device,
    ("lobby", "UnregisterPushDevice"): unregister_push_device,
    ("lobby", "LoginGuest"): login_guest,
    ("lobby", "RegisterAccount"): register_account,
    ("lobby", "LoginAccount"): login_account,
    ("lobby", "RefreshTokens"): refresh_tokens,
    ("lobby", "Logout"): logout,
    ("lobby", "HostTable"): host_table,
    ("lobby", "JoinTable"): join_table,
    ("lobby", "LeaveTable"): leave_table,
    ("lobby", "JoinQuickMatch"): join_quick_match,
    ("lobby", "LeaveQuickMatch"): leave_quick_match,
    ("lobby", "GrantOrganiser"): grant_organiser,
    ("lobby", "RevokeOrganiser"): revoke_organiser,
    ("lobby", "CreateTournament"): create_tournament,
    ("lobby", "RegisterForTournament"): register_for_tournament,
    ("lobby", "UnregisterFromTournament"): unregister_from_tournament,
    ("lobby", "StartTournament"): start_tournament,
    ("lobby", "CancelTournament"): cancel_tournament,
    ("lobby", "CheckInToTournament"): check_in_to_tournament,
    ("lobby", "StopTournamentSeries"): stop_tournament_series,
    ("lobby", "PauseTournament"): pause_tournament,
    ("lobby", "ResumeTournament"): resume_tournament,
    ("lobby", "DisqualifyFromTournament"): disqualify_from_tournament,
    ("lobby", "RecordPlayerEvents"): record_player_events,
    ("lobby", "ClaimDailyChips"): claim_daily_chips,
    ("lobby", "AdjustChips"): adjust_chips,
    ("lobby", "RecordTableChips"): record_table_chips,
    ("scoring", "RecordHand"): record_hand,
    ("scoring", "RecordMatch"): record_match,
    ("scoring", "RecordTournamentRanking"): record_tournament_ranking,
    ("table", "CreateTable"): create_table,
    ("table", "Sit"): sit,
    ("table", "Leave"): leave,
    ("table", "Start"): start,
    ("table", "Act"): act_turn,
    ("table", "SetDealSeed"): set_deal_seed,
    ("table", "CloseTable"): close_table,
}


def with_request_id() -> list[tuple[str, str]]:
    """Every RPC whose request has a request_id, as the protos say."""
    return [
        (service, method)
        for service, method in every_rpc()
        if "request_id" in request_class(service, method).DESCRIPTOR.fields_by_name
    ]


def test_every_rpc_with_a_request_id_has_a_recipe() -> None:
    assert sorted(with_request_id()) == sorted(RECIPES)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with open_world(tmp_path_factory.mktemp("request-id-reuse")) as opened:
        yield opened


@pytest.mark.parametrize(
    ("service", "method"), sorted(RECIPES), ids=[f"{s}.{m}" for s, m in sorted(RECIPES)]
)
def test_a_request_id_reused_for_a_different_request_is_refused(
    world: World, service: str, method: str
) -> None:
    reuse = RECIPES[(service, method)](world)
    answered = world.call(service, method, reuse.first, reuse.auth)
    assert answered.ok, f"{method}: {answered}"
    if method == "Act":  # a discard from the rack the turn left, under the turn's id
        view = answered.response.view
        discard = common_pb2.Action(discard=common_pb2.DiscardAction(tile_id=view.rack[0].tile.id))
        reuse.second = _with(
            reuse.first, actions=[discard], expected_state_version=view.state_version
        )
    assert reuse.second != reuse.first and reuse.second.request_id == reuse.first.request_id
    before = world.settle(service)
    second = world.call(service, method, reuse.second, reuse.second_auth or reuse.auth)
    what = f"{service}.{method}"
    if reuse.own_call:
        assert second.ok, f"{what}: {second}"
        assert second.response != answered.response, f"{what}: answered with the first answer"
    else:
        assert (second.code, second.reason) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "REQUEST_ID_REUSED",
        ), f"{what}: {second}"
        check_refusal(second, reuse.second, what)
        assert world.snapshot(service) == before, f"{what}: refused, yet something changed"
    # The first request, sent again, is still answered as it was.
    again = world.call(service, method, reuse.first, reuse.auth)
    assert again.ok and again.response == answered.response, f"{what} retried: {again}"


def test_a_sit_retried_under_a_new_display_name_is_the_same_sit(world: World) -> None:
    """The lobby's workers retry a Sit with the player's name as it is then: a player who
    renamed in between still makes one sit, answered as the first."""
    player = world.stack.player_auth(f"p-rename-{uuid.uuid4().hex[:8]}")
    first = table_pb2.SitRequest(
        request_id=_rid("Sit"), table_id=_new_table(world), seat=1, display_name="Ayla"
    )
    answered = world.call("table", "Sit", first, player)
    assert answered.ok, answered
    renamed = world.call("table", "Sit", _with(first, display_name="Ayla K."), player)
    assert renamed.ok and renamed.response == answered.response, renamed
