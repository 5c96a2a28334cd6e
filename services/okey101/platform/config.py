"""Settings every service reads: command-line flags over ``OKEY_*`` environment variables.

Each setting is looked up, first match wins, as

1. the flag (``--port 50054``),
2. ``OKEY_<SERVICE>_<NAME>`` (``OKEY_RULES_PORT``), so one shell can start several services,
3. ``OKEY_<NAME>`` (``OKEY_PORT``),
4. the default (a service's own ports come from ``SERVICE_PORTS``).

The table of every setting is ``docs/configuration.md``; ``SETTINGS`` below is its source.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

LogFormat = Literal["auto", "json", "console"]
EventLoop = Literal["uvloop", "asyncio"]

#: Default (gRPC port, metrics port) of each service on one machine.
SERVICE_PORTS: Mapping[str, tuple[int, int]] = {
    "lobby": (50051, 9101),
    "table": (50052, 9102),
    "scoring": (50053, 9103),
    "rules": (50054, 9104),
    "bot": (50055, 9105),
    # The edge (okey101.edge): Connect and gRPC-Web over HTTP for browsers, not gRPC's port.
    "edge": (8080, 9107),
}

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


class ConfigError(ValueError):
    """A setting has a value that cannot be used; the message names the setting."""


@dataclass(frozen=True)
class Settings:
    """Everything ``serve()`` needs to start a service. Build it with ``load_settings``."""

    service: str
    host: str
    port: int
    metrics_port: int
    log_format: LogFormat = "auto"
    log_level: str = "info"
    #: The event loop a served process runs on: uvloop (libuv, the default) or asyncio's own.
    event_loop: EventLoop = "uvloop"
    local_mode: bool = True
    var_dir: Path = Path("var")
    signing_key_file: Path | None = None
    jwks_url: str | None = None
    jwks_file: Path | None = None
    grace_seconds: float = 10.0
    drain_seconds: float = 0.5
    max_connection_age_seconds: float = 300.0
    # How often a service asks the lobby for the logins revoked lately (0: never; in-process
    # tests start without it).
    revocation_poll_seconds: float = 2.0
    database_url: str | None = None
    # Where the other services listen (a gRPC target: host:port, or dns:///name:port for
    # client-side round-robin over a headless Service). Defaults: localhost, their own ports.
    lobby_address: str = "127.0.0.1:50051"
    table_address: str = "127.0.0.1:50052"
    scoring_address: str = "127.0.0.1:50053"
    rules_address: str = "127.0.0.1:50054"
    bot_address: str = "127.0.0.1:50055"
    # The lobby's own: token lifetimes, the JWKS over HTTP, quick match and tournaments.
    access_token_seconds: float = 900.0
    refresh_token_seconds: float = 30 * 24 * 3600.0
    jwks_port: int = 9106
    quick_match_wait_seconds: float = 30.0
    tournament_lease_seconds: float = 15.0
    # The lobby's rate limits: requests a minute per device or username (the logins), per
    # player (HostTable, JoinQuickMatch).
    login_limit_per_minute: int = 10
    host_table_limit_per_minute: int = 10
    quick_match_limit_per_minute: int = 20
    # ... and per client address (docs/operations.md, Limits per client address): guests
    # created, and HostTable calls of all the address's players.
    new_guest_limit_per_address_per_minute: int = 10
    host_table_limit_per_address_per_minute: int = 30
    # The bot service's: an expert decision's budget (seconds, and rollouts at most).
    expert_seconds: float = 0.8
    expert_playouts: int = 96
    # The edge's own: origins a browser may call it from (local mode adds localhost's), and the
    # web client's built files it serves at / (when the directory exists).
    cors_origins: tuple[str, ...] = ()
    web_dir: Path = Path("web/dist")
    # The edge's HTTP bounds (docs/operations.md, Hardening): the time a client may take to
    # send a request's headers and its body, an idle keep-alive connection's life, and how
    # many connections it holds at once.
    http_header_timeout_seconds: float = 10.0
    http_body_timeout_seconds: float = 30.0
    http_keep_alive_seconds: float = 75.0
    http_max_connections: int = 4096
    # The lobby's push notifications (docs/push.md): each platform's credentials (a platform
    # without them is not offered: RegisterPushDevice refuses it), the providers' base URLs,
    # and a CA bundle trusted besides the system's (a test's local providers).
    push_fcm_credentials_file: Path | None = None
    push_fcm_url: str = "https://fcm.googleapis.com"
    push_apns_key_file: Path | None = None
    push_apns_key_id: str | None = None
    push_apns_team_id: str | None = None
    push_apns_topic: str | None = None
    push_apns_url: str = "https://api.push.apple.com"
    push_webhook_secret_file: Path | None = None
    push_webhook_allow_loopback: bool = False
    push_ca_file: Path | None = None
    # The lobby's chips (docs/chips.md): a new player's starting grant, the daily grant (0: none)
    # and the hours between two, the stakes a table may be played for, the table fee in percent.
    chips_starting_grant: int = 1000
    chips_daily_amount: int = 100
    chips_daily_hours: float = 24.0
    chip_stakes: tuple[int, ...] = (10, 50, 100, 500, 1000)
    chip_fee_percent: int = 5

    def replace(self, **changes: object) -> Settings:
        """A copy with some settings changed (tests use port 0 and short drains)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True)
