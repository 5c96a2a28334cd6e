"""One official ranking (#37): a tournament run to its end over real gRPC (the lobby in-process,
the table, scoring, rules and bot services as ``okey101 serve`` starts them), after which the
lobby's GetTournamentStandings and scoring's GetStandings agree place by place, and the prizes
were paid from that ranking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
from okey.v1 import common_pb2, lobby_pb2, scoring_pb2, scoring_pb2_grpc

from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.table.service import TableOptions

from support.lobby import bearer, lobby_client, refused, run, until
from support.lobby_peers import lobby_for, peers_running

ONE_HAND = common_pb2.RuleSet(
    preset=common_pb2.RULE_PRESET_BOOMBALA,
    match_end=common_pb2.MATCH_END_FIXED_HANDS,
    match_hands=1,
    turn_seconds=1,
)
#: Nobody plays: after one missed turn a bot keeps each seat, at once.
QUICK = TableOptions(
    bot_move_seconds=0.0,
    next_hand_seconds=0.0,
    poll_seconds=0.05,
    watchdog_seconds=0.5,
    missed_turns_before_away=1,
)


def _service_auth(var_dir: Path) -> tuple[tuple[str, str], ...]:
    return bearer(TokenIssuer(dev_signing_key(var_dir)).issue("service:test", "service"))


def test_lobby_and_scoring_serve_one_final_ranking_place_by_place(
    tmp_path: Path, tournament_database: str
) -> None:
    """Sixteen guests, one advancing per table: four tables, then the final. Once it has
    finished, scoring's whole-tournament standings are the lobby's final places (``final``
    set), every player once, in the same order and with the same ranks; the prizes went to
    places 1 and 2 of that ranking. Scoring refuses a ranking that skips a place."""

    async def scenario() -> None:
        async with (
            peers_running(tmp_path, options=QUICK) as peers,
            lobby_client(lobby_for(tmp_path, peers, database_url=tournament_database)) as client,
        ):
            stub = client.stub
            service = _service_auth(tmp_path)
            guests = [await client.guest(name=f"R{index}") for index in range(16)]
            created = await stub.CreateTournament(
                lobby_pb2.CreateTournamentRequest(
                    request_id="cup",
                    name="Ranked cup",
                    rules=ONE_HAND,
                    max_players=16,
                    advance_per_table=1,
                    bot_level=common_pb2.BOT_LEVEL_RANDOM,
                    entry_fee=10,
                    prizes=[
                        lobby_pb2.TournamentPrize(place=1, share_percent=70),
                        lobby_pb2.TournamentPrize(place=2, share_percent=30),
                    ],
                ),
                metadata=service,
            )
            tid = created.tournament.tournament_id
            for guest in guests:
                await stub.RegisterForTournament(
                    lobby_pb2.RegisterForTournamentRequest(request_id="r", tournament_id=tid),
                    metadata=bearer(guest.tokens.access_token),
                )
            await stub.StartTournament(
                lobby_pb2.StartTournamentRequest(request_id="go", tournament_id=tid),
                metadata=service,
            )
            scoring: Any = scoring_pb2_grpc.ScoringServiceStub(peers.channel_to_scoring)

            async def final() -> Any:
                answer = await scoring.GetStandings(
                    scoring_pb2.GetStandingsRequest(tournament_id=tid, page_size=500),
                    metadata=service,
                )
                return answer if answer.final else None

            served = await until(final, 120, "the tournament's ranking to reach scoring")
            lobby = await stub.GetTournamentStandings(
                lobby_pb2.GetTournamentStandingsRequest(tournament_id=tid, page_size=500),
                metadata=service,
            )
            tournament = (
                await stub.GetTournament(
                    lobby_pb2.GetTournamentRequest(tournament_id=tid), metadata=service
                )
            ).tournament
            assert tournament.state == lobby_pb2.TOURNAMENT_STATE_FINISHED
            assert [len(item.table_ids) for item in tournament.rounds] == [4, 1]
            ours = [(line.rank, line.player_id) for line in lobby.standings]
            theirs = [(line.rank, line.player_id) for line in served.standings]
            assert ours == theirs and [rank for rank, _ in ours] == list(range(1, 17))
            assert ours[0][1] == tournament.winner_player_id
            # Scoring's own figures stay beside the lobby's places: every player played.
            assert all(line.matches >= 1 for line in served.standings)
            finalists = sum(1 for line in served.standings if line.matches == 2)
            assert finalists == 4
            # Paged, the same order.
            first = await scoring.GetStandings(
                scoring_pb2.GetStandingsRequest(tournament_id=tid, page_size=5),
                metadata=service,
            )
            rest = await scoring.GetStandings(
                scoring_pb2.GetStandingsRequest(
                    tournament_id=tid, page_size=500, page_token=first.next_page_token
                ),
                metadata=service,
            )
            paged = [line.player_id for line in [*first.standings, *rest.standings]]
            assert paged == [player for _, player in ours]
            # The prizes were paid from that ranking: 160 chips, 112 and 48.
            names = {guest.player.player_id: guest for guest in guests}
            for place, prize in ((1, 112), (2, 48)):
                wallet = await stub.GetWallet(
                    lobby_pb2.GetWalletRequest(),
                    metadata=bearer(names[ours[place - 1][1]].tokens.access_token),
                )
                third = await stub.GetWallet(
                    lobby_pb2.GetWalletRequest(),
                    metadata=bearer(names[ours[2][1]].tokens.access_token),
                )
                assert wallet.balance - third.balance == prize
            # A second report changes nothing; a ranking that skips a place is refused.
            again = await scoring.RecordTournamentRanking(
                scoring_pb2.RecordTournamentRankingRequest(
                    request_id="again",
                    tournament_id=tid,
                    places=[scoring_pb2.TournamentPlace(place=1, player_id=ours[1][1])],
                ),
                metadata=service,
            )
            assert again.places == 16
            kept = await final()
            assert [(line.rank, line.player_id) for line in kept.standings] == ours
            bad = await refused(
                scoring.RecordTournamentRanking(
                    scoring_pb2.RecordTournamentRankingRequest(
                        request_id="bad",
                        tournament_id="t-other",
                        places=[scoring_pb2.TournamentPlace(place=2, player_id="p")],
                    ),
                    metadata=service,
                )
            )
            assert (bad.code, bad.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_FIELD")

    run(scenario())
