"""The terminal client's parts that need no server: its sentences, the rack and the moves it
builds, what it says about events, the resumable stream over a stream factory, and where it
keeps the guest's secret."""

from __future__ import annotations

import ast
import asyncio
import random
import re
import stat
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import grpc
import grpc.aio
import pytest
from okey.v1 import common_pb2, table_pb2

from okey101.client import moves
from okey101.client.errors import Rejection
from okey101.client.i18n import CATALOGUE, LANGUAGES, Strings, parameters
from okey101.client.model import TableModel, score_reasons
from okey101.client.resume import Backoff, Reconnecting, ResumableWatch
from okey101.client.session import GuestIdentity, GuestStore, Seating
from okey101.engine.actions import End, LayOff
from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.errors import RuleViolation
from okey101.engine.hand import EventKind, apply
from okey101.engine.rules import RuleSet
from okey101.platform import convert
from okey101.platform.errors import to_grpc_status

CLIENT = Path(__file__).resolve().parents[2] / "services" / "okey101" / "client"

# ---------------------------------------------------------------------------------------------
# Sentences


def test_every_sentence_exists_in_both_languages_with_the_same_parameters() -> None:
    for key, entry in CATALOGUE.items():
        assert set(entry) == set(LANGUAGES), key
        assert parameters(entry["en"]) == parameters(entry["tr"]), key
        assert entry["en"].strip() and entry["tr"].strip(), key


def test_every_sentence_with_a_subject_has_the_viewers_own_form() -> None:
    """A sentence built from a seat's name and a verb ("{name} dağıttı") cannot take "sen" in
    the name's place (the verb must agree: "sen dağıttın"): each has an ``_own`` sentence."""
    for key, entry in CATALOGUE.items():
        if key.startswith("ev_") and "{name}" in entry["en"] and not key.endswith("_own"):
            assert f"{key}_own" in CATALOGUE, key
    assert "sheet_finished_by_own" in CATALOGUE
    # Colour letters never reach a Turkish sentence's template (K reads as kırmızı).
    for key, entry in CATALOGUE.items():
        assert not re.search(r"\b[RYBK]\d{1,2}\b", entry["tr"]), key


def test_every_key_the_client_uses_is_in_the_catalogue() -> None:
    """Keys are found the way the code uses them: a string literal as the first argument of a
    ``strings(...)``/``s(...)`` call, and the literals of the key tables."""
    used: set[str] = set()
    for path in CLIENT.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args:
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                first = node.args[0]
                if name in ("s", "strings") and isinstance(first, ast.Constant):
                    used.add(str(first.value))
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and re.fullmatch(r"(ev|key|reason|kind|phase|sheet)_[a-z_]+", node.value)
            ):
                used.add(node.value)
    assert used, "found no keys: the search is broken"
    missing = sorted(key for key in used if key not in CATALOGUE)
    assert missing == []


def test_every_sentence_in_the_catalogue_is_used() -> None:
    source = "".join(
        path.read_text(encoding="utf-8") for path in CLIENT.glob("*.py") if path.name != "i18n.py"
    )

    def used(key: str) -> bool:
        if f'"{key}"' in source or f"'{key}'" in source:
            return True
        # The viewer's own moves: "ev_took_own" is chosen for "ev_took" (TableModel.describe).
        return key.endswith("_own") and f'"{key.removesuffix("_own")}"' in source

    assert [key for key in CATALOGUE if not used(key)] == []


def test_strings_fill_parameters_and_give_the_request_locale() -> None:
    english, turkish = Strings("en"), Strings("tr")
    assert english("stock", count=20) == "stock 20"
    assert turkish("stock", count=20) == "ortada 20"
    assert english.locale.startswith("en") and turkish.locale.startswith("tr")
    # A missing parameter stays visible rather than failing the screen.
    assert english("stock") == "stock {count}"


# ---------------------------------------------------------------------------------------------
# The rack and the moves


def test_the_rack_keeps_the_players_order_and_follows_new_views() -> None:
    rack = moves.Rack()
    rack.sync([5, 9, 30])
    rack.shift(1)  # move tile 5 one place right
    assert rack.order == [9, 5, 30] and rack.at_cursor == 5
    rack.toggle()
    rack.move(1)
    rack.toggle()
    rack.close_group()
    assert rack.groups == [[5, 30]] and rack.selected == []
    rack.sync([9, 30, 77])  # 5 was played (its slot left empty), 77 drawn
    assert rack.order == [9, moves.GAP, 30, 77]
    assert rack.groups == [[30]]
    assert rack.cursor <= 2


