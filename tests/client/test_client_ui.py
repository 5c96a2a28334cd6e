"""The terminal client's screen, driven headless with Textual's pilot on real positions.

Positions come from the engine (a seeded deal, or a hand built tile by tile), and every move a
key press sends is played by the real RulesService (in-process on 127.0.0.1 port 0, called
with a player token through the generated stubs): ``RulesTable`` below keeps the hand state
between moves the way the table service does and passes each Act to RulesService.ApplyAction,
so a rejection is the service's own rich status and its sentence, and the next view is the
service's. The selection's worth and the best opening also come from RulesService. What the
whole stack does (lobby, table, bots, scoring) is tested end to end in test_e2e_*.py.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from okey.v1 import common_pb2, lobby_pb2, rules_pb2, rules_pb2_grpc, scoring_pb2, table_pb2

from okey101.client import moves
from okey101.client.app import OkeyApp
from okey101.client.i18n import Strings
from okey101.client.memory import TableMemory
from okey101.client.resume import Reconnecting
from okey101.client.screens import ConfirmScreen, PickMeldScreen, ScoreSheetScreen, WalletScreen
from okey101.engine.actions import End
from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.hand import HandState, Phase, TableMeld
from okey101.engine.melds import make_group
from okey101.engine.rules import RuleSet
from okey101.engine.seat import OpenedAs, Seat
from okey101.engine.solver.openings import best_opening
from okey101.engine.tiles import Okey, Tile, TileAllocator, parse_face
from okey101.platform import convert
from okey101.platform.auth import JwksVerifier, SigningKey, TokenIssuer, jwks_of
from okey101.platform.config import settings_for_tests
from okey101.platform.server import ServerHandle
from okey101.rules import ACCESS, register

KEY = SigningKey.generate()
# The table's part (ApplyAction, ViewHand: the engine's state calls) takes a service's token.
SERVICE_TOKEN = TokenIssuer(KEY).issue("table-ui", "service", ttl_seconds=3600)
AUTH = (("authorization", f"Bearer {SERVICE_TOKEN}"),)
SIZE = (110, 36)


class RulesTable:
    """A seat at a hand whose moves RulesService plays (see the module docstring).

    Each Act goes to ApplyAction with the stored state; its events get table-wide sequence
    numbers and reach the watch stream; the answer's view of the acting seat is Act's answer.
    """

    def __init__(
        self, stub: Any, state: HandState, seat: int | None, names: Sequence[str] = ()
    ) -> None:
        self.stub = stub
        self.table_id = "ui-table"
        self.seat = seat
        self.state = convert.hand_state_to_proto(state)
        self.sequence = 1
        self.version = 1
        self.names = list(names) or [f"Bot {n}" for n in range(4)]
        self.stream: asyncio.Queue[table_pb2.WatchTableResponse] = asyncio.Queue()
        self.acts: list[list[common_pb2.Action]] = []
        #: What GetTable answers (a test stakes the table) and the player's wallet: its
        #: balance and its entries, newest first, in pages of ``page_size``.
        self.table = common_pb2.Table(table_id=self.table_id)
        self.balance = lobby_pb2.GetWalletResponse(balance=1000)
        self.entries: list[lobby_pb2.WalletEntry] = []
        self.page_size = 50
        self.entry_calls = 0

    def _decorate(self, view: common_pb2.SeatView) -> common_pb2.SeatView:
        view.table_id = self.table_id
        view.hand_number = 1
        view.as_of_sequence = self.sequence
        view.state_version = self.version
        del view.match_totals[:]
        view.match_totals.extend([0, 0, 0, 0])
        for public in view.seats:
            public.occupant.seat = public.seat
            public.occupant.display_name = self.names[public.seat]
            public.occupant.kind = (
                common_pb2.OCCUPANT_KIND_PLAYER
                if public.seat == self.seat
                else common_pb2.OCCUPANT_KIND_BOT
            )
        return view

    async def current_view(self) -> common_pb2.SeatView:
        request = rules_pb2.ViewHandRequest(state=self.state)
        if self.seat is not None:
            request.seat = self.seat
        answer = await self.stub.ViewHand(request, metadata=AUTH, timeout=10)
        return self._decorate(answer.view)

    async def watch(
        self, *, on_reconnect: Callable[[Reconnecting], None] | None = None
    ) -> AsyncIterator[table_pb2.WatchTableResponse]:
        yield table_pb2.WatchTableResponse(view=await self.current_view())
        while True:
            yield await self.stream.get()

    async def act(
        self, actions: Sequence[common_pb2.Action], state_version: int, seat: int | None = None
    ) -> table_pb2.ActResponse:
        acting = self.seat if seat is None else seat
        assert acting is not None
        self.acts.append(list(actions))
        request = rules_pb2.ApplyActionRequest(
            state=self.state, seat=acting, actions=list(actions), locale=self.locale
        )
        answer = await self.stub.ApplyAction(request, metadata=AUTH, timeout=10)
        self.state = answer.state
        self.version += 1
        numbered = []
        for event in answer.events:
            self.sequence += 1
            event.sequence = self.sequence
            event.state_version = self.version
            event.hand_number = 1
            if event.seat != self.seat:
                del event.private_tiles[:]
            numbered.append(event)
            await self.stream.put(table_pb2.WatchTableResponse(event=event))
        view = self._decorate(answer.views[acting])
        return table_pb2.ActResponse(events=numbered, view=view)

    locale = "en-GB"

    async def seat_view(self, min_sequence: int = 0) -> common_pb2.SeatView:
        view = await self.current_view()
        assert view.as_of_sequence >= min_sequence  # the fake table is never behind
        return view

    async def get_table(self) -> common_pb2.Table:
        answer = common_pb2.Table()
        answer.CopyFrom(self.table)
        return answer

    async def wallet(self) -> lobby_pb2.GetWalletResponse:
        return self.balance

    async def wallet_entries(self, page_token: str = "") -> lobby_pb2.ListWalletEntriesResponse:
        self.entry_calls += 1
        start = int(page_token or 0)
        end = start + self.page_size
        more = str(end) if end < len(self.entries) else ""
        return lobby_pb2.ListWalletEntriesResponse(
            entries=self.entries[start:end], next_page_token=more
        )

    async def validate_melds(
        self, view: common_pb2.SeatView, groups: Sequence[common_pb2.TileGroup]
    ) -> rules_pb2.ValidateMeldsResponse:
        request = rules_pb2.ValidateMeldsRequest(
            rules=view.rules, indicator_tile_id=view.indicator.id, groups=list(groups)
        )
        answer: rules_pb2.ValidateMeldsResponse = await self.stub.ValidateMelds(
            request, metadata=AUTH, timeout=10
        )
        return answer

    async def validate_opening(
        self, view: common_pb2.SeatView, groups: Sequence[common_pb2.TileGroup]
    ) -> rules_pb2.ValidateOpeningResponse:
        request = rules_pb2.ValidateOpeningRequest(
            rules=view.rules,
            indicator_tile_id=view.indicator.id,
            rack_tile_ids=[item.tile.id for item in view.rack],
            groups=list(groups),
            locale=self.locale,
        )
        answer: rules_pb2.ValidateOpeningResponse = await self.stub.ValidateOpening(
            request, metadata=AUTH, timeout=10
        )
        return answer

    async def best_opening(self, view: common_pb2.SeatView) -> rules_pb2.BestOpeningResponse:
        request = rules_pb2.BestOpeningRequest(
            rules=view.rules,
            indicator_tile_id=view.indicator.id,
            rack_tile_ids=[item.tile.id for item in view.rack],
        )
        answer: rules_pb2.BestOpeningResponse = await self.stub.BestOpening(
            request, metadata=AUTH, timeout=10
        )
        return answer

    async def score_sheet_through(
        self, match_id: str, hand_number: int, *, ended: bool = False
    ) -> scoring_pb2.ScoreSheet | None:
        return None  # no scoring here: the screen falls back to the hand results it saw

    async def close(self) -> None:
        self.closed = True


# ---------------------------------------------------------------------------------------------
# Running the app against the rules service


def run(
    tmp_path: Path,
    state: HandState,
    seat: int | None,
    script: Callable[[OkeyApp, Any, RulesTable], Any],
    *,
    language: str = "en",
    memory: TableMemory | None = None,
) -> None:
    """Start RulesService, run the app on a ``RulesTable`` over ``state``, run ``script``."""

    async def main() -> None:
        settings = settings_for_tests("rules", var_dir=tmp_path)
        verifier = JwksVerifier(jwks_of(KEY))
        async with (
            await ServerHandle.start(
                "rules", register, settings, access=ACCESS, verifier=verifier
            ) as handle,
            grpc.aio.insecure_channel(handle.target) as channel,
        ):
            stub = rules_pb2_grpc.RulesServiceStub(channel)
            table = RulesTable(stub, state, seat)
            table.locale = "tr-TR" if language == "tr" else "en-GB"

            async def connect(progress: Callable[[str], None]) -> RulesTable:
                progress("connecting")
                return table

            app = OkeyApp(
                connect,
                Strings("tr" if language == "tr" else "en"),  # type: ignore[arg-type]
                spectator=seat is None,
                check_delay=0,
                memory=memory,
            )
            async with app.run_test(size=SIZE) as pilot:
                await settle(pilot, app, lambda: app.model.view is not None)
                await script(app, pilot, table)

    asyncio.run(main())


async def settle(pilot: Any, app: OkeyApp, done: Callable[[], bool], timeout: float = 10) -> None:
    """Let the app work until ``done()`` holds (workers and gRPC calls take a few turns)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not done():
        if loop.time() > deadline:
            raise AssertionError("the app did not get there in time")
        await pilot.pause(0.02)
    await pilot.pause()


