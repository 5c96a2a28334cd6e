"""RulesService: the engine over gRPC, stateless (protos/okey/v1/rules.proto).

Every call is thin: convert the request in (``platform.convert``), call the engine, convert the
answer out. The computing functions (``resolve_rule_set`` ... ``score_hand``) are pure and take
the request and the caller's language; ``RulesServicer`` wraps each one so that an engine error
ends the call with the platform's rich status (``platform.errors.abort_with``): malformed input
is INVALID_ARGUMENT, a move the rules forbid FAILED_PRECONDITION, each with the engine's code in
ErrorInfo and a sentence in the request's language (its ``locale``, else ``accept-language``).
The validation calls (ValidateMelds, ValidateOpening) answer "invalid, because" in their
response instead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, TypeVar

import grpc
import grpc.aio
from okey.v1 import common_pb2, rules_pb2, rules_pb2_grpc

from okey101.engine.actions import Group, Open, OpenPairs
from okey101.engine.deal import deal
from okey101.engine.errors import InvalidInput, OkeyError
from okey101.engine.hand import SEATS, HandState, Phase, ThisTurn, apply, finish_multiplier
from okey101.engine.hints import hints_for
from okey101.engine.match import new_match
from okey101.engine.melds import Meld, make_group
from okey101.engine.result import EndReason, Finish
from okey101.engine.rules import RuleSet
from okey101.engine.scoring import score_hand as engine_score_hand
from okey101.engine.seat import OpenedAs, Seat
from okey101.engine.solver.arrangement import Arrangement, Hand
from okey101.engine.solver.openings import best_opening, whole_hand_opening
from okey101.engine.solver.pairs import best_pairs
from okey101.engine.solver.playability import is_playable, playable_faces
from okey101.engine.tiles import ALL_TILES, TILE_COUNT, Okey, Tile, tile_by_id
from okey101.platform import convert
from okey101.platform.auth import Access, AccessPolicy
from okey101.platform.config import Settings
from okey101.platform.convert import wire
from okey101.platform.errors import Language, request_language
from okey101.platform.handlers import Context
from okey101.platform.moves import actions_from_proto, apply_actions
from okey101.platform.registration import add_servicer
from okey101.platform.server import serve

SERVICE_NAME: Final = rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name
#: The most groups a request may name (ValidateMelds, ValidateOpening, PlayableTiles' table).
MAX_GROUPS: Final = 64

_PLAYER_OR_SERVICE: Final[tuple[Access, ...]] = ("player", "service")
_SERVICE: Final[tuple[Access, ...]] = ("service",)
#: Every RPC's "Auth:" line in rules.proto. The hints and validation take a player's token. The
#: engine's state calls take only a service's: a whole hand state in and out is no frontend's
#: (the ingress does not route them, no client calls them, the table plays with the engine in
#: its own process), and with a player's token they were engine time anyone could spend.
METHOD_ACCESS: Final[dict[str, tuple[Access, ...]]] = {
    "ResolveRuleSet": _PLAYER_OR_SERVICE,
    "ValidateMelds": _PLAYER_OR_SERVICE,
    "ValidateOpening": _PLAYER_OR_SERVICE,
    "BestOpening": _PLAYER_OR_SERVICE,
    "PlayableTiles": _PLAYER_OR_SERVICE,
    "DealHand": _SERVICE,
    "ApplyAction": _SERVICE,
    "ViewHand": _SERVICE,
    "ViewHints": _PLAYER_OR_SERVICE,
    "ScoreHand": _SERVICE,
}


#: Which tokens each call accepts (and the platform's open methods).
ACCESS: Final = AccessPolicy.of_service(SERVICE_NAME, METHOD_ACCESS)

_R = TypeVar("_R")


def _malformed(error: OkeyError, **extra: str | int) -> InvalidInput:
    """``error`` as malformed input (a meld in a request that is not one), with ``extra``."""
    return InvalidInput(error.code, **{**error.params, **extra})


def _too_many(field: str, count: int, limit: int) -> InvalidInput:
    """A list longer than any hand has (a 30-tile rack): TOO_MANY_ITEMS, not a rule's value."""
    return InvalidInput("TOO_MANY_ITEMS", field=field, count=count, limit=limit)


