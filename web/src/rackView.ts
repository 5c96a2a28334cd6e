// The player's rack: slots (tiles and gaps) in the player's own arrangement. A tile is a button:
// click or Space selects it; drag it to another slot (or a gap) to arrange, onto a meld to lay
// it off, onto the discard area to throw it. Keyboard: ←/→ move between tiles, Shift+←/→ move
// the tile itself. Hints mark tiles: playable (a meld takes it), costly (+101 to discard) and
// each discard's cost (data-discard-cost, what the hint-driven test reads).
import { h } from "./dom.js";
import type { Game } from "./game.js";
import { t } from "./i18n.js";
import { CAPACITY } from "./rack.js";
import { tileElement } from "./tiles.js";

export interface DragState {
  dragging: boolean;
}

export function rackView(game: Game, drag: DragState, rerender: () => void): HTMLElement {
  const view = game.state.view!;
  const hints = game.state.hints;
  const byId = new Map(view.rack.map((r) => [r.tile!.id, r]));
  const cost = new Map((hints?.discards ?? []).map((d) => [d.tile!.id, d.penaltyPoints]));
  const fits = new Set([...(hints?.layOffs ?? []), ...(hints?.okeys.flatMap((o) => o.layOffs) ?? [])].map((l) => l.tile!.id));
  const best = new Set((hints?.opening?.runsAndSets ?? []).flatMap((m) => m.tiles.map((mt) => mt.tile!.id)));
  const grouped = new Map<number, number>();
  game.state.groups.forEach((group, index) => group.forEach((id) => grouped.set(id, index + 1)));
  const selected = new Set(game.state.selected);
  const rack = h("section", { class: "rack", "aria-label": t("rack"), role: "list" });
  const slots = Math.max(CAPACITY, game.rack.slots.length + 1);
  for (let index = 0; index < slots; index++) {
    const id = game.rack.slots[index] ?? null;
    const slot = h("div", {
      class: "slot",
      role: "listitem",
      "data-slot": index,
      ondragover: (event: DragEvent) => event.preventDefault(),
      ondrop: (event: DragEvent) => {
        event.preventDefault();
        const moved = Number(event.dataTransfer?.getData("text/plain"));
        if (Number.isInteger(moved) && byId.has(moved)) {
          game.rack.moveTo(moved, index);
          drag.dragging = false;
          rerender();
        }
      },
    });
    const rackTile = id === null ? undefined : byId.get(id);
    if (rackTile?.tile) {
      const tile = rackTile.tile;
      const button = tileElement(
        tile,
        { playable: rackTile.playable || fits.has(tile.id), costly: rackTile.costlyDiscard, selected: selected.has(tile.id) },
        "button",
      ) as HTMLButtonElement;
      button.type = "button";
      button.draggable = true;
      button.dataset.focusKey = `tile-${tile.id}`;
      button.setAttribute("aria-pressed", String(selected.has(tile.id)));
      const notes = [
        rackTile.playable || fits.has(tile.id) ? t("playable_hint") : "",
        rackTile.costlyDiscard ? t("costly_hint") : "",
      ].filter(Boolean);
      if (notes.length) button.setAttribute("aria-description", notes.join(", "));
      if (cost.has(tile.id)) button.dataset.discardCost = String(cost.get(tile.id));
      if (fits.has(tile.id)) button.dataset.fits = "true";
      if (best.has(tile.id)) button.dataset.inBest = "true";
      if (grouped.has(tile.id)) {
        button.dataset.group = String(grouped.get(tile.id));
        button.append(h("span", { class: "group-mark" }, String(grouped.get(tile.id))));
      }
      if (selected.has(tile.id)) button.append(h("span", { class: "order-mark" }, String(game.state.selected.indexOf(tile.id) + 1)));
      button.addEventListener("click", () => game.toggle(tile.id));
      button.addEventListener("dragstart", (event) => {
        drag.dragging = true;
        event.dataTransfer?.setData("text/plain", String(tile.id));
        if (event.dataTransfer) event.dataTransfer.effectAllowed = "move";
      });
      button.addEventListener("dragend", () => {
        drag.dragging = false;
        rerender();
      });
      button.addEventListener("keydown", (event) => {
        if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
        event.preventDefault();
        const step = event.key === "ArrowLeft" ? -1 : 1;
        if (event.shiftKey) {
          game.rack.shift(tile.id, step);
          rerender();
          return;
        }
        const order = game.rack.tiles;
        const next = order[order.indexOf(tile.id) + step];
        if (next !== undefined) (rack.querySelector(`[data-tile-id="${next}"]`) as HTMLElement | null)?.focus();
      });
      slot.append(button);
    }
    rack.append(slot);
  }
  return rack;
}
