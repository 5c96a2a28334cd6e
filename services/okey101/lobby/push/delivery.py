"""What every push sender shares: the notification one device gets (``Notification``), what a
provider's answer means for it (``Outcome``), the HTTP clients (``http_client``: the system's CA
certificates plus ``push_ca_file``), and Retry-After.

A provider's answer is one of four verdicts, and the sender loop (``sender``) acts on it:

- ``sent``: the provider took it;
- ``retry``: it may take it later (429, a 5xx, the network, an expired credential): again after
  a back-off, never sooner than the answer's Retry-After;
- ``gone``: the token will never work again (FCM UNREGISTERED, APNs Unregistered or
  BadDeviceToken, a webhook's 410): the device is removed, with its notifications;
- ``rejected``: the provider refused this one notification for good (a 4xx that is not about the
  token): dropped, and logged, since it is a fault of ours.
"""

from __future__ import annotations

import email.utils
import ssl
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, Protocol

import httpx

Verdict = Literal["sent", "retry", "gone", "rejected"]

#: How long one request to a provider may take.
TIMEOUT_SECONDS: Final = 10.0
#: Statuses after which the same request may succeed later.
TRANSIENT: Final = frozenset({408, 425, 429, 500, 502, 503, 504})
USER_AGENT: Final = "okey101-push/1"


@dataclass(frozen=True)
class Notification:
    """One notification for one device (``texts`` made its words and data)."""

    #: The same for every attempt at this event and device (APNs' apns-id, the webhook's
    #: X-Okey-Delivery), so a receiver can tell a retry from a new notification.
    delivery_id: str
    player_id: str
    device_id: str
    #: The FCM registration token, the APNs device token or the webhook URL.
    token: str
    language: str
    #: ``TURN_STARTED``, ``SEAT_AWAY``, ...
    kind: str
    title: str
    body: str
    data: dict[str, str]
    collapse_key: str
    #: After this (microseconds since the epoch) it is not worth showing.
    expires_us: int


@dataclass(frozen=True)
class Outcome:
    """What a provider's answer means for a notification (module docstring)."""

    verdict: Verdict
    #: The provider's Retry-After, in seconds (``retry`` only).
    retry_after: float | None = None
    #: The provider's reason, for the log (never a token).
    detail: str = field(default="")


class Sender(Protocol):
    """A platform's sender: one notification at a time (many at once over one client)."""

    platform: str

    async def send(self, note: Notification) -> Outcome: ...

    async def aclose(self) -> None: ...


def ssl_context(ca_file: Path | None) -> ssl.SSLContext:
    """The system's CA certificates, plus ``ca_file``'s if given."""
    context = ssl.create_default_context()
    if ca_file is not None:
        context.load_verify_locations(cafile=str(ca_file))
    return context


def http_client(
    ca_file: Path | None, *, http1: bool = True, http2: bool = True
) -> httpx.AsyncClient:
    """An HTTP client for a provider: TLS verified, no redirects followed, no proxy from the
    environment, ``TIMEOUT_SECONDS`` a request, connections kept for many requests (HTTP/2
    multiplexes them on one)."""
    return httpx.AsyncClient(
        http1=http1,
        http2=http2,
        verify=ssl_context(ca_file),
        timeout=TIMEOUT_SECONDS,
        follow_redirects=False,
        trust_env=False,
        headers={"user-agent": USER_AGENT},
        limits=httpx.Limits(max_connections=64, max_keepalive_connections=16),
    )


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """A Retry-After header's wait in seconds (a number of seconds, or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def by_status(response: httpx.Response, detail: str = "") -> Outcome:
    """The verdict of a status no provider gives a meaning of its own: 2xx sent, a transient
    one retried (after its Retry-After), anything else rejected."""
    status = response.status_code
    if 200 <= status < 300:
        return Outcome("sent")
    if status in TRANSIENT:
        return Outcome(
            "retry", retry_after(response.headers.get("retry-after")), detail or str(status)
        )
    return Outcome("rejected", detail=detail or str(status))


def network_failure(error: Exception) -> Outcome:
    """A request that got no answer (refused, reset, timed out): tried again later."""
    return Outcome("retry", detail=f"{type(error).__name__}: {str(error)[:120]}")


__all__ = [
    "TIMEOUT_SECONDS",
    "TRANSIENT",
    "Notification",
    "Outcome",
    "Sender",
    "Verdict",
    "by_status",
    "http_client",
    "network_failure",
    "retry_after",
    "ssl_context",
]
