"""FCM HTTP v1: ``POST {base}/v1/projects/{project_id}/messages:send`` with an OAuth 2.0 access
token of the operator's Firebase service account (scope ``firebase.messaging``).

The access token comes from google-auth: the service account's JSON key signs a JWT assertion,
which its ``token_uri`` exchanges for an access token (an hour's); it is fetched again a few
minutes before it expires, or at once after a 401. google-auth's refresh is synchronous: it runs
in a thread, over an httpx client that trusts what the senders trust.

The message: ``token``, ``notification`` (title, body), ``data`` (strings), ``android`` (ttl up
to the notification's expiry, high priority, the collapse key) and ``apns`` (apns-expiration,
apns-collapse-id, for iOS apps that use FCM). Answers (FCM's ErrorCode reference): 200 sent;
404 UNREGISTERED, 403 SENDER_ID_MISMATCH, and 400 INVALID_ARGUMENT about the token (an
``FcmError`` detail and no field violation outside ``message.token``) mean the token is gone;
429 QUOTA_EXCEEDED, 500 INTERNAL, 503 UNAVAILABLE are retried (honouring Retry-After), 401
after a new access token; any other 400 is a rejected message.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import google.auth.exceptions
import google.auth.transport
import httpx
from google.oauth2 import service_account

from okey101.lobby.push.delivery import (
    Notification,
    Outcome,
    by_status,
    http_client,
    network_failure,
    retry_after,
    ssl_context,
)
from okey101.platform.config import ConfigError

SCOPE: Final = "https://www.googleapis.com/auth/firebase.messaging"
FCM_ERROR: Final = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
BAD_REQUEST: Final = "type.googleapis.com/google.rpc.BadRequest"
#: FCM's longest time to live (4 weeks).
TTL_MAX_SECONDS: Final = 2_419_200
_GONE_CODES: Final = frozenset({"UNREGISTERED", "SENDER_ID_MISMATCH"})
_RETRY_CODES: Final = frozenset(
    {"QUOTA_EXCEEDED", "UNAVAILABLE", "INTERNAL", "THIRD_PARTY_AUTH_ERROR"}
)


class _AuthResponse(google.auth.transport.Response):
    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    @property
    def status(self) -> int:
        return self._response.status_code

    @property
    def headers(self) -> Mapping[str, str]:
        return dict(self._response.headers)

    @property
    def data(self) -> bytes:
        return self._response.content


class _AuthRequest(google.auth.transport.Request):
    """google-auth's transport over an httpx client (its token requests)."""

    def __init__(self, client: httpx.Client) -> None:
        self._client = client

    def __call__(
        self,
        url: str,
        method: str = "GET",
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        **_kwargs: Any,
    ) -> google.auth.transport.Response:
        try:
            response = self._client.request(
                method, url, content=body, headers=headers, timeout=timeout or 10.0
            )
        except httpx.HTTPError as error:
            # google-auth's exceptions are untyped.
            raise google.auth.exceptions.TransportError(str(error)) from error  # type: ignore[no-untyped-call]
        return _AuthResponse(response)


def load_service_account(path: Path) -> tuple[dict[str, Any], str]:
    """The service account's JSON key and its project id (ConfigError if it is not one)."""
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ConfigError(f"cannot read the FCM service account {path}: {error}") from None
    needed = ("type", "project_id", "client_email", "private_key", "token_uri")
    if not isinstance(info, dict) or info.get("type") != "service_account":
        raise ConfigError(f"{path} is not a service account's JSON key")
    missing = [name for name in needed if not info.get(name)]
    if missing:
        raise ConfigError(f"the FCM service account {path} lacks {', '.join(missing)}")
    return info, str(info["project_id"])


