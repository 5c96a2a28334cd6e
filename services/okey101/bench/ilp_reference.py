"""An independent exact reference for the best opening value: an integer linear programme.

The solver (``okey101.engine.solver``) finds the best runs and sets by a search over sets and a
dynamic programme over each colour's runs. This module answers the same question a different
way, written from the rules alone (docs/rules.md), so that the two can be compared
hand by hand; it deliberately imports neither ``engine.melds`` nor ``engine.solver``.

The programme:

- Every candidate meld over faces is enumerated: runs of 3-13 consecutive numbers of one colour,
  and, where ``rules.run_may_end_12_13_1``, runs ending 12-13-1 (the 1 counting 1; 13-1-2 never
  is); sets of 3 or 4 distinct colours of one number. Each position of a candidate is filled by
  a real tile of its face or by an okey (wild), at most as many okeys as the hand holds.
- A candidate is kept only if its real tiles fit the hand (every face it needs is held). Those
  with the same real faces and the same number of okeys are one column, worth the most of them.
- One integer variable per column (0-2): how many times it is laid down. Rows: the real tiles of
  each face used <= the hand's count of that face (a false joker counts as the okey's face),
  okeys used <= the hand's okeys; with ``keep_one`` the tiles used <= the hand's size - 1; a
  ``required`` tile must be used (an okey: at least one okey used; else at least one tile of
  its face).
- The objective is the sum of the melds' values: a run the sum of its numbers, a set its number
  times its size, an okey counting the tile it stands for.

Runs longer than 5 are redundant (any run of 6+ splits into two runs of 3+ worth the same), but
they are enumerated anyway to stay literal to the rules. ``highspy`` is imported inside
``reference_solve``: it is a test/benchmark dependency only.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from okey101.engine.rules import RuleSet
from okey101.engine.tiles import FACE_COUNT, Okey, Tile, face_name, face_of

_WILD_MARK = "*"


class HandLike(Protocol):
    """What the reference reads of a hand (``okey101.engine.solver.arrangement.Hand`` fits)."""

    @property
    def tiles(self) -> Sequence[Tile]: ...

    @property
    def okey(self) -> Okey: ...


@dataclass(frozen=True, slots=True)
class _Shape:
    """A meld over faces: the face and the value of each position."""

    faces: tuple[int, ...]
    values: tuple[int, ...]

    @property
    def value(self) -> int:
        return sum(self.values)


@dataclass(frozen=True, slots=True)
class ReferenceSolution:
    """The optimum: its value and one optimal set of melds.

    Each meld lists its positions' faces in order (``R7``); a position filled by an okey is
    written ``*R7`` (the okey standing for ``R7``).
    """

    value: int
    melds: tuple[tuple[str, ...], ...] = ()


@lru_cache(maxsize=2)
def _shapes(high_one: bool) -> tuple[_Shape, ...]:
    """Every run and set over faces, for a rule set that does or does not allow 12-13-1."""
    shapes: list[_Shape] = []
    for colour in range(4):
        # Ordinary runs: numbers low..high within 1..13, 3 to 13 long.
        for low in range(1, 12):
            for high in range(low + 2, 14):
                numbers = tuple(range(low, high + 1))
                shapes.append(_Shape(tuple(face_of(colour, n) for n in numbers), numbers))
        if high_one:
            # Runs ending 12-13-1: low..13 then the 1 (counting 1), 3 to 13 long.
            for low in range(2, 13):
                numbers = (*range(low, 14), 1)
                shapes.append(_Shape(tuple(face_of(colour, n) for n in numbers), numbers))
    for number in range(1, 14):
        for size in (3, 4):
            for colours in itertools.combinations(range(4), size):
                faces = tuple(face_of(colour, number) for colour in colours)
                shapes.append(_Shape(faces, (number,) * size))
    return tuple(shapes)


@dataclass(frozen=True, slots=True)
class _Column:
    real: tuple[int, ...]  # the faces of the real tiles it needs (distinct)
    okeys: int
    value: int
    shape: _Shape
    wild_positions: tuple[int, ...]

    def names(self) -> tuple[str, ...]:
        return tuple(
            (_WILD_MARK if index in self.wild_positions else "") + face_name(face)
            for index, face in enumerate(self.shape.faces)
        )


def _columns(counts: Sequence[int], wild: int, high_one: bool) -> list[_Column]:
    """The candidate melds whose real tiles fit the hand, one column per (real faces, okeys)."""
    best: dict[tuple[tuple[int, ...], int], _Column] = {}
    for shape in _shapes(high_one):
        faces = shape.faces
        missing = tuple(index for index, face in enumerate(faces) if counts[face] == 0)
        if len(missing) > wild:
            continue
        present = [index for index, face in enumerate(faces) if counts[face] > 0]
        value = shape.value
        for extra in range(wild - len(missing) + 1):
            for chosen in itertools.combinations(present, extra):
                wild_positions = tuple(sorted((*missing, *chosen)))
                real = tuple(
                    sorted(face for index, face in enumerate(faces) if index not in wild_positions)
                )
                if not real:
                    continue
                key = (real, len(wild_positions))
                current = best.get(key)
                if current is None or current.value < value:
                    best[key] = _Column(real, len(wild_positions), value, shape, wild_positions)
    return list(best.values())


def reference_solve(
    hand: HandLike,
    rules: RuleSet,
    *,
    required: Tile | None = None,
    keep_one: bool = True,
) -> ReferenceSolution:
    """The best opening value of ``hand`` (runs and sets) and one optimal set of melds.

    ``required``: a tile of the hand that must be used (if none can, the value is 0, as with
    ``best_opening``). ``keep_one``: at least one tile must be left over.
    """
    okey = hand.okey
    counts = [0] * FACE_COUNT
    wild = 0
    for tile in hand.tiles:
        if okey.is_wild(tile):
            wild += 1
        else:
            counts[okey.plays_as(tile)] += 1
    size = len(hand.tiles)
    if size == 0 or (keep_one and size == 1):
        return ReferenceSolution(0)

    columns = _columns(counts, wild, rules.run_may_end_12_13_1)
    required_face = -1  # -1: nothing required; -2: an okey; else a face
    if required is not None:
        required_face = -2 if okey.is_wild(required) else okey.plays_as(required)
        if required_face == -2 and wild == 0:
            return ReferenceSolution(0)
        if required_face >= 0 and counts[required_face] == 0:
            return ReferenceSolution(0)
    if not columns:
        return ReferenceSolution(0)

    # Rows: one per face some column uses, then okeys, then the tiles used (keep_one).
    face_row: dict[int, int] = {}
    for column in columns:
        for face in column.real:
            if face not in face_row:
                face_row[face] = len(face_row)
    if required_face >= 0 and required_face not in face_row:
        return ReferenceSolution(0)
    inf = 1e30
    row_lower = [0.0] * len(face_row)
    row_upper = [float(counts[face]) for face in face_row]
    if required_face >= 0:
        row_lower[face_row[required_face]] = 1.0
    okey_row = len(row_lower)
    row_lower.append(1.0 if required_face == -2 else 0.0)
    row_upper.append(float(wild))
    size_row = len(row_lower)
    row_lower.append(0.0)
    row_upper.append(float(size - 1) if keep_one else inf)

    starts: list[int] = []
    indices: list[int] = []
    values: list[float] = []
    for column in columns:
        starts.append(len(indices))
        for face in column.real:
            indices.append(face_row[face])
            values.append(1.0)
        if column.okeys:
            indices.append(okey_row)
            values.append(float(column.okeys))
        indices.append(size_row)
        values.append(float(len(column.real) + column.okeys))
    starts.append(len(indices))

    import highspy

    lp = highspy.HighsLp()
    lp.num_col_ = len(columns)
    lp.num_row_ = len(row_lower)
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.col_cost_ = [float(column.value) for column in columns]
    lp.col_lower_ = [0.0] * len(columns)
    lp.col_upper_ = [2.0] * len(columns)
    lp.row_lower_ = row_lower
    lp.row_upper_ = row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = starts
    lp.a_matrix_.index_ = indices
    lp.a_matrix_.value_ = values
    lp.integrality_ = [highspy.HighsVarType.kInteger] * len(columns)

    solver = highspy.Highs()  # type: ignore[no-untyped-call]
    solver.setOptionValue("output_flag", False)
    solver.setOptionValue("mip_rel_gap", 0.0)
    solver.setOptionValue("mip_abs_gap", 1e-6)
    solver.passModel(lp)
    solver.run()
    status = solver.getModelStatus()
    if status == highspy.HighsModelStatus.kInfeasible:
        return ReferenceSolution(0)
    if status != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"HiGHS did not solve the reference model: {status}")
    solution = solver.getSolution().col_value
    melds: list[tuple[str, ...]] = []
    for column, amount in zip(columns, solution, strict=True):
        melds.extend([column.names()] * round(amount))
    value = sum(
        column.value * round(amount) for column, amount in zip(columns, solution, strict=True)
    )
    return ReferenceSolution(value, tuple(melds))


def reference_best_value(
    hand: HandLike,
    rules: RuleSet,
    *,
    required: Tile | None = None,
    keep_one: bool = True,
) -> int:
    """The best opening value of ``hand`` by the integer programme (0 if nothing can be laid)."""
    return reference_solve(hand, rules, required=required, keep_one=keep_one).value
