"""Requests that get past a call's first checks, for the abuse tests (``tests/abuse/``): a
valid request of each RPC against the world of ``support.abuse`` (``TEMPLATES``), and the real
ids the world holds now (``pools_of``), which references in a drawn request (a marked string
naming a pool and an index, or a marked number for the live table's version and sequence
numbers) are replaced with (``resolve``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from google.protobuf.descriptor import FieldDescriptor
from okey.v1 import bot_pb2, common_pb2, lobby_pb2, rules_pb2, scoring_pb2, table_pb2
from sqlalchemy import select

from okey101.table import models as table_models

from support.abuse import World, request_class
from support.tables import decide_for

# ---------------------------------------------------------------------------------------------
# The world's ids, and references to them

POOL_MARK: Final = "\ue000"
NUMBER_MARK: Final = 2**60
POOL_SLOTS: Final = 8


@dataclass(frozen=True)
class Pools:
    """Real ids by the field names that carry them, and the live table's numbers."""

    strings: dict[str, list[str]]
    numbers: list[int]

    def string(self, reference: str) -> str:
        name, _, index = reference[len(POOL_MARK) :].partition(":")
        values = self.strings.get(name) or [v for vs in self.strings.values() for v in vs]
        return values[int(index) % len(values)]


def pools_of(world: World) -> Pools:
    """What the world holds now."""
    tables = list(world.tables.values()) + world.extra_ids.get("table_id", [])[-4:]
    live = world.live_table()
    numbers = [
        live.state_version,
        live.state_version + 1,
        live.last_sequence,
        live.last_sequence + 1,
    ]
    strings = {
        "table_id": tables,
        "hand_id": [world.finished_hand, f"{live.table_id}-h{live.hand_number}", "t-x-h1"],
        "match_id": [world.finished_match, live.match_id],
        "player_id": [guest.player_id for guest in world.guests] + ["test-lobby"],
        "host_player_id": [world.guests[0].player_id],
        "tournament_id": [world.tournament_id],
        "ticket_id": [world.ticket_id],
        "invite_code": [world.invite_code, world.invite_code.lower()],
        "refresh_token": [guest.refresh_token for guest in world.guests],
        "device_id": [guest.device_id for guest in world.guests],
        "guest_secret": [guest.secret for guest in world.guests],
        "username": [world.account[0], world.account[0].upper()],
        "password": [world.account[1], "short", "p" * 200],
        "used_request_id": world.used_request_ids[-POOL_SLOTS:] or ["used"],
    }
    return Pools(strings, numbers)


def resolve(message: Any, pools: Pools) -> Any:
    """``message`` with every reference replaced by what it names now (in place)."""
    for field, value in message.ListFields():
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            for item in value if field.is_repeated else [value]:
                resolve(item, pools)
        elif field.type == FieldDescriptor.TYPE_STRING:
            if field.is_repeated:
                value[:] = [pools.string(v) if v.startswith(POOL_MARK) else v for v in value]
            elif value.startswith(POOL_MARK):
                setattr(message, field.name, pools.string(value))
        elif (
            field.type == FieldDescriptor.TYPE_UINT64
            and not field.is_repeated
            and NUMBER_MARK <= value < NUMBER_MARK + POOL_SLOTS
        ):
            setattr(message, field.name, pools.numbers[(value - NUMBER_MARK) % 4])
    return message


# ---------------------------------------------------------------------------------------------
# Valid requests


Template = Callable[[World], tuple[Any, str]]


def _fresh() -> str:
    return uuid.uuid4().hex


def _act(world: World) -> tuple[Any, str]:
    turn, seated = world.seat_to_move()
    view = world.ok(
        "table",
        "GetSeatView",
        table_pb2.GetSeatViewRequest(table_id=world.tables["live"], seat=turn),
        seated.auth,
    ).view
    request = table_pb2.ActRequest(
        request_id=_fresh(),
        table_id=world.tables["live"],
        seat=turn,
        actions=decide_for(view),
        expected_state_version=view.state_version,
    )
    return request, "seated"