class _Spec:
    name: str  # the field of Settings and the suffix of OKEY_*
    flag: str
    help: str


SETTINGS: tuple[_Spec, ...] = (
    _Spec("host", "--host", "address to listen on (default 127.0.0.1 in local mode, else [::])"),
    _Spec("port", "--port", "gRPC port; 0 picks a free one (default: the service's own)"),
    _Spec("metrics_port", "--metrics-port", "Prometheus /metrics HTTP port; 0 picks a free one"),
    _Spec("log_format", "--log-format", "auto (JSON unless stderr is a terminal), json, console"),
    _Spec("log_level", "--log-level", "debug, info, warning or error (default info)"),
    _Spec("event_loop", "--event-loop", "uvloop (default) or asyncio: the served process's loop"),
    _Spec("local_mode", "--local-mode", "1/0: one-machine mode (dev key, SQLite, localhost)"),
    _Spec("var_dir", "--var-dir", "where local mode keeps its files (default ./var)"),
    _Spec("signing_key_file", "--signing-key-file", "Ed25519 private key (PEM) to sign tokens"),
    _Spec("jwks_url", "--jwks-url", "URL of the JWKS that verifies tokens"),
    _Spec("jwks_file", "--jwks-file", "file holding the JWKS that verifies tokens"),
    _Spec("grace_seconds", "--grace-seconds", "time in-flight calls get on shutdown (default 10)"),
    _Spec("drain_seconds", "--drain-seconds", "NOT_SERVING time before refusing calls"),
    _Spec(
        "max_connection_age_seconds",
        "--max-connection-age-seconds",
        "connections are closed after this age, so new pods get traffic (default 300)",
    ),
    _Spec(
        "revocation_poll_seconds",
        "--revocation-poll-seconds",
        "how often to read the lobby's revoked logins, ending their tokens' calls (0: never)",
    ),
    _Spec("database_url", "--database-url", "SQLAlchemy URL (default: SQLite under the var dir)"),
    *(
        _Spec(f"{peer}_address", f"--{peer}-address", f"gRPC target of the {peer} service")
        for peer in ("lobby", "table", "scoring", "rules", "bot")
    ),
    _Spec("access_token_seconds", "--access-token-seconds", "lobby: access token lifetime"),
    _Spec("refresh_token_seconds", "--refresh-token-seconds", "lobby: refresh token lifetime"),
    _Spec("jwks_port", "--jwks-port", "lobby: HTTP port of the JWKS (/.well-known/jwks.json)"),
    _Spec(
        "quick_match_wait_seconds",
        "--quick-match-wait-seconds",
        "lobby: how long a quick-match ticket waits before bots fill the empty seats",
    ),
    _Spec(
        "tournament_lease_seconds",
        "--tournament-lease-seconds",
        "lobby: how long a pod's lease on a tournament lasts without renewal",
    ),
    _Spec(
        "login_limit_per_minute",
        "--login-limit-per-minute",
        "lobby: logins a minute per device or username (default 10)",
    ),
    _Spec(
        "host_table_limit_per_minute",
        "--host-table-limit-per-minute",
        "lobby: HostTable calls a minute per player (default 10)",
    ),
    _Spec(
        "quick_match_limit_per_minute",
        "--quick-match-limit-per-minute",
        "lobby: JoinQuickMatch calls a minute per player (default 20)",
    ),
    _Spec(
        "new_guest_limit_per_address_per_minute",
        "--new-guest-limit-per-address-per-minute",
        "lobby: guests a client address may create a minute (default 10)",
    ),
    _Spec(
        "host_table_limit_per_address_per_minute",
        "--host-table-limit-per-address-per-minute",
        "lobby: HostTable calls a minute per client address, all its players (default 30)",
    ),
    _Spec("expert_seconds", "--expert-seconds", "bot: seconds an expert decision may take"),
    _Spec("expert_playouts", "--expert-playouts", "bot: rollouts an expert decision may play"),
    _Spec(
        "cors_origins",
        "--cors-origins",
        "edge: comma-separated origins browsers may call from (local mode adds localhost)",
    ),
    _Spec("web_dir", "--web-dir", "edge: the web client's built files, served at / (web/dist)"),
    _Spec(
        "http_header_timeout_seconds",
        "--http-header-timeout-seconds",
        "edge: time a client may take to send a request's headers (default 10)",
    ),
    _Spec(
        "http_body_timeout_seconds",
        "--http-body-timeout-seconds",
        "edge: time a client may take to send a request's body (default 30)",
    ),
    _Spec(
        "http_keep_alive_seconds",
        "--http-keep-alive-seconds",
        "edge: how long an idle keep-alive connection stays open (default 75)",
    ),
    _Spec(
        "http_max_connections",
        "--http-max-connections",
        "edge: connections held at once; one more is answered 503 (default 4096)",
    ),
    _Spec(
        "push_fcm_credentials_file",
        "--push-fcm-credentials-file",
        "lobby: FCM's service-account JSON (push through FCM HTTP v1; unset or absent: off)",
    ),
    _Spec("push_fcm_url", "--push-fcm-url", "lobby: FCM's base URL (https://fcm.googleapis.com)"),
    _Spec(
        "push_apns_key_file",
        "--push-apns-key-file",
        "lobby: the APNs provider key (.p8, ES256; unset or absent: APNs off)",
    ),
    _Spec("push_apns_key_id", "--push-apns-key-id", "lobby: the APNs key's id (kid)"),
    _Spec("push_apns_team_id", "--push-apns-team-id", "lobby: the Apple team id (iss)"),
    _Spec("push_apns_topic", "--push-apns-topic", "lobby: the app's bundle id (apns-topic)"),
    _Spec(
        "push_apns_url",
        "--push-apns-url",
        "lobby: APNs' base URL (https://api.push.apple.com; the sandbox's for development)",
    ),
    _Spec(
        "push_webhook_secret_file",
        "--push-webhook-secret-file",
        "lobby: the secret that signs webhook notifications (unset or absent: webhooks off)",
    ),
    _Spec(
        "push_webhook_allow_loopback",
        "--push-webhook-allow-loopback",
        "lobby: 1/0: webhooks may be http:// URLs on loopback hosts (tests only; default 0)",
    ),
    _Spec(
        "push_ca_file",
        "--push-ca-file",
        "lobby: CA certificates (PEM) trusted for push providers besides the system's",
    ),
    _Spec(
        "chips_starting_grant",
        "--chips-starting-grant",
        "lobby: chips a new player is granted on their wallet's first use (default 1000)",
    ),
    _Spec(
        "chips_daily_amount",
        "--chips-daily-amount",
        "lobby: chips ClaimDailyChips grants (default 100; 0: no daily grant)",
    ),
    _Spec(
        "chips_daily_hours",
        "--chips-daily-hours",
        "lobby: hours between two daily grants of a player (default 24)",
    ),
    _Spec(
        "chip_stakes",
        "--chip-stakes",
        "lobby: comma-separated stakes a table may be played for (default 10,50,100,500,1000)",
    ),
    _Spec(
        "chip_fee_percent",
        "--chip-fee-percent",
        "lobby: the table fee, in percent of a staked table's pot, 0-50 (default 5)",
    ),
)

