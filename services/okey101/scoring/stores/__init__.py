"""The scoring service's storage: one store per aggregate, a module each in this package, over
one ``Database``. ``ScoringRepository`` holds them, by attribute (each named as its module):

- ``hands``: RecordHand, exactly once however deliveries race, and the hands of a match;
- ``matches``: RecordMatch, exactly once, and the score sheet;
- ``ratings``: the ratings a match changes;
- ``leaderboards``: the all-time and seasonal leaderboards, paged and around a player;
- ``standings``: a tournament's standings;
- ``players``: a player's statistics and history.

Hands and matches store their answers on their own rows, keyed by the hand or match id
(``platform.idempotency``): every delivery of the same hand gets the first delivery's answer,
byte for byte, whatever its request id.
"""

from __future__ import annotations

from okey101.platform.database import Database
from okey101.scoring.stores.hands import Hands
from okey101.scoring.stores.leaderboards import Leaderboards
from okey101.scoring.stores.matches import Matches
from okey101.scoring.stores.players import PlayerRecords
from okey101.scoring.stores.ratings import RatingStore
from okey101.scoring.stores.standings import Standings


class ScoringRepository:
    """Everything the scoring service stores and reads, over one ``Database``."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.hands = Hands(database)
        self.ratings = RatingStore(database)
        self.leaderboards = Leaderboards(database)
        self.matches = Matches(database, self.ratings)
        self.standings = Standings(database)
        self.players = PlayerRecords(database)


__all__ = ["ScoringRepository"]
