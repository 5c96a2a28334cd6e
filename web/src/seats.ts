// The table itself: four seats around the felt (you at the bottom, play going round to your
// right), each with its name, tiles in hand, whether it has opened, its total, the last thing
// it did and a ring that runs down on the seat to move; each seat's discards on its right-hand
// corner (so your left neighbour's lie by your rack, where you take them); in the middle the
// indicator, the okey and the stock as tiles. A seat shows a bot mark only where the API says
// its occupant is a bot.
import { OccupantKind, OpeningKind, Phase, type SeatView, type Tile } from "./gen/okey/v1/common_pb.js";
import { h } from "./dom.js";
import { seatName } from "./events.js";
import type { Game } from "./game.js";
import { t } from "./i18n.js";
import { faceName, tileElement, tileName } from "./tiles.js";

type Place = "bottom" | "right" | "top" | "left";
const PLACES: Place[] = ["bottom", "right", "top", "left"];
/** Where each place's discards lie: on its right hand, the corner toward the next seat. */
const PILE: Record<Place, string> = { bottom: "br", right: "tr", top: "tl", left: "bl" };

export function feltView(game: Game, view: SeatView): HTMLElement {
  const me = game.state.seat ?? 0;
  const felt = h("section", { class: "felt seats", "aria-label": t("seats") });
  PLACES.forEach((place, step) => {
    const seat = (me + step) % 4;
    felt.append(seatView(game, view, seat, place), pileView(game, view, seat, place));
  });
  felt.append(centreView(game, view));
  return felt;
}

function seatView(game: Game, view: SeatView, seat: number, place: Place): HTMLElement {
  const side = view.seats[seat];
  const occupant = side?.occupant;
  const you = seat === game.state.seat;
  const turn = view.turn === seat && view.phase !== Phase.ENDED && view.phase !== Phase.UNSPECIFIED;
  const opened = side?.openedAs === OpeningKind.RUNS || side?.openedAs === OpeningKind.PAIRS;
  const name = seatName(view, seat);
  const action = game.state.log.find((line) => line.seat === seat && line.action);
  const marks = [
    occupant?.kind === OccupantKind.BOT ? h("span", { class: "mark bot", title: t("bot") }, t("bot_mark")) : "",
    occupant?.away ? h("span", { class: "mark away" }, t("away")) : "",
    view.dealer === seat ? h("span", { class: "mark dealer", title: t("dealer_mark") }, "D") : "",
    opened ? h("span", { class: "mark opened" }, side?.openedAs === OpeningKind.PAIRS ? t("opened_pairs_mark") : t("opened_mark")) : "",
  ];
  const facts = [
    t("tile_count", { count: side?.tileCount ?? 0 }),
    opened ? (side?.openedAs === OpeningKind.PAIRS ? t("opened_pairs") : t("opened_runs")) : t("not_opened"),
    side?.penaltyPoints ? t("penalty_points", { points: side.penaltyPoints }) : "",
    view.matchTotals.length ? t("match_total", { points: view.matchTotals[seat] ?? 0 }) : "",
  ].filter(Boolean);
  return h(
    "article",
    {
      class: `seat at-${place}${turn ? " turn" : ""}${you ? " mine" : ""}${opened ? " opened" : ""}`,
      "data-seat": seat,
      "data-turns": side?.turnsPlayed ?? 0,
      "aria-current": turn ? "true" : undefined,
      "aria-label": `${name}: ${facts.join(", ")}`,
    },
    h("div", { class: "ring", "data-seat": seat, "aria-hidden": "true" }, h("span", { class: "count" }, side?.tileCount ?? 0)),
    h(
      "div",
      { class: "who" },
      h("h2", {}, name),
      h("p", { class: "marks" }, ...marks, view.matchTotals.length ? h("span", { class: "total" }, String(view.matchTotals[seat] ?? 0)) : ""),
      h("p", { class: `action${action && game.state.log[0] === action ? " latest" : ""}`, "aria-live": you ? undefined : "off" }, action?.action ?? "\u00a0"),
    ),
  );
}

function pileView(game: Game, view: SeatView, seat: number, place: Place): HTMLElement {
  const side = view.seats[seat];
  const discards = side?.discards ?? [];
  const mine = seat === game.state.seat;
  const left = !game.spectator && place === "left";
  const name = seatName(view, seat);
  const list = h("ol", { class: "discards", "aria-label": t("discards_of", { name }) });
  // Oldest first; the last one (on top) is what the next seat may take.
  for (const tile of discards) list.append(h("li", {}, tileElement(tile, { small: true, fresh: isFresh(game, tile) })));
  const pile = h(
    "div",
    { class: `pile at-${PILE[place]}${left ? " left-discard" : ""}${mine ? " mine" : ""}`, "data-seat": seat },
    list,
    discards.length > 1 ? h("span", { class: "pile-count" }, String(discards.length)) : "",
  );
  if (left) {
    const takeable = view.takeable?.notation ? view.takeable : undefined;
    const canTake = game.myTurn && view.phase === Phase.DRAW && !!takeable && !game.state.busy;
    const top = list.lastElementChild;
    if (top && canTake) {
      const button = h("button", {
        type: "button",
        class: "take-top",
        "data-focus-key": "take-top",
        "aria-label": t("take_from_left", { tile: tileName(takeable) }),
        onclick: () => game.take(),
      });
      pile.append(button);
    }
  }
  return pile;
}

function centreView(game: Game, view: SeatView): HTMLElement {
  const okey = view.okey && view.okey.number ? ({ id: -1, colour: view.okey.colour, number: view.okey.number, wild: true, falseJoker: false, notation: "" } as unknown as Tile) : undefined;
  const canDraw = game.myTurn && view.phase === Phase.DRAW && !game.state.busy;
  const stock = h(
    "button",
    {
      type: "button",
      class: "stock-pile",
      "data-stock": view.stockCount,
      "data-focus-key": "stock",
      disabled: !canDraw,
      "aria-label": canDraw ? t("stock_draw", { count: view.stockCount }) : t("stock", { count: view.stockCount }),
      onclick: () => game.draw(),
    },
    h("span", { class: "stock-count" }, String(view.stockCount)),
  );
  return h(
    "section",
    { class: "centre", "aria-label": t("indicator") },
    h("figure", { class: "indicator" }, view.indicator ? tileElement(view.indicator) : "", h("figcaption", {}, t("indicator"))),
    h(
      "figure",
      { class: "okey-face", "data-okey": faceName(view.okey) },
      okey ? tileElement(okey, { decorative: true }) : "",
      h("figcaption", {}, t("okey_is", { face: faceName(view.okey) })),
    ),
    h("figure", { class: "stock" }, stock, h("figcaption", {}, t("stock", { count: view.stockCount }))),
    h("span", { class: "hand-number" }, t("hand_of", { hand: view.handNumber })),
  );
}

export function isFresh(game: Game, tile: Tile): boolean {
  return (game.state.fresh.get(tile.id) ?? 0) > Date.now();
}
