"""The hand state: the whole of a hand (every rack, the stock's order), for services only.

Written in place into a response's message, its table from remembered serialized parts
(``wire``); read back checked, its table melds remembered by their bytes (``melds``).
"""

from __future__ import annotations

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
from okey101.engine.result import HandResult
from okey101.engine.seat import Seat
from okey101.engine.tiles import Tile
from okey101.platform.convert.enums import (
    OPENINGS,
    OPENINGS_BACK,
    PENALTIES,
    PHASES,
    opened_as_from_proto,
    penalty_reason_from_proto,
    phase_from_proto,
)
from okey101.platform.convert.ledger import TileLedger
from okey101.platform.convert.limits import MAX_COUNT, MAX_PENALTIES, MAX_RACK, bad_field
from okey101.platform.convert.melds import state_meld_remembered
from okey101.platform.convert.results import hand_result_from_proto, hand_result_to_proto
from okey101.platform.convert.rules import rules_from_proto, rules_message
from okey101.platform.convert.tiles import okey_from_indicator_id, tile_from_id, tiles_from_ids
from okey101.platform.convert.wire import state_meld_bytes


def hand_state_to_proto(state: HandState) -> common_pb2.HandState:
    """The whole state (every rack, the stock's order): for services only."""
    message = common_pb2.HandState()
    fill_hand_state(message, state)
    return message


def fill_hand_state(message: common_pb2.HandState, state: HandState) -> None:
    """``hand_state_to_proto`` written into ``message`` (an empty one, e.g. a response's
    ``state``), so that it is not built and then copied."""
    message.rules_version = state.version
    message.rules.CopyFrom(rules_message(state.rules))
    message.indicator_tile_id = state.okey.indicator.id
    message.dealer = state.dealer
    message.turn = state.turn
    message.phase = PHASES[state.phase]
    message.stock_tile_ids.extend([tile.id for tile in state.stock])
    message.turn_number = state.turn_number
    for seat in state.seats:
        entry = message.seats.add(
            rack_tile_ids=[tile.id for tile in seat.rack],
            discard_tile_ids=[tile.id for tile in seat.discards],
            opened_as=OPENINGS[seat.opened_as],  # never 0: "not opened" is a value
            opened_on_turn=seat.opened_on_turn,
        )
        # The rest only when not at its default (what is at its default is not written anyway,
        # and each field set by name has to be looked up).
        if seat.penalties:
            entry.penalties.extend([PENALTIES[reason] for reason in seat.penalties])
        if seat.turns_played:
            entry.turns_played = seat.turns_played
        if seat.showed_indicator:
            entry.showed_indicator = True
    if state.table:
        # Parsing concatenated messages appends their repeated fields: the table, in order.
        message.MergeFromString(b"".join([state_meld_bytes(item) for item in state.table]))
    if state.takeable is not None:
        message.takeable_tile_id = state.takeable.id
    turn = state.this_turn
    this_turn = message.this_turn
    this_turn.SetInParent()  # present even when every field is at its default
    this_turn.taken_unopened = turn.taken_unopened
    this_turn.gave_back = turn.gave_back
    this_turn.opened = turn.opened
    this_turn.laid_off = turn.laid_off
    this_turn.took_okey = turn.took_okey
    this_turn.twin_held = turn.twin_held
    if turn.taken is not None:
        this_turn.taken_tile_id = turn.taken.id
    if state.result is not None:
        message.result.CopyFrom(hand_result_to_proto(state.result, state))


