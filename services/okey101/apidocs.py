"""docs/api.md, the API reference, generated from the protos' own comments.

    python -m okey101.apidocs --out docs/api.md      (what ``make docs`` runs)
    python -m okey101.apidocs --check docs/api.md    (exit 1 if the file is out of date)

protoc (grpcio-tools' bundled compiler, the one ``make gen`` uses) compiles ``protos/okey/v1``
into a descriptor set with source information; every service, RPC, message, field, enum and
value is written out in declaration order with the comment above it (buf lint requires one on
every element, so nothing is left undescribed). The conventions in common.proto's header come
first, verbatim. The output depends on the protos alone, so a test regenerates it and compares
it with the committed file.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Final

from google.protobuf import descriptor_pb2

PROTO_ROOT: Final = Path(__file__).resolve().parents[2] / "protos"
PACKAGE_DIR: Final = "okey/v1"
#: Services in the order a frontend meets them; then anything else, by name.
SERVICE_ORDER: Final = (
    "LobbyService",
    "TableService",
    "RulesService",
    "ScoringService",
    "BotService",
)
#: Files in the order their messages are listed.
FILE_ORDER: Final = ("common", "lobby", "table", "rules", "scoring", "bot")

# Field numbers of descriptor.proto, as SourceCodeInfo paths use them.
_FILE_MESSAGE, _FILE_ENUM, _FILE_SERVICE, _FILE_SYNTAX = 4, 5, 6, 12
_MESSAGE_FIELD, _MESSAGE_NESTED, _MESSAGE_ENUM = 2, 3, 4
_ENUM_VALUE = 2
_SERVICE_METHOD = 2

_SCALARS: Final = {
    descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE: "double",
    descriptor_pb2.FieldDescriptorProto.TYPE_FLOAT: "float",
    descriptor_pb2.FieldDescriptorProto.TYPE_INT64: "int64",
    descriptor_pb2.FieldDescriptorProto.TYPE_UINT64: "uint64",
    descriptor_pb2.FieldDescriptorProto.TYPE_INT32: "int32",
    descriptor_pb2.FieldDescriptorProto.TYPE_FIXED64: "fixed64",
    descriptor_pb2.FieldDescriptorProto.TYPE_FIXED32: "fixed32",
    descriptor_pb2.FieldDescriptorProto.TYPE_BOOL: "bool",
    descriptor_pb2.FieldDescriptorProto.TYPE_STRING: "string",
    descriptor_pb2.FieldDescriptorProto.TYPE_BYTES: "bytes",
    descriptor_pb2.FieldDescriptorProto.TYPE_UINT32: "uint32",
    descriptor_pb2.FieldDescriptorProto.TYPE_SFIXED32: "sfixed32",
    descriptor_pb2.FieldDescriptorProto.TYPE_SFIXED64: "sfixed64",
    descriptor_pb2.FieldDescriptorProto.TYPE_SINT32: "sint32",
    descriptor_pb2.FieldDescriptorProto.TYPE_SINT64: "sint64",
}


def descriptor_set(proto_root: Path = PROTO_ROOT) -> descriptor_pb2.FileDescriptorSet:
    """The package's files compiled by protoc, with their comments (source info)."""
    from grpc_tools import protoc  # type: ignore[import-untyped]

    files = sorted(
        str(path.relative_to(proto_root)) for path in (proto_root / PACKAGE_DIR).glob("*.proto")
    )
    if not files:
        raise FileNotFoundError(f"no .proto files under {proto_root / PACKAGE_DIR}")
    bundled = resources.files("grpc_tools") / "_proto"
    with tempfile.TemporaryDirectory(prefix="okey101-apidocs-") as scratch:
        out = Path(scratch) / "api.binpb"
        status = protoc.main(
            [
                "protoc",
                f"-I{proto_root}",
                f"-I{proto_root / 'third_party'}",
                f"-I{bundled}",
                "--include_source_info",
                f"--descriptor_set_out={out}",
                *files,
            ]
        )
        if status != 0:
            raise RuntimeError(f"protoc failed (exit {status})")
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


class _Comments:
    """The comment above each element of one file, by its SourceCodeInfo path."""

    def __init__(self, file: descriptor_pb2.FileDescriptorProto) -> None:
        self.leading: dict[tuple[int, ...], str] = {}
        self.detached: dict[tuple[int, ...], list[str]] = {}
        for location in file.source_code_info.location:
            path = tuple(location.path)
            if location.leading_comments:
                self.leading[path] = location.leading_comments
            if location.leading_detached_comments:
                self.detached[path] = list(location.leading_detached_comments)

    def of(self, *path: int) -> str:
        return _dedent(self.leading.get(tuple(path), ""))

    def header(self) -> str:
        """The file's opening comment (above ``syntax``)."""
        parts = [*self.detached.get((_FILE_SYNTAX,), []), self.leading.get((_FILE_SYNTAX,), "")]
        return "\n".join(_dedent(part) for part in parts if part.strip())


