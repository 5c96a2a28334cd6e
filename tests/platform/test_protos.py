"""The public gRPC API (protos/okey/v1): generated code, services, comments, lint, engine parity.

The generated modules come from ``make gen`` (build/gen, on the venv's path through a .pth
file). The comment checks read the protos' own SourceCodeInfo, from a descriptor set that
protoc writes into a temporary folder here; ``buf lint`` runs as the Makefile runs it.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2
from grpc_tools import protoc

from okey101.engine import actions, hand, melds, result, rules, seat

ROOT = Path(__file__).resolve().parents[2]
PROTO_ROOT = ROOT / "protos"
PROTO_FILES = sorted(PROTO_ROOT.glob("okey/v1/*.proto"))
MODULES = ("common", "rules", "table", "lobby", "scoring", "bot")

# The services of docs/architecture.md and the calls each one has.
SERVICES: dict[str, set[str]] = {
    "RulesService": {
        "ResolveRuleSet",
        "ValidateMelds",
        "ValidateOpening",
        "BestOpening",
        "PlayableTiles",
        "DealHand",
        "ApplyAction",
        "ViewHand",
        "ViewHints",
        "ScoreHand",
    },
    "TableService": {
        "CreateTable",
        "GetTable",
        "ListTables",
        "Sit",
        "Leave",
        "Start",
        "Act",
        "GetSeatView",
        "GetHints",
        "WatchTable",
        "Play",
        "SetDealSeed",
        "GetHandRecord",
        "CloseTable",
    },
    "LobbyService": {
        "LoginGuest",
        "RegisterAccount",
        "LoginAccount",
        "RefreshTokens",
        "Logout",
        "GetJwks",
        "ListRevokedLogins",
        "GetPlayer",
        "BrowseTables",
        "HostTable",
        "JoinTable",
        "LeaveTable",
        "JoinQuickMatch",
        "LeaveQuickMatch",
        "GetQuickMatchStatus",
        "GrantOrganiser",
        "RevokeOrganiser",
        "CreateTournament",
        "RegisterForTournament",
        "StartTournament",
        "CancelTournament",
        "GetTournament",
        "ListTournaments",
        "GetTournamentStandings",
        "WatchPlayer",
        "RecordPlayerEvents",
        "RegisterPushDevice",
        "UnregisterPushDevice",
        "GetWallet",
        "ListWalletEntries",
        "ClaimDailyChips",
        "AdjustChips",
        "ListStakeLevels",
        "RecordTableChips",
        "UnregisterFromTournament",
        "CheckInToTournament",
        "StopTournamentSeries",
        "PauseTournament",
        "ResumeTournament",
        "DisqualifyFromTournament",
    },
    "ScoringService": {
        "RecordHand",
        "RecordMatch",
        "RecordTournamentRanking",
        "GetScoreSheet",
        "GetStandings",
        "GetLeaderboard",
        "GetPlayerStats",
        "GetPlayerHistory",
    },
    "BotService": {"NextStep"},
}

# Calls that change nothing (pure computations and reads): every other call has request_id.
NO_REQUEST_ID = {
    *(f"RulesService.{name}" for name in SERVICES["RulesService"]),
    "BotService.NextStep",
    "TableService.GetTable",
    "TableService.ListTables",
    "TableService.GetSeatView",
    "TableService.GetHints",
    "TableService.WatchTable",
    "TableService.GetHandRecord",
    "LobbyService.GetJwks",
    "LobbyService.ListRevokedLogins",
    "LobbyService.GetPlayer",
    "LobbyService.BrowseTables",
    "LobbyService.GetQuickMatchStatus",
    "LobbyService.GetTournament",
    "LobbyService.ListTournaments",
    "LobbyService.GetTournamentStandings",
    "LobbyService.WatchPlayer",
    "LobbyService.GetWallet",
    "LobbyService.ListWalletEntries",
    "LobbyService.ListStakeLevels",
    *(f"ScoringService.{name}" for name in SERVICES["ScoringService"] if name.startswith("Get")),
}

# Calls whose answers are lists that grow: paged per AIP-158.
PAGED = {
    "TableService.ListTables",
    "LobbyService.BrowseTables",
    "LobbyService.ListTournaments",
    "LobbyService.GetTournamentStandings",
    "LobbyService.ListWalletEntries",
    "ScoringService.GetScoreSheet",
    "ScoringService.GetStandings",
    "ScoringService.GetLeaderboard",
    "ScoringService.GetPlayerHistory",
}

# Field numbers in descriptor.proto, for SourceCodeInfo paths.
FILE_MESSAGE, FILE_ENUM, FILE_SERVICE = 4, 5, 6
MESSAGE_FIELD, MESSAGE_NESTED, MESSAGE_ENUM, MESSAGE_ONEOF = 2, 3, 4, 8
ENUM_VALUE = 2
SERVICE_METHOD = 2


@pytest.fixture(scope="module")
def descriptor_set(tmp_path_factory: pytest.TempPathFactory) -> descriptor_pb2.FileDescriptorSet:
    """The protos compiled with their comments (SourceCodeInfo), by grpc_tools' own protoc."""
    out = tmp_path_factory.mktemp("descriptors") / "okey.pb"
    well_known = resources.files("grpc_tools") / "_proto"
    status = protoc.main(
        [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"-I{PROTO_ROOT / 'third_party'}",
            f"-I{well_known}",
            "--include_source_info",
            f"--descriptor_set_out={out}",
            *(str(path.relative_to(PROTO_ROOT)) for path in PROTO_FILES),
        ]
    )
    assert status == 0, "protoc failed on protos/okey/v1"
    result = descriptor_pb2.FileDescriptorSet()
    result.ParseFromString(out.read_bytes())
    return result