#: The services one service may call, by name: the ``<name>_address`` settings.
PEERS: tuple[str, ...] = ("lobby", "table", "scoring", "rules", "bot")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the flag of every setting to ``parser`` (each defaults to None: not given)."""
    for spec in SETTINGS:
        parser.add_argument(spec.flag, dest=spec.name, default=None, help=spec.help)


def load_settings(
    service: str,
    args: argparse.Namespace | Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """The settings of ``service`` from parsed flags (or a mapping) and the environment."""
    env = os.environ if environ is None else environ
    flags: Mapping[str, object]
    if args is None:
        flags = {}
    elif isinstance(args, argparse.Namespace):
        flags = vars(args)
    else:
        flags = args
    prefix = f"OKEY_{service.upper()}_"

    def raw(name: str) -> str | None:
        given = flags.get(name)
        if given is not None:
            return str(given)
        for key in (prefix + name.upper(), "OKEY_" + name.upper()):
            value = env.get(key)
            if value is not None and value.strip() != "":
                return value.strip()
        return None

    default_port, default_metrics = SERVICE_PORTS.get(service, (0, 0))
    local_mode = _bool("local_mode", raw("local_mode"), default=True)
    log_format = raw("log_format") or "auto"
    if log_format not in ("auto", "json", "console"):
        raise ConfigError(f"log_format must be auto, json or console, not {log_format!r}")
    event_loop = raw("event_loop") or "uvloop"
    if event_loop not in ("uvloop", "asyncio"):
        raise ConfigError(f"event_loop must be uvloop or asyncio, not {event_loop!r}")
    level = (raw("log_level") or "info").lower()
    if level not in ("debug", "info", "warning", "error"):
        raise ConfigError(f"log_level must be debug, info, warning or error, not {level!r}")
    var_dir = Path(raw("var_dir") or "var")
    settings = Settings(
        service=service,
        host=raw("host") or ("127.0.0.1" if local_mode else "[::]"),
        port=_port("port", raw("port"), default_port),
        metrics_port=_port("metrics_port", raw("metrics_port"), default_metrics),
        log_format=log_format,  # type: ignore[arg-type]
        log_level=level,
        event_loop=event_loop,  # type: ignore[arg-type]
        local_mode=local_mode,
        var_dir=var_dir,
        signing_key_file=_path(raw("signing_key_file")),
        jwks_url=raw("jwks_url"),
        jwks_file=_path(raw("jwks_file")),
        grace_seconds=_seconds("grace_seconds", raw("grace_seconds"), 10.0),
        drain_seconds=_seconds("drain_seconds", raw("drain_seconds"), 0.5 if local_mode else 5.0),
        max_connection_age_seconds=_seconds(
            "max_connection_age_seconds", raw("max_connection_age_seconds"), 300.0
        ),
        revocation_poll_seconds=_seconds(
            "revocation_poll_seconds", raw("revocation_poll_seconds"), 2.0
        ),
        database_url=raw("database_url"),
        lobby_address=_address("lobby", raw),
        table_address=_address("table", raw),
        scoring_address=_address("scoring", raw),
        rules_address=_address("rules", raw),
        bot_address=_address("bot", raw),
        access_token_seconds=_positive("access_token_seconds", raw("access_token_seconds"), 900.0),
        refresh_token_seconds=_positive(
            "refresh_token_seconds", raw("refresh_token_seconds"), 30 * 24 * 3600.0
        ),
        jwks_port=_port("jwks_port", raw("jwks_port"), 9106),
        quick_match_wait_seconds=_seconds(
            "quick_match_wait_seconds", raw("quick_match_wait_seconds"), 30.0
        ),
        tournament_lease_seconds=_positive(
            "tournament_lease_seconds", raw("tournament_lease_seconds"), 15.0
        ),
        login_limit_per_minute=_count("login_limit_per_minute", raw, 10),
        host_table_limit_per_minute=_count("host_table_limit_per_minute", raw, 10),
        quick_match_limit_per_minute=_count("quick_match_limit_per_minute", raw, 20),
        new_guest_limit_per_address_per_minute=_count(
            "new_guest_limit_per_address_per_minute", raw, 10
        ),
        host_table_limit_per_address_per_minute=_count(
            "host_table_limit_per_address_per_minute", raw, 30
        ),
        expert_seconds=_positive("expert_seconds", raw("expert_seconds"), 0.8),
        expert_playouts=_count("expert_playouts", raw, 96),
        cors_origins=tuple(
            origin.strip() for origin in (raw("cors_origins") or "").split(",") if origin.strip()
        ),
        web_dir=Path(raw("web_dir") or "web/dist"),
        http_header_timeout_seconds=_positive(
            "http_header_timeout_seconds", raw("http_header_timeout_seconds"), 10.0
        ),
        http_body_timeout_seconds=_positive(
            "http_body_timeout_seconds", raw("http_body_timeout_seconds"), 30.0
        ),
        http_keep_alive_seconds=_positive(
            "http_keep_alive_seconds", raw("http_keep_alive_seconds"), 75.0
        ),
        http_max_connections=_count("http_max_connections", raw, 4096),
        push_fcm_credentials_file=_path(raw("push_fcm_credentials_file")),
        push_fcm_url=_base_url("push_fcm_url", raw("push_fcm_url"), "https://fcm.googleapis.com"),
        push_apns_key_file=_path(raw("push_apns_key_file")),
        push_apns_key_id=raw("push_apns_key_id"),
        push_apns_team_id=raw("push_apns_team_id"),
        push_apns_topic=raw("push_apns_topic"),
        push_apns_url=_base_url(
            "push_apns_url", raw("push_apns_url"), "https://api.push.apple.com"
        ),
        push_webhook_secret_file=_path(raw("push_webhook_secret_file")),
        push_webhook_allow_loopback=_bool(
            "push_webhook_allow_loopback", raw("push_webhook_allow_loopback"), default=False
        ),
        push_ca_file=_path(raw("push_ca_file")),
        chips_starting_grant=_chips("chips_starting_grant", raw("chips_starting_grant"), 1000),
        chips_daily_amount=_chips("chips_daily_amount", raw("chips_daily_amount"), 100),
        chips_daily_hours=_positive("chips_daily_hours", raw("chips_daily_hours"), 24.0),
        chip_stakes=_stakes(raw("chip_stakes")),
        chip_fee_percent=_fee_percent(raw("chip_fee_percent")),
    )
    if settings.jwks_url and settings.jwks_file:
        raise ConfigError("set jwks_url or jwks_file, not both")
    return settings


def _address(peer: str, raw: Callable[[str], str | None]) -> str:
    """The ``peer`` service's gRPC target: as set, else localhost on its default port."""
    return raw(f"{peer}_address") or f"127.0.0.1:{SERVICE_PORTS[peer][0]}"