def screen_text(app: OkeyApp) -> str:
    """Everything on the screen, as plain text (the exported screenshot without its markup)."""
    from rich.console import Console

    console = Console(width=SIZE[0], record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


# ---------------------------------------------------------------------------------------------
# Positions


def dealt(seed: int, preset: str = "oyna") -> HandState:
    return deal(RuleSet.preset(preset), 0, shuffled_deck(random.Random(seed)))


def dealt_where(check: Callable[[HandState], bool], preset: str = "oyna") -> HandState:
    """The first seeded deal (seed 0, 1, ...) that ``check`` accepts."""
    for seed in range(500):
        state = dealt(seed, preset)
        if check(state):
            return state
    raise AssertionError("no such deal among 500 seeds")


def starter_can_open(state: HandState) -> bool:
    rack = state.seats[state.turn].rack
    return best_opening(state.hand_of(state.turn), state.rules).value >= 101 and len(rack) == 22


def laid_off_position() -> tuple[HandState, int]:
    """Seat 0 opened last turn with R5 R6 R7 (and more), holds R8 and K2, and has drawn: a
    lay-off of R8 on meld 0 is legal. Returns the state and R8's tile id."""
    rules = RuleSet.preset("oyna")
    allocate = TileAllocator()
    indicator = allocate.take(parse_face("Y3"))
    okey = Okey(indicator)
    run = make_group(allocate.take_names(["R5", "R6", "R7"]), okey, rules)
    seat_set = make_group(allocate.take_names(["K10", "B10", "Y10"]), okey, rules)
    rack = allocate.take_names(["R8", "K2", "B12"])
    others = [allocate.take_names(names) for names in (["K5", "K6"], ["B1", "B2"], ["Y1", "Y2"])]
    stock = allocate.take_names(["K7", "K8", "K9"])
    seats = (
        Seat(rack=rack, opened_as=OpenedAs.RUNS, opened_on_turn=0, turns_played=1),
        Seat(rack=others[0], turns_played=1),
        Seat(rack=others[1], turns_played=1),
        Seat(rack=others[2], turns_played=1),
    )
    state = HandState(
        rules=rules,
        okey=okey,
        dealer=3,
        turn=0,
        phase=Phase.PLAY,
        seats=seats,
        table=(TableMeld(run, 0), TableMeld(seat_set, 0)),
        stock=stock,
        turn_number=4,
    )
    return state, rack[0].id


def finishing_position() -> tuple[HandState, int]:
    """Seat 0 has opened and holds one tile after drawing: discarding it finishes the hand."""
    state, _ = laid_off_position()
    rack = state.seats[0].rack
    last = rack[1]  # K2
    seats = (
        Seat(rack=(last,), opened_as=OpenedAs.RUNS, opened_on_turn=0, turns_played=1),
        *state.seats[1:],
    )
    table = state.table
    return (
        HandState(
            rules=state.rules,
            okey=state.okey,
            dealer=state.dealer,
            turn=0,
            phase=Phase.PLAY,
            seats=seats,
            table=table,
            stock=state.stock,
            turn_number=4,
        ),
        last.id,
    )


async def put_cursor(app: OkeyApp, pilot: Any, tile_id: int) -> None:
    rack = app.rack_view.rack
    steps = rack.order.index(tile_id) - rack.cursor
    await pilot.press(*(["right"] * steps if steps > 0 else ["left"] * -steps))
    assert rack.at_cursor == tile_id


# ---------------------------------------------------------------------------------------------
# Tests


def test_the_screen_shows_the_seats_rack_table_and_state(tmp_path: Path) -> None:
    state = dealt(7)
    seat = state.turn  # the starter: 22 tiles, phase FIRST

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        view = app.model.view
        assert view is not None and len(view.rack) == 22
        text = screen_text(app)
        assert "Your turn: play and discard" in text
        assert "stock 20" in text
        assert f"indicator {state.okey.indicator}" in text
        for other in range(4):
            count = len(state.seats[other].rack)
            assert f"{count} tiles" in text
            if other != seat:
                assert f"Bot {other}" in text
        rack = app.rack_view.render().plain
        # Two rows of fifteen slots (the empty ones dotted), each followed by its marks line.
        lines = rack.splitlines()
        slots = [slot for line in lines[0::2] for slot in line.split()]
        assert len(slots) == 2 * moves.ROW
        tiles = [slot for slot in slots if slot != "·"]
        assert len(tiles) == 22 and slots[22:] == ["·"] * (2 * moves.ROW - 22)
        okeys = [t for t in state.seats[seat].rack if state.okey.is_wild(t)]
        assert sum(1 for tile in tiles if tile.startswith("★")) == len(okeys)
        # A new rack comes sorted: colour by colour, low to high, false jokers then okeys last.
        held = state.seats[seat].rack
        coloured = sorted(
            (t for t in held if t.colour is not None and not state.okey.is_wild(t)),
            key=lambda t: (int(t.colour or 0), t.number or 0, t.id),
        )
        jokers = [t for t in held if t.is_false_joker]
        expected = [str(t) for t in coloured] + ["FJ"] * len(jokers) + [str(t) for t in okeys]
        assert [t.lstrip("★◆") for t in tiles] == expected

    run(tmp_path, state, state.turn, script)


def test_turkish_shows_every_word_in_turkish(tmp_path: Path) -> None:
    state = dealt(7)

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        text = screen_text(app)
        assert "Sıra sende: aç ya da at" in text
        assert "ortada 20" in text and "22 taş" in text
        # A refused move comes back in Turkish too (the starter may not draw: FIRST_TURN_NO_DRAW
        # or the like), as the service renders it.
        await pilot.press("d")
        await settle(pilot, app, lambda: app.message.startswith("Olmaz"))
        assert "Olmaz:" in app.message

    run(tmp_path, state, state.turn, script, language="tr")


def test_a_refused_move_shows_the_engines_sentence(tmp_path: Path) -> None:
    state = dealt(3)

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        await pilot.press("d")  # the starter holds 22 tiles and may not draw
        await settle(pilot, app, lambda: app.message.startswith("Not allowed"))
        assert table.acts == [[moves.draw()]]
        # The sentence is the engine's own, as RulesService rendered it.
        from okey101.engine.actions import Draw
        from okey101.engine.errors import OkeyError
        from okey101.engine.hand import apply as engine_apply

        with pytest.raises(OkeyError) as refused:
            engine_apply(state, state.turn, Draw())
        assert app.message == f"Not allowed: {refused.value.message('en')}"

    run(tmp_path, state, state.turn, script)


def test_discarding_sends_the_tile_under_the_cursor_and_the_turn_passes(tmp_path: Path) -> None:
    state = dealt_where(lambda s: any(not s.okey.is_wild(t) for t in s.seats[s.turn].rack))
    seat = state.turn

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        view = app.model.view
        assert view is not None
        plain = next(item for item in view.rack if not item.costly_discard)
        await put_cursor(app, pilot, plain.tile.id)
        await pilot.press("x")
        await settle(
            pilot, app, lambda: app.model.view is not None and len(app.model.view.rack) == 21
        )
        assert table.acts == [[moves.discard(plain.tile.id)]]
        after = app.model.view
        assert after is not None and after.turn == (seat + 1) % 4
        assert f"Bot {(seat + 1) % 4} to move: draw or take" in screen_text(app)
        # The discard is on the seat's pile, as the seat box shows it.
        assert after.seats[seat].discards[-1].id == plain.tile.id

    run(tmp_path, state, seat, script)


def test_a_discard_that_costs_101_asks_first(tmp_path: Path) -> None:
    state = dealt_where(lambda s: any(s.okey.is_wild(t) for t in s.seats[s.turn].rack))
    okey = next(t for t in state.seats[state.turn].rack if state.okey.is_wild(t))

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        await put_cursor(app, pilot, okey.id)
        await pilot.press("x")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        assert "+101" in screen_text(app)
        await pilot.press("n")
        await settle(pilot, app, lambda: not isinstance(app.screen, ConfirmScreen))
        assert table.acts == []  # kept
        # A game key closes the question as "no" and is played: the cursor moves on.
        await pilot.press("x")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("left")
        await settle(pilot, app, lambda: not isinstance(app.screen, ConfirmScreen))
        assert table.acts == [] and app.rack_view.rack.at_cursor != okey.id
        await put_cursor(app, pilot, okey.id)
        await pilot.press("x")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot, app, lambda: bool(table.acts))
        assert table.acts == [[moves.discard(okey.id)]]
        await settle(pilot, app, lambda: "+101" in "\n".join(app.model.log))

    run(tmp_path, state, state.turn, script)


