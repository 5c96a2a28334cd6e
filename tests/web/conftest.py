"""Fixtures of the browser tests (``tests/web/``).

- ``tournament_stack``, ``tournament_site``, ``tournament_browser``: the real stack with the edge
  serving the built page, its address, and Debian's chromium, for one module
  (``test_web_tournaments.py``).
- ``tournament_desk``: the tournaments' side a test sets up through the API rather than the page:
  tournaments created and started with a service token signed by the stack's development key
  (as an operator's tools do), and other guests who log in and register over gRPC.

``support.browser`` is imported inside the fixtures: importing it skips the module that imports
it where there is no chromium or no built page, and this file is loaded for every module here
(``test_web_catalogue.py`` needs neither).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import pytest
from okey.v1 import common_pb2, lobby_pb2, lobby_pb2_grpc

from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.stack import LocalStack, local_stack, start_edge


@pytest.fixture(scope="module")
def tournament_stack() -> Iterator[LocalStack]:
    from support.browser import EDGE_ENV, STACK_ENV

    with local_stack(env=STACK_ENV) as services:
        start_edge(services, env=EDGE_ENV)
        yield services


@pytest.fixture(scope="module")
def tournament_site(tournament_stack: LocalStack) -> str:
    return f"http://127.0.0.1:{tournament_stack.ports['edge'][0]}"


@pytest.fixture(scope="module")
def tournament_browser(tournament_stack: LocalStack) -> Iterator[Any]:
    from support.browser import launched_browser

    yield from launched_browser()


def _bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@dataclass
class Guest:
    """A guest logged in over gRPC."""

    player_id: str
    token: str


class TournamentDesk:
    """Creates, starts and fills tournaments through the lobby's gRPC API."""

    def __init__(self, stub: Any, service_token: str) -> None:
        self.stub = stub
        self.service = _bearer(service_token)

    def create(
        self,
        name: str,
        category: str,
        *,
        start_in: float | None = None,
        opens_in: float | None = None,
        **fields: Any,
    ) -> Any:
        """A tournament of one-hand boombala matches, 8 places, a 10-chip entry fee and a
        70/30 split of the pool unless ``fields`` say otherwise (``start_in``: it starts by
        itself that many seconds from now; ``opens_in``: its registration opens then); its
        ``Tournament``."""
        request = lobby_pb2.CreateTournamentRequest(
            request_id=uuid.uuid4().hex,
            name=name,
            category=category,
            description="A cup for the browser tests.\nOne hand a match.",
            rules=common_pb2.RuleSet(
                preset=common_pb2.RULE_PRESET_BOOMBALA,
                match_end=common_pb2.MATCH_END_FIXED_HANDS,
                match_hands=1,
            ),
            max_players=8,
            entry_fee=10,
            prizes=[
                lobby_pb2.TournamentPrize(place=1, share_percent=70),
                lobby_pb2.TournamentPrize(place=2, share_percent=30),
            ],
            bot_level=common_pb2.BOT_LEVEL_NORMAL,
        )
        if start_in is not None:
            request.start_time.FromDatetime(datetime.now(UTC) + timedelta(seconds=start_in))
        if opens_in is not None:
            request.registration_open_time.FromDatetime(
                datetime.now(UTC) + timedelta(seconds=opens_in)
            )
        for key, value in fields.items():
            setattr(request, key, value)
        return self.stub.CreateTournament(request, metadata=self.service, timeout=10).tournament

    def start(self, tournament_id: str) -> Any:
        return self.stub.StartTournament(
            lobby_pb2.StartTournamentRequest(
                request_id=uuid.uuid4().hex, tournament_id=tournament_id
            ),
            metadata=self.service,
            timeout=10,
        ).tournament

    def pause(self, tournament_id: str, *, resume: bool = False) -> Any:
        """PauseTournament (ResumeTournament with ``resume``)."""
        if resume:
            return self.stub.ResumeTournament(
                lobby_pb2.ResumeTournamentRequest(
                    request_id=uuid.uuid4().hex, tournament_id=tournament_id
                ),
                metadata=self.service,
                timeout=10,
            ).tournament
        return self.stub.PauseTournament(
            lobby_pb2.PauseTournamentRequest(
                request_id=uuid.uuid4().hex, tournament_id=tournament_id, reason="a web test"
            ),
            metadata=self.service,
            timeout=10,
        ).tournament

    def disqualify(self, tournament_id: str, player_id: str, reason: str) -> bool:
        """Whether this call disqualified the player (DisqualifyFromTournament's changed)."""
        answer = self.stub.DisqualifyFromTournament(
            lobby_pb2.DisqualifyFromTournamentRequest(
                request_id=uuid.uuid4().hex,
                tournament_id=tournament_id,
                player_id=player_id,
                reason=reason,
            ),
            metadata=self.service,
            timeout=10,
        )
        return bool(answer.changed)

    def get(self, tournament_id: str) -> Any:
        return self.stub.GetTournament(
            lobby_pb2.GetTournamentRequest(tournament_id=tournament_id),
            metadata=self.service,
            timeout=10,
        ).tournament

    def guest(self, name: str) -> Guest:
        answer = self.stub.LoginGuest(
            lobby_pb2.LoginGuestRequest(
                request_id=uuid.uuid4().hex,
                device_id=f"web-test-{uuid.uuid4().hex}",
                display_name=name,
            ),
            timeout=10,
        )
        return Guest(answer.player.player_id, answer.tokens.access_token)

    def register(self, guest: Guest, tournament_id: str) -> Any:
        return self.stub.RegisterForTournament(
            lobby_pb2.RegisterForTournamentRequest(
                request_id=uuid.uuid4().hex, tournament_id=tournament_id
            ),
            metadata=_bearer(guest.token),
            timeout=10,
        ).tournament

    def unregister(self, guest: Guest, tournament_id: str) -> Any:
        return self.stub.UnregisterFromTournament(
            lobby_pb2.UnregisterFromTournamentRequest(
                request_id=uuid.uuid4().hex, tournament_id=tournament_id
            ),
            metadata=_bearer(guest.token),
            timeout=10,
        ).tournament

    def check_in(self, guest: Guest, tournament_id: str) -> Any:
        return self.stub.CheckInToTournament(
            lobby_pb2.CheckInToTournamentRequest(
                request_id=uuid.uuid4().hex, tournament_id=tournament_id
            ),
            metadata=_bearer(guest.token),
            timeout=10,
        ).tournament

    def check_in_exists(self) -> bool:
        """Whether the lobby serves CheckInToTournament (UNIMPLEMENTED until it does): asked
        about a tournament that is not there, it answers NOT_FOUND or a precondition."""
        try:
            self.check_in(self.guest("Probe"), "t-no-such-tournament")
        except grpc.RpcError as error:
            return error.code() != grpc.StatusCode.UNIMPLEMENTED  # type: ignore[attr-defined]
        return True


@pytest.fixture(scope="module")
def tournament_desk(tournament_stack: LocalStack) -> Iterator[TournamentDesk]:
    token = TokenIssuer(dev_signing_key(tournament_stack.var_dir)).issue(
        "service:web-test", "service"
    )
    channel = grpc.insecure_channel(tournament_stack.address("lobby"))
    yield TournamentDesk(lobby_pb2_grpc.LobbyServiceStub(channel), token)
    channel.close()