# --------------------------------------------------------------------------------------------
# ResolveRuleSet


def resolve_rule_set(
    request: rules_pb2.ResolveRuleSetRequest, language: Language
) -> rules_pb2.ResolveRuleSetResponse:
    rules = convert.rules_from_proto(request.rules)
    new_match(rules)  # the engine's own check of the match knobs (match_hands >= 1)
    return rules_pb2.ResolveRuleSetResponse(rules=convert.rules_to_proto(rules))


# --------------------------------------------------------------------------------------------
# ValidateMelds, ValidateOpening


def _check_group_sizes(groups: Sequence[common_pb2.TileGroup], field: str) -> None:
    """At most ``MAX_GROUPS`` groups naming at most the 106 tiles of a set between them."""
    if len(groups) > MAX_GROUPS:
        raise _too_many(field, len(groups), MAX_GROUPS)
    named = sum(len(group.tile_ids) for group in groups)
    if named > TILE_COUNT:
        raise _too_many(f"{field}.tile_ids", named, TILE_COUNT)


def _read_groups(
    groups: Sequence[common_pb2.TileGroup],
    okey: Okey,
    rules: RuleSet,
    language: Language,
) -> tuple[list[rules_pb2.MeldVerdict], list[common_pb2.Violation], list[Group | None]]:
    """A verdict per group, the request-level violations (a tile in two groups, the indicator's
    tile), and each group as read (None where its tiles could not be read)."""
    verdicts: list[rules_pb2.MeldVerdict] = []
    violations: list[common_pb2.Violation] = []
    read: list[Group | None] = []
    ledger = convert.TileLedger(okey.indicator)
    for index, message in enumerate(groups):
        verdict = rules_pb2.MeldVerdict(group_index=index)
        verdicts.append(verdict)
        try:
            group = convert.group_from_proto(message, field=f"groups[{index}]")
        except OkeyError as error:
            verdict.violations.append(convert.violation_to_proto(error, language))
            read.append(None)
            continue
        read.append(group)
        for position, tile in enumerate(group.tiles):
            try:
                ledger.add(tile, f"groups[{index}].tile_ids[{position}]")
            except OkeyError as error:
                violations.append(convert.violation_to_proto(error, language))
        try:
            meld = make_group(group.tiles, okey, rules, okey_as=group.okey_as)
        except OkeyError as error:
            verdict.violations.append(convert.violation_to_proto(error, language))
        else:
            verdict.valid = True
            verdict.meld.CopyFrom(convert.meld_to_proto(meld, okey))
    return verdicts, violations, read


def validate_melds(
    request: rules_pb2.ValidateMeldsRequest, language: Language
) -> rules_pb2.ValidateMeldsResponse:
    _check_group_sizes(request.groups, "groups")
    response = rules_pb2.ValidateMeldsResponse()
    try:
        rules = convert.rules_from_proto(request.rules)
        okey = convert.okey_from_indicator_id(request.indicator_tile_id)
    except OkeyError as error:
        # Nothing can be read without the rules and the okey: every group is unjudged.
        response.violations.append(convert.violation_to_proto(error, language))
        response.verdicts.extend(
            rules_pb2.MeldVerdict(group_index=index) for index in range(len(request.groups))
        )
        return response
    verdicts, violations, _ = _read_groups(request.groups, okey, rules, language)
    response.verdicts.extend(verdicts)
    response.violations.extend(violations)
    response.valid = not violations and all(verdict.valid for verdict in verdicts)
    return response


