// An event as one line of the table's log, per person ("You drew R7" / "Ayla drew from the
// stock"), and as the short note beside its seat ("took R7", "opened 112"), in the page's
// language. A seat is named as the API names it: a bot's name carries no mark of its own (the
// seat shows one only where the API says its occupant is a bot).
import { EventKind, MeldKind, type Event, type SeatView } from "./gen/okey/v1/common_pb.js";
import { sentenceCase, t, tn } from "./i18n.js";
import { tileName } from "./tiles.js";

export function seatName(view: SeatView | undefined, seat: number): string {
  const occupant = view?.seats[seat]?.occupant;
  return occupant?.displayName || t("seat_label", { seat: seat + 1 });
}

function tilesOf(event: Event): string {
  const tiles = event.tiles.length ? event.tiles : event.privateTiles;
  return tiles.map((tile) => tileName(tile)).join(" ");
}

/** A pairs opening is told in pairs ("5 çiftle açtı"), runs and sets in points. */
function openedWithPairs(event: Event): boolean {
  return event.meld?.kind === MeldKind.PAIR;
}

export function describeEvent(event: Event, view: SeatView | undefined, mySeat: number | undefined): string {
  const seat = event.seat ?? -1;
  const own = seat === mySeat && mySeat !== undefined;
  const name = seatName(view, seat);
  const tile = tilesOf(event);
  const pick = (key: string, params: Record<string, string | number> = {}) =>
    sentenceCase(t(own ? `${key}_own` : key, { name, ...params }));
  switch (event.kind) {
    case EventKind.HAND_DEALT:
      return t("ev_dealt", { number: event.handNumber });
    case EventKind.DREW:
      return pick("ev_drew", { tile: tileName(event.privateTiles[0]) });
    case EventKind.TOOK:
      return pick("ev_took", { tile });
    case EventKind.GAVE_BACK:
      return pick("ev_gave_back", { tile });
    case EventKind.DISCARDED:
      return pick("ev_discarded", { tile });
    case EventKind.OPENED:
      return openedWithPairs(event)
        ? sentenceCase(tn(own ? "ev_opened_pairs_own" : "ev_opened_pairs", event.points, { name }))
        : pick("ev_opened", { points: event.points });
    case EventKind.MELDED:
      return pick("ev_melded", { tiles: tile });
    case EventKind.LAID_OFF:
      return pick("ev_laid_off", { tiles: tile, index: (event.meldIndex ?? 0) + 1 });
    case EventKind.TOOK_OKEY:
      return pick("ev_took_okey", { tiles: tile, index: (event.meldIndex ?? 0) + 1 });
    case EventKind.SHOWED_INDICATOR:
      return pick("ev_showed_indicator", { tile });
    case EventKind.PENALTY:
      return pick("ev_penalty", { points: event.points });
    case EventKind.TURN_TIMED_OUT:
      return pick("ev_timed_out");
    case EventKind.SEAT_AWAY:
      return pick("ev_away");
    case EventKind.SEAT_BACK:
      return pick("ev_back");
    case EventKind.STOCK_OUT:
      return t("ev_stock_out");
    case EventKind.HAND_ENDED:
      return t("ev_hand_ended", { number: event.handNumber });
    case EventKind.MATCH_ENDED:
      return t("ev_match_ended");
    default:
      return "";
  }
}

/** The note beside the seat that acted ("took R7"); empty for an event that is no seat's move. */
export function seatAction(event: Event): string {
  const tile = tilesOf(event);
  switch (event.kind) {
    case EventKind.DREW:
      return t("act_drew");
    case EventKind.TOOK:
      return t("act_took", { tile });
    case EventKind.GAVE_BACK:
      return t("act_gave_back", { tile });
    case EventKind.DISCARDED:
      return t("act_discarded", { tile });
    case EventKind.OPENED:
      return openedWithPairs(event) ? tn("act_opened_pairs", event.points) : t("act_opened", { points: event.points });
    case EventKind.MELDED:
      return t("act_melded");
    case EventKind.LAID_OFF:
      return t("act_laid_off", { tile });
    case EventKind.TOOK_OKEY:
      return t("act_took_okey");
    case EventKind.SHOWED_INDICATOR:
      return t("act_showed_indicator");
    case EventKind.PENALTY:
      return t("act_penalty", { points: event.points });
    case EventKind.TURN_TIMED_OUT:
      return t("act_timed_out");
    default:
      return "";
  }
}

/** The tiles an event puts in sight (highlighted a moment on the table or in the rack). */
export function freshTiles(event: Event, mySeat: number | undefined): number[] {
  switch (event.kind) {
    case EventKind.DREW:
      return event.seat === mySeat ? event.privateTiles.map((tile) => tile.id) : [];
    case EventKind.TOOK:
    case EventKind.DISCARDED:
    case EventKind.OPENED:
    case EventKind.MELDED:
    case EventKind.LAID_OFF:
    case EventKind.TOOK_OKEY:
    case EventKind.GAVE_BACK:
      return event.tiles.map((tile) => tile.id);
    default:
      return [];
  }
}
