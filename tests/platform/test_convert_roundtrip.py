"""Round trips through the conversions, family by family: engine -> message -> bytes -> message
-> engine is the identity, for tiles, melds (okeys and what they stand for), rule sets (random
knob mixes), actions, results, events, seat views and hand states (random reachable states of
seeded playouts). And the cheaper paths (prebuilt messages, remembered and hand-joined bytes)
against protobuf's own: each message is also built here the plain way, field by field from the
engine's values and the enums' names, and must serialize to the same bytes.
"""

from __future__ import annotations

import dataclasses
import enum
import random
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

import pytest
from google.protobuf.message import Message
from hypothesis import assume, given, reject, settings
from hypothesis import strategies as st
from okey.v1 import common_pb2

from okey101.engine.actions import (
    Action,
    Discard,
    Draw,
    End,
    GiveBack,
    Group,
    LayDown,
    LayOff,
    Open,
    OpenPairs,
    ShowIndicator,
    TakeDiscard,
    TakeOkey,
)
from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.errors import OkeyError
from okey101.engine.hand import (
    SEATS,
    Event,
    HandState,
    Phase,
    TableMeld,
    apply,
)
from okey101.engine.melds import HIGH_ONE, Meld, MeldKind, make_group
from okey101.engine.playout import RandomPlayer
from okey101.engine.result import EndReason, Finish, HandResult
from okey101.engine.rules import PRESETS, RuleSet
from okey101.engine.seat import OpenedAs, PenaltyReason, Seat
from okey101.engine.solver.playability import playable_faces
from okey101.engine.tiles import (
    ALL_TILES,
    FACE_COUNT,
    Colour,
    Okey,
    Tile,
    copies_of,
    face_colour,
    face_number,
    face_of,
)
from okey101.engine.view import view
from okey101.platform import convert
from okey101.platform.convert import melds as convert_melds
from okey101.platform.convert import rules as convert_rules
from okey101.platform.convert import wire

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)
# Each example of these plays a hand (part of one) out first.
PLAYOUT_SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)

INDICATORS = tuple(tile for tile in ALL_TILES if not tile.is_false_joker)
FALSE_JOKERS = tuple(tile for tile in ALL_TILES if tile.is_false_joker)
KNOBS = tuple(field.name for field in dataclasses.fields(RuleSet) if field.name != "name")
# The knobs of a match, not of a hand (left at the preset's for a hand to be played).
MATCH_KNOBS = frozenset({"match_end", "match_target", "match_hands", "partners", "turn_seconds"})

any_tile = st.sampled_from(ALL_TILES)
any_okey = st.sampled_from(INDICATORS).map(Okey)
any_face = st.integers(0, FACE_COUNT - 1)
any_preset = st.sampled_from(sorted(PRESETS))


M = TypeVar("M", bound=Message)


def through_bytes(message: M) -> M:
    """``message`` as the other side of a call reads it."""
    return type(message).FromString(message.SerializeToString())


# --------------------------------------------------------------------------------------------
# Messages built the plain way: field by field, enums by their names


def plain_enum(prefix: str, member: enum.Enum | None) -> Any:
    """The API's value for an engine member: the one of the same name (messages take names)."""
    return f"{prefix}_{'UNSPECIFIED' if member is None else member.name}"


def plain_colour(colour: Colour | None) -> Any:
    return plain_enum("COLOUR", colour)


def plain_tile(tile: Tile, okey: Okey | None = None) -> common_pb2.Tile:
    face: dict[str, Any] = (
        {}
        if tile.is_false_joker
        else {"colour": plain_colour(face_colour(tile.face)), "number": face_number(tile.face)}
    )
    return common_pb2.Tile(
        id=tile.id,
        notation=str(tile),
        false_joker=tile.is_false_joker,
        wild=okey is not None and okey.is_wild(tile),
        **face,
    )


def plain_face(face: int) -> common_pb2.Face:
    return common_pb2.Face(colour=plain_colour(face_colour(face)), number=face_number(face))