def validate_opening(
    request: rules_pb2.ValidateOpeningRequest, language: Language
) -> rules_pb2.ValidateOpeningResponse:
    """The opening's groups read one by one, then the engine's own opening move tried on a
    position holding the rack (or, with no rack given, the groups' tiles and two more, so that
    the rack checks cannot fail and the minimum applies)."""
    _check_group_sizes(request.groups, "groups")
    response = rules_pb2.ValidateOpeningResponse(kind=common_pb2.OPENING_KIND_NOT_OPENED)

    def refuse(error: OkeyError) -> None:
        response.violations.append(convert.violation_to_proto(error, language))

    try:
        rules = convert.rules_from_proto(request.rules)
        okey = convert.okey_from_indicator_id(request.indicator_tile_id)
    except OkeyError as error:
        refuse(error)
        response.verdicts.extend(
            rules_pb2.MeldVerdict(group_index=index) for index in range(len(request.groups))
        )
        return response
    verdicts, violations, groups = _read_groups(request.groups, okey, rules, language)
    response.verdicts.extend(verdicts)
    response.violations.extend(violations)

    rack: tuple[Tile, ...] | None = None
    if request.rack_tile_ids:
        try:
            rack = convert.tiles_from_ids(request.rack_tile_ids, field="rack_tile_ids")
            if len(rack) > convert.MAX_RACK:
                raise _too_many("rack_tile_ids", len(rack), convert.MAX_RACK)
            convert.TileLedger(okey.indicator).add_all(rack, "rack_tile_ids")
        except OkeyError as error:
            refuse(error)
            rack = None
    taken: Tile | None = None
    if request.HasField("taken_tile_id"):
        try:
            taken = convert.tile_from_id(request.taken_tile_id, field="taken_tile_id")
        except OkeyError as error:
            refuse(error)

    sizes = [len(group.tile_ids) for group in request.groups]
    pairs = bool(sizes) and all(size == 2 for size in sizes)
    mixed = any(size == 2 for size in sizes) and not pairs
    laid = sum(sizes)
    whole_hand = rack is not None and len(rack) - laid == 1
    response.whole_hand = whole_hand
    if not sizes:
        refuse(InvalidInput("EMPTY_MOVE"))
    elif mixed:
        refuse(InvalidInput("OPENING_MIXES_PAIRS"))
    elif pairs:
        response.kind = common_pb2.OPENING_KIND_PAIRS
        response.pair_count = sum(1 for verdict in verdicts if verdict.valid)
        response.minimum = rules.opening_min_pairs
    else:
        response.kind = common_pb2.OPENING_KIND_RUNS
        response.value = sum(verdict.meld.value for verdict in verdicts if verdict.valid)
        response.minimum = 0 if whole_hand else rules.opening_min_points

    readable = all(verdict.valid for verdict in verdicts) and not response.violations
    if sizes and not mixed and readable and (rack is not None or not request.rack_tile_ids):
        read = [group for group in groups if group is not None]
        try:
            _try_opening(read, pairs, rack, taken, okey, rules)
        except OkeyError as error:
            refuse(error)
    response.valid = readable and not response.violations
    return response


def _try_opening(
    groups: Sequence[Group],
    pairs: bool,
    rack: tuple[Tile, ...] | None,
    taken: Tile | None,
    okey: Okey,
    rules: RuleSet,
) -> None:
    """The engine's opening move on a position built for it; its violation if it refuses."""
    laid = [tile for group in groups for tile in group.tiles]
    if rack is None:
        used = {tile.id for tile in laid} | {okey.indicator.id}
        if taken is not None:
            used.add(taken.id)
        spare = [tile for tile in ALL_TILES if tile.id not in used][:2]
        rack = (*laid, *spare)
    seats = (Seat(rack=rack), *(Seat(rack=()) for _ in range(SEATS - 1)))
    state = HandState(
        rules=rules,
        okey=okey,
        dealer=SEATS - 1,
        turn=0,
        phase=Phase.PLAY,
        seats=seats,
        this_turn=ThisTurn(taken=taken, taken_unopened=taken is not None),
    )
    if pairs:
        move: Open | OpenPairs = OpenPairs(tuple((g.tiles[0], g.tiles[1]) for g in groups))
    else:
        move = Open(tuple(groups))
    apply(state, 0, move)


# --------------------------------------------------------------------------------------------
# BestOpening, PlayableTiles


