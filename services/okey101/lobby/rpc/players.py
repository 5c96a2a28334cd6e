"""LobbyService's players and tokens: LoginGuest, RegisterAccount, LoginAccount, RefreshTokens,
Logout, GetJwks, ListRevokedLogins, GetPlayer (docs/lobby.md, Players and Tokens)."""

from __future__ import annotations

import contextlib
import json
from typing import Final

from okey.v1 import lobby_pb2
from prometheus_client import Counter

from okey101.lobby.errors import Denied, Exists, Invalid, Missing, Unauthorized
from okey101.lobby.messages import (
    login_account_answer,
    login_guest_answer,
    logout_answer,
    player_message,
    refresh_answer,
    register_account_answer,
)
from okey101.lobby.rpc import checks
from okey101.lobby.rpc.base import LobbyCalls, log
from okey101.lobby.stores import answers
from okey101.lobby.stores.accounts import token_caller
from okey101.platform.auth import Claims, bearer_token, require_claims
from okey101.platform.handlers import Context
from okey101.platform.ids import check_request_id

LOGINS: Final = Counter(
    "okey_lobby_logins_total",
    "Logins that succeeded, by kind (guest, account, refresh).",
    ("kind",),
)
LOGIN_FAILURES: Final = Counter(
    "okey_lobby_login_failures_total",
    "Credentials refused, by reason (the error code).",
    ("reason",),
)

_JWK_FIELDS: Final = ("kty", "crv", "kid", "x", "alg", "use")


