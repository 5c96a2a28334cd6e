// An event as one line of the table's log, per person ("You drew R7" / "Ayla drew from the
// stock"), in the page's language.
import { EventKind, OccupantKind, type Event, type SeatView } from "./gen/okey/v1/common_pb.js";
import { sentenceCase, t } from "./i18n.js";
import { tileName } from "./tiles.js";

export function seatName(view: SeatView | undefined, seat: number): string {
  const occupant = view?.seats[seat]?.occupant;
  const name = occupant?.displayName || t("seat_label", { seat: seat + 1 });
  return occupant?.kind === OccupantKind.BOT ? `${name} (${t("bot")})` : name;
}

export function describeEvent(event: Event, view: SeatView | undefined, mySeat: number | undefined): string {
  const seat = event.seat ?? -1;
  const own = seat === mySeat && mySeat !== undefined;
  const name = seatName(view, seat);
  const tile = tileName(event.tiles[0] ?? event.privateTiles[0]);
  const pick = (key: string, params: Record<string, string | number>) =>
    sentenceCase(t(own ? `${key}_own` : key, { name, ...params }));
  switch (event.kind) {
    case EventKind.DREW:
      return pick("ev_drew", { tile: tileName(event.privateTiles[0]) });
    case EventKind.TOOK:
      return pick("ev_took", { tile });
    case EventKind.DISCARDED:
      return pick("ev_discarded", { tile });
    case EventKind.OPENED:
      return pick("ev_opened", { points: event.points });
    case EventKind.HAND_ENDED:
      return t("ev_hand_ended", { number: event.handNumber });
    case EventKind.MATCH_ENDED:
      return t("ev_match_ended");
    default:
      return "";
  }
}
