"""Hints: the engine's ``SeatHints`` as the SeatHints message (engine → message only: hints are
an answer, never an input)."""

from __future__ import annotations

from collections.abc import Iterable

from okey.v1 import common_pb2

from okey101.engine.errors import RuleViolation
from okey101.engine.hints import (
    DiscardHint,
    LayOffHint,
    OkeyStandIn,
    OpeningHint,
    SeatHints,
    TakeBackHint,
    TakeHint,
)
from okey101.engine.melds import Meld
from okey101.engine.tiles import Okey
from okey101.platform.convert.actions import action_to_proto
from okey101.platform.convert.enums import PENALTIES, PHASES, RUN_ENDS
from okey101.platform.convert.melds import meld_to_proto
from okey101.platform.convert.tiles import FACE_MESSAGES, shared_tile, shared_tiles
from okey101.platform.convert.violations import violation_to_proto


def seat_hints_to_proto(hints: SeatHints, okey: Okey, language: str = "en") -> common_pb2.SeatHints:
    """The SeatHints message of ``hints`` (``okey``: the hand's, for each tile's ``wild``); a
    refused take's sentence in ``language``."""
    message = common_pb2.SeatHints(
        seat=hints.seat,
        phase=PHASES[hints.phase],
        to_move=hints.to_move,
        can_draw=hints.can_draw,
        draw_ends_hand=hints.draw_ends_hand,
        can_give_back=hints.can_give_back,
        give_back_penalty_points=hints.give_back_penalty,
        lay_offs=_lay_offs(hints.lay_offs, okey),
        take_backs=_take_backs(hints.take_backs, okey),
        discards=[_discard(hint, okey) for hint in hints.discards],
        okeys=[_stand_in(stand_in, okey) for stand_in in hints.okeys],
    )
    if hints.take is not None:
        message.take.CopyFrom(_take(hints.take, okey, language))
    if hints.opening is not None:
        message.opening.CopyFrom(_opening(hints.opening, okey))
    return message


def _lay_offs(hints: Iterable[LayOffHint], okey: Okey) -> list[common_pb2.LayOffHint]:
    out = []
    for hint in hints:
        message = common_pb2.LayOffHint(
            tile=shared_tile(hint.tile, okey),
            meld_index=hint.meld,
            end=RUN_ENDS[hint.end],
            action=action_to_proto(hint.action),
        )
        if hint.stands_for is not None:
            message.stands_for.CopyFrom(FACE_MESSAGES[hint.stands_for])
        out.append(message)
    return out


def _take_backs(hints: Iterable[TakeBackHint], okey: Okey) -> list[common_pb2.TakeBackHint]:
    return [
        common_pb2.TakeBackHint(
            meld_index=hint.meld,
            tiles=shared_tiles(hint.tiles, okey),
            okey=shared_tile(hint.okey, okey),
            action=action_to_proto(hint.action),
        )
        for hint in hints
    ]


def _discard(hint: DiscardHint, okey: Okey) -> common_pb2.DiscardHint:
    message = common_pb2.DiscardHint(
        tile=shared_tile(hint.tile, okey),
        penalty_points=hint.penalty,
        finishes=hint.finishes,
        ends_hand=hint.ends_hand,
        action=action_to_proto(hint.action),
    )
    if hint.reason is not None:
        message.penalty_reason = PENALTIES[hint.reason]
    return message


def _melds(melds: Iterable[Meld], okey: Okey) -> list[common_pb2.Meld]:
    return [meld_to_proto(meld, okey) for meld in melds]


def _opening(hint: OpeningHint, okey: Okey) -> common_pb2.OpeningHint:
    message = common_pb2.OpeningHint(
        runs_and_sets=_melds(hint.runs_and_sets.melds, okey),
        runs_and_sets_value=hint.runs_and_sets.value,
        pairs=_melds(hint.pairs.melds, okey),
        pair_count=hint.pairs.pair_count,
        whole_hand=_melds(hint.whole_hand.melds if hint.whole_hand is not None else (), okey),
        can_open_with_runs=hint.can_open_with_runs,
        can_open_with_pairs=hint.can_open_with_pairs,
        can_open_now=hint.can_open_now,
        moves=[action_to_proto(move) for move in hint.moves],
    )
    if hint.required is not None:
        message.required.CopyFrom(shared_tile(hint.required, okey))
    return message


def _take(hint: TakeHint, okey: Okey, language: str) -> common_pb2.TakeHint:
    message = common_pb2.TakeHint(
        tile=shared_tile(hint.tile, okey),
        allowed=hint.allowed,
        usable=hint.usable,
        must_use=hint.must_use,
        lay_offs=_lay_offs(hint.lay_offs, okey),
        take_backs=_take_backs(hint.take_backs, okey),
    )
    if hint.refusal:
        refusal = RuleViolation(hint.refusal, **dict(hint.refusal_params))
        message.refusal.CopyFrom(violation_to_proto(refusal, language))
    if hint.opening is not None:
        message.opening.CopyFrom(_opening(hint.opening, okey))
    return message


def _stand_in(stand_in: OkeyStandIn, okey: Okey) -> common_pb2.OkeyStandIn:
    message = common_pb2.OkeyStandIn(
        tile=shared_tile(stand_in.tile, okey),
        faces=[FACE_MESSAGES[face] for face in stand_in.faces],
        lay_offs=_lay_offs(stand_in.lay_offs, okey),
    )
    if stand_in.in_arrangement is not None:
        message.in_arrangement.CopyFrom(FACE_MESSAGES[stand_in.in_arrangement])
    return message
