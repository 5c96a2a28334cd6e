// The table screen, one screen high whatever happens (375x812 included): the state line (whose
// turn, the timer, a staked table's stake and pot, the log, sound and Leave), the felt (four
// seats, their discards, the indicator, okey and stock), the melds (a box that scrolls), the
// two-row rack and its buttons; messages as toasts over it, the log as a drawer; the reveal and
// the result (with the payout) over it. Redrawn whole on each change (a table is a few hundred
// elements), keeping the focused control; never during a drag.
import { Phase, TableVisibility, type SeatView } from "./gen/okey/v1/common_pb.js";
import { payoutLine, stakeLine } from "./chips.js";
import { controlsView } from "./controls.js";
import { h } from "./dom.js";
import { bindKeys } from "./keys.js";
import { seatName } from "./events.js";
import { Game } from "./game.js";
import { t } from "./i18n.js";
import { meldsView } from "./melds.js";
import { rackView, type DragState } from "./rackView.js";
import { resultView, revealFromEvent, revealFromView, revealView } from "./reveal.js";
import { feltView } from "./seats.js";
import { setSound, soundOn } from "./sounds.js";
import { tileName } from "./tiles.js";

const PHASES: Record<number, string> = {
  [Phase.FIRST]: "phase_first",
  [Phase.DRAW]: "phase_draw",
  [Phase.PLAY]: "phase_play",
  [Phase.ENDED]: "phase_ended",
};

export function mountTable(root: HTMLElement, tableId: string, seat: number | undefined, onLeave: () => void): Game {
  const drag: DragState = { dragging: false };
  let queued = false;
  const render = () => {
    if (drag.dragging) return;
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      if (game.stopped) return; // left: the root is the lobby's now
      draw(root, game, drag, render, onLeave);
    });
  };
  const game = new Game(tableId, seat, render);
  const timer = window.setInterval(() => {
    updateTimer(root, game);
    game.tick();
  }, 500);
  const unbind = bindKeys(game);
  void game.start().finally(() => {
    window.clearInterval(timer);
    unbind();
  });
  render();
  return game;
}

/** A phone's rack is two rows of 12, a wider screen's two rows of 16. */
const NARROW = window.matchMedia("(max-width: 799px)");
/** A touch screen: the hints say "tap", not "click", and name no keys. */
const TOUCH = window.matchMedia("(pointer: coarse)");

