"""The ``okey101`` command line.

    okey101 best-opening --rules oyna --indicator Y5 R7 R8 Y6 ...
    okey101 scenario run FILE [--json] | okey101 scenario check PATH...
    okey101 up
    okey101 migrate SERVICE [--check [--wait SECONDS]]
    okey101 bench solver --hands 2000 [--seed 0] [--json]
    okey101 bench engine --hands 200 [--json]

Every subcommand is a function that adds its parser (``_add_*``) and a handler taking the parsed
arguments and returning the exit status; ``bench`` is a group whose targets are listed in
``_BENCH_TARGETS``. A new command is one more ``_add_*`` call in ``build_parser``.

Bad input (an unknown tile, a third copy of a tile, an unknown rule set) is one line on stderr
and exit status 2, never a traceback; argparse's own usage errors also exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from okey101.engine.errors import OkeyError

if TYPE_CHECKING:
    from okey101.client.i18n import Strings
    from okey101.client.session import Endpoints

PROG = "okey101"
USAGE_ERROR = 2

Handler = Callable[[argparse.Namespace], int]
# The object ``add_subparsers`` returns, to which a command adds its parser.
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class CommandError(Exception):
    """Bad input found by the command line itself: reported as one line, exit status 2."""


# --------------------------------------------------------------------------------------------
# best-opening


def _add_best_opening(commands: Commands) -> None:
    parser = commands.add_parser(
        "best-opening",
        help="the best runs-and-sets opening of a hand, as JSON",
        description="Print the highest-valued runs and sets in a hand as JSON: "
        '{"value", "melds", "okeys", "leftover"}.',
    )
    parser.add_argument("--rules", default="oyna", help="rule set preset (default: oyna)")
    parser.add_argument(
        "--indicator", required=True, help="the indicator tile, e.g. Y5 (its copy is used up)"
    )
    parser.add_argument(
        "--required",
        metavar="TILE",
        help="a tile of the hand that must be laid down (the left discard taken to open)",
    )
    parser.add_argument(
        "--no-keep-one",
        dest="keep_one",
        action="store_false",
        help="allow using every tile (an opening must keep one to discard)",
    )
    parser.add_argument("tiles", nargs="+", metavar="TILE", help="the hand: R7 K13 FJ ...")
    parser.set_defaults(handler=_best_opening)


def _best_opening(args: argparse.Namespace) -> int:
    from okey101.engine.rules import RuleSet
    from okey101.engine.solver.arrangement import Hand
    from okey101.engine.solver.openings import best_opening
    from okey101.engine.tiles import Okey, face_name, parse_face, tiles_from_names

    rules = RuleSet.preset(args.rules)
    (indicator,) = tiles_from_names([args.indicator])
    okey = Okey(indicator)
    tiles = tiles_from_names(args.tiles, used=[indicator])
    hand = Hand(tiles, okey)
    required = None
    if args.required is not None:
        face = parse_face(args.required)
        required = next((tile for tile in tiles if tile.face == face), None)
        if required is None:
            raise CommandError(f"the required tile {face_name(face)} is not in the hand")
    arrangement = best_opening(hand, rules, required=required, keep_one=args.keep_one)
    out = arrangement.to_json()
    out["rules"] = rules.name
    out["indicator"] = str(indicator)
    out["okey"] = face_name(okey.face)
    print(json.dumps(out, ensure_ascii=False))
    return 0


# --------------------------------------------------------------------------------------------
# scenario: run and check rule scenarios (../shared/SCENARIOS.md)


def _add_scenario(commands: Commands) -> None:
    parser = commands.add_parser(
        "scenario",
        help="play rule scenario files and check what they expect",
        description="Rule scenarios: a position, the moves played from it and what must follow.",
    )
    actions = parser.add_subparsers(dest="scenario_command", metavar="ACTION", required=True)
    run = actions.add_parser("run", help="play FILE and print what happened")
    run.add_argument("file", metavar="FILE")
    run.add_argument("--json", action="store_true", help="one JSON object on standard output")
    run.set_defaults(handler=_scenario_run)
    check = actions.add_parser(
        "check", help="run every scenario under PATH and check its expect (exit 1 if any fails)"
    )
    check.add_argument("paths", nargs="+", metavar="PATH", help="scenario files or folders")
    check.set_defaults(handler=_scenario_check)


def _load_scenario(path: str) -> object:
    """A scenario file's parsed YAML, or a one-line CommandError."""
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            return yaml.safe_load(handle)
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(error, "problem", None) or "not valid YAML"
        raise CommandError(f"{path}: broken YAML{where}: {problem}") from None


