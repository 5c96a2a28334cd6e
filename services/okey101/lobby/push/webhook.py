"""Webhooks: a notification as a JSON POST to the URL a player registered, signed so the receiver
knows it is ours and fresh.

The request: ``Content-Type: application/json``; ``X-Okey-Timestamp``, the Unix time in seconds
when it was signed; ``X-Okey-Signature: sha256=<hex>``, the HMAC-SHA256 of ``<timestamp>.<body>``
(the timestamp's digits, a full stop, then the body's exact bytes) under the operator's webhook
secret; ``X-Okey-Delivery``, the same for every attempt at one notification (a receiver that
sees it twice has it already). A receiver recomputes the signature, compares it in constant
time, and refuses a timestamp more than 5 minutes from its own clock, so a request caught on
the way cannot be played again later (docs/push.md has the ten lines that do it).

The body: ``delivery_id``, ``kind``, ``player_id``, ``device_id``, ``sequence``, ``language``,
``title``, ``body``, ``data`` (the event's fields, as strings) and ``expires_at`` (RFC 3339).

Answers: 2xx sent; 410 means the URL is gone (the device is removed); 408, 425, 429 and 5xx are
retried, after Retry-After; anything else (a redirect included: none is followed) is a rejected
notification. The URL's host is resolved before each request and refused if it is not a public
address (loopback only where ``push_webhook_allow_loopback`` allows it), so a player cannot make
the lobby call into its own network; in a cluster the lobby's egress policy refuses private
ranges as well.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import json
import socket
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

import httpx

from okey101.lobby.push.delivery import Notification, Outcome, by_status, http_client
from okey101.lobby.push.delivery import network_failure as no_answer
from okey101.platform.config import ConfigError

#: The least a webhook secret holds.
SECRET_MIN_BYTES: Final = 32
#: How old a signed request a receiver should still take (docs/push.md).
TOLERANCE_SECONDS: Final = 300
TIMESTAMP_HEADER: Final = "X-Okey-Timestamp"
SIGNATURE_HEADER: Final = "X-Okey-Signature"
DELIVERY_HEADER: Final = "X-Okey-Delivery"


def load_secret(path: Path) -> bytes:
    """The webhook secret: the file's first line (ConfigError if shorter than 32 bytes)."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError as error:
        raise ConfigError(f"cannot read the webhook secret {path}: {error}") from None
    secret = lines[0].strip() if lines else b""
    if len(secret) < SECRET_MIN_BYTES:
        raise ConfigError(f"the webhook secret {path} must hold at least {SECRET_MIN_BYTES} bytes")
    return secret


def signature(secret: bytes, timestamp: str, body: bytes) -> str:
    """``sha256=<hex>``: the HMAC-SHA256 of ``<timestamp>.<body>`` under ``secret``."""
    digest = hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def address_allowed(address: str, *, allow_loopback: bool) -> bool:
    """Whether a webhook may be sent to ``address``: a public one (or loopback, if allowed)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return allow_loopback
    return ip.is_global and not ip.is_multicast


def url_problem(url: str, *, allow_loopback: bool) -> str | None:
    """Why ``url`` cannot be a webhook (None: it can): the registration's check."""
    if any(character.isspace() or not character.isprintable() for character in url):
        return "characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "malformed"
    host = (parts.hostname or "").lower()
    if not host or port == 0:
        return "host"
    if parts.username is not None or parts.password is not None:
        return "credentials"
    loopback = host == "localhost" or host.endswith(".localhost")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        literal = False
    else:
        literal = True
        loopback = ipaddress.ip_address(host).is_loopback
        if not address_allowed(host, allow_loopback=allow_loopback):
            return "address"
    if loopback and not allow_loopback:
        return "address"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and allow_loopback and loopback and (literal or host == "localhost"):
        return None
    return "scheme"


class WebhookSender:
    """Sends notifications to webhooks (module docstring)."""

    platform = "webhook"

    def __init__(self, secret: bytes, ca_file: Path | None, *, allow_loopback: bool) -> None:
        self._secret = secret
        self._allow_loopback = allow_loopback
        self._client = http_client(ca_file)

    async def send(self, note: Notification) -> Outcome:
        parts = urlsplit(note.token)
        host = parts.hostname or ""
        try:
            found = await asyncio.get_running_loop().getaddrinfo(
                host,
                parts.port or (443 if parts.scheme == "https" else 80),
                type=socket.SOCK_STREAM,
            )
        except OSError as error:
            return no_answer(error)
        refused = [
            str(info[4][0])
            for info in found
            if not address_allowed(str(info[4][0]), allow_loopback=self._allow_loopback)
        ]
        if refused or not found:
            return Outcome("gone", detail="not a public address")
        body = json.dumps(document(note), separators=(",", ":"), ensure_ascii=False).encode()
        timestamp = str(int(time.time()))
        headers = {
            "content-type": "application/json",
            TIMESTAMP_HEADER: timestamp,
            SIGNATURE_HEADER: signature(self._secret, timestamp, body),
            DELIVERY_HEADER: note.delivery_id,
        }
        try:
            response = await self._client.post(note.token, content=body, headers=headers)
        except httpx.HTTPError as error:
            return no_answer(error)
        if response.status_code == 410:
            return Outcome("gone", detail="410")
        return by_status(response)

    async def aclose(self) -> None:
        await self._client.aclose()


def document(note: Notification) -> dict[str, object]:
    """The JSON body of ``note`` (module docstring)."""
    expires = datetime.fromtimestamp(note.expires_us / 1_000_000, UTC)
    return {
        "delivery_id": note.delivery_id,
        "kind": note.kind,
        "player_id": note.player_id,
        "device_id": note.device_id,
        "sequence": int(note.data.get("sequence", "0")),
        "language": note.language,
        "title": note.title,
        "body": note.body,
        "data": dict(note.data),
        "expires_at": expires.isoformat(timespec="seconds").replace("+00:00", "Z"),
    }


__all__ = [
    "DELIVERY_HEADER",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "TOLERANCE_SECONDS",
    "WebhookSender",
    "address_allowed",
    "document",
    "load_secret",
    "signature",
    "url_problem",
]
