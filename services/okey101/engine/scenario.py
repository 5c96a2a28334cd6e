"""Rule scenarios (the format: docs/scenarios.md): a position, the moves played from it, and what
must follow.

This module is pure: it takes the file's parsed mapping (the command line reads the YAML) and
returns what happened. A malformed scenario (an unknown tile, a third copy, an unknown preset, a
missing key) raises ``ScenarioError`` with one line saying what is wrong; a move the rules forbid
is recorded as rejected with the engine's code and sentence, changes nothing, and the moves after
it are still played.

Readings of the format (documented here and in docs/scenarios.md):

- ``stock_count: N`` fills the stock with the first N tiles, by tile id (R1, R1, R2, R2, ... B13,
  K1, ... FJ, FJ), of those written nowhere in the file. Tile ids are stable, so a ``draw`` gives
  the same tile on every run.
- A seat missing from ``racks`` holds no tiles.
- ``penalties`` already charged count as +101s charged in this hand: ``expect.penalties`` and the
  printed penalties include them.
- A seat named in ``opened`` opened before the position (so finishing now is not "in one go").
  A seat's ``turns_played`` is the number of its discards (Boombala's indicator is shown on a
  seat's first turn: before it has discarded).
- In a move, a tile is written as its face; the runner picks a tile of that face from the mover's
  rack (a face the rack does not hold is the move's rejection ``TILE_NOT_IN_RACK``). A group may
  be a list of tiles or ``{tiles: [...], okey_as: [...]}``.
- ``expect`` compares what it names: seats it does not list are not checked.
- A rejected move in ``expect.moves`` may also name the sentence:
  ``{rejected: CODE, message: "..."}`` holds only if the engine's English sentence is exactly that.
- ``open_pairs`` with a group of three or more tiles is the engine's ``OPENING_MIXES_PAIRS`` (runs
  or sets in a pairs opening); a group of one tile is ``NOT_A_PAIR``.
- ``partners: true`` plays the hand in partners (Boombala's option; the rule set's ``partners``
  knob, as ``rule_overrides: {partners: true}`` also sets it): the result then has ``teams``,
  the hand's points of seats 0+2 (team "0") and 1+3 (team "1"), and ``expect.teams`` checks them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from okey101.engine.actions import (
    Action,
    Discard,
    Draw,
    End,
    GiveBack,
    Group,
    LayDown,
    LayOff,
    Open,
    OpenPairs,
    ShowIndicator,
    TakeDiscard,
    TakeOkey,
    action_name,
)
from okey101.engine.errors import InvalidInput, OkeyError, RuleViolation
from okey101.engine.hand import SEATS, HandState, Phase, TableMeld, apply, left_of
from okey101.engine.melds import make_group
from okey101.engine.rules import RuleSet
from okey101.engine.seat import OpenedAs, PenaltyReason, Seat
from okey101.engine.tiles import Okey, Tile, TileAllocator, face_name, parse_face

REQUIRED_KEYS = ("rules", "indicator", "turn", "phase", "racks")
MOVE_KEYS = (
    "draw",
    "take",
    "give_back",
    "open",
    "open_pairs",
    "meld",
    "lay_off",
    "take_okey",
    "show_indicator",
    "discard",
)


class ScenarioError(Exception):
    """The scenario file is malformed: one line says what is wrong."""


@dataclass(frozen=True, slots=True)
class MoveOutcome:
    seat: int
    move: str
    ok: bool
    code: str | None = None
    message: str | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"seat": self.seat, "move": self.move, "ok": self.ok}
        if not self.ok:
            out["code"] = self.code
            out["message"] = self.message
        return out


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """What happened when a scenario's moves were played."""

    state: HandState
    moves: tuple[MoveOutcome, ...]

    def penalties(self) -> dict[int, int]:
        if self.state.result is not None:
            return dict(enumerate(self.state.result.penalties))
        points = self.state.rules.penalty_points
        return {index: len(seat.penalties) * points for index, seat in enumerate(self.state.seats)}

    def hand(self) -> dict[str, object]:
        result = self.state.result
        if result is None:
            return {"ended": False}
        out: dict[str, object] = {"ended": True, "reason": result.reason.value}
        if result.winner is not None:
            out["winner"] = result.winner
        if result.finish is not None:
            out["multiplier"] = result.finish.multiplier
            out["with_okey"] = result.finish.with_okey
            out["after_pairs"] = result.finish.after_pairs
            out["one_go"] = result.finish.one_go
        return out

    def scores(self) -> dict[int, int]:
        result = self.state.result
        return {} if result is None else dict(enumerate(result.scores))

    def teams(self) -> dict[int, int]:
        """Partners' points this hand (team 0: seats 0+2, team 1: seats 1+3); empty until the
        hand has ended."""
        scores = self.scores()
        if not scores:
            return {}
        return {team: scores[team] + scores[team + 2] for team in (0, 1)}

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "moves": [move.to_json() for move in self.moves],
            "penalties": {str(seat): value for seat, value in self.penalties().items()},
            "hand": self.hand(),
            "scores": {str(seat): value for seat, value in self.scores().items()},
        }
        if self.state.rules.partners:
            out["teams"] = {str(team): value for team, value in self.teams().items()}
        return out