class FcmSender:
    """Sends notifications through FCM HTTP v1 (module docstring)."""

    platform = "fcm"

    def __init__(self, credentials_file: Path, base_url: str, ca_file: Path | None) -> None:
        info, project = load_service_account(credentials_file)
        try:
            self._credentials = service_account.Credentials.from_service_account_info(  # type: ignore[no-untyped-call]
                info, scopes=[SCOPE]
            )
        except (ValueError, google.auth.exceptions.GoogleAuthError) as error:
            raise ConfigError(f"the FCM service account {credentials_file}: {error}") from None
        self.url = f"{base_url}/v1/projects/{project}/messages:send"
        self._client = http_client(ca_file)
        self._auth_http = httpx.Client(
            verify=ssl_context(ca_file), timeout=10.0, trust_env=False, follow_redirects=False
        )
        self._lock = asyncio.Lock()
        self._stale = False

    async def _access_token(self) -> str:
        """A valid access token (fetched in a thread when there is none, it is about to expire,
        or FCM refused the last one)."""
        async with self._lock:
            if self._stale or not self._credentials.valid:
                await asyncio.to_thread(self._credentials.refresh, _AuthRequest(self._auth_http))
                self._stale = False
            return str(self._credentials.token)

    async def send(self, note: Notification) -> Outcome:
        try:
            access = await self._access_token()
        except google.auth.exceptions.GoogleAuthError as error:
            return Outcome("retry", detail=f"oauth: {str(error)[:160]}")
        try:
            response = await self._client.post(
                self.url,
                json={"message": message(note)},
                headers={"authorization": f"Bearer {access}"},
            )
        except httpx.HTTPError as error:
            return network_failure(error)
        return self._verdict(response)

    def _verdict(self, response: httpx.Response) -> Outcome:
        status = response.status_code
        if status == 200:
            return Outcome("sent")
        code, field_errors = _error_of(response)
        detail = f"{status} {code}".strip()
        if status == 401:
            self._stale = True  # a new access token for the next attempt
            return Outcome("retry", detail=detail)
        if code in _GONE_CODES or status == 404:
            return Outcome("gone", detail=detail)
        if status == 400 and code == "INVALID_ARGUMENT":
            about_token = all(name in ("message.token", "") for name in field_errors)
            return Outcome("gone" if about_token else "rejected", detail=detail)
        if code in _RETRY_CODES:
            return Outcome("retry", retry_after(response.headers.get("retry-after")), detail)
        return by_status(response, detail)

    async def aclose(self) -> None:
        await self._client.aclose()
        self._auth_http.close()


def message(note: Notification) -> dict[str, Any]:
    """The v1 ``Message`` of ``note``."""
    ttl = max(0, min(TTL_MAX_SECONDS, (note.expires_us - int(time.time() * 1e6)) // 1_000_000))
    return {
        "token": note.token,
        "notification": {"title": note.title, "body": note.body},
        "data": dict(note.data),
        "android": {
            "ttl": f"{ttl}s",
            "priority": "HIGH",
            "collapse_key": note.collapse_key,
        },
        "apns": {
            "headers": {
                "apns-expiration": str(note.expires_us // 1_000_000),
                "apns-collapse-id": note.collapse_key,
                "apns-priority": "10",
            },
            "payload": {"aps": {"sound": "default"}},
        },
    }


def _error_of(response: httpx.Response) -> tuple[str, list[str]]:
    """FCM's error code (its FcmError detail's, else the status name) and the fields a
    BadRequest detail names ("" for a BadRequest without any)."""
    try:
        error = response.json().get("error", {})
    except ValueError:
        return "", []
    if not isinstance(error, dict):
        return "", []
    code = str(error.get("status", ""))
    fields: list[str] = []
    for detail in error.get("details", ()) or ():
        if not isinstance(detail, dict):
            continue
        if detail.get("@type") == FCM_ERROR and detail.get("errorCode"):
            code = str(detail["errorCode"])
        if detail.get("@type") == BAD_REQUEST:
            violations = detail.get("fieldViolations") or [{}]
            fields += [str(v.get("field", "")) for v in violations if isinstance(v, dict)]
    return code, fields


__all__ = ["SCOPE", "FcmSender", "load_service_account", "message"]