class PlayerCalls(LobbyCalls):
    """Players and tokens (module docstring)."""

    async def LoginGuest(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.LoginGuestRequest, context: Context
    ) -> lobby_pb2.LoginGuestResponse:
        async def work() -> lobby_pb2.LoginGuestResponse:
            check_request_id(request.request_id)
            checks.length(request.device_id, "device_id", 8, 128)
            display_name = checks.name(request.display_name, "display_name", required=False)
            if len(request.guest_secret) > 128:
                raise Unauthorized("BAD_GUEST_SECRET")
            limits = self.options.limits
            subject = f"device:{request.device_id}"
            # A device's first login makes a guest: counted against the client's address too,
            # since fresh device ids cost a client nothing. Keyed by device as well as request
            # id, so one request id sent with many devices is not taken for one retry.
            new_guest = await self.repository.accounts.player_by_device(request.device_id) is None
            per_address = (
                self._counted(
                    "new_guest",
                    self._client(context),
                    limits.new_guest_per_address,
                    f"{request.device_id}\0{request.request_id}",
                )
                if new_guest
                else contextlib.nullcontext()
            )
            async with (
                self._counted("login", subject, limits.login, request.request_id),
                per_address,
            ):
                try:
                    answer = await self.repository.accounts.login_guest(
                        request.device_id,
                        display_name,
                        request.guest_secret,
                        answers.once("LoginGuest", subject, request, lobby_pb2.LoginGuestResponse),
                        login_guest_answer,
                    )
                except Unauthorized as error:
                    LOGIN_FAILURES.labels(error.code).inc()
                    raise
            LOGINS.labels("guest").inc()
            return answer

        return await self._answer(request, context, work)

    async def RegisterAccount(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.RegisterAccountRequest, context: Context
    ) -> lobby_pb2.RegisterAccountResponse:
        async def work() -> lobby_pb2.RegisterAccountResponse:
            check_request_id(request.request_id)
            username = checks.username(request.username)
            password = checks.password(request.password)
            display_name = checks.name(request.display_name, "display_name", required=False)
            guest_id = await self._optional_player(context)
            caller = f"player:{guest_id}" if guest_id else f"username:{username}"
            call = answers.once(
                "RegisterAccount", caller, request, lobby_pb2.RegisterAccountResponse, username
            )
            accounts = self.repository.accounts
            limit = self.options.limits.login
            async with self._counted("login", f"account:{username}", limit, request.request_id):
                existing = await accounts.player_by_username(username)
                if existing is not None:
                    matched, _ = await self.passwords.verify(existing.password_hash, password)
                    if not matched:
                        raise Exists("USERNAME_TAKEN", username=username)
                    # Possibly a retry: only its stored answer is returned.
                    return await accounts.register_account(
                        username,
                        display_name,
                        None,
                        guest_id,
                        call,
                        register_account_answer,
                    )
                hashed = await self.passwords.hash(password)
                answer = await accounts.register_account(
                    username, display_name, hashed, guest_id, call, register_account_answer
                )
            LOGINS.labels("register").inc()
            return answer

        return await self._answer(request, context, work)

    async def _optional_player(self, context: Context) -> str | None:
        """The player of an optional token (RegisterAccount): None without one."""
        token = bearer_token(context.invocation_metadata())
        if token is None:
            return None
        claims: Claims = await self.verifier.verify_fresh(token)
        if claims.kind != "player":
            raise Denied("PLAYER_TOKEN_REQUIRED")
        return claims.subject

    async def LoginAccount(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.LoginAccountRequest, context: Context
    ) -> lobby_pb2.LoginAccountResponse:
        async def work() -> lobby_pb2.LoginAccountResponse:
            check_request_id(request.request_id)
            if not request.username:
                raise Invalid("FIELD_REQUIRED", field="username")
            if not request.password:
                raise Invalid("FIELD_REQUIRED", field="password")
            username = request.username.lower()[:64]
            accounts = self.repository.accounts
            limit = self.options.limits.login
            async with self._counted("login", f"account:{username}", limit, request.request_id):
                account = await accounts.player_by_username(username)
                matched, new_hash = await self.passwords.verify(
                    account.password_hash if account else None, request.password[:1024]
                )
                if account is None or not matched:
                    LOGIN_FAILURES.labels("BAD_CREDENTIALS").inc()
                    raise Unauthorized("BAD_CREDENTIALS")
                answer = await accounts.login_account(
                    account,
                    new_hash,
                    answers.once(
                        "LoginAccount",
                        f"username:{account.username}",
                        request,
                        lobby_pb2.LoginAccountResponse,
                    ),
                    login_account_answer,
                )
            LOGINS.labels("account").inc()
            return answer

        return await self._answer(request, context, work)

    async def RefreshTokens(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.RefreshTokensRequest, context: Context
    ) -> lobby_pb2.RefreshTokensResponse:
        async def work() -> lobby_pb2.RefreshTokensResponse:
            check_request_id(request.request_id)
            if not request.refresh_token:
                raise Invalid("FIELD_REQUIRED", field="refresh_token")
            call = answers.once(
                "RefreshTokens",
                token_caller(request.refresh_token),
                request,
                lobby_pb2.RefreshTokensResponse,
            )
            try:
                answer = await self.repository.accounts.refresh(
                    request.refresh_token, call, refresh_answer
                )
            except Unauthorized as error:
                LOGIN_FAILURES.labels(error.code).inc()
                if error.code == "REFRESH_TOKEN_REUSED":
                    log.warning("a spent refresh token was presented: its login is revoked")
                raise
            LOGINS.labels("refresh").inc()
            return answer

        return await self._answer(request, context, work)

    async def Logout(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.LogoutRequest, context: Context
    ) -> lobby_pb2.LogoutResponse:
        async def work() -> lobby_pb2.LogoutResponse:
            check_request_id(request.request_id)
            if not request.refresh_token:
                raise Invalid("FIELD_REQUIRED", field="refresh_token")
            call = answers.once(
                "Logout", token_caller(request.refresh_token), request, lobby_pb2.LogoutResponse
            )
            return await self.repository.accounts.logout(
                request.refresh_token, request.all_sessions, call, logout_answer
            )

        return await self._answer(request, context, work)

    async def GetJwks(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.GetJwksRequest, context: Context
    ) -> lobby_pb2.GetJwksResponse:
        async def work() -> lobby_pb2.GetJwksResponse:
            keys = [
                lobby_pb2.Jwk(**{name: str(key.get(name, "")) for name in _JWK_FIELDS})
                for key in self.published.get("keys", ())
            ]
            return lobby_pb2.GetJwksResponse(
                keys=keys, jwks_json=json.dumps(self.published, separators=(",", ":"))
            )

        return await self._answer(request, context, work)

    async def ListRevokedLogins(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.ListRevokedLoginsRequest, context: Context
    ) -> lobby_pb2.ListRevokedLoginsResponse:
        async def work() -> lobby_pb2.ListRevokedLoginsResponse:
            if request.since_us < 0:
                raise Invalid("BAD_FIELD", field="since_us", value=request.since_us)
            return await self.revoked_logins(request.since_us)

        return await self._answer(request, context, work)

    async def GetPlayer(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.GetPlayerRequest, context: Context
    ) -> lobby_pb2.GetPlayerResponse:
        async def work() -> lobby_pb2.GetPlayerResponse:
            claims = require_claims()
            player_id = request.player_id
            if not player_id:
                if claims.kind != "player":
                    raise Invalid("FIELD_REQUIRED", field="player_id")
                player_id = claims.subject
            checks.identifier(player_id, "player_id")
            player = await self.repository.accounts.player(player_id)
            if player is None:
                raise Missing("PLAYER_NOT_FOUND", player_id=player_id)
            own = claims.kind == "player" and claims.subject == player_id
            organiser = await self.repository.organisers.is_organiser(player_id)
            return lobby_pb2.GetPlayerResponse(
                player=player_message(player, own=own, organiser=organiser)
            )

        return await self._answer(request, context, work)


__all__ = ["LOGINS", "LOGIN_FAILURES", "PlayerCalls"]
