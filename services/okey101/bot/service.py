"""BotService: computer players over gRPC, stateless (protos/okey/v1/bot.proto).

NextStep is thin: convert the request in (``platform.convert``), check that the view is the
seat's to move in the phase asked, call the engine's bots (``engine.bots.entry_points.decide``),
convert the actions out. Everything the bot uses is in the request: the seat's view, the level,
the seed and, optionally, the hand's events as the seat received them (its ``BotMemory``). The
same request always gets the same answer.

Errors are the engine's, mapped by the platform: a malformed view, phase, level or history is
INVALID_ARGUMENT (a view without a seat or whose phase is not the request's: BAD_FIELD); a view
whose seat is not the one to move is FAILED_PRECONDITION NOT_YOUR_TURN, an ended hand
HAND_OVER.

``expert`` searches within a budget per decision (``--expert-seconds``, 0.8 s, and at most
``--expert-playouts`` rollouts, 96): its answer to the same request is the same unless the
time bound cut it short on a loaded machine. Its decisions run in a worker thread, so the
service's event loop keeps answering meanwhile.

Metrics: ``okey_bot_decision_seconds``, a histogram of the time ``decide`` took, labelled by the
level that played (never by a player, table or hand).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Final

import grpc.aio
from okey.v1 import bot_pb2, bot_pb2_grpc, common_pb2
from prometheus_client import Histogram

from okey101.engine.bots.entry_points import decide
from okey101.engine.bots.expert import DEFAULT_BUDGET, ExpertBudget
from okey101.engine.bots.levels import BotLevel
from okey101.engine.bots.memory import BotMemory
from okey101.engine.errors import InvalidInput, RuleViolation
from okey101.engine.hand import Phase
from okey101.platform import convert
from okey101.platform.auth import Access, AccessPolicy
from okey101.platform.config import Settings
from okey101.platform.errors import Language, request_language
from okey101.platform.handlers import Context
from okey101.platform.metrics import LATENCY_BUCKETS
from okey101.platform.server import serve

NAME: Final = "bot"
SERVICE_NAME: Final = bot_pb2.DESCRIPTOR.services_by_name["BotService"].full_name

#: Every RPC's "Auth:" line in bot.proto: a bot's step is asked for by the table service only.
METHOD_ACCESS: Final[dict[str, tuple[Access, ...]]] = {"NextStep": ("service",)}

#: The most events a request's history may hold: far above any hand's (a hand has at most a
#: few hundred), far below where reading them would cost more than deciding.
MAX_HISTORY: Final = 10_000

#: BotLevel values and the engine's levels (BOT_LEVEL_UNSPECIFIED: normal).
LEVELS: Final[Mapping[int, BotLevel]] = {
    int(common_pb2.BOT_LEVEL_UNSPECIFIED): BotLevel.NORMAL,
    int(common_pb2.BOT_LEVEL_RANDOM): BotLevel.RANDOM,
    int(common_pb2.BOT_LEVEL_EASY): BotLevel.EASY,
    int(common_pb2.BOT_LEVEL_NORMAL): BotLevel.NORMAL,
    int(common_pb2.BOT_LEVEL_HARD): BotLevel.HARD,
    int(common_pb2.BOT_LEVEL_EXPERT): BotLevel.EXPERT,
}
LEVELS_TO_PROTO: Final[Mapping[BotLevel, common_pb2.BotLevel]] = {
    BotLevel.RANDOM: common_pb2.BOT_LEVEL_RANDOM,
    BotLevel.EASY: common_pb2.BOT_LEVEL_EASY,
    BotLevel.NORMAL: common_pb2.BOT_LEVEL_NORMAL,
    BotLevel.HARD: common_pb2.BOT_LEVEL_HARD,
    BotLevel.EXPERT: common_pb2.BOT_LEVEL_EXPERT,
}

DECISION_SECONDS: Final = Histogram(
    "okey_bot_decision_seconds",
    "Time the bot took to decide a step (the engine's decide, conversions excluded).",
    ("level",),
    buckets=LATENCY_BUCKETS,
)


#: Which tokens each call accepts (and the platform's open methods).
ACCESS: Final = AccessPolicy.of_service(SERVICE_NAME, METHOD_ACCESS)


def level_from_proto(value: int, *, field: str = "level") -> BotLevel:
    """The engine's level of a BotLevel value (unspecified: normal); BAD_FIELD if unknown."""
    level = LEVELS.get(int(value))
    if level is None:
        raise InvalidInput("BAD_FIELD", field=field, value=str(int(value)))
    return level


