"""The scoring service's tables (SQLAlchemy Core). The Alembic history in ``migrations/`` creates
them; a test checks the migrated schema matches these definitions.

Every table is prefixed ``scoring_`` so services may share one database. Instants are integer
microseconds since the epoch (``*_us``): exact, comparable and alike on SQLite and PostgreSQL.
Protobuf answers are stored as the bytes first sent, so a second delivery is answered with the
very same bytes.

- ``scoring_matches``: one row per match, made by its first recorded hand (rules, table,
  tournament), completed by RecordMatch (result, answer, round, end).
- ``scoring_hands``: one row per recorded hand; the primary key (hand id) and the unique
  (match id, hand number) make a duplicate impossible, however deliveries race.
- ``scoring_hand_seats``: each seat's points in each hand (and their score lines), with who
  held it: what players' statistics and standings add up.
- ``scoring_match_players``: each seat's line in an ended match (total, place, win).
- ``scoring_ratings``: a player's OpenSkill rating per mode and preset (``all`` for every
  preset together), with the rated matches and wins it counts.
- ``scoring_rating_changes``: what each rated match did to each rating.
- ``scoring_season_lines``: a player's rated matches in one week or month (``scoring.seasons``)
  per mode and preset, added up as each match is recorded: what seasonal leaderboards rank.
- ``scoring_tournament_places``: a finished tournament's final ranking as the lobby reported
  it (RecordTournamentRanking): what its whole standings serve.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)

from okey101.platform.schema import ID_LENGTH, new_metadata

metadata = new_metadata()


matches = Table(
    "scoring_matches",
    metadata,
    Column("match_id", String(ID_LENGTH), primary_key=True),
    Column("table_id", String(ID_LENGTH), nullable=False),
    Column("tournament_id", String(ID_LENGTH), nullable=False, server_default=""),
    Column("tournament_round", Integer, nullable=False, server_default="0"),
    Column("preset", String(32), nullable=False),
    # The resolved rule set: the engine's knobs as canonical JSON (sorted keys).
    Column("rules_json", Text, nullable=False),
    Column("partners", Boolean, nullable=False),
    Column("created_at_us", BigInteger, nullable=False),
    Column("ended", Boolean, nullable=False, server_default=false()),
    Column("ended_at_us", BigInteger, nullable=True),
    Column("hands_played", Integer, nullable=True),
    # Comma-separated winning seats, once ended.
    Column("winner_seats", String(16), nullable=True),
    Column("request_id", String(64), nullable=True),
    # SHA-256 of the RecordMatch request without request_id and locale.
    Column("content_hash", String(64), nullable=True),
    # The RecordMatchResponse sent, byte for byte.
    Column("response", LargeBinary, nullable=True),
    Column("recorded_at_us", BigInteger, nullable=True),
)
Index("ix_scoring_matches_tournament", matches.c.tournament_id, matches.c.tournament_round)
#: A request id is bound to one match's result (REQUEST_ID_REUSED for another).
Index("ix_scoring_matches_request", matches.c.request_id)

hands = Table(
    "scoring_hands",
    metadata,
    Column("hand_id", String(ID_LENGTH), primary_key=True),
    Column(
        "match_id",
        String(ID_LENGTH),
        ForeignKey("scoring_matches.match_id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("hand_number", Integer, nullable=False),
    Column("table_id", String(ID_LENGTH), nullable=False),
    Column("tournament_id", String(ID_LENGTH), nullable=False, server_default=""),
    Column("rules_version", String(64), nullable=False),
    # finished, stock_out or void (the engine's EndReason).
    Column("reason", String(16), nullable=False),
    Column("winner_seat", Integer, nullable=True),
    Column("with_okey", Boolean, nullable=False),
    Column("after_pairs", Boolean, nullable=False),
    Column("one_go", Boolean, nullable=False),
    Column("multiplier", Integer, nullable=False),
    Column("end_time_us", BigInteger, nullable=False),
    Column("server_seed_sha256", String(64), nullable=False),
    Column("server_seed", Text, nullable=False),
    # The players' seeds as a JSON list, in seat order.
    Column("player_seeds", Text, nullable=False),
    # The final HandState as sent (every rack, the stock): anyone can check the hand again.
    Column("final_state", LargeBinary, nullable=False),
    Column("request_id", String(64), nullable=False),
    Column("content_hash", String(64), nullable=False),
    # The RecordHandResponse sent, byte for byte.
    Column("response", LargeBinary, nullable=False),
    Column("recorded_at_us", BigInteger, nullable=False),
    UniqueConstraint("match_id", "hand_number"),
)

hand_seats = Table(
    "scoring_hand_seats",
    metadata,
    Column(
        "hand_id",
        String(ID_LENGTH),
        ForeignKey("scoring_hands.hand_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("seat", Integer, primary_key=True),
    Column("match_id", String(ID_LENGTH), nullable=False),
    # Empty for a bot seat.
    Column("player_id", String(ID_LENGTH), nullable=False),
    Column("display_name", String(256), nullable=False),
    Column("bot", Boolean, nullable=False),
    Column("preset", String(32), nullable=False),
    Column("void", Boolean, nullable=False),
    Column("points", Integer, nullable=False),
    Column("penalty_points", Integer, nullable=False),
    Column("penalty_count", Integer, nullable=False),
    # The penalty reasons, comma-separated, in order (the engine's names).
    Column("penalties", Text, nullable=False),
    # runs, pairs or "" (not opened).
    Column("opened_as", String(8), nullable=False),
    Column("finished", Boolean, nullable=False),
    # The seat's score lines as a JSON list of objects (kind, points, count, doubled_for,
    # penalty: the engine's names); "[]" for a void hand and hands recorded before lines were.
    Column("score_lines", Text, nullable=False, server_default="[]"),
)
#: A request id is bound to one hand's delivery (REQUEST_ID_REUSED for another).
Index("ix_scoring_hands_request", hands.c.request_id)
Index("ix_scoring_hand_seats_player", hand_seats.c.player_id, hand_seats.c.preset)
Index("ix_scoring_hand_seats_match", hand_seats.c.match_id)

match_players = Table(
    "scoring_match_players",
    metadata,
    Column(
        "match_id",
        String(ID_LENGTH),
        ForeignKey("scoring_matches.match_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("seat", Integer, primary_key=True),
    Column("player_id", String(ID_LENGTH), nullable=False),
    Column("display_name", String(256), nullable=False),
    Column("bot", Boolean, nullable=False),
    Column("total", Integer, nullable=False),
    Column("place", Integer, nullable=False),
    Column("winner", Boolean, nullable=False),
    Column("hands_played", Integer, nullable=False),
    Column("preset", String(32), nullable=False),
    Column("tournament_id", String(ID_LENGTH), nullable=False),
    Column("tournament_round", Integer, nullable=False),
    Column("ended_at_us", BigInteger, nullable=False),
)
Index(
    "ix_scoring_match_players_history",
    match_players.c.player_id,
    match_players.c.ended_at_us,
    match_players.c.match_id,
)
Index(
    "ix_scoring_match_players_tournament",
    match_players.c.tournament_id,
    match_players.c.tournament_round,
)

ratings = Table(
    "scoring_ratings",
    metadata,
    Column("player_id", String(ID_LENGTH), primary_key=True),
    # free_for_all or partners.
    Column("mode", String(16), primary_key=True),
    # A preset's name, or "all" for every preset together.
    Column("preset", String(32), primary_key=True),
    Column("display_name", String(256), nullable=False),
    Column("mu", Double, nullable=False),
    Column("sigma", Double, nullable=False),
    # mu - 3 sigma: what leaderboards sort on.
    Column("ordinal", Double, nullable=False),
    Column("matches", Integer, nullable=False),
    Column("wins", Integer, nullable=False),
    Column("updated_at_us", BigInteger, nullable=False),
)
Index(
    "ix_scoring_ratings_leaderboard",
    ratings.c.mode,
    ratings.c.preset,
    ratings.c.ordinal,
    ratings.c.player_id,
)

rating_changes = Table(
    "scoring_rating_changes",
    metadata,
    Column(
        "match_id",
        String(ID_LENGTH),
        ForeignKey("scoring_matches.match_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("player_id", String(ID_LENGTH), primary_key=True),
    Column("mode", String(16), primary_key=True),
    Column("preset", String(32), primary_key=True),
    Column("mu_before", Double, nullable=False),
    Column("sigma_before", Double, nullable=False),
    Column("matches_before", Integer, nullable=False),
    Column("mu_after", Double, nullable=False),
    Column("sigma_after", Double, nullable=False),
    Column("matches_after", Integer, nullable=False),
)

season_lines = Table(
    "scoring_season_lines",
    metadata,
    # The key's order serves a board: one window's lines are a range of it.
    Column("mode", String(16), primary_key=True),
    # A preset's name, or "all" for every preset together (as in scoring_ratings).
    Column("preset", String(32), primary_key=True),
    # week or month.
    Column("season", String(8), primary_key=True),
    # The window's first instant (Monday or the 1st, 00:00 UTC).
    Column("start_us", BigInteger, primary_key=True),
    Column("player_id", String(ID_LENGTH), primary_key=True),
    # Rated matches that ended in the window, those won, and the sum of the player's totals
    # (64-bit like every key a page token carries, so any token's key binds).
    Column("matches", BigInteger, nullable=False),
    Column("wins", BigInteger, nullable=False),
    Column("points", BigInteger, nullable=False),
    # What those matches changed the rating's ordinal by, added up.
    Column("rating_change", Double, nullable=False),
)

tournament_places = Table(
    "scoring_tournament_places",
    metadata,
    Column("tournament_id", String(ID_LENGTH), primary_key=True),
    Column("player_id", String(ID_LENGTH), primary_key=True),
    # The lobby's final place, from 1.
    Column("place", Integer, nullable=False),
    Column("display_name", String(256), nullable=False),
    # Forfeited under the tournament's no-show policy (the lobby's word).
    Column("forfeited", Boolean, nullable=False),
    # The request id of the call that recorded it: bound to this tournament's ranking.
    Column("request_id", String(128), nullable=False),
    Column("recorded_at_us", BigInteger, nullable=False),
    Index("ix_scoring_tournament_places_request", "request_id"),
)

__all__ = [
    "hand_seats",
    "hands",
    "match_players",
    "matches",
    "metadata",
    "rating_changes",
    "ratings",
    "season_lines",
    "tournament_places",
]
