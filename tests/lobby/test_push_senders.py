"""The senders' reading of the providers' answers (FCM's and APNs' documented errors), APNs'
provider token cadence, the webhook URL rules and Retry-After, without a network."""

from __future__ import annotations

import email.utils
import time
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from okey101.lobby.push import apns as apns_module
from okey101.lobby.push.apns import ApnsSender
from okey101.lobby.push.delivery import retry_after
from okey101.lobby.push.fcm import FcmSender
from okey101.lobby.push.webhook import address_allowed, url_problem
from okey101.platform.config import ConfigError

from support.push_servers import make_apns_key, make_service_account

FCM_ERROR = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"


def _answer(status: int, document: Any = None, **headers: str) -> httpx.Response:
    return httpx.Response(status, json=document, headers=headers)


def _fcm_error(status: int, name: str, *details: dict[str, Any]) -> dict[str, Any]:
    return {"error": {"code": status, "status": name, "details": list(details)}}


@pytest.mark.parametrize(
    ("status", "document", "headers", "verdict", "after"),
    [
        (200, {"name": "projects/p/messages/1"}, {}, "sent", None),
        (404, _fcm_error(404, "NOT_FOUND", {"@type": FCM_ERROR, "errorCode": "UNREGISTERED"}),
         {}, "gone", None),
        # The documentation's invalid registration token: INVALID_ARGUMENT, an FcmError.
        (400, _fcm_error(400, "INVALID_ARGUMENT",
                         {"@type": FCM_ERROR, "errorCode": "INVALID_ARGUMENT"}), {}, "gone", None),
        # ... and its invalid data value: a BadRequest naming another field.
        (400, _fcm_error(400, "INVALID_ARGUMENT", {"@type": BAD_REQUEST, "fieldViolations": [
            {"field": "message.data[0].value"}]}), {}, "rejected", None),
        (403, _fcm_error(403, "PERMISSION_DENIED",
                         {"@type": FCM_ERROR, "errorCode": "SENDER_ID_MISMATCH"}),
         {}, "gone", None),
        (429, _fcm_error(429, "RESOURCE_EXHAUSTED",
                         {"@type": FCM_ERROR, "errorCode": "QUOTA_EXCEEDED"}),
         {"retry-after": "30"}, "retry", 30.0),
        (503, _fcm_error(503, "UNAVAILABLE", {"@type": FCM_ERROR, "errorCode": "UNAVAILABLE"}),
         {}, "retry", None),
        (500, None, {}, "retry", None),
        (401, _fcm_error(401, "UNAUTHENTICATED"), {}, "retry", None),
        (413, None, {}, "rejected", None),
    ],
)  # fmt: skip
def test_fcm_answers_as_its_error_codes_say(
    tmp_path: Path, status: int, document: Any, headers: dict[str, str], verdict: str, after: Any
) -> None:
    account = make_service_account(tmp_path / "sa.json", "https://127.0.0.1:1/token")
    sender = FcmSender(account.path, "https://127.0.0.1:1", None)
    outcome = sender._verdict(_answer(status, document, **headers))
    assert (outcome.verdict, outcome.retry_after) == (verdict, after)
    assert sender._stale == (status == 401)  # a new access token after a 401
    assert sender.url == "https://127.0.0.1:1/v1/projects/okey101-test/messages:send"


def test_fcm_refuses_a_file_that_is_not_a_service_account(tmp_path: Path) -> None:
    bad = tmp_path / "sa.json"
    bad.write_text('{"type": "authorized_user"}')
    with pytest.raises(ConfigError, match="service account"):
        FcmSender(bad, "https://fcm.googleapis.com", None)


def _apns(tmp_path: Path) -> tuple[ApnsSender, Any]:
    key = make_apns_key(tmp_path / "AuthKey.p8")
    sender = ApnsSender(
        key.path,
        key_id=key.key_id,
        team_id=key.team_id,
        topic=key.topic,
        base_url="https://127.0.0.1:1",
        ca_file=None,
    )
    return sender, key