def _play_open(world: World) -> tuple[Any, str]:
    turn, _seated = world.seat_to_move()
    watch = table_pb2.WatchTableRequest(table_id=world.tables["live"], seat=turn)
    return table_pb2.PlayRequest(open=watch), "seated"


def _seat_view(world: World) -> common_pb2.SeatView:
    turn, seated = world.seat_to_move()
    request = table_pb2.GetSeatViewRequest(table_id=world.tables["live"], seat=turn)
    return world.ok("table", "GetSeatView", request, seated.auth).view  # type: ignore[no-any-return]


def _outbox(world: World, kind: str) -> bytes:
    async def read() -> bytes:
        o = table_models.outbox.c
        async with world.stack.servicer.store.database.read() as session:
            rows = await session.execute(select(o.payload).where(o.kind == kind).limit(1))
            return bytes(rows.scalar_one())

    return world.background.run(read())


def _dealt(world: World) -> rules_pb2.DealHandResponse:
    request = rules_pb2.DealHandRequest(
        rules=common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_OYNA),
        deck_tile_ids=list(range(106)),
    )
    return world.ok("rules", "DealHand", request)  # type: ignore[no-any-return]


def _apply(world: World) -> tuple[Any, str]:
    dealt = _dealt(world)
    view = dealt.views[dealt.state.turn]
    request = rules_pb2.ApplyActionRequest(
        state=dealt.state, seat=dealt.state.turn, actions=decide_for(view)
    )
    return request, "service"


def _rack(world: World) -> tuple[list[int], int]:
    view = _seat_view(world)
    return [item.tile.id for item in view.rack], view.indicator.id


def _run_off_the_rack(world: World) -> list[int]:
    """Three tiles of a run (a colour's n, n+1, n+2) that are neither in the seat's rack nor
    the indicator: a meld on the table beside that rack."""
    rack, indicator = _rack(world)
    taken = {*rack, indicator}
    for colour in range(4):
        for number in range(11):
            faces = [colour * 13 + number + step for step in range(3)]
            run = [next((f * 2 + c for c in (0, 1) if f * 2 + c not in taken), -1) for f in faces]
            if -1 not in run:
                return run
    raise AssertionError("every run is in the rack")