def test_the_selection_shows_its_value_and_the_best_opening_opens(tmp_path: Path) -> None:
    state = dealt_where(starter_can_open)
    seat = state.turn

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        view = app.model.view
        assert view is not None
        best = best_opening(state.hand_of(seat), state.rules)
        first = best.melds[0]
        # Select the first meld of the best opening tile by tile, in its order.
        for tile in first.tiles:
            await put_cursor(app, pilot, tile.id)
            await pilot.press("space")
        await settle(pilot, app, lambda: f"= {first.value}" in app.selection_text.plain)
        assert f"opening {first.value} of 101" in app.selection_text.plain
        # The rules service's best opening, selected with one key, then opened with another.
        await pilot.press("c", "a")
        await settle(pilot, app, lambda: "✓" in app.selection_text.plain)
        await pilot.press("o")
        await settle(
            pilot, app, lambda: app.model.view is not None and len(app.model.view.table) > 0
        )
        (sent,) = table.acts
        assert sent[0].WhichOneof("move") == "open"
        opened = app.model.view
        assert opened is not None and opened.seats[seat].opened_as == common_pb2.OPENING_KIND_RUNS
        assert "#0 you:" in screen_text(app)
        assert app.rack_view.rack.all_groups() == []

    run(tmp_path, state, seat, script)


