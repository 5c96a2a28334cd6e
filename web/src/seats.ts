// Every seat's public side: who sits there, tiles in hand, how it opened, its total, its
// discards (the last one on top: what the next seat may take), whose turn and the timer.
import { OccupantKind, OpeningKind, Phase, type SeatView } from "./gen/okey/v1/common_pb.js";
import { h } from "./dom.js";
import { seatName } from "./events.js";
import { t } from "./i18n.js";
import { tileElement } from "./tiles.js";

export function seatsView(view: SeatView, mySeat: number | undefined): HTMLElement {
  const list = h("section", { class: "seats", "aria-label": t("seats") });
  // Your own seat last (nearest the rack); the others in playing order after it.
  const order = [1, 2, 3, 0].map((step) => ((mySeat ?? 0) + step) % 4);
  for (const seat of order) {
    const side = view.seats[seat];
    if (!side) continue;
    const occupant = side.occupant;
    const you = seat === mySeat;
    const turn = view.turn === seat && view.phase !== Phase.ENDED;
    const opened =
      side.openedAs === OpeningKind.RUNS ? t("opened_runs") : side.openedAs === OpeningKind.PAIRS ? t("opened_pairs") : t("not_opened");
    const facts = [
      you ? t("you") : occupant?.kind === OccupantKind.BOT ? t("bot") : "",
      occupant?.away ? t("away") : "",
      view.dealer === seat ? t("dealer_mark") : "",
      t("tile_count", { count: side.tileCount }),
      opened,
      side.penaltyPoints ? t("penalty_points", { points: side.penaltyPoints }) : "",
      view.matchTotals.length ? t("match_total", { points: view.matchTotals[seat] ?? 0 }) : "",
    ].filter(Boolean);
    const discards = h("ol", { class: "discards", "aria-label": t("discards_of", { name: seatName(view, seat) }) });
    if (!side.discards.length) discards.append(h("li", { class: "none" }, t("no_discard")));
    // Oldest first: the last one (outlined) is what the next seat may take.
    for (const tile of side.discards) discards.append(h("li", {}, tileElement(tile, { small: true })));
    list.append(
      h(
        "article",
        {
          class: `seat${turn ? " turn" : ""}${you ? " mine" : ""}`,
          "data-seat": seat,
          "data-turns": side.turnsPlayed,
          "aria-current": turn ? "true" : undefined,
          "aria-label": seatName(view, seat),
        },
        h("h2", {}, seatName(view, seat)),
        h("p", { class: "facts" }, facts.join(" · ")),
        discards,
      ),
    );
  }
  return list;
}