def plain_meld(meld: Meld, okey: Okey) -> common_pb2.Meld:
    return common_pb2.Meld(
        kind=plain_enum("MELD_KIND", meld.kind),
        number=meld.number,
        colour=plain_colour(meld.colour),
        value=meld.value,
        tiles=[
            common_pb2.MeldTile(tile=plain_tile(tile, okey), stands_for=plain_face(stands))
            if stands is not None
            else common_pb2.MeldTile(tile=plain_tile(tile, okey))
            for tile, stands in zip(meld.tiles, meld.stands_for, strict=True)
        ],
    )


def plain_state_meld(item: TableMeld) -> common_pb2.HandStateMeld:
    meld = item.meld
    return common_pb2.HandStateMeld(
        owner_seat=item.owner,
        kind=plain_enum("MELD_KIND", meld.kind),
        number=meld.number,
        colour=plain_colour(meld.colour),
        tiles=[
            common_pb2.HandStateMeldTile(tile_id=tile.id, stands_for=plain_face(stands))
            if stands is not None
            else common_pb2.HandStateMeldTile(tile_id=tile.id)
            for tile, stands in zip(meld.tiles, meld.stands_for, strict=True)
        ],
    )


def plain_opening(opened_as: OpenedAs | None) -> Any:
    return f"OPENING_KIND_{'NOT_OPENED' if opened_as is None else opened_as.name}"


def plain_preset(name: str) -> Any:
    return f"RULE_PRESET_{name.upper()}"


def plain_penalties(reasons: Sequence[PenaltyReason]) -> list[Any]:
    return [plain_enum("PENALTY_REASON", reason) for reason in reasons]


def turn_flags(state: HandState) -> dict[str, Any]:
    """What the seat to move did this turn, but the tile it took (HandStateTurn, TurnProgress)."""
    names = ("taken_unopened", "gave_back", "opened", "laid_off", "took_okey")
    return {name: getattr(state.this_turn, name) for name in names}


def plain_hand_state(state: HandState) -> common_pb2.HandState:
    turn = state.this_turn
    message = common_pb2.HandState(
        rules_version=state.version,
        rules=convert.rules_to_proto(state.rules),
        indicator_tile_id=state.okey.indicator.id,
        dealer=state.dealer,
        turn=state.turn,
        phase=plain_enum("PHASE", state.phase),
        seats=[
            common_pb2.HandStateSeat(
                rack_tile_ids=[tile.id for tile in seat.rack],
                discard_tile_ids=[tile.id for tile in seat.discards],
                opened_as=plain_opening(seat.opened_as),
                opened_on_turn=seat.opened_on_turn,
                penalties=plain_penalties(seat.penalties),
                turns_played=seat.turns_played,
                showed_indicator=seat.showed_indicator,
            )
            for seat in state.seats
        ],
        table=[plain_state_meld(item) for item in state.table],
        stock_tile_ids=[tile.id for tile in state.stock],
        turn_number=state.turn_number,
        this_turn=common_pb2.HandStateTurn(**turn_flags(state)),
    )
    if turn.taken is not None:
        message.this_turn.taken_tile_id = turn.taken.id
    if state.takeable is not None:
        message.takeable_tile_id = state.takeable.id
    if state.result is not None:
        message.result.CopyFrom(convert.hand_result_to_proto(state.result, state))
    return message


