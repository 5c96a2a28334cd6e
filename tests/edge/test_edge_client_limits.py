"""Issue #32's holes that a client reaches through the edge as well as over gRPC, end to end:
the real services and the edge, called as a browser would.

- A display name with a control character is refused by TableService.Sit as by LoginGuest
  (INVALID_ARGUMENT ``BAD_DISPLAY_NAME``), through the edge too.
- Guests minted from one client address are limited: the edge tells the lobby the client's
  address (its peer, never a header the client wrote), so fresh device ids and a forged
  ``X-Forwarded-For`` do not buy more guests.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from google.rpc import error_details_pb2

from okey101.stack import FAST, local_stack, start_edge

from support.http_calls import post

pytestmark = pytest.mark.slow

#: The lobby's guests per client address a minute, low enough to reach in a test.
NEW_GUESTS = 4


@pytest.fixture(scope="module")
def edge() -> Iterator[tuple[int, Any]]:
    """The edge's port, and the first guest of its one client address (the limit's window is
    a minute: the guests the tests make here share one budget)."""
    env = {**FAST, "OKEY_NEW_GUEST_LIMIT_PER_ADDRESS_PER_MINUTE": str(NEW_GUESTS)}
    with local_stack(env=env) as stack:
        port = start_edge(stack).port
        status, login = new_guest(port)
        assert status == 200, login
        yield port, login


def call(port: int, path: str, message: dict[str, Any], **headers: str) -> tuple[int, Any]:
    status, _headers, body = post(
        port, path, json.dumps(message).encode(), "application/json", **headers
    )
    return status, json.loads(body) if body else None


def reason(answer: Any) -> str:
    """The ErrorInfo reason of a Connect error."""
    for detail in answer.get("details", []):
        if detail.get("type") == "google.rpc.ErrorInfo":
            value = detail["value"]
            info = error_details_pb2.ErrorInfo.FromString(
                base64.b64decode(value + "=" * (-len(value) % 4))
            )
            return info.reason
    return ""


def new_guest(port: int, **headers: str) -> tuple[int, Any]:
    return call(
        port,
        "/okey.v1.LobbyService/LoginGuest",
        {"requestId": uuid.uuid4().hex, "deviceId": f"d-{uuid.uuid4().hex}", "displayName": "Ali"},
        **headers,
    )


def test_guests_are_limited_per_client_address_whatever_its_headers(
    edge: tuple[int, Any],
) -> None:
    port, _first = edge
    # The fixture's guest was the first of the budget; fresh devices and forged addresses.
    answers = [
        new_guest(port, X_Forwarded_For=f"203.0.113.{index}") for index in range(NEW_GUESTS + 1)
    ]
    statuses = [status for status, _answer in answers]
    assert statuses[: NEW_GUESTS - 1] == [200] * (NEW_GUESTS - 1), answers
    status, answer = answers[NEW_GUESTS - 1]
    assert status == 429, answer
    assert answer["code"] == "resource_exhausted"
    assert reason(answer) == "RATE_LIMITED"


def test_sit_refuses_a_control_character_in_a_name_through_the_edge(
    edge: tuple[int, Any],
) -> None:
    port, login = edge
    bearer = f"Bearer {login['tokens']['accessToken']}"
    status, hosted = call(
        port,
        "/okey.v1.LobbyService/HostTable",
        {"requestId": uuid.uuid4().hex, "name": "names", "hostSeat": 0},
        Authorization=bearer,
    )
    assert status == 200, hosted
    table_id = hosted["table"]["tableId"]
    for name in ("Ali\x1b[2J", "Ali\u202eevil", "Ali\nBob", "Ali\x00"):
        status, answer = call(
            port,
            "/okey.v1.TableService/Sit",
            {"requestId": uuid.uuid4().hex, "tableId": table_id, "displayName": name},
            Authorization=bearer,
            x_okey_table_id=table_id,
        )
        assert status == 400, (name, answer)
        assert answer["code"] == "invalid_argument"
        assert reason(answer) == "BAD_DISPLAY_NAME", answer
