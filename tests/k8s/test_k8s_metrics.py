"""The Grafana dashboard and the PrometheusRules (k8s/components/monitoring) name only metrics the
services really export, and use them as their types allow.

Every built service (``okey101.services.built_services()``) is started as a process of its own
on free ports and its ``/metrics`` scraped; a service not built yet is skipped with a message,
but its metric module (``okey101.<service>.metrics``), if it has one, is read instead, so the
check is meaningful before the service lands and complete once it does. Every query is parsed as
PromQL (promql-parser); metric names come from its selectors, not from a regular expression.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import json
import os
import re
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import promql_parser
import pytest
import yaml
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.parser import text_string_to_metric_families

from okey101.bench.rules_bench import process
from okey101.services import SERVICES, built_services
from okey101.stack import free_ports, wait_serving

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "k8s" / "components" / "monitoring"
DASHBOARD = MONITORING / "dashboards" / "okey101.json"
RULES = MONITORING / "prometheusrule.yaml"
DEPLOYMENT_DOC = ROOT / "docs" / "deployment.md"

#: Series that come from elsewhere, each named exactly: Prometheus itself and kube-state-metrics.
EXTERNAL = {
    "up": "Prometheus: whether a target was scraped",
    "kube_deployment_spec_replicas": "kube-state-metrics",
    "kube_deployment_status_replicas_ready": "kube-state-metrics",
    "kube_job_status_failed": "kube-state-metrics",
}
#: What a dashboard variable ($namespace, ${job}) reads as in a parsed query.
VARIABLE = "grafana_variable"
#: Labels Prometheus (with the Prometheus Operator or pod annotations) adds to every target.
TARGET_LABELS = {"job", "namespace", "pod", "instance", "service", "container", "endpoint"}
GRPC_TYPES = {"unary", "client_stream", "server_stream", "bidi_stream"}
#: Gauges that are the whole deployment's figure, reported alike by every table pod
#: (okey101/table/metrics.py): they are aggregated with max, never summed.
DEPLOYMENT_GAUGES = {"okey_tables_live", "okey_outbox_backlog", "okey_stuck_tables"}


# --------------------------------------------------------------------------------------------
# The queries


@dataclass(frozen=True)
class Query:
    where: str
    text: str

    def parsed(self) -> Any:
        return promql_parser.parse(_grafana_free(self.text))


def _grafana_free(text: str) -> str:
    """The query with Grafana's variables replaced by what PromQL accepts in their place."""
    text = re.sub(r"\$__(rate_interval|interval|range)\b", "5m", text)
    return re.sub(r"\$\{?\w+\}?", VARIABLE, text)


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))


def dashboard_queries() -> list[Query]:
    dashboard = json.loads(DASHBOARD.read_text())
    queries = [
        Query(f"dashboard panel {panel['title']!r} {target['refId']}", target["expr"])
        for panel in _panels(dashboard["panels"])
        for target in panel.get("targets", [])
    ]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] != "query":
            continue
        match = re.fullmatch(r"label_values\((.+), (\w+)\)", variable["definition"])
        assert match is not None, variable["name"]
        queries.append(Query(f"dashboard variable {variable['name']}", match.group(1)))
    return queries


def alert_rules() -> list[dict[str, Any]]:
    rule = yaml.safe_load(RULES.read_text())
    return [entry for group in rule["spec"]["groups"] for entry in group["rules"]]


def alert_queries() -> list[Query]:
    return [Query(f"alert {rule['alert']}", rule["expr"]) for rule in alert_rules()]


@dataclass
class Uses:
    """What a query asks for: selectors (name, matchers) and function calls (name, args)."""

    selectors: list[tuple[str, list[tuple[str, str, str]]]] = field(default_factory=list)
    calls: list[Any] = field(default_factory=list)
    aggregations: list[Any] = field(default_factory=list)


def uses(query: Query) -> Uses:
    found = Uses()

    def visit(node: Any) -> bool:
        if isinstance(node, promql_parser.VectorSelector):
            matchers = [
                (m.name, str(m.op).rsplit(".", 1)[-1], m.value) for m in node.matchers.matchers
            ]
            found.selectors.append((node.name or "", matchers))
        elif isinstance(node, promql_parser.Call):
            found.calls.append(node)
        elif isinstance(node, promql_parser.AggregateExpr):
            found.aggregations.append(node)
        return True

    promql_parser.walk(query.parsed(), visit)
    return found


ALL_QUERIES = dashboard_queries() + alert_queries()


def _names(node: Any) -> set[str]:
    names: set[str] = set()

    def visit(inner: Any) -> bool:
        if isinstance(inner, promql_parser.VectorSelector):
            names.add(inner.name or "")
        return True

    promql_parser.walk(node, visit)
    return names