def plain_seat_view(state: HandState, seat: int | None) -> common_pb2.SeatView:
    okey = state.okey
    turn = state.this_turn
    rules = state.rules
    message = common_pb2.SeatView(
        rules_version=state.version,
        rules=convert.rules_to_proto(rules),
        indicator=plain_tile(okey.indicator, okey),
        okey=plain_face(okey.face),
        dealer=state.dealer,
        turn=state.turn,
        phase=plain_enum("PHASE", state.phase),
        turn_number=state.turn_number,
        stock_count=len(state.stock),
        table=[
            common_pb2.TableMeld(
                index=index, owner_seat=item.owner, meld=plain_meld(item.meld, okey)
            )
            for index, item in enumerate(state.table)
        ],
        seats=[
            common_pb2.SeatPublic(
                seat=index,
                tile_count=len(public.rack),
                discards=[plain_tile(tile, okey) for tile in public.discards],
                opened_as=plain_opening(public.opened_as),
                opened_on_turn=public.opened_on_turn,
                penalties=plain_penalties(public.penalties),
                penalty_points=len(public.penalties) * rules.penalty_points,
                turns_played=public.turns_played,
                showed_indicator=public.showed_indicator,
            )
            for index, public in enumerate(state.seats)
        ],
        turn_progress=common_pb2.TurnProgress(**turn_flags(state)),
    )
    if turn.taken is not None:
        message.turn_progress.taken.CopyFrom(plain_tile(turn.taken, okey))
    if state.takeable is not None:
        message.takeable.CopyFrom(plain_tile(state.takeable, okey))
    if state.result is not None:
        message.result.CopyFrom(convert.hand_result_to_proto(state.result, state))
    if state.ended:
        for index, other in enumerate(state.seats):
            message.revealed_racks.add(seat=index, tiles=[plain_tile(t, okey) for t in other.rack])
    if seat is not None:
        message.seat = seat
        playable = playable_faces(state.table_melds(), rules)
        for tile in state.seats[seat].rack:
            wild = okey.is_wild(tile)
            takes = not wild and okey.plays_as(tile) in playable
            message.rack.add(
                tile=plain_tile(tile, okey), playable=takes, costly_discard=wild or takes
            )
    return message


def same_bytes(fast: Message, plain: Message) -> None:
    assert fast.SerializeToString(deterministic=True) == plain.SerializeToString(deterministic=True)
    assert fast == plain


# --------------------------------------------------------------------------------------------
# Tiles and faces


@SETTINGS
@given(any_tile, st.none() | any_okey)
def test_a_tile_comes_back_by_its_id_and_its_message_is_the_plain_one(
    tile: Tile, okey: Okey | None
) -> None:
    message = convert.tile_to_proto(tile, okey)
    same_bytes(message, plain_tile(tile, okey))
    assert convert.tile_from_id(through_bytes(message).id) is tile
    # Taking a prebuilt message never changes the next one.
    message.wild = not message.wild
    same_bytes(convert.tile_to_proto(tile, okey), plain_tile(tile, okey))


@SETTINGS
@given(st.lists(any_tile, max_size=106, unique=True), any_okey)
def test_tiles_come_back_by_their_ids_in_order(tiles: list[Tile], okey: Okey) -> None:
    messages = [through_bytes(m) for m in convert.tiles_to_proto(tiles, okey)]
    assert messages == [plain_tile(tile, okey) for tile in tiles]
    ids = [message.id for message in messages]
    assert convert.tiles_from_ids(ids, field="tiles") == tuple(tiles)
    assert convert.tiles_from_ids(iter(ids), field="tiles") == tuple(tiles)


@SETTINGS
@given(any_face)
def test_a_face_comes_back_and_its_message_is_the_plain_one(face: int) -> None:
    message = convert.face_to_proto(face)
    same_bytes(message, plain_face(face))
    assert convert.face_from_proto(through_bytes(message)) == face


@SETTINGS
@given(st.sampled_from(INDICATORS))
def test_an_indicator_makes_the_engines_okey(indicator: Tile) -> None:
    okey = convert.okey_from_indicator_id(indicator.id)
    assert okey == Okey(indicator) and okey.face == Okey(indicator).face


# --------------------------------------------------------------------------------------------
# Melds, with okeys and what they stand for


def _real_tile(face: int, okey: Okey, used: set[int], draw: st.DrawFn) -> Tile | None:
    """A tile playing as ``face`` that is not an okey (a false joker for the okey's face)."""
    pool = FALSE_JOKERS if face == okey.face else copies_of(face)
    free = [tile for tile in pool if tile.id not in used and not okey.is_wild(tile)]
    return draw(st.sampled_from(free)) if free else None