def _dedent(comment: str) -> str:
    """protoc keeps the space after ``//``: drop one leading space from every line."""
    lines = [line[1:] if line.startswith(" ") else line for line in comment.splitlines()]
    return "\n".join(lines).strip("\n")


def _anchor(name: str) -> str:
    """GitHub's anchor of a heading that is a bare identifier."""
    return name.lower()


def _type_name(field: descriptor_pb2.FieldDescriptorProto, local: set[str]) -> str:
    if field.type in _SCALARS:
        return f"`{_SCALARS[field.type]}`"
    name = field.type_name.lstrip(".")
    short = name.rsplit(".", 1)[-1]
    if name.startswith("okey.v1.") and short in local:
        return f"[`{short}`](#{_anchor(short)})"
    return f"`{name}`"


def _prose(comment: str) -> list[str]:
    """A comment as Markdown: paragraphs of wrapped lines joined; a paragraph with indented
    lines (a table in text) kept as it is, in a text block."""
    out: list[str] = []
    for paragraph in comment.split("\n\n"):
        lines = paragraph.splitlines()
        if not lines:
            continue
        if any(line.startswith("  ") for line in lines):
            out.extend(["```text", *lines, "```", ""])
            continue
        # An RPC's "Auth: ..." line (common.proto, AUTHENTICATION) stands out on its own.
        auth = next((i for i, line in enumerate(lines) if line.startswith("Auth:")), None)
        body, tail = (lines, []) if auth is None else (lines[:auth], lines[auth:])
        if body:
            out.extend([" ".join(line.strip() for line in body), ""])
        if tail:
            text = " ".join(line.strip() for line in tail).removeprefix("Auth:").strip()
            out.extend([f"**Auth:** {text}", ""])
    return out


def _cell(comment: str) -> str:
    """A comment inside a table cell: one line, pipes escaped."""
    return " ".join(line.strip() for line in comment.splitlines() if line.strip()).replace(
        "|", "\\|"
    )


def _ordered_files(
    files: Iterable[descriptor_pb2.FileDescriptorProto],
) -> list[descriptor_pb2.FileDescriptorProto]:
    ours = [file for file in files if file.package == "okey.v1"]

    def key(file: descriptor_pb2.FileDescriptorProto) -> tuple[int, str]:
        stem = Path(file.name).stem
        return (FILE_ORDER.index(stem) if stem in FILE_ORDER else len(FILE_ORDER), file.name)

    return sorted(ours, key=key)


def render(files: descriptor_pb2.FileDescriptorSet) -> str:
    """The reference as Markdown."""
    ordered = _ordered_files(files.file)
    local: set[str] = set()
    for file in ordered:
        local.update(message.name for message in file.message_type)
        local.update(enum.name for enum in file.enum_type)
        for message in file.message_type:
            local.update(_nested_names(message))

    lines = [
        "# okey.v1 API reference",
        "",
        "Generated from the comments in `protos/okey/v1/*.proto` by `make docs`"
        " (`python -m okey101.apidocs`); do not edit it by hand: change the protos and"
        " regenerate. A test fails when this file and the protos disagree. How to build a"
        " client on it, step by step: [integration.md](integration.md).",
        "",
        "## Contents",
        "",
        "- [Conventions](#conventions): authentication, errors, language, idempotency,"
        " pagination, seats, tiles, sequence numbers",
    ]
    services = [
        (file, index, service) for file in ordered for index, service in enumerate(file.service)
    ]
    services.sort(
        key=lambda item: (
            SERVICE_ORDER.index(item[2].name) if item[2].name in SERVICE_ORDER else 99,
            item[2].name,
        )
    )
    for _file, _index, service in services:
        lines.append(f"- [{service.name}](#{_anchor(service.name)})")
    for file in ordered:
        stem = Path(file.name).stem
        lines.append(f"- [Messages and enums of {stem}.proto](#messages-and-enums-of-{stem}proto)")
    lines.append("")

    for file in ordered:
        if Path(file.name).stem == "common":
            lines.extend(["## Conventions", "", f"From `{file.name}`:", ""])
            header = _Comments(file).header()
            lines.extend(["```text", *header.splitlines(), "```", ""])

    for file, index, service in services:
        comments = _Comments(file)
        lines.extend([f"## {service.name}", "", f"`okey.v1.{service.name}`, in `{file.name}`.", ""])
        lines.extend(_prose(comments.of(_FILE_SERVICE, index)))
        lines.extend(["| RPC | request | response |", "| --- | --- | --- |"])
        for method in service.method:
            request = method.input_type.rsplit(".", 1)[-1]
            response = method.output_type.rsplit(".", 1)[-1]
            stream = "stream " if method.server_streaming else ""
            lines.append(
                f"| [{method.name}](#{_anchor(service.name + '-' + method.name)}) "
                f"| [`{request}`](#{_anchor(request)}) "
                f"| {stream}[`{response}`](#{_anchor(response)}) |"
            )
        lines.append("")
        for method_index, method in enumerate(service.method):
            request = method.input_type.rsplit(".", 1)[-1]
            response = method.output_type.rsplit(".", 1)[-1]
            stream = "stream " if method.server_streaming else ""
            lines.extend(
                [
                    f'<a id="{_anchor(service.name + "-" + method.name)}"></a>',
                    f"### {service.name}.{method.name}",
                    "",
                    f"`rpc {method.name}({request}) returns ({stream}{response})`",
                    "",
                ]
            )
            lines.extend(_prose(comments.of(_FILE_SERVICE, index, _SERVICE_METHOD, method_index)))

    for file in ordered:
        comments = _Comments(file)
        stem = Path(file.name).stem
        lines.extend([f"## Messages and enums of {stem}.proto", ""])
        for index, enum in enumerate(file.enum_type):
            lines.extend(_enum(enum, comments, (_FILE_ENUM, index), enum.name))
        for index, message in enumerate(file.message_type):
            lines.extend(_message(message, comments, (_FILE_MESSAGE, index), message.name, local))
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def _nested_names(message: descriptor_pb2.DescriptorProto) -> set[str]:
    names: set[str] = set()
    for nested in message.nested_type:
        if not nested.options.map_entry:
            names.add(nested.name)
            names.update(_nested_names(nested))
    names.update(enum.name for enum in message.enum_type)
    return names