@dataclass(slots=True)
class Scenario:
    """A parsed scenario: the position and the moves (still as written)."""

    state: HandState
    moves: list[Mapping[str, Any]] = field(default_factory=list)
    expect: Mapping[str, Any] | None = None


def _fail(message: str) -> ScenarioError:
    return ScenarioError(message)


def _seat_key(key: object, where: str) -> int:
    if isinstance(key, bool) or not isinstance(key, int | str):
        raise _fail(f"{where}: '{key}' is not a seat (0-3)")
    try:
        seat = int(key)
    except ValueError:
        raise _fail(f"{where}: '{key}' is not a seat (0-3)") from None
    if not 0 <= seat < SEATS:
        raise _fail(f"{where}: '{key}' is not a seat (0-3)")
    return seat


def _seat_map(data: Mapping[str, Any], key: str) -> dict[int, Any]:
    raw = data.get(key) or {}
    if not isinstance(raw, Mapping):
        raise _fail(f"'{key}' must map seats (0-3) to values")
    return {_seat_key(seat, key): value for seat, value in raw.items()}


def _faces(value: object, where: str) -> list[int]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise _fail(f"{where}: expected a list of tiles, got {value!r}")
    try:
        return [parse_face(str(item)) for item in value]
    except InvalidInput as error:
        raise _fail(f"{where}: {error.message()}") from None


