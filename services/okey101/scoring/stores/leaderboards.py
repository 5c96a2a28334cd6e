"""Leaderboards (GetLeaderboard): the all-time OpenSkill board and the seasonal boards, paged down
and up, and around a player.

A board has one line per player, ordered by its measure, best first, then by player id (the
order within a tie):

- all time: the mode's and preset's ``scoring_ratings`` rows with enough rated matches, by
  rating ordinal, higher first;
- a season (``scoring.seasons``): the players' lines of the window in
  ``scoring_season_lines`` (their rated matches that ended in it, added up as each match is
  recorded, ``stores.ratings``) with enough matches: matches won, more first, then the sum of
  match totals, lower first (the rule of a tournament's standings). A window's lines are one
  range of that table's key, one line a player: a page reads the window's players, never
  its matches.

A line's key is its measure and player id. A page continues strictly after (down) or before (up)
a key, so a line whose key does not change is sent once however lines are inserted meanwhile.
Equal measures share a rank (1, 2, 2, 4): one more than the lines with a better measure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, func, literal, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.expression import Subquery

from okey101.platform.database import Database
from okey101.scoring import ratings
from okey101.scoring.errors import Missing
from okey101.scoring.models import ratings as rating_rows
from okey101.scoring.models import season_lines
from okey101.scoring.seasons import Window

Key = list[Any]


@dataclass(frozen=True, slots=True)
class Board:
    """One board's lines (a subquery with the columns ``BoardLine`` is read from) and its
    measure: column names, each with whether higher is better, compared in order."""

    lines: Subquery
    measure: tuple[tuple[str, bool], ...]

    def key(self, row: Any) -> Key:
        return [*(getattr(row, name) for name, _ in self.measure), row.player_id]


@dataclass(frozen=True, slots=True)
class BoardLine:
    """A line as answered: its rank, the player's current rating and the season's figures
    (zeros on the all-time board)."""

    rank: int
    player_id: str
    display_name: str
    rating: ratings.Rating
    wins: int
    season_matches: int
    season_points: int
    season_rating_change: float


@dataclass(frozen=True, slots=True)
class BoardPage:
    lines: list[BoardLine]
    #: The last line's key when lines follow it, else None.
    next_key: Key | None
    #: The first line's key when lines come before it, else None.
    previous_key: Key | None


def all_time(mode: str, preset: str, min_matches: int) -> Board:
    """The OpenSkill board of ``mode`` and ``preset`` (a preset's name or ``all``)."""
    table = rating_rows
    lines = (
        select(
            table.c.player_id,
            table.c.display_name,
            table.c.mu,
            table.c.sigma,
            table.c.ordinal,
            table.c.matches.label("rated_matches"),
            table.c.wins,
            literal(0).label("season_matches"),
            literal(0).label("season_points"),
            literal(0.0).label("season_rating_change"),
        )
        .where(table.c.mode == mode, table.c.preset == preset, table.c.matches >= min_matches)
        .subquery("board")
    )
    return Board(lines, (("ordinal", True),))


def season(mode: str, preset: str, min_matches: int, window: Window) -> Board:
    """The board of the rated matches of ``mode`` and ``preset`` that ended in ``window``."""
    line, table = season_lines, rating_rows
    lines = (
        select(
            line.c.player_id,
            table.c.display_name,
            table.c.mu,
            table.c.sigma,
            table.c.matches.label("rated_matches"),
            line.c.wins,
            line.c.matches.label("season_matches"),
            line.c.points.label("season_points"),
            line.c.rating_change.label("season_rating_change"),
        )
        .select_from(
            line.join(
                table,
                and_(
                    table.c.player_id == line.c.player_id,
                    table.c.mode == line.c.mode,
                    table.c.preset == line.c.preset,
                ),
            )
        )
        .where(
            line.c.mode == mode,
            line.c.preset == preset,
            line.c.season == window.season,
            line.c.start_us == window.start_us,
            line.c.matches >= min_matches,
        )
        .subquery("board")
    )
    return Board(lines, (("wins", True), ("season_points", False)))


# --------------------------------------------------------------------------------------------
# Keyset conditions over a board's order


def _column(board: Board, name: str) -> ColumnElement[Any]:
    return board.lines.c[name]


def _order(board: Board, *, up: bool = False) -> list[ColumnElement[Any]]:
    """The board's order, best first (``up``: worst first)."""
    order: list[ColumnElement[Any]] = []
    for name, higher in board.measure:
        column = _column(board, name)
        order.append(column.desc() if higher != up else column.asc())
    player = _column(board, "player_id")
    order.append(player.desc() if up else player.asc())
    return order


def _beyond(board: Board, key: Key, *, up: bool, tie_break: bool = True) -> ColumnElement[bool]:
    """Lines strictly after ``key`` in the board's order (``up``: strictly before it); without
    ``tie_break``, only lines whose measure is worse (better)."""
    alternatives = []
    equal: list[ColumnElement[bool]] = []
    for (name, higher), value in zip(board.measure, key, strict=False):
        column = _column(board, name)
        further = column > value if higher == up else column < value
        alternatives.append(and_(*equal, further))
        equal.append(column == value)
    if tie_break:
        player = _column(board, "player_id")
        alternatives.append(and_(*equal, player < key[-1] if up else player > key[-1]))
    return or_(*alternatives)


def _same_measure(board: Board, key: Key) -> ColumnElement[bool]:
    return and_(
        *(
            _column(board, name) == value
            for (name, _), value in zip(board.measure, key, strict=False)
        )
    )


class Leaderboards:
    """The leaderboards' reads (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def page(self, board: Board, after: Key | None, size: int) -> BoardPage:
        """The ``size`` lines after ``after`` (from the top without it)."""
        query = select(board.lines)
        if after is not None:
            query = query.where(_beyond(board, after, up=False))
        async with self.database.read() as session:
            rows = await self._rows(session, query.order_by(*_order(board)), size + 1)
            shown = rows[:size]
            lines, position = await self._ranked(session, board, shown)
        return BoardPage(
            lines,
            board.key(shown[-1]) if len(rows) > size else None,
            # Past the end (a made-up or outdated token): the way back up is the token's key.
            (board.key(shown[0]) if position > 1 else None) if shown else after,
        )

    async def page_before(self, board: Board, before: Key, size: int) -> BoardPage:
        """The ``size`` lines before ``before`` (paging up); the top page if there are none."""
        query = select(board.lines).where(_beyond(board, before, up=True))
        async with self.database.read() as session:
            rows = await self._rows(session, query.order_by(*_order(board, up=True)), size + 1)
            shown = rows[:size][::-1]
            if not shown:
                return await self.page(board, None, size)
            lines, _position = await self._ranked(session, board, shown)
        return BoardPage(
            lines, board.key(shown[-1]), board.key(shown[0]) if len(rows) > size else None
        )

    async def around(self, board: Board, player_id: str, size: int) -> BoardPage:
        """The page of ``size`` lines that holds ``player_id``'s: ``(size - 1) // 2`` above it
        and the rest below, the share one side lacks (at the top or the bottom of the board)
        given to the other. NOT_FOUND PLAYER_NOT_RANKED without a line of the player."""
        async with self.database.read() as session:
            found = await self._rows(
                session, select(board.lines).where(_column(board, "player_id") == player_id), 1
            )
            if not found:
                raise Missing("PLAYER_NOT_RANKED", player_id=player_id)
            target = found[0]
            key = board.key(target)
            above = await self._rows(
                session,
                select(board.lines)
                .where(_beyond(board, key, up=True))
                .order_by(*_order(board, up=True)),
                size,
            )
            below = await self._rows(
                session,
                select(board.lines).where(_beyond(board, key, up=False)).order_by(*_order(board)),
                size,
            )
            take_above = min(len(above), max((size - 1) // 2, size - 1 - len(below)))
            take_below = min(len(below), size - 1 - take_above)
            shown = [*above[:take_above][::-1], target, *below[:take_below]]
            lines, _position = await self._ranked(session, board, shown)
        return BoardPage(
            lines,
            board.key(shown[-1]) if len(below) > take_below else None,
            board.key(shown[0]) if len(above) > take_above else None,
        )

    @staticmethod
    async def _rows(session: AsyncConnection, query: Select[Any], limit: int) -> list[Any]:
        return list((await session.execute(query.limit(limit))).all())

    @staticmethod
    async def _ranked(
        session: AsyncConnection, board: Board, rows: Sequence[Any]
    ) -> tuple[list[BoardLine], int]:
        """The rows (consecutive on the board, best first) as lines with their ranks, and the
        first row's position on the board (from 1; 0 without rows)."""
        if not rows:
            return [], 0
        first = board.key(rows[0])

        async def count(condition: ColumnElement[bool]) -> int:
            query = select(func.count()).select_from(board.lines).where(condition)
            return int((await session.execute(query)).scalar_one())

        better = await count(_beyond(board, first, up=True, tie_break=False))
        tied_before = await count(
            and_(_same_measure(board, first), _column(board, "player_id") < first[-1])
        )
        position = better + tied_before + 1
        lines: list[BoardLine] = []
        measure = len(board.measure)
        for index, row in enumerate(rows):
            key = board.key(row)
            if key[:measure] == first[:measure]:
                rank = better + 1
            elif key[:measure] == board.key(rows[index - 1])[:measure]:
                rank = lines[-1].rank
            else:
                rank = position + index
            lines.append(
                BoardLine(
                    rank=rank,
                    player_id=row.player_id,
                    display_name=row.display_name,
                    rating=ratings.Rating(row.mu, row.sigma, row.rated_matches),
                    wins=int(row.wins),
                    season_matches=int(row.season_matches),
                    season_points=int(row.season_points),
                    season_rating_change=float(row.season_rating_change),
                )
            )
        return lines, position


__all__ = ["Board", "BoardLine", "BoardPage", "Key", "Leaderboards", "all_time", "season"]