function draw(root: HTMLElement, game: Game, drag: DragState, rerender: () => void, onLeave: () => void): void {
  const focused = (document.activeElement as HTMLElement | null)?.dataset?.focusKey;
  const state = game.state;
  const view = state.view;
  game.rack.rowLength = NARROW.matches ? 12 : 16;
  const screen = h("div", {
    class: `table-screen${game.spectator ? " spectating" : ""}`,
    "data-table-id": state.tableId,
    "data-seat": state.seat ?? "",
    "data-phase": view ? Phase[view.phase] : "",
    "data-my-turn": String(game.myTurn),
    "data-ready": String(!!view && !state.busy && (game.spectator || state.hintsVersion === view.stateVersion || view.phase === Phase.ENDED)),
    "data-state-version": view ? String(view.stateVersion) : "",
    "data-hand": view ? view.handNumber : "",
    // What the hints allow now (for a person the buttons and marks say it; for the tests, this).
    "data-can-open": String(!!state.hints?.toMove && !!state.hints.opening?.canOpenNow),
    "data-lay-offs": state.hints?.toMove ? state.hints.layOffs.length : 0,
    "data-stake": state.table ? String(state.table.stake) : "",
    "data-pot": state.table ? String(state.table.pot) : "",
  });
  const leave = () => game.leave(onLeave);
  const reveal = state.reveal ? revealFromEvent(state.reveal) : view && view.phase === Phase.ENDED ? revealFromView(view) : undefined;
  if (!view) {
    screen.append(
      stateLine(game, rerender, leave, undefined, false),
      h("p", { class: "waiting", role: "status" }, t("waiting_for_deal")),
    );
  } else {
    screen.append(stateLine(game, rerender, leave, view, !!reveal && !state.showReveal && !state.result), feltView(game, view), meldsView(game, view));
  }
  if (view && !game.spectator && view.rack.length) {
    screen.append(rackView(game, drag, rerender));
    const selected = state.selected.map((id) => tileName(game.tile(id))).join(" ");
    const groups = state.groups.map((g) => g.map((id) => tileName(game.tile(id))).join(" ")).join(" | ");
    screen.append(
      h(
        "p",
        { class: "selection", "aria-live": "polite" },
        !selected && !groups
          ? t(TOUCH.matches ? "selection_none_touch" : "selection_none")
          : [groups && t("groups", { groups }), selected && t("selected", { tiles: selected })].filter(Boolean).join(" · "),
        state.worth ? h("span", { class: "worth" }, ` — ${state.worth}`) : "",
      ),
    );
    const bar = controlsView(game, rerender);
    if (state.choices?.length) {
      // Over the buttons, not above them: nothing moves.
      const list = h("div", { class: "choices", role: "group", "aria-label": t("lay_off") });
      for (const choice of state.choices) list.append(h("button", { type: "button", class: "choice", onclick: () => game.choose(choice) }, choice.label));
      list.append(h("button", { type: "button", class: "choice cancel", onclick: () => { state.choices = undefined; rerender(); } }, t("cancel")));
      bar.append(list);
    }
    screen.append(bar);
  } else if (view && game.spectator) {
    screen.append(h("p", { class: "spectator" }, t("spectator_rack")));
  }
  // The toasts: over the table, never pushing it (a tap closes one).
  const toasts = h("div", { class: "toasts" });
  if (state.reconnecting) toasts.append(h("p", { class: "banner", role: "status" }, t("reconnecting")));
  if (state.message) {
    toasts.append(
      h(
        "p",
        {
          class: `message toast${state.message.error ? " error" : ""}${state.message.reason === "TURN_TIMED_OUT" ? " timed-out" : ""}`,
          role: "alert",
          "data-reason": state.message.reason ?? "",
          onclick: () => game.dismissToast(),
        },
        state.message.text,
      ),
    );
  }
  screen.append(toasts);
  // The hand's log: a drawer, in the page whether open or not.
  const log = h("ol", { class: "log", "aria-label": t("log") });
  for (const line of state.log) if (line.text) log.append(h("li", { "data-sequence": String(line.sequence) }, line.text));
  if (!log.childElementCount) log.append(h("li", { class: "empty" }, t("log_empty")));
  screen.append(
    h(
      "aside",
      { class: "log-drawer", hidden: !state.showLog, "aria-label": t("log") },
      h("h2", {}, t("log")),
      log,
      h("button", { type: "button", "data-focus-key": "log-close", onclick: () => { state.showLog = false; rerender(); } }, t("close")),
    ),
  );
  if ((state.showReveal && reveal) || state.result) {
    const overlay = h("div", { class: "overlay", role: "dialog", "aria-modal": "false", "aria-label": state.result ? t("result_title") : t("reveal_title", { number: reveal?.handNumber ?? "" }) });
    if (reveal) overlay.append(revealView(reveal, view, state.seat));
    if (state.result) {
      overlay.append(resultView(state.result, state.sheet, view));
      overlay.append(payoutLine(state.payout));
      if (game.spectator) {
        overlay.append(h("button", { type: "button", class: "primary", "data-focus-key": "lobby", onclick: () => { game.stop(); onLeave(); } }, t("back_to_lobby")));
      } else {
        overlay.append(h("button", { type: "button", class: "primary", "data-focus-key": "new-match", onclick: () => { game.stop(); onLeave(); } }, t("new_match")));
      }
    } else {
      if (state.revealClosesAt !== undefined && view) {
        const seconds = Math.max(0, Math.ceil((state.revealClosesAt - Date.now()) / 1000));
        overlay.append(h("p", { class: "closing", role: "timer", "data-closes-at": String(state.revealClosesAt) }, t("next_hand_closing", { number: view.handNumber, seconds })));
      }
      overlay.append(h("button", { type: "button", class: "primary", "data-focus-key": "continue", onclick: () => { state.showReveal = false; state.revealClosesAt = undefined; rerender(); } }, t("continue")));
    }
    screen.append(overlay);
  }
  if (state.confirm) {
    const confirm = state.confirm;
    screen.append(
      h(
        "div",
        { class: "overlay confirm", role: "alertdialog", "aria-modal": "true", "aria-label": confirm.text },
        h("p", {}, confirm.text),
        h("button", { type: "button", "data-focus-key": "confirm-no", onclick: () => game.confirm(false) }, confirm.no),
        h("button", { type: "button", class: "danger", "data-focus-key": "confirm-yes", onclick: () => game.confirm(true) }, confirm.yes),
      ),
    );
  }
  root.replaceChildren(screen);
  updateTimer(screen, game);
  const target = focused ? root.querySelector<HTMLElement>(`[data-focus-key="${focused}"]`) : null;
  // A question takes the focus on its safe answer ("Keep it", "Stay").
  if (state.confirm && !focused?.startsWith("confirm-")) root.querySelector<HTMLElement>('[data-focus-key="confirm-no"]')?.focus();
  else if (target && !(target as HTMLButtonElement).disabled) target.focus();
}