def _files(fds: descriptor_pb2.FileDescriptorSet) -> list[descriptor_pb2.FileDescriptorProto]:
    return [file for file in fds.file if file.name.startswith("okey/v1/")]


def _messages(
    fds: descriptor_pb2.FileDescriptorSet,
) -> Iterator[tuple[str, descriptor_pb2.DescriptorProto]]:
    def walk(
        prefix: str, items: Sequence[descriptor_pb2.DescriptorProto]
    ) -> Iterator[tuple[str, descriptor_pb2.DescriptorProto]]:
        for message in items:
            name = f"{prefix}.{message.name}"
            yield name, message
            yield from walk(name, message.nested_type)

    for file in _files(fds):
        yield from walk(file.package, file.message_type)


def _message(fds: descriptor_pb2.FileDescriptorSet, name: str) -> descriptor_pb2.DescriptorProto:
    found = dict(_messages(fds))
    return found[f"okey.v1.{name}"]


def _enum(fds: descriptor_pb2.FileDescriptorSet, name: str) -> descriptor_pb2.EnumDescriptorProto:
    for file in _files(fds):
        for item in file.enum_type:
            if item.name == name:
                return item
    raise AssertionError(f"no enum okey.v1.{name}")


def _methods(
    fds: descriptor_pb2.FileDescriptorSet,
) -> Iterator[tuple[str, descriptor_pb2.MethodDescriptorProto]]:
    for file in _files(fds):
        for service in file.service:
            for method in service.method:
                yield f"{service.name}.{method.name}", method


# ------------------------------------------------------------------------------------------
# Generated code


@pytest.mark.parametrize("module", MODULES)
def test_generated_modules_import(module: str) -> None:
    messages = importlib.import_module(f"okey.v1.{module}_pb2")
    stubs = importlib.import_module(f"okey.v1.{module}_pb2_grpc")
    assert messages.DESCRIPTOR.package == "okey.v1"
    assert messages.DESCRIPTOR.name == f"okey/v1/{module}.proto"
    assert stubs is not None


