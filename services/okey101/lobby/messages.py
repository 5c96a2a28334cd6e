"""The lobby's records as ``lobby_pb2`` messages (lobby.proto), and the enum maps between the
two. The stores never build a message: an answer that is stored is built here, by the ``respond``
the RPC hands its store, inside the transaction that stores it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from google.protobuf.timestamp_pb2 import Timestamp
from okey.v1 import common_pb2, lobby_pb2

from okey101.lobby.chips import prizes
from okey101.lobby.records import (
    ACCOUNT,
    CANCELLED,
    FINISHED,
    MATCHED,
    REGISTERING,
    RUNNING,
    WAITING,
    Login,
    PlayerRow,
    RoundTable,
    TableEntry,
    TicketStatus,
    Tokens,
    TournamentRow,
    now_us,
)
from okey101.platform import convert

TOURNAMENT_STATES: Final = {
    REGISTERING: lobby_pb2.TOURNAMENT_STATE_REGISTERING,
    RUNNING: lobby_pb2.TOURNAMENT_STATE_RUNNING,
    FINISHED: lobby_pb2.TOURNAMENT_STATE_FINISHED,
    CANCELLED: lobby_pb2.TOURNAMENT_STATE_CANCELLED,
}
TICKET_STATES: Final = {
    WAITING: lobby_pb2.QUICK_MATCH_STATE_WAITING,
    MATCHED: lobby_pb2.QUICK_MATCH_STATE_MATCHED,
    CANCELLED: lobby_pb2.QUICK_MATCH_STATE_CANCELLED,
}
PRESETS: Final = {
    "oyna": common_pb2.RULE_PRESET_OYNA,
    "boombala": common_pb2.RULE_PRESET_BOOMBALA,
    "north_sultan": common_pb2.RULE_PRESET_NORTH_SULTAN,
}


def timestamp(us: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromMicroseconds(us)
    return stamp


def preset_name(value: int) -> str:
    """A RulePreset's name (``oyna`` for one the lobby does not name)."""
    for name, number in PRESETS.items():
        if number == value:
            return name
    return "oyna"


# --------------------------------------------------------------------------------------------
# Players and tokens


def player_message(player: PlayerRow, *, own: bool, organiser: bool = False) -> lobby_pb2.Player:
    """A player as lobby.proto shows them: the username only to themselves (``own``);
    ``organiser``: they hold the organiser role (given where the answer looked it up)."""
    return lobby_pb2.Player(
        player_id=player.player_id,
        display_name=player.display_name,
        kind=lobby_pb2.PLAYER_KIND_ACCOUNT
        if player.kind == ACCOUNT
        else lobby_pb2.PLAYER_KIND_GUEST,
        username=(player.username or "") if own else "",
        create_time=timestamp(player.created_us),
        organiser=organiser,
    )


def tokens_message(tokens: Tokens) -> lobby_pb2.AuthTokens:
    return lobby_pb2.AuthTokens(
        access_token=tokens.access_token,
        access_token_expire_time=timestamp(tokens.access_expires_us),
        refresh_token=tokens.refresh_token,
        refresh_token_expire_time=timestamp(tokens.refresh_expires_us),
    )


def login_guest_answer(login: Login) -> lobby_pb2.LoginGuestResponse:
    return lobby_pb2.LoginGuestResponse(
        player=player_message(login.player, own=True),
        tokens=tokens_message(login.tokens),
        guest_secret=login.guest_secret,
    )


def register_account_answer(login: Login) -> lobby_pb2.RegisterAccountResponse:
    return lobby_pb2.RegisterAccountResponse(
        player=player_message(login.player, own=True), tokens=tokens_message(login.tokens)
    )


def login_account_answer(login: Login) -> lobby_pb2.LoginAccountResponse:
    return lobby_pb2.LoginAccountResponse(
        player=player_message(login.player, own=True), tokens=tokens_message(login.tokens)
    )


def refresh_answer(tokens: Tokens) -> lobby_pb2.RefreshTokensResponse:
    return lobby_pb2.RefreshTokensResponse(tokens=tokens_message(tokens))


def logout_answer(revoked: int) -> lobby_pb2.LogoutResponse:
    return lobby_pb2.LogoutResponse(revoked=revoked)


def revoked_logins_answer(
    rows: Sequence[tuple[str, int]], *, lasts_us: int, as_of_us: int, page: int
) -> lobby_pb2.ListRevokedLoginsResponse:
    """ListRevokedLogins's answer from (login id, revoked at) rows, oldest first; one row past
    ``page`` says there are more."""
    return lobby_pb2.ListRevokedLoginsResponse(
        logins=[
            lobby_pb2.RevokedLogin(
                session_id=session_id, revoked_us=revoked_us, forget_after_us=revoked_us + lasts_us
            )
            for session_id, revoked_us in rows[:page]
        ],
        as_of_us=as_of_us,
        more=len(rows) > page,
    )


# --------------------------------------------------------------------------------------------
# Tables and quick match


def table_entry(table: common_pb2.Table, *, source: str, host_player_id: str = "") -> TableEntry:
    """What the directory keeps of a table the table service made for the lobby."""
    return TableEntry(
        table_id=table.table_id,
        invite_code=table.invite_code or None,
        visibility="private"
        if table.visibility == common_pb2.TABLE_VISIBILITY_PRIVATE
        else "public",
        source=source,
        preset=preset_name(table.rules.preset),
        host_player_id=host_player_id,
    )