@st.composite
def melds(draw: st.DrawFn) -> tuple[Meld, Okey, RuleSet]:
    """A run, set or pair as the engine makes it from tiles, okeys in it now and then (in any
    place, standing for what ``okey_as`` says or what the engine chooses)."""
    rules = RuleSet.preset(draw(any_preset)).with_overrides(
        {"run_may_end_12_13_1": draw(st.booleans())}
    )
    okey = draw(any_okey)
    kind = draw(st.sampled_from(MeldKind))
    if kind is MeldKind.RUN:
        colour = draw(st.sampled_from(Colour))
        top = HIGH_ONE if rules.run_may_end_12_13_1 else 13
        start = draw(st.integers(1, top - 2))
        length = draw(st.integers(3, top - start + 1))
        places = range(start, start + length)
        faces = [face_of(colour, 1 if place == HIGH_ONE else place) for place in places]
    elif kind is MeldKind.SET:
        number = draw(st.integers(1, 13))
        colours = draw(st.permutations(list(Colour)))[: draw(st.integers(3, 4))]
        faces = [face_of(colour, number) for colour in colours]
    else:
        faces = [draw(any_face)] * 2
    okeys = list(copies_of(okey.face))
    used = {okey.indicator.id}
    tiles: list[Tile] = []
    wild_faces: list[int] = []
    for face in faces:
        tile: Tile | None
        if okeys and draw(st.integers(0, 3)) == 0:  # an okey in this place
            tile = okeys.pop()
            wild_faces.append(face)
        else:
            tile = _real_tile(face, okey, used, draw)
        if tile is None:
            tile = okeys.pop() if okeys else None
            wild_faces.append(face)
        assume(tile is not None)
        assert tile is not None
        used.add(tile.id)
        tiles.append(tile)
    said = draw(st.booleans())  # what the okeys stand for said, or left to the engine
    okey_as = wild_faces if wild_faces and said else None
    try:
        meld = make_group(tiles, okey, rules, okey_as=okey_as)
    except OkeyError:
        reject()
    return meld, okey, rules


@SETTINGS
@given(melds(), st.integers(0, SEATS - 1), st.integers(0, 40))
def test_a_meld_comes_back_as_a_view_and_as_a_state_holds_it(
    drawn: tuple[Meld, Okey, RuleSet], owner: int, index: int
) -> None:
    meld, okey, rules = drawn
    message = convert.meld_to_proto(meld, okey)
    same_bytes(message, plain_meld(meld, okey))
    assert [item.HasField("stands_for") for item in message.tiles] == [
        stands is not None for stands in meld.stands_for
    ]
    read = convert_melds.meld_from_proto(through_bytes(message), okey, rules, "meld")
    assert read == meld

    item = TableMeld(meld, owner)
    state_part = wire.state_meld_bytes(item)
    assert state_part == common_pb2.HandState(table=[plain_state_meld(item)]).SerializeToString()
    state_meld = common_pb2.HandState.FromString(state_part).table[0]
    assert convert_melds.state_meld_from_proto(state_meld, okey, rules, "table[0]") == item
    remembered = convert_melds.state_meld_remembered(state_meld, okey, rules, "table[0]")
    assert remembered == item
    assert convert_melds.state_meld_remembered(state_meld, okey, rules, "table[0]") is remembered

    assert wire.meld_bytes(meld, okey) == plain_meld(meld, okey).SerializeToString()
    view_part = common_pb2.SeatView(
        table=[common_pb2.TableMeld(index=index, owner_seat=owner, meld=plain_meld(meld, okey))]
    )
    assert wire.view_meld_bytes(index, meld, owner, okey) == view_part.SerializeToString()
    same_bytes(convert.table_meld_to_proto(index, item, okey), view_part.table[0])


# --------------------------------------------------------------------------------------------
# Rule sets


def knob_values(knob: str, current: object) -> st.SearchStrategy[Any]:
    """Every value the API takes for ``knob`` (whose preset value is ``current``)."""
    if isinstance(current, enum.Enum):
        return st.sampled_from(type(current))
    if isinstance(current, bool):
        return st.booleans()
    low = 0 if knob in convert_rules.COUNT_KNOBS else -convert.KNOB_LIMIT
    return st.integers(low, convert.KNOB_LIMIT)