def gap_with_okey(state: HandState) -> tuple[Tile, Tile, Tile] | None:
    """The starter's okey and two tiles of one colour two apart (n, n+2), if it holds them."""
    rack = state.seats[state.turn].rack
    okey = next((t for t in rack if state.okey.is_wild(t)), None)
    plain = [t for t in rack if not state.okey.is_wild(t) and not t.is_false_joker]
    for low in plain:
        for high in plain:
            if low.colour == high.colour and low.number and high.number == low.number + 2:
                return (low, okey, high) if okey is not None else None
    return None


def test_an_okey_in_the_selection_says_what_it_stands_for(tmp_path: Path) -> None:
    state = dealt_where(lambda s: gap_with_okey(s) is not None)
    found = gap_with_okey(state)
    assert found is not None
    low, okey, high = found
    middle = f"{'RYBK'[int(low.colour or 0)]}{(low.number or 0) + 1}"

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        # Low, okey, high, selected in run order: the okey stands for the tile between.
        for tile in (low, okey, high):
            await put_cursor(app, pilot, tile.id)
            await pilot.press("space")
        await settle(pilot, app, lambda: "run" in app.selection_text.plain)
        text = app.selection_text.plain
        assert f"★ as {middle}" in text
        value = 3 * ((low.number or 0) + 1)
        assert f"= {value}" in text and f"opening {value} of 101" in text

    run(tmp_path, state, state.turn, script)