def _scenario_run(args: argparse.Namespace) -> int:
    from okey101.engine.scenario import ScenarioError, parse_scenario, run_scenario

    data = _load_scenario(args.file)
    try:
        result = run_scenario(parse_scenario(data))
    except ScenarioError as error:
        raise CommandError(f"{args.file}: {error}") from None
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
        return 0
    for move in result.moves:
        verdict = "ok" if move.ok else f"rejected {move.code}: {move.message}"
        print(f"seat {move.seat} {move.move}: {verdict}")
    print("penalties:", json.dumps(result.penalties()))
    print("hand:", json.dumps(result.hand()))
    if result.scores():
        print("scores:", json.dumps(result.scores()))
    return 0


def _scenario_files(paths: Sequence[str]) -> list[str]:
    from pathlib import Path

    files: list[str] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            files.extend(
                str(found)
                for found in sorted(path.rglob("*"))
                if found.suffix in (".yaml", ".yml") and found.is_file()
            )
        elif path.is_file():
            files.append(str(path))
        else:
            raise CommandError(f"{name}: no such file or folder")
    return files


def _scenario_check(args: argparse.Namespace) -> int:
    from okey101.engine.scenario import (
        ScenarioError,
        check_expectations,
        parse_scenario,
        run_scenario,
    )

    passed = failed = malformed = 0
    for path in _scenario_files(args.paths):
        try:
            scenario = parse_scenario(_load_scenario(path))
            problems = check_expectations(run_scenario(scenario), scenario.expect)
        except (ScenarioError, CommandError) as error:
            message = str(error) if str(error).startswith(path) else f"{path}: {error}"
            print(f"ERROR {message}")
            malformed += 1
            continue
        if problems:
            failed += 1
            print(f"FAIL {path}")
            for problem in problems:
                print(f"  {problem}")
        else:
            passed += 1
            print(f"PASS {path}")
    print(f"{passed} passed, {failed + malformed} failed")
    if malformed:
        return USAGE_ERROR
    return 1 if failed else 0


# --------------------------------------------------------------------------------------------
# serve and up: the services

# The five services of ../shared/DESIGN.md, in the order `up` starts them.
SERVICES = ("rules", "bot", "scoring", "table", "lobby")


def built_services() -> list[str]:
    """The services that exist in this build (each is a package with ``__main__.run``), found
    without importing them (a service's package imports its whole service)."""
    import importlib.util
    from pathlib import Path

    built = []
    for name in SERVICES:
        spec = importlib.util.find_spec(f"okey101.{name}")
        locations = spec.submodule_search_locations if spec is not None else None
        if locations and any((Path(place) / "__main__.py").exists() for place in locations):
            built.append(name)
    return built


def _add_serve(commands: Commands) -> None:
    parser = commands.add_parser(
        "serve",
        help="run one service (its flags: okey101 serve SERVICE --help)",
        description="Run one service until SIGTERM or Ctrl-C: okey101 serve rules --port 50054.",
        add_help=False,
    )
    parser.add_argument("service", metavar="SERVICE", help=f"one of: {', '.join(SERVICES)}")
    parser.add_argument("flags", nargs=argparse.REMAINDER, help="the service's own flags")
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    import importlib

    if args.service not in SERVICES:
        raise CommandError(f"there is no service called '{args.service}': {', '.join(SERVICES)}")
    if args.service not in built_services():
        raise CommandError(f"the {args.service} service is not built yet")
    module = importlib.import_module(f"okey101.{args.service}.__main__")
    status: int = module.run(args.flags)
    return status


