"""``serve``, ``up`` and ``migrate``: the services and their databases.

``okey101 serve SERVICE`` is the one way a service starts (``okey101.services``): here, in
``okey101 up``, in the local stack of the tests and benchmarks, and in the cluster's image. It
imports the service it serves and nothing else of the package (neither the client nor the
benchmarks: a test checks).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from okey101.cli.command import PROG, CommandError, Commands
from okey101.services import EDGE, SERVED_BY, SERVICES, built_services


def add_serve(commands: Commands) -> None:
    parser = commands.add_parser(
        "serve",
        help="run one service (its flags: okey101 serve SERVICE --help)",
        description="Run one service until SIGTERM or Ctrl-C: okey101 serve rules --port 50054.",
        add_help=False,
    )
    parser.add_argument("service", metavar="SERVICE", help=f"one of: {', '.join(SERVICES)}, {EDGE}")
    parser.add_argument("flags", nargs=argparse.REMAINDER, help="the service's own flags")
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    """Parse the service's own flags (the platform's, ``platform.config``; every one also an
    ``OKEY_<SERVICE>_*`` or ``OKEY_*`` variable) and serve until SIGTERM or SIGINT. Exit 0
    after a graceful stop, 1 if the service could not start, 2 for a bad flag or setting."""
    from okey101.platform.config import ConfigError, add_arguments, load_settings
    from okey101.platform.server import run_serving
    from okey101.services import serving

    name: str = args.service
    if name not in (*SERVICES, EDGE):
        raise CommandError(f"there is no service called '{name}': {', '.join(SERVICES)}, {EDGE}")
    if name != EDGE and name not in built_services():
        raise CommandError(f"the {name} service is not built yet")
    parser = argparse.ArgumentParser(
        prog=f"{PROG} serve {name}", description=SERVED_BY[name].description
    )
    add_arguments(parser)
    flags = parser.parse_args(args.flags)
    try:
        settings = load_settings(name, flags)
    except ConfigError as error:
        print(f"{name}: {error}", file=sys.stderr)
        return 2
    return run_serving(name, settings, serving(name))


def add_up(commands: Commands) -> None:
    parser = commands.add_parser(
        "up",
        help="start every service that exists on its default ports (SQLite under ./var/)",
        description="Start every built service as a process of its own on its default port "
        "(lobby 50051, table 50052, scoring 50053, rules 50054, bot 50055; metrics 9101-9105, "
        "the lobby's JWKS 9106), then the edge (HTTP 8080: Connect and gRPC-Web), or on "
        "thirteen consecutive ports from --base-port, wait until each reports SERVING, and print "
        "where each listens. Ctrl-C (or SIGTERM) stops them all gracefully.",
    )
    parser.add_argument("--var-dir", default="var", help="where local mode keeps its files")
    parser.add_argument(
        "--base-port",
        type=int,
        default=None,
        metavar="P",
        help="other ports than the defaults: gRPC P (lobby), P+1 (table), P+2 (scoring), P+3 "
        "(rules), P+4 (bot); metrics P+5 to P+9; the lobby's JWKS P+10; the edge P+11 (HTTP), "
        "its metrics P+12. Each service is told the others' addresses.",
    )
    parser.set_defaults(handler=_up)


def _up(args: argparse.Namespace) -> int:
    from okey101.stack import UpPorts, wait_http, wait_serving_sync

    try:
        ports = UpPorts.of(args.base_port)
    except ValueError as error:
        raise CommandError(str(error)) from None
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
            command += ["--var-dir", args.var_dir, *ports.flags(name)]
            children.append((name, subprocess.Popen(command, env=local_env)))
        for name, child in children:
            port, _metrics = ports.services[name]
            wait_serving_sync(f"127.0.0.1:{port}", timeout=60)
            if child.poll() is not None:  # another process answered on its port
                raise TimeoutError(f"{name} exited ({child.returncode}): is its port taken?")
        # The edge last, in front of them: Connect and gRPC-Web for browsers and curl.
        edge_port, edge_metrics = ports.edge
        command = [sys.executable, "-m", "okey101.cli", "serve", EDGE]
        command += ["--var-dir", args.var_dir, *ports.flags(EDGE)]
        edge = subprocess.Popen(command, env=local_env)
        children.append((EDGE, edge))
        wait_http(f"http://127.0.0.1:{edge_port}/readyz", timeout=60, process=edge)
        print("okey101 up: serving (gRPC or HTTP, metrics):")
        for name in names:
            port, metrics = ports.services[name]
            print(f"  {name:<8} 127.0.0.1:{port}   http://127.0.0.1:{metrics}/metrics")
        print(f"  {EDGE:<8} http://127.0.0.1:{edge_port}   http://127.0.0.1:{edge_metrics}/metrics")
        print("           (Connect and gRPC-Web, for browsers and curl: docs/edge.md)")
        # The edge serves the web client's built page at / when it is there (make web).
        web_dir = Path(
            os.environ.get("OKEY_EDGE_WEB_DIR") or os.environ.get("OKEY_WEB_DIR") or "web/dist"
        )
        if (web_dir / "index.html").is_file():
            print(f"Play in a browser: http://127.0.0.1:{edge_port}/  (docs/web.md)")
        else:
            print(f"  the web page is not built ({web_dir}): make web  (docs/web.md)")
        if "lobby" in names:
            print(f"  the lobby's JWKS: http://127.0.0.1:{ports.jwks}/.well-known/jwks.json")
        missing = [name for name in SERVICES if name not in names]
        if missing:
            print(f"  not built yet: {', '.join(missing)}")
        if "lobby" in names and "table" in names:
            play = ".venv/bin/okey101 play"
            if ports.moved:
                flag = {"rules": "--rules-service"}
                play += "".join(
                    f" {flag.get(name, '--' + name)} 127.0.0.1:{ports.services[name][0]}"
                    for name in ("lobby", "table", "scoring", "rules")
                )
            print(f"Play in another terminal: {play}  (okey101 play --help)")
        if "lobby" in names:
            print(
                "Try: curl -s -H 'Content-Type: application/json' -d "
                '\'{"requestId":"r1","deviceId":"my-device-1","displayName":"Ayla"}\' '
                f"http://127.0.0.1:{edge_port}/okey.v1.LobbyService/LoginGuest"
            )
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


def add_migrate(commands: Commands) -> None:
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
