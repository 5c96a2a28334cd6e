"""The client bundle: our protos with the google.rpc protos a client needs to read an error
(``protos/third_party``, vendored, licensed), and docs/integration.md's ``buf generate``
templates for TypeScript, Kotlin and Swift.

- the vendored files are googleapis' own, byte for byte (the copies googleapis-common-protos
  installs), with their licence;
- ``buf build`` of the workspace holds every okey.v1 service and google.rpc's Status, ErrorInfo
  and LocalizedMessage; a client built from that image alone (no generated Python, no
  googleapis package) decodes the reason and the sentence of a real server's refusal;
- each documented template runs through ``buf generate`` with a local plugin standing in for
  the hosted one (which needs the network): it is valid, and asks for exactly the files the
  guide says (Kotlin without google.rpc, which grpc-java's dependencies bring).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import google.rpc
import grpc
import grpc.aio
import pytest
import yaml
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from okey101.platform.config import settings_for_tests
from okey101.platform.server import ServerHandle
from okey101.rules import service as rules_service

ROOT = Path(__file__).resolve().parents[2]
VENDORED = ROOT / "protos" / "third_party"
BUF = ROOT / ".venv" / "bin" / "buf"
GUIDE = ROOT / "docs" / "integration.md"
pytestmark = pytest.mark.skipif(not BUF.exists(), reason="buf is installed by make install")

#: A protoc plugin that generates one file naming what it was asked for (its parameter too).
RECORDING_PLUGIN = """
import sys
from google.protobuf.compiler import plugin_pb2

request = plugin_pb2.CodeGeneratorRequest.FromString(sys.stdin.buffer.read())
answer = plugin_pb2.CodeGeneratorResponse(
    supported_features=plugin_pb2.CodeGeneratorResponse.FEATURE_PROTO3_OPTIONAL
)
first = request.file_to_generate[0].replace("/", "_")
answer.file.add(
    name=f"{sys.argv[1]}/{first}.txt",
    content="\\n".join([request.parameter, *request.file_to_generate]),
)
sys.stdout.buffer.write(answer.SerializeToString())
"""


def test_the_vendored_protos_are_googles_unchanged_and_licensed() -> None:
    installed = Path(google.rpc.__path__[0])
    for name in ("status.proto", "error_details.proto", "code.proto"):
        ours = VENDORED / "google" / "rpc" / name
        assert ours.read_bytes() == (installed / name).read_bytes(), name
        assert "Licensed under the Apache License, Version 2.0" in ours.read_text()
    licence = (VENDORED / "google" / "LICENSE").read_text()
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    readme = (VENDORED / "README.md").read_text()
    assert "googleapis" in readme and "Apache License 2.0" in readme


def _image(tmp_path: Path) -> descriptor_pb2.FileDescriptorSet:
    out = tmp_path / "bundle.binpb"
    done = subprocess.run(
        [str(BUF), "build", "-o", str(out)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def test_a_client_built_from_the_bundle_alone_reads_a_refusals_reason_and_sentence(
    tmp_path: Path,
) -> None:
    image = _image(tmp_path)
    files = {file.name for file in image.file}
    assert {"google/rpc/status.proto", "google/rpc/error_details.proto"} <= files
    assert {f"okey/v1/{name}.proto" for name in ("lobby", "table", "rules", "scoring")} <= files
    # A pool of the bundle's own: nothing generated, nothing from googleapis-common-protos.
    pool = descriptor_pool.DescriptorPool()
    for file in image.file:
        pool.Add(file)

    def message(name: str) -> Any:
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))

    status_type, info_type = message("google.rpc.Status"), message("google.rpc.ErrorInfo")
    localized_type = message("google.rpc.LocalizedMessage")
    request_type = message("okey.v1.ValidateOpeningRequest")
    assert pool.FindServiceByName("okey.v1.RulesService").methods_by_name["ValidateOpening"]

    async def refusal() -> grpc.aio.AioRpcError:
        handle = await ServerHandle.start(
            "rules",
            rules_service.register,
            settings_for_tests("rules", var_dir=tmp_path),
            access=rules_service.ACCESS,
        )
        try:
            async with grpc.aio.insecure_channel(handle.target) as channel:
                call = channel.unary_unary(
                    "/okey.v1.RulesService/ValidateOpening",
                    request_serializer=lambda request: request.SerializeToString(),
                )
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await call(request_type(locale="tr"), timeout=10)  # no token
                return caught.value
        finally:
            await handle.stop(grace=0)

    error = asyncio.run(refusal())
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    (raw,) = [v for k, v in error.trailing_metadata() or () if k == "grpc-status-details-bin"]
    status = status_type.FromString(raw)
    assert status.code == grpc.StatusCode.UNAUTHENTICATED.value[0]
    infos = [d for d in status.details if d.type_url.endswith("/google.rpc.ErrorInfo")]
    sentences = [d for d in status.details if d.type_url.endswith("/google.rpc.LocalizedMessage")]
    info, localized = (
        info_type.FromString(infos[0].value),
        localized_type.FromString(sentences[0].value),
    )
    assert info.domain == "okey101" and re.fullmatch(r"[A-Z_]+", info.reason)
    assert localized.message and localized.locale


def _templates() -> dict[str, dict[str, Any]]:
    text = GUIDE.read_text(encoding="utf-8")
    found = re.findall(r"<!-- buf\.gen: (\w+) -->\n```yaml\n(.*?)\n```", text, flags=re.DOTALL)
    return {language: yaml.safe_load(body) for language, body in found}


def test_the_guide_has_a_template_for_typescript_kotlin_and_swift() -> None:
    templates = _templates()
    assert set(templates) == {"typescript", "kotlin", "swift"}
    remotes = {
        language: [plugin["remote"] for plugin in template["plugins"]]
        for language, template in templates.items()
    }
    assert remotes == {
        "typescript": ["buf.build/bufbuild/es"],
        "kotlin": [
            "buf.build/protocolbuffers/java",
            "buf.build/protocolbuffers/kotlin",
            "buf.build/grpc/java",
            "buf.build/grpc/kotlin",
        ],
        "swift": ["buf.build/apple/swift", "buf.build/grpc/swift-protobuf"],
    }


@pytest.mark.parametrize("language", ["typescript", "kotlin", "swift"])
def test_each_template_generates_from_the_bundle(tmp_path: Path, language: str) -> None:
    template = _templates()[language]
    plugin = tmp_path / "record.py"
    plugin.write_text(RECORDING_PLUGIN)
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "protos", checkout / "protos")
    shutil.copy(ROOT / "buf.yaml", checkout / "buf.yaml")
    for index, entry in enumerate(template["plugins"]):
        remote = entry.pop("remote")
        entry["local"] = [sys.executable, str(plugin), f"{index}-{remote.rsplit('/', 1)[1]}"]
    (checkout / "buf.gen.yaml").write_text(yaml.safe_dump(template))
    done = subprocess.run(
        [str(BUF), "generate"], cwd=checkout, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    for index, entry in enumerate(template["plugins"]):
        asked: set[str] = set()
        (folder,) = (checkout / entry["out"]).glob(f"{index}-*")
        for record in folder.glob("*.txt"):
            parameter, *files = record.read_text().split("\n")
            assert parameter == entry.get("opt", "")
            asked |= set(files)
        ours = {f"okey/v1/{name}.proto" for name in ("common", "lobby", "table", "rules")}
        assert ours <= asked, (language, entry)
        google = {"google/rpc/status.proto", "google/rpc/error_details.proto"}
        if language == "kotlin":
            assert not any(name.startswith("google/") for name in asked)
        else:
            assert google <= asked, (language, entry)