def test_the_rack_is_arranged_freely_with_gaps_and_the_arrangement_is_kept() -> None:
    gap = moves.GAP
    rack = moves.Rack()
    rack.sync([1, 2, 3, 4])
    rack.cursor = 2
    rack.insert_gap()  # 1 2 _ 3 4
    assert rack.order == [1, 2, gap, 3, 4] and rack.at_cursor is None
    rack.cursor = 0
    rack.shift(2)  # into the gap: _ 2 1 3 4
    assert rack.order == [gap, 2, 1, 3, 4] and rack.at_cursor == 1
    rack.cursor = 4
    rack.shift(6)  # past the last tile: the slots between stay empty
    assert rack.order == [gap, 2, 1, 3, gap, gap, gap, gap, gap, gap, 4]
    assert rack.tiles == [2, 1, 3, 4]
    # A new view: a tile gone leaves its slot empty, a new one goes after the last tile.
    rack.sync([1, 2, 4, 9])
    assert rack.order == [gap, 2, 1, gap, gap, gap, gap, gap, gap, gap, 4, 9]
    rack.cursor = 3
    rack.remove_gap()
    assert rack.order == [gap, 2, 1, gap, gap, gap, gap, gap, gap, 4, 9]
    # Kept and restored (a restart in the same hand): the slots as they were.
    again = moves.Rack()
    again.restore(rack.arrangement(), [9, 4, 2, 1])
    assert again.order == rack.order
    # The cursor reaches every slot of the two rows, empty ones too; sorting closes the gaps.
    rack.move(100)
    assert rack.cursor == moves.SLOTS - 1 and rack.at_cursor is None
    rack.sort()
    assert gap not in rack.order and sorted(rack.order) == [1, 2, 4, 9]


def test_the_log_and_the_arrangement_are_kept_per_table(tmp_path: Path) -> None:
    from okey101.client.memory import Kept, TableMemory

    memory = TableMemory(tmp_path)
    assert memory.load("t-1") == Kept()
    memory.save("t-1", Kept(["Maç başladı."], "h-1", [3, moves.GAP, 5]))
    assert memory.load("t-1") == Kept(["Maç başladı."], "h-1", [3, moves.GAP, 5])
    assert memory.load("t-2") == Kept()
    assert stat.S_IMODE(memory.path("t-1").stat().st_mode) == 0o600
    memory.path("t-1").write_text("not json", encoding="utf-8")
    assert memory.load("t-1") == Kept()  # never authoritative: unreadable is forgotten


def test_selection_order_is_kept_and_marks_say_it() -> None:
    rack = moves.Rack()
    rack.sync([1, 2, 3, 4])
    for place in (2, 0, 1):
        rack.cursor = place
        rack.toggle()
    assert rack.selected == [3, 1, 2]
    assert rack.marks() == {3: "+1", 1: "+2", 2: "+3"}
    rack.close_group()
    assert rack.marks() == {3: "g1", 1: "g1", 2: "g1"}
    rack.cursor = 3
    assert rack.single() is None  # three tiles chosen: no single tile
    rack.clear()
    assert rack.single() == 4  # nothing chosen: the cursor's tile


def test_sorting_puts_colours_in_order_and_okeys_last() -> None:
    rack = moves.Rack()
    ids = [tile_id(name) for name in ("K3", "R7", "Y1", "R2")] + [104]
    rack.sync(ids)
    rack.sort()
    assert [name_of(t) for t in rack.order] == ["R2", "R7", "Y1", "K3", "FJ"]
    rack.sort(by_number=True)
    assert [name_of(t) for t in rack.order] == ["Y1", "R2", "K3", "R7", "FJ"]
    rack.sort_wild_last([tile_id("R2")])
    assert name_of(rack.order[-1]) == "R2"


