"""``okey101 bench TARGET``: a group of benchmarks that print figures, one subcommand each
(``BENCH_TARGETS``). Each target's handler imports its ``okey101.bench`` module: nothing of the
benchmarks loads until one runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from okey101.cli.command import CommandError, Commands, Handler, positive_int, rule_override


def _add_databases_and_json(parser: argparse.ArgumentParser, *, several: bool) -> None:
    """``--sqlite``, ``--database-url`` and ``--json``, as every bench that starts services
    takes them (``several``: a database per service, else the one)."""
    made = ("SQLite files", "databases") if several else ("a SQLite file", "database")
    parser.add_argument("--sqlite", action="store_true", help=f"{made[0]}, not PostgreSQL")
    parser.add_argument(
        "--database-url",
        help=f"the PostgreSQL server to make the {made[1]} on (default: "
        "OKEY_TEST_DATABASE_URL, else postgresql://postgres@127.0.0.1:5432/test)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")


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
    parser.add_argument("--hands", type=positive_int, default=hands, help="how many hands")
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
    levels = ("random", "easy", "normal", "hard", "expert")
    parser = targets.add_parser(
        "bots",
        help="one bot level against another, in duplicate format",
        description="Each seeded deal is played with the candidate in each seat against three "
        "reference bots, plus a control of four references; the difference in penalty points "
        "per hand (negative is better) with a 95%% interval over deals.",
    )
    parser.add_argument("--deals", type=positive_int, default=200, help="how many deals")
    parser.add_argument("--candidate", choices=levels, default="hard")
    parser.add_argument("--reference", choices=levels, default="normal")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--rules", default="oyna", help="a preset (default: oyna)")
    parser.add_argument("--workers", type=positive_int, default=None, help="processes")
    parser.add_argument(
        "--expert-playouts",
        type=positive_int,
        default=None,
        help="expert: rollouts per decision (default: the bot service's)",
    )
    parser.add_argument(
        "--expert-seconds",
        type=float,
        default=None,
        help="expert: seconds per decision (default: the bot service's; 0: no time bound)",
    )
    parser.add_argument(
        "--rule",
        type=rule_override,
        action="append",
        default=[],
        metavar="KNOB=VALUE",
        help="play the preset with this rule knob changed (docs/rules.md; again for more), "
        "e.g. --rule may_take_okey_back=true: what another reading does to the bots",
    )
    parser.add_argument(
        "--journal",
        type=Path,
        metavar="PATH",
        help="append each finished deal to PATH, and play only the deals it does not hold yet "
        "(resuming a stopped run); refused, exit status 2, if it holds other deals",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    parser.set_defaults(handler=_bench_bots)


def _bench_bots(args: argparse.Namespace) -> int:
    from okey101.bench import bots_bench
    from okey101.engine.bots.expert import DEFAULT_BUDGET, ExpertBudget

    (preset,) = _presets(args.rules)
    seconds = DEFAULT_BUDGET.seconds if args.expert_seconds is None else args.expert_seconds
    budget = ExpertBudget(
        playouts=args.expert_playouts or DEFAULT_BUDGET.playouts,
        seconds=seconds if seconds else None,
    )
    return bots_bench.main(
        args.deals,
        args.candidate,
        args.reference,
        args.seed,
        args.json,
        preset=preset,
        workers=args.workers,
        budget=budget,
        journal=args.journal,
        rule_overrides=dict(args.rule),
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
        "ApplyAction (and the empty call) with CONCURRENCY calls in flight for SECONDS each, "
        "in alternating windows of at most half a second.",
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds per service")
    parser.add_argument("--concurrency", type=positive_int, default=8, help="calls in flight")
    parser.add_argument("--seed", type=int, default=0, help="seed of the dealt hand")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    parser.set_defaults(handler=_bench_rules)


def _bench_rules(args: argparse.Namespace) -> int:
    from okey101.bench import rules_bench

    return rules_bench.main(args.seconds, args.concurrency, args.seed, args.json)


def _add_bench_edge(targets: Commands) -> None:
    parser = targets.add_parser(
        "edge",
        help="a call through the edge (Connect over HTTP) against the same call over gRPC",
        description="Start the lobby, rules and the edge on free ports and make CALLS "
        "sequential ResolveRuleSet calls straight over gRPC, then through the edge as Connect "
        "binary and Connect JSON: latency and the edge's CPU time per call.",
    )
    parser.add_argument("--calls", type=positive_int, default=2000, help="calls each way")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    parser.set_defaults(handler=_bench_edge)


def _bench_edge(args: argparse.Namespace) -> int:
    from okey101.bench import edge_bench

    return edge_bench.main(args.calls, args.json)


def _add_bench_table(targets: Commands) -> None:
    parser = targets.add_parser(
        "table",
        help="bots playing many tables through the real table, rules, bot and scoring services",
        description="Start the rules, bot, scoring and table services on free ports with a "
        "temporary database and play TABLES tables at once as bots for SECONDS; Act latency.",
    )
    parser.add_argument("--tables", type=positive_int, default=20, help="tables at once")
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
        "PostgreSQL databases (or SQLite), log guests in, each with their own WatchPlayer "
        "stream, seat TABLES tables through the lobby (quick match and hosted) and play them "
        "for MINUTES, each seat following its WatchTable stream and deciding in this process; "
        "Act latency, processor time a move, hands lost between the tables and scoring, each "
        "service's peak memory. Exit status 1 on an error or a lost hand.",
    )
    parser.add_argument("--tables", type=positive_int, default=20, help="tables at once")
    parser.add_argument("--minutes", type=float, default=1.0, help="minutes measured")
    parser.add_argument(
        "--pace", type=float, default=0.0, help="moves a second per table (default: full speed)"
    )
    parser.add_argument(
        "--level",
        choices=("random", "easy", "normal", "hard"),
        default="easy",
        help="the engine's bot that chooses the players' moves in this process (default easy)",
    )
    parser.add_argument(
        "--client",
        choices=("native", "browser"),
        default="native",
        help="how each seat plays: one TableService.Play stream (native, the default), or "
        "WatchTable with changes and an Act call a move (the calls a browser makes)",
    )
    parser.add_argument(
        "--stake",
        type=int,
        default=0,
        help="chips each seat stakes (one of the lobby's stake levels; each player is granted "
        "100 stakes first); the run ends with the chips audit (chips_balanced)",
    )
    _add_databases_and_json(parser, several=True)
    parser.set_defaults(handler=_bench_load)


def _bench_load(args: argparse.Namespace) -> int:
    from okey101.bench import load_bench

    return load_bench.main(
        args.tables,
        args.minutes,
        args.pace,
        args.sqlite,
        args.database_url,
        args.json,
        level=args.level,
        client=args.client,
        stake=args.stake,
    )


def _add_bench_players(targets: Commands) -> None:
    parser = targets.add_parser(
        "players",
        help="many players' own WatchPlayer streams open on one lobby process",
        description="Start the lobby alone with a temporary PostgreSQL database (or SQLite), log "
        "PLAYERS guests in and open one WatchPlayer stream each; the lobby's memory a stream, "
        "its processor time idle, and the processor time and delay of EVENTS events recorded "
        "through RecordPlayerEvents and delivered to the streams. Exit status 1 if a stream "
        "failed or an event was lost or duplicated.",
    )
    parser.add_argument("--players", type=positive_int, default=10000, help="streams open")
    parser.add_argument("--events", type=positive_int, default=2000, help="events delivered")
    parser.add_argument(
        "--idle-seconds", type=float, default=10.0, help="seconds measured idle (default 10)"
    )
    parser.add_argument(
        "--streams-per-channel",
        type=positive_int,
        default=100,
        help="streams a connection carries (default 100; 1: a connection a player)",
    )
    _add_databases_and_json(parser, several=False)
    parser.set_defaults(handler=_bench_players)


def _bench_players(args: argparse.Namespace) -> int:
    from okey101.bench import players_bench

    return players_bench.main(
        args.players,
        args.events,
        args.idle_seconds,
        args.sqlite,
        args.database_url,
        args.json,
        per_channel=args.streams_per_channel,
    )


def _add_bench_tournament(targets: Commands) -> None:
    parser = targets.add_parser(
        "tournament",
        help="a hosted tournament of PLAYERS registered players, run to its winner",
        description="Start the five services as processes with temporary PostgreSQL databases "
        "(or SQLite), log PLAYERS guests in, register them for one tournament through the lobby "
        "and play every seat they are given from outside through the public API, round after "
        "round, until the tournament has its winner; then check every hand and match against "
        "scoring and every player against the standings. Exit status 1 unless it finished with "
        "no error and nothing lost.",
    )
    parser.add_argument("--players", type=positive_int, default=64, help="registered players")
    parser.add_argument("--hands", type=positive_int, default=1, help="hands a match")
    parser.add_argument(
        "--entry-fee",
        type=int,
        default=0,
        help="chips each player pays to register (prizes: 50/30/20%% of the pool to places "
        "1-3); the run ends with the chips audit (chips_balanced) and the pool left",
    )
    parser.add_argument(
        "--no-show-percent",
        type=float,
        default=0.0,
        help="the share of entrants who never act (their seats are not played); the run "
        "reports no_shows, forfeited_advanced (exit 1 unless 0) and longest_no_show_hold_s",
    )
    parser.add_argument(
        "--turn-seconds",
        type=int,
        default=0,
        help="the rule set's turn timer (0: the table service's default)",
    )
    parser.add_argument(
        "--unscheduled",
        action="store_true",
        help="create the tournament without a start time or check-in and start it with "
        "StartTournament once all have registered (by default it is scheduled: the lobby starts "
        "it by itself, every entrant having checked in; the run reports scheduled, checked_in, "
        "dropped and started_late_s)",
    )
    parser.add_argument(
        "--check-in-minutes",
        type=positive_int,
        default=1,
        help="a scheduled run's check-in window, in whole minutes before the start: at least "
        "this, widened when the guests' logins say the check-ins need longer",
    )
    parser.add_argument(
        "--start-in-seconds",
        type=float,
        default=None,
        help="how far ahead of its creation a scheduled run starts, more than the window "
        "(default: the window, three times as long as the guests took to log in for the "
        "registrations before it opens, and 5 s)",
    )
    _add_databases_and_json(parser, several=True)
    parser.set_defaults(handler=_bench_tournament)


def _bench_tournament(args: argparse.Namespace) -> int:
    from okey101.bench import tournament_bench

    schedule = None
    if not args.unscheduled:
        window = args.check_in_minutes * 60
        if args.start_in_seconds is not None and args.start_in_seconds <= window:
            raise SystemExit(
                f"--start-in-seconds must be more than the check-in window ({window} s)"
            )
        schedule = tournament_bench.Schedule(args.check_in_minutes, args.start_in_seconds)
    return tournament_bench.main(
        args.players,
        args.hands,
        args.sqlite,
        args.database_url,
        args.json,
        entry_fee=args.entry_fee,
        no_show_percent=args.no_show_percent,
        turn_seconds=args.turn_seconds,
        schedule=schedule,
    )


def _add_bench_core(targets: Commands) -> None:
    parser = targets.add_parser(
        "core",
        help="the table's move path alone, in this process, without gRPC",
        description="Create TABLES tables in a temporary database (PostgreSQL, or SQLite) and "
        "play them for SECONDS through the table core itself (plan, one journal write, publish), "
        "each move chosen by the engine's random bot; the table's processor time a move.",
    )
    parser.add_argument("--tables", type=positive_int, default=10, help="tables at once")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds played")
    _add_databases_and_json(parser, several=False)
    parser.set_defaults(handler=_bench_core)


def _bench_core(args: argparse.Namespace) -> int:
    from okey101.bench import core_bench

    return core_bench.main(args.tables, args.seconds, args.sqlite, args.database_url, args.json)


# Each adds one ``okey101 bench TARGET`` subcommand.
BENCH_TARGETS: tuple[Callable[[Commands], None], ...] = (
    _add_bench_solver,
    _add_bench_engine,
    _add_bench_rules,
    _add_bench_bots,
    _add_bench_table,
    _add_bench_core,
    _add_bench_tournament,
    _add_bench_load,
    _add_bench_players,
    _add_bench_edge,
)


def add_bench(commands: Commands) -> None:
    parser = commands.add_parser("bench", help="benchmarks that print figures")
    targets = parser.add_subparsers(dest="target", metavar="TARGET", required=True)
    for add in BENCH_TARGETS:
        add(targets)
