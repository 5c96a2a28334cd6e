"""Conversions between the engine's values and the ``okey.v1`` messages, both ways.

Pure functions, no I/O: every service that speaks the API converts here and nowhere else.

- Engine → message (``*_to_proto``) never fails for a value the engine made.
- Message → engine (``*_from_proto``) validates everything it reads and raises the engine's
  ``InvalidInput`` (malformed: INVALID_ARGUMENT through ``platform.errors``) with a stable code
  and parameters; ``field`` in the parameters names where in the request the problem is
  (``state.seats[2].rack_tile_ids[5]``), so a client can point at it. A message that does not
  describe what it claims (a tile id that does not exist, a tile in two places, a meld that is
  not one) is refused, never executed.

Codes used for malformed input are the engine's own (``okey101.engine.sentences``): UNKNOWN_TILE,
DUPLICATE_TILE_ID, TOO_MANY_COPIES (the indicator's tile used again), UNKNOWN_SEAT,
WRONG_SEAT_COUNT, BAD_DECK, INDICATOR_IS_FALSE_JOKER, UNKNOWN_PRESET, BAD_RULE_VALUE (a knob),
BAD_OKEY_AS, EMPTY_MOVE, NOT_A_MELD, NOT_A_PAIR, UNKNOWN_RULES_VERSION. A field holding a value
that cannot be (an enum's unknown or unspecified value, a takeable tile that is not the last
discard on the left) is BAD_FIELD with the field's path and what it held.

The package's face is this module: ``from okey101.platform import convert`` then
``convert.rules_from_proto(...)``. Its modules, one per message family, none importing a later
one (no circles):

- ``limits``: the bounds a message is read within, and BAD_FIELD;
- ``enums``: the engine's enums and the API's, both ways;
- ``memo``: every memory kept (answers remembered by an object's identity or by bytes), one
  mechanism for all;
- ``tiles``: tiles and faces (from prebuilt messages); ``ledger``: no tile in two places;
- ``melds``, ``rules``, ``results``, ``actions``, ``violations``: their messages, both ways;
- ``wire``: the serialized parts states and views are assembled from (remembered per meld,
  prebuilt per rack tile and seat);
- ``events``, ``views``, ``state``: events, seat views and the hand state, both ways;
- ``hints``: a seat's hints (engine → message only).
"""

from okey101.platform.convert.actions import (
    action_from_proto,
    action_to_proto,
    group_from_proto,
    group_to_proto,
)
from okey101.platform.convert.enums import (
    colour_to_proto,
    end_reason_from_proto,
    end_reason_to_proto,
    opened_as_from_proto,
    opened_as_to_proto,
    penalty_reason_from_proto,
    penalty_reason_to_proto,
    phase_from_proto,
    phase_to_proto,
)
from okey101.platform.convert.events import event_from_proto, event_to_proto
from okey101.platform.convert.hints import seat_hints_to_proto
from okey101.platform.convert.ledger import TileLedger
from okey101.platform.convert.limits import MAX_COUNT, MAX_PENALTIES, MAX_RACK
from okey101.platform.convert.melds import meld_to_proto, table_meld_to_proto
from okey101.platform.convert.results import (
    finish_from_proto,
    finish_to_proto,
    hand_result_from_proto,
    hand_result_to_proto,
    result_lines,
    score_line_from_proto,
    score_line_to_proto,
)
from okey101.platform.convert.rules import KNOB_LIMIT, rules_from_proto, rules_to_proto
from okey101.platform.convert.state import (
    fill_hand_state,
    hand_state_from_proto,
    hand_state_to_proto,
)
from okey101.platform.convert.tiles import (
    face_from_proto,
    face_to_proto,
    okey_from_indicator_id,
    tile_from_id,
    tile_to_proto,
    tiles_from_ids,
    tiles_to_proto,
)
from okey101.platform.convert.views import (
    add_seat_views,
    seat_view_from_proto,
    seat_view_to_proto,
    seat_views_to_proto,
    serialized_seat_views,
)
from okey101.platform.convert.violations import violation_to_proto

__all__ = [
    "KNOB_LIMIT",
    "MAX_COUNT",
    "MAX_PENALTIES",
    "MAX_RACK",
    "TileLedger",
    "action_from_proto",
    "action_to_proto",
    "add_seat_views",
    "colour_to_proto",
    "end_reason_from_proto",
    "end_reason_to_proto",
    "event_from_proto",
    "event_to_proto",
    "face_from_proto",
    "face_to_proto",
    "fill_hand_state",
    "finish_from_proto",
    "finish_to_proto",
    "group_from_proto",
    "group_to_proto",
    "hand_result_from_proto",
    "hand_result_to_proto",
    "hand_state_from_proto",
    "hand_state_to_proto",
    "meld_to_proto",
    "okey_from_indicator_id",
    "opened_as_from_proto",
    "opened_as_to_proto",
    "penalty_reason_from_proto",
    "penalty_reason_to_proto",
    "phase_from_proto",
    "phase_to_proto",
    "result_lines",
    "rules_from_proto",
    "rules_to_proto",
    "score_line_from_proto",
    "score_line_to_proto",
    "seat_hints_to_proto",
    "seat_view_from_proto",
    "seat_view_to_proto",
    "seat_views_to_proto",
    "serialized_seat_views",
    "table_meld_to_proto",
    "tile_from_id",
    "tile_to_proto",
    "tiles_from_ids",
    "tiles_to_proto",
    "violation_to_proto",
]
