// The table screen: state line and timer (and a staked table's stake and pot), seats, the
// middle, melds, the message, the rack and its buttons, the log; the reveal and the result (with
// the payout) over it. Redrawn whole on each change (a
// table is a few hundred elements), keeping the focused control; never during a drag.
import { Phase } from "./gen/okey/v1/common_pb.js";
import { payoutLine, stakeLine } from "./chips.js";
import { controlsView } from "./controls.js";
import { h } from "./dom.js";
import { bindKeys } from "./keys.js";
import { seatName } from "./events.js";
import { Game } from "./game.js";
import { t } from "./i18n.js";
import { centreView, meldsView } from "./melds.js";
import { rackView, type DragState } from "./rackView.js";
import { resultView, revealFromEvent, revealFromView, revealView } from "./reveal.js";
import { seatsView } from "./seats.js";
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
      draw(root, game, drag, render, onLeave);
    });
  };
  const game = new Game(tableId, seat, render);
  const timer = window.setInterval(() => updateTimer(root, game), 500);
  const unbind = bindKeys(game);
  void game.start().finally(() => {
    window.clearInterval(timer);
    unbind();
  });
  render();
  return game;
}

function draw(root: HTMLElement, game: Game, drag: DragState, rerender: () => void, onLeave: () => void): void {
  const focused = (document.activeElement as HTMLElement | null)?.dataset?.focusKey;
  const state = game.state;
  const view = state.view;
  const screen = h("div", {
    class: "table-screen",
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
  if (state.reconnecting) screen.append(h("p", { class: "banner", role: "status" }, t("reconnecting")));
  if (!view) {
    screen.append(h("p", { class: "waiting", role: "status" }, t("waiting_for_deal")));
  } else {
    const phase = t(PHASES[view.phase] ?? "phase_draw");
    const whose = game.myTurn ? t("turn_you", { phase }) : view.phase === Phase.ENDED ? t("phase_ended") : t("turn_other", { name: seatName(view, view.turn), phase });
    screen.append(
      h(
        "div",
        { class: "state-line", role: "status" },
        game.spectator ? h("span", { class: "watching" }, t("watching", { table: state.tableId })) : "",
        h("span", { class: `whose${game.myTurn ? " mine" : ""}`, id: "whose" }, whose),
        h("span", { class: "timer", role: "timer", "aria-label": t("timer"), "data-deadline": deadline(view.turnDeadline) }),
        stakeLine(state.table),
        game.spectator ? "" : h("a", { class: "watch-link", href: `/watch/${encodeURIComponent(state.tableId)}`, target: "_blank", rel: "noopener" }, t("watch_link")),
      ),
      seatsView(view, state.seat),
      centreView(view),
      meldsView(game, view),
    );
    updateTimer(screen, game);
  }
  if (state.message) {
    screen.append(h("p", { class: `message${state.message.error ? " error" : ""}`, role: "alert", "data-reason": state.message.reason ?? "" }, state.message.text));
  }
  if (view && !game.spectator && view.rack.length) {
    screen.append(rackView(game, drag, rerender));
    const selected = state.selected.map((id) => tileName(game.tile(id))).join(" ");
    const groups = state.groups.map((g) => g.map((id) => tileName(game.tile(id))).join(" ")).join(" | ");
    screen.append(
      h(
        "p",
        { class: "selection", "aria-live": "polite" },
        !selected && !groups ? t("selection_none") : [groups && t("groups", { groups }), selected && t("selected", { tiles: selected })].filter(Boolean).join(" · "),
        state.worth ? h("span", { class: "worth" }, ` — ${state.worth}`) : "",
      ),
    );
    if (state.choices?.length) {
      const list = h("div", { class: "choices", role: "group", "aria-label": t("lay_off") });
      for (const choice of state.choices) list.append(h("button", { type: "button", class: "choice", onclick: () => game.choose(choice) }, choice.label));
      list.append(h("button", { type: "button", class: "choice cancel", onclick: () => { state.choices = undefined; rerender(); } }, t("cancel")));
      screen.append(list);
    }
    screen.append(controlsView(game, rerender));
  } else if (view && game.spectator) {
    screen.append(h("p", { class: "spectator" }, t("spectator_rack")));
  }
  if (state.log.length) {
    const log = h("ol", { class: "log", "aria-label": t("log") });
    for (const line of state.log) log.append(h("li", {}, line));
    screen.append(log);
  }
  const reveal = state.reveal ? revealFromEvent(state.reveal) : view && view.phase === Phase.ENDED ? revealFromView(view) : undefined;
  if (state.showReveal && reveal || state.result) {
    const overlay = h("div", { class: "overlay", role: "dialog", "aria-modal": "false", "aria-label": state.result ? t("result_title") : t("reveal_title", { number: reveal?.handNumber ?? "" }) });
    if (reveal) overlay.append(revealView(reveal, view, state.seat));
    if (state.result) {
      overlay.append(resultView(state.result, state.sheet, view));
      overlay.append(payoutLine(state.payout));
      overlay.append(h("button", { type: "button", class: "primary", "data-focus-key": "new-match", onclick: () => { game.stop(); onLeave(); } }, t("new_match")));
    } else {
      overlay.append(h("button", { type: "button", class: "primary", "data-focus-key": "continue", onclick: () => { state.showReveal = false; rerender(); } }, t("continue")));
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
        h("button", { type: "button", class: "danger", "data-focus-key": "confirm-yes", onclick: () => game.confirm(true) }, t("confirm_yes")),
        h("button", { type: "button", "data-focus-key": "confirm-no", onclick: () => game.confirm(false) }, t("confirm_no")),
      ),
    );
  }
  root.replaceChildren(screen);
  const target = focused ? root.querySelector<HTMLElement>(`[data-focus-key="${focused}"]`) : null;
  if (target && !(target as HTMLButtonElement).disabled) target.focus();
  else if (state.confirm) root.querySelector<HTMLElement>('[data-focus-key="confirm-no"]')?.focus();
}

function deadline(stamp: { seconds: bigint; nanos: number } | undefined): string {
  if (!stamp || !stamp.seconds) return "";
  return String(Number(stamp.seconds) * 1000 + Math.floor(stamp.nanos / 1e6));
}

function updateTimer(root: HTMLElement, game: Game): void {
  const timer = root.querySelector<HTMLElement>(".timer");
  if (!timer) return;
  const until = Number(timer.dataset.deadline || 0);
  const view = game.state.view;
  if (!until || !view || view.phase === Phase.ENDED) {
    timer.textContent = "";
    return;
  }
  const seconds = Math.max(0, Math.ceil((until - Date.now()) / 1000));
  timer.textContent =
    seconds >= 60 ? `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}` : t("seconds_left", { seconds });
  timer.classList.toggle("low", seconds <= 10);
}