def test_generated_code_is_not_in_the_tree() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "*_pb2.py", "*_pb2_grpc.py", "*_pb2.pyi"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert tracked == ""
    assert not list((ROOT / "protos").rglob("*.py"))


def test_messages_round_trip() -> None:
    from okey.v1 import common_pb2, rules_pb2

    request = rules_pb2.ApplyActionRequest(
        state=common_pb2.HandState(rules_version="okey101-rules/1"),
        seat=2,
        actions=[
            common_pb2.Action(
                open=common_pb2.OpenAction(
                    groups=[
                        common_pb2.TileGroup(
                            tile_ids=[18, 20, 22],
                            okey_as=[common_pb2.Face(colour=common_pb2.COLOUR_RED, number=11)],
                        )
                    ]
                )
            ),
            common_pb2.Action(discard=common_pb2.DiscardAction(tile_id=104)),
        ],
        locale="tr",
    )
    decoded = rules_pb2.ApplyActionRequest.FromString(request.SerializeToString())
    assert decoded == request
    assert [action.WhichOneof("move") for action in decoded.actions] == ["open", "discard"]


# ------------------------------------------------------------------------------------------
# Services and calls


def test_every_service_of_the_design_with_its_calls() -> None:
    from okey.v1 import bot_pb2, lobby_pb2, rules_pb2, scoring_pb2, table_pb2

    found: dict[str, set[str]] = {}
    for module in (rules_pb2, table_pb2, lobby_pb2, scoring_pb2, bot_pb2):
        for name, service in module.DESCRIPTOR.services_by_name.items():
            found[name] = set(service.methods_by_name)
    assert found == SERVICES


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def test_design_names_the_same_services() -> None:
    design = ARCHITECTURE.read_text(encoding="utf-8")
    match = re.search(r"protos/okey/v1/\s+the API: ([a-z, ]+)", design)
    assert match is not None, "docs/architecture.md no longer lists the API's files"
    names = [name.strip() for name in match.group(1).split(",")]
    assert names[0] == "common"
    assert {f"{name.capitalize()}Service" for name in names[1:]} == set(SERVICES)
    assert {path.stem for path in PROTO_FILES} == set(names)


def test_the_design_lists_every_call_of_each_service() -> None:
    # Each service's section (### name (`okey.v1.NameService`)) has a row for each of its calls.
    design = ARCHITECTURE.read_text(encoding="utf-8")
    for service, calls in SERVICES.items():
        heading = re.search(rf"^### [a-z]+ \(`okey\.v1\.{service}`\)$", design, re.MULTILINE)
        assert heading is not None, f"docs/architecture.md has no section for {service}"
        section = re.split(r"\n##", design[heading.end() :], maxsplit=1)[0]
        rows = set(re.findall(r"^\| `([A-Za-z]+)` \|", section, re.MULTILINE))
        assert rows == calls, service


def test_every_call_has_its_own_request_and_response(
    descriptor_set: descriptor_pb2.FileDescriptorSet,
) -> None:
    for full_name, method in _methods(descriptor_set):
        name = full_name.split(".")[1]
        assert method.input_type == f".okey.v1.{name}Request", full_name
        assert method.output_type == f".okey.v1.{name}Response", full_name


#: A client stream's requests are items: the conventions hold for the item that carries them
#: (Play: its `open` is a WatchTableRequest, with the locale; each `act` an ActRequest, with its
#: request_id).
CARRIED_BY_ITEMS = {"TableService.Play": {"locale": "open", "request_id": "act"}}


def _request_fields(
    descriptor_set: descriptor_pb2.FileDescriptorSet, full_name: str, input_type: str, name: str
) -> list[descriptor_pb2.FieldDescriptorProto]:
    """The request's fields of ``name``, or its item's that carries it (``CARRIED_BY_ITEMS``)."""
    request = _message(descriptor_set, input_type[9:])
    item = CARRIED_BY_ITEMS.get(full_name, {}).get(name)
    if item is not None:
        (field,) = [field for field in request.field if field.name == item]
        request = _message(descriptor_set, field.type_name[9:])
    return [field for field in request.field if field.name == name]