def _add_up(commands: Commands) -> None:
    parser = commands.add_parser(
        "up",
        help="start every service that exists on its default ports (SQLite under ./var/)",
        description="Start every built service as a process of its own on the default ports of "
        "DESIGN.md, wait until each reports SERVING, and print where each listens. Ctrl-C (or "
        "SIGTERM) stops them all gracefully.",
    )
    parser.add_argument("--var-dir", default="var", help="where local mode keeps its files")
    parser.set_defaults(handler=_up)


def _up(args: argparse.Namespace) -> int:
    from okey101.bench.rules_bench import wait_serving_sync
    from okey101.platform.config import SERVICE_PORTS

    names = built_services()
    if not names:
        print("okey101 up: no service is built yet.")
        return 0
    children: list[tuple[str, subprocess.Popen[bytes]]] = []
    # One machine rarely has four people queueing: bots fill a quick match after 5 s, not the
    # production default of 30 s (unless set).
    local_env = {"OKEY_LOBBY_QUICK_MATCH_WAIT_SECONDS": "5", **os.environ}
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        for name in names:
            command = [sys.executable, "-m", "okey101.cli", "serve", name]
            children.append(
                (name, subprocess.Popen([*command, "--var-dir", args.var_dir], env=local_env))
            )
        for name, _child in children:
            port, _metrics = SERVICE_PORTS[name]
            wait_serving_sync(f"127.0.0.1:{port}", timeout=60)
        print("okey101 up: serving (gRPC, metrics):")
        for name, _child in children:
            port, metrics = SERVICE_PORTS[name]
            print(f"  {name:<8} 127.0.0.1:{port}   http://127.0.0.1:{metrics}/metrics")
        if "lobby" in names:
            print("  the lobby's JWKS: http://127.0.0.1:9106/.well-known/jwks.json")
        missing = [name for name in SERVICES if name not in names]
        if missing:
            print(f"  not built yet: {', '.join(missing)}")
        if "lobby" in names and "table" in names:
            print("Play in another terminal: .venv/bin/okey101 play  (okey101 play --help)")
        print("Ctrl-C stops them all.", flush=True)
        while not stopping:
            for name, child in children:
                if child.poll() is not None:
                    print(f"okey101 up: {name} stopped (exit {child.returncode})", file=sys.stderr)
                    stopping = True
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    except TimeoutError as error:
        print(f"okey101 up: {error}", file=sys.stderr)
    finally:
        signal.signal(signal.SIGTERM, previous)
        for _name, child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for _name, child in children:
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
    failed = [name for name, child in children if child.returncode not in (0, -signal.SIGTERM)]
    return 1 if failed else 0


# --------------------------------------------------------------------------------------------
# migrate: a service's own Alembic history, as the cluster's migration Job runs it

#: The settings ``migrate`` reads (flags, ``OKEY_<SERVICE>_*`` and ``OKEY_*`` as ``serve`` does).
_MIGRATE_SETTINGS = ("database_url", "local_mode", "var_dir")


def _add_migrate(commands: Commands) -> None:
    from okey101.platform.config import SETTINGS

    parser = commands.add_parser(
        "migrate",
        help="bring a service's database to its newest migration (the cluster's migration Job)",
        description="Upgrade SERVICE's database to the head of its own Alembic history (what the "
        "service also does at start), or with --check only tell whether it is there: exit 0 if "
        "it is, 1 if not (or the database cannot be reached), 2 for a service without a history.",
    )
    parser.add_argument("service", metavar="SERVICE", help="a service with a database")
    parser.add_argument(
        "--check",
        action="store_true",
        help="migrate nothing: exit 0 if the database is at the newest revision, else 1",
    )
    parser.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="with --check, keep checking for up to SECONDS (an init container waiting for the "
        "migration Job)",
    )
    for spec in SETTINGS:
        if spec.name in _MIGRATE_SETTINGS:
            parser.add_argument(spec.flag, dest=spec.name, default=None, help=spec.help)
    parser.set_defaults(handler=_migrate)


