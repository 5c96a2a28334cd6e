"""The lobby's tables (SQLAlchemy Core). The Alembic history in ``migrations/`` creates them; a
test checks the migrated schema matches these definitions.

Every table is prefixed ``lobby_`` so services may share one database. Instants are integer
microseconds since the epoch (``*_us``), as in the scoring service.

- ``lobby_players``: guests (a device id and the SHA-256 of their guest secret) and accounts (a
  unique lower-case username and an Argon2id hash of the password).
- ``lobby_organisers``: the accounts that may create tournaments (the organiser role), with who
  granted it, when and why; ``lobby_organiser_changes``: every grant and revocation that changed
  the role, in order (the operator, the reason, the request id, the time).
- ``lobby_refresh_tokens``: one row per refresh token ever issued, stored as the SHA-256 of its
  secret; ``family_id`` groups the tokens one login rotated through (a reused token revokes its
  family); ``used_us`` marks a rotated one, ``revoked_us`` a revoked one.
- ``lobby_requests``: the answers of state-changing calls by a digest of (method, caller,
  request id), encrypted under a key derived from the request id (``idempotency``); rows with
  no answer and a ``limit:<action>`` method mark the request ids a rate limit has counted.
- ``lobby_rate_limits``: a counter per (limit, subject digest, window start): fixed windows
  shared by every lobby pod.
- ``lobby_tables``: the tables the lobby created: private tables' invite codes, and where a table
  came from (hosted, quick match, tournament).
- ``lobby_hostings``: HostTable calls not yet done (the table created and its host seated): the
  two table service requests each makes, kept until they are answered, so any pod can finish a
  call whose pod or caller went away (``hosting_finisher``).
- ``lobby_staked_seats``: seats at staked tables whose stake the lobby holds and whose sit the
  table service has not yet answered (``staked_seats``), kept until it has.
- ``lobby_queue``: quick-match tickets (a queue is a preset and a stake). A partial unique index
  keeps a player in one queue at a time; matchers claim waiting tickets with ``FOR UPDATE SKIP
  LOCKED``.
- ``lobby_tournaments``, ``lobby_tournament_players``, ``lobby_tournament_tables``: a tournament
  (with its description and category, listed by category and creation), its entrants (with
  where they got to), and the tables of each round (with their results);
  ``lobby_tournament_leases``: which lobby pod drives a tournament, until when.
- ``lobby_player_events``: each player's own events (WatchPlayer), numbered per player; kept 24
  hours. ``lobby_player_cursors``: each player's last sequence number, so numbers are never
  reused once old events are deleted (the row's lock orders a player's concurrent events).
- ``lobby_push_devices``: where a player's push notifications go (a platform and its token,
  unique by the token's digest) and in which language (``lobby.push``).
- ``lobby_push_outbox``: one row per pushed event per device, keyed by the event (player and
  sequence) and the device, so it is enqueued once, with its state, attempts, next attempt and
  the moment after which it is no longer worth sending.
- ``lobby_player_presence``: one row per open WatchPlayer stream, on any pod, with a lease its
  pod renews while the stream is open (a push is not sent to a player who has one).
- ``lobby_chip_transactions``, ``lobby_chip_entries``: the chips' double-entry ledger
  (``lobby.chips``, docs/chips.md): one transaction per movement, unique by the idempotency key
  of its cause, and its entries (an account, a signed amount, the account's balance after it),
  which sum to zero. Entries are numbered in the order their accounts' balances changed, so an
  account's entries newest first are ``entry_id`` descending.
- ``lobby_chip_balances``: each account's balance, a cache of the sum of its entries (the
  audit checks it) that the ledger's conditional updates keep from going negative.
- ``lobby_chip_holds``: each stake moved into a table's pot (keyed by the hold's ledger key),
  held until the match starts, then in play, then paid or refunded, exactly once.
- ``lobby_chip_pots``: each staked table's pot (one match), its stake and fee, and its state
  (open, started, paid, refunded).
- ``lobby_chip_daily_claims``: each player's last daily grant and how many they have claimed.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    false,
    text,
)

from okey101.platform.schema import ID_LENGTH, new_metadata

metadata = new_metadata()


players = Table(
    "lobby_players",
    metadata,
    Column("player_id", String(ID_LENGTH), primary_key=True),
    # guest or account.
    Column("kind", String(8), nullable=False),
    Column("display_name", String(64), nullable=False),
    # Accounts: the username in lower case (unique).
    Column("username", String(32), nullable=True, unique=True),
    # Accounts: the Argon2id hash (PHC string).
    Column("password_hash", Text, nullable=True),
    # Guests (and accounts that were guests): the device (unique).
    Column("device_id", String(128), nullable=True, unique=True),
    # Guests: SHA-256 hex of the guest secret (a 256-bit random value).
    Column("guest_secret_hash", String(64), nullable=True),
    Column("created_us", BigInteger, nullable=False),
    Column("upgraded_us", BigInteger, nullable=True),
)

organisers = Table(
    "lobby_organisers",
    metadata,
    Column(
        "player_id",
        String(ID_LENGTH),
        ForeignKey("lobby_players.player_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("granted_us", BigInteger, nullable=False),
    # The service token's subject that granted it (an operator).
    Column("granted_by", String(128), nullable=False),
    Column("reason", Text, nullable=False),
)

organiser_changes = Table(
    "lobby_organiser_changes",
    metadata,
    Column("change_id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("player_id", String(ID_LENGTH), nullable=False),
    # grant or revoke.
    Column("action", String(8), nullable=False),
    # The service token's subject that made it.
    Column("operator", String(128), nullable=False),
    Column("reason", Text, nullable=False),
    Column("request_id", String(128), nullable=False),
    Column("changed_us", BigInteger, nullable=False),
    Index("ix_lobby_organiser_changes_player", "player_id", "change_id"),
)

refresh_tokens = Table(
    "lobby_refresh_tokens",
    metadata,
    Column("token_id", String(ID_LENGTH), primary_key=True),
    Column("family_id", String(ID_LENGTH), nullable=False),
    Column(
        "player_id",
        String(ID_LENGTH),
        ForeignKey("lobby_players.player_id", ondelete="CASCADE"),
        nullable=False,
    ),
    # SHA-256 hex of the token's secret part.
    Column("secret_hash", String(64), nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Column("expires_us", BigInteger, nullable=False),
    Column("used_us", BigInteger, nullable=True),
    Column("revoked_us", BigInteger, nullable=True),
)
Index("ix_lobby_refresh_tokens_family", refresh_tokens.c.family_id)
Index("ix_lobby_refresh_tokens_player", refresh_tokens.c.player_id)
Index("ix_lobby_refresh_tokens_revoked", refresh_tokens.c.revoked_us)

requests = Table(
    "lobby_requests",
    metadata,
    # SHA-256 hex of (method, caller, request id).
    Column("request_key", String(64), primary_key=True),
    Column("method", String(64), nullable=False),
    # Nonce and AES-GCM ciphertext of (request fingerprint, answer).
    Column("payload", LargeBinary, nullable=True),
    Column("created_us", BigInteger, nullable=False),
)
Index("ix_lobby_requests_created", requests.c.created_us)

rate_limits = Table(
    "lobby_rate_limits",
    metadata,
    Column("bucket", String(64), primary_key=True),
    Column("window_start_us", BigInteger, primary_key=True),
    Column("action", String(32), nullable=False),
    Column("count", Integer, nullable=False),
)
Index("ix_lobby_rate_limits_window", rate_limits.c.window_start_us)

tables = Table(
    "lobby_tables",
    metadata,
    Column("table_id", String(ID_LENGTH), primary_key=True),
    Column("invite_code", String(64), nullable=True, unique=True),
    # public or private.
    Column("visibility", String(8), nullable=False),
    Column("host_player_id", String(ID_LENGTH), nullable=False, server_default=""),
    # hosted, quick_match or tournament.
    Column("source", String(16), nullable=False),
    Column("preset", String(32), nullable=False),
    Column("created_us", BigInteger, nullable=False),
)

hostings = Table(
    "lobby_hostings",
    metadata,
    # The derived request id of its CreateTable.
    Column("create_request_id", String(64), primary_key=True),
    # The CreateTableRequest, then the host's SitRequest (without its table id), as bytes.
    Column("create_request", LargeBinary, nullable=False),
    Column("sit_request", LargeBinary, nullable=False),
    Column("created_us", BigInteger, nullable=False),
)
Index("ix_lobby_hostings_created", hostings.c.created_us)

staked_seats = Table(
    "lobby_staked_seats",
    metadata,
    # The key of the stake held for the seat (``lobby.staked_seats``).
    Column("hold_key", String(128), primary_key=True),
    # The SitRequest owed, its stake_hold_key set, as bytes.
    Column("sit_request", LargeBinary, nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Index("ix_lobby_staked_seats_created", "created_us"),
)

queue = Table(
    "lobby_queue",
    metadata,
    Column("ticket_id", String(ID_LENGTH), primary_key=True),
    Column(
        "player_id",
        String(ID_LENGTH),
        ForeignKey("lobby_players.player_id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("display_name", String(64), nullable=False),
    Column("preset", String(32), nullable=False),
    # waiting, matched or cancelled.
    Column("state", String(16), nullable=False),
    Column("enqueue_us", BigInteger, nullable=False),
    Column("bots_fill_us", BigInteger, nullable=False),
    Column("table_id", String(ID_LENGTH), nullable=True),
    Column("seat", Integer, nullable=True),
    Column("updated_us", BigInteger, nullable=False),
    # The chips staked a seat (0: none): a queue is a preset and a stake.
    Column("stake", BigInteger, nullable=False, server_default=text("0")),
)
Index("ix_lobby_queue_waiting", queue.c.preset, queue.c.state, queue.c.enqueue_us)
Index(
    "ix_lobby_queue_one_waiting",
    queue.c.player_id,
    unique=True,
    sqlite_where=text("state = 'waiting'"),
    postgresql_where=text("state = 'waiting'"),
)

tournaments = Table(
    "lobby_tournaments",
    metadata,
    Column("tournament_id", String(ID_LENGTH), primary_key=True),
    Column("name", String(64), nullable=False),
    # The okey.v1.RuleSet every table plays, as sent (resolved by the table service).
    Column("rules", LargeBinary, nullable=False),
    Column("preset", String(32), nullable=False),
    Column("max_players", Integer, nullable=False),
    Column("advance_per_table", Integer, nullable=False),
    # 0: as many as it takes to reach one final table.
    Column("planned_rounds", Integer, nullable=False),
    # The okey.v1.BotLevel number of the bots that fill seats.
    Column("bot_level", Integer, nullable=False),
    # registering, running, finished or cancelled.
    Column("state", String(16), nullable=False),
    Column("current_round", Integer, nullable=False, server_default="0"),
    Column("winner_player_id", String(ID_LENGTH), nullable=False, server_default=""),
    Column("creator_player_id", String(ID_LENGTH), nullable=False, server_default=""),
    Column("registered", Integer, nullable=False, server_default="0"),
    Column("created_us", BigInteger, nullable=False),
    Column("started_us", BigInteger, nullable=True),
    Column("finished_us", BigInteger, nullable=True),
    # Chips an entrant pays (0: free), and the prize table (``chips.prizes``, JSON).
    Column("entry_fee", BigInteger, nullable=False, server_default=text("0")),
    Column("prizes", Text, nullable=False, server_default=text("'[]'")),
    # Finished, and its final ranking recorded by the scoring service (RecordTournamentRanking).
    Column("ranking_reported", Boolean, nullable=False, server_default=false()),
    # The no-show policy (NoShowPolicy.missed_turns, resolved: never 0).
    Column("no_show_missed_turns", Integer, nullable=False, server_default="2"),
    # What the organiser says of it (0-500 characters), and its category (a slug, "" for none).
    Column("description", Text, nullable=False, server_default=text("''")),
    Column("category", String(32), nullable=False, server_default=text("''")),
    # When it starts by itself (None: by hand), and when its registration opens (None: at once).
    Column("scheduled_start_us", BigInteger, nullable=True),
    Column("registration_opens_us", BigInteger, nullable=True),
    # The check-in window before the scheduled start (0: none), and whether its opening has been
    # told to the registered players.
    Column("check_in_seconds", Integer, nullable=False, server_default="0"),
    Column("check_in_told", Boolean, nullable=False, server_default=false()),
    # The fewest entrants it starts with; the most substitutes it takes once full.
    Column("min_players", Integer, nullable=False, server_default="2"),
    Column("max_substitutes", Integer, nullable=False, server_default="0"),
    # The recurring series it is an occurrence of ("" for none).
    Column("series_id", String(ID_LENGTH), nullable=False, server_default=""),
    # Why it was cancelled (a reason code; "" otherwise).
    Column("cancel_reason", String(32), nullable=False, server_default=""),
    # Its pace: a round's time limit and the break between rounds (seconds, 0: none), seating
    # round 1 by rating; paused; the end of the break before the round in play (None: none).
    Column("round_seconds", Integer, nullable=False, server_default="0"),
    Column("break_seconds", Integer, nullable=False, server_default="0"),
    Column("seed_by_rating", Boolean, nullable=False, server_default=false()),
    Column("paused", Boolean, nullable=False, server_default=false()),
    Column("next_round_us", BigInteger, nullable=True),
)
Index("ix_lobby_tournaments_state", tournaments.c.state, tournaments.c.created_us)
Index("ix_lobby_tournaments_category", tournaments.c.category, tournaments.c.created_us)
Index("ix_lobby_tournaments_scheduled", tournaments.c.state, tournaments.c.scheduled_start_us)
Index("ix_lobby_tournaments_series", tournaments.c.series_id, tournaments.c.scheduled_start_us)

tournament_series = Table(
    "lobby_tournament_series",
    metadata,
    Column("series_id", String(ID_LENGTH), primary_key=True),
    Column("creator_player_id", String(ID_LENGTH), nullable=False, server_default=""),
    # The occurrences' settings: ``stores.tournaments.NewTournament`` as JSON, times unset.
    Column("plan", Text, nullable=False),
    # The okey.v1.TournamentRecurrence, as bytes.
    Column("recurrence", LargeBinary, nullable=False),
    # The start of the next occurrence to create.
    Column("next_start_us", BigInteger, nullable=False),
    Column("created_us", BigInteger, nullable=False),
    # When it was stopped (None: it goes on).
    Column("stopped_us", BigInteger, nullable=True),
)

tournament_players = Table(
    "lobby_tournament_players",
    metadata,
    Column(
        "tournament_id",
        String(ID_LENGTH),
        ForeignKey("lobby_tournaments.tournament_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("player_id", String(ID_LENGTH), primary_key=True),
    Column("display_name", String(64), nullable=False),
    # 1, 2, 3, ... in registration order: the last tie-break.
    Column("registration", Integer, nullable=False),
    Column("round_reached", Integer, nullable=False, server_default="0"),
    Column("eliminated", Boolean, nullable=False, server_default=false()),
    Column("table_id", String(ID_LENGTH), nullable=False, server_default=""),
    # The player's last finished match: won it, total, hands finished, penalty points.
    Column("won_last", Boolean, nullable=False, server_default=false()),
    Column("match_total", Integer, nullable=False, server_default="0"),
    Column("hands_finished", Integer, nullable=False, server_default="0"),
    Column("penalty_points", Integer, nullable=False, server_default="0"),
    Column("matches_won", Integer, nullable=False, server_default="0"),
    # Set once the tournament has ended: the final rank, from 1.
    Column("final_rank", Integer, nullable=True),
    # Forfeited under the tournament's no-show policy: never advances, ranked below the rest.
    Column("forfeited", Boolean, nullable=False, server_default=false()),
    # Checked in for the scheduled start; waiting as a substitute (before the start only).
    Column("checked_in", Boolean, nullable=False, server_default=false()),
    Column("substitute", Boolean, nullable=False, server_default=false()),
    # Disqualified by the organiser (also forfeited: never advances), and why.
    Column("disqualified", Boolean, nullable=False, server_default=false()),
    Column("disqualification_reason", Text, nullable=False, server_default=text("''")),
)

tournament_tables = Table(
    "lobby_tournament_tables",
    metadata,
    Column(
        "tournament_id",
        String(ID_LENGTH),
        ForeignKey("lobby_tournaments.tournament_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("round", Integer, primary_key=True),
    Column("table_index", Integer, primary_key=True),
    # The four seats' players as a JSON list ("" for a bot seat).
    Column("seats", Text, nullable=False),
    # Players advancing from this table.
    Column("advance", Integer, nullable=False),
    Column("table_id", String(ID_LENGTH), nullable=True),
    Column("match_id", String(ID_LENGTH), nullable=True),
    # planned, started or finished.
    Column("state", String(16), nullable=False),
    # Each seat's line of the finished match as JSON (total, winner, hands finished, penalties).
    Column("result", Text, nullable=True),
    # The round's time limit: the table's match deadline (None: none).
    Column("deadline_us", BigInteger, nullable=True),
)

tournament_leases = Table(
    "lobby_tournament_leases",
    metadata,
    Column(
        "tournament_id",
        String(ID_LENGTH),
        ForeignKey("lobby_tournaments.tournament_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    # The lobby pod driving it ("" for none).
    Column("holder", String(128), nullable=False),
    Column("expires_us", BigInteger, nullable=False),
    # How many times the lease changed hands (a fencing number).
    Column("generation", Integer, nullable=False),
)

player_events = Table(
    "lobby_player_events",
    metadata,
    Column("player_id", String(ID_LENGTH), primary_key=True),
    Column("sequence", BigInteger, primary_key=True, autoincrement=False),
    Column("kind", Integer, nullable=False),
    Column("time_us", BigInteger, nullable=False),
    # The PlayerEvent message (lobby.proto), sequence and time included.
    Column("event", LargeBinary, nullable=False),
    # What made it, when another service recorded it (RecordPlayerEvents' key): once only.
    Column("cause", String(255), nullable=True, unique=True),
    Index("ix_lobby_player_events_time", "time_us"),
)

player_cursors = Table(
    "lobby_player_cursors",
    metadata,
    Column("player_id", String(ID_LENGTH), primary_key=True),
    Column("last_sequence", BigInteger, nullable=False),
)

push_devices = Table(
    "lobby_push_devices",
    metadata,
    Column("device_id", String(ID_LENGTH), primary_key=True),
    Column(
        "player_id",
        String(ID_LENGTH),
        ForeignKey("lobby_players.player_id", ondelete="CASCADE"),
        nullable=False,
    ),
    # fcm, apns or webhook.
    Column("platform", String(8), nullable=False),
    # The FCM registration token, the APNs device token (hex) or the webhook URL.
    Column("token", Text, nullable=False),
    # SHA-256 hex of the platform and the token: one device per token.
    Column("token_digest", String(64), nullable=False, unique=True),
    # en or tr.
    Column("language", String(2), nullable=False),
    Column("created_us", BigInteger, nullable=False),
    # Registered (again) last: the oldest goes first when a player has too many.
    Column("registered_us", BigInteger, nullable=False),
    Index("ix_lobby_push_devices_player", "player_id", "registered_us"),
)

push_outbox = Table(
    "lobby_push_outbox",
    metadata,
    # The event (its player and sequence) and the device: enqueued once.
    Column("player_id", String(ID_LENGTH), primary_key=True),
    Column("sequence", BigInteger, primary_key=True, autoincrement=False),
    Column(
        "device_id",
        String(ID_LENGTH),
        ForeignKey("lobby_push_devices.device_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("kind", Integer, nullable=False),
    # The PlayerEvent message (lobby.proto), as appended.
    Column("event", LargeBinary, nullable=False),
    # pending, sending (claimed by a sender until next_attempt_us), sent or dropped.
    Column("state", String(8), nullable=False),
    # Why it was dropped: expired, superseded, stream, rejected, failed, lost.
    Column("reason", String(16), nullable=True),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("created_us", BigInteger, nullable=False),
    Column("next_attempt_us", BigInteger, nullable=False),
    Column("expires_us", BigInteger, nullable=False),
    Column("done_us", BigInteger, nullable=True),
    Index("ix_lobby_push_outbox_due", "state", "next_attempt_us"),
    Index("ix_lobby_push_outbox_device", "device_id"),
    Index("ix_lobby_push_outbox_created", "created_us"),
)

player_presence = Table(
    "lobby_player_presence",
    metadata,
    Column("stream_id", String(ID_LENGTH), primary_key=True),
    Column("player_id", String(ID_LENGTH), nullable=False),
    # The lobby pod serving the stream.
    Column("holder", String(128), nullable=False),
    # The stream counts as open until then (renewed while it is).
    Column("expires_us", BigInteger, nullable=False),
    Index("ix_lobby_player_presence_player", "player_id", "expires_us"),
    Index("ix_lobby_player_presence_holder", "holder"),
)

chip_transactions = Table(
    "lobby_chip_transactions",
    metadata,
    Column("transaction_id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    # The idempotency key of its cause (grant:start:<player>, payout:<table>, ...): once only.
    Column("key", String(255), nullable=False, unique=True),
    # grant, daily_grant, stake, payout, fee, refund, prize, entry_fee or adjustment.
    Column("reason", String(16), nullable=False),
    # What it belongs to, where it belongs to one player, table or tournament.
    Column("player_id", String(ID_LENGTH), nullable=True),
    Column("table_id", String(ID_LENGTH), nullable=True),
    Column("tournament_id", String(ID_LENGTH), nullable=True),
    # An operator's reason (adjustments).
    Column("note", Text, nullable=True),
    Column("created_us", BigInteger, nullable=False),
    Index("ix_lobby_chip_transactions_table", "table_id"),
)

chip_entries = Table(
    "lobby_chip_entries",
    metadata,
    Column("entry_id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column(
        "transaction_id",
        BigInteger,
        ForeignKey("lobby_chip_transactions.transaction_id"),
        nullable=False,
    ),
    # player:<id>, pot:<table>, pool:<tournament> or house:<grants|adjustments|fees|bots>.
    Column("account", String(160), nullable=False),
    # Signed: chips into the account (positive) or out of it (negative).
    Column("amount", BigInteger, nullable=False),
    Column("balance_after", BigInteger, nullable=False),
    Index("ix_lobby_chip_entries_account", "account", "entry_id"),
    Index("ix_lobby_chip_entries_transaction", "transaction_id"),
)

chip_balances = Table(
    "lobby_chip_balances",
    metadata,
    Column("account", String(160), primary_key=True),
    Column("balance", BigInteger, nullable=False),
    Column("updated_us", BigInteger, nullable=False),
)

chip_holds = Table(
    "lobby_chip_holds",
    metadata,
    # The key of the ledger transaction that moved the stake into the pot.
    Column("hold_key", String(255), primary_key=True),
    Column("table_id", String(ID_LENGTH), nullable=False),
    # "" for a bot's stake, which the house pays.
    Column("player_id", String(ID_LENGTH), nullable=False),
    # A bot's seat (a player's hold is not tied to a seat until the match starts).
    Column("seat", Integer, nullable=True),
    Column("amount", BigInteger, nullable=False),
    # held, in_play, refunded or paid.
    Column("state", String(8), nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Column("settled_us", BigInteger, nullable=True),
    Index("ix_lobby_chip_holds_player", "player_id", "state"),
    Index("ix_lobby_chip_holds_table", "table_id"),
)

chip_pots = Table(
    "lobby_chip_pots",
    metadata,
    Column("table_id", String(ID_LENGTH), primary_key=True),
    Column("stake", BigInteger, nullable=False),
    Column("fee_percent", Integer, nullable=False),
    # open, started, paid or refunded.
    Column("state", String(8), nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Column("settled_us", BigInteger, nullable=True),
)

chip_daily_claims = Table(
    "lobby_chip_daily_claims",
    metadata,
    Column("player_id", String(ID_LENGTH), primary_key=True),
    Column("last_claim_us", BigInteger, nullable=False),
    # Daily grants claimed so far: the n-th claim's ledger key is daily:<player>:<n>.
    Column("claims", BigInteger, nullable=False),
)

__all__ = [
    "chip_balances",
    "chip_daily_claims",
    "chip_entries",
    "chip_holds",
    "chip_pots",
    "chip_transactions",
    "hostings",
    "metadata",
    "organiser_changes",
    "organisers",
    "player_cursors",
    "player_events",
    "player_presence",
    "players",
    "push_devices",
    "push_outbox",
    "queue",
    "rate_limits",
    "refresh_tokens",
    "requests",
    "staked_seats",
    "tables",
    "tournament_leases",
    "tournament_players",
    "tournament_tables",
    "tournaments",
]