# --------------------------------------------------------------------------------------------
# What the services export


@dataclass(frozen=True)
class Family:
    name: str  # as exposed: a counter's ends in _total
    type: str
    labels: frozenset[str]
    source: str

    def series(self) -> set[str]:
        """The series names a query may select."""
        if self.type == "histogram":
            return {f"{self.name}_bucket", f"{self.name}_sum", f"{self.name}_count"}
        if self.type == "summary":
            return {self.name, f"{self.name}_sum", f"{self.name}_count"}
        return {self.name}


def _exposed_name(name: str, kind: str) -> str:
    return f"{name}_total" if kind == "counter" and not name.endswith("_total") else name


def module_families(service: str) -> dict[str, Family]:
    """The metrics a service's modules define (its metrics module, and its service module where
    it is built), read from the objects themselves."""
    families: dict[str, Family] = {}
    names = ["okey101.platform.metrics", f"okey101.{service}.metrics"]
    if service in built_services():
        names.append(f"okey101.{service}.service")
    for module_name in names:
        if importlib.util.find_spec(module_name) is None:
            continue
        module = importlib.import_module(module_name)
        for value in vars(module).values():
            if isinstance(value, MetricWrapperBase):
                name = _exposed_name(value._name, value._type)
                families[name] = Family(
                    name, value._type, frozenset(value._labelnames), module_name
                )
    return families


def _scrape_text(text: str, service: str) -> dict[str, Family]:
    families = {}
    for family in text_string_to_metric_families(text):
        name = _exposed_name(family.name, family.type)
        labels = frozenset(
            key
            for sample in family.samples
            for key in sample.labels
            if key not in ("le", "quantile")
        )
        families[name] = Family(name, family.type, labels, f"{service} /metrics")
    return families


@contextlib.contextmanager
def _services(names: list[str], var_dir: Path) -> Iterator[dict[str, tuple[int, int]]]:
    # Chosen together, so no two are the same (free_ports), and the lobby's JWKS port too (its
    # default is a fixed one another test may hold).
    chosen = iter(free_ports(2 * len(names) + 1))
    ports = {name: (next(chosen), next(chosen)) for name in names}
    jwks_port = next(chosen)
    env = {key: value for key, value in os.environ.items() if not key.startswith("OKEY_")}
    with contextlib.ExitStack() as stack:
        for name, (port, metrics) in ports.items():
            command = [sys.executable, "-m", "okey101.cli", "serve", name, "--port", str(port)]
            command += ["--metrics-port", str(metrics), "--var-dir", str(var_dir / name)]
            if name == "lobby":
                command += ["--jwks-port", str(jwks_port)]
            stack.enter_context(process(command, env=env))

        async def all_serving() -> None:
            await asyncio.gather(
                *(wait_serving(f"127.0.0.1:{port}", timeout=90) for port, _ in ports.values())
            )

        asyncio.run(all_serving())
        yield ports


async def _one_health_check(port: int) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub: Any = health_pb2_grpc.HealthStub(channel)
        await stub.Check(health_pb2.HealthCheckRequest(), timeout=5)


@pytest.fixture(scope="module")
def scraped() -> dict[str, dict[str, Family]]:
    """service -> what its /metrics served, for every built service, all running at once."""
    names = built_services()
    with (
        tempfile.TemporaryDirectory(prefix="okey101-k8s-metrics-") as var_dir,
        _services(names, Path(var_dir)) as ports,
    ):
        out = {}
        for name, (port, metrics) in ports.items():
            asyncio.run(_one_health_check(port))  # one call, so the gRPC series have samples
            with urllib.request.urlopen(
                f"http://127.0.0.1:{metrics}/metrics", timeout=10
            ) as answer:
                out[name] = _scrape_text(answer.read().decode(), name)
        return out


@pytest.fixture(scope="module")
def exported(scraped: dict[str, dict[str, Family]]) -> dict[str, Family]:
    """Every metric any service exports: scraped where built, else from its metric module."""
    out: dict[str, Family] = {}
    for service in SERVICES:
        families = scraped.get(service) or module_families(service)
        for name, family in families.items():
            known = out.get(name)
            labels = family.labels | (known.labels if known else frozenset())
            # A scrape shows labels only where samples exist: the modules say them all.
            module = module_families(service).get(name)
            if module is not None:
                labels |= module.labels
            out[name] = Family(name, family.type, labels, family.source)
    return out


# --------------------------------------------------------------------------------------------
# Services, one by one


