// A tile as the page draws it and as a sentence names it (docs/glossary.md: a Turkish screen
// shows the number alone in its colour's ink, a sentence names the colour's word).
import { Colour, type Face, type Tile } from "./gen/okey/v1/common_pb.js";
import { language } from "./i18n.js";

const LETTER: Record<number, string> = {
  [Colour.RED]: "R",
  [Colour.YELLOW]: "Y",
  [Colour.BLUE]: "B",
  [Colour.BLACK]: "K",
};
const WORD: Record<"en" | "tr", Record<number, string>> = {
  en: { [Colour.RED]: "red", [Colour.YELLOW]: "yellow", [Colour.BLUE]: "blue", [Colour.BLACK]: "black" },
  tr: { [Colour.RED]: "kırmızı", [Colour.YELLOW]: "sarı", [Colour.BLUE]: "mavi", [Colour.BLACK]: "siyah" },
};
const CLASS: Record<number, string> = {
  [Colour.RED]: "red",
  [Colour.YELLOW]: "yellow",
  [Colour.BLUE]: "blue",
  [Colour.BLACK]: "black",
};

/** "R7" in English, "kırmızı 7" in Turkish; "?" for a face not decided yet. */
export function faceName(face: Face | undefined): string {
  if (!face || !LETTER[face.colour] || face.number < 1 || face.number > 13) return "?";
  return language() === "tr" ? `${WORD.tr[face.colour]} ${face.number}` : `${LETTER[face.colour]}${face.number}`;
}

/** The tile as a sentence names it: "★R7", "★kırmızı 7", "◆FJ" / "◆sahte okey". */
export function tileName(tile: Tile | undefined): string {
  if (!tile) return "?";
  if (tile.falseJoker) return language() === "tr" ? "◆sahte okey" : "◆FJ";
  const name = faceName({ colour: tile.colour, number: tile.number } as Face);
  return tile.wild ? `★${name}` : name;
}

/** The accessible name of a tile: "red 7, okey" ("kırmızı 7, okey"). */
export function tileLabel(tile: Tile): string {
  if (tile.falseJoker) return language() === "tr" ? "sahte okey" : "false joker";
  const words = WORD[language()][tile.colour] ?? "";
  return `${words} ${tile.number}${tile.wild ? ", okey" : ""}`;
}

export interface TileOptions {
  playable?: boolean;
  costly?: boolean;
  selected?: boolean;
  small?: boolean;
  standsFor?: Face;
  /** New on the table or in the rack: highlighted a moment. */
  fresh?: boolean;
  /** A picture of a face (the okey in the middle), not one of the 106 tiles. */
  decorative?: boolean;
}

/** A tile's face as a DOM element (not interactive: the rack makes its own buttons). */
export function tileElement(tile: Tile, options: TileOptions = {}, tag: "span" | "button" = "span"): HTMLElement {
  const element = document.createElement(tag);
  element.className = "tile";
  if (tile.falseJoker) element.classList.add("false-joker");
  else element.classList.add(CLASS[tile.colour] ?? "black");
  if (tile.wild) element.classList.add("okey");
  if (options.playable) element.classList.add("playable");
  if (options.costly) element.classList.add("costly");
  if (options.selected) element.classList.add("selected");
  if (options.small) element.classList.add("small");
  if (options.fresh) element.classList.add("fresh");
  if (options.standsFor) element.classList.add("stands-for");
  if (!options.decorative) {
    element.dataset.tileId = String(tile.id);
    element.dataset.notation = tile.notation;
  }
  const number = document.createElement("span");
  number.className = "number";
  number.textContent = tile.falseJoker ? "◆" : String(tile.number);
  element.append(number);
  if (tile.wild || tile.falseJoker) {
    const mark = document.createElement("span");
    mark.className = "mark";
    mark.textContent = tile.wild ? "★" : language() === "tr" ? "SO" : "FJ";
    element.append(mark);
  }
  if (options.standsFor) {
    const stands = document.createElement("span");
    stands.className = "stands";
    stands.textContent = `=${faceName(options.standsFor)}`;
    element.append(stands);
  }
  let label = tileLabel(tile);
  if (options.standsFor) label += ` = ${faceName(options.standsFor)}`;
  element.setAttribute(tag === "span" ? "aria-label" : "aria-label", label);
  if (tag === "span") element.setAttribute("role", "img");
  return element;
}

/** Colour then number (runs), or number then colour (sets); okeys and false jokers last. */
export function sortKey(tile: Tile, bySets: boolean): number {
  if (tile.wild) return 200_000 + tile.id;
  if (tile.falseJoker || !tile.number) return 100_000 + tile.id;
  return bySets ? tile.number * 2_000 + tile.colour * 200 + tile.id : tile.colour * 10_000 + tile.number * 200 + tile.id;
}