def _arrangement_to_proto(arrangement: Arrangement, okey: Okey) -> rules_pb2.Arrangement:
    return rules_pb2.Arrangement(
        melds=[convert.meld_to_proto(meld, okey) for meld in arrangement.melds],
        value=arrangement.value,
        pair_count=arrangement.pair_count,
        leftover=convert.tiles_to_proto(arrangement.leftover, okey),
    )


def best_opening_of(
    request: rules_pb2.BestOpeningRequest, language: Language
) -> rules_pb2.BestOpeningResponse:
    rules = convert.rules_from_proto(request.rules)
    okey = convert.okey_from_indicator_id(request.indicator_tile_id)
    rack = convert.tiles_from_ids(request.rack_tile_ids, field="rack_tile_ids")
    if len(rack) > convert.MAX_RACK:
        raise _too_many("rack_tile_ids", len(rack), convert.MAX_RACK)
    convert.TileLedger(okey.indicator).add_all(rack, "rack_tile_ids")
    required: Tile | None = None
    if request.HasField("required_tile_id"):
        required = convert.tile_from_id(request.required_tile_id, field="required_tile_id")
        if all(tile.id != required.id for tile in rack):
            raise InvalidInput("TILE_NOT_IN_RACK", tile=str(required), field="required_tile_id")
    hand = Hand(rack, okey)
    keep_one = not request.use_every_tile
    runs = best_opening(hand, rules, required=required, keep_one=keep_one)
    pairs = best_pairs(hand, required=required, keep_one=keep_one)
    whole = whole_hand_opening(hand, rules, required)
    response = rules_pb2.BestOpeningResponse(
        runs_and_sets=_arrangement_to_proto(runs, okey),
        pairs=_arrangement_to_proto(pairs, okey),
        can_open_with_runs=runs.value >= rules.opening_min_points or whole is not None,
        can_open_with_pairs=pairs.pair_count >= rules.opening_min_pairs,
    )
    if whole is not None:
        response.whole_hand.CopyFrom(_arrangement_to_proto(whole, okey))
    return response


def playable_tiles(
    request: rules_pb2.PlayableTilesRequest, language: Language
) -> rules_pb2.PlayableTilesResponse:
    rules = convert.rules_from_proto(request.rules)
    okey = convert.okey_from_indicator_id(request.indicator_tile_id)
    _check_group_sizes(request.table, "table")
    ledger = convert.TileLedger(okey.indicator)
    melds: list[Meld] = []
    for index, message in enumerate(request.table):
        field = f"table[{index}]"
        try:
            group = convert.group_from_proto(message, field=field)
            ledger.add_all(group.tiles, f"{field}.tile_ids")
            melds.append(make_group(group.tiles, okey, rules, okey_as=group.okey_as))
        except OkeyError as error:
            raise _malformed(error, group_index=index) from None
    rack = convert.tiles_from_ids(request.rack_tile_ids, field="rack_tile_ids")
    ledger.add_all(rack, "rack_tile_ids")
    response = rules_pb2.PlayableTilesResponse(
        playable_faces=[
            convert.face_to_proto(face) for face in sorted(playable_faces(melds, rules))
        ]
    )
    for index, meld in enumerate(melds):
        response.table.add(index=index, meld=convert.meld_to_proto(meld, okey))
    for tile in rack:
        playable = is_playable(tile, okey, melds, rules)
        response.rack.add(
            tile=convert.tile_to_proto(tile, okey),
            playable=playable,
            costly_discard=playable or okey.is_wild(tile),
        )
    return response


# --------------------------------------------------------------------------------------------
# DealHand, ApplyAction, ViewHand, ViewHints


def deal_hand(request: rules_pb2.DealHandRequest, language: Language) -> rules_pb2.DealHandResponse:
    rules = convert.rules_from_proto(request.rules)
    deck_ids = list(request.deck_tile_ids)
    if sorted(deck_ids) != list(range(TILE_COUNT)):
        raise InvalidInput("BAD_DECK", tiles=len(deck_ids), field="deck_tile_ids")
    state = deal(rules, request.dealer, [tile_by_id(tile_id) for tile_id in deck_ids])
    # Written into the response in place: a finished message passed to it would be copied.
    response = rules_pb2.DealHandResponse()
    convert.fill_hand_state(response.state, state)
    convert.add_seat_views(state, response.views, response.spectator_view)
    return response