def test_state_changing_calls_carry_a_request_id(
    descriptor_set: descriptor_pb2.FileDescriptorSet,
) -> None:
    missing = []
    for full_name, method in _methods(descriptor_set):
        fields = _request_fields(descriptor_set, full_name, method.input_type, "request_id")
        if full_name not in NO_REQUEST_ID and not fields:
            missing.append(full_name)
    assert missing == []


def test_every_request_has_a_locale(descriptor_set: descriptor_pb2.FileDescriptorSet) -> None:
    string = descriptor_pb2.FieldDescriptorProto.TYPE_STRING
    for full_name, method in _methods(descriptor_set):
        locale = _request_fields(descriptor_set, full_name, method.input_type, "locale")
        assert len(locale) == 1 and locale[0].type == string, full_name


def test_growing_lists_are_paged(descriptor_set: descriptor_pb2.FileDescriptorSet) -> None:
    types = descriptor_pb2.FieldDescriptorProto
    methods = dict(_methods(descriptor_set))
    for full_name in PAGED:
        method = methods[full_name]
        request = {f.name: f.type for f in _message(descriptor_set, method.input_type[9:]).field}
        response = {f.name: f.type for f in _message(descriptor_set, method.output_type[9:]).field}
        assert request.get("page_size") == types.TYPE_INT32, full_name
        assert request.get("page_token") == types.TYPE_STRING, full_name
        assert response.get("next_page_token") == types.TYPE_STRING, full_name


def test_only_the_watch_calls_stream_and_play_both_ways(
    descriptor_set: descriptor_pb2.FileDescriptorSet,
) -> None:
    streaming = {
        name
        for name, method in _methods(descriptor_set)
        if method.client_streaming or method.server_streaming
    }
    assert streaming == {"TableService.WatchTable", "LobbyService.WatchPlayer", "TableService.Play"}
    methods = dict(_methods(descriptor_set))
    for name in streaming - {"TableService.Play"}:
        assert methods[name].server_streaming and not methods[name].client_streaming
    play = methods["TableService.Play"]
    assert play.server_streaming and play.client_streaming


# ------------------------------------------------------------------------------------------
# Comments and enums


class _CommentCheck:
    """Walks one file's descriptors and lists the elements whose leading comment is empty."""

    def __init__(self, file: descriptor_pb2.FileDescriptorProto) -> None:
        self.file = file
        self.comments = {
            tuple(location.path): location.leading_comments.strip()
            for location in file.source_code_info.location
        }
        self.missing: list[str] = []

    def run(self) -> list[str]:
        for index, message in enumerate(self.file.message_type):
            self.message((FILE_MESSAGE, index), message, message.name)
        for index, item in enumerate(self.file.enum_type):
            self.enum((FILE_ENUM, index), item, item.name)
        for index, service in enumerate(self.file.service):
            self.check((FILE_SERVICE, index), f"service {service.name}")
            for number, method in enumerate(service.method):
                path = (FILE_SERVICE, index, SERVICE_METHOD, number)
                self.check(path, f"rpc {service.name}.{method.name}")
        return self.missing

    def check(self, path: tuple[int, ...], what: str) -> None:
        if not self.comments.get(path):
            self.missing.append(f"{self.file.name}: {what}")

    def enum(
        self, path: tuple[int, ...], item: descriptor_pb2.EnumDescriptorProto, name: str
    ) -> None:
        self.check(path, f"enum {name}")
        for index, value in enumerate(item.value):
            self.check((*path, ENUM_VALUE, index), f"enum value {name}.{value.name}")

    def message(
        self, path: tuple[int, ...], message: descriptor_pb2.DescriptorProto, name: str
    ) -> None:
        if message.options.map_entry:
            return  # synthesised for a map field, which carries the comment
        self.check(path, f"message {name}")
        for index, field in enumerate(message.field):
            self.check((*path, MESSAGE_FIELD, index), f"field {name}.{field.name}")
        for index, oneof in enumerate(message.oneof_decl):
            # proto3 `optional` makes a synthetic oneof per field: nothing to document there.
            synthetic = any(
                field.proto3_optional and field.oneof_index == index for field in message.field
            )
            if not synthetic:
                self.check((*path, MESSAGE_ONEOF, index), f"oneof {name}.{oneof.name}")
        for index, nested in enumerate(message.nested_type):
            self.message((*path, MESSAGE_NESTED, index), nested, f"{name}.{nested.name}")
        for index, item in enumerate(message.enum_type):
            self.enum((*path, MESSAGE_ENUM, index), item, f"{name}.{item.name}")