def test_the_moves_are_the_apis_action_messages_and_apply() -> None:
    state = deal(RuleSet.preset("oyna"), 0, shuffled_deck(random.Random(5)))
    seat = state.turn
    tile = state.seats[seat].rack[0]
    message = moves.discard(tile.id)
    assert message.WhichOneof("move") == "discard" and message.discard.tile_id == tile.id
    after, events = apply(state, seat, convert.action_from_proto(message))
    assert events[0].kind is EventKind.DISCARDED and tile not in after.seats[seat].rack
    assert moves.draw().WhichOneof("move") == "draw"
    assert moves.take().WhichOneof("move") == "take"
    pairs = moves.open_with([[0, 1], [2, 3]])
    assert pairs.WhichOneof("move") == "open_pairs" and len(pairs.open_pairs.pairs) == 2
    runs = moves.open_with([[0, 2, 4], [6, 8, 10]])
    assert runs.WhichOneof("move") == "open" and list(runs.open.groups[1].tile_ids) == [6, 8, 10]
    lay = moves.lay_off(12, 3, End.HIGH)
    assert convert.action_from_proto(lay) == LayOff(state_tile(12), 3, End.HIGH)
    okey_back = moves.take_okey(1, [20])
    assert okey_back.take_okey.meld_index == 1 and list(okey_back.take_okey.tile_ids) == [20]


def test_a_costly_discard_is_not_the_finishing_one() -> None:
    view = common_pb2.SeatView(seat=0)
    view.rack.add(tile=common_pb2.Tile(id=7), costly_discard=True)
    view.rack.add(tile=common_pb2.Tile(id=8))
    assert moves.is_costly_discard(view, 7) and not moves.is_costly_discard(view, 8)
    del view.rack[1]
    assert not moves.is_costly_discard(view, 7)  # the last tile: finishing is exempt


def test_an_okey_laid_off_on_a_run_offers_both_ends() -> None:
    view = common_pb2.SeatView(seat=0)
    view.rack.add(tile=common_pb2.Tile(id=50, wild=True))
    view.rack.add(tile=common_pb2.Tile(id=51))
    view.table.add(index=0, meld=common_pb2.Meld(kind=common_pb2.MELD_KIND_RUN))
    view.table.add(index=1, meld=common_pb2.Meld(kind=common_pb2.MELD_KIND_PAIR))
    view.table.add(index=2, meld=common_pb2.Meld(kind=common_pb2.MELD_KIND_SET))
    assert moves.lay_off_choices(view, 50) == [
        moves.MeldChoice(0, End.LOW),
        moves.MeldChoice(0, End.HIGH),
        moves.MeldChoice(2),
    ]
    assert moves.lay_off_choices(view, 51) == [moves.MeldChoice(0), moves.MeldChoice(2)]


# ---------------------------------------------------------------------------------------------
# Events and views


def test_events_are_told_in_the_players_language_with_names() -> None:
    model = TableModel(Strings("tr"), seat=1)
    occupant = common_pb2.SeatOccupant(seat=2, display_name="Ayşe")
    model.on_event(
        common_pb2.Event(
            sequence=1, kind=common_pb2.EVENT_KIND_SEAT_TAKEN, seat=2, occupant=occupant
        )
    )
    discard = common_pb2.Event(
        sequence=2,
        kind=common_pb2.EVENT_KIND_DISCARDED,
        seat=2,
        tiles=[common_pb2.Tile(id=12, notation="R7")],
    )
    model.on_event(discard)
    # In Turkish a tile is named by its colour's word: K would read as kırmızı.
    assert model.log[-1] == "Ayşe kırmızı 7 attı."
    drew = common_pb2.Event(
        sequence=3,
        kind=common_pb2.EVENT_KIND_DREW,
        seat=1,
        private_tiles=[common_pb2.Tile(id=3, notation="R2")],
    )
    model.on_event(drew)
    assert model.log[-1] == "Ortadan kırmızı 2 çektin."
    # The viewer's own moves are told to them ("you"), in their language's grammar.
    own = common_pb2.Event()
    own.CopyFrom(discard)
    own.sequence, own.seat = 4, 1
    model.on_event(own)
    assert model.log[-1] == "Kırmızı 7 attın."  # a sentence starts with a capital
    # Every sentence with a subject has the viewer's own, the verb agreeing ("sen dağıttın").
    dealt = common_pb2.Event(
        sequence=6,
        kind=common_pb2.EVENT_KIND_HAND_DEALT,
        seat=1,
        hand_number=5,
        tiles=[common_pb2.Tile(id=50, notation="K13", colour=common_pb2.COLOUR_BLACK, number=13)],
    )
    model.on_event(dealt)
    assert model.log[-1] == "5. eli sen dağıttın; gösterge siyah 13."
    model.on_event(common_pb2.Event(sequence=7, kind=common_pb2.EVENT_KIND_TURN_TIMED_OUT, seat=1))
    assert model.log[-1] == "Süren doldu."
    model.on_event(common_pb2.Event(sequence=8, kind=common_pb2.EVENT_KIND_TURN_TIMED_OUT, seat=2))
    assert model.log[-1] == "Ayşe için süre doldu."
    mine = common_pb2.SeatOccupant(seat=1, display_name="Ben")
    model.on_event(
        common_pb2.Event(sequence=9, kind=common_pb2.EVENT_KIND_SEAT_TAKEN, seat=1, occupant=mine)
    )
    assert model.log[-1] == "1. koltuğa oturdun."
    assert all(" sen " not in line.lower() or "sen dağıttın" in line for line in model.log)
    model.strings = Strings("en")
    model.on_event(
        common_pb2.Event(sequence=10, kind=common_pb2.EVENT_KIND_TOOK, seat=1, tiles=own.tiles)
    )
    assert model.log[-1] == "You took R7."