def apply_action(
    request: rules_pb2.ApplyActionRequest, language: Language
) -> rules_pb2.ApplyActionResponse:
    """Every move converted first (malformed input before forbidden moves), then applied in
    order; an error names the move (``action_index``) and nothing is applied."""
    return rules_pb2.ApplyActionResponse.FromString(apply_action_serialized(request, language))


def apply_action_serialized(request: rules_pb2.ApplyActionRequest, language: Language) -> bytes:
    """``apply_action``'s answer, serialized: what the servicer sends.

    The answer is assembled from serialized parts (the state, each event, each view) rather
    than built as one message that gRPC then serializes: the views share their face-up part
    (``convert.serialized_seat_views``), and a message would parse it back five times.
    """
    state = convert.hand_state_from_proto(request.state)
    if not request.actions:
        raise InvalidInput("EMPTY_MOVE", field="actions")
    seat = request.seat
    state, caused = apply_actions(state, seat, actions_from_proto(request.actions))
    # The acting seat's copy: its private tiles included (see ApplyActionResponse.events).
    events = [
        convert.event_to_proto(event, after, for_seat=seat).SerializeToString()
        for event, after in caused
    ]
    written = common_pb2.HandState()
    convert.fill_hand_state(written, state)
    views, spectator = convert.serialized_seat_views(state)
    return b"".join(
        [
            wire.length_delimited(_ANSWER_STATE, written.SerializeToString()),
            *(wire.length_delimited(_ANSWER_EVENTS, event) for event in events),
            *(wire.length_delimited(_ANSWER_VIEWS, seat_view) for seat_view in views),
            wire.length_delimited(_ANSWER_SPECTATOR, spectator),
        ]
    )


_ANSWER_FIELDS: Final = rules_pb2.ApplyActionResponse.DESCRIPTOR.fields_by_name
_ANSWER_STATE: Final[int] = _ANSWER_FIELDS["state"].number
_ANSWER_EVENTS: Final[int] = _ANSWER_FIELDS["events"].number
_ANSWER_VIEWS: Final[int] = _ANSWER_FIELDS["views"].number
_ANSWER_SPECTATOR: Final[int] = _ANSWER_FIELDS["spectator_view"].number


def view_hand(request: rules_pb2.ViewHandRequest, language: Language) -> rules_pb2.ViewHandResponse:
    state = convert.hand_state_from_proto(request.state)
    seat: int | None = None
    if request.HasField("seat"):
        seat = request.seat
        if seat >= SEATS:
            raise InvalidInput("UNKNOWN_SEAT", seat=seat, field="seat")
    return rules_pb2.ViewHandResponse(view=convert.seat_view_to_proto(state, seat))


def view_hints(
    request: rules_pb2.ViewHintsRequest, language: Language
) -> rules_pb2.ViewHintsResponse:
    """The engine's hints for the view's seat, from the view alone (its rule set the view's);
    the view is read and checked by ``convert.seat_view_from_proto``."""
    seat_view = convert.seat_view_from_proto(request.view, field="view")
    rules = convert.rules_from_proto(request.view.rules, field="view.rules")
    hints = hints_for(seat_view, rules)
    okey = Okey(seat_view.indicator)
    return rules_pb2.ViewHintsResponse(hints=convert.seat_hints_to_proto(hints, okey, language))


# --------------------------------------------------------------------------------------------
# ScoreHand


