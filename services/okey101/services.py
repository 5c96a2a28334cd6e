"""The five services: their names, what serves each, and which of them this build has.

``okey101 serve NAME`` parses the platform's flags (``platform.config``) and runs the service's
serving coroutine (``SERVED_BY``) through ``platform.server.run_serving``: that is the one way
every service starts, in a shell, in ``okey101 up`` and in the cluster's image. Nothing here
imports a service: the command line, the local stack (``okey101.stack``) and the tests read
this before any service is loaded, and ``okey101 serve rules`` loads the rules service alone.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

if TYPE_CHECKING:
    from okey101.platform.config import Settings

#: The services, in the order ``okey101 up`` starts them (the lobby last: it calls the others).
SERVICES: Final = ("rules", "bot", "scoring", "table", "lobby")

#: The edge: not a gRPC service of its own but the HTTP front of the public ones (Connect,
#: gRPC-Web); ``okey101 serve edge`` runs it like a service, ``okey101 up`` starts it last.
EDGE: Final = "edge"

#: A service's serving coroutine: serves until SIGTERM or SIGINT, then drains and stops.
Serving = Callable[["Settings"], Coroutine[Any, Any, None]]


@dataclass(frozen=True)
class Served:
    """Where a service's serving coroutine is, and what ``okey101 serve NAME --help`` says."""

    module: str
    function: str
    description: str


SERVED_BY: Final[Mapping[str, Served]] = {
    "rules": Served(
        "okey101.rules.service",
        "serve_rules",
        "Serve okey.v1.RulesService (the rules engine over gRPC, stateless).",
    ),
    "bot": Served(
        "okey101.bot.service",
        "serve_bot",
        "Serve okey.v1.BotService (computer players' next steps, stateless).",
    ),
    "scoring": Served(
        "okey101.scoring.service",
        "serve_scoring",
        "Serve okey.v1.ScoringService (score sheets, standings, ratings, leaderboards) over "
        "its own database.",
    ),
    "table": Served(
        "okey101.table.runtime",
        "serve_table",
        "Serve okey.v1.TableService (live tables, turns, timers, per-seat streams) over its "
        "own database.",
    ),
    "lobby": Served(
        "okey101.lobby.service",
        "serve_lobby",
        "Serve okey.v1.LobbyService (players, tokens, tables, quick match, tournaments) over "
        "its own database.",
    ),
    "edge": Served(
        "okey101.edge.service",
        "serve_edge",
        "Serve every public RPC of the lobby, table, rules and scoring services as Connect and "
        "gRPC-Web over HTTP (for browsers), forwarding each call to its service over gRPC.",
    ),
}


def built_services() -> list[str]:
    """The services that exist in this build (a package holding its serving module), found
    without importing them (a service's package imports its whole service)."""
    built = []
    for name in SERVICES:
        spec = importlib.util.find_spec(f"okey101.{name}")
        locations = spec.submodule_search_locations if spec is not None else None
        leaf = SERVED_BY[name].module.rpartition(".")[2]
        if locations and any((Path(place) / f"{leaf}.py").exists() for place in locations):
            built.append(name)
    return built


def serving(name: str) -> Serving:
    """The serving coroutine of service ``name`` (this imports the service)."""
    served = SERVED_BY[name]
    return cast(Serving, getattr(importlib.import_module(served.module), served.function))


__all__ = ["EDGE", "SERVED_BY", "SERVICES", "Served", "Serving", "built_services", "serving"]
