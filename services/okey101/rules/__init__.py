"""The rules service: the engine over gRPC (``okey.v1.RulesService``), stateless.

``register(server)`` adds it to a platform server; ``serve_rules(settings)`` runs it;
``okey101 serve rules [--port P] [--metrics-port M] ...`` starts it from a shell.
"""

from okey101.rules.service import (
    ACCESS,
    SERVICE_NAME,
    RulesServicer,
    register,
    serve_rules,
)

__all__ = ["ACCESS", "SERVICE_NAME", "RulesServicer", "register", "serve_rules"]
