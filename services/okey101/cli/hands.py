"""Commands about hands, offline or read from the table service: ``best-opening`` (the
solver on one hand), ``scenario run`` and ``scenario check`` (rule scenarios,
docs/scenarios.md), ``verify-deal`` (a deck recomputed from its fairness inputs) and
``export-hand`` (an ended hand's record written as a scenario).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from okey101.cli.command import USAGE_ERROR, CommandError, Commands, positive_int

# --------------------------------------------------------------------------------------------
# best-opening


def add_best_opening(commands: Commands) -> None:
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
# scenario: run and check rule scenarios (docs/scenarios.md)


def add_scenario(commands: Commands) -> None:
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
    if result.teams() and result.state.rules.partners:
        print("teams:", json.dumps(result.teams()))
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
# export-hand


def add_export_hand(commands: Commands) -> None:
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


def add_verify_deal(commands: Commands) -> None:
    parser = commands.add_parser(
        "verify-deal",
        help="recompute a hand's deck from its fairness inputs (docs/fair-deals.md)",
        description="Recompute the deck order of a hand from its table id, hand number, revealed "
        "server seed and player seeds, and check it against the published commitment and, given "
        "--deck, the deck the hand was dealt from. Prints JSON; exit 1 if a check fails.",
    )
    parser.add_argument("--table-id", required=True)
    parser.add_argument("--hand-number", required=True, type=positive_int)
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
