"""A forfeited seat (issue #37: a tournament's no-show or disqualified player), over real gRPC
on SQLite and PostgreSQL: a service's Leave with ``forfeit`` gives the seat to a bot to the end
of the match, marked forfeited for everyone; the player's Sit, Act and return to it are refused
SEAT_FORFEITED and change nothing; a player's own ``forfeit`` is ignored (a plain leave they
can come back from); before the match it frees the seat as any Leave does."""

from __future__ import annotations

from pathlib import Path

import grpc
from okey.v1 import common_pb2, table_pb2

from support.service_stack import running_stack
from support.tables import (
    PLAYERS,
    create_table,
    get_table,
    my_turn,
    one_hand_rules,
    refused,
    run,
    started_table,
    view_of,
)


def test_a_forfeited_seat_is_a_bots_to_the_end_and_cannot_be_taken_back(
    tmp_path: Path, table_url: str
) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path, table_url) as stack:
            table_id = await started_table(stack, one_hand_rules(match_hands=3))
            stub = stack.table_stub()
            views = [await view_of(stack, table_id, p, s) for s, p in enumerate(PLAYERS)]
            # The forfeited player is one whose turn it is not: their seat must not move now.
            seat = next(view.seat for view in views if not my_turn(view))
            player = PLAYERS[seat]
            left = await stub.Leave(
                table_pb2.LeaveRequest(
                    request_id="forfeit", table_id=table_id, player_id=player, forfeit=True
                ),
                metadata=stack.service_auth(),
            )
            occupant = left.table.seats[seat]
            assert (occupant.player_id, occupant.forfeited, occupant.away) == (player, True, True)
            assert occupant.kind == common_pb2.OCCUPANT_KIND_BOT
            # Everyone sees the mark.
            shown = (
                await stub.GetTable(
                    table_pb2.GetTableRequest(table_id=table_id),
                    metadata=stack.player_auth(PLAYERS[(seat + 1) % 4]),
                )
            ).table
            assert shown.seats[seat].forfeited
            before = await get_table(stack, table_id)
            auth = stack.player_auth(player)
            code, reason, sentence = await refused(
                stub.Sit, table_pb2.SitRequest(request_id="back", table_id=table_id), auth
            )
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SEAT_FORFEITED")
            assert "bot" in sentence
            turkish = await refused(
                stub.Sit,
                table_pb2.SitRequest(request_id="geri", table_id=table_id, locale="tr"),
                auth,
            )
            assert "hükmen" in turkish[2]
            after = await get_table(stack, table_id)
            assert after.last_sequence == before.last_sequence
            assert after.seats[seat] == before.seats[seat]

            # A move of theirs is refused before anything else is looked at.
            view = await view_of(stack, table_id, player, seat)
            discard = common_pb2.Action(
                discard=common_pb2.DiscardAction(tile_id=view.rack[0].tile.id)
            )
            code, reason, _ = await refused(
                stub.Act,
                table_pb2.ActRequest(
                    request_id="sneak",
                    table_id=table_id,
                    seat=seat,
                    actions=[discard],
                    expected_state_version=view.state_version,
                ),
                auth,
            )
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SEAT_FORFEITED")
            assert (await get_table(stack, table_id)).state_version == before.state_version
            # Leaving again (a retry, or a player's own Leave) keeps the mark.
            again = await stub.Leave(
                table_pb2.LeaveRequest(request_id="bye", table_id=table_id),
                metadata=auth,
            )
            assert again.table.seats[seat].forfeited

    run(scenario())


def test_a_players_own_forfeit_is_a_plain_leave_and_before_the_match_it_frees_the_seat(
    tmp_path: Path, table_url: str
) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path, table_url) as stack:
            table_id = await started_table(stack, one_hand_rules(match_hands=3))
            stub = stack.table_stub()
            auth = stack.player_auth(PLAYERS[2])
            left = await stub.Leave(
                table_pb2.LeaveRequest(request_id="me", table_id=table_id, forfeit=True),
                metadata=auth,
            )
            assert not left.table.seats[2].forfeited
            sat = await stub.Sit(
                table_pb2.SitRequest(request_id="back", table_id=table_id), metadata=auth
            )
            assert sat.seat == 2 and not sat.table.seats[2].away
            waiting = await create_table(stack, one_hand_rules())
            await stub.Sit(
                table_pb2.SitRequest(request_id="w", table_id=waiting.table_id, seat=1),
                metadata=stack.player_auth("early"),
            )
            freed = await stub.Leave(
                table_pb2.LeaveRequest(
                    request_id="w-out", table_id=waiting.table_id, player_id="early", forfeit=True
                ),
                metadata=stack.service_auth(),
            )
            assert freed.table.seats[1].kind == common_pb2.OCCUPANT_KIND_EMPTY
            assert not freed.table.seats[1].forfeited

    run(scenario())