def _migrate(args: argparse.Namespace) -> int:
    import asyncio

    from sqlalchemy.exc import SQLAlchemyError

    from okey101.platform.config import ConfigError, load_settings
    from okey101.platform.database import database_url, migrations_path, run_migrations

    service: str = args.service
    if service not in SERVICES:
        raise CommandError(f"there is no service called '{service}': {', '.join(SERVICES)}")
    try:
        migrations_path(service)
        flags = {name: getattr(args, name) for name in _MIGRATE_SETTINGS}
        url = database_url(service, load_settings(service, flags))
    except ImportError:
        raise CommandError(f"the {service} service is not built yet") from None
    except ConfigError as error:
        raise CommandError(str(error)) from None
    if not args.check:
        try:
            asyncio.run(run_migrations(service, url))
        except (OSError, SQLAlchemyError) as error:
            print(f"{PROG} migrate {service}: {' '.join(str(error).split())}", file=sys.stderr)
            return 1
        print(f"{service}: migrated to {_head_revisions(service)}")
        return 0
    deadline = time.monotonic() + max(args.wait, 0.0)
    while True:
        try:
            current = asyncio.run(_current_revisions(service, url))
            reason = f"at {current or 'no revision'}, head is {_head_revisions(service)}"
            if current == _head_revisions(service):
                print(f"{service}: at the head revision {current}")
                return 0
        except (OSError, SQLAlchemyError) as error:
            reason = f"cannot read the database: {' '.join(str(error).split())}"
        if time.monotonic() >= deadline:
            print(f"{PROG} migrate {service}: not migrated ({reason})", file=sys.stderr)
            return 1
        time.sleep(min(2.0, max(deadline - time.monotonic(), 0.0)))


def _head_revisions(service: str) -> str:
    from alembic.script import ScriptDirectory

    from okey101.platform.database import alembic_config

    return ",".join(sorted(ScriptDirectory.from_config(alembic_config(service)).get_heads()))


async def _current_revisions(service: str, url: str) -> str:
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import Connection

    from okey101.platform.database import create_engine, version_table

    engine = create_engine(url)
    try:
        async with engine.connect() as connection:

            def heads(sync_connection: Connection) -> str:
                options = {"version_table": version_table(service)}
                context = MigrationContext.configure(sync_connection, opts=options)
                return ",".join(sorted(context.get_current_heads()))

            return await connection.run_sync(heads)
    finally:
        await engine.dispose()


# --------------------------------------------------------------------------------------------
# play, watch and simulate: clients of the public API (okey101.client)


def _add_client_flags(parser: argparse.ArgumentParser, *services: str) -> None:
    """``--lang`` and the addresses of the public services the command talks to."""
    from okey101.platform.config import SERVICE_PORTS

    parser.add_argument(
        "--lang", dest="client_lang", choices=("en", "tr"), default=None,
        help="the language of the screen and of the servers' sentences (default: --lang "
        "before the command, else en)",
    )  # fmt: skip
    for name in services:
        flag = "--rules-service" if name == "rules" else f"--{name}"
        default = f"127.0.0.1:{SERVICE_PORTS[name][0]}"
        parser.add_argument(
            flag, dest=f"{name}_address", metavar="ADDR", default=default,
            help=f"the {name} service (default: %(default)s)",
        )  # fmt: skip


def _client_strings(args: argparse.Namespace) -> Strings:
    from okey101.client.i18n import Strings, language_of

    return Strings(language_of(args.client_lang or args.lang))


def _endpoints(args: argparse.Namespace) -> Endpoints:
    from okey101.client.session import Endpoints

    base = Endpoints()
    return Endpoints(
        lobby=getattr(args, "lobby_address", None) or base.lobby,
        table=getattr(args, "table_address", None) or base.table,
        scoring=getattr(args, "scoring_address", None) or base.scoring,
        rules=getattr(args, "rules_address", None) or base.rules,
    )


