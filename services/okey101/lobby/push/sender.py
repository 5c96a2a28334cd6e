"""The push sender, a background loop on every lobby pod (``PushSender``).

About twice a second it asks whether anything is due (one indexed read), and if so claims up to
``batch`` notifications (``outbox.claim``: the stale ones, and those of players with a stream
open, are dropped there), sends them at once (``concurrency`` at a time; HTTP/2 carries them on
one connection per provider), and records each outcome (``outbox.settle``), then claims again
while there is more. A failure worth retrying (``delivery``: 429, 5xx, the network) is tried
again after ``retry_base`` seconds doubling with each attempt (up to ``retry_max``, with a
tenth of jitter), never sooner than the provider's Retry-After; one whose next try would come
after it expires, or the ``max_attempts``-th, is dropped. A token the provider says is gone
removes its device. On shutdown (``stop``) it claims nothing more and lets the batch in
flight finish.

Metrics (no player, table or device label): ``okey_lobby_push_sent_total`` by platform,
``okey_lobby_push_dropped_total`` by reason (``stream``: a stream told the player, which is the
common case and no fault; ``expired``, ``superseded``, ``rejected``, ``failed``, ``lost``,
``unconfigured``, ``gone``), ``okey_lobby_push_failed_total`` by platform and what followed
(retry, gone, rejected), and ``okey_lobby_push_send_seconds`` by platform.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from typing import Final

from prometheus_client import Counter, Histogram

from okey101.lobby.push import texts
from okey101.lobby.push.delivery import Notification, Outcome
from okey101.lobby.push.outbox import DROPPED, PENDING, SENT, Due, PushOutbox, Settled
from okey101.lobby.push.providers import PushProviders
from okey101.lobby.records import US, now_us
from okey101.platform.logs import get_logger

_log = get_logger(service="lobby")

PUSH_SENT: Final = Counter(
    "okey_lobby_push_sent_total",
    "Push notifications the provider accepted, by platform.",
    ("platform",),
)
PUSH_DROPPED: Final = Counter(
    "okey_lobby_push_dropped_total",
    "Push notifications not sent, by reason (stream: the player's open stream told them).",
    ("reason",),
)
PUSH_FAILED: Final = Counter(
    "okey_lobby_push_failed_total",
    "Push attempts a provider did not accept, by platform and what followed (retry, gone, "
    "rejected).",
    ("platform", "outcome"),
)
PUSH_SEND_SECONDS: Final = Histogram(
    "okey_lobby_push_send_seconds",
    "How long a provider took to answer one notification, by platform.",
    ("platform",),
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)


class PushSender:
    """Sends the push outbox's due notifications (module docstring)."""

    def __init__(
        self,
        outbox: PushOutbox,
        providers: PushProviders,
        *,
        interval: float = 0.5,
        batch: int = 200,
        concurrency: int = 64,
        lease_seconds: float = 60.0,
        retry_base: float = 1.0,
        retry_max: float = 300.0,
        max_attempts: int = 10,
    ) -> None:
        self._outbox = outbox
        self._providers = providers
        self._interval = interval
        self._batch = batch
        self._slots = asyncio.Semaphore(concurrency)
        self._lease_us = int(lease_seconds * US)
        self._retry_base = retry_base
        self._retry_max = retry_max
        self._max_attempts = max_attempts
        self._stopping = asyncio.Event()
        #: Set between batches: what ``stop`` waits for.
        self._idle = asyncio.Event()
        self._idle.set()

    async def run(self) -> None:
        while not self._stopping.is_set():
            try:
                while await self.send_due() >= self._batch and not self._stopping.is_set():
                    pass
            except Exception as error:
                _log.warning("sending push notifications failed; retrying", error=str(error)[:300])
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self._interval)

    async def stop(self, timeout: float = 5.0) -> None:
        """Claim nothing more, and let the batch being sent finish (``timeout`` at most: what
        is still being sent then is dropped as ``lost`` a minute later, never sent twice)."""
        self._stopping.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout)

    async def send_due(self) -> int:
        """Claim, send and settle one batch; how many were claimed (sent or dropped)."""
        if not await self._outbox.any_due():
            return 0
        self._idle.clear()
        try:
            claim = await self._outbox.claim(
                self._batch, self._lease_us, self._providers.configured
            )
            for reason, count in claim.dropped.items():
                PUSH_DROPPED.labels(reason).inc(count)
            outcomes = await asyncio.gather(*(self._send(due) for due in claim.due))
            await self._outbox.settle(outcomes)
        finally:
            self._idle.set()
        return len(claim.due) + sum(claim.dropped.values())

    async def _send(self, due: Due) -> Settled:
        platform = due.device.platform
        sender = self._providers.senders[platform]
        title, body = texts.title_and_body(due.event, due.device.language)
        note = Notification(
            delivery_id=due.delivery_id,
            player_id=due.player_id,
            device_id=due.device.device_id,
            token=due.device.token,
            language=due.device.language,
            kind=texts.kind_name(due.event.kind),
            title=title,
            body=body,
            data=texts.data_of(due.event),
            collapse_key=texts.collapse_key(due.event),
            expires_us=due.expires_us,
        )
        async with self._slots:
            began = time.perf_counter()
            try:
                outcome = await sender.send(note)
            except Exception as error:  # a sender's fault: never lose the loop for it
                _log.exception("a push sender failed", platform=platform)
                outcome = Outcome("retry", detail=f"{type(error).__name__}")
            PUSH_SEND_SECONDS.labels(platform).observe(time.perf_counter() - began)
        return self._settled(due, outcome)

    def _settled(self, due: Due, outcome: Outcome) -> Settled:
        platform = due.device.platform
        if outcome.verdict == "sent":
            PUSH_SENT.labels(platform).inc()
            return Settled(due, SENT)
        PUSH_FAILED.labels(platform, outcome.verdict).inc()
        fields = {"platform": platform, "kind": texts.kind_name(due.event.kind),
                  "attempt": due.attempt, "detail": outcome.detail}  # fmt: skip
        if outcome.verdict == "gone":
            _log.info("push token gone: its device is removed", device_id=due.device.device_id,
                      **fields)  # fmt: skip
            PUSH_DROPPED.labels("gone").inc()
            return Settled(due, DROPPED, "gone", gone=True)
        if outcome.verdict == "rejected":
            _log.warning("push notification rejected", **fields)
            PUSH_DROPPED.labels("rejected").inc()
            return Settled(due, DROPPED, "rejected")
        if due.attempt >= self._max_attempts:
            PUSH_DROPPED.labels("failed").inc()
            _log.warning("push notification given up", **fields)
            return Settled(due, DROPPED, "failed")
        backoff = min(self._retry_max, self._retry_base * 2 ** (due.attempt - 1))
        delay = max(outcome.retry_after or 0.0, backoff * random.uniform(0.9, 1.1))
        next_attempt = now_us() + int(delay * US)
        if next_attempt >= due.expires_us:
            PUSH_DROPPED.labels("expired").inc()
            return Settled(due, DROPPED, "expired")
        _log.info("push notification to be retried", delay=round(delay, 2), **fields)
        return Settled(due, PENDING, next_attempt_us=next_attempt)


__all__ = ["PUSH_DROPPED", "PUSH_FAILED", "PUSH_SEND_SECONDS", "PUSH_SENT", "PushSender"]