def with_rack(state: HandState, names: Sequence[str], **seat: Any) -> tuple[HandState, list[Tile]]:
    """``state`` with seat 0's rack replaced by fresh copies of ``names`` (the second copies
    where the first are in use), its other fields as ``seat`` says."""
    used = {tile.id for s in state.seats for tile in s.rack} | {state.okey.indicator.id}
    used |= {tile.id for item in state.table for tile in item.meld.tiles}
    used |= {tile.id for tile in state.stock}
    rack = []
    for name in names:
        face = parse_face(name)
        tile = next(t for t in (Tile(face * 2), Tile(face * 2 + 1)) if t.id not in used)
        used.add(tile.id)
        rack.append(tile)
    fields = {"opened_as": OpenedAs.RUNS, "opened_on_turn": 0, "turns_played": 1, **seat}
    seats = (Seat(rack=tuple(rack), **fields), *state.seats[1:])
    import dataclasses

    return dataclasses.replace(state, seats=seats), rack


def test_lay_off_sends_a_tile_that_fits_one_meld_at_once(tmp_path: Path) -> None:
    state, r8 = laid_off_position()

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        await put_cursor(app, pilot, r8)
        await pilot.press("l")  # R8 fits R5 R6 R7 only: no question asked
        await settle(pilot, app, lambda: bool(table.acts))
        assert not isinstance(app.screen, PickMeldScreen)
        assert table.acts == [[moves.lay_off(r8, 0)]]
        await settle(
            pilot,
            app,
            lambda: app.model.view is not None and len(app.model.view.table[0].meld.tiles) == 4,
        )
        assert "R5 R6 R7 R8" in screen_text(app)

    run(tmp_path, state, 0, script)


def test_the_picker_offers_only_the_melds_a_tile_fits(tmp_path: Path) -> None:
    base, _ = laid_off_position()  # the table: R5 R6 R7 and K10 B10 Y10; the okey is Y4
    state, (okey, _k2, _b12) = with_rack(base, ["Y4", "K2", "B12"])

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        await put_cursor(app, pilot, okey.id)
        await pilot.press("l")
        await settle(pilot, app, lambda: isinstance(app.screen, PickMeldScreen))
        screen = app.screen
        assert isinstance(screen, PickMeldScreen)
        offered = [plan for plan, _label in screen.choices]
        # The okey fits both ends of the run and the set; nothing else is offered.
        assert [(p[0].meld_index, p[0].end) for p in offered] == [
            (0, End.LOW),
            (0, End.HIGH),
            (1, None),
        ]
        await pilot.press("down", "enter")
        await settle(pilot, app, lambda: bool(table.acts))
        assert table.acts == [[moves.lay_off(okey.id, 0, End.HIGH)]]

    run(tmp_path, state, 0, script)


def test_several_tiles_are_laid_off_in_one_act(tmp_path: Path) -> None:
    base, _ = laid_off_position()
    state, (r9, r8, _b12, _k2) = with_rack(base, ["R9", "R8", "B12", "K2"])

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        # Selected R9 first: the plan puts R8 down before it, so each fits.
        for tile in (r9, r8):
            await put_cursor(app, pilot, tile.id)
            await pilot.press("space")
        await pilot.press("l")
        await settle(pilot, app, lambda: bool(table.acts))
        assert table.acts == [[moves.lay_off(r8.id, 0), moves.lay_off(r9.id, 0)]]
        await settle(
            pilot,
            app,
            lambda: app.model.view is not None and len(app.model.view.table[0].meld.tiles) == 5,
        )

    run(tmp_path, state, 0, script)


def test_laying_off_before_opening_is_refused_at_once_with_the_sentence(tmp_path: Path) -> None:
    base, _ = laid_off_position()
    state, (r8, *_rest) = with_rack(base, ["R8", "K2", "B12"], opened_as=None, opened_on_turn=-1)

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        await put_cursor(app, pilot, r8.id)
        await pilot.press("l")
        await pilot.pause(0.05)
        assert not isinstance(app.screen, PickMeldScreen) and table.acts == []
        assert "Henüz açmadın." in app.message

    run(tmp_path, state, 0, script, language="tr")


def test_a_popup_never_eats_a_turn_a_game_key_closes_it_and_is_played(tmp_path: Path) -> None:
    state = dealt(7)  # the starter, first turn: x discards
    starter = state.turn

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        await pilot.press("p")  # the score sheet, open as the turn runs
        await settle(pilot, app, lambda: isinstance(app.screen, ScoreSheetScreen))
        tile = app.rack_view.rack.at_cursor
        await pilot.press("right")  # closes the sheet and moves the cursor
        await settle(pilot, app, lambda: not isinstance(app.screen, ScoreSheetScreen))
        assert app.rack_view.rack.at_cursor != tile
        await pilot.press("p")
        await settle(pilot, app, lambda: isinstance(app.screen, ScoreSheetScreen))
        await pilot.press("x")  # closes it and discards, as at the table
        await settle(pilot, app, lambda: bool(table.acts))
        assert not isinstance(app.screen, ScoreSheetScreen)
        assert table.acts[0][0].HasField("discard")

    run(tmp_path, state, starter, script)


