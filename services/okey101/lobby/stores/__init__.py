"""The lobby's storage: one store per aggregate, a module each in this package, over one
database (SQLite in local mode, PostgreSQL in a cluster; the tables are ``lobby.models``).
``LobbyRepository`` holds them, by attribute (and module):

- ``accounts``: players, their credentials and refresh tokens;
- ``organisers``: the accounts that may create tournaments, and the role's changes;
- ``limits`` (``rate_limits``): rate-limit counts;
- ``directory``: the tables the lobby made;
- ``hostings``: HostTable calls not yet done;
- ``staked_seats``: sits at staked tables whose stake is held, not yet answered;
- ``queue`` (``quick_match``): quick-match tickets;
- ``tournaments``: tournaments, their players and tables, and the drivers' leases;
- ``tournament_schedules``: check-in, the scheduler's due starts and notices, recurring series;
- ``tournament_control``: an organiser's pause, resume and disqualification;
- ``player_events``: each player's own events (WatchPlayer), numbered per player;
- ``push_devices``, ``push_outbox``, ``presence``: players' push devices, the notifications
  their events owe them, and the streams open on every pod (``lobby.push``);
- stored answers of state-changing calls are ``answers`` (``platform.idempotency``).

Every change is one transaction (``Database.transaction``: retried on a transient failure), and
each store takes and returns the lobby's records (``lobby.records``); answers to calls are built
by the caller's ``respond`` inside the transaction that stores them. Where two lobby pods could
race:

- a login, refresh or logout locks the row it reads (the device's player, the refresh token) with
  ``FOR UPDATE`` before it looks up a stored answer, so a retry racing its own first attempt waits
  and then finds the answer, and a refresh token is rotated exactly once;
- other stored answers are claimed first (an ``INSERT ... ON CONFLICT DO NOTHING`` of the request
  key: a second transaction with the same key waits for the first and then reads its answer);
- uniqueness (a username, a device, one waiting ticket per player, one registration) is the
  database's unique constraints, and a violation is answered as what already exists;
- rate limits are one upsert that counts and returns the count, in the transaction that marks
  the request id counted, so a retry is not counted again;
- tournament writes are fenced by the tournament's lease: a pod that lost the lease changes
  nothing.

On SQLite (one process in local mode) every write transaction begins with ``BEGIN IMMEDIATE``,
so writers simply take turns.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.push.devices import PushDevices
from okey101.lobby.push.outbox import KEPT_US as PUSHES_KEPT_US
from okey101.lobby.push.outbox import PushOutbox
from okey101.lobby.push.presence import StreamPresence
from okey101.lobby.records import AccessIssuer, now_us
from okey101.lobby.stores.accounts import Accounts
from okey101.lobby.stores.answers import ANSWERS_KEPT_US, STORE
from okey101.lobby.stores.directory import Directory
from okey101.lobby.stores.hostings import Hostings
from okey101.lobby.stores.organisers import Organisers
from okey101.lobby.stores.player_events import KEPT_US as EVENTS_KEPT_US
from okey101.lobby.stores.player_events import PlayerEvents
from okey101.lobby.stores.quick_match import QuickMatchQueue
from okey101.lobby.stores.rate_limits import RateCounter
from okey101.lobby.stores.staked_seats import StakedSeats
from okey101.lobby.stores.tournament_control import TournamentControl
from okey101.lobby.stores.tournament_schedules import TournamentSchedules
from okey101.lobby.stores.tournaments import Tournaments
from okey101.platform.database import Database


class LobbyRepository:
    """The lobby's stores over ``database`` (module docstring). ``issue_access`` signs access
    tokens; refresh tokens live ``refresh_seconds``, tournament leases ``lease_seconds``."""

    def __init__(
        self,
        database: Database,
        issue_access: AccessIssuer,
        *,
        refresh_seconds: float,
        lease_seconds: float,
    ) -> None:
        self.database = database
        self.accounts = Accounts(database, issue_access, refresh_seconds=refresh_seconds)
        self.organisers = Organisers(database)
        self.limits = RateCounter(database)
        self.directory = Directory(database)
        self.hostings = Hostings(database)
        self.staked_seats = StakedSeats(database)
        self.queue = QuickMatchQueue(database)
        self.player_events = PlayerEvents(database)
        self.push_devices = PushDevices(database)
        self.push_outbox = PushOutbox(database)
        self.presence = StreamPresence(database)
        self.tournaments = Tournaments(
            database, lease_seconds=lease_seconds, events=self.player_events
        )
        self.tournament_schedules = TournamentSchedules(database, self.player_events)
        self.tournament_control = TournamentControl(database, self.player_events)

    async def prune(self) -> None:
        """Forget stored answers (and HostTable calls never done) past their keeping time,
        long-expired refresh tokens, old rate-limit windows, players' events and push
        notifications past a day, and the presence of streams whose pod died."""
        now = now_us()

        async def work(session: AsyncConnection) -> None:
            await STORE.prune(session, now - ANSWERS_KEPT_US)
            await Hostings.prune(session, now - ANSWERS_KEPT_US)
            await Accounts.prune(session, now)
            await RateCounter.prune(session, now)
            await PlayerEvents.prune(session, now - EVENTS_KEPT_US)
            await PushOutbox.prune(session, now - PUSHES_KEPT_US)
            await StreamPresence.prune(session, now)

        await self.database.transaction(work)


__all__ = ["LobbyRepository"]