def _undocumented(fds: descriptor_pb2.FileDescriptorSet) -> list[str]:
    """Every message, field, oneof, enum, enum value, service and rpc without a leading comment."""
    missing: list[str] = []
    for file in _files(fds):
        missing.extend(_CommentCheck(file).run())
    return missing


def test_every_element_has_a_leading_comment(
    descriptor_set: descriptor_pb2.FileDescriptorSet,
) -> None:
    assert len(_files(descriptor_set)) == len(MODULES)
    assert _undocumented(descriptor_set) == []


def test_the_comment_check_sees_a_missing_comment(tmp_path: Path) -> None:
    folder = tmp_path / "okey" / "v1"
    folder.mkdir(parents=True)
    (folder / "bare.proto").write_text(
        'syntax = "proto3";\npackage okey.v1;\n// Has one.\nmessage Bare {\n  int32 x = 1;\n}\n',
        encoding="utf-8",
    )
    out = tmp_path / "bare.pb"
    args = ["protoc", f"-I{tmp_path}", "--include_source_info", f"--descriptor_set_out={out}"]
    assert protoc.main([*args, "okey/v1/bare.proto"]) == 0
    fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    assert _undocumented(fds) == ["okey/v1/bare.proto: field Bare.x"]


def test_every_enum_starts_with_unspecified_zero(
    descriptor_set: descriptor_pb2.FileDescriptorSet,
) -> None:
    enums: list[descriptor_pb2.EnumDescriptorProto] = []
    for file in _files(descriptor_set):
        enums.extend(file.enum_type)
    for _, message in _messages(descriptor_set):
        enums.extend(message.enum_type)
    assert enums
    for item in enums:
        first = item.value[0]
        assert first.name.endswith("_UNSPECIFIED") and first.number == 0, item.name


