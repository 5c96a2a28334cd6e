"""Seat views: what a seat (or a spectator) may know of a hand, and a seat's view read back.

A view is written from the engine's ``view``, assembled from serialized parts (``wire``): the
face-up part built once for every seat and the spectator, each seat's number and rack after it.
A view read back is checked against itself; what it derives (the okey, the wildness of each
tile, the costly discards) is derived again rather than believed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from google.protobuf.internal.containers import RepeatedCompositeFieldContainer
from okey.v1 import common_pb2

from okey101.engine.errors import InvalidInput
from okey101.engine.hand import (
    RULES_VERSION,
    SEATS,
    HandState,
    Phase,
    ThisTurn,
    left_of,
)
from okey101.engine.melds import Meld
from okey101.engine.result import HandResult
from okey101.engine.seat import Seat
from okey101.engine.solver.playability import playable_faces
from okey101.engine.tiles import TILE_COUNT, Okey, Tile
from okey101.engine.view import OtherSeat, SeatView
from okey101.platform.convert.enums import (
    OPENINGS,
    PENALTIES,
    PHASES,
    enum_value_name,
    opened_as_from_proto,
    penalty_reason_from_proto,
    phase_from_proto,
)
from okey101.platform.convert.ledger import TileLedger
from okey101.platform.convert.limits import MAX_COUNT, MAX_PENALTIES, MAX_RACK, bad_field
from okey101.platform.convert.melds import meld_from_proto
from okey101.platform.convert.memo import VIEW_SEAT_BYTES
from okey101.platform.convert.results import hand_result_from_proto, hand_result_to_proto
from okey101.platform.convert.rules import rules_from_proto, rules_message
from okey101.platform.convert.tiles import (
    FACE_MESSAGES,
    face_to_proto,
    okey_from_indicator_id,
    shared_tile,
    shared_tiles,
    tile_from_id,
    tiles_from_ids,
)
from okey101.platform.convert.wire import own_part, rack_entries, view_meld_bytes


def seat_view_to_proto(state: HandState, seat: int | None) -> common_pb2.SeatView:
    """What ``seat`` (None: a spectator) may know of ``state``, from the engine's ``view``.

    The rack comes with each tile's discard cost (``costly_discard``: an okey or a playable
    tile; ``playable``: a run or set on the table could take it). A spectator gets no rack.
    The table's own fields (ids, sequence, occupants, deadline, deal, match totals) stay empty.
    """
    public = _public_view(state)
    if seat is None:
        return public
    own = own_part(state, seat, rack_entries(state))
    return common_pb2.SeatView.FromString(public.SerializeToString() + own)


def seat_views_to_proto(
    state: HandState,
) -> tuple[list[common_pb2.SeatView], common_pb2.SeatView]:
    """Every seat's view and a spectator's, the face-up part built once for all five."""
    public = _public_view(state)
    shared = public.SerializeToString()
    entries = rack_entries(state)
    seats = [
        common_pb2.SeatView.FromString(shared + own_part(state, seat, entries))
        for seat in range(len(state.seats))
    ]
    return seats, public


def serialized_seat_views(
    state: HandState, decorate: Callable[[common_pb2.SeatView], None] | None = None
) -> tuple[list[bytes], bytes]:
    """``seat_views_to_proto``, serialized: for an answer assembled from bytes (nothing is
    parsed). Each seat's view is the face-up part's bytes followed by the seat's number and rack
    entries: parsing concatenated messages merges them (repeated fields append). ``decorate``
    fills in the face-up part's fields the engine does not know (a table's ids, occupants,
    deadline...) before it is serialized, once for all five."""
    public = _public_view(state)
    if decorate is not None:
        decorate(public)
    shared = public.SerializeToString()
    entries = rack_entries(state)
    return [shared + own_part(state, seat, entries) for seat in range(len(state.seats))], shared


def add_seat_views(
    state: HandState,
    views: RepeatedCompositeFieldContainer[common_pb2.SeatView],
    spectator: common_pb2.SeatView,
) -> None:
    """``seat_views_to_proto`` written straight into a response's ``views`` (appended, in seat
    order) and ``spectator_view`` (replaced): nothing is built twice.

    The face-up part is built and serialized once; each seat's view is those bytes followed by
    the seat's number and rack entries, all prebuilt: parsing concatenated messages merges
    them (repeated fields append), which is how protobuf defines it, and is several times
    cheaper than copying a hundred RackTile messages one by one.
    """
    public = _public_view(state)
    shared = public.SerializeToString()
    entries = rack_entries(state)
    for seat in range(len(state.seats)):
        views.add().MergeFromString(shared + own_part(state, seat, entries))
    spectator.CopyFrom(public)


def _public_view(state: HandState) -> common_pb2.SeatView:
    """The part of a view every seat and a spectator share: all that is face up (what the
    engine's ``view`` shows every seat alike), read from the state itself."""
    okey = state.okey
    message = common_pb2.SeatView(
        rules_version=state.version,
        rules=rules_message(state.rules),
        indicator=shared_tile(okey.indicator, okey),
        okey=FACE_MESSAGES[okey.face],
        dealer=state.dealer,
        turn=state.turn,
        phase=PHASES[state.phase],
        turn_number=state.turn_number,
        stock_count=len(state.stock),
        turn_progress=_turn_progress(state.this_turn, okey),
    )
    penalty = state.rules.penalty_points
    parts = [
        view_meld_bytes(index, item.meld, item.owner, okey)
        for index, item in enumerate(state.table)
    ]
    parts.extend(
        _view_seat_bytes(index, seat, okey, penalty) for index, seat in enumerate(state.seats)
    )
    message.MergeFromString(b"".join(parts))
    if state.takeable is not None:
        message.takeable.CopyFrom(shared_tile(state.takeable, okey))
    if state.result is not None:
        message.result.CopyFrom(hand_result_to_proto(state.result, state))
    if state.ended:
        for index, seat in enumerate(state.seats):
            message.revealed_racks.add(seat=index, tiles=shared_tiles(seat.rack, okey))
    return message


def _view_seat_bytes(index: int, seat: Seat, okey: Okey, penalty: int) -> bytes:
    """A SeatView holding just ``seat``'s face-up entry, serialized and remembered."""
    key = (id(seat), index, okey.face, penalty)
    data: bytes | None = VIEW_SEAT_BYTES.owned(key, seat)
    if data is None:
        message = common_pb2.SeatView()
        entry = message.seats.add(
            seat=index,
            tile_count=len(seat.rack),
            discards=shared_tiles(seat.discards, okey),
            opened_as=OPENINGS[seat.opened_as],
            opened_on_turn=seat.opened_on_turn,
        )
        # The rest only when not at its default, as in ``fill_hand_state``.
        if seat.penalties:
            entry.penalties.extend([PENALTIES[reason] for reason in seat.penalties])
            entry.penalty_points = len(seat.penalties) * penalty
        if seat.turns_played:
            entry.turns_played = seat.turns_played
        if seat.showed_indicator:
            entry.showed_indicator = True
        data = message.SerializeToString()
        VIEW_SEAT_BYTES.remember_owned(key, seat, data)
    return data


def _turn_progress(this_turn: ThisTurn, okey: Okey) -> common_pb2.TurnProgress:
    message = common_pb2.TurnProgress(
        taken_unopened=this_turn.taken_unopened,
        gave_back=this_turn.gave_back,
        opened=this_turn.opened,
        laid_off=this_turn.laid_off,
        took_okey=this_turn.took_okey,
    )
    if this_turn.taken is not None:
        message.taken.CopyFrom(shared_tile(this_turn.taken, okey))
    return message


def seat_view_from_proto(message: common_pb2.SeatView, *, field: str = "view") -> SeatView:
    """The engine's view of a SeatView message: the inverse of ``seat_view_to_proto``.

    A seat's view only (a spectator's has no seat and is refused: there is no rack to read). Its
    rule set is ``rules_from_proto(message.rules)``; the view keeps its name. Tiles are read by
    id (every other field of a Tile is derived from it), and what the view derives is derived
    again rather than believed: the okey from the indicator (a given ``okey`` that differs is
    refused), each meld tile's wildness from the okey, the costly discards from the rack and the
    table (RackTile's flags are the server's answer, not an input), the tile taken this turn only
    for the seat to move. The table's own fields (ids, sequence, occupants, deadline, deal,
    match totals) and what the engine's view does not hold (when a seat opened, its turns, the
    rest of the turn's progress) are not read.

    Refused: no ``rules_version`` or no ``seat`` or no ``indicator`` (BAD_FIELD: a required field
    missing), an unknown rules version (UNKNOWN_RULES_VERSION), a bad rule set, an unknown
    tile (UNKNOWN_TILE), a tile in two places of the indicator, the rack, the table, the discard
    piles and the revealed racks (DUPLICATE_TILE_ID; the indicator's tile: TOO_MANY_COPIES), a
    seat number outside 0-3 (UNKNOWN_SEAT), not exactly four seats in seat order
    (WRONG_SEAT_COUNT, BAD_FIELD), a table meld out of index order or that is not the meld it
    says it is (BAD_FIELD, NOT_A_MELD, NOT_A_PAIR), an unknown enum value, a rack of more than 22
    tiles or one whose size is not the seat's ``tile_count``, a counter past ``MAX_COUNT``,
    penalty points that are not the penalties' count times the rule set's points, more hidden
    tiles (the stock and the other racks) than the set leaves unseen, a takeable tile that is
    not the last discard on the left of the seat to move, a tile taken this turn that is neither
    in the rack nor on the table, a phase that disagrees with the result (PHASE_ENDED exactly
    when a result is set), and revealed racks while the hand is live (all BAD_FIELD).
    """
    if not message.rules_version:
        raise bad_field(f"{field}.rules_version", "unset")
    if message.rules_version != RULES_VERSION:
        raise InvalidInput(
            "UNKNOWN_RULES_VERSION", version=message.rules_version, field=f"{field}.rules_version"
        )
    rules = rules_from_proto(message.rules, field=f"{field}.rules")
    if not message.HasField("seat"):
        raise bad_field(f"{field}.seat", "unset")
    seat = message.seat
    for name, number in (("seat", seat), ("dealer", message.dealer), ("turn", message.turn)):
        if number >= SEATS:
            raise InvalidInput("UNKNOWN_SEAT", seat=number, field=f"{field}.{name}")
    if not message.HasField("indicator"):
        raise bad_field(f"{field}.indicator", "unset")
    okey = okey_from_indicator_id(message.indicator.id, field=f"{field}.indicator.id")
    if message.HasField("okey") and message.okey != face_to_proto(okey.face):
        shown = f"{enum_value_name('Colour', message.okey.colour)}/{message.okey.number}"
        raise bad_field(f"{field}.okey", shown)
    phase = phase_from_proto(message.phase, field=f"{field}.phase")
    if message.turn_number > MAX_COUNT:
        raise bad_field(f"{field}.turn_number", message.turn_number)
    if message.stock_count > TILE_COUNT:
        raise bad_field(f"{field}.stock_count", message.stock_count)
    if len(message.seats) != SEATS:
        raise InvalidInput("WRONG_SEAT_COUNT", seats=len(message.seats), field=f"{field}.seats")

    ledger = TileLedger(okey.indicator)
    rack = _rack_from_proto(message.rack, f"{field}.rack")
    ledger.add_all(rack, f"{field}.rack")
    seen = 1 + len(rack)  # the indicator and the rack (the ledger refuses any tile seen twice)
    table: list[tuple[Meld, int]] = []
    for index, item in enumerate(message.table):
        where = f"{field}.table[{index}]"
        if item.index != index:
            raise bad_field(f"{where}.index", item.index)
        if item.owner_seat >= SEATS:
            raise InvalidInput("UNKNOWN_SEAT", seat=item.owner_seat, field=f"{where}.owner_seat")
        meld = meld_from_proto(item.meld, okey, rules, f"{where}.meld")
        ledger.add_all(meld.tiles, f"{where}.meld.tiles")
        seen += len(meld.tiles)
        table.append((meld, item.owner_seat))
    seats: list[OtherSeat] = []
    for index, public in enumerate(message.seats):
        where = f"{field}.seats[{index}]"
        if public.seat != index:
            if public.seat >= SEATS:
                raise InvalidInput("UNKNOWN_SEAT", seat=public.seat, field=f"{where}.seat")
            raise bad_field(f"{where}.seat", public.seat)  # not in seat order
        if public.tile_count > MAX_RACK:
            raise bad_field(f"{where}.tile_count", public.tile_count)
        discards = tiles_from_ids((tile.id for tile in public.discards), field=f"{where}.discards")
        ledger.add_all(discards, f"{where}.discards")
        seen += len(discards)
        if len(public.penalties) > MAX_PENALTIES:
            raise bad_field(f"{where}.penalties", f"{len(public.penalties)} penalties")
        for position, reason in enumerate(public.penalties):
            penalty_reason_from_proto(reason, field=f"{where}.penalties[{position}]")
        if public.penalty_points != len(public.penalties) * rules.penalty_points:
            raise bad_field(f"{where}.penalty_points", public.penalty_points)
        seats.append(
            OtherSeat(
                seat=index,
                tile_count=public.tile_count,
                discards=discards,
                opened_as=opened_as_from_proto(public.opened_as, field=f"{where}.opened_as"),
                penalties=public.penalty_points,
                opened_on_turn=_opened_on_turn(public, f"{where}.opened_on_turn"),
            )
        )
    if seats[seat].tile_count != len(rack):
        raise bad_field(f"{field}.seats[{seat}].tile_count", seats[seat].tile_count)
    hidden = message.stock_count + sum(other.tile_count for other in seats if other.seat != seat)
    if seen + hidden > TILE_COUNT:
        # More tiles in the stock and the other racks than the set leaves unseen.
        raise bad_field(f"{field}.stock_count", message.stock_count)

    takeable: Tile | None = None
    if message.HasField("takeable"):
        takeable = tile_from_id(message.takeable.id, field=f"{field}.takeable.id")
        left = seats[left_of(message.turn)].discards
        if not left or left[-1].id != takeable.id:
            raise bad_field(f"{field}.takeable", takeable)
    taken: Tile | None = None
    if message.turn == seat and message.turn_progress.HasField("taken"):
        where = f"{field}.turn_progress.taken"
        taken = tile_from_id(message.turn_progress.taken.id, field=f"{where}.id")
        placed = {tile.id for tile in rack} | {t.id for meld, _ in table for t in meld.tiles}
        if taken.id not in placed:
            raise bad_field(where, taken)
    result: HandResult | None = None
    if message.HasField("result"):
        result = hand_result_from_proto(message.result, field=f"{field}.result")
    if (result is not None) != (phase is Phase.ENDED):
        raise bad_field(f"{field}.phase", common_pb2.Phase.Name(message.phase))
    revealed = _revealed_from_proto(message.revealed_racks, seat, rack, ledger, phase, field)

    playable = playable_faces((meld for meld, _owner in table), rules)
    costly = tuple(tile for tile in rack if okey.is_wild(tile) or okey.plays_as(tile) in playable)
    return SeatView(
        seat=seat,
        rules_name=rules.name,
        version=message.rules_version,
        indicator=okey.indicator,
        okey_face=okey.face,
        dealer=message.dealer,
        turn=message.turn,
        phase=phase,
        turn_number=message.turn_number,
        rack=rack,
        costly_discards=costly,
        table=tuple(table),
        seats=tuple(seats),
        stock_count=message.stock_count,
        takeable=takeable,
        taken_this_turn=taken,
        result=result,
        revealed_racks=revealed,
        this_turn=_this_turn_from_proto(message, seat, taken, field),
    )


def _opened_on_turn(public: common_pb2.SeatPublic, field: str) -> int:
    """A seat's opening turn (-1: not opened), within what a hand can hold."""
    if public.opened_as == common_pb2.OPENING_KIND_NOT_OPENED or not public.opened_as:
        return -1
    if not -1 <= public.opened_on_turn <= MAX_COUNT:
        raise bad_field(field, public.opened_on_turn)
    return public.opened_on_turn


def _this_turn_from_proto(
    message: common_pb2.SeatView, seat: int, taken: Tile | None, field: str
) -> ThisTurn:
    """The viewer's own turn so far (nothing when another seat is to move)."""
    if message.turn != seat:
        return ThisTurn()
    progress = message.turn_progress
    if progress.laid_off > MAX_RACK:
        raise bad_field(f"{field}.turn_progress.laid_off", progress.laid_off)
    return ThisTurn(
        taken=taken,
        taken_unopened=progress.taken_unopened and taken is not None,
        gave_back=progress.gave_back,
        opened=progress.opened,
        laid_off=progress.laid_off,
        took_okey=progress.took_okey,
        twin_held=progress.twin_held and taken is not None,
    )


def _rack_from_proto(rack: Sequence[common_pb2.RackTile], field: str) -> tuple[Tile, ...]:
    """A view's rack, read by tile id (each RackTile's tile required)."""
    if len(rack) > MAX_RACK:
        raise bad_field(field, f"{len(rack)} tiles")
    tiles = []
    for index, item in enumerate(rack):
        if not item.HasField("tile"):
            raise bad_field(f"{field}[{index}].tile", "unset")
        tiles.append(tile_from_id(item.tile.id, field=f"{field}[{index}].tile.id"))
    return tuple(tiles)


def _revealed_from_proto(
    racks: Sequence[common_pb2.RevealedRack],
    seat: int,
    rack: tuple[Tile, ...],
    ledger: TileLedger,
    phase: Phase,
    field: str,
) -> tuple[tuple[Tile, ...], ...]:
    """Every rack of an ended hand, in seat order (the viewer's own is its rack); none while
    the hand is live."""
    if not racks:
        return ()
    where = f"{field}.revealed_racks"
    if phase is not Phase.ENDED:
        raise bad_field(where, f"{len(racks)} racks while the hand is live")
    if len(racks) != SEATS:
        raise InvalidInput("WRONG_SEAT_COUNT", seats=len(racks), field=where)
    out = []
    for index, item in enumerate(racks):
        if item.seat != index:
            if item.seat >= SEATS:
                raise InvalidInput("UNKNOWN_SEAT", seat=item.seat, field=f"{where}[{index}].seat")
            raise bad_field(f"{where}[{index}].seat", item.seat)
        tiles = tiles_from_ids((tile.id for tile in item.tiles), field=f"{where}[{index}].tiles")
        if len(tiles) > MAX_RACK:
            raise bad_field(f"{where}[{index}].tiles", f"{len(tiles)} tiles")
        if index == seat:
            if sorted(tile.id for tile in tiles) != sorted(tile.id for tile in rack):
                raise bad_field(f"{where}[{index}].tiles", "not the rack")
        else:
            ledger.add_all(tiles, f"{where}[{index}].tiles")
        out.append(tiles)
    return tuple(out)
