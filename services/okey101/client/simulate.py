"""``okey101 simulate``: whole matches of four bots, played through the public API.

Each match is one guest at a table with three of the table service's bots: the guest logs in
(LobbyService.LoginGuest), is seated by quick match (JoinQuickMatch, then GetQuickMatchStatus),
or, with ``--hands``, at a table of its own with that match length (HostTable), and its seat is
played by the engine's own bot (the one BotService runs) through TableService exactly as a
person's client plays: it follows WatchTable, fetches its view when its turn starts
(GetSeatView), and sends each step with Act against the view's state_version. When the match
ends, its score sheet is read back from ScoringService (GetScoreSheet) and printed with the
totals and the winner.

Without ``--lobby`` it starts its own stack first (``okey101.stack.local_stack``: every service a
process of its own on free ports, SQLite in a temporary directory), with bots that move at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import grpc
import grpc.aio
from okey.v1 import common_pb2, scoring_pb2

from okey101.client.errors import Rejection
from okey101.client.i18n import Strings
from okey101.client.model import sheet_rows
from okey101.client.resume import Reconnecting
from okey101.client.session import Endpoints, GuestStore, Player, TableSession
from okey101.client.shown import shown
from okey101.engine.bots.entry_points import decide
from okey101.engine.bots.levels import BotLevel
from okey101.platform import convert

#: Acts in one turn at most (a turn is a draw, a few plays and a discard): a bot that keeps
#: getting refused is a bug to report, not a loop to spin in.
MAX_STEPS_PER_TURN = 12


class SimulationError(Exception):
    """A match could not be played to its end (the message says why)."""


@dataclass
class MatchOutcome:
    """A match played to its end: its result as the table ended it, and its score sheet."""

    table_id: str
    result: common_pb2.MatchResult
    sheet: scoring_pb2.ScoreSheet | None
    hands: list[common_pb2.Event] = field(default_factory=list)


def seed_of(view: common_pb2.SeatView) -> int:
    """The bot's seed for a step: the same position always gets the same choice."""
    return zlib.crc32(f"{view.hand_id}:{view.turn_number}:{view.phase}".encode())


async def play_turn(
    session: TableSession, view: common_pb2.SeatView, level: BotLevel
) -> common_pb2.SeatView:
    """Play our seat's turn with the engine's bot, step by step through Act, until it is no
    longer our turn; the last view seen."""
    seat = session.seat
    for _ in range(MAX_STEPS_PER_TURN):
        if view.turn != seat or view.phase in (
            common_pb2.PHASE_ENDED,
            common_pb2.PHASE_UNSPECIFIED,
        ):
            return view
        decision = decide(
            convert.seat_view_from_proto(view),
            convert.rules_from_proto(view.rules),
            level,
            seed_of(view),
        )
        actions = [convert.action_to_proto(action) for action in decision.actions]
        try:
            answer = await session.act(actions, view.state_version)
        except grpc.aio.AioRpcError as error:
            rejection = Rejection.of(error)
            # The table moved on (a timer played for us, a hand ended): look again.
            if rejection.code in (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION):
                fresh = await session.seat_view()
                if fresh.state_version == view.state_version:
                    refused = f"{rejection.reason}: {rejection.message}"
                    raise SimulationError(
                        f"the table refused the bot's move ({refused})"
                    ) from error
                view = fresh
                continue
            raise
        view = answer.view
    raise SimulationError(f"seat {seat} took more than {MAX_STEPS_PER_TURN} steps in one turn")


async def play_match(
    session: TableSession,
    *,
    level: BotLevel = BotLevel.NORMAL,
    on_hand: Callable[[common_pb2.Event], None] | None = None,
    on_event: Callable[[common_pb2.Event], None] | None = None,
    on_reconnect: Callable[[Reconnecting], None] | None = None,
) -> tuple[common_pb2.MatchResult, list[common_pb2.Event]]:
    """Follow the table and play our seat until the match ends; the result and every
    HAND_ENDED event. ``on_event`` sees every event of the stream, ``on_reconnect`` every
    reconnection."""
    hands: list[common_pb2.Event] = []
    watch = session.watch(on_reconnect=on_reconnect)
    async with contextlib.aclosing(aiter(watch)) as stream:
        async for item in stream:
            if item.HasField("view"):
                view = item.view
            else:
                event = item.event
                if on_event is not None:
                    on_event(event)
                if event.kind == common_pb2.EVENT_KIND_MATCH_ENDED:
                    return event.match_result, hands
                if event.kind == common_pb2.EVENT_KIND_TABLE_CLOSED:
                    raise SimulationError(
                        f"table {session.table_id} was closed before the match ended"
                    )
                if event.kind == common_pb2.EVENT_KIND_HAND_ENDED:
                    hands.append(event)
                    if on_hand is not None:
                        on_hand(event)
                if not (
                    event.kind == common_pb2.EVENT_KIND_TURN_STARTED and event.seat == session.seat
                ):
                    continue
                view = await session.seat_view()
            await play_turn(session, view, level)
    raise SimulationError(f"the stream of table {session.table_id} ended before the match did")


