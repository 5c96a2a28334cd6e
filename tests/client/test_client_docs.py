"""docs/api.md is generated from the protos (``make docs``) and must match them; every RPC,
message and enum of okey.v1 is in it with its comment."""

from __future__ import annotations

from pathlib import Path

from google.protobuf import descriptor_pb2

from okey101 import apidocs

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "api.md"


def test_the_committed_reference_is_what_the_protos_generate() -> None:
    generated = apidocs.render(apidocs.descriptor_set())
    assert REFERENCE.read_text(encoding="utf-8") == generated, (
        "docs/api.md is out of date with protos/okey/v1: run `make docs` and commit it"
    )


def test_every_rpc_message_and_enum_is_documented_with_its_comment() -> None:
    files = apidocs.descriptor_set()
    text = apidocs.render(files)
    ours = [file for file in files.file if file.package == "okey.v1"]
    assert {Path(file.name).stem for file in ours} >= {"common", "lobby", "table", "rules"}
    for file in ours:
        for service in file.service:
            assert f"## {service.name}\n" in text
            for method in service.method:
                assert f"### {service.name}.{method.name}\n" in text
        for message in file.message_type:
            assert f"### {message.name}\n" in text
        for enum in file.enum_type:
            assert f"### {enum.name}\n\n*enum*" in text
    # A comment reaches its element: a field's, an enum value's, an RPC's auth line.
    assert "| `as_of_sequence` = 4 | `uint64` | The sequence number of the last event" in text
    assert "| `COLOUR_RED` | 1 | Red, written R" in text
    assert "### TableService.Act\n\n`rpc Act(ActRequest) returns (ActResponse)`" in text
    assert (
        "### TableService.WatchTable\n\n`rpc WatchTable(WatchTableRequest) returns (stream" in text
    )
    # The conventions header comes through verbatim, its table of codes intact.
    assert "  ABORTED              a move computed from a state that has since changed" in text


def test_the_check_mode_says_when_the_file_is_stale(tmp_path: Path) -> None:
    stale = tmp_path / "api.md"
    stale.write_text("# old\n", encoding="utf-8")
    assert apidocs.main(["--check", str(stale)]) == 1
    assert apidocs.main(["--out", str(stale)]) == 0
    assert apidocs.main(["--check", str(stale)]) == 0


def test_a_field_without_a_comment_would_show_as_empty_not_disappear() -> None:
    # The generator documents what protoc reports, so an uncommented element (which buf lint
    # refuses) would still be listed: build a file with one and render it.
    file = descriptor_pb2.FileDescriptorProto(name="okey/v1/extra.proto", package="okey.v1")
    message = file.message_type.add(name="Extra")
    message.field.add(
        name="bare",
        number=1,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
    )
    text = apidocs.render(descriptor_pb2.FileDescriptorSet(file=[file]))
    assert "### Extra" in text and "| `bare` = 1 | `string` |  |" in text