/** Whose turn and the timer, a staked table's stake and pot; the log, the sound switch, the
 * last hand's scores, the spectator link (public tables) and Leave. */
function stateLine(game: Game, rerender: () => void, leave: () => void, view: SeatView | undefined, lastHand: boolean): HTMLElement {
  const state = game.state;
  const line = h("div", { class: "state-line" });
  if (view) {
    const phase = t(PHASES[view.phase] ?? "phase_draw");
    const whose = game.myTurn ? t("turn_you", { phase }) : view.phase === Phase.ENDED ? t("phase_ended") : t("turn_other", { name: seatName(view, view.turn), phase });
    line.append(
      h(
        "p",
        { class: "status", role: "status" },
        game.spectator ? h("span", { class: "watching" }, t("watching", { table: state.tableId })) : "",
        h("span", { class: `whose${game.myTurn ? " mine" : ""}`, id: "whose" }, whose),
        h("span", { class: "timer", role: "timer", "aria-label": t("timer"), "data-deadline": deadline(view.turnDeadline) }),
        stakeLine(state.table),
      ),
    );
  }
  const sound = soundOn();
  const tools = h(
    "div",
    { class: "tools" },
    lastHand ? h("button", { type: "button", class: "tool", "data-focus-key": "last-hand", onclick: () => { state.showReveal = true; rerender(); } }, t("last_hand")) : "",
    h("button", { type: "button", class: "tool", "data-focus-key": "log", "aria-expanded": String(state.showLog), onclick: () => { state.showLog = !state.showLog; rerender(); } }, t("log_button")),
    h(
      "button",
      { type: "button", class: "tool sound", "data-focus-key": "sound", "aria-pressed": String(sound), "aria-label": sound ? t("sound_on") : t("sound_off"), onclick: () => { setSound(!soundOn()); rerender(); } },
      h("span", { class: sound ? "" : "muted" }, "♪"),
    ),
    !game.spectator && state.table?.visibility === TableVisibility.PUBLIC
      ? h("a", { class: "watch-link", href: `/watch/${encodeURIComponent(state.tableId)}`, target: "_blank", rel: "noopener" }, t("watch_link"))
      : "",
    h("button", { type: "button", class: "tool leave", "data-focus-key": "leave", onclick: leave }, game.spectator ? t("lobby_link") : t("leave")),
  );
  line.append(tools);
  return line;
}

function deadline(stamp: { seconds: bigint; nanos: number } | undefined): string {
  if (!stamp || !stamp.seconds) return "";
  return String(Number(stamp.seconds) * 1000 + Math.floor(stamp.nanos / 1e6));
}

/** The longest time left seen for each deadline: a turn's whole length, for the ring. */
const turnLengths = new Map<number, number>();

function updateTimer(root: HTMLElement, game: Game): void {
  const closing = root.querySelector<HTMLElement>(".overlay .closing");
  if (closing && game.state.view) {
    const seconds = Math.max(0, Math.ceil((Number(closing.dataset.closesAt) - Date.now()) / 1000));
    closing.textContent = t("next_hand_closing", { number: game.state.view.handNumber, seconds });
  }
  const timer = root.querySelector<HTMLElement>(".timer");
  const ring = root.querySelector<HTMLElement>(".seat.turn .ring");
  if (!timer) return;
  const until = Number(timer.dataset.deadline || 0);
  const view = game.state.view;
  if (!until || !view || view.phase === Phase.ENDED) {
    timer.textContent = "";
    ring?.style.removeProperty("--left");
    return;
  }
  const left = Math.max(0, until - Date.now());
  const whole = Math.max(turnLengths.get(until) ?? 0, left, (view.rules?.turnSeconds ?? 0) * 1000);
  if (turnLengths.size > 50) turnLengths.clear();
  turnLengths.set(until, whole);
  ring?.style.setProperty("--left", String(whole ? left / whole : 0));
  ring?.classList.toggle("low", left <= 10_000);
  const seconds = Math.ceil(left / 1000);
  timer.textContent =
    seconds >= 60 ? `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}` : t("seconds_left", { seconds });
  timer.classList.toggle("low", seconds <= 10);
}