def next_step(
    request: bot_pb2.NextStepRequest,
    language: Language,
    budget: ExpertBudget = DEFAULT_BUDGET,
) -> bot_pb2.NextStepResponse:
    """The bot's actions for the seat to move, in the phase the request names (``budget``: an
    expert's).

    ``language`` is the caller's (error sentences; the engine's reasons are in English).
    """
    if not request.HasField("view"):
        raise InvalidInput("BAD_FIELD", field="view", value="unset")
    if not request.view.HasField("seat"):
        raise InvalidInput("BAD_FIELD", field="view.seat", value="unset")  # a spectator's view
    view = convert.seat_view_from_proto(request.view, field="view")
    rules = convert.rules_from_proto(request.view.rules, field="view.rules")
    phase = convert.phase_from_proto(request.phase, field="phase")
    if phase is not view.phase:
        raise InvalidInput(
            "BAD_FIELD",
            field="phase",
            value=common_pb2.Phase.Name(request.phase),
            view_phase=common_pb2.Phase.Name(request.view.phase),
        )
    if view.result is not None or view.phase is Phase.ENDED:
        raise RuleViolation("HAND_OVER")
    if view.turn != view.seat:
        raise RuleViolation("NOT_YOUR_TURN", seat=view.seat, turn=view.turn)
    level = level_from_proto(request.level)
    if len(request.history) > MAX_HISTORY:
        raise InvalidInput("BAD_FIELD", field="history", value=f"{len(request.history)} events")
    memory: BotMemory | None = None
    if request.history:
        read = (
            convert.event_from_proto(event, field=f"history[{index}]")
            for index, event in enumerate(request.history)
        )
        # The table's own events (seats, turns, deals) read as None: nothing for the memory.
        memory = BotMemory.from_events(view.seat, [event for event in read if event is not None])
    started = time.perf_counter()
    decision = decide(view, rules, level, request.seed, memory, budget=budget)
    DECISION_SECONDS.labels(level=decision.level.value).observe(time.perf_counter() - started)
    return bot_pb2.NextStepResponse(
        actions=[convert.action_to_proto(action) for action in decision.actions],
        reason=decision.reason,
        level=LEVELS_TO_PROTO[decision.level],
    )


class BotServicer(bot_pb2_grpc.BotServiceServicer):
    """okey.v1.BotService: NextStep runs ``next_step`` (an expert's in a worker thread); an
    engine error ends the call with its mapped status in the request's language."""

    def __init__(self, budget: ExpertBudget = DEFAULT_BUDGET) -> None:
        self._budget = budget

    async def NextStep(  # noqa: N802 (the generated servicer's names)
        self, request: bot_pb2.NextStepRequest, context: Context
    ) -> bot_pb2.NextStepResponse:
        language = request_language(request, context.invocation_metadata())
        if request.level == common_pb2.BOT_LEVEL_EXPERT:
            return await asyncio.to_thread(next_step, request, language, self._budget)
        return next_step(request, language, self._budget)


def expert_budget(settings: Settings) -> ExpertBudget:
    """The expert's budget per decision from the service's settings."""
    return ExpertBudget(playouts=settings.expert_playouts, seconds=settings.expert_seconds)


def register(server: grpc.aio.Server, budget: ExpertBudget = DEFAULT_BUDGET) -> list[str]:
    """Add BotService to ``server``; its full service name, for health and reflection."""
    bot_pb2_grpc.add_BotServiceServicer_to_server(BotServicer(budget), server)
    return [SERVICE_NAME]


async def serve_bot(settings: Settings) -> None:
    """Run the bot service until SIGTERM or SIGINT (the platform's ``serve``)."""
    budget = expert_budget(settings)
    await serve(NAME, lambda server: register(server, budget), settings, access=ACCESS)
