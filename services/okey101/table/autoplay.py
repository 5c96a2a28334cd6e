"""What a table does when its timer is due: a full table's start, the next deal, a turn that
timed out, a bot's step (a bot seat's, or an away player's).

One step per timer: each step is a change like a player's (``TableCore.change``), and its write
sets the table's next timer (a bot's turn is a few steps, each due at once), so a pod that dies
between two steps leaves the next one owed in the table's row. The pod that wrote a timer runs
it from memory (``timers``); any pod runs one its holder let lapse. A step another pod made
first is not made again: it was computed from a version that is no longer the table's.

A bot's decision comes from the bot service, from the seat's view (and, for the hard level, the
hand's events as the seat saw them), or from the engine's fallback when the bot service cannot
be reached.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final

import structlog
from okey.v1 import bot_pb2, bot_pb2_grpc, common_pb2, table_pb2

from okey101.engine.bots.entry_points import fallback_decision
from okey101.engine.hand import HandState
from okey101.engine.view import view as engine_view
from okey101.platform import convert
from okey101.platform.errors import Internal
from okey101.platform.peer_calls import PeerError, call_peer
from okey101.platform.peer_channels import PeerChannels
from okey101.table import events, metrics
from okey101.table.change import Change
from okey101.table.core import TableCore
from okey101.table.errors import NotReady, Stale
from okey101.table.live import LiveTable
from okey101.table.moves import action_kinds
from okey101.table.options import TableOptions
from okey101.table.records import DealInfo, TableRecord, TimerRecord
from okey101.table.views import hand_live

_log = structlog.get_logger("okey101.table")

#: The most events of a hand a hard bot's history holds.
_HISTORY_LIMIT: Final = 1000


def plan_time_out(
    record: TableRecord,
    state: HandState | None,
    deal: DealInfo | None,
    *,
    seat: int,
    now_us: int,
    options: TableOptions,
) -> Change:
    """``seat``'s time ran out: say so, count the miss (away after too many in a row), and owe
    a bot's step for the rest of the turn, at once."""
    seats = list(record.seats)
    missed = seats[seat].missed + 1
    away = missed >= (record.missed_turns_before_away or options.missed_turns_before_away)
    seats[seat] = seats[seat].replace(missed=missed, away=away or seats[seat].away)
    after = record.replace(seats=tuple(seats), turn_deadline_us=None)
    change = Change(record, now_us, after, state, deal, write_seats=True)
    change.drafts.append(events.turn_timed_out(seat, record))
    if away:
        change.drafts.append(
            events.presence(common_pb2.EVENT_KIND_SEAT_AWAY, seat, seats[seat], record, state)
        )
    change.timer = TimerRecord("bot", now_us)
    return change


def plan_no_timer(
    record: TableRecord, state: HandState | None, deal: DealInfo | None, *, now_us: int
) -> Change:
    """Nothing is due at the table any more (its match is over, or a turn has no clock)."""
    return Change(record, now_us, record, state, deal, timer=None)