def test_buf_lint_passes() -> None:
    buf = Path(sys.executable).parent / "buf"
    assert buf.exists(), "buf is installed by the buf-bin test dependency"
    result = subprocess.run(
        [str(buf), "lint"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


# ------------------------------------------------------------------------------------------
# The API follows the engine


def _enum_names(fds: descriptor_pb2.FileDescriptorSet, name: str) -> set[str]:
    return {value.name for value in _enum(fds, name).value}


def _prefix(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


def test_rule_set_has_every_knob_of_the_engine(
    descriptor_set: descriptor_pb2.FileDescriptorSet,
) -> None:
    knobs = {field.name for field in dataclasses.fields(rules.RuleSet)} - {"name"}
    fields = {field.name for field in _message(descriptor_set, "RuleSet").field}
    assert fields == knobs | {"preset", "custom"}
    presets = _enum_names(descriptor_set, "RulePreset")
    assert {f"RULE_PRESET_{name.upper()}" for name in rules.PRESETS} < presets


@pytest.mark.parametrize(
    ("engine_enum", "proto_enum"),
    [
        (rules.LeftDiscardPolicy, "LeftDiscardPolicy"),
        (rules.StockOutPolicy, "StockOutPolicy"),
        (rules.OneGoFinish, "OneGoFinish"),
        (rules.OkeyInLosersHand, "OkeyInLosersHand"),
        (rules.MatchEnd, "MatchEnd"),
        (melds.MeldKind, "MeldKind"),
        (actions.End, "RunEnd"),
        (seat.OpenedAs, "OpeningKind"),
        (hand.Phase, "Phase"),
        (result.EndReason, "HandEndReason"),
        (seat.PenaltyReason, "PenaltyReason"),
    ],
)
def test_enums_cover_the_engine(
    descriptor_set: descriptor_pb2.FileDescriptorSet,
    engine_enum: type[enum.Enum],
    proto_enum: str,
) -> None:
    values = _enum_names(descriptor_set, proto_enum)
    prefix = _prefix(proto_enum)
    for member in engine_enum:
        assert f"{prefix}_{member.name}" in values, (proto_enum, member.name)


def test_action_has_every_move_of_the_engine(
    descriptor_set: descriptor_pb2.FileDescriptorSet,
) -> None:
    action = _message(descriptor_set, "Action")
    assert [oneof.name for oneof in action.oneof_decl] == ["move"]
    moves = {field.name for field in action.field}
    engine_moves = set(actions._NAMES.values())
    assert moves == engine_moves
    assert all(field.oneof_index == 0 for field in action.field)


def test_event_kinds_cover_the_engine(descriptor_set: descriptor_pb2.FileDescriptorSet) -> None:
    kinds = {kind.value for kind in hand.EventKind}
    assert len(kinds) > 10
    values = _enum_names(descriptor_set, "EventKind")
    assert {f"EVENT_KIND_{kind.upper()}" for kind in kinds} <= values


def test_tile_ids_match_the_engine() -> None:
    from okey.v1 import common_pb2

    from okey101.engine.tiles import ALL_TILES, Colour

    # COLOUR_* are the engine's colour index + 1 (0 is unspecified, a false joker's).
    for colour in Colour:
        assert common_pb2.Colour.Value(f"COLOUR_{colour.name}") == int(colour) + 1
    assert len(ALL_TILES) == 106
    assert [tile.id for tile in ALL_TILES if tile.is_false_joker] == [104, 105]


def test_buf_breaking_guards_the_stable_api(tmp_path: Path) -> None:
    """make lint checks the API against its api-v1 commit (protos/api-v1.ref): the protos as
    they are pass, and deleting a field is caught."""
    import shutil
    import subprocess

    root = Path(__file__).resolve().parents[2]
    buf = shutil.which("buf") or str(Path(sys.executable).parent / "buf")
    ref = (root / "protos" / "api-v1.ref").read_text().strip()
    base = tmp_path / "api-v1.binpb"
    built = subprocess.run(
        [buf, "build", f".git#ref={ref}", "-o", str(base)],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if built.returncode != 0 and "not a git repository" in built.stderr:
        pytest.skip("not a git clone: the api-v1 commit cannot be read")
    assert built.returncode == 0, built.stderr
    copy = tmp_path / "now"
    shutil.copytree(root / "protos", copy / "protos")
    shutil.copy(root / "buf.yaml", copy / "buf.yaml")

    def breaking() -> subprocess.CompletedProcess[str]:
        # As make lint does: our protos built into one image (the vendored google.rpc module
        # beside them is not ours), then compared.
        now = tmp_path / "now.binpb"
        subprocess.run(
            [buf, "build", "--path", "protos/okey", "-o", str(now)],
            cwd=copy, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return subprocess.run(
            [buf, "breaking", str(now), "--against", str(base)],
            cwd=copy, capture_output=True, text=True, check=False,
        )  # fmt: skip

    assert breaking().returncode == 0, breaking().stdout
    common = copy / "protos" / "okey" / "v1" / "common.proto"
    text = common.read_text()
    assert "  uint32 tournament_round = 16;\n" in text
    common.write_text(text.replace("  uint32 tournament_round = 16;\n", ""))
    result = breaking()
    assert result.returncode != 0
    assert "tournament_round" in result.stdout + result.stderr