def parse_scenario(data: object) -> Scenario:
    """The position and moves of a scenario mapping, or ``ScenarioError``."""
    if not isinstance(data, Mapping):
        raise _fail("a scenario is a mapping of keys (rules, indicator, turn, phase, racks, ...)")
    missing = [key for key in REQUIRED_KEYS if key not in data]
    if missing:
        raise _fail(f"missing key: {', '.join(missing)}")
    try:
        rules = RuleSet.preset(str(data["rules"]))
        overrides = data.get("rule_overrides") or {}
        if not isinstance(overrides, Mapping):
            raise _fail("'rule_overrides' must map knob names to values")
        rules = rules.with_overrides(overrides)
    except InvalidInput as error:
        raise _fail(error.message()) from None
    if "partners" in data:
        if not isinstance(data["partners"], bool):
            raise _fail(f"partners: '{data['partners']}' is not true or false")
        rules = rules.with_overrides({"partners": data["partners"]})

    allocator = TileAllocator()
    try:
        indicator = allocator.take(parse_face(str(data["indicator"])))
        okey = Okey(indicator)
    except InvalidInput as error:
        raise _fail(f"indicator: {error.message()}") from None

    def take(faces: list[int], where: str) -> tuple[Tile, ...]:
        try:
            return allocator.take_all(faces)
        except InvalidInput as error:
            raise _fail(f"{where}: {error.message()}") from None

    turn = _seat_key(data["turn"], "turn")
    try:
        phase = Phase(str(data["phase"]))
    except ValueError:
        raise _fail(f"phase: '{data['phase']}' is not draw, play or first") from None
    if phase is Phase.ENDED:
        raise _fail("phase: 'ended' is not a phase a scenario starts in")
    dealer = _seat_key(data["dealer"], "dealer") if "dealer" in data else left_of(turn)

    racks = {
        seat: take(_faces(tiles, f"racks.{seat}"), f"racks.{seat}")
        for seat, tiles in _seat_map(data, "racks").items()
    }

    table: list[TableMeld] = []
    raw_table = data.get("table") or []
    if not isinstance(raw_table, Sequence) or isinstance(raw_table, str):
        raise _fail("'table' must be a list of melds")
    for index, entry in enumerate(raw_table):
        where = f"table[{index}]"
        if not isinstance(entry, Mapping) or "tiles" not in entry or "owner" not in entry:
            raise _fail(f"{where}: a meld needs 'owner' and 'tiles'")
        owner = _seat_key(entry["owner"], f"{where}.owner")
        tiles = take(_faces(entry["tiles"], where), where)
        okey_as = _faces(entry["okey_as"], f"{where}.okey_as") if "okey_as" in entry else None
        try:
            meld = make_group(tiles, okey, rules, okey_as=okey_as)
        except OkeyError as error:
            raise _fail(f"{where}: {error.message()}") from None
        table.append(TableMeld(meld, owner))

    opened: dict[int, OpenedAs] = {}
    for seat, kind in _seat_map(data, "opened").items():
        try:
            opened[seat] = OpenedAs(str(kind))
        except ValueError:
            raise _fail(f"opened.{seat}: '{kind}' is not runs or pairs") from None

    discards = {
        seat: take(_faces(tiles, f"discards.{seat}"), f"discards.{seat}")
        for seat, tiles in _seat_map(data, "discards").items()
    }

    if "stock" in data and "stock_count" in data:
        raise _fail("give 'stock' or 'stock_count', not both")
    if "stock" in data:
        stock = take(_faces(data["stock"], "stock"), "stock")
    else:
        count = data.get("stock_count", 0)
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise _fail(f"stock_count: '{count}' is not a number of tiles")
        remaining = allocator.remaining()
        if count > len(remaining):
            raise _fail(f"stock_count: only {len(remaining)} tiles are left for the stock")
        stock = remaining[:count]

    penalties: dict[int, tuple[PenaltyReason, ...]] = {}
    for seat, points in _seat_map(data, "penalties").items():
        if not isinstance(points, int) or points < 0 or points % rules.penalty_points:
            raise _fail(f"penalties.{seat}: '{points}' is not a multiple of {rules.penalty_points}")
        penalties[seat] = (PenaltyReason.CHARGED_BEFORE,) * (points // rules.penalty_points)

    seats = tuple(
        Seat(
            rack=racks.get(seat, ()),
            discards=discards.get(seat, ()),
            opened_as=opened.get(seat),
            penalties=penalties.get(seat, ()),
            turns_played=len(discards.get(seat, ())),
        )
        for seat in range(SEATS)
    )
    left_discards = seats[left_of(turn)].discards
    takeable = left_discards[-1] if phase is Phase.DRAW and left_discards else None
    state = HandState(
        rules=rules,
        okey=okey,
        dealer=dealer,
        turn=turn,
        phase=phase,
        seats=seats,
        table=tuple(table),
        stock=stock,
        takeable=takeable,
    )
    moves = data.get("moves") or []
    if not isinstance(moves, Sequence) or isinstance(moves, str):
        raise _fail("'moves' must be a list")
    for index, move in enumerate(moves):
        _check_move_shape(move, index)
    expect = data.get("expect")
    if expect is not None and not isinstance(expect, Mapping):
        raise _fail("'expect' must be a mapping")
    return Scenario(state, list(moves), expect)


def _check_move_shape(move: object, index: int) -> None:
    if not isinstance(move, Mapping) or "seat" not in move:
        raise _fail(f"moves[{index}]: a move needs 'seat' and one of {', '.join(MOVE_KEYS)}")
    _seat_key(move["seat"], f"moves[{index}].seat")
    kinds = [key for key in move if key != "seat"]
    if len(kinds) != 1 or kinds[0] not in MOVE_KEYS:
        raise _fail(f"moves[{index}]: expected one of {', '.join(MOVE_KEYS)}, got {kinds}")
    # Tiles must at least be tiles; whether the rack holds them is the rules' business.
    _move_faces(move[kinds[0]], kinds[0], index)


def _move_faces(value: object, kind: str, index: int) -> None:
    where = f"moves[{index}].{kind}"
    if kind in ("open", "open_pairs", "meld"):
        if not isinstance(value, Sequence) or isinstance(value, str):
            raise _fail(f"{where}: expected a list of groups")
        for group in value:
            if isinstance(group, Mapping):
                _faces(group.get("tiles"), where)
                if "okey_as" in group:
                    _faces(group["okey_as"], where)
            else:
                _faces(group, where)
    elif kind == "discard":
        _faces([value], where)
    elif kind == "lay_off":
        if not isinstance(value, Mapping) or "tile" not in value or "meld" not in value:
            raise _fail(f"{where}: needs 'tile' and 'meld'")
        _faces([value["tile"]], where)
        if value.get("end") not in (None, "low", "high"):
            raise _fail(f"{where}: end must be low or high")
    elif kind == "take_okey":
        if not isinstance(value, Mapping) or "meld" not in value or "with" not in value:
            raise _fail(f"{where}: needs 'meld' and 'with'")
        _faces(value["with"], where)


class _RackPicker:
    """Resolves written faces to physical tiles of the mover's rack, each once."""

    def __init__(self, rack: Sequence[Tile]) -> None:
        self.free = list(rack)

    def pick(self, name: object) -> Tile:
        face = parse_face(str(name))
        for index, tile in enumerate(self.free):
            if tile.face == face:
                return self.free.pop(index)
        raise RuleViolation("TILE_NOT_IN_RACK", tile=face_name(face))


def _group(picker: _RackPicker, raw: object) -> Group:
    if isinstance(raw, Mapping):
        tiles = tuple(picker.pick(name) for name in raw["tiles"])
        okey_as = tuple(parse_face(str(name)) for name in raw.get("okey_as") or ()) or None
        return Group(tiles, okey_as)
    assert isinstance(raw, Sequence)
    return Group(tuple(picker.pick(name) for name in raw))


def build_action(state: HandState, move: Mapping[str, Any]) -> Action:
    """The engine action a written move means, resolved against the mover's rack now."""
    seat = int(move["seat"])
    kind = next(key for key in move if key != "seat")
    value = move[kind]
    picker = _RackPicker(state.seats[seat].rack)
    if kind == "draw":
        return Draw()
    if kind == "take":
        return TakeDiscard()
    if kind == "give_back":
        return GiveBack()
    if kind == "show_indicator":
        return ShowIndicator()
    if kind == "discard":
        return Discard(picker.pick(value))
    if kind == "open":
        return Open(tuple(_group(picker, group) for group in value))
    if kind == "open_pairs":
        pairs = []
        for raw in value:
            group = _group(picker, raw)
            if len(group.tiles) > 2:
                raise RuleViolation("OPENING_MIXES_PAIRS")
            if len(group.tiles) != 2:
                raise RuleViolation("NOT_A_PAIR")
            pairs.append((group.tiles[0], group.tiles[1]))
        return OpenPairs(tuple(pairs))
    if kind == "meld":
        return LayDown(tuple(_group(picker, group) for group in value))
    if kind == "lay_off":
        end = End(value["end"]) if value.get("end") else None
        return LayOff(picker.pick(value["tile"]), _meld_index(value["meld"]), end)
    if kind == "take_okey":
        tiles = tuple(picker.pick(name) for name in value["with"])
        return TakeOkey(_meld_index(value["meld"]), tiles)
    raise AssertionError(kind)


def _meld_index(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput("UNKNOWN_MELD", meld=str(value))
    return value


def run_scenario(scenario: Scenario) -> ScenarioResult:
    """Play every move; a rejected move changes nothing and play goes on."""
    state = scenario.state
    outcomes: list[MoveOutcome] = []
    for move in scenario.moves:
        seat = int(move["seat"])
        kind = next(key for key in move if key != "seat")
        try:
            action = build_action(state, move)
            state, _events = apply(state, seat, action)
        except OkeyError as error:
            outcomes.append(MoveOutcome(seat, kind, False, error.code, error.message()))
            continue
        outcomes.append(MoveOutcome(seat, action_name(action), True))
    return ScenarioResult(state, tuple(outcomes))


def check_expectations(result: ScenarioResult, expect: Mapping[str, Any] | None) -> list[str]:
    """Every way ``result`` differs from ``expect`` (empty: it holds)."""
    if not expect:
        return []
    problems: list[str] = []
    if "moves" in expect:
        wanted = expect["moves"]
        if not isinstance(wanted, Sequence) or len(wanted) != len(result.moves):
            count = len(wanted) if isinstance(wanted, Sequence) else "?"
            problems.append(f"expect.moves lists {count} moves; the file plays {len(result.moves)}")
        else:
            for index, (want, got) in enumerate(zip(wanted, result.moves, strict=True)):
                problems.extend(_compare_move(index, want, got))
    if "penalties" in expect:
        actual = result.penalties()
        for seat, value in _expect_map(expect["penalties"], "penalties").items():
            if actual.get(seat, 0) != value:
                problems.append(f"penalties.{seat}: expected {value}, got {actual.get(seat, 0)}")
    if "hand" in expect:
        hand = result.hand()
        wanted_hand = expect["hand"]
        if not isinstance(wanted_hand, Mapping):
            raise _fail("expect.hand must be a mapping")
        for key, value in wanted_hand.items():
            if hand.get(str(key)) != value:
                problems.append(f"hand.{key}: expected {value!r}, got {hand.get(str(key))!r}")
    if "teams" in expect:
        problems.extend(_compare_teams(result, expect["teams"]))
    if "scores" in expect:
        scores = result.scores()
        if not scores:
            problems.append("scores: the hand has not ended")
        else:
            for seat, value in _expect_map(expect["scores"], "scores").items():
                if scores.get(seat) != value:
                    problems.append(f"scores.{seat}: expected {value}, got {scores.get(seat)}")
    return problems


def _compare_teams(result: ScenarioResult, raw: object) -> list[str]:
    if not isinstance(raw, Mapping):
        raise _fail("expect.teams must map teams (0: seats 0+2, 1: seats 1+3) to points")
    wanted: dict[int, Any] = {}
    for key, value in raw.items():
        if isinstance(key, bool) or str(key) not in ("0", "1"):
            raise _fail(f"expect.teams: '{key}' is not a team (0: seats 0+2, 1: seats 1+3)")
        wanted[int(key)] = value
    if not result.state.rules.partners:
        return ["teams: the hand is not played in partners (partners: true)"]
    teams = result.teams()
    if not teams:
        return ["teams: the hand has not ended"]
    return [
        f"teams.{team}: expected {value}, got {teams[team]}"
        for team, value in wanted.items()
        if teams[team] != value
    ]


def _expect_map(raw: object, key: str) -> dict[int, Any]:
    if not isinstance(raw, Mapping):
        raise _fail(f"expect.{key} must map seats to values")
    return {_seat_key(seat, f"expect.{key}"): value for seat, value in raw.items()}


def _compare_move(index: int, want: object, got: MoveOutcome) -> list[str]:
    label = f"moves[{index}] ({got.move} by seat {got.seat})"
    if want == "ok":
        return [] if got.ok else [f"{label}: expected ok, rejected {got.code}: {got.message}"]
    if want == "rejected":
        return [] if not got.ok else [f"{label}: expected rejected, was ok"]
    if isinstance(want, Mapping) and "rejected" in want:
        code = want["rejected"]
        if got.ok:
            return [f"{label}: expected rejected {code}, was ok"]
        if got.code != code:
            return [f"{label}: expected rejected {code}, got {got.code}: {got.message}"]
        message = want.get("message")
        if message is not None and got.message != message:
            return [f"{label}: expected the sentence {message!r}, got {got.message!r}"]
        return []
    raise _fail(f"expect.moves[{index}]: '{want}' is not ok, rejected or {{rejected: CODE}}")