def _bool(name: str, value: str | None, *, default: bool) -> bool:
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ConfigError(f"{name} must be 1/0, true/false, yes/no or on/off, not {value!r}")


def _port(name: str, value: str | None, default: int) -> int:
    if value is None:
        return default
    try:
        port = int(value)
    except ValueError:
        raise ConfigError(f"{name} must be a port number, not {value!r}") from None
    if not 0 <= port <= 65535:
        raise ConfigError(f"{name} must be between 0 and 65535, not {port}")
    return port


def _seconds(name: str, value: str | None, default: float) -> float:
    if value is None:
        return default
    try:
        seconds = float(value)
    except ValueError:
        raise ConfigError(f"{name} must be a number of seconds, not {value!r}") from None
    if not seconds >= 0:  # negative or NaN
        raise ConfigError(f"{name} must be zero or more seconds, not {value!r}")
    return seconds


def _positive(name: str, value: str | None, default: float) -> float:
    seconds = _seconds(name, value, default)
    if seconds <= 0:
        raise ConfigError(f"{name} must be more than zero seconds, not {value!r}")
    return seconds


def _count(name: str, raw: Callable[[str], str | None], default: int) -> int:
    value = raw(name)
    if value is None:
        return default
    try:
        count = int(value)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, not {value!r}") from None
    if count < 1:
        raise ConfigError(f"{name} must be at least 1, not {count}")
    return count