def _add_play(commands: Commands) -> None:
    parser = commands.add_parser(
        "play",
        help="sit at a table with three bots in this terminal",
        description="Log in as this device's guest, quick-match with bots filling the empty "
        "seats (or, with --hands, host a table with three bots and a match of N hands) and "
        "play in the terminal. Keys are listed at the bottom of the screen.",
    )
    parser.add_argument("--rules", choices=PRESET_CHOICES, default="oyna", help="the preset")
    parser.add_argument("--hands", type=_positive_int, default=None, help="match length")
    parser.add_argument("--name", default="", help="the name shown at the table")
    parser.add_argument("--var-dir", default="var", help="where the guest secret is kept")
    _add_client_flags(parser, "lobby", "table", "scoring", "rules")
    parser.set_defaults(handler=_play)


def _play(args: argparse.Namespace) -> int:
    from pathlib import Path

    from okey101.client.commands import play_app, run_app

    app = play_app(
        _endpoints(args),
        _client_strings(args),
        preset=args.rules,
        hands=args.hands,
        var_dir=Path(args.var_dir),
        name=args.name,
    )
    return run_app(app)


def _add_watch(commands: Commands) -> None:
    parser = commands.add_parser(
        "watch",
        help="follow a table as a spectator",
        description="Follow TABLE as a spectator: the same screen without a rack; read-only.",
    )
    parser.add_argument("table", metavar="TABLE", help="the table's id")
    parser.add_argument("--var-dir", default="var", help="where the guest secret is kept")
    _add_client_flags(parser, "table", "lobby")
    parser.set_defaults(handler=_watch)


def _watch(args: argparse.Namespace) -> int:
    from pathlib import Path

    from okey101.client.commands import run_app, watch_app

    app = watch_app(
        _endpoints(args),
        _client_strings(args),
        table_id=args.table,
        var_dir=Path(args.var_dir),
    )
    return run_app(app)


def _add_simulate(commands: Commands) -> None:
    parser = commands.add_parser(
        "simulate",
        help="whole matches of four bots through the public API, with their score sheets",
        description="Play whole matches with four bots through the public API (a guest whose "
        "seat the engine's bot plays, with three of the table's bots) and print each score "
        "sheet from the scoring service with the totals and the winner. Without --lobby, a "
        "stack of its own is started on free ports (SQLite in a temporary directory).",
    )
    parser.add_argument("--matches", type=_positive_int, default=1, help="how many matches")
    parser.add_argument("--rules", choices=PRESET_CHOICES, default="oyna", help="the preset")
    parser.add_argument("--hands", type=_positive_int, default=None, help="match length")
    parser.add_argument(
        "--lobby", dest="lobby_address", metavar="ADDR", default=None,
        help="use the stack whose lobby is here instead of starting one",
    )  # fmt: skip
    parser.add_argument(
        "--var-dir", default="var", help="where the guest secret is kept (with --lobby)"
    )
    _add_client_flags(parser, "table", "scoring")
    parser.set_defaults(handler=_simulate)


def _simulate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from okey101.client import simulate

    try:
        return simulate.run(
            matches=args.matches,
            preset=args.rules,
            hands=args.hands,
            lobby=args.lobby_address,
            table=args.table_address if args.lobby_address else None,
            scoring=args.scoring_address if args.lobby_address else None,
            var_dir=Path(args.var_dir),
            strings=_client_strings(args),
            out=sys.stdout,
        )
    except simulate.SimulationError as error:
        raise CommandError(str(error)) from None


PRESET_CHOICES = ("oyna", "boombala", "north_sultan")


# --------------------------------------------------------------------------------------------
# bench: a group of benchmarks, one subcommand each.


def _add_played_bench(
    targets: Commands,
    name: str,
    *,
    help_text: str,
    description: str,
    hands: int,
    rules: str,
    handler: Handler,
) -> None:
    """A bench over seeded hands of some presets: --hands, --seed, --rules and --json."""
    parser = targets.add_parser(name, help=help_text, description=description)
    parser.add_argument("--hands", type=_positive_int, default=hands, help="how many hands")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument(
        "--rules", default=rules, help=f"comma-separated presets (default: {rules})"
    )
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    parser.set_defaults(handler=handler)


