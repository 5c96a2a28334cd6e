"""The wallet through the edge, as a browser calls it (Connect JSON and gRPC-Web over HTTP/1.1),
with the lobby and the edge as ``okey101 serve`` processes: a guest's wallet with its starting
grant, the stake levels, the daily grant and the wallet's entries; the operator's and the
table's chips calls are not routed (HTTP 404, whatever the token)."""

from __future__ import annotations

import struct
import uuid
from pathlib import Path

import pytest
from okey.v1 import lobby_pb2

from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.stack import FAST, local_stack, start_edge

from support.http_calls import error_reason, grpc_web_frames, lobby_json, post

pytestmark = pytest.mark.slow


def test_a_guests_wallet_through_the_edge(tmp_path: Path) -> None:
    env = {**FAST, "OKEY_CHIPS_STARTING_GRANT": "1500", "OKEY_CHIP_STAKES": "25,250"}
    with local_stack(tmp_path / "stack", env=env, services=("lobby",)) as stack:
        port = start_edge(stack).port
        status, login = lobby_json(
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

        status, wallet = lobby_json(port, "GetWallet", {}, token)
        assert status == 200, wallet
        assert (wallet["balance"], wallet["dailyAmount"]) == ("1500", "100")
        assert "held" not in wallet and wallet["nextDailyClaimTime"].endswith("Z")

        status, levels = lobby_json(port, "ListStakeLevels", {}, token)
        assert (status, levels) == (200, {"stakes": ["25", "250"], "feePercent": 5})

        status, claimed = lobby_json(port, "ClaimDailyChips", {"requestId": "daily-edge"}, token)
        assert status == 200, claimed
        assert (claimed["balance"], claimed["entry"]["amount"]) == ("1600", "100")
        assert claimed["entry"]["reason"] == "WALLET_ENTRY_REASON_DAILY_GRANT"
        status, early = lobby_json(
            port, "ClaimDailyChips", {"requestId": "daily-edge-2", "locale": "tr"}, token
        )
        assert (status, early["code"]) == (400, "failed_precondition")
        assert error_reason(early) == "DAILY_CHIPS_NOT_DUE"

        status, page = lobby_json(port, "ListWalletEntries", {"pageSize": 1}, token)
        assert status == 200 and len(page["entries"]) == 1 and page["nextPageToken"]
        status, rest = lobby_json(
            port, "ListWalletEntries", {"pageToken": page["nextPageToken"]}, token
        )
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
                status, _answer = lobby_json(port, method, message, credential)
                assert status == 404, (method, status)
        status, wallet = lobby_json(port, "GetWallet", {}, token)
        assert wallet["balance"] == "1600"

        # Stakes a browser may send that are no stake: refused, nothing held or written.
        for stake in (-5, 1.5, "12.5", "18446744073709551616", "77", "abc"):
            for method, message in (
                ("HostTable", {"requestId": uuid.uuid4().hex, "stake": stake}),
                ("JoinQuickMatch", {"requestId": uuid.uuid4().hex, "stake": stake}),
            ):
                status, refused = lobby_json(port, method, message, token)
                assert (status, refused["code"]) == (400, "invalid_argument"), (stake, refused)
        status, after = lobby_json(port, "GetWallet", {}, token)
        assert (after["balance"], after.get("held")) == ("1600", None)
        status, page = lobby_json(port, "ListWalletEntries", {}, token)
        assert len(page["entries"]) == 2
