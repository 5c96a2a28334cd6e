// The melds laid down, with their owners and what each okey stands for (under the tile, never
// clipped by the next one), in a box of fixed height that scrolls: a seat that opens moves
// nothing else on the screen. A meld is a drop target for a rack tile (lay off)
// and a button: with one tile selected, a click (or Enter) lays it off there.
import { MeldKind, type SeatView } from "./gen/okey/v1/common_pb.js";
import { h } from "./dom.js";
import { seatName } from "./events.js";
import type { Game } from "./game.js";
import { t } from "./i18n.js";
import { isFresh } from "./seats.js";
import { tileElement } from "./tiles.js";

export function meldsView(game: Game, view: SeatView): HTMLElement {
  const section = h("section", { class: "melds", "aria-label": t("melds") });
  if (!view.table.length) {
    section.append(h("p", { class: "empty" }, t("table_empty")));
    return section;
  }
  const targets = new Set(
    [...(game.state.hints?.layOffs ?? []), ...(game.state.hints?.okeys.flatMap((o) => o.layOffs) ?? [])]
      .filter((hint) => game.state.selected.length === 1 && hint.tile?.id === game.state.selected[0])
      .map((hint) => hint.meldIndex),
  );
  for (const tableMeld of view.table) {
    const meld = tableMeld.meld;
    if (!meld) continue;
    const label = t("meld_of", { index: tableMeld.index + 1, name: seatName(view, tableMeld.ownerSeat) });
    const kind = meld.kind === MeldKind.RUN ? "run" : meld.kind === MeldKind.SET ? "set" : "pair";
    const button = h("button", {
      type: "button",
      class: `meld ${kind}${targets.has(tableMeld.index) ? " target" : ""}`,
      "data-meld-index": tableMeld.index,
      "data-focus-key": `meld-${tableMeld.index}`,
      "aria-label": `${label}: ${meld.tiles.map((mt) => mt.tile?.notation).join(" ")}${meld.value ? ` (${meld.value})` : ""}`,
      onclick: () => game.layOff(undefined, tableMeld.index),
      ondragover: (event: DragEvent) => {
        event.preventDefault();
        (event.currentTarget as HTMLElement).classList.add("over");
      },
      ondragleave: (event: DragEvent) => (event.currentTarget as HTMLElement).classList.remove("over"),
      ondrop: (event: DragEvent) => {
        event.preventDefault();
        const id = Number(event.dataTransfer?.getData("text/plain"));
        if (Number.isInteger(id)) game.layOff(id, tableMeld.index);
      },
    });
    button.append(h("span", { class: "owner" }, label));
    const tiles = h("span", { class: "meld-tiles" });
    for (const item of meld.tiles) {
      if (item.tile) tiles.append(tileElement(item.tile, { small: true, fresh: isFresh(game, item.tile), standsFor: item.tile.wild || item.tile.falseJoker ? item.standsFor : undefined }));
    }
    button.append(tiles);
    if (meld.value) button.append(h("span", { class: "value" }, `(${meld.value})`));
    section.append(button);
  }
  return section;
}
