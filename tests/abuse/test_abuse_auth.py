"""Tokens that must not work, and players reaching for what is not theirs, at every service.

- Every RPC that takes a token, sent a request that would otherwise be served, with no token,
  a junk one, a forged one (another key under the real key id), one signed by a key the JWKS
  does not hold (a key rotated out), an unsigned one (alg none), one signed HS256 with the
  public key as the secret, one with its payload altered, an expired one, one of another
  issuer or of an unknown kind: UNAUTHENTICATED with the reason (TOKEN_MISSING, TOKEN_INVALID,
  TOKEN_EXPIRED), told in the request's language, and nothing changes.
- Every internal RPC ("Auth: service") with a player's token, and every player-only RPC with a
  service token: PERMISSION_DENIED TOKEN_WRONG_KIND, nothing changes.
- A revoked login (logged out, or its spent refresh token presented again) mints no tokens.
- A player's valid token on someone else's things: a private table, another host's table, a hand
  they did not sit at, another player's quick-match ticket or tournament.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from okey.v1 import lobby_pb2, table_pb2

from okey101.platform.auth import SigningKey, TokenIssuer, dev_signing_key

from support.abuse import World, bearer, check_refusal, documented_access, every_rpc, open_world
from support.abuse_requests import base_request

ACCESS = documented_access()
TAKES_A_TOKEN = [rpc for rpc in every_rpc() if ACCESS[rpc] not in ({"none"}, {"none", "player"})]
SERVICE_ONLY = [rpc for rpc in every_rpc() if ACCESS[rpc] == {"service"}]
PLAYER_ONLY = [rpc for rpc in every_rpc() if ACCESS[rpc] == {"player"}]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with open_world(tmp_path_factory.mktemp("abuse-auth")) as opened:
        yield opened


def _b64(data: dict[str, Any]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def hs256(secret: bytes, kid: str, claims: dict[str, Any]) -> str:
    """A token MACed with ``secret`` (the algorithm-confusion attack: the verifier's public
    key used as an HMAC secret)."""
    signing_input = f"{_b64({'alg': 'HS256', 'kid': kid, 'typ': 'JWT'})}.{_b64(claims)}"
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def bad_tokens(world: World) -> list[tuple[str, tuple[tuple[str, str], ...], str]]:
    """(what, metadata, the reason it must be refused with)."""
    key = dev_signing_key(world.var_dir)
    player = world.guests[0].player_id
    now = int(time.time())
    claims = {
        "iss": "okey101",
        "sub": player,
        "kind": "player",
        "iat": now,
        "exp": now + 600,
        "jti": uuid.uuid4().hex,
    }
    real = TokenIssuer(key).issue(player, "player")
    header, _, signature = real.split(".")
    altered = dict(jwt.decode(real, options={"verify_signature": False}))
    altered["sub"] = world.guests[1].player_id
    public = key.private_key.public_key()
    public_pem = public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )

    def signed(data: dict[str, Any], signing: SigningKey = key) -> str:
        return jwt.encode(
            data, signing.private_key, algorithm="EdDSA", headers={"kid": signing.kid}
        )

    stranger = SigningKey.generate()
    return [
        ("no token", (), "TOKEN_MISSING"),
        ("an empty bearer", (("authorization", "Bearer "),), "TOKEN_MISSING"),
        ("another scheme", (("authorization", f"Basic {real}"),), "TOKEN_MISSING"),
        ("junk", bearer("not-a-jwt"), "TOKEN_INVALID"),
        (
            "forged under the real kid",
            bearer(signed(claims, SigningKey(stranger.private_key, key.kid))),
            "TOKEN_INVALID",
        ),
        ("a key the JWKS does not hold", bearer(signed(claims, stranger)), "TOKEN_INVALID"),
        (
            "unsigned (alg none)",
            bearer(f"{_b64({'alg': 'none', 'kid': key.kid, 'typ': 'JWT'})}.{_b64(claims)}."),
            "TOKEN_INVALID",
        ),
        (
            "HS256 keyed with the public key",
            bearer(hs256(public_pem, key.kid, claims)),
            "TOKEN_INVALID",
        ),
        ("payload altered", bearer(f"{header}.{_b64(altered)}.{signature}"), "TOKEN_INVALID"),
        (
            "expired",
            bearer(
                TokenIssuer(key).issue(player, "player", ttl_seconds=60, now=time.time() - 3600)
            ),
            "TOKEN_EXPIRED",
        ),
        ("another issuer", bearer(signed({**claims, "iss": "elsewhere"})), "TOKEN_INVALID"),
        ("an unknown kind", bearer(signed({**claims, "kind": "admin"})), "TOKEN_INVALID"),
        (
            "no subject",
            bearer(signed({k: v for k, v in claims.items() if k != "sub"})),
            "TOKEN_INVALID",
        ),
        (
            "not yet issued",
            bearer(signed({**claims, "iat": now + 3600, "exp": now + 7200})),
            "TOKEN_INVALID",
        ),
    ]


def unchanged(world: World, service: str) -> dict[str, Any]:
    return world.snapshot(service) if service in ("table", "lobby", "scoring") else {}


@pytest.mark.parametrize(("service", "method"), TAKES_A_TOKEN)
def test_missing_forged_expired_and_altered_tokens_are_unauthenticated(
    world: World, service: str, method: str
) -> None:
    request, _ = base_request(world, service, method)
    if "locale" in request.DESCRIPTOR.fields_by_name:
        request.locale = "tr"  # a client stream's refusal at its opening: the call's language
    before = unchanged(world, service)
    for what, metadata, reason in bad_tokens(world):
        outcome = world.call(service, method, request, metadata)
        label = f"{service}.{method} with {what}"
        assert (outcome.code, outcome.reason) == (grpc.StatusCode.UNAUTHENTICATED, reason), (
            f"{label}: {outcome}"
        )
        check_refusal(outcome, request, label)
    assert unchanged(world, service) == before


@pytest.mark.parametrize(("service", "method"), SERVICE_ONLY + PLAYER_ONLY)
def test_a_token_of_the_wrong_kind_is_permission_denied(
    world: World, service: str, method: str
) -> None:
    """Internal RPCs refuse players' tokens (the lobby's own, as a client holds them); player
    RPCs refuse service tokens."""
    request, _ = base_request(world, service, method)
    if ACCESS[(service, method)] == {"service"}:
        callers = [guest.auth for guest in world.guests]
        guest = world.background.run(world._login("caller"))
        callers.append(bearer(guest.access_token))
        kind = "player"
    else:
        callers = [world.service_auth()]
        kind = "service"
    before = unchanged(world, service)  # after the caller's login (a lobby change of its own)
    for metadata in callers:
        outcome = world.call(service, method, request, metadata)
        label = f"{service}.{method} with a {kind} token"
        assert (outcome.code, outcome.reason) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "TOKEN_WRONG_KIND",
        ), f"{label}: {outcome}"
        assert outcome.metadata["kind"] == kind, outcome
        check_refusal(outcome, request, label)
    assert unchanged(world, service) == before


def test_a_revoked_login_mints_no_tokens_and_a_reused_refresh_token_revokes_its_login(
    world: World,
) -> None:
    def refresh(token: str) -> Any:
        request = lobby_pb2.RefreshTokensRequest(
            request_id=uuid.uuid4().hex, refresh_token=token, locale="tr"
        )
        return request, world.call("lobby", "RefreshTokens", request)

    guest = world.background.run(world._login("revoked"))
    out = world.ok(
        "lobby",
        "Logout",
        lobby_pb2.LogoutRequest(request_id=uuid.uuid4().hex, refresh_token=guest.refresh_token),
        (),
    )
    assert out.revoked == 1
    before = world.snapshot("lobby")
    request, outcome = refresh(guest.refresh_token)
    assert (outcome.code, outcome.reason) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "REFRESH_TOKEN_REVOKED",
    ), outcome
    check_refusal(outcome, request, "a logged-out refresh token")
    forged = guest.refresh_token[:-4] + (
        "AAAA" if not guest.refresh_token.endswith("AAAA") else "BBBB"
    )
    request, outcome = refresh(forged)
    assert outcome.code == grpc.StatusCode.UNAUTHENTICATED, outcome
    check_refusal(outcome, request, "a forged refresh token")
    assert world.snapshot("lobby") == before
    # A spent token presented again: the thief or the owner; the whole login is revoked, the
    # token just issued included.
    other = world.background.run(world._login("rotated"))
    _, rotated = refresh(other.refresh_token)
    assert rotated.ok
    _, reused = refresh(other.refresh_token)
    assert reused.reason == "REFRESH_TOKEN_REUSED"
    _, after = refresh(rotated.response.tokens.refresh_token)
    assert after.reason == "REFRESH_TOKEN_REVOKED"


def test_a_players_own_token_does_not_reach_other_players_things(world: World) -> None:
    world.ensure_fixtures()
    stranger, host, seated = world.guests[4], world.guests[0], world.guests[1]
    waiting, live = world.tables["waiting"], world.tables["live"]
    denied = grpc.StatusCode.PERMISSION_DENIED
    precondition = grpc.StatusCode.FAILED_PRECONDITION
    fresh = uuid.uuid4().hex
    cases: list[tuple[str, str, Any, Any, grpc.StatusCode, str]] = [
        # A private table is for its host and players.
        (
            "table",
            "GetTable",
            table_pb2.GetTableRequest(table_id=waiting),
            stranger,
            denied,
            "PRIVATE_TABLE",
        ),
        (
            "table",
            "GetSeatView",
            table_pb2.GetSeatViewRequest(table_id=waiting),
            stranger,
            denied,
            "PRIVATE_TABLE",
        ),
        (
            "table",
            "WatchTable",
            table_pb2.WatchTableRequest(table_id=waiting),
            stranger,
            denied,
            "PRIVATE_TABLE",
        ),
        (
            "table",
            "Sit",
            table_pb2.SitRequest(request_id=fresh, table_id=waiting, seat=1),
            stranger,
            grpc.StatusCode.NOT_FOUND,
            "BAD_INVITE_CODE",
        ),
        (
            "table",
            "Sit",
            table_pb2.SitRequest(
                request_id=uuid.uuid4().hex, table_id=waiting, seat=1, invite_code="WRONGONE"
            ),
            stranger,
            grpc.StatusCode.NOT_FOUND,
            "BAD_INVITE_CODE",
        ),
        # Only the host starts or closes a table.
        (
            "table",
            "Start",
            table_pb2.StartRequest(
                request_id=uuid.uuid4().hex, table_id=waiting, fill_with_bots=True
            ),
            stranger,
            denied,
            "NOT_THE_HOST",
        ),
        (
            "table",
            "CloseTable",
            table_pb2.CloseTableRequest(request_id=uuid.uuid4().hex, table_id=waiting),
            seated,
            denied,
            "NOT_THE_HOST",
        ),
        (
            "table",
            "CloseTable",
            table_pb2.CloseTableRequest(request_id=uuid.uuid4().hex, table_id=live),
            seated,
            denied,
            "NOT_THE_HOST",
        ),
        # A hand's record is for those who sat at it, and only once it has ended.
        (
            "table",
            "GetHandRecord",
            table_pb2.GetHandRecordRequest(hand_id=world.finished_hand),
            stranger,
            denied,
            "NOT_AT_HAND",
        ),
        (
            "table",
            "GetHandRecord",
            table_pb2.GetHandRecordRequest(hand_id=f"{live}-h1"),
            seated,
            precondition,
            "HAND_IN_PLAY",
        ),
        # Another player's quick-match ticket, another creator's tournament.
        (
            "lobby",
            "GetQuickMatchStatus",
            lobby_pb2.GetQuickMatchStatusRequest(ticket_id=world.ticket_id),
            host,
            None,
            "",
        ),
        (
            "lobby",
            "LeaveQuickMatch",
            lobby_pb2.LeaveQuickMatchRequest(
                request_id=uuid.uuid4().hex, ticket_id=world.ticket_id
            ),
            host,
            None,
            "",
        ),
        (
            "lobby",
            "StartTournament",
            lobby_pb2.StartTournamentRequest(
                request_id=uuid.uuid4().hex, tournament_id=world.tournament_id
            ),
            seated,
            denied,
            "",
        ),
        (
            "lobby",
            "LeaveTable",
            lobby_pb2.LeaveTableRequest(request_id=uuid.uuid4().hex, table_id=live),
            stranger,
            precondition,
            "",
        ),
    ]
    for service, method, request, guest, code, reason in cases:
        before = world.snapshot(service)
        outcome = world.call(service, method, request, guest.auth)
        label = f"{service}.{method} by another player"
        assert not outcome.ok, f"{label}: served {outcome.response}"
        if code is not None:
            assert outcome.code == code, f"{label}: {outcome}"
        else:  # not theirs, or not there for them: either way not a word about it
            assert outcome.code in (denied, grpc.StatusCode.NOT_FOUND), f"{label}: {outcome}"
        if reason:
            assert outcome.reason == reason, f"{label}: {outcome}"
        check_refusal(outcome, request, label)
        assert world.snapshot(service) == before, f"{label}: refused, yet something changed"
    # The ticket's own player still sees it waiting.
    status = world.ok(
        "lobby",
        "GetQuickMatchStatus",
        lobby_pb2.GetQuickMatchStatusRequest(ticket_id=world.ticket_id),
        world.guests[2].auth,
    )
    assert status.ticket.ticket_id == world.ticket_id