def test_an_event_newer_than_the_view_makes_it_stale_and_a_newer_view_fresh() -> None:
    model = TableModel(Strings("en"), seat=0)
    assert model.on_view(common_pb2.SeatView(as_of_sequence=5, hand_number=1))
    assert not model.stale
    outcome = model.on_event(common_pb2.Event(sequence=6, kind=common_pb2.EVENT_KIND_DREW, seat=2))
    assert outcome.stale and model.stale
    assert not model.on_view(common_pb2.SeatView(as_of_sequence=4))  # older: ignored
    assert model.on_view(common_pb2.SeatView(as_of_sequence=6))
    assert not model.stale
    ended = model.on_event(
        common_pb2.Event(sequence=7, kind=common_pb2.EVENT_KIND_HAND_ENDED, hand_number=1)
    )
    assert ended.hand_ended and 1 in model.hand_results


# ---------------------------------------------------------------------------------------------
# The resumable stream


def event(sequence: int) -> table_pb2.WatchTableResponse:
    return table_pb2.WatchTableResponse(
        event=common_pb2.Event(sequence=sequence, kind=common_pb2.EVENT_KIND_DREW)
    )


def failure(code: grpc.StatusCode, reason: str = "SERVER_SHUTTING_DOWN") -> grpc.aio.AioRpcError:
    """A failed call as grpc.aio raises it, with the rich status the services send."""
    from okey101.platform.errors import Unavailable

    status = to_grpc_status(Unavailable(reason), "en")
    return grpc.aio.AioRpcError(
        code, grpc.aio.Metadata(), grpc.aio.Metadata(*status.trailing_metadata), status.details
    )


class Script:
    """A stream factory that plays back, per connection, a list of messages and then an error
    (or the end of the stream), and records how each connection was asked for."""

    def __init__(
        self, *connections: tuple[Sequence[table_pb2.WatchTableResponse], Exception | None]
    ) -> None:
        self.connections = list(connections)
        self.asked: list[tuple[int, bool]] = []

    async def open(
        self, after: int, with_view: bool
    ) -> AsyncIterator[table_pb2.WatchTableResponse]:
        self.asked.append((after, with_view))
        items, error = self.connections.pop(0)
        for item in items:
            await asyncio.sleep(0)
            yield item
        if error is not None:
            raise error


async def collect(watch: ResumableWatch) -> list[int]:
    seen = []
    async for item in watch:
        seen.append(item.event.sequence if item.HasField("event") else -item.view.as_of_sequence)
    return seen


FAST = Backoff(first=0.001, most=0.002)