@pytest.mark.parametrize("service", SERVICES)
def test_each_built_service_serves_its_metrics(
    service: str, scraped: dict[str, dict[str, Family]]
) -> None:
    if service not in scraped:
        defined = sorted(set(module_families(service)) - set(module_families("rules")))
        pytest.skip(
            f"the {service} service is not built yet: not scraped; "
            + (
                f"its metric module's {', '.join(defined)} are checked instead"
                if defined
                else "it has no metric module to check yet"
            )
        )
    served = scraped[service]
    for name in ("grpc_server_started_total", "grpc_server_handled_total"):
        assert served[name].type == "counter", name
    assert served["grpc_server_handling_seconds"].type == "histogram"
    # The call above is in the standard series, labelled as the ecosystem's dashboards expect.
    assert {"grpc_type", "grpc_service", "grpc_method", "grpc_code"} <= served[
        "grpc_server_handled_total"
    ].labels
    # What the service's modules define is really served (a metric defined but never registered
    # or served would leave a panel empty).
    for name, family in module_families(service).items():
        assert name in served, f"{service} defines {name} ({family.source}) but does not serve it"
        assert served[name].type == family.type, name


# --------------------------------------------------------------------------------------------
# The queries against what is exported


def test_every_query_is_promql() -> None:
    assert len(dashboard_queries()) >= 20 and len(alert_queries()) >= 6
    for query in ALL_QUERIES:
        try:
            query.parsed()
        except ValueError as error:
            raise AssertionError(f"{query.where}: {error}\n{query.text}") from None


def test_queries_name_only_metrics_the_services_export(
    exported: dict[str, Family], scraped: dict[str, dict[str, Family]]
) -> None:
    series = {name: family for family in exported.values() for name in family.series()}
    assert not any(name.startswith(("okey_", "grpc_")) for name in EXTERNAL)
    unknown = []
    for query in ALL_QUERIES:
        for name, _matchers in uses(query).selectors:
            if name not in series and name not in EXTERNAL:
                unknown.append(f"{query.where}: {name}")
    sources = sorted({family.source for family in exported.values()})
    assert not unknown, f"not exported by any service ({', '.join(sources)}): {unknown}"
    assert scraped, "at least one service is built and was scraped"


def test_labels_and_values_in_queries_are_real(exported: dict[str, Family]) -> None:
    series = {name: family for family in exported.values() for name in family.series()}
    codes = {code.name for code in grpc.StatusCode}
    for query in ALL_QUERIES:
        for name, matchers in uses(query).selectors:
            family = series.get(name)
            for label, op, value in matchers:
                if family is not None:
                    allowed = (
                        family.labels
                        | TARGET_LABELS
                        | ({"le"} if name.endswith("_bucket") else set())
                    )
                    assert label in allowed, f"{query.where}: {name} has no label {label}"
                if VARIABLE in value:
                    continue  # a dashboard variable
                values = set(value.split("|")) if op in ("Re", "NotRe") else {value}
                if label == "grpc_code":
                    assert values <= codes, f"{query.where}: {values - codes} are not status codes"
                if label == "grpc_type":
                    assert values <= GRPC_TYPES, f"{query.where}: {values}"
                if label in ("job", "deployment"):
                    assert values <= set(SERVICES), f"{query.where}: {values}"


def test_rates_are_taken_of_counters_and_quantiles_by_le(exported: dict[str, Family]) -> None:
    series = {name: family for family in exported.values() for name in family.series()}
    quantiles = 0
    for query in ALL_QUERIES:
        found = uses(query)
        for call in found.calls:
            function = call.func.name
            if function in ("rate", "irate", "increase"):
                for name in _names(call):
                    family = series.get(name)
                    if family is not None:
                        counter_like = family.type == "counter" or (
                            family.type in ("histogram", "summary")
                            and name.endswith(("_bucket", "_sum", "_count"))
                        )
                        assert counter_like, (
                            f"{query.where}: {function}() of the {family.type} {name}"
                        )
            if function == "histogram_quantile":
                quantiles += 1
                inner = call.args[1]
                assert isinstance(inner, promql_parser.AggregateExpr), query.where
                assert "le" in inner.modifier.labels, f"{query.where}: not aggregated by le"
                (name,) = _names(inner)
                assert name.endswith("_bucket") and series[name].type == "histogram", query.where
        for aggregation in found.aggregations:
            gauges = _names(aggregation) & DEPLOYMENT_GAUGES
            if gauges and str(aggregation.op).lower().endswith("sum"):
                raise AssertionError(f"{query.where}: {gauges} summed over pods (use max)")
    assert quantiles >= 5