def test_q_asks_first_at_a_live_table(tmp_path: Path) -> None:
    state = dealt(7)

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        await pilot.press("q")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        assert "A bot will play your seat" in screen_text(app)
        await pilot.press("n")
        await settle(pilot, app, lambda: not isinstance(app.screen, ConfirmScreen))
        assert app.return_code is None  # still at the table
        await pilot.press("q")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot, app, lambda: app.return_code == 0)

    run(tmp_path, state, state.turn, script)


def test_q_during_another_question_asks_about_leaving(tmp_path: Path) -> None:
    state = dealt_where(lambda s: any(s.okey.is_wild(t) for t in s.seats[s.turn].rack))
    okey = next(t for t in state.seats[state.turn].rack if state.okey.is_wild(t))

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        await put_cursor(app, pilot, okey.id)
        await pilot.press("x")  # a +101 discard asks first
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("q")  # not a yes to leaving: it asks
        await settle(
            pilot,
            app,
            lambda: isinstance(app.screen, ConfirmScreen) and app.screen.leaving,
        )
        assert app.return_code is None and table.acts == []
        await pilot.press("q")  # q twice: yes
        await settle(pilot, app, lambda: app.return_code == 0)

    run(tmp_path, state, state.turn, script)


def test_coming_back_to_the_table_keeps_the_log_and_the_racks_gaps(tmp_path: Path) -> None:
    state = dealt(7)
    memory = TableMemory(tmp_path)
    arranged: list[int] = []
    other = (state.turn + 1) % 4
    line = f"Bot {other} drew from the stock."

    async def leave(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        table.sequence += 1
        event = common_pb2.Event(
            sequence=table.sequence, kind=common_pb2.EVENT_KIND_DREW, seat=other
        )
        await table.stream.put(table_pb2.WatchTableResponse(event=event))
        await settle(pilot, app, lambda: line in app.model.log)
        await pilot.press("right", "right", "minus", "right", "right", "minus")
        arranged.extend(app.rack_view.rack.order)
        assert arranged.count(moves.GAP) == 2
        await pilot.press("q")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot, app, lambda: app.return_code == 0)

    async def come_back(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        assert line in app.model.log and line in screen_text(app)
        assert app.rack_view.rack.order == arranged

    run(tmp_path / "first", state, state.turn, leave, memory=memory)
    run(tmp_path / "again", state, state.turn, come_back, memory=memory)


def test_the_last_discard_ends_the_hand_and_shows_the_score_sheet(tmp_path: Path) -> None:
    state, last = finishing_position()

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        await put_cursor(app, pilot, last)
        await pilot.press("x")  # the finishing discard is never asked about
        await settle(pilot, app, lambda: isinstance(app.screen, ScoreSheetScreen), timeout=15)
        text = screen_text(app)
        assert "Score sheet after hand 1" in text
        assert "you finished" in text
        assert "-101" in text
        # The reveal: every rack face up, each seat's points as its score lines say them.
        assert "finished -101 = -101" in text
        assert "Bot 1 (not opened) K5 K6" in text and "Bot 2 (not opened) B1 B2" in text
        assert "to 1,000" in text  # the match's target, on screen all along
        assert "rack (" in text or "never opened +202" in text
        # The match ends (as the table would say after the hand): the result replaces it.
        result = common_pb2.MatchResult(match_id="m-1", table_id=table.table_id, hands_played=1)
        for seat, total in enumerate([-101, 202, 202, 202]):
            result.seats.add(seat=seat, total=total, winner=seat == 0)
        table.sequence += 1
        ended = common_pb2.Event(
            sequence=table.sequence, kind=common_pb2.EVENT_KIND_MATCH_ENDED, match_result=result
        )
        await table.stream.put(table_pb2.WatchTableResponse(event=ended))
        await settle(pilot, app, lambda: "Match over" in screen_text(app))
        assert "Winner: you" in screen_text(app)
        assert "finished -101 = -101" in screen_text(app)  # the last hand's reveal, still
        await pilot.press("enter")
        await settle(pilot, app, lambda: not isinstance(app.screen, ScoreSheetScreen))

    run(tmp_path, state, 0, script)


def _entry(
    amount: int, reason: int, after: int, table_id: str = "", note: str = ""
) -> lobby_pb2.WalletEntry:
    entry = lobby_pb2.WalletEntry(
        entry_id=f"e-{after}-{reason}",
        amount=amount,
        balance_after=after,
        reason=reason,  # type: ignore[arg-type]
        table_id=table_id,
        note=note,
    )
    entry.create_time.FromSeconds(1_790_000_000)
    return entry


def test_a_staked_table_shows_its_stake_pot_and_balance_and_w_the_wallet(tmp_path: Path) -> None:
    """The title: the stake and the pot (GetTable, asked again when the pot moves) and the
    balance with the chips in play (GetWallet); ``w`` the wallet's history, a page at a time."""
    state = dealt(11)

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        await settle(pilot, app, lambda: "balance 1,000" in screen_text(app))
        assert "pot" not in screen_text(app).split("\n")[0]  # an unstaked table: no pot
        table.table.stake, table.table.pot, table.table.fee_percent = 100, 400, 5
        table.balance = lobby_pb2.GetWalletResponse(balance=1900, held=100)
        table.entries = [
            _entry(-100, lobby_pb2.WALLET_ENTRY_REASON_STAKE, 1900, table.table_id),
            _entry(1000, lobby_pb2.WALLET_ENTRY_REASON_ADJUSTMENT, 2000, note="welcome back"),
            _entry(1000, lobby_pb2.WALLET_ENTRY_REASON_GRANT, 1000),
        ]
        table.page_size = 2
        # The match starts: the bots' stakes join the pot, and the title follows.
        table.sequence += 1
        started = common_pb2.Event(
            sequence=table.sequence, kind=common_pb2.EVENT_KIND_MATCH_STARTED
        )
        await table.stream.put(table_pb2.WatchTableResponse(event=started))
        await settle(pilot, app, lambda: "pot 400" in screen_text(app))
        assert "stake 100 · pot 400 · balance 1,900 · in play 100" in screen_text(app)
        await pilot.press("w")
        await settle(pilot, app, lambda: isinstance(app.screen, WalletScreen) and app.screen.loaded)
        text = screen_text(app)
        assert "Wallet history" in text and "balance 1,900" in text
        assert re.search(r"Stake\s.*-100\s.*1,900\s.*table ui-table", text), text
        assert "Adjustment by the operator: welcome back" in text
        assert "Starting chips" not in text and "n: older entries" in text
        await pilot.press("n")
        await settle(pilot, app, lambda: len(getattr(app.screen, "entries", [])) == 3)
        text = screen_text(app)
        assert re.search(r"Starting chips\s.*\+1,000", text), text
        assert "n: older entries" not in text
        await pilot.press("enter")
        await settle(pilot, app, lambda: not isinstance(app.screen, WalletScreen))

    run(tmp_path, state, 0, script)


def test_a_won_staked_match_shows_the_payout_from_the_wallet_in_turkish(tmp_path: Path) -> None:
    """The result waits for the seat's PAYOUT entry for the table (the lobby records it a
    moment after MATCH_ENDED) and says it; a seat that did not win is told at once."""
    state = dealt(11)

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        table.table.stake, table.table.pot, table.table.fee_percent = 100, 400, 5
        result = common_pb2.MatchResult(match_id="m-1", table_id=table.table_id, hands_played=1)
        for seat, total in enumerate([-101, 202, 202, 202]):
            result.seats.add(seat=seat, total=total, winner=seat == 0)
        table.sequence += 1
        ended = common_pb2.Event(
            sequence=table.sequence, kind=common_pb2.EVENT_KIND_MATCH_ENDED, match_result=result
        )
        await table.stream.put(table_pb2.WatchTableResponse(event=ended))
        await settle(pilot, app, lambda: "Pot dağıtılıyor" in screen_text(app))
        assert "Maç bitti" in screen_text(app)
        # The payout reaches the wallet; another table's does not count.
        table.entries = [
            _entry(380, lobby_pb2.WALLET_ENTRY_REASON_PAYOUT, 1280, table.table_id),
            _entry(95, lobby_pb2.WALLET_ENTRY_REASON_PAYOUT, 900, "another-table"),
        ]
        await settle(pilot, app, lambda: "Kazancın: +380 çip (bahis 100)." in screen_text(app))
        assert table.entry_calls >= 2

    run(tmp_path, state, 0, script, language="tr")


def test_the_reveal_in_turkish_says_the_match_totals_and_its_target(tmp_path: Path) -> None:
    state, _last = finishing_position()

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        assert "1.000 puanlık maç" in screen_text(app)  # the title, all along
        assert "seriyle açık (48)" in screen_text(app)  # its melds: R5 R6 R7 18, K10 B10 Y10 30
        progress = common_pb2.MatchProgress(
            match_id="m-1",
            totals=[-101, 202, 202, 202],
            hands_played=1,
            match_end=common_pb2.MATCH_END_TARGET_TOTAL,
            target_total=1000,
        )
        score = common_pb2.SeatScore(
            seat=1, points=202, opened_as=common_pb2.OPENING_KIND_NOT_OPENED
        )
        score.lines.add(kind=common_pb2.SCORE_LINE_KIND_NEVER_OPENED, points=202)
        result = common_pb2.HandResult(reason=common_pb2.HAND_END_REASON_FINISHED)
        result.finish.winner_seat = 0
        result.scores.append(score)
        racks = [
            common_pb2.RevealedRack(
                seat=1,
                tiles=[
                    common_pb2.Tile(
                        id=99, notation="K13", colour=common_pb2.COLOUR_BLACK, number=13
                    )
                ],
            )
        ]
        table.sequence += 1
        ended = common_pb2.Event(
            sequence=table.sequence,
            kind=common_pb2.EVENT_KIND_HAND_ENDED,
            hand_number=1,
            seat=0,
            hand_result=result,
            revealed_racks=racks,
            match_progress=progress,
        )
        await table.stream.put(table_pb2.WatchTableResponse(event=ended))
        await settle(pilot, app, lambda: isinstance(app.screen, ScoreSheetScreen))
        text = screen_text(app)
        assert "sen elini bitirdin" in text
        assert "Bot 1 (açılmamış) 13" in text and "K13" not in text
        assert "hiç açmadan +202 = 202" in text
        assert (
            "Maç: sen -101 · Bot 1 202 · Bot 2 202 · Bot 3 202 · 1.000 puanlık maç · 1. el" in text
        )

    run(tmp_path, state, 0, script, language="tr")


def test_a_spectator_sees_no_rack_and_cannot_move(tmp_path: Path) -> None:
    state = dealt(11)

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        view = app.model.view
        assert view is not None and not view.HasField("seat") and len(view.rack) == 0
        assert "no rack is shown to spectators" in screen_text(app)
        await pilot.press("d", "x", "space", "o")
        await pilot.pause(0.1)
        assert table.acts == [] and app.sent == []

    run(tmp_path, state, None, script)


def test_taking_the_okey_back_puts_the_selected_tile_in_its_place(tmp_path: Path) -> None:
    rules = RuleSet.preset("oyna")
    allocate = TileAllocator()
    okey = Okey(allocate.take(parse_face("Y3")))  # the okey is Y4
    wild = allocate.take(parse_face("Y4"))
    okey_run = make_group(
        (*allocate.take_names(["R5"]), wild, *allocate.take_names(["R7"])), okey, rules
    )
    rack = allocate.take_names(["R6", "K2", "B12"])
    others = [allocate.take_names(names) for names in (["K5", "K6"], ["B1", "B2"], ["Y1", "Y2"])]
    seats = (
        Seat(rack=rack, opened_as=OpenedAs.RUNS, opened_on_turn=0, turns_played=1),
        *(Seat(rack=tiles, turns_played=1) for tiles in others),
    )
    state = HandState(
        rules=rules,
        okey=okey,
        dealer=3,
        turn=0,
        phase=Phase.PLAY,
        seats=seats,
        table=(TableMeld(okey_run, 1),),
        stock=allocate.take_names(["K7", "K8"]),
        turn_number=4,
    )
    r6 = rack[0]

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        view = app.model.view
        assert view is not None and view.table[0].meld.tiles[1].tile.wild
        await put_cursor(app, pilot, r6.id)
        await pilot.press("k")  # from the cursor, like l; one meld holds an okey: no question
        await settle(pilot, app, lambda: bool(table.acts))
        assert table.acts == [[moves.take_okey(0, [r6.id])]]
        await settle(
            pilot,
            app,
            lambda: (
                app.model.view is not None
                and any(item.tile.id == wild.id for item in app.model.view.rack)
            ),
        )
        after = app.model.view
        assert after is not None and [t.tile.id for t in after.table[0].meld.tiles][1] == r6.id
        assert "★Y4" in screen_text(app)  # the okey is in the rack now, marked

    run(tmp_path, state, 0, script)


def test_a_client_that_cannot_find_a_table_exits_with_status_1_and_says_why() -> None:
    async def main() -> tuple[int | None, str]:
        async def connect(progress: Callable[[str], None]) -> RulesTable:
            progress("…")
            raise TimeoutError("no table")

        app = OkeyApp(connect, Strings("tr"))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause(0.2)
        return app.return_code, app.failure

    code, said = asyncio.run(main())
    assert code == 1
    assert said == Strings("tr")("no_table")


def test_the_readme_screenshot_is_drawn_from_a_real_position(tmp_path: Path) -> None:
    """docs/terminal-client.svg comes from here: ``make screenshot`` runs this test with
    OKEY_SCREENSHOT set to the file to write (else it is written to a temporary one)."""
    import os
    from datetime import UTC, datetime, timedelta

    base, _ = laid_off_position()
    state, rack = with_rack(
        base,
        ["B3", "B4", "B5", "R8", "K2", "K3", "Y4", "Y9", "Y11", "B12", "FJ", "R1", "K12"],
    )
    import dataclasses

    table_melds = (base.table[0], TableMeld(base.table[1].meld, 2))
    state = dataclasses.replace(state, table=table_melds)
    out = Path(os.environ.get("OKEY_SCREENSHOT") or tmp_path / "terminal-client.svg")

    async def script(app: OkeyApp, pilot: Any, table: RulesTable) -> None:
        deadline = datetime.now(UTC) + timedelta(seconds=38)
        # What the log shows: the others' draws, as the stream tells them.
        for seat in (1, 2, 3):
            table.sequence += 1
            event = common_pb2.Event(
                sequence=table.sequence, kind=common_pb2.EVENT_KIND_DREW, seat=seat
            )
            await table.stream.put(table_pb2.WatchTableResponse(event=event))
        await settle(pilot, app, lambda: not app.model.stale and len(app.model.log) >= 3)
        app.model.deadline = deadline  # the turn's timer, as a table's view would set it
        for tile in rack[:3]:
            await put_cursor(app, pilot, tile.id)
            await pilot.press("space")
        await settle(pilot, app, lambda: "melds worth 12" in app.selection_text.plain)
        await pilot.pause(0.6)  # a tick of the timer
        app.save_screenshot(filename=out.name, path=str(out.parent))
        svg = out.read_text(encoding="utf-8")
        for seen in (
            "Your&#160;turn",
            "to&#160;1,000",
            "melds&#160;worth&#160;12",
        ):
            assert seen in svg, seen
        assert re.search(r">\d+&#160;s<", svg)  # the turn's timer

    run(tmp_path, state, 0, script)