@st.composite
def knob_mixes(draw: st.DrawFn, *, in_hand_only: bool = False) -> tuple[str, dict[str, Any]]:
    """A preset and some of its knobs set otherwise (for a hand to be played: the switches
    only, at the preset's numbers)."""
    name = draw(any_preset)
    preset = RuleSet.preset(name)
    chosen = draw(st.sets(st.sampled_from(KNOBS)))
    overrides = {}
    for knob in sorted(chosen):
        current = getattr(preset, knob)
        if in_hand_only and (knob in MATCH_KNOBS or type(current) is int):
            continue
        overrides[knob] = draw(knob_values(knob, current))
    return name, overrides


@SETTINGS
@given(knob_mixes())
def test_a_rule_set_comes_back_and_says_whether_it_is_its_preset(
    mix: tuple[str, dict[str, Any]],
) -> None:
    name, overrides = mix
    rules = RuleSet.preset(name).with_overrides(overrides)
    message = convert.rules_to_proto(rules)
    assert message.preset == common_pb2.RulePreset.Value(plain_preset(name))
    assert message.custom == (rules != RuleSet.preset(name))
    assert convert.rules_from_proto(through_bytes(message)) == rules
    # The remembered message, by identity and by value, is the one built afresh.
    same_bytes(convert_rules.rules_message(rules), message)
    same_bytes(convert_rules.rules_message(dataclasses.replace(rules)), message)


@SETTINGS
@given(knob_mixes(), st.booleans(), st.sampled_from(["rules", "state.rules"]))
def test_a_message_setting_some_knobs_is_its_preset_with_them(
    mix: tuple[str, dict[str, Any]], preset_unspecified: bool, field: str
) -> None:
    name, overrides = mix
    if preset_unspecified:
        name = "oyna"  # what an unspecified preset reads as
    message = common_pb2.RuleSet(
        preset=common_pb2.RULE_PRESET_UNSPECIFIED if preset_unspecified else plain_preset(name)
    )
    for knob, value in overrides.items():
        if isinstance(value, enum.Enum):
            enum_type = common_pb2.RuleSet.DESCRIPTOR.fields_by_name[knob].enum_type
            assert enum_type is not None
            unspecified = enum_type.values_by_number[0].name
            number = enum_type.values_by_name[unspecified.replace("UNSPECIFIED", value.name)]
            setattr(message, knob, number.number)
        else:
            setattr(message, knob, value)
    expected = RuleSet.preset(name).with_overrides(overrides)
    assert convert.rules_from_proto(through_bytes(message), field=field) == expected
    assert convert.rules_from_proto(message, field=field) == expected  # remembered


# --------------------------------------------------------------------------------------------
# Actions

groups = st.builds(
    Group,
    st.lists(any_tile, min_size=1, max_size=13).map(tuple),
    st.none() | st.lists(any_face, min_size=1, max_size=2).map(tuple),
)
meld_indexes = st.integers(0, 2**32 - 1)
actions: st.SearchStrategy[Action] = st.one_of(
    st.just(Draw()),
    st.just(TakeDiscard()),
    st.just(GiveBack()),
    st.just(ShowIndicator()),
    st.builds(Open, st.lists(groups, max_size=5).map(tuple)),
    st.builds(LayDown, st.lists(groups, max_size=5).map(tuple)),
    st.builds(OpenPairs, st.lists(st.tuples(any_tile, any_tile), max_size=7).map(tuple)),
    st.builds(LayOff, any_tile, meld_indexes, st.sampled_from([None, End.LOW, End.HIGH])),
    st.builds(TakeOkey, meld_indexes, st.lists(any_tile, min_size=1, max_size=2).map(tuple)),
    st.builds(Discard, any_tile),
)


