"""What every service's tables share: the names of their constraints and the longest id.

Each stateful service (lobby, table, scoring) defines its tables on a ``MetaData`` of its own
(``new_metadata()``), so that its Alembic history knows only its own; the constraint names come
from one convention, so a migration can drop or alter a constraint by the name it was given.
Ids (players, tables, matches, hands, tickets, tournaments, tokens) are strings of at most
``ID_LENGTH`` characters in every service, and a request naming a longer one is refused.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import MetaData

#: How constraints and indexes are named (SQLAlchemy's naming convention).
NAMING: Final = {
    "ix": "ix_%(column_0_N_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

#: Ids are at most this long.
ID_LENGTH: Final = 128


def new_metadata() -> MetaData:
    """A service's own ``MetaData``, its constraints named by ``NAMING``."""
    return MetaData(naming_convention=NAMING)


__all__ = ["ID_LENGTH", "NAMING", "new_metadata"]