#: The most chips one setting may name (a stake, a grant): far below int64 once four stakes
#: are in a pot, so no sum of them can overflow the ledger's BIGINT columns.
CHIPS_SETTING_MAX = 10**12


def _chips(name: str, value: str | None, default: int) -> int:
    if value is None:
        return default
    try:
        chips = int(value)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number of chips, not {value!r}") from None
    if not 0 <= chips <= CHIPS_SETTING_MAX:
        raise ConfigError(f"{name} must be between 0 and {CHIPS_SETTING_MAX}, not {chips}")
    return chips


def _stakes(value: str | None) -> tuple[int, ...]:
    """The stake levels: distinct whole numbers from 1, smallest first."""
    if value is None:
        return (10, 50, 100, 500, 1000)
    stakes = set()
    for part in value.split(","):
        if not part.strip():
            continue
        stake = _chips("chip_stakes", part.strip(), 0)
        if stake < 1:
            raise ConfigError(f"chip_stakes must be at least 1 chip each, not {part.strip()!r}")
        stakes.add(stake)
    return tuple(sorted(stakes))


def _fee_percent(value: str | None) -> int:
    if value is None:
        return 5
    try:
        percent = int(value)
    except ValueError:
        raise ConfigError(f"chip_fee_percent must be a whole number, not {value!r}") from None
    if not 0 <= percent <= 50:
        raise ConfigError(f"chip_fee_percent must be between 0 and 50, not {percent}")
    return percent