def ticket_message(status: TicketStatus) -> lobby_pb2.QuickMatchTicket:
    ticket = status.ticket
    message = lobby_pb2.QuickMatchTicket(
        ticket_id=ticket.ticket_id,
        preset=PRESETS.get(ticket.preset, common_pb2.RULE_PRESET_OYNA),
        state=TICKET_STATES[ticket.state],
        enqueue_time=timestamp(ticket.enqueue_us),
        table_id=ticket.table_id or "",
        seat=ticket.seat or 0,
        stake=ticket.stake,
    )
    if ticket.state == WAITING:
        message.bots_fill_time.CopyFrom(timestamp(ticket.bots_fill_us))
        message.players_waiting = status.players_waiting
    return message


def join_quick_match_answer(status: TicketStatus) -> lobby_pb2.JoinQuickMatchResponse:
    return lobby_pb2.JoinQuickMatchResponse(ticket=ticket_message(status))


# --------------------------------------------------------------------------------------------
# Tournaments


def tournament_message(
    row: TournamentRow,
    tables: list[RoundTable],
    prize_pool: int = 0,
    *,
    substitutes: int = 0,
    checked_in: int = 0,
    recurrence: lobby_pb2.TournamentRecurrence | None = None,
    now: int | None = None,
) -> lobby_pb2.Tournament:
    """A tournament as lobby.proto describes it, ``prize_pool`` the chips in its pool now,
    ``substitutes`` and ``checked_in`` its counts of those, ``recurrence`` its series'. A
    registering tournament whose registration opens after ``now`` (default: the clock) is
    UPCOMING."""
    state = TOURNAMENT_STATES[row.state]
    opens = row.registration_opens_us
    if row.state == REGISTERING and opens is not None and opens > (now or now_us()):
        state = lobby_pb2.TOURNAMENT_STATE_UPCOMING
    message = lobby_pb2.Tournament(
        tournament_id=row.tournament_id,
        name=row.name,
        rules=convert.rules_to_proto(
            convert.rules_from_proto(common_pb2.RuleSet.FromString(row.rules))
        ),
        max_players=row.max_players,
        advance_per_table=row.advance_per_table,
        state=state,
        registered_players=row.registered,
        current_round=row.current_round,
        winner_player_id=row.winner_player_id,
        creator_player_id=row.creator_player_id,
        bot_level=row.bot_level,  # type: ignore[arg-type]
        create_time=timestamp(row.created_us),
        planned_rounds=row.planned_rounds,
        entry_fee=row.entry_fee,
        prizes=prizes.prize_messages(prizes.prizes_from_json(row.prizes)),
        prize_pool=prize_pool,
        description=row.description,
        category=row.category,
        no_show_policy=lobby_pb2.NoShowPolicy(missed_turns=row.no_show_missed_turns),
        check_in_minutes=row.check_in_seconds // 60,
        min_players=row.min_players,
        max_substitutes=row.max_substitutes,
        substitutes=substitutes,
        checked_in_players=checked_in,
        series_id=row.series_id,
        cancel_reason=row.cancel_reason,
        pace=lobby_pb2.TournamentPace(
            round_minutes=row.round_seconds // 60,
            break_seconds=row.break_seconds,
            seed_by_rating=row.seed_by_rating,
        ),
        paused=row.paused,
    )
    if (
        row.state == RUNNING
        and row.next_round_us is not None
        and row.next_round_us > (now or now_us())
    ):
        message.next_round_time.CopyFrom(timestamp(row.next_round_us))
    if row.started_us is not None:
        message.start_time.CopyFrom(timestamp(row.started_us))
    if row.scheduled_start_us is not None:
        message.scheduled_start_time.CopyFrom(timestamp(row.scheduled_start_us))
    if opens is not None:
        message.registration_open_time.CopyFrom(timestamp(opens))
    if recurrence is not None:
        message.recurrence.CopyFrom(recurrence)
    rounds: dict[int, lobby_pb2.TournamentRound] = {}
    for table in tables:
        entry = rounds.get(table.round)
        if entry is None:
            entry = rounds[table.round] = lobby_pb2.TournamentRound(
                number=table.round, advance_per_table=table.advance or 1
            )
            if table.deadline_us is not None:
                entry.deadline.CopyFrom(timestamp(table.deadline_us))
        if table.table_id:
            entry.table_ids.append(table.table_id)
        if table.state == FINISHED:
            entry.tables_finished += 1
    message.rounds.extend(rounds[number] for number in sorted(rounds))
    return message


def created_tournament_answer(tournament_id: str) -> lobby_pb2.CreateTournamentResponse:
    """CreateTournament's stored answer: only the id (the call answers the tournament as it is
    when it is read back)."""
    return lobby_pb2.CreateTournamentResponse(
        tournament=lobby_pb2.Tournament(tournament_id=tournament_id)
    )


def started_tournament_answer(row: TournamentRow) -> lobby_pb2.StartTournamentResponse:
    """StartTournament's answer: the tournament as started, no round planned yet (the driver
    plans round 1 next). Its pool is every entrant's fee: none is refunded once it runs."""
    return lobby_pb2.StartTournamentResponse(
        tournament=tournament_message(row, [], row.entry_fee * row.registered)
    )


__all__ = [
    "PRESETS",
    "TICKET_STATES",
    "TOURNAMENT_STATES",
    "created_tournament_answer",
    "join_quick_match_answer",
    "login_account_answer",
    "login_guest_answer",
    "logout_answer",
    "player_message",
    "preset_name",
    "refresh_answer",
    "register_account_answer",
    "started_tournament_answer",
    "table_entry",
    "ticket_message",
    "timestamp",
    "tokens_message",
    "tournament_message",
]