def _enum(
    enum: descriptor_pb2.EnumDescriptorProto,
    comments: _Comments,
    path: tuple[int, ...],
    name: str,
) -> list[str]:
    lines = [f"### {name}", "", "*enum*", ""]
    lines.extend(_prose(comments.of(*path)))
    lines.extend(["| value | number | meaning |", "| --- | --- | --- |"])
    for index, value in enumerate(enum.value):
        meaning = _cell(comments.of(*path, _ENUM_VALUE, index))
        lines.append(f"| `{value.name}` | {value.number} | {meaning} |")
    lines.append("")
    return lines


def _message(
    message: descriptor_pb2.DescriptorProto,
    comments: _Comments,
    path: tuple[int, ...],
    name: str,
    local: set[str],
) -> list[str]:
    lines = [f"### {name}", ""]
    lines.extend(_prose(comments.of(*path)))
    maps = {nested.name: nested for nested in message.nested_type if nested.options.map_entry}
    if message.field:
        lines.extend(["| field | type | description |", "| --- | --- | --- |"])
        for index, field in enumerate(message.field):
            kind = _type_name(field, local)
            entry = maps.get(field.type_name.rsplit(".", 1)[-1])
            if entry is not None:
                key, value = entry.field[0], entry.field[1]
                kind = f"map of {_type_name(key, local)} to {_type_name(value, local)}"
            elif field.label == descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED:
                kind = f"repeated {kind}"
            notes = []
            if field.proto3_optional:
                notes.append("optional")
            elif field.HasField("oneof_index"):
                notes.append(f"oneof `{message.oneof_decl[field.oneof_index].name}`")
            prefix = f"({', '.join(notes)}) " if notes else ""
            description = _cell(comments.of(*path, _MESSAGE_FIELD, index))
            lines.append(f"| `{field.name}` = {field.number} | {kind} | {prefix}{description} |")
        lines.append("")
    else:
        lines.extend(["*No fields.*", ""])
    for index, nested in enumerate(message.nested_type):
        if nested.options.map_entry:
            continue
        lines.extend(
            _message(
                nested, comments, (*path, _MESSAGE_NESTED, index), f"{name}.{nested.name}", local
            )
        )
    for index, enum in enumerate(message.enum_type):
        lines.extend(_enum(enum, comments, (*path, _MESSAGE_ENUM, index), f"{name}.{enum.name}"))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m okey101.apidocs", description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", type=Path, help="write the reference here")
    group.add_argument("--check", type=Path, help="exit 1 if this file is not up to date")
    parser.add_argument("--protos", type=Path, default=PROTO_ROOT, help="the protos' root")
    args = parser.parse_args(argv)
    text = render(descriptor_set(args.protos))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        return 0
    current = args.check.read_text(encoding="utf-8") if args.check.exists() else ""
    if current != text:
        print(f"{args.check} is out of date: run `make docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