def _add_bench_solver(targets: Commands) -> None:
    _add_played_bench(
        targets,
        "solver",
        help_text="time best_opening on random deals and check it against the ILP reference",
        description="Draw random 22-tile hands from shuffled deals, time best_opening and the "
        "integer-programme reference on each, and count the hands where they disagree. "
        "Exit status 1 if any do.",
        hands=1000,
        rules="oyna,boombala",
        handler=_bench_solver,
    )


def _bench_solver(args: argparse.Namespace) -> int:
    from okey101.bench import solver_bench

    return solver_bench.main(args.hands, args.seed, _presets(args.rules), args.json)


def _add_bench_engine(targets: Commands) -> None:
    _add_played_bench(
        targets,
        "engine",
        help_text="random-agent hands per second, every invariant checked",
        description="Seeded random players play whole hands of each preset (--hands per "
        "preset); hands and actions per second, the share that ended with a finish, and "
        "invariant violations (checked on a replay of the same seeds). Exit status 1 if any "
        "invariant broke.",
        hands=200,
        rules="oyna,boombala,north_sultan",
        handler=_bench_engine,
    )


def _bench_engine(args: argparse.Namespace) -> int:
    from okey101.bench import engine_bench

    return engine_bench.main(args.hands, args.seed, _presets(args.rules), args.json)


def _add_bench_bots(targets: Commands) -> None:
    levels = ("random", "easy", "normal", "hard")
    parser = targets.add_parser(
        "bots",
        help="one bot level against another, in duplicate format",
        description="Each seeded deal is played with the candidate in each seat against three "
        "reference bots, plus a control of four references; the difference in penalty points "
        "per hand (negative is better) with a 95%% interval over deals.",
    )
    parser.add_argument("--deals", type=_positive_int, default=200, help="how many deals")
    parser.add_argument("--candidate", choices=levels, default="hard")
    parser.add_argument("--reference", choices=levels, default="normal")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--rules", default="oyna", help="a preset (default: oyna)")
    parser.add_argument("--workers", type=_positive_int, default=None, help="processes")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    parser.set_defaults(handler=_bench_bots)


def _bench_bots(args: argparse.Namespace) -> int:
    from okey101.bench import bots_bench

    (preset,) = _presets(args.rules)
    return bots_bench.main(
        args.deals,
        args.candidate,
        args.reference,
        args.seed,
        args.json,
        preset=preset,
        workers=args.workers,
    )


def _presets(text: str) -> tuple[str, ...]:
    from okey101.engine.rules import RuleSet

    presets = tuple(name.strip() for name in text.split(",") if name.strip())
    if not presets:
        raise CommandError("--rules names no rule set")
    for name in presets:
        RuleSet.preset(name)  # an unknown preset fails here, before any work
    return presets


