// The player's rack: two rows of slots (tiles and gaps) in the player's own arrangement, the
// same size whatever it holds. A tile is a button: click (tap) or Space selects it; drag it, with
// a mouse or a finger, to another slot (or a gap) to arrange, onto a meld to lay it off, onto
// the Discard button or your discards to throw it. Keyboard: ←/→ move between tiles, Shift+←/→ move
// the tile itself. Hints mark tiles: playable (a meld takes it), costly (+101 to discard) and
// each discard's cost (data-discard-cost, what the hint-driven test reads).
import { h } from "./dom.js";
import type { Game } from "./game.js";
import { t } from "./i18n.js";
import { isFresh } from "./seats.js";
import { tileElement } from "./tiles.js";

export interface DragState {
  dragging: boolean;
  /** A finger's drag of this tile just ended: a click on it that follows is not a tap. */
  justDropped?: number;
}

/** How far (px) a finger moves before a touch is a drag, not a tap. */
const DRAG_START_PX = 8;

/** A tile dragged by a finger (pointer events: touch screens send no drag and drop): a copy
 * follows the finger; let go over a slot to move it there, over a meld to lay it off, over the
 * Discard button or your discards to discard it. The screen is not redrawn meanwhile. */
function touchDrag(down: PointerEvent, tileId: number, tile: HTMLElement, game: Game, drag: DragState, rerender: () => void): void {
  drag.dragging = true;
  drag.justDropped = undefined;
  let ghost: HTMLElement | undefined;
  const move = (event: PointerEvent) => {
    if (event.pointerId !== down.pointerId) return;
    const dx = event.clientX - down.clientX;
    const dy = event.clientY - down.clientY;
    if (!ghost && Math.hypot(dx, dy) < DRAG_START_PX) return;
    if (!ghost) {
      ghost = tile.cloneNode(true) as HTMLElement;
      ghost.classList.add("ghost");
      ghost.removeAttribute("data-tile-id");
      document.body.append(ghost);
      tile.classList.add("lifted");
    }
    ghost.style.left = `${event.clientX - ghost.offsetWidth / 2}px`;
    ghost.style.top = `${event.clientY - ghost.offsetHeight * 0.8}px`;
    event.preventDefault();
  };
  const end = (event: PointerEvent) => {
    if (event.pointerId !== down.pointerId) return;
    window.removeEventListener("pointermove", move);
    window.removeEventListener("pointerup", end);
    window.removeEventListener("pointercancel", end);
    drag.dragging = false;
    if (!ghost) {
      rerender();
      return;
    }
    ghost.remove();
    tile.classList.remove("lifted");
    drag.justDropped = tileId;
    window.setTimeout(() => (drag.justDropped = undefined), 400);
    if (event.type === "pointerup") drop(event.clientX, event.clientY, tileId, game);
    rerender();
  };
  window.addEventListener("pointermove", move, { passive: false });
  window.addEventListener("pointerup", end);
  window.addEventListener("pointercancel", end);
}

function drop(x: number, y: number, tileId: number, game: Game): void {
  const under = document.elementFromPoint(x, y);
  const slot = under?.closest<HTMLElement>(".rack .slot");
  if (slot) return game.rack.moveTo(tileId, Number(slot.dataset.slot));
  const meld = under?.closest<HTMLElement>(".meld[data-meld-index]");
  if (meld) return game.layOff(tileId, Number(meld.dataset.meldIndex));
  if (under?.closest('[data-move="discard"], .pile.mine')) game.discard(tileId);
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
  rack.style.setProperty("--row", String(game.rack.rowLength));
  const slots = Math.max(game.rack.capacity, game.rack.slots.length);
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
        // The +101 mark from the hints where there are hints (the finishing discard costs
        // nothing, and carries no mark), else from the view.
        { playable: rackTile.playable || fits.has(tile.id), costly: cost.has(tile.id) ? cost.get(tile.id)! > 0 : rackTile.costlyDiscard, selected: selected.has(tile.id), fresh: isFresh(game, tile) },
        "button",
      ) as HTMLButtonElement;
      button.type = "button";
      button.draggable = true;
      button.dataset.focusKey = `tile-${tile.id}`;
      button.setAttribute("aria-pressed", String(selected.has(tile.id)));
      const notes = [
        rackTile.playable || fits.has(tile.id) ? t("playable_hint") : "",
        (cost.has(tile.id) ? cost.get(tile.id)! > 0 : rackTile.costlyDiscard) ? t("costly_hint") : "",
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
      button.addEventListener("click", () => {
        if (drag.justDropped === tile.id) return; // the click that ends a finger's drag is no tap
        game.toggle(tile.id);
      });
      button.addEventListener("pointerdown", (event) => {
        drag.justDropped = undefined; // a new touch or click: whatever follows it is its own
        if (event.pointerType !== "mouse") touchDrag(event, tile.id, button, game, drag, rerender);
      });
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