class Autoplay:
    """The steps of due timers (module docstring)."""

    def __init__(self, core: TableCore, peers: PeerChannels) -> None:
        self.core = core
        self.peers = peers
        self.options = core.options
        self._bot = bot_pb2_grpc.BotServiceStub(peers.channel("bot"))

    async def play_due(self, table_id: str) -> None:
        """The step the table's timer is for, if it is due (module docstring)."""
        core = self.core
        live = await core.tables.get(table_id)
        record, state = live.record, live.state
        now = core.now_us()
        options = self.options
        if record.due_to_start:
            await core.start(table_id)
            return
        if record.state != common_pb2.TABLE_STATE_PLAYING or state is None:
            if record.timer is not None:
                await core.change(
                    table_id, lambda t: plan_no_timer(t.record, t.state, t.deal, now_us=now)
                )
            return
        if not hand_live(state):
            await core.deal_next(table_id)
            return
        seat = state.turn
        source = table_pb2.MOVE_SOURCE_BOT
        if not record.seats[seat].automatic:
            timer = record.timer
            if timer is not None and timer.kind == "bot":
                source = table_pb2.MOVE_SOURCE_TIMEOUT  # the turn timed out: its bot plays on
            elif record.turn_deadline_us is None:
                if timer is not None:
                    await core.change(
                        table_id, lambda t: plan_no_timer(t.record, t.state, t.deal, now_us=now)
                    )
                return
            elif record.turn_deadline_us > now:
                return  # not due yet
            else:
                metrics.TURN_TIMEOUTS.inc()
                turn = state.turn_number
                await core.change(table_id, lambda t: _timed_out(t, seat, turn, now, options))
                return  # the bot's step for the rest of the turn is owed at once
        await self._bot_step(live, seat, source)

    async def _bot_step(self, live: LiveTable, seat: int, source: int) -> None:
        """One bot decision for ``seat`` and its moves (the next step's timer comes with
        them)."""
        version = live.record.state_version
        actions = await self.bot_actions(live, seat)
        await self.core.move(
            live.table_id, seat, actions, source=source, expected_version=version, autoplayed=True
        )
        for kind in action_kinds(actions):
            metrics.MOVES.labels(kind, SOURCE_LABELS.get(source, "other")).inc()

    async def bot_actions(self, live: LiveTable, seat: int) -> list[common_pb2.Action]:
        """The bot service's next step for ``seat`` from its view, or the engine's fallback."""
        record, state = live.record, live.state
        assert state is not None
        view = live.views.message(seat)
        level = record.seats[seat].bot_level or common_pb2.BOT_LEVEL_NORMAL
        digest = hashlib.sha256(
            f"{record.hand_id}|{view.turn_number}|{view.phase}|{record.state_version}".encode()
        ).digest()
        seed = int.from_bytes(digest[:8], "big")
        request = bot_pb2.NextStepRequest(view=view, phase=view.phase, level=level, seed=seed)  # type: ignore[arg-type]
        if level in (common_pb2.BOT_LEVEL_HARD, common_pb2.BOT_LEVEL_EXPERT):
            request.history.extend(await self._history(live, seat))
        try:
            answer = await call_peer(
                self._bot.NextStep,
                request,
                metadata=self.peers.metadata(),
                timeout=self.options.peer_timeout_seconds,
                unavailable=lambda: NotReady("BOT_UNAVAILABLE"),
            )
            return list(answer.actions)
        except NotReady:
            pass  # the bot service gave no verdict: the engine's fallback decides
        except PeerError as refused:
            problem = refused.rebuilt()
            if problem is None:
                _log.error("unexpected answer from the bot service", code=refused.code.name)
                raise Internal("INTERNAL") from None
            raise problem from None
        metrics.BOT_FALLBACKS.inc()
        rules = convert.rules_from_proto(record.rules_message())
        decision = fallback_decision(engine_view(state, seat), rules, seed)
        return [convert.action_to_proto(action) for action in decision.actions]

    async def _history(self, live: LiveTable, seat: int) -> Sequence[common_pb2.Event]:
        """The events of the hand in play, as ``seat`` saw them: from memory when it reaches
        back to the hand's deal, else from the log."""
        hand_id = live.record.hand_id
        kept = [event for event in live.events if event.hand_id == hand_id]
        if not kept or kept[0].kind != common_pb2.EVENT_KIND_HAND_DEALT:
            kept = await self.core.store.events_after(
                live.table_id, 0, limit=_HISTORY_LIMIT, hand_id=hand_id
            )
        return [event.for_viewer(seat) for event in kept]


def _timed_out(
    live: LiveTable, seat: int, turn_number: int, now_us: int, options: TableOptions
) -> Change:
    """``plan_time_out``, if it is still that turn (a move that came first ended it)."""
    state = live.state
    if state is None or state.turn != seat or state.turn_number != turn_number:
        raise Stale("STALE_VERSION", version=live.record.state_version, current=-1)
    return plan_time_out(
        live.record, live.state, live.deal, seat=seat, now_us=now_us, options=options
    )


#: The moves metric's ``source`` label of each move source.
SOURCE_LABELS: Final[dict[int, str]] = {
    table_pb2.MOVE_SOURCE_PLAYER: "player",
    table_pb2.MOVE_SOURCE_BOT: "bot",
    table_pb2.MOVE_SOURCE_TIMEOUT: "timeout",
}


__all__ = ["SOURCE_LABELS", "Autoplay", "plan_no_timer", "plan_time_out"]