def _add_bench_rules(targets: Commands) -> None:
    parser = targets.add_parser(
        "rules",
        help="ApplyAction over real gRPC against an empty gRPC service",
        description="Start the rules service and an empty gRPC service on free ports, call "
        "ApplyAction (and the empty call) with CONCURRENCY calls in flight for SECONDS each.",
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds per service")
    parser.add_argument("--concurrency", type=_positive_int, default=8, help="calls in flight")
    parser.add_argument("--seed", type=int, default=0, help="seed of the dealt hand")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    parser.set_defaults(handler=_bench_rules)


def _bench_rules(args: argparse.Namespace) -> int:
    from okey101.bench import rules_bench

    return rules_bench.main(args.seconds, args.concurrency, args.seed, args.json)


def _add_bench_table(targets: Commands) -> None:
    parser = targets.add_parser(
        "table",
        help="bots playing many tables through the real table, rules, bot and scoring services",
        description="Start the rules, bot, scoring and table services on free ports with a "
        "temporary database and play TABLES tables at once as bots for SECONDS; Act latency.",
    )
    parser.add_argument("--tables", type=_positive_int, default=20, help="tables at once")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds measured")
    parser.add_argument("--database-url", help="the table's database (default: a SQLite file)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    parser.set_defaults(handler=_bench_table)


def _bench_table(args: argparse.Namespace) -> int:
    from okey101.bench import table_bench

    return table_bench.main(args.tables, args.seconds, args.database_url, args.json)


def _add_bench_load(targets: Commands) -> None:
    parser = targets.add_parser(
        "load",
        help="the whole stack as five processes, many tables played through the public API",
        description="Start lobby, table, scoring, rules and bot on free ports with temporary "
        "PostgreSQL databases (or SQLite), log guests in, seat TABLES tables through the lobby "
        "(quick match and hosted) and play them for MINUTES; Act latency, hands lost between "
        "the tables and scoring, each service's peak memory. Exit status 1 on an error or a "
        "lost hand.",
    )
    parser.add_argument("--tables", type=_positive_int, default=20, help="tables at once")
    parser.add_argument("--minutes", type=float, default=1.0, help="minutes measured")
    parser.add_argument(
        "--pace", type=float, default=0.0, help="moves a second per table (default: full speed)"
    )
    parser.add_argument("--sqlite", action="store_true", help="SQLite files, not PostgreSQL")
    parser.add_argument(
        "--database-url",
        help="the PostgreSQL server to make the databases on (default: OKEY_TEST_DATABASE_URL, "
        "else postgresql://postgres@127.0.0.1:5432/test)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    parser.set_defaults(handler=_bench_load)


def _bench_load(args: argparse.Namespace) -> int:
    from okey101.bench import load_bench

    return load_bench.main(
        args.tables, args.minutes, args.pace, args.sqlite, args.database_url, args.json
    )


# Each adds one ``okey101 bench TARGET`` subcommand.
_BENCH_TARGETS: tuple[Callable[[Commands], None], ...] = (
    _add_bench_solver,
    _add_bench_engine,
    _add_bench_rules,
    _add_bench_bots,
    _add_bench_table,
    _add_bench_load,
)


def _add_bench(commands: Commands) -> None:
    parser = commands.add_parser("bench", help="benchmarks that print figures")
    targets = parser.add_subparsers(dest="target", metavar="TARGET", required=True)
    for add in _BENCH_TARGETS:
        add(targets)


# --------------------------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


# --------------------------------------------------------------------------------------------
# export-hand


def _add_export_hand(commands: Commands) -> None:
    parser = commands.add_parser(
        "export-hand",
        help="write an ended hand as a scenario file (replay it with okey101 scenario run)",
        description="Read an ended hand's record from the table service (TableService."
        "GetHandRecord) and write it as a scenario file: the deal, every move, and the engine's "
        "own expect. Calls with a service token signed by the local development key of "
        "--var-dir, or with --token.",
    )
    parser.add_argument("hand_id", metavar="HAND_ID")
    parser.add_argument("--table", default="127.0.0.1:50052", help="the table service's address")
    parser.add_argument("--var-dir", default="var", help="where the development key is")
    parser.add_argument("--token", help="a bearer token to call with instead")
    parser.add_argument("--out", help="the file to write (default: standard output)")
    parser.set_defaults(handler=_export_hand)


def _export_hand(args: argparse.Namespace) -> int:
    import asyncio
    from pathlib import Path

    import grpc
    import yaml

    from okey101.engine.export import hand_scenario
    from okey101.engine.tiles import tile_by_id
    from okey101.platform import convert

    async def fetch() -> object:
        from okey.v1 import table_pb2, table_pb2_grpc

        token = args.token
        if token is None:
            from okey101.platform.auth import TokenIssuer, dev_signing_key

            token = TokenIssuer(dev_signing_key(Path(args.var_dir))).issue(
                "okey101-cli", "service", ttl_seconds=60
            )
        async with grpc.aio.insecure_channel(args.table) as channel:
            stub = table_pb2_grpc.TableServiceStub(channel)
            answer = await stub.GetHandRecord(
                table_pb2.GetHandRecordRequest(hand_id=args.hand_id, locale=args.lang),
                metadata=(("authorization", f"Bearer {token}"),),
                timeout=10,
            )
        return answer.record

    try:
        record: Any = asyncio.run(fetch())
    except grpc.aio.AioRpcError as error:
        raise CommandError(f"{args.table}: {error.code().name}: {error.details()}") from None
    rules = convert.rules_from_proto(record.rules)
    deck = [tile_by_id(tile_id) for tile_id in record.deck_tile_ids]
    moves = [(move.seat, convert.action_from_proto(move.action)) for move in record.moves]
    scenario = hand_scenario(rules, record.dealer, deck, moves)
    header = (
        f"# Hand {record.hand_id} (table {record.table_id}, hand {record.hand_number}), "
        f"{record.rules_version}; server seed {record.deal.server_seed}\n"
    )
    text = header + yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


# --------------------------------------------------------------------------------------------
# verify-deal


def _add_verify_deal(commands: Commands) -> None:
    parser = commands.add_parser(
        "verify-deal",
        help="recompute a hand's deck from its fairness inputs (docs/fair-deals.md)",
        description="Recompute the deck order of a hand from its table id, hand number, revealed "
        "server seed and player seeds, and check it against the published commitment and, given "
        "--deck, the deck the hand was dealt from. Prints JSON; exit 1 if a check fails.",
    )
    parser.add_argument("--table-id", required=True)
    parser.add_argument("--hand-number", required=True, type=_positive_int)
    parser.add_argument("--server-seed", required=True, help="the revealed server seed, hex")
    parser.add_argument(
        "--player-seed",
        action="append",
        default=[],
        metavar="SEAT:HEX",
        help="a seat's seed, e.g. 0:0011223344556677 (repeat per seat)",
    )
    parser.add_argument("--commitment", help="the published SHA-256 commitment, hex")
    parser.add_argument("--deck", nargs="+", type=int, metavar="ID", help="the dealt deck's ids")
    parser.set_defaults(handler=_verify_deal)


def _verify_deal(args: argparse.Namespace) -> int:
    from okey101.engine.fair_deal import commitment, deck_order, parse_seed

    server = parse_seed(args.server_seed, field="--server-seed", server=True)
    seeds: list[bytes | None] = [None, None, None, None]
    for given in args.player_seed:
        seat, _, text = given.partition(":")
        if seat not in ("0", "1", "2", "3") or not text:
            raise CommandError(f"--player-seed is SEAT:HEX with a seat 0-3, not {given!r}")
        seeds[int(seat)] = parse_seed(text, field="--player-seed")
    deck = deck_order(args.table_id, args.hand_number, server, seeds)
    report: dict[str, object] = {
        "commitment": commitment(server),
        "deck_tile_ids": [tile.id for tile in deck],
        "deck": [str(tile) for tile in deck],
    }
    ok = True
    if args.commitment is not None:
        report["commitment_matches"] = args.commitment.lower() == report["commitment"]
        ok = ok and bool(report["commitment_matches"])
    if args.deck is not None:
        report["deck_matches"] = list(args.deck) == report["deck_tile_ids"]
        ok = ok and bool(report["deck_matches"])
    print(json.dumps(report))
    return 0 if ok else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Okey 101: engine tools.")
    parser.add_argument(
        "--lang", choices=("en", "tr"), default="en", help="language of error messages"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_best_opening(commands)
    _add_scenario(commands)
    _add_serve(commands)
    _add_up(commands)
    _add_play(commands)
    _add_watch(commands)
    _add_simulate(commands)
    _add_migrate(commands)
    _add_bench(commands)
    _add_verify_deal(commands)
    _add_export_hand(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit status (0 ok, 1 a check failed, 2 bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, or a usage error argparse has printed
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else USAGE_ERROR)
    handler: Handler = args.handler
    try:
        return handler(args)
    except OkeyError as error:
        _fail(error.message(args.lang))
    except CommandError as error:
        _fail(str(error))
    return USAGE_ERROR


def _fail(message: str) -> None:
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
