"""The table service's tables (SQLAlchemy Core). The Alembic history in ``migrations/`` creates
them; a test checks the migrated schema matches these definitions.

Every table is prefixed ``table_`` so services may share one database. Instants are integer
microseconds since the epoch (``*_us``). Protobuf messages are stored as their bytes.

- ``table_tables``: one row per table: its settings, seats (JSON), and the snapshot every move
  starts from: the current hand's state, ``state_version`` and ``last_sequence``. A move updates
  it only if ``state_version`` is still the one the move was computed from.
- ``table_events``: the append-only log, keyed by (table, sequence): a duplicate sequence, and
  so a double move from two pods, is impossible. ``public`` is the event as everyone sees it;
  ``private_<seat>`` the serialized extra fields only that seat sees (its drawn tile, its dealt
  rack): protobuf merges concatenated messages, so ``public + private_<seat>`` is that seat's
  copy.
- ``table_requests``: the answer to each (caller, method, request id) and the fingerprint of
  the request it answered, written in the transaction of the change it answers.
- ``table_hands``: each hand's fairness record (the server seed stays here, unpublished, until
  the hand ends), its deck, and once ended its result and final state.
- ``table_moves``: every move of every hand, in order, with who made it: the hand record.
- ``table_outbox``: finished hands and matches to deliver to scoring, players' events for their
  streams and a staked table's chips records for the lobby, written in the transaction of the
  change that caused them, sent until acknowledged.
- ``table_liveness``: when a table pod was last alive, so time with no pod alive is not
  charged to players' turns.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    false,
)

from okey101.platform.schema import ID_LENGTH, new_metadata

metadata = new_metadata()


tables = Table(
    "table_tables",
    metadata,
    Column("table_id", String(ID_LENGTH), primary_key=True),
    Column("match_id", String(ID_LENGTH), nullable=False),
    Column("name", String(64), nullable=False, server_default=""),
    Column("visibility", Integer, nullable=False),
    Column("invite_code", String(32), nullable=False, server_default=""),
    Column("state", Integer, nullable=False),
    Column("host_player_id", String(ID_LENGTH), nullable=False, server_default=""),
    Column("tournament_id", String(ID_LENGTH), nullable=False, server_default=""),
    Column("tournament_round", Integer, nullable=False, server_default="0"),
    Column("preset", String(32), nullable=False),
    Column("rules", LargeBinary, nullable=False),
    # The rules engine version the table's hands are played under ("okey101-rules/1").
    Column("rules_version", String(64), nullable=False),
    Column("start_when_full", Boolean, nullable=False, server_default=false()),
    Column("created_us", BigInteger, nullable=False),
    Column("updated_us", BigInteger, nullable=False),
    # The seats: a JSON list of four objects (see ``okey101.table.records.SeatRecord``).
    Column("seats", Text, nullable=False),
    Column("state_version", BigInteger, nullable=False, server_default="0"),
    Column("last_sequence", BigInteger, nullable=False, server_default="0"),
    Column("hand_number", Integer, nullable=False, server_default="0"),
    Column("hand_id", String(ID_LENGTH), nullable=False, server_default=""),
    # The dealer of the current hand, or of the next one between hands.
    Column("dealer", Integer, nullable=False, server_default="0"),
    # The current (or last) hand's HandState; NULL before the first deal.
    Column("hand_state", LargeBinary, nullable=True),
    # JSON: the match so far (totals, results of its hands, dealer, hand ids).
    Column("match", Text, nullable=False),
    Column("turn_deadline_us", BigInteger, nullable=True),
    # The MatchResult once the match has ended.
    Column("match_result", LargeBinary, nullable=True),
    # Every write advances it, and applies only if it is still the one it was computed from.
    Column("revision", BigInteger, nullable=False, server_default="0"),
    # ``hand_state`` is the hand's state as of this sequence number; the hand's moves after it
    # replay onto it (``journal``).
    Column("snapshot_sequence", BigInteger, nullable=False, server_default="0"),
    # The table's timer: "turn" (a player's deadline), "bot" (a bot's or away player's step),
    # "deal" (the next hand), "start" (a full table to start); NULL for none. The pod that
    # wrote it holds it until ``timer_claimed_until_us``; then any pod may claim it.
    Column("timer_kind", String(8), nullable=True),
    Column("timer_due_us", BigInteger, nullable=True),
    Column("timer_claimed_until_us", BigInteger, nullable=True),
    Column("timer_claimed_by", String(ID_LENGTH), nullable=False, server_default=""),
    # Chips each seat stakes on the match (0: not a staked table) and the table fee in percent
    # of the pot; set at creation (migration 0005). A seat's stake hold is in ``seats``.
    Column("stake", BigInteger, nullable=False, server_default="0"),
    Column("fee_percent", Integer, nullable=False, server_default="0"),
    # Turns in a row a player may miss before a bot keeps their seat; 0: the service's setting
    # (migration 0006; the lobby's tournament tables say 1).
    Column("missed_turns_before_away", Integer, nullable=False, server_default="0"),
    # The match ends with the first hand that ends at or after this instant (or at it, between
    # hands); NULL: no deadline. Set at creation (migration 0007; a tournament round's limit).
    Column("match_deadline_us", BigInteger, nullable=True),
    Index("ix_table_tables_state_created", "state", "created_us"),
    Index("ix_table_tables_timer_due", "timer_due_us"),
    Index("ix_table_tables_tournament", "tournament_id"),
)

events = Table(
    "table_events",
    metadata,
    Column("table_id", String(ID_LENGTH), primary_key=True),
    Column("sequence", BigInteger, primary_key=True, autoincrement=False),
    Column("state_version", BigInteger, nullable=False),
    Column("kind", Integer, nullable=False),
    Column("hand_id", String(ID_LENGTH), nullable=False, server_default=""),
    Column("time_us", BigInteger, nullable=False),
    Column("public", LargeBinary, nullable=False),
    Column("private_0", LargeBinary, nullable=True),
    Column("private_1", LargeBinary, nullable=True),
    Column("private_2", LargeBinary, nullable=True),
    Column("private_3", LargeBinary, nullable=True),
    Index("ix_table_events_hand", "hand_id", "sequence"),
)

requests = Table(
    "table_requests",
    metadata,
    Column("caller", String(ID_LENGTH), primary_key=True),
    Column("method", String(32), primary_key=True),
    Column("request_id", String(64), primary_key=True),
    Column("table_id", String(ID_LENGTH), nullable=False),
    Column("response", LargeBinary, nullable=False),
    # SHA-256 of the request without its locale (AIP-155: a request id is bound to its
    # request; ``answers``). Answers stored before it was kept were deleted (migration 0004).
    Column("fingerprint", LargeBinary, nullable=False),
    Column("created_us", BigInteger, nullable=False),
)

hands = Table(
    "table_hands",
    metadata,
    Column("hand_id", String(ID_LENGTH), primary_key=True),
    Column("table_id", String(ID_LENGTH), nullable=False),
    Column("match_id", String(ID_LENGTH), nullable=False),
    Column("hand_number", Integer, nullable=False),
    Column("dealer", Integer, nullable=False),
    Column("rules_version", String(64), nullable=False),
    Column("server_seed", String(64), nullable=False),
    Column("commitment", String(64), nullable=False),
    # JSON: the four player seeds, hex ("" for none).
    Column("player_seeds", Text, nullable=False),
    # JSON: the deck's 106 tile ids in dealing order.
    Column("deck", Text, nullable=False),
    # JSON: the four seats as they were at the deal.
    Column("seats", Text, nullable=False),
    Column("started_us", BigInteger, nullable=False),
    Column("ended_us", BigInteger, nullable=True),
    Column("result", LargeBinary, nullable=True),
    Column("final_state", LargeBinary, nullable=True),
    Index("ix_table_hands_table", "table_id", "hand_number"),
)

moves = Table(
    "table_moves",
    metadata,
    Column("hand_id", String(ID_LENGTH), primary_key=True),
    # The sequence number of the first event of the call that made it, and its place in that
    # call's list of moves.
    Column("sequence", BigInteger, primary_key=True, autoincrement=False),
    Column("action_index", Integer, primary_key=True, autoincrement=False),
    Column("seat", Integer, nullable=False),
    Column("action", LargeBinary, nullable=False),
    Column("source", Integer, nullable=False),
    Column("time_us", BigInteger, nullable=False),
)

outbox = Table(
    "table_outbox",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("table_id", String(ID_LENGTH), nullable=False),
    # "hand" (ScoringService.RecordHand), "match" (RecordMatch), "player"
    # (LobbyService.RecordPlayerEvents) or "chips" (RecordTableChips).
    Column("kind", String(8), nullable=False),
    Column("key", String(ID_LENGTH), nullable=False, unique=True),
    Column("payload", LargeBinary, nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("next_attempt_us", BigInteger, nullable=False),
    Column("sent_us", BigInteger, nullable=True),
    Column("last_error", Text, nullable=False, server_default=""),
    Index("ix_table_outbox_pending", "sent_us", "next_attempt_us"),
)

liveness = Table(
    "table_liveness",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("alive_us", BigInteger, nullable=False),
)