def hand_state_from_proto(message: common_pb2.HandState, *, field: str = "state") -> HandState:
    """The engine's state of a HandState message, refused if it is not one.

    Refused: no ``rules_version`` (a required field), an unknown one (UNKNOWN_RULES_VERSION,
    before anything else is read), a bad rule set, an unknown tile id, a tile in two places
    (the indicator, racks, discard piles, table, stock), not exactly four seats, a seat number
    outside 0-3, a rack of more than 22 tiles, a counter past ``MAX_COUNT`` or
    ``MAX_PENALTIES``, a table meld that is not the meld it says it is, a takeable tile that is
    not the last discard on the left of the seat to move, an unknown enum value, and a phase
    that disagrees with the result (PHASE_ENDED exactly when a result is set). Not every tile of
    the set has to be placed: a what-if position may leave some out.
    """
    if not message.rules_version:
        raise bad_field(f"{field}.rules_version", "unset")  # a required field missing
    if message.rules_version != RULES_VERSION:
        raise InvalidInput(
            "UNKNOWN_RULES_VERSION", version=message.rules_version, field=f"{field}.rules_version"
        )
    rules = rules_from_proto(message.rules, field=f"{field}.rules")
    okey = okey_from_indicator_id(message.indicator_tile_id, field=f"{field}.indicator_tile_id")
    for name in ("dealer", "turn"):
        seat_number = int(getattr(message, name))
        if seat_number >= SEATS:
            raise InvalidInput("UNKNOWN_SEAT", seat=seat_number, field=f"{field}.{name}")
    phase = phase_from_proto(message.phase, field=f"{field}.phase")
    if len(message.seats) != SEATS:
        count = len(message.seats)
        raise InvalidInput("WRONG_SEAT_COUNT", seats=count, field=f"{field}.seats")
    ledger = TileLedger(okey.indicator)
    seats = []
    for index, seat in enumerate(message.seats):
        where = f"{field}.seats[{index}]"
        rack_field = f"{where}.rack_tile_ids"
        discards_field = f"{where}.discard_tile_ids"
        # Plain lists: a message's repeated field is slow to iterate, and each is read twice.
        rack_ids = seat.rack_tile_ids[:]
        rack = tiles_from_ids(rack_ids, field=rack_field)
        if len(rack) > MAX_RACK:
            raise bad_field(rack_field, f"{len(rack)} tiles")
        discard_ids = seat.discard_tile_ids[:]
        discards = tiles_from_ids(discard_ids, field=discards_field)
        ledger.add_ids(rack_ids, rack_field)
        ledger.add_ids(discard_ids, discards_field)
        opened_on_turn = seat.opened_on_turn
        if not -1 <= opened_on_turn <= MAX_COUNT:
            raise bad_field(f"{where}.opened_on_turn", opened_on_turn)
        turns_played = seat.turns_played
        if turns_played > MAX_COUNT:
            raise bad_field(f"{where}.turns_played", turns_played)
        penalties = seat.penalties
        if len(penalties) > MAX_PENALTIES:
            raise bad_field(f"{where}.penalties", f"{len(penalties)} penalties")
        opened = seat.opened_as
        if opened not in OPENINGS_BACK:
            opened_as_from_proto(opened, field=f"{where}.opened_as")  # raises: no such kind
        seats.append(
            Seat(
                rack=rack,
                discards=discards,
                opened_as=OPENINGS_BACK[opened],
                opened_on_turn=opened_on_turn,
                penalties=tuple(
                    penalty_reason_from_proto(reason, field=f"{where}.penalties[{i}]")
                    for i, reason in enumerate(penalties)
                )
                if penalties
                else (),
                turns_played=turns_played,
                showed_indicator=seat.showed_indicator,
            )
        )
    table = []
    for index, meld_message in enumerate(message.table):
        where = f"{field}.table[{index}]"
        item = state_meld_remembered(meld_message, okey, rules, where)
        ledger.add_all(item.meld.tiles, f"{where}.tiles")
        table.append(item)
    stock_ids = message.stock_tile_ids[:]
    stock = tiles_from_ids(stock_ids, field=f"{field}.stock_tile_ids")
    ledger.add_ids(stock_ids, f"{field}.stock_tile_ids")
    takeable: Tile | None = None
    if message.HasField("takeable_tile_id"):
        where = f"{field}.takeable_tile_id"
        takeable = tile_from_id(message.takeable_tile_id, field=where)
        left = seats[left_of(message.turn)].discards
        if not left or left[-1].id != takeable.id:
            raise bad_field(where, takeable)
    turn = message.this_turn
    for name, count in (
        ("turn_number", message.turn_number),
        ("this_turn.laid_off", turn.laid_off),
    ):
        if count > MAX_COUNT:
            raise bad_field(f"{field}.{name}", count)
    taken: Tile | None = None
    if turn.HasField("taken_tile_id"):
        taken = tile_from_id(turn.taken_tile_id, field=f"{field}.this_turn.taken_tile_id")
    this_turn = ThisTurn(
        taken=taken,
        taken_unopened=turn.taken_unopened,
        gave_back=turn.gave_back,
        opened=turn.opened,
        laid_off=turn.laid_off,
        took_okey=turn.took_okey,
        twin_held=turn.twin_held and taken is not None,
    )
    result: HandResult | None = None
    if message.HasField("result"):
        result = hand_result_from_proto(message.result, field=f"{field}.result")
    if (result is not None) != (phase is Phase.ENDED):
        raise bad_field(f"{field}.phase", common_pb2.Phase.Name(message.phase))
    return HandState(
        rules=rules,
        okey=okey,
        dealer=message.dealer,
        turn=message.turn,
        phase=phase,
        seats=tuple(seats),
        table=tuple(table),
        stock=stock,
        takeable=takeable,
        turn_number=message.turn_number,
        this_turn=this_turn,
        result=result,
        version=message.rules_version,
    )
