// The move buttons, always the same ones in the same places (nothing moves under the finger),
// enabled for what the seat may try now. A move the hints advise against is
// still sent when asked for (the table answers with its reason); only the hints' help (the
// best opening, the lay-off targets) needs the hints.
import { OpeningKind, Phase } from "./gen/okey/v1/common_pb.js";
import { h } from "./dom.js";
import type { Game } from "./game.js";
import { t } from "./i18n.js";
import { tileName } from "./tiles.js";

export function controlsView(game: Game, rerender: () => void): HTMLElement {
  const view = game.state.view!;
  const hints = game.state.hints;
  const mine = game.myTurn && !game.state.busy;
  const phase = view.phase;
  const drawing = phase === Phase.DRAW;
  const one = game.state.selected.length === 1 && !game.state.groups.length ? game.state.selected[0] : undefined;
  const button = (key: string, label: string, onclick: () => void, enabled: boolean, extra: Record<string, string | undefined> = {}) =>
    h(
      "button",
      { type: "button", class: `move ${key}`, "data-move": key, "data-focus-key": `move-${key}`, "aria-label": label, disabled: !enabled, onclick, ...extra },
      extra.text ?? label,
    );
  const takeable = view.takeable?.notation ? view.takeable : undefined;
  const openedAs = view.seats[game.state.seat ?? 0]?.openedAs;
  const opened = openedAs === OpeningKind.RUNS || openedAs === OpeningKind.PAIRS;
  const moves = h(
    "div",
    { class: "controls moves", role: "toolbar", "aria-label": t("moves") },
    button("draw", t("draw_label"), () => game.draw(), mine && drawing, { text: t("draw") }),
    button("take", t("take_label"), () => game.take(), mine && drawing && !!takeable, {
      text: takeable ? t("take", { tile: tileName(takeable) }) : t("take_label"),
      title: hints?.take && !hints.take.allowed ? hints.take.refusal?.message : undefined,
    }),
    button("group", t("group"), () => game.closeGroup(), game.state.selected.length > 0),
    button("clear", t("clear"), () => game.clear(), game.state.selected.length + game.state.groups.length > 0),
    button("best", t("best"), () => game.best(), !!hints?.opening && !opened),
    button("open", t("open"), () => game.open(), mine && !drawing && !opened),
    button("meld", t("meld"), () => game.meld(), mine && !drawing),
    button("lay-off", t("lay_off"), () => game.layOff(), mine && !drawing && one !== undefined),
    button("take-okey", t("take_okey"), () => game.takeOkey(), mine && !drawing && !!hints?.takeBacks.length),
    button("give-back", t("give_back"), () => game.giveBack(), mine && !!hints?.canGiveBack),
    button("discard", t("discard_label"), () => game.discard(), mine && one !== undefined, {
      text: t("discard"),
    }),
  );
  const discard = moves.querySelector<HTMLElement>('[data-move="discard"]')!;
  discard.addEventListener("dragover", (event) => event.preventDefault());
  discard.addEventListener("drop", (event) => {
    event.preventDefault();
    const id = Number(event.dataTransfer?.getData("text/plain"));
    if (Number.isInteger(id)) game.discard(id);
  });
  const arrange = h(
    "div",
    { class: "controls arrange", role: "toolbar", "aria-label": t("rack") },
    button("sort-runs", t("sort_runs"), () => { game.rack.sort(game.rackTiles(), false); rerender(); }, true),
    button("sort-sets", t("sort_sets"), () => { game.rack.sort(game.rackTiles(), true); rerender(); }, true),
    button("gap", t("gap"), () => { if (one !== undefined) game.rack.gapBefore(one); rerender(); }, one !== undefined),
    button("left", t("move_left"), () => { if (one !== undefined) game.rack.shift(one, -1); rerender(); }, one !== undefined, { text: "←" }),
    button("right", t("move_right"), () => { if (one !== undefined) game.rack.shift(one, 1); rerender(); }, one !== undefined, { text: "→" }),
  );
  return h("div", { class: "control-bar" }, moves, arrange);
}