TEMPLATES: Final[dict[tuple[str, str], Template]] = {
    ("table", "Act"): _act,
    ("table", "CreateTable"): lambda w: (
        table_pb2.CreateTableRequest(
            request_id=_fresh(),
            rules=common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_BOOMBALA),
            name="fuzz",
            seats=[table_pb2.SeatSetup(seat=1, kind=common_pb2.OCCUPANT_KIND_BOT)],
        ),
        "service",
    ),
    ("table", "Sit"): lambda w: (
        table_pb2.SitRequest(
            request_id=_fresh(), table_id=w.tables["waiting"], seat=1, invite_code=w.invite_code
        ),
        "stranger",
    ),
    ("table", "Leave"): lambda w: (
        table_pb2.LeaveRequest(request_id=_fresh(), table_id=w.tables["live"]),
        "other",
    ),
    ("table", "Start"): lambda w: (
        table_pb2.StartRequest(
            request_id=_fresh(), table_id=w.tables["waiting"], fill_with_bots=True
        ),
        "service",
    ),
    ("table", "CloseTable"): lambda w: (
        table_pb2.CloseTableRequest(request_id=_fresh(), table_id=w.tables["waiting"]),
        "service",
    ),
    ("table", "SetDealSeed"): lambda w: (
        table_pb2.SetDealSeedRequest(
            request_id=_fresh(), table_id=w.tables["live"], deal_seed="ab" * 16
        ),
        "seated",
    ),
    ("table", "GetSeatView"): lambda w: (
        table_pb2.GetSeatViewRequest(table_id=w.tables["live"], seat=w.seat_to_move()[0]),
        "seated",
    ),
    ("table", "GetHints"): lambda w: (
        table_pb2.GetHintsRequest(table_id=w.tables["live"], seat=w.seat_to_move()[0]),
        "seated",
    ),
    ("table", "WatchTable"): lambda w: (
        table_pb2.WatchTableRequest(table_id=w.tables["live"], start_with_view=True),
        "stranger",
    ),
    # A client stream: the harness sends one message, the first (its open).
    ("table", "Play"): _play_open,
    ("table", "GetHandRecord"): lambda w: (
        table_pb2.GetHandRecordRequest(hand_id=w.finished_hand),
        "other",
    ),
    ("table", "ListTables"): lambda w: (
        table_pb2.ListTablesRequest(page_size=2, states=[common_pb2.TABLE_STATE_PLAYING]),
        "service",
    ),
    ("scoring", "RecordHand"): lambda w: (
        scoring_pb2.RecordHandRequest.FromString(_outbox(w, "hand")),
        "service",
    ),
    ("scoring", "RecordMatch"): lambda w: (
        scoring_pb2.RecordMatchRequest.FromString(_outbox(w, "match")),
        "service",
    ),
    ("scoring", "RecordTournamentRanking"): lambda w: (
        scoring_pb2.RecordTournamentRankingRequest(
            request_id=uuid.uuid4().hex,
            tournament_id="t-abuse-cup",
            places=[scoring_pb2.TournamentPlace(place=1, player_id="p-abuse", display_name="A")],
        ),
        "service",
    ),
    ("lobby", "RecordPlayerEvents"): lambda w: (
        lobby_pb2.RecordPlayerEventsRequest(
            request_id=uuid.uuid4().hex,
            records=[lobby_pb2.PlayerEventRecord.FromString(_outbox(w, "player"))],
        ),
        "service",
    ),
    ("scoring", "GetScoreSheet"): lambda w: (
        scoring_pb2.GetScoreSheetRequest(match_id=w.finished_match, page_size=1),
        "seated",
    ),
    ("rules", "ApplyAction"): _apply,
    ("rules", "ViewHand"): lambda w: (
        rules_pb2.ViewHandRequest(state=_dealt(w).state, seat=2),
        "service",  # an engine state call: a service's token only
    ),
    ("rules", "ViewHints"): lambda w: (
        rules_pb2.ViewHintsRequest(view=_seat_view(w)),
        "seated",
    ),
    ("rules", "BestOpening"): lambda w: (
        rules_pb2.BestOpeningRequest(rack_tile_ids=_rack(w)[0], indicator_tile_id=_rack(w)[1]),
        "seated",
    ),
    ("rules", "PlayableTiles"): lambda w: (
        rules_pb2.PlayableTilesRequest(
            rack_tile_ids=_rack(w)[0],
            indicator_tile_id=_rack(w)[1],
            table=[common_pb2.TileGroup(tile_ids=_run_off_the_rack(w))],
        ),
        "seated",
    ),
    ("rules", "ValidateOpening"): lambda w: (
        rules_pb2.ValidateOpeningRequest(
            rack_tile_ids=_rack(w)[0],
            indicator_tile_id=_rack(w)[1],
            groups=[common_pb2.TileGroup(tile_ids=_rack(w)[0][:3])],
        ),
        "seated",
    ),
    ("bot", "NextStep"): lambda w: (
        bot_pb2.NextStepRequest(view=_seat_view(w), phase=_seat_view(w).phase, seed=7),
        "service",
    ),
    ("lobby", "LoginGuest"): lambda w: (
        lobby_pb2.LoginGuestRequest(
            request_id=_fresh(), device_id=w.guests[3].device_id, guest_secret=w.guests[3].secret
        ),
        "none",
    ),
    ("lobby", "LoginAccount"): lambda w: (
        lobby_pb2.LoginAccountRequest(
            request_id=_fresh(), username=w.account[0], password=w.account[1]
        ),
        "none",
    ),
    ("lobby", "JoinTable"): lambda w: (
        lobby_pb2.JoinTableRequest(request_id=_fresh(), invite_code=w.invite_code, seat=2),
        "stranger",
    ),
    ("lobby", "HostTable"): lambda w: (
        lobby_pb2.HostTableRequest(
            request_id=_fresh(),
            name="fuzz",
            host_seat=0,
            bots=[lobby_pb2.BotSeat(seat=1), lobby_pb2.BotSeat(seat=2)],
        ),
        "stranger",
    ),
    ("lobby", "CreateTournament"): lambda w: (
        lobby_pb2.CreateTournamentRequest(
            request_id=_fresh(), name="Fuzz cup", max_players=8, category="fuzz"
        ),
        "service",  # no player of the world is an organiser
    ),
    ("lobby", "GrantOrganiser"): lambda w: (
        lobby_pb2.GrantOrganiserRequest(
            request_id=_fresh(), player_id=w.account_id, reason="fuzz: runs the cups"
        ),
        "service",
    ),
    ("lobby", "RevokeOrganiser"): lambda w: (
        lobby_pb2.RevokeOrganiserRequest(
            request_id=_fresh(), player_id=w.account_id, reason="fuzz: stopped"
        ),
        "service",
    ),
    ("lobby", "RegisterForTournament"): lambda w: (
        lobby_pb2.RegisterForTournamentRequest(request_id=_fresh(), tournament_id=w.tournament_id),
        "stranger",
    ),
    ("lobby", "UnregisterFromTournament"): lambda w: (
        lobby_pb2.UnregisterFromTournamentRequest(
            request_id=_fresh(), tournament_id=w.tournament_id
        ),
        "stranger",
    ),
    ("lobby", "CheckInToTournament"): lambda w: (
        lobby_pb2.CheckInToTournamentRequest(request_id=_fresh(), tournament_id=w.tournament_id),
        "stranger",
    ),
    # The organiser's calls, as a stranger makes them: refused, and the world's cup left as it
    # is for the other tests.
    ("lobby", "StopTournamentSeries"): lambda w: (
        lobby_pb2.StopTournamentSeriesRequest(request_id=_fresh(), series_id="s_fuzz"),
        "stranger",
    ),
    ("lobby", "PauseTournament"): lambda w: (
        lobby_pb2.PauseTournamentRequest(request_id=_fresh(), tournament_id=w.tournament_id),
        "stranger",
    ),
    ("lobby", "ResumeTournament"): lambda w: (
        lobby_pb2.ResumeTournamentRequest(request_id=_fresh(), tournament_id=w.tournament_id),
        "stranger",
    ),
    ("lobby", "DisqualifyFromTournament"): lambda w: (
        lobby_pb2.DisqualifyFromTournamentRequest(
            request_id=_fresh(),
            tournament_id=w.tournament_id,
            player_id=w.account_id,
            reason="fuzz",
        ),
        "stranger",
    ),
    ("lobby", "GetTournamentStandings"): lambda w: (
        lobby_pb2.GetTournamentStandingsRequest(tournament_id=w.tournament_id, page_size=1),
        "stranger",
    ),
    ("lobby", "ListWalletEntries"): lambda w: (
        lobby_pb2.ListWalletEntriesRequest(page_size=2),
        "stranger",
    ),
    ("lobby", "ListStakeLevels"): lambda w: (lobby_pb2.ListStakeLevelsRequest(), "stranger"),
    ("lobby", "AdjustChips"): lambda w: (
        lobby_pb2.AdjustChipsRequest(
            request_id=_fresh(),
            player_id=w.guests[4].player_id,
            amount=25,
            reason="fuzz: a goodwill grant",
        ),
        "service",
    ),
    # A table without a pot: recorded, and nothing moves.
    ("lobby", "RecordTableChips"): lambda w: (
        lobby_pb2.RecordTableChipsRequest(
            request_id=_fresh(),
            records=[
                lobby_pb2.TableChipsRecord(
                    key=f"fuzz/{_fresh()}",
                    kind=lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ABANDONED,
                    table_id=w.tables["live"],
                )
            ],
        ),
        "service",
    ),
}


def base_request(world: World, service: str, method: str) -> tuple[Any, str]:
    """A request that gets past the first checks: the valid template, else one whose id fields
    name real objects."""
    template = TEMPLATES.get((service, method))
    if template is not None:
        return template(world)
    request = request_class(service, method)()
    pools = pools_of(world)
    for field in request.DESCRIPTOR.fields:
        if field.name == "request_id":
            request.request_id = uuid.uuid4().hex
        elif field.name in pools.strings and not field.is_repeated:
            setattr(request, field.name, pools.strings[field.name][0])
    return request, "seated"
