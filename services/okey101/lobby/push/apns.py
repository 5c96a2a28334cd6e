"""APNs' provider API: an HTTP/2 ``POST {base}/3/device/<device token>`` per notification,
authenticated by a provider token (token-based authentication).

The provider token is a JWT signed ES256 with the operator's .p8 key: header ``alg`` ES256 and
``kid`` the key id, claims ``iss`` the team id and ``iat`` when it was made. APNs refuses one
older than an hour (403 ExpiredProviderToken) and one made again sooner than 20 minutes after the
last (429 TooManyProviderTokenUpdates), so one is made every 40 minutes, and after an
ExpiredProviderToken only if the one held is 20 minutes old.

Headers: ``apns-topic`` (the app's bundle id), ``apns-push-type: alert``, ``apns-priority: 10``,
``apns-expiration`` (when the notification stops being worth showing, in epoch seconds),
``apns-collapse-id`` (a newer notification about the same table replaces the older one) and
``apns-id`` (the same for every attempt). The payload: ``aps`` (``alert`` with title and body,
``sound``, ``thread-id``) and the event's data beside it. Answers: 200 sent; 410 (Unregistered,
ExpiredToken) and 400 BadDeviceToken or DeviceTokenNotForTopic mean the token is gone; 429, 500
and 503 are retried; 403 ExpiredProviderToken with a new provider token; any other answer is a
rejected notification (the log has APNs' reason).
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any, Final

import httpx
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from okey101.lobby.push.delivery import (
    Notification,
    Outcome,
    by_status,
    http_client,
    network_failure,
)
from okey101.platform.config import ConfigError

#: A provider token is made again after this long (APNs takes one for an hour).
TOKEN_REFRESH_SECONDS: Final = 40 * 60
#: ... and never sooner than this after the last (APNs' TooManyProviderTokenUpdates).
TOKEN_MIN_AGE_SECONDS: Final = 20 * 60
_GONE_REASONS: Final = frozenset(
    {"BadDeviceToken", "DeviceTokenNotForTopic", "Unregistered", "ExpiredToken"}
)


def load_key(path: Path) -> ec.EllipticCurvePrivateKey:
    """The .p8 key (PKCS#8 PEM, P-256), or ConfigError."""
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as error:
        raise ConfigError(f"cannot read the APNs key {path}: {error}") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise ConfigError(f"the APNs key {path} is not a P-256 (ES256) key")
    return key


class ApnsSender:
    """Sends notifications through APNs (module docstring)."""

    platform = "apns"

    def __init__(
        self,
        key_file: Path,
        *,
        key_id: str,
        team_id: str,
        topic: str,
        base_url: str,
        ca_file: Path | None,
    ) -> None:
        self._key = load_key(key_file)
        self._key_id = key_id
        self._team_id = team_id
        self.topic = topic
        self.base_url = base_url
        # HTTP/2 only, as APNs requires.
        self._client = http_client(ca_file, http1=False, http2=True)
        self._token = ""
        self._issued = 0.0

    def provider_token(self, *, expired: bool = False) -> str:
        """The provider token to send now (module docstring: when a new one is made)."""
        now = time.time()
        age = now - self._issued
        if (
            not self._token
            or age >= TOKEN_REFRESH_SECONDS
            or (expired and age >= TOKEN_MIN_AGE_SECONDS)
        ):
            self._token = jwt.encode(
                {"iss": self._team_id, "iat": int(now)},
                self._key,
                algorithm="ES256",
                headers={"kid": self._key_id},
            )
            self._issued = now
        return self._token

    async def send(self, note: Notification) -> Outcome:
        headers = {
            "authorization": f"bearer {self.provider_token()}",
            "apns-topic": self.topic,
            "apns-push-type": "alert",
            "apns-priority": "10",
            "apns-expiration": str(note.expires_us // 1_000_000),
            "apns-collapse-id": note.collapse_key,
            "apns-id": str(uuid.UUID(note.delivery_id)),
            "content-type": "application/json",
        }
        try:
            response = await self._client.post(
                f"{self.base_url}/3/device/{note.token}",
                content=json.dumps(payload(note), separators=(",", ":")).encode(),
                headers=headers,
            )
        except httpx.HTTPError as error:
            return network_failure(error)
        return self._verdict(response)

    def _verdict(self, response: httpx.Response) -> Outcome:
        status = response.status_code
        if status == 200:
            return Outcome("sent")
        try:
            reason = str(response.json().get("reason", ""))
        except (ValueError, AttributeError):
            reason = ""
        detail = f"{status} {reason}".strip()
        if status == 410 or (status == 400 and reason in _GONE_REASONS):
            return Outcome("gone", detail=detail)
        if status == 403 and reason == "ExpiredProviderToken":
            self.provider_token(expired=True)
            return Outcome("retry", detail=detail)
        if status == 403:
            # A key or team APNs does not take: the operator's to fix; the notification may
            # still go once they have (or expire meanwhile).
            return Outcome("retry", detail=detail)
        return by_status(response, detail)

    async def aclose(self) -> None:
        await self._client.aclose()


def payload(note: Notification) -> dict[str, Any]:
    """The notification's JSON payload: ``aps`` and the event's data beside it."""
    body: dict[str, Any] = {
        "aps": {
            "alert": {"title": note.title, "body": note.body},
            "sound": "default",
            "thread-id": note.collapse_key,
        }
    }
    body.update({key: value for key, value in note.data.items() if key != "aps"})
    return body


__all__ = ["TOKEN_MIN_AGE_SECONDS", "TOKEN_REFRESH_SECONDS", "ApnsSender", "load_key", "payload"]