def score_hand(
    request: rules_pb2.ScoreHandRequest, language: Language
) -> rules_pb2.ScoreHandResponse:
    """The engine's scoring of a final position; the finish's multiplier from the flags the
    request gives, by the engine's rule (a bare position has no turn to read them from)."""
    rules = convert.rules_from_proto(request.rules)
    okey = convert.okey_from_indicator_id(request.indicator_tile_id)
    reason = convert.end_reason_from_proto(request.reason, field="reason")
    if len(request.seats) != SEATS:
        raise InvalidInput("WRONG_SEAT_COUNT", seats=len(request.seats), field="seats")
    ledger = convert.TileLedger(okey.indicator)
    seats = []
    for index, message in enumerate(request.seats):
        field = f"seats[{index}]"
        rack = convert.tiles_from_ids(message.rack_tile_ids, field=f"{field}.rack_tile_ids")
        ledger.add_all(rack, f"{field}.rack_tile_ids")
        if len(message.penalties) > convert.MAX_PENALTIES:
            raise _too_many(f"{field}.penalties", len(message.penalties), convert.MAX_PENALTIES)
        seats.append(
            Seat(
                rack=rack,
                opened_as=convert.opened_as_from_proto(
                    message.opened_as, field=f"{field}.opened_as"
                ),
                penalties=tuple(
                    convert.penalty_reason_from_proto(value, field=f"{field}.penalties[{i}]")
                    for i, value in enumerate(message.penalties)
                ),
                showed_indicator=message.showed_indicator,
            )
        )
    finish: Finish | None = None
    if reason is EndReason.FINISHED:
        winner = request.finish.winner_seat
        if winner >= SEATS:
            raise InvalidInput("UNKNOWN_SEAT", seat=winner, field="finish.winner_seat")
        after_pairs = seats[winner].opened_as is OpenedAs.PAIRS
        with_okey = request.finish.with_okey
        one_go = request.finish.one_go
        multiplier = finish_multiplier(
            rules, with_okey=with_okey, after_pairs=after_pairs, one_go=one_go
        )
        finish = Finish(winner, with_okey, after_pairs, one_go, multiplier)
    state = HandState(
        rules=rules,
        okey=okey,
        dealer=0,
        turn=finish.winner if finish is not None else 0,
        phase=Phase.ENDED,
        seats=tuple(seats),
    )
    result = engine_score_hand(state, reason, finish)
    return rules_pb2.ScoreHandResponse(result=convert.hand_result_to_proto(result, state))


# --------------------------------------------------------------------------------------------
# The servicer


_Q = TypeVar("_Q")
Method = Callable[[Any, _Q, Context], Awaitable[_R]]


def _rpc(compute: Callable[[_Q, Language], _R], *, sentences: bool = True) -> Method[_Q, _R]:
    """A servicer method that answers with ``compute`` in the request's language (sentences in
    validation answers); an engine error it raises is mapped by the platform, in the same
    language. With ``sentences=False`` (an answer that has none) the language is not worked
    out for every call: ``compute`` is given English, which it does not use."""

    async def method(self: Any, request: _Q, context: Context) -> _R:
        if not sentences:
            return compute(request, "en")
        return compute(request, request_language(request, context.invocation_metadata()))

    return method


class RulesServicer(rules_pb2_grpc.RulesServiceServicer):
    """okey.v1.RulesService: each call runs its pure function above (ApplyAction's answer
    already serialized: see ``register``)."""

    ResolveRuleSet = _rpc(resolve_rule_set)
    ValidateMelds = _rpc(validate_melds)
    ValidateOpening = _rpc(validate_opening)
    BestOpening = _rpc(best_opening_of)
    PlayableTiles = _rpc(playable_tiles)
    DealHand = _rpc(deal_hand)
    ApplyAction = _rpc(apply_action_serialized, sentences=False)
    ViewHand = _rpc(view_hand)
    ViewHints = _rpc(view_hints)
    ScoreHand = _rpc(score_hand)


#: The calls whose servicer method answers with the response already serialized.
SERIALIZED_ANSWERS: Final = frozenset({"ApplyAction"})


def register(server: grpc.aio.Server) -> list[str]:
    """Add RulesService to ``server``; its full service name, for health and reflection. The
    answers of ``SERIALIZED_ANSWERS`` are sent as the servicer wrote them."""
    return [
        add_servicer(
            server, RulesServicer(), rules_pb2, "RulesService", sent_as_written=SERIALIZED_ANSWERS
        )
    ]


async def serve_rules(settings: Settings) -> None:
    """Run the rules service until SIGTERM or SIGINT (the platform's ``serve``)."""
    await serve("rules", register, settings, access=ACCESS)
