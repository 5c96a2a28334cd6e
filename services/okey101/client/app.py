"""The terminal client: a Textual app that plays (or watches) one table through the public API.

The screen, top to bottom: the four seats (name, tiles held, opening, penalties, last discard,
match total; the seat to move highlighted), the state line (whose turn, the phase, seconds left
to SeatView.turn_deadline, the stock, the indicator and the okey, the tile that may be taken),
the melds on the table with their owners beside a log of what happened, the player's rack in two
rows (okeys ★, false jokers ◆, playable tiles underlined, +101 discards marked !), what the
selection is worth (from RulesService), and the last message (a rejection shows the server's
sentence). Modal screens ask before a +101 discard, pick a meld for a lay-off or an okey taken
back, show the score sheet after every hand and the result at the end of the match (with a
staked match's payout), and the wallet's history (``w``). The title carries a staked table's
stake and pot (GetTable) and the player's balance (GetWallet).

The app talks to its table through a ``TablePort`` (``session.TableSession`` in real use), fed by
a resumable WatchTable stream: the stream's views and Act's answers are shown as they come, and
an event the shown view does not include yet has a fresh view fetched (GetSeatView).

One idea: the app and its actions at one table. What it draws lives beside it (widgets, render,
the title, the state line and the melds in table_lines.py, the reveal in reveal.py, the
selection's worth in worth.py, the screens), which key plays which move is keys.py's table, and
what a key sends is planned in moves.py and layoff.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Final

import grpc
import grpc.aio
from okey.v1 import common_pb2, lobby_pb2
from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, RichLog, Static

from okey101.client import chips, layoff, moves
from okey101.client.errors import RETRYABLE, Rejection
from okey101.client.i18n import Strings
from okey101.client.keys import MOVE_ACTIONS, MOVES
from okey101.client.memory import Kept, TableMemory
from okey101.client.model import SheetRow, TableModel, rows_from_results, sheet_rows
from okey101.client.port import Connect, TablePort
from okey101.client.render import face_name, tiles_plain
from okey101.client.resume import Reconnecting
from okey101.client.reveal import reveal_lines
from okey101.client.screens import ConfirmScreen, PickMeldScreen, ScoreSheetScreen, WalletScreen
from okey101.client.session import QuickMatchCancelled
from okey101.client.shown import shown
from okey101.client.table_lines import (
    choice_labels,
    plan_labels,
    state_text,
    table_melds,
    title_text,
)
from okey101.client.widgets import RackView, SeatBox
from okey101.client.worth import opening_line, verdict_line

# --------------------------------------------------------------------------------------------
# The app


class OkeyApp(App[int]):
    """Plays (``spectator=False``) or watches one table."""

    ENABLE_COMMAND_PALETTE = False

    CSS = """
    Screen { layout: vertical; }
    #title { height: 1; background: $primary; color: $text; padding: 0 1; }
    #seats { height: 7; }
    #state { height: 1; padding: 0 1; background: $boost; }
    #middle { height: 1fr; min-height: 5; }
    #melds-box { width: 3fr; border: round $panel; }
    #log { width: 2fr; border: round $panel; }
    #legend { height: 1; padding: 0 1; color: $text-muted; }
    #selection { height: auto; max-height: 4; padding: 0 1; }
    #message { height: auto; max-height: 2; padding: 0 1; color: $warning; }
    """

    def __init__(
        self,
        connect: Connect,
        strings: Strings,
        *,
        spectator: bool = False,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        check_delay: float = 0.15,
        memory: TableMemory | None = None,
    ) -> None:
        super().__init__()
        #: Where the log and the rack's arrangement are kept across a restart (None: nowhere).
        self.memory = memory
        self._kept = Kept()
        self.connect = connect
        self.strings = strings
        self.spectator = spectator
        self.clock = clock
        self.check_delay = check_delay
        self.port: TablePort | None = None
        self.model = TableModel(strings, None)
        #: The table as GetTable last said (a staked table's stake and pot) and the player's
        #: wallet (GetWallet): the title shows them.
        self.table: common_pb2.Table | None = None
        self.wallet: lobby_pb2.GetWalletResponse | None = None
        #: A staked match's end: the result's line about the pot.
        self.payout: Text | None = None
        self.match_id = ""
        self.message = ""
        self.selection_text: Text = Text()
        self._refreshing = False
        self._sort_by_number = False
        #: Hands whose sheet was shown (0: the match's result).
        self._sheet_shown: set[int] = set()
        self._busy = False
        #: Every Act sent, in order (the tests read what a key press sent).
        self.sent: list[list[common_pb2.Action]] = []
        #: Why the client gave up, if it did (it then exits with status 1).
        self.failure = ""
        #: Every time the stream dropped and was opened again, in order.
        self.reconnects: list[Reconnecting] = []
        self.title = strings("title")
        # The screen's parts, kept here so that updates never depend on which screen is on top
        # (a sheet, a question) or on the app still being mounted (a timer firing at exit).
        self.title_bar = Static(strings("logging_in"), id="title")
        self.seat_boxes = [SeatBox(id=f"seat-{seat}") for seat in range(4)]
        self.state_line = Static("", id="state")
        self.melds_view = Static("", id="melds")
        self.log_view = RichLog(id="log", wrap=True, markup=False, min_width=20)
        self.legend = Static("", id="legend")
        self.rack_view = RackView(id="rack")
        self.rack_view.language = strings.language
        self.selection_line = Static("", id="selection")
        self.message_line = Static("", id="message")
        #: Where tiles may be laid off (the seam for the table's hints, see ``layoff``).
        self.lay_off_hints: layoff.LayOffHints = layoff.local_plans
        #: The game keys and what each does (a popup passes them here: ``play_key``).
        self._game_keys: dict[str, tuple[str, Callable[[], None]]] = {}
        self._bind_keys()

    def _bind_keys(self) -> None:
        s = self.strings
        self.bind("q", "quit_client", description=s("key_quit"))
        self.bind("p", "sheet", description=s("key_sheet"))
        self.bind("w", "wallet", description=s("key_wallet"))
        if self.spectator:
            return
        for move in MOVES:
            self.bind(
                ",".join(move.keys),
                move.binding,
                description=move.description(s),
                show=move.in_footer,
                key_display=move.key_display(s),
            )
            method: Callable[..., None] = getattr(self, f"action_{move.action}")
            run = method if move.step is None else functools.partial(method, move.step)
            for key in move.keys:
                self._game_keys[key] = (move.action, run)

    def is_game_key(self, key: str) -> bool:
        """Whether ``key`` is a move at the table (a popup closes on one and passes it on)."""
        return key in self._game_keys

    def play_key(self, key: str) -> bool:
        """Play a game key as if no popup were open (a popup just closed on it)."""
        entry = self._game_keys.get(key)
        if entry is None or self.spectator:
            return False
        name, run = entry
        if self.check_action(name, ()) is False and not isinstance(self.screen, ModalScreen):
            return False
        if not self._allowed(name):
            return False
        run()
        return True

    def compose(self) -> ComposeResult:
        yield self.title_bar
        with Horizontal(id="seats"):
            yield from self.seat_boxes
        yield self.state_line
        with Horizontal(id="middle"):
            with VerticalScroll(id="melds-box"):
                yield self.melds_view
            yield self.log_view
        yield self.legend
        yield self.rack_view
        yield self.selection_line
        yield self.message_line
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.rack_view.note = self.strings("logging_in")
        self.set_interval(0.5, self._tick)
        self._follow()

    async def on_unmount(self) -> None:
        self._keep()
        if self.port is not None:
            await self.port.close()

    def _keep(self) -> None:
        """Keep the log and the rack's arrangement for coming back (``memory``)."""
        view = self.model.view
        if self.memory is None or self.port is None or self.spectator or view is None:
            return
        self._kept = Kept(list(self.model.log), view.hand_id, self._rack().arrangement())
        self.memory.save(self.port.table_id, self._kept)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MOVE_ACTIONS and (self.spectator or isinstance(self.screen, ModalScreen)):
            return False  # a spectator has no moves; an open popup passes them on (play_key)
        return self._allowed(action)

    def _allowed(self, action: str) -> bool:
        """Whether the table's rules have the move at all (giving back, showing the indicator)."""
        view = self.model.view
        if action == "give_back":
            policy = common_pb2.LEFT_DISCARD_POLICY_GIVE_BACK_FOR_PENALTY
            return view is not None and view.rules.left_discard == policy
        if action == "show_indicator":
            return view is not None and view.rules.indicator_show_points != 0
        return True

    # Following the table -----------------------------------------------------------------------

    @work(group="follow", exit_on_error=False)
    async def _follow(self) -> None:
        s = self.strings
        try:
            port = await self.connect(self._progress)
        except grpc.aio.AioRpcError as error:
            self.fail(s("cannot_start", reason=Rejection.of(error).message))
            return
        except QuickMatchCancelled:
            self.fail(s("queue_cancelled"))
            return
        except TimeoutError:
            self.fail(s("no_table"))
            return
        except Exception as error:  # anything else: say it and leave, rather than hang
            self.fail(s("cannot_start", reason=str(error) or type(error).__name__))
            return
        self.port = port
        self.model.seat = port.seat
        self._load_chips()
        if self.memory is not None and not self.spectator:
            # Back at a table: its log as it was, and the rack as it was arranged.
            self._kept = self.memory.load(port.table_id)
            for line in self._kept.log:
                self.model.log.append(line)
                self.log_view.write(line)
        self._progress(self.strings("waiting_for_deal"))
        reconnecting = False

        def on_reconnect(state: Reconnecting) -> None:
            nonlocal reconnecting
            self.reconnects.append(state)
            if not state.worth_showing:
                return  # a connection's age, a deploy: resumed at once, nothing to say
            reconnecting = True
            reason = state.rejection.message or state.rejection.code.name
            self.set_message(self.strings("connection_lost", reason=reason))

        try:
            async for item in port.watch(on_reconnect=on_reconnect):
                if reconnecting:
                    reconnecting = False
                    self.set_message(self.strings("reconnected", sequence=self.model.last_sequence))
                if item.HasField("view"):
                    self.show_view(item.view)
                elif item.HasField("event"):
                    self.on_table_event(item.event)
        except grpc.aio.AioRpcError as error:
            # Not a dropped connection (those are resumed): the table cannot be followed.
            self.fail(self.strings("rejected", message=Rejection.of(error).message))
            return
        # The server ends the stream (OK) after the match's last event or the table's closing.
        over = self.model.match_result is not None
        self.set_message(self.strings("ev_match_ended" if over else "table_closed"))

    def fail(self, reason: str) -> None:
        """Leave with exit status 1, saying why (printed once the screen is gone)."""
        self.failure = shown(reason)
        self.exit(return_code=1, message=Text(self.failure))

    def _progress(self, text: str) -> None:
        self.title_bar.update(Text(f"{self.strings('title')} · {text}"))
        rack = self.rack_view
        rack.note = text
        rack.refresh()

    def show_view(self, view: common_pb2.SeatView) -> None:
        """Show ``view`` if it is the newest seen."""
        previous = self.model.view
        if not self.model.on_view(view):
            return
        rack = self.rack_view
        rack.view = view
        rack.rack.sync(moves.rack_ids(view))
        if previous is None and self._kept.arrangement and self._kept.hand_id == view.hand_id:
            # Back in the same hand: the rack as the player had arranged it.
            rack.rack.restore(self._kept.arrangement, moves.rack_ids(view))
        elif previous is None or previous.hand_id != view.hand_id:
            # A new rack (the first view, a new deal): nothing selected, sorted by colour.
            rack.rack.clear()
            rack.rack.sort()
            rack.rack.sort_wild_last(item.tile.id for item in view.rack if item.tile.wild)
            rack.rack.cursor = 0
        self._render_all()
        self._schedule_check()

    def on_table_event(self, event: common_pb2.Event) -> None:
        outcome = self.model.on_event(event)
        if event.kind in _POT_MOVES:
            self._load_chips()
        log = self.log_view
        if self.model.log and self.model.log[-1] and _is_new_line(event):
            log.write(self.model.log[-1])
        if outcome.stale:
            self._request_refresh()
        if outcome.hand_ended:
            self._show_sheet(event.hand_number)
        if outcome.match_ended:
            self._show_sheet(event.hand_number, final=True)
            self._pay_out(event.match_result)
        self._render_state()

    def _request_refresh(self, *, force: bool = False) -> None:
        if not self._refreshing:
            self._refreshing = True
            self._refresh(force)

    @work(group="refresh", exit_on_error=False)
    async def _refresh(self, force: bool) -> None:
        """Fetch views until the one shown includes every event seen (at least one when
        ``force``: a move was refused as stale before the stream said what changed)."""
        try:
            while self.port is not None and (force or self.model.stale):
                force = False
                try:
                    view = await self.port.seat_view(self.model.last_sequence)
                except grpc.aio.AioRpcError as error:
                    self.set_message(
                        self.strings("unavailable", reason=Rejection.of(error).message)
                    )
                    await asyncio.sleep(1.0)
                    continue
                if view.as_of_sequence < self.model.last_sequence:
                    # The table's read lags its stream by a moment: ask again shortly.
                    self.show_view(view)
                    await asyncio.sleep(0.05)
                    continue
                self.show_view(view)
        finally:
            self._refreshing = False

    def _tick(self) -> None:
        self._render_state()

    # Rendering --------------------------------------------------------------------------------

    def _render_all(self) -> None:
        view = self.model.view
        if view is None:
            return
        s = self.strings
        self._render_title()
        for seat in range(4):
            self.seat_boxes[seat].show(view, self.model, seat)
        self.melds_view.update(table_melds(view, self.model))
        legend = s("legend", face=face_name(view.okey, s.language))
        self.legend.update(Text(legend))
        rack = self.rack_view
        if not view.HasField("seat"):
            rack.note = s("spectator_rack")
        rack.refresh()
        self._render_selection()
        self._render_state()

    def _render_title(self) -> None:
        view = self.model.view
        if view is None:
            return
        table_id = self.port.table_id if self.port is not None else view.table_id
        title = title_text(view, self.strings, table_id, spectator=self.spectator)
        suffix = chips.title_suffix(self.table, self.wallet, self.strings)
        if suffix:
            title.append(f" · {suffix}")
        self.title_bar.update(title)

    def _render_state(self) -> None:
        view = self.model.view
        if view is None:
            return
        self.state_line.update(state_text(view, self.model, self.clock()))

    def _render_selection(self) -> None:
        self.selection_line.update(self.selection_text)

    def set_message(self, text: str) -> None:
        self.message = shown(text)
        self.message_line.update(Text(self.message))

    # The selection's worth, from RulesService ------------------------------------------------

    def _schedule_check(self) -> None:
        if self.spectator:
            return
        self._check_selection()

    @work(group="check", exclusive=True, exit_on_error=False)
    async def _check_selection(self) -> None:
        view = self.model.view
        rack = self.rack_view.rack
        groups = rack.all_groups()
        s = self.strings
        if view is None or self.port is None or not view.HasField("seat"):
            return
        if not groups:
            self.selection_text = Text(s("selection_none"), style="dim")
            self._render_selection()
            return
        await asyncio.sleep(self.check_delay)  # let a burst of key presses settle
        messages = [moves.tile_group(group) for group in groups]
        by_id = {item.tile.id: item.tile for item in view.rack}
        try:
            if moves.has_opened(view):
                answer = await self.port.validate_melds(view, messages)
                verdicts = list(answer.verdicts)
                total_line = Text(
                    s("melds_total", value=sum(v.meld.value for v in verdicts if v.valid))
                )
            else:
                opening = await self.port.validate_opening(view, messages)
                verdicts = list(opening.verdicts)
                total_line = opening_line(opening, s)
        except grpc.aio.AioRpcError as error:
            self.selection_text = Text(shown(Rejection.of(error).message), style="red")
            self._render_selection()
            return
        out = Text()
        for group, verdict in zip(groups, verdicts, strict=False):
            out.append_text(verdict_line(verdict, [by_id[t] for t in group if t in by_id], s))
            out.append("  ")
        out.append_text(total_line)
        self.selection_text = out
        self._render_selection()

    # Moves --------------------------------------------------------------------------------------

    def _rack(self) -> moves.Rack:
        return self.rack_view.rack

    def _changed_selection(self) -> None:
        self.rack_view.refresh()
        self._schedule_check()

    def action_cursor(self, step: int) -> None:
        self._rack().move(step)
        self.rack_view.refresh()

    def action_shift(self, step: int) -> None:
        self._rack().shift(step)
        self.rack_view.refresh()

    def action_insert_gap(self) -> None:
        self._rack().insert_gap()
        self.rack_view.refresh()

    def action_remove_gap(self) -> None:
        self._rack().remove_gap()
        self.rack_view.refresh()

    def action_select_tile(self) -> None:
        self._rack().toggle()
        self._changed_selection()

    def action_group(self) -> None:
        self._rack().close_group()
        self._changed_selection()

    def action_clear(self) -> None:
        self._rack().clear()
        self._changed_selection()

    def action_sort(self) -> None:
        view = self.model.view
        rack = self._rack()
        rack.sort(by_number=self._sort_by_number)
        if view is not None:
            rack.sort_wild_last(item.tile.id for item in view.rack if item.tile.wild)
        self._sort_by_number = not self._sort_by_number
        self.rack_view.refresh()

    def action_draw(self) -> None:
        self._send([moves.draw()])

    def action_take(self) -> None:
        self._send([moves.take()])

    def action_give_back(self) -> None:
        self._send([moves.give_back()])

    def action_show_indicator(self) -> None:
        self._send([moves.show_indicator()])

    def action_open(self) -> None:
        groups = self._rack().all_groups()
        if not groups:
            self.set_message(self.strings("need_groups"))
            return
        self._send([moves.open_with(groups)], clear=True)

    def action_meld(self) -> None:
        groups = self._rack().all_groups()
        if not groups:
            self.set_message(self.strings("need_groups"))
            return
        self._send([moves.meld(groups)], clear=True)

    def action_discard(self) -> None:
        view = self.model.view
        tile_id = self._rack().single()
        if view is None:
            return
        if tile_id is None:
            self.set_message(self.strings("need_one_tile"))
            return
        action = moves.discard(tile_id)
        if moves.is_costly_discard(view, tile_id):
            item = moves.rack_tile(view, tile_id)
            label = tiles_plain([item.tile], self.strings.language) if item else str(tile_id)
            question = self.strings("confirm_costly", tile=label)

            def answered(yes: bool | None) -> None:
                if yes:
                    self._send([action], clear=True)

            self.push_screen(
                ConfirmScreen(question, self.strings("confirm_yes"), self.strings("confirm_no")),
                answered,
            )
            return
        self._send([action], clear=True)

    def action_lay_off(self) -> None:
        """Lay the selected tiles (or the cursor's) off: at once where they fit one way, else
        a list of only the melds they fit; refused at once, with the rules' sentence, when the
        seat may not lay off."""
        view = self.model.view
        if view is None:
            return
        s = self.strings
        refused = layoff.refusal(view, s.language)
        if refused is not None:
            self.set_message(s("rejected", message=refused))
            return
        tiles = [tile for group in self._rack().all_groups() for tile in group]
        if not tiles and (cursor := self._rack().at_cursor) is not None:
            tiles = [cursor]
        if not tiles:
            self.set_message(s("need_one_tile"))
            return
        if not view.table:
            self.set_message(s("no_melds"))
            return
        plans = self.lay_off_hints(view, tiles)
        if not plans:
            by_id = {item.tile.id: item.tile for item in view.rack}
            named = tiles_plain([by_id[t] for t in tiles if t in by_id], s.language)
            self.set_message(s("no_fit", tiles=named))
            return
        if len(plans) == 1:
            self._send(layoff.actions(plans[0]), clear=True)
            return

        def chosen(plan: layoff.Plan | None) -> None:
            if plan is not None:
                self._send(layoff.actions(plan), clear=True)

        labelled = plan_labels(view, plans, self.model)
        self.push_screen(PickMeldScreen(s("pick_meld"), labelled), chosen)

    def action_take_okey(self) -> None:
        view = self.model.view
        if view is None:
            return
        tiles = [tile for group in self._rack().all_groups() for tile in group]
        if not tiles and (cursor := self._rack().at_cursor) is not None:
            tiles = [cursor]  # like l: the tile under the cursor
        if not tiles:
            self.set_message(self.strings("need_one_tile"))
            return
        holding = moves.melds_with_okey(view)
        if not holding:
            self.set_message(self.strings("need_okey_meld"))
            return

        def chosen(choice: moves.MeldChoice | None) -> None:
            if choice is not None:
                self._send([moves.take_okey(choice.meld_index, tiles)], clear=True)

        if len(holding) == 1:
            chosen(moves.MeldChoice(holding[0].index))
            return
        self._pick_meld(view, [moves.MeldChoice(item.index) for item in holding], chosen)

    def _pick_meld(
        self,
        view: common_pb2.SeatView,
        choices: Sequence[moves.MeldChoice],
        chosen: Callable[[moves.MeldChoice | None], None],
    ) -> None:
        labelled = choice_labels(view, choices, self.model)
        self.push_screen(PickMeldScreen(self.strings("pick_meld"), labelled), chosen)

    def action_best(self) -> None:
        self._best()

    @work(group="best", exclusive=True, exit_on_error=False)
    async def _best(self) -> None:
        view = self.model.view
        if view is None or self.port is None or not view.HasField("seat"):
            return
        s = self.strings
        try:
            best = await self.port.best_opening(view)
        except grpc.aio.AioRpcError as error:
            self.set_message(s("rejected", message=Rejection.of(error).message))
            return
        if best.HasField("whole_hand") and best.whole_hand.melds:
            chosen, line = (
                best.whole_hand,
                s("best_opening", value=best.whole_hand.value, count=len(best.whole_hand.melds)),
            )
        elif best.can_open_with_runs:
            chosen, line = (
                best.runs_and_sets,
                s(
                    "best_opening",
                    value=best.runs_and_sets.value,
                    count=len(best.runs_and_sets.melds),
                ),
            )
        elif best.can_open_with_pairs:
            chosen, line = best.pairs, s("best_pairs", count=best.pairs.pair_count)
        else:
            self.set_message(
                s("no_opening", value=best.runs_and_sets.value, pairs=best.pairs.pair_count)
            )
            return
        self._rack().set_groups([[t.tile.id for t in meld.tiles] for meld in chosen.melds])
        self.set_message(line)
        self._changed_selection()

    def _send(self, actions: list[common_pb2.Action], *, clear: bool = False) -> None:
        if self.spectator or self.port is None:
            self.set_message(self.strings("spectator_no_moves"))
            return
        self.sent.append(actions)
        self._act(actions, clear)

    @work(group="act", exit_on_error=False)
    async def _act(self, actions: list[common_pb2.Action], clear: bool) -> None:
        view = self.model.view
        if view is None or self.port is None:
            return
        s = self.strings
        self.set_message(s("sending"))
        try:
            answer = await self.port.act(actions, view.state_version)
        except grpc.aio.AioRpcError as error:
            rejection = Rejection.of(error)
            if rejection.code == grpc.StatusCode.ABORTED:
                self.set_message(s("stale"))
                self._request_refresh(force=True)
            elif rejection.code in RETRYABLE:
                self.set_message(s("unavailable", reason=rejection.message))
            else:
                self.set_message(s("rejected", message=rejection.message))
            return
        self.set_message("")
        if clear:
            self._rack().clear()
        self.show_view(answer.view)

    # Chips --------------------------------------------------------------------------------------

    @work(group="chips", exclusive=True, exit_on_error=False)
    async def _load_chips(self) -> None:
        """The table's stake and pot and the player's balance, for the title: asked at the start
        and whenever the pot moves (a seat taken or left, the match's start, its payout)."""
        port = self.port
        if port is None:
            return
        # Information, not play: the title goes without what cannot be asked.
        with contextlib.suppress(grpc.aio.AioRpcError):
            self.table = await port.get_table()
        with contextlib.suppress(grpc.aio.AioRpcError):
            self.wallet = await port.wallet()
        self._render_title()

    @work(group="payout", exclusive=True, exit_on_error=False)
    async def _pay_out(self, result: common_pb2.MatchResult) -> None:
        """What the seat got from a staked match's pot: its PAYOUT entries for this table in
        the wallet, waited for while the lobby records them; a seat that did not win gets
        none."""
        port = self.port
        if port is None or self.spectator:
            return
        s = self.strings
        with contextlib.suppress(grpc.aio.AioRpcError):
            self.table = await port.get_table()
        stake = self.table.stake if self.table is not None else 0
        if not stake:
            return
        if not chips.is_winner(result, self.model.seat):
            self._show_payout(chips.payout_text("none", s, stake=stake))
        else:
            self._show_payout(chips.payout_text("waiting", s))
            try:
                amount = await chips.payout_of(port.wallet_entries, port.table_id)
            except grpc.aio.AioRpcError:
                amount = None
            if amount is None:
                self._show_payout(chips.payout_text("late", s, stake=stake))
            else:
                self._show_payout(chips.payout_text("paid", s, amount=amount, stake=stake))
        self._load_chips()

    def _show_payout(self, payout: Text) -> None:
        self.payout = payout
        for screen in self.screen_stack:
            if isinstance(screen, ScoreSheetScreen) and screen.final:
                screen.show_payout(payout)

    def action_wallet(self) -> None:
        """The wallet's history, over the table."""
        if self.port is None or isinstance(self.screen, WalletScreen):
            return
        self.push_screen(WalletScreen(self.port.wallet_entries, self.wallet, self.strings))

    # Score sheets -----------------------------------------------------------------------------

    def names(self) -> list[str]:
        return [self.model.name(seat) for seat in range(4)]

    @work(group="sheet", exit_on_error=False)
    async def _show_sheet(self, hand_number: int, *, final: bool = False) -> None:
        """The sheet after a hand, or the match's result, once each. The result wins: a hand's
        sheet that is ready after it (both wait for scoring) is not shown over it."""
        final = final or self.model.match_result is not None
        key = 0 if final else hand_number
        if key in self._sheet_shown:
            return
        self._sheet_shown.add(key)
        screen = await self._sheet_screen(hand_number, final)
        if not final and 0 in self._sheet_shown:
            return
        await self._present(screen)

    @work(group="sheet", exit_on_error=False)
    async def _sheet_worker(self, hand_number: int, final: bool) -> None:
        await self._present(await self._sheet_screen(hand_number, final))

    async def _present(self, screen: ScoreSheetScreen) -> None:
        # A newer sheet replaces one still open.
        if isinstance(self.screen, ScoreSheetScreen):
            self.screen.dismiss(None)
        await self.push_screen(screen)

    async def _sheet_screen(self, hand_number: int, final: bool) -> ScoreSheetScreen:
        s = self.strings
        rows: list[SheetRow] = []
        notes: list[str] = []
        sheet = None
        if self.port is not None:
            if not self.match_id:
                try:
                    self.match_id = (await self.port.get_table()).match_id
                except grpc.aio.AioRpcError:
                    self.match_id = ""
            if self.match_id:
                sheet = await self.port.score_sheet_through(self.match_id, hand_number, ended=final)
        if sheet is not None:
            rows = sheet_rows(sheet, s, self.names(), self.model.seat)
        else:
            rows = rows_from_results(
                self.model.hand_results,
                self.model.totals_before,
                s,
                self.names(),
                self.model.seat,
            )
            notes.append(s("sheet_from_table"))
        # The match's result shows the last hand's reveal too.
        shown = hand_number
        if shown not in self.model.hand_results and final:
            shown = max(self.model.hand_results, default=hand_number)
        reveal = reveal_lines(self.model, self.names(), self.strings, shown)
        title = s("sheet_title", number=hand_number) if hand_number else s("sheet_title_now")
        result = self.model.match_result
        if final and result is not None:
            title = s("result_title")
            winners = [self.model.name(seat.seat) for seat in result.seats if seat.winner]
            notes.insert(0, s("result_winner", names=", ".join(winners)))
            notes.append(s("result_quit"))
        return ScoreSheetScreen(
            title, self.names(), rows, s, notes, reveal, final=final, payout=self.payout
        )

    def action_sheet(self) -> None:
        view = self.model.view
        if view is None:
            return
        number = max(self.model.hand_results, default=0)  # 0: no hand has ended yet
        final = self.model.match_result is not None
        self._sheet_worker(number, final)

    def action_quit_client(self) -> None:
        """Leave; at a live table, only once the player says so (a bot plays the seat until
        they come back)."""
        view = self.model.view
        live = (
            not self.spectator
            and self.port is not None
            and view is not None
            and self.model.match_result is None
        )
        if not live:
            self.exit(0)
            return
        s = self.strings

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit(0)

        question = ConfirmScreen(s("confirm_leave"), s("leave_yes"), s("leave_no"))
        question.leaving = True
        self.push_screen(question, answered)


# --------------------------------------------------------------------------------------------


#: The events after which the table's pot may have moved (the title's stake and pot).
_POT_MOVES: Final = frozenset(
    {
        common_pb2.EVENT_KIND_SEAT_TAKEN,
        common_pb2.EVENT_KIND_SEAT_LEFT,
        common_pb2.EVENT_KIND_MATCH_STARTED,
    }
)


def _is_new_line(event: common_pb2.Event) -> bool:
    return event.kind != common_pb2.EVENT_KIND_TURN_STARTED