@pytest.mark.parametrize(
    ("status", "reason", "verdict"),
    [
        (410, "Unregistered", "gone"),
        (400, "BadDeviceToken", "gone"),
        (400, "DeviceTokenNotForTopic", "gone"),
        (400, "BadCollapseId", "rejected"),
        (413, "PayloadTooLarge", "rejected"),
        (429, "TooManyRequests", "retry"),
        (500, "InternalServerError", "retry"),
        (503, "ServiceUnavailable", "retry"),
        (403, "ExpiredProviderToken", "retry"),
        (403, "InvalidProviderToken", "retry"),
    ],
)
def test_apns_answers_as_its_reasons_say(
    tmp_path: Path, status: int, reason: str, verdict: str
) -> None:
    sender, _key = _apns(tmp_path)
    assert sender._verdict(_answer(status, {"reason": reason})).verdict == verdict


def test_the_apns_provider_token_is_made_every_40_minutes_and_never_within_20(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sender, key = _apns(tmp_path)
    now = [1_800_000_000.0]
    monkeypatch.setattr(apns_module.time, "time", lambda: now[0])
    first = sender.provider_token()
    header = jwt.get_unverified_header(first)
    claims = jwt.decode(first, key.public_key, algorithms=["ES256"], options={"verify_iat": False})
    assert (header["alg"], header["kid"]) == ("ES256", key.key_id)
    assert claims == {"iss": key.team_id, "iat": 1_800_000_000}
    now[0] += 10 * 60
    assert sender.provider_token(expired=True) == first  # APNs refuses a new one this soon
    now[0] += 15 * 60
    second = sender.provider_token(expired=True)  # 25 minutes: an expired one is replaced
    assert second != first
    now[0] += 39 * 60
    assert sender.provider_token() == second
    now[0] += 60
    assert sender.provider_token() != second  # 40 minutes


def test_an_apns_key_must_be_p256(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    other = ec.generate_private_key(ec.SECP384R1())
    path = tmp_path / "k.p8"
    path.write_bytes(
        other.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    with pytest.raises(ConfigError, match="P-256"):
        ApnsSender(path, key_id="k", team_id="t", topic="x", base_url="https://a", ca_file=None)


@pytest.mark.parametrize(
    ("url", "loopback", "problem"),
    [
        ("https://hooks.example.com/okey", False, None),
        ("https://hooks.example.com:8443/okey?x=1", False, None),
        ("https://203.0.113.9/okey", False, "address"),  # documentation range: not global
        ("https://8.8.8.8/okey", False, None),
        ("http://hooks.example.com/okey", False, "scheme"),
        ("https://10.0.0.1/", False, "address"),
        ("https://169.254.169.254/latest/meta-data", False, "address"),
        ("https://[::ffff:10.0.0.1]/", False, "address"),
        ("https://[fe80::1]/", False, "address"),
        ("https://localhost/", False, "address"),
        ("https://user:secret@hooks.example.com/", False, "credentials"),
        ("https:///nohost", False, "host"),
        ("https://hooks.example.com:99999/", False, "malformed"),
        ("https://hooks.example.com/a b", False, "characters"),
        ("http://127.0.0.1:8080/hook", False, "address"),
        ("http://127.0.0.1:8080/hook", True, None),
        ("http://localhost:8080/hook", True, None),
        ("http://hooks.example.com/", True, "scheme"),
        ("ftp://hooks.example.com/", True, "scheme"),
    ],
)
def test_webhook_urls(url: str, loopback: bool, problem: str | None) -> None:
    assert url_problem(url, allow_loopback=loopback) == problem


def test_webhook_addresses_resolved_at_send_time() -> None:
    assert address_allowed("93.184.216.34", allow_loopback=False)
    assert address_allowed("2606:2800:220:1:248:1893:25c8:1946", allow_loopback=False)
    for private in ("10.1.1.1", "192.168.0.1", "172.16.3.4", "100.64.0.1", "fd00::1", "::1"):
        assert not address_allowed(private, allow_loopback=False), private
    assert address_allowed("127.0.0.1", allow_loopback=True)
    assert not address_allowed("10.1.1.1", allow_loopback=True)


def test_retry_after_is_seconds_or_an_http_date() -> None:
    assert retry_after("120") == 120.0
    assert retry_after(None) is None and retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 28 <= (retry_after(later) or 0) <= 30