@SETTINGS
@given(actions)
def test_an_action_comes_back(action: Action) -> None:
    message = through_bytes(convert.action_to_proto(action))
    assert convert.action_from_proto(message) == action
    for group in getattr(action, "groups", ()):
        assert convert.group_from_proto(through_bytes(convert.group_to_proto(group))) == group


# --------------------------------------------------------------------------------------------
# Results


@SETTINGS
@given(
    st.builds(
        Finish,
        st.integers(0, SEATS - 1),
        st.booleans(),
        st.booleans(),
        st.booleans(),
        st.sampled_from([1, 2, 4, 8]),
    ),
    st.sampled_from(EndReason),
    st.lists(st.integers(-(2**31), 2**31 - 1), min_size=SEATS * 2, max_size=SEATS * 2),
    st.lists(st.lists(st.sampled_from(PenaltyReason), max_size=3), min_size=4, max_size=4),
    any_okey,
)
def test_a_hand_result_comes_back_with_each_seats_penalties(
    finish: Finish,
    reason: EndReason,
    points: list[int],
    penalties: list[list[PenaltyReason]],
    okey: Okey,
) -> None:
    assert convert.finish_from_proto(through_bytes(convert.finish_to_proto(finish))) == finish
    result = HandResult(
        reason,
        finish if reason is EndReason.FINISHED else None,
        tuple(points[:SEATS]),
        tuple(points[SEATS:]),
    )
    seats = tuple(Seat(rack=(), penalties=tuple(reasons)) for reasons in penalties)
    state = HandState(
        rules=RuleSet(), okey=okey, dealer=0, turn=0, phase=Phase.ENDED, seats=seats, result=result
    )
    message = through_bytes(convert.hand_result_to_proto(result, state))
    assert convert.hand_result_from_proto(message) == result
    void = reason is EndReason.VOID
    assert [[common_pb2.PenaltyReason.Name(r) for r in s.penalties] for s in message.scores] == [
        [] if void else plain_penalties(reasons) for reasons in penalties
    ]


@pytest.mark.parametrize(
    ("to_proto", "from_proto", "members"),
    [
        (convert.phase_to_proto, convert.phase_from_proto, list(Phase)),
        (convert.penalty_reason_to_proto, convert.penalty_reason_from_proto, list(PenaltyReason)),
        (convert.end_reason_to_proto, convert.end_reason_from_proto, list(EndReason)),
        (convert.opened_as_to_proto, convert.opened_as_from_proto, [None, *OpenedAs]),
    ],
)
def test_every_enum_member_comes_back(to_proto: Any, from_proto: Any, members: list[Any]) -> None:
    for member in members:
        assert from_proto(to_proto(member)) == member


# --------------------------------------------------------------------------------------------
# Reachable states: seeded playouts, with the moves the random player never makes tried now
# and then (an okey taken back from the table, the indicator's twin shown)

Step = tuple[HandState, Action, HandState, tuple[Event, ...]]


def _rare_moves(state: HandState) -> Iterator[Action]:
    yield ShowIndicator()
    okey = state.okey
    rack = state.seats[state.turn].rack
    for index, item in enumerate(state.table):
        for is_wild, stands in zip(item.meld.wild, item.meld.stands_for, strict=True):
            if is_wild and stands is not None:
                for tile in rack:
                    if not okey.is_wild(tile) and okey.plays_as(tile) == stands:
                        yield TakeOkey(index, (tile,))


def playout(rules: RuleSet, seed: int, dealer: int, stop: int) -> list[Step]:
    """The steps of a seeded hand, up to ``stop`` moves (every step: state, move, state after,
    events)."""
    rng = random.Random(seed)
    state = deal(rules, dealer, shuffled_deck(rng))
    players = [RandomPlayer(random.Random(seed * 10 + seat)) for seat in range(SEATS)]
    steps: list[Step] = []
    while not state.ended and len(steps) < stop:
        if state.phase is Phase.DRAW and rng.random() < 0.5:
            try:
                after, events = apply(state, state.turn, Draw())
            except OkeyError:
                pass
            else:
                steps.append((state, Draw(), after, events))
                state = after
        for move in _rare_moves(state):
            try:
                after, events = apply(state, state.turn, move)
            except OkeyError:
                continue
            steps.append((state, move, after, events))
            state = after
            break
        if state.ended:
            break
        before = state
        for move, after, events in players[state.turn].turn(state):
            steps.append((before, move, after, events))
            before = after
        state = before
    return steps