def _base_url(name: str, value: str | None, default: str) -> str:
    """An http(s) base URL, without a trailing slash."""
    url = (value or default).rstrip("/")
    if not url.startswith(("https://", "http://")) or len(url) <= len("https://"):
        raise ConfigError(f"{name} must be an http(s) URL, not {value!r}")
    return url


def _path(value: str | None) -> Path | None:
    return None if value is None else Path(value)


def settings_for_tests(service: str = "test", **changes: object) -> Settings:
    """Local-mode settings on 127.0.0.1 with free ports and short drains, for in-process tests."""
    base = Settings(
        service=service,
        host="127.0.0.1",
        port=0,
        metrics_port=0,
        log_format="json",
        drain_seconds=0.0,
        grace_seconds=2.0,
        revocation_poll_seconds=0.0,
        # Every in-process test calls from 127.0.0.1: one address for all its guests and
        # hosts. A test of these limits sets them (tests/lobby/test_lobby_address_limits.py).
        new_guest_limit_per_address_per_minute=100_000,
        host_table_limit_per_address_per_minute=100_000,
    )
    return base.replace(**changes)


__all__: Sequence[str] = (
    "CHIPS_SETTING_MAX",
    "PEERS",
    "SERVICE_PORTS",
    "SETTINGS",
    "ConfigError",
    "LogFormat",
    "Settings",
    "add_arguments",
    "load_settings",
    "settings_for_tests",
)