def test_the_dashboard_shows_what_operators_need() -> None:
    names = {name for query in dashboard_queries() for name, _ in uses(query).selectors}
    wanted = {
        "grpc_server_handled_total",  # calls and errors by method
        "grpc_server_handling_seconds_bucket",  # latency percentiles
        "okey_tables_live",
        "okey_hands_started_total",  # hands per minute
        "okey_bot_decision_seconds_bucket",
        "okey_outbox_backlog",
        "okey_stuck_tables",
    }
    assert wanted <= names, wanted - names
    text = DASHBOARD.read_text()
    assert "histogram_quantile(0.99" in text and "by (grpc_service, grpc_method" in text
    assert 'grpc_code!=\\"OK\\"' in text  # errors by method and code


ALERTS_WANTED = {
    "error rate": lambda names, q: "grpc_server_handled_total" in names and "grpc_code" in q,
    "p99 latency": lambda names, q: (
        "grpc_server_handling_seconds_bucket" in names and "histogram_quantile(0.99" in q
    ),
    "stuck tables": lambda names, q: "okey_stuck_tables" in names,
    "outbox backlog": lambda names, q: "okey_outbox_backlog" in names,
    "pods not ready": lambda names, q: "kube_deployment_status_replicas_ready" in names,
}


@pytest.mark.parametrize("concern", sorted(ALERTS_WANTED))
def test_an_alert_watches(concern: str) -> None:
    matching = [
        rule["alert"]
        for rule in alert_rules()
        if ALERTS_WANTED[concern](
            {name for name, _ in uses(Query(rule["alert"], rule["expr"])).selectors},
            " ".join(rule["expr"].split()),
        )
    ]
    assert matching, f"no alert watches {concern}"


def test_every_alert_has_a_runbook_section() -> None:
    """Each alert's runbook_url is a heading of docs/deployment.md that says what to do."""
    text = DEPLOYMENT_DOC.read_text()
    anchors = {
        re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")
        for heading in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)
    }
    for rule in alert_rules():
        url = rule["annotations"]["runbook_url"]
        path, _, anchor = url.partition("#")
        assert path == "docs/deployment.md" and anchor in anchors, f"{rule['alert']}: {url}"
        assert anchor == rule["alert"].lower()


# --------------------------------------------------------------------------------------------
# What counts as a server error

#: The statuses that are faults of ours: a bug (INTERNAL, UNKNOWN), lost data, a peer or the
#: database down (UNAVAILABLE). Not RESOURCE_EXHAUSTED (a rate limit's designed answer, which one
#: player's flood of moves makes at will), DEADLINE_EXCEEDED (the client's own deadline) or
#: UNIMPLEMENTED (a call to a method the server does not have).
SERVER_FAULTS = {"INTERNAL", "UNKNOWN", "DATA_LOSS", "UNAVAILABLE"}
_OPS = {
    "Equal": lambda value, code: code == value,
    "NotEqual": lambda value, code: code != value,
    # Prometheus anchors its regular expressions at both ends.
    "Re": lambda value, code: re.fullmatch(value, code) is not None,
    "NotRe": lambda value, code: re.fullmatch(value, code) is None,
}


def counted_codes(query: Query) -> set[str]:
    """The gRPC codes a query's grpc_server_handled_total selectors with a grpc_code matcher
    count, each code tried against the matchers as Prometheus applies them."""
    counted: set[str] = set()
    for name, matchers in uses(query).selectors:
        by_code = [(op, value) for label, op, value in matchers if label == "grpc_code"]
        if name != "grpc_server_handled_total" or not by_code:
            continue
        counted |= {
            code.name
            for code in grpc.StatusCode
            if all(_OPS[op](value, code.name) for op, value in by_code)
        }
    return counted


def test_the_error_rate_alert_and_its_panel_count_only_server_faults() -> None:
    (rule,) = [r for r in alert_rules() if r["alert"] == "Okey101HighErrorRate"]
    assert counted_codes(Query("alert", rule["expr"])) == SERVER_FAULTS
    dashboard = json.loads(DASHBOARD.read_text())
    (panel,) = [
        p
        for p in _panels(dashboard["panels"])
        if "Okey101HighErrorRate" in p.get("description", "")
    ]
    for target in panel["targets"]:
        assert counted_codes(Query(panel["title"], target["expr"])) == SERVER_FAULTS
    # The evaluator is not blind: the old selector counted a rate limit's refusals.
    old = 'grpc_server_handled_total{grpc_code=~"UNKNOWN|INTERNAL|RESOURCE_EXHAUSTED"}'
    assert "RESOURCE_EXHAUSTED" in counted_codes(Query("old", old))
    assert "OK" not in counted_codes(Query("errors", 'grpc_server_handled_total{grpc_code!="OK"}'))
