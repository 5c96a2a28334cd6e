"""Calling the other services: one channel per peer, opened lazily, with a service token.

A service starts and reports SERVING without its peers running (docs/architecture.md), so a
channel is only opened on the first call. Channels use client-side round-robin (a ``dns:///``
target over a Kubernetes headless Service reaches every pod) and gRPC's own retry policy for
UNAVAILABLE, which is what a draining pod answers; every state-changing call carries a
``request_id``, so a retried call is applied at most once.

Service tokens are signed by the calling service with the deployment's signing key (the local
development key in local mode) and reused until a minute before they expire.

    peers = PeerChannels(settings)
    stub = rules_pb2_grpc.RulesServiceStub(peers.channel("rules"))
    answer = await stub.ApplyAction(request, metadata=peers.metadata(), timeout=2)
    ...
    await peers.close()
"""

from __future__ import annotations

import json
import time
from typing import Final

import grpc
import grpc.aio

from okey101.platform.auth import SigningKey, TokenIssuer, signing_key_for
from okey101.platform.config import PEERS, Settings

#: Service tokens live this long; a new one is signed a minute before the old one expires.
SERVICE_TOKEN_SECONDS: Final = 600
_RENEW_MARGIN: Final = 60

# Round-robin across every address the name resolves to; UNAVAILABLE retried with back-off.
_SERVICE_CONFIG: Final = json.dumps(
    {
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [
            {
                "name": [{}],
                "retryPolicy": {
                    "maxAttempts": 4,
                    "initialBackoff": "0.05s",
                    "maxBackoff": "1s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ],
    }
)

CHANNEL_OPTIONS: Final[tuple[tuple[str, object], ...]] = (
    ("grpc.service_config", _SERVICE_CONFIG),
    ("grpc.enable_retries", 1),
    ("grpc.keepalive_time_ms", 60_000),
    ("grpc.keepalive_timeout_ms", 20_000),
    # A short reconnect back-off: a restarted peer is used again within about a second.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2_000),
)


class ServiceTokens:
    """Short-lived service tokens for ``subject``, signed with ``key`` and reused while fresh."""

    def __init__(self, key: SigningKey, subject: str) -> None:
        self._issuer = TokenIssuer(key)
        self._subject = subject
        self._token = ""
        self._expires = 0.0

    def token(self) -> str:
        now = time.time()
        if now >= self._expires - _RENEW_MARGIN:
            self._token = self._issuer.issue(
                self._subject, "service", ttl_seconds=SERVICE_TOKEN_SECONDS, now=now
            )
            self._expires = now + SERVICE_TOKEN_SECONDS
        return self._token

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """Call metadata carrying a fresh token."""
        return (("authorization", f"Bearer {self.token()}"),)


class PeerChannels:
    """Channels to the other services of ``settings`` and the token to call them with."""

    def __init__(self, settings: Settings, *, signing_key: SigningKey | None = None) -> None:
        self._settings = settings
        key = signing_key or signing_key_for(settings)
        self._tokens = ServiceTokens(key, f"service:{settings.service}") if key else None
        self._channels: dict[str, grpc.aio.Channel] = {}

    def address(self, peer: str) -> str:
        if peer not in PEERS:
            raise ValueError(f"no such service: {peer!r}")
        address: str = getattr(self._settings, f"{peer}_address")
        return address

    def channel(self, peer: str) -> grpc.aio.Channel:
        """The channel to ``peer`` (opened on first use; gRPC connects on the first call)."""
        channel = self._channels.get(peer)
        if channel is None:
            channel = grpc.aio.insecure_channel(self.address(peer), options=CHANNEL_OPTIONS)
            self._channels[peer] = channel
        return channel

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """Metadata with a service token, or none when this service has no signing key."""
        return self._tokens.metadata() if self._tokens else ()

    async def close(self) -> None:
        channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            await channel.close()
