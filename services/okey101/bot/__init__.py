"""The bot service: computer players over gRPC (``okey.v1.BotService``), stateless.

``register(server)`` adds it to a platform server; ``serve_bot(settings)`` runs it;
``okey101 serve bot [--port P] [--metrics-port M] ...`` starts it from a shell.
"""

from okey101.bot.service import (
    ACCESS,
    DECISION_SECONDS,
    SERVICE_NAME,
    BotServicer,
    next_step,
    register,
    serve_bot,
)

__all__ = [
    "ACCESS",
    "DECISION_SECONDS",
    "SERVICE_NAME",
    "BotServicer",
    "next_step",
    "register",
    "serve_bot",
]