def test_the_stream_resumes_from_the_last_sequence_after_unavailable() -> None:
    view = table_pb2.WatchTableResponse(view=common_pb2.SeatView(as_of_sequence=3))
    script = Script(
        ([view, event(4), event(5)], failure(grpc.StatusCode.UNAVAILABLE)),
        ([event(5), event(6)], failure(grpc.StatusCode.UNAVAILABLE)),  # 5 again: dropped
        ([event(7)], None),  # the stream ends (the table closed)
    )
    told: list[Reconnecting] = []
    watch = ResumableWatch(script.open, backoff=FAST, on_reconnect=told.append)
    assert asyncio.run(collect(watch)) == [-3, 4, 5, 6, 7]
    assert script.asked == [(0, True), (5, False), (6, False)]
    assert [state.after_sequence for state in told] == [5, 6]
    assert told[0].rejection.reason == "SERVER_SHUTTING_DOWN"
    assert watch.last_sequence == 7 and watch.connections == 3


def test_out_of_range_starts_again_from_a_fresh_view() -> None:
    script = Script(
        ([], failure(grpc.StatusCode.OUT_OF_RANGE, "SEQUENCE_TOO_OLD")),
        (
            [table_pb2.WatchTableResponse(view=common_pb2.SeatView(as_of_sequence=90)), event(91)],
            None,
        ),
    )
    watch = ResumableWatch(script.open, after_sequence=12, start_with_view=False, backoff=FAST)
    assert asyncio.run(collect(watch)) == [-90, 91]
    assert script.asked == [(12, False), (12, True)]


