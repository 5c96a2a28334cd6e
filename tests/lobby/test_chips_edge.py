"""The wallet through the edge, as a browser calls it (Connect JSON and gRPC-Web over HTTP/1.1),
with the lobby and the edge as ``okey101 serve`` processes: a guest's wallet with its starting
grant, the stake levels, the daily grant and the wallet's entries; the operator's and the
table's chips calls are not routed (HTTP 404, whatever the token)."""

from __future__ import annotations

import base64
import json
import struct
import uuid
from pathlib import Path
from typing import Any

import pytest
from google.rpc import error_details_pb2
from okey.v1 import lobby_pb2

from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.stack import FAST, local_stack, start_edge

from support.http_calls import grpc_web_frames, post

pytestmark = pytest.mark.slow


def _call(port: int, method: str, message: dict[str, Any], token: str = "") -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    status, _headers, body = post(
        port,
        f"/okey.v1.LobbyService/{method}",
        json.dumps(message).encode(),
        "application/json",
        **headers,
    )
    return status, json.loads(body) if body else None


def _reason(answer: dict[str, Any]) -> str:
    by_type = {detail["type"]: detail["value"] for detail in answer["details"]}
    raw = by_type[error_details_pb2.ErrorInfo.DESCRIPTOR.full_name]
    info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))
    return str(info.reason)


def test_a_guests_wallet_through_the_edge(tmp_path: Path) -> None:
    env = {**FAST, "OKEY_CHIPS_STARTING_GRANT": "1500", "OKEY_CHIP_STAKES": "25,250"}
    with local_stack(tmp_path / "stack", env=env, services=("lobby",)) as stack:
        port = start_edge(stack).port
        status, login = _call(
            port,
            "LoginGuest",
            {
                "requestId": uuid.uuid4().hex,
                "deviceId": f"edge-{uuid.uuid4()}",
                "displayName": "Ece",
            },
        )
        assert status == 200, login
        token = login["tokens"]["accessToken"]

        status, wallet = _call(port, "GetWallet", {}, token)
        assert status == 200, wallet
        assert (wallet["balance"], wallet["dailyAmount"]) == ("1500", "100")
        assert "held" not in wallet and wallet["nextDailyClaimTime"].endswith("Z")

        status, levels = _call(port, "ListStakeLevels", {}, token)
        assert (status, levels) == (200, {"stakes": ["25", "250"], "feePercent": 5})

        status, claimed = _call(port, "ClaimDailyChips", {"requestId": "daily-edge"}, token)
        assert status == 200, claimed
        assert (claimed["balance"], claimed["entry"]["amount"]) == ("1600", "100")
        assert claimed["entry"]["reason"] == "WALLET_ENTRY_REASON_DAILY_GRANT"
        status, early = _call(
            port, "ClaimDailyChips", {"requestId": "daily-edge-2", "locale": "tr"}, token
        )
        assert (status, early["code"]) == (400, "failed_precondition")
        assert _reason(early) == "DAILY_CHIPS_NOT_DUE"

        status, page = _call(port, "ListWalletEntries", {"pageSize": 1}, token)
        assert status == 200 and len(page["entries"]) == 1 and page["nextPageToken"]
        status, rest = _call(port, "ListWalletEntries", {"pageToken": page["nextPageToken"]}, token)
        assert [e["reason"] for e in page["entries"] + rest["entries"]] == [
            "WALLET_ENTRY_REASON_DAILY_GRANT",
            "WALLET_ENTRY_REASON_GRANT",
        ]

        # gRPC-Web too.
        payload = lobby_pb2.GetWalletRequest().SerializeToString()
        status, _headers, body = post(
            port,
            "/okey.v1.LobbyService/GetWallet",
            struct.pack(">BI", 0, len(payload)) + payload,
            "application/grpc-web+proto",
            X_Grpc_Web="1",
            Authorization=f"Bearer {token}",
        )
        messages, trailers = grpc_web_frames(body)
        assert (status, trailers["grpc-status"]) == (200, "0")
        assert lobby_pb2.GetWalletResponse.FromString(messages[0]).balance == 1600

        # The operator's and the table's calls are not the edge's, whatever the token.
        service = TokenIssuer(dev_signing_key(stack.var_dir)).issue("service:ops", "service")
        for method, message in (
            ("AdjustChips", {"requestId": "a", "playerId": login["player"]["playerId"],
                             "amount": "1000000", "reason": "via the edge"}),
            ("RecordTableChips", {"requestId": "r", "records": []}),
        ):  # fmt: skip
            for credential in (token, service):
                status, _answer = _call(port, method, message, credential)
                assert status == 404, (method, status)
        status, wallet = _call(port, "GetWallet", {}, token)
        assert wallet["balance"] == "1600"

        # Stakes a browser may send that are no stake: refused, nothing held or written.
        for stake in (-5, 1.5, "12.5", "18446744073709551616", "77", "abc"):
            for method, message in (
                ("HostTable", {"requestId": uuid.uuid4().hex, "stake": stake}),
                ("JoinQuickMatch", {"requestId": uuid.uuid4().hex, "stake": stake}),
            ):
                status, refused = _call(port, method, message, token)
                assert (status, refused["code"]) == (400, "invalid_argument"), (stake, refused)
        status, after = _call(port, "GetWallet", {}, token)
        assert (after["balance"], after.get("held")) == ("1600", None)
        status, page = _call(port, "ListWalletEntries", {}, token)
        assert len(page["entries"]) == 2