@st.composite
def playouts(draw: st.DrawFn) -> list[Step]:
    name, overrides = draw(knob_mixes(in_hand_only=True))
    rules = RuleSet.preset(name).with_overrides(overrides)
    seed = draw(st.integers(0, 2**32 - 1))
    dealer = draw(st.integers(0, SEATS - 1))
    # Now and then the whole hand (its end: results, revealed racks), else a part of it.
    stop = draw(st.just(10_000) | st.integers(0, 120))
    return playout(rules, seed, dealer, stop)


def _states(steps: list[Step]) -> list[HandState]:
    return [steps[0][0], *(after for _, _, after, _ in steps)] if steps else []


def _check_state(state: HandState) -> None:
    message = convert.hand_state_to_proto(state)
    same_bytes(message, plain_hand_state(state))
    written = common_pb2.HandState()
    convert.fill_hand_state(written, state)
    same_bytes(written, message)
    read = convert.hand_state_from_proto(through_bytes(message))
    assert read == state
    # Read again (its melds and rule set remembered), then written again from what was read.
    assert convert.hand_state_from_proto(message) == state
    same_bytes(convert.hand_state_to_proto(read), message)
    if state.result is not None:
        result = through_bytes(convert.hand_result_to_proto(state.result, state))
        assert convert.hand_result_from_proto(result) == state.result


@PLAYOUT_SETTINGS
@given(playouts(), st.data())
def test_a_reachable_hand_state_comes_back(steps: list[Step], data: st.DataObject) -> None:
    states = _states(steps)
    if not states:
        return
    _check_state(states[-1])
    _check_state(data.draw(st.sampled_from(states)))


def _check_views(state: HandState) -> None:
    views, spectator = convert.seat_views_to_proto(state)
    serialized, shared = convert.serialized_seat_views(state)
    same_bytes(spectator, plain_seat_view(state, None))
    same_bytes(convert.seat_view_to_proto(state, None), spectator)
    same_bytes(common_pb2.SeatView.FromString(shared), spectator)
    for seat in range(SEATS):
        plain = plain_seat_view(state, seat)
        same_bytes(views[seat], plain)
        same_bytes(convert.seat_view_to_proto(state, seat), plain)
        same_bytes(common_pb2.SeatView.FromString(serialized[seat]), plain)
        assert convert.seat_view_from_proto(through_bytes(views[seat])) == view(state, seat)


@PLAYOUT_SETTINGS
@given(playouts(), st.data())
def test_a_reachable_seat_view_comes_back(steps: list[Step], data: st.DataObject) -> None:
    states = _states(steps)
    if not states:
        return
    _check_views(states[-1])
    _check_views(data.draw(st.sampled_from(states)))


@PLAYOUT_SETTINGS
@given(playouts())
def test_reachable_actions_and_events_come_back(steps: list[Step]) -> None:
    for _, move, after, events in steps[-12:]:
        assert convert.action_from_proto(through_bytes(convert.action_to_proto(move))) == move
        for event in events:
            for seat in (event.seat, None, *range(SEATS)):
                message = through_bytes(convert.event_to_proto(event, after, for_seat=seat))
                private = event.private if seat == event.seat else ()
                expected = dataclasses.replace(event, private=private)
                assert convert.event_from_proto(message) == expected
                assert list(message.tiles) == [plain_tile(t, after.okey) for t in event.tiles]
                assert list(message.private_tiles) == [plain_tile(t, after.okey) for t in private]
                if event.meld is not None and event.meld < len(after.table):
                    meld = after.table[event.meld].meld
                    same_bytes(message.meld, plain_meld(meld, after.okey))