def test_errors_that_reconnecting_cannot_mend_reach_the_caller() -> None:
    script = Script(([event(1)], failure(grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT")))
    watch = ResumableWatch(script.open, backoff=FAST)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        asyncio.run(collect(watch))
    assert Rejection.of(caught.value).reason == "NOT_YOUR_SEAT"


def test_a_stream_outliving_its_token_reconnects_and_a_request_too_large_does_not() -> None:
    """TOKEN_EXPIRED (the factory opens the next stream with a fresh token) and a rate limit
    are waited out; a RESOURCE_EXHAUSTED that is not a rate limit is the caller's."""
    script = Script(
        ([event(1)], failure(grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED")),
        ([event(2)], failure(grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")),
        ([event(3)], None),
    )
    watch = ResumableWatch(script.open, backoff=FAST)
    assert asyncio.run(collect(watch)) == [1, 2, 3]
    assert script.asked == [(0, True), (1, False), (2, False)]
    for reason in ("MESSAGE_TOO_LARGE", "METADATA_TOO_LARGE", ""):
        bare = grpc.aio.AioRpcError(
            grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.aio.Metadata(), grpc.aio.Metadata(), "big"
        )
        error = failure(grpc.StatusCode.RESOURCE_EXHAUSTED, reason) if reason else bare
        script = Script(([event(1)], error), ([event(2)], None))
        with pytest.raises(grpc.aio.AioRpcError):
            asyncio.run(collect(ResumableWatch(script.open, backoff=FAST)))
        assert len(script.asked) == 1, reason
    unauthenticated = Script(([], failure(grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")))
    with pytest.raises(grpc.aio.AioRpcError):
        asyncio.run(collect(ResumableWatch(unauthenticated.open, backoff=FAST)))


def test_back_off_grows_to_its_limit() -> None:
    backoff = Backoff(first=0.2, factor=2, most=1.0)
    assert [backoff.delay(n) for n in (1, 2, 3, 4, 10)] == [0.2, 0.4, 0.8, 1.0, 1.0]


def test_a_rejection_reads_the_reason_parameters_and_sentence() -> None:
    status = to_grpc_status(RuleViolation("OPENING_BELOW_101", value=96, minimum=101), "tr")
    error = grpc.aio.AioRpcError(
        status.code,
        grpc.aio.Metadata(),
        grpc.aio.Metadata(*status.trailing_metadata),
        status.details,
    )
    rejection = Rejection.of(error)
    assert rejection.code == grpc.StatusCode.FAILED_PRECONDITION
    assert rejection.reason == "OPENING_BELOW_101"
    assert rejection.params == {"value": "96", "minimum": "101"}
    assert rejection.message == "Bu perler 96 ediyor; açmak için 101 gerekir."
    bare = grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "connection refused"
    )
    assert Rejection.of(bare).message == "connection refused" and Rejection.of(bare).retryable


# ---------------------------------------------------------------------------------------------
# The guest's secret


def test_the_guest_identity_is_kept_per_lobby_and_private(tmp_path: Path) -> None:
    store = GuestStore(tmp_path, "127.0.0.1:50051")
    assert store.load() is None
    store.save(GuestIdentity("device-1", "secret-1", "Ali", "p1"))
    assert store.load() == GuestIdentity("device-1", "secret-1", "Ali", "p1")
    assert store.last_table() is None
    store.remember_table(Seating("t-1", 2))
    assert store.last_table() == Seating("t-1", 2)
    assert store.load() == GuestIdentity("device-1", "secret-1", "Ali", "p1", "t-1", 2)
    store.remember_table(None)
    assert store.last_table() is None
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert GuestStore(tmp_path, "127.0.0.1:6000").load() is None
    store.path.write_text("not json", encoding="utf-8")
    assert store.load() is None


# ---------------------------------------------------------------------------------------------


def tile_id(name: str) -> int:
    from okey101.engine.tiles import copies_of, parse_face

    return copies_of(parse_face(name))[0].id


def name_of(tile: int) -> str:
    from okey101.engine.tiles import tile_by_id

    return str(tile_by_id(tile))


def state_tile(tile: int) -> object:
    from okey101.engine.tiles import tile_by_id

    return tile_by_id(tile)


def test_a_seats_points_are_told_line_by_line() -> None:
    score = common_pb2.SeatScore(seat=1, points=351)
    score.lines.add(kind=common_pb2.SCORE_LINE_KIND_RACK_SUM, points=24, count=3)
    score.lines.add(kind=common_pb2.SCORE_LINE_KIND_OKEY_IN_HAND, points=101, count=1)
    score.lines.add(
        kind=common_pb2.SCORE_LINE_KIND_DOUBLED,
        points=125,
        doubled_for=[common_pb2.DOUBLING_REASON_OKEY_FINISH, common_pb2.DOUBLING_REASON_ONE_GO],
    )
    score.lines.add(
        kind=common_pb2.SCORE_LINE_KIND_PENALTY,
        points=101,
        penalty_reason=common_pb2.PENALTY_REASON_OKEY_DISCARDED,
    )
    english = score_reasons(Strings("en"), score)
    assert english.startswith("rack (3 tiles) +24 okey ×1 +101 ×2 (with the okey, in one go) +125")
    assert english.endswith("= 351") and "penalty (" in english
    assert score_reasons(Strings("tr"), score).startswith("ıstaka (3 taş) +24")
    assert score_reasons(Strings("en"), common_pb2.SeatScore(points=0)) == ""


def test_an_okey_in_a_set_of_three_shows_its_number_and_a_pairs_opener_its_pairs() -> None:
    from okey101.client.render import meld_plain, meld_text
    from okey101.client.widgets import opened_label

    okey = common_pb2.Tile(id=60, notation="B4", colour=common_pb2.COLOUR_BLUE, number=4, wild=True)
    sevens = [
        common_pb2.Tile(id=12, notation="R7", colour=common_pb2.COLOUR_RED, number=7),
        common_pb2.Tile(id=38, notation="Y7", colour=common_pb2.COLOUR_YELLOW, number=7),
    ]
    meld = common_pb2.Meld(kind=common_pb2.MELD_KIND_SET, number=7, value=21)
    for tile in sevens:
        meld.tiles.add(tile=tile)
    meld.tiles.add(tile=okey)  # its colour is not decided until the set has four
    assert meld_plain(meld) == "R7 Y7 ★B4=7"
    assert meld_text(meld, "tr").plain == "7 7 ★4=7"
    assert meld_plain(meld, "tr") == "kırmızı 7, sarı 7, ★mavi 4=7"
    view = common_pb2.SeatView(seat=0)
    view.seats.add(seat=0, opened_as=common_pb2.OPENING_KIND_PAIRS)
    view.seats.add(seat=1, opened_as=common_pb2.OPENING_KIND_RUNS)
    pair = common_pb2.Meld(kind=common_pb2.MELD_KIND_PAIR)
    for index in range(5):
        view.table.add(index=index, owner_seat=0, meld=pair)
    view.table.add(index=5, owner_seat=1, meld=meld)
    model = TableModel(Strings("en"), seat=0)
    assert opened_label(view, 0, model) == "opened with 5 pairs"
    assert opened_label(view, 1, model) == "opened with runs (21)"
    model.strings = Strings("tr")
    assert opened_label(view, 0, model) == "5 çiftle açık"
