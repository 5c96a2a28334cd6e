"""Who may organise and the tournament listing through the edge, as a browser calls them (Connect
JSON over HTTP/1.1), with the lobby and the edge as ``okey101 serve`` processes: the operator's
GrantOrganiser and RevokeOrganiser are not routed (HTTP 404, whatever the token); the operator's
command line grants the role at the lobby, and the organiser then creates a tournament with a
description and a category through the edge; ListTournaments filters by category and time there,
paged; a guest is refused NOT_AN_ORGANISER."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from okey101.cli import main
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.stack import FAST, local_stack, start_edge

from support.http_calls import error_reason, lobby_json

pytestmark = pytest.mark.slow


def test_organisers_and_the_listing_through_the_edge(tmp_path: Path) -> None:
    with local_stack(tmp_path / "stack", env=FAST, services=("lobby",)) as stack:
        port = start_edge(stack).port
        logins = []
        for name in ("Ece", "Misafir"):
            status, login = lobby_json(
                port,
                "LoginGuest",
                {"requestId": uuid.uuid4().hex, "deviceId": f"edge-{uuid.uuid4()}",
                 "displayName": name},
            )  # fmt: skip
            assert status == 200, login
            logins.append(login)
        token, guest_token = (login["tokens"]["accessToken"] for login in logins)
        player_id = logins[0]["player"]["playerId"]
        status, account = lobby_json(
            port,
            "RegisterAccount",
            {"requestId": uuid.uuid4().hex, "username": "ece.org", "password": "a-good-password"},
            token,
        )
        assert status == 200, account

        # The operator's calls are not the edge's, whatever the token.
        service = TokenIssuer(dev_signing_key(stack.var_dir)).issue("service:ops", "service")
        for method in ("GrantOrganiser", "RevokeOrganiser"):
            for credential in (token, service):
                status, _answer = lobby_json(
                    port,
                    method,
                    {"requestId": uuid.uuid4().hex, "playerId": player_id, "reason": "edge"},
                    credential,
                )
                assert status == 404, (method, status)
        status, refused = lobby_json(
            port, "CreateTournament", {"requestId": "c0", "name": "Cup", "maxPlayers": 8}, token
        )
        assert (status, refused["code"]) == (403, "permission_denied")
        assert error_reason(refused) == "NOT_AN_ORGANISER"

        # The operator grants the role at the lobby, from the command line.
        assert (
            main(["organisers", "grant", "--lobby", stack.address("lobby"), "--var-dir",
                  str(stack.var_dir), "--player", player_id, "--reason", "runs the cups"])
            == 0
        )  # fmt: skip
        status, seen = lobby_json(port, "GetPlayer", {}, token)
        assert status == 200 and seen["player"]["organiser"] is True
        made = {}
        for name, category in (("Weekly 1", "weekly"), ("Beginners", "beginners"),
                               ("Weekly 2", "weekly")):  # fmt: skip
            status, created = lobby_json(
                port,
                "CreateTournament",
                {"requestId": uuid.uuid4().hex, "name": name, "maxPlayers": 8,
                 "description": f"{name}: every Friday", "category": category},
                token,
            )  # fmt: skip
            assert status == 200, created
            made[name] = created["tournament"]
            assert created["tournament"]["category"] == category
        status, refused = lobby_json(
            port,
            "CreateTournament",
            {"requestId": "c1", "name": "Cup", "maxPlayers": 8},
            guest_token,
        )
        assert error_reason(refused) == "NOT_AN_ORGANISER"

        # Listed by category, paged, and by time, as a guest lists them.
        status, page = lobby_json(
            port, "ListTournaments", {"category": "weekly", "pageSize": 1}, guest_token
        )
        assert status == 200, page
        assert [t["name"] for t in page["tournaments"]] == ["Weekly 2"]
        assert page["tournaments"][0]["description"] == "Weekly 2: every Friday"
        status, rest = lobby_json(
            port,
            "ListTournaments",
            {"category": "weekly", "pageSize": 1, "pageToken": page["nextPageToken"]},
            guest_token,
        )
        assert [t["name"] for t in rest["tournaments"]] == ["Weekly 1"]
        assert "nextPageToken" not in rest
        status, window = lobby_json(
            port,
            "ListTournaments",
            {"createdAfter": made["Beginners"]["createTime"],
             "states": ["TOURNAMENT_STATE_REGISTERING"]},
            guest_token,
        )  # fmt: skip
        assert status == 200, window
        assert [t["name"] for t in window["tournaments"]] == ["Weekly 2", "Beginners"]
        status, bad = lobby_json(port, "ListTournaments", {"category": "Weekly!"}, guest_token)
        assert (status, error_reason(bad)) == (400, "BAD_CATEGORY")
