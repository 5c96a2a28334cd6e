// The rack as the player arranges it: slots holding tile ids or gaps (null), in the player's
// own order, kept per hand in localStorage so a reload keeps it. Pure apart from that store.
import type { Tile } from "./gen/okey/v1/common_pb.js";
import { sortKey } from "./tiles.js";

/** Two rows of 16, as a wooden rack has (a phone's rack: two rows of 12). */
export const CAPACITY = 32;

export type Slot = number | null;

export class Rack {
  slots: Slot[] = [];
  /** Slots in one of the rack's two rows (the screen sets it for its width). */
  rowLength = CAPACITY / 2;
  private handId = "";

  get capacity(): number {
    return this.rowLength * 2;
  }

  /** Take the rack's tiles as they are now: gone ones leave a gap, new ones (a drawn tile) go
   * in the first gap after the last tile, or at the end. True for a new hand with no kept
   * arrangement (the caller sorts it). */
  sync(handId: string, tileIds: readonly number[]): boolean {
    let fresh = false;
    if (handId !== this.handId) {
      this.handId = handId;
      const kept = restore(handId);
      fresh = kept === undefined;
      this.slots = kept ?? [];
    }
    const present = new Set(tileIds);
    this.slots = this.slots.map((slot) => (slot !== null && present.has(slot) ? slot : null));
    const placed = new Set(this.slots.filter((slot): slot is number => slot !== null));
    for (const id of tileIds) {
      if (placed.has(id)) continue;
      const last = lastTile(this.slots);
      const free = this.slots.indexOf(null, last + 1);
      if (free >= 0) this.slots[free] = id;
      else this.slots.push(id);
    }
    this.trim();
    return fresh;
  }

  get tiles(): number[] {
    return this.slots.filter((slot): slot is number => slot !== null);
  }

  /** Put ``id`` at slot ``index``: into a gap there, else pushing the tiles from there right
   * (into the next gap, so the rest of the rack keeps its place). */
  moveTo(id: number, index: number): void {
    const from = this.slots.indexOf(id);
    if (from < 0 || from === index) return;
    this.slots[from] = null;
    while (this.slots.length <= index) this.slots.push(null);
    if (this.slots[index] !== null) {
      const gap = this.slots.indexOf(null, index);
      if (gap >= 0) this.slots.splice(gap, 1);
      this.slots.splice(index, 0, id);
    } else {
      this.slots[index] = id;
    }
    this.trim();
  }

  /** One step left or right (the keyboard's way to arrange). */
  shift(id: number, step: -1 | 1): void {
    const from = this.slots.indexOf(id);
    const to = from + step;
    if (from < 0 || to < 0) return;
    while (this.slots.length <= to) this.slots.push(null);
    [this.slots[from], this.slots[to]] = [this.slots[to], this.slots[from]];
    this.trim();
  }

  /** A gap before ``id``. */
  gapBefore(id: number): void {
    const at = this.slots.indexOf(id);
    if (at >= 0) this.slots.splice(at, 0, null);
    this.trim();
  }

  /** Sorted into runs (colour, then consecutive numbers) or sets (by number), a gap between
   * groups, a group never split across the two rows; okeys and false jokers at the end. */
  sort(tiles: readonly Tile[], bySets: boolean): void {
    const sorted = [...tiles].sort((a, b) => sortKey(a, bySets) - sortKey(b, bySets));
    // Gaps between runs (or numbers); where they do not all fit, only between colours; where
    // even that does not fit, the tiles in order with no gaps.
    let laid: Slot[] | undefined;
    for (const strict of [true, false]) {
      const groups: number[][] = [];
      let previous: Tile | undefined;
      for (const tile of sorted) {
        if (!previous || breaks(previous, tile, bySets, strict)) groups.push([]);
        groups[groups.length - 1].push(tile.id);
        previous = tile;
      }
      laid = this.layout(groups);
      if (laid) break;
    }
    this.slots = laid ?? sorted.map((tile) => tile.id);
    this.trim();
  }

  /** Groups into the two rows, a gap between them, each in one row (one longer than a row
   * excepted); undefined if they do not fit. */
  private layout(groups: number[][]): Slot[] | undefined {
    const row = this.rowLength;
    const slots: Slot[] = [];
    for (const group of groups) {
      let at = slots.length;
      if (at !== 0 && at !== row) at += 1;
      if (at < row && at + group.length > row && group.length <= row) at = row;
      if (at + group.length > row * 2) return undefined;
      while (slots.length < at) slots.push(null);
      slots.push(...group);
    }
    return slots;
  }

  private trim(): void {
    while (this.slots.length && this.slots[this.slots.length - 1] === null) this.slots.pop();
    if (this.slots.length > this.capacity) {
      // Too many gaps to fit: drop gaps from the end until it fits.
      for (let i = this.slots.length - 1; i >= 0 && this.slots.length > this.capacity; i--) {
        if (this.slots[i] === null) this.slots.splice(i, 1);
      }
    }
    if (this.handId) localStorage.setItem(key(this.handId), JSON.stringify(this.slots));
  }
}

function breaks(previous: Tile, tile: Tile, bySets: boolean, strict: boolean): boolean {
  const special = (t: Tile) => t.wild || t.falseJoker;
  if (special(previous) || special(tile)) return special(previous) !== special(tile);
  if (bySets) return previous.number !== tile.number;
  return previous.colour !== tile.colour || (strict && tile.number !== previous.number + 1);
}

function lastTile(slots: Slot[]): number {
  for (let i = slots.length - 1; i >= 0; i--) if (slots[i] !== null) return i;
  return -1;
}

function key(handId: string): string {
  return `okey101.rack.${handId}`;
}

function restore(handId: string): Slot[] | undefined {
  try {
    const text = localStorage.getItem(key(handId));
    return text ? (JSON.parse(text) as Slot[]) : undefined;
  } catch {
    return undefined;
  }
}