async def simulate(
    endpoints: Endpoints,
    *,
    matches: int,
    preset: str,
    hands: int | None,
    var_dir: Path,
    strings: Strings,
    out: TextIO,
    level: BotLevel = BotLevel.NORMAL,
) -> list[MatchOutcome]:
    """Play ``matches`` matches one after another and print each score sheet."""
    outcomes = []
    async with Player(endpoints, strings.locale) as player:
        await player.login_guest(GuestStore(var_dir, endpoints.lobby), "simulate")
        for number in range(1, matches + 1):
            if hands is None:
                seating = await player.quick_match(preset)
            else:
                seating = await player.host_with_bots(preset, hands=hands)
            session = player.session(seating.table_id, seating.seat)
            print(
                strings(
                    "sim_match", number=number, count=matches, table=seating.table_id, rules=preset
                ),
                file=out,
                flush=True,
            )
            result, ended = await play_match(session, level=level)
            count = max((event.hand_number for event in ended), default=result.hands_played)
            sheet = await session.score_sheet_through(result.match_id, count, wait=10.0, ended=True)
            outcome = MatchOutcome(seating.table_id, result, sheet, ended)
            print(format_sheet(outcome, strings), file=out, flush=True)
            outcomes.append(outcome)
    return outcomes


def format_sheet(outcome: MatchOutcome, strings: Strings) -> str:
    """The score sheet as text: a row per hand (points and running totals), the totals and the
    winner. From ScoringService's sheet; from the table's match result if scoring had none."""
    result = outcome.result
    names = [
        shown(seat.display_name) or strings("seat_label", seat=seat.seat) for seat in result.seats
    ]
    if outcome.sheet is not None and outcome.sheet.seats:
        names = [shown(seat.display_name) or names[seat.seat] for seat in outcome.sheet.seats]
    width = max(12, *(len(name) + 2 for name in names))
    header = strings("sheet_hand").ljust(6) + "".join(name.rjust(width) for name in names)
    lines = [header]
    if outcome.sheet is not None:
        for row in sheet_rows(outcome.sheet, strings, names):
            cells = "".join(
                f"{points:+d}={total}".rjust(width)
                for points, total in zip(row.points, row.totals, strict=False)
            )
            lines.append(f"{row.hand_number:<6}{cells}  {row.note}")
        totals = list(outcome.sheet.totals)
        winners = list(outcome.sheet.winner_seats) or [s.seat for s in result.seats if s.winner]
    else:
        lines.append(strings("sheet_from_table"))
        totals = [seat.total for seat in result.seats]
        winners = [seat.seat for seat in result.seats if seat.winner]
    lines.append(
        strings("sheet_total").ljust(6) + "".join(str(total).rjust(width) for total in totals)
    )
    lines.append(strings("sim_winner", names=", ".join(names[seat] for seat in winners)))
    return "\n".join(lines)


def run(
    *,
    matches: int,
    preset: str,
    hands: int | None,
    lobby: str | None,
    table: str | None,
    scoring: str | None,
    strings: Strings,
    out: TextIO,
    var_dir: Path = Path("var"),
) -> int:
    """The command: 0 when every match was played to its end and its sheet printed."""
    from okey101.stack import FAST, local_stack

    async def go(endpoints: Endpoints, var_dir: Path) -> None:
        await simulate(
            endpoints,
            matches=matches,
            preset=preset,
            hands=hands,
            var_dir=var_dir,
            strings=strings,
            out=out,
        )

    if lobby is not None:
        base = Endpoints()
        endpoints = Endpoints(
            lobby=lobby,
            table=table or base.table,
            scoring=scoring or base.scoring,
            rules=base.rules,
        )
        asyncio.run(go(endpoints, var_dir))
        return 0
    with local_stack(env=FAST) as stack:
        endpoints = Endpoints(
            lobby=stack.address("lobby"),
            table=stack.address("table"),
            scoring=stack.address("scoring"),
            rules=stack.address("rules"),
        )
        asyncio.run(go(endpoints, stack.var_dir))
    return 0
