// The hand's end: every rack face up, each seat's score with its reasons (the ScoreLines, which
// add up to its points), the match totals; then, at the match's end, the result and the score
// sheet hand by hand.
import {
  DoublingReason,
  HandEndReason,
  OpeningKind,
  PenaltyReason,
  ScoreLineKind,
  type Event,
  type HandResult,
  type RevealedRack,
  type ScoreLine,
  type SeatView,
} from "./gen/okey/v1/common_pb.js";
import type { ScoreSheet } from "./gen/okey/v1/scoring_pb.js";
import { h } from "./dom.js";
import { seatName } from "./events.js";
import { t } from "./i18n.js";
import { sortKey, tileElement } from "./tiles.js";

const WHY: Record<number, string> = {
  [DoublingReason.OKEY_FINISH]: "why_okey_finish",
  [DoublingReason.PAIRS_FINISH]: "why_pairs_finish",
  [DoublingReason.ONE_GO]: "why_one_go",
  [DoublingReason.OPENED_WITH_PAIRS]: "why_opened_pairs",
};
const PENALTY: Record<number, string> = {
  [PenaltyReason.OKEY_DISCARDED]: "reason_okey",
  [PenaltyReason.PLAYABLE_DISCARDED]: "reason_playable",
  [PenaltyReason.GAVE_BACK]: "reason_gave_back",
  [PenaltyReason.CHARGED_BEFORE]: "reason_before",
};

export function lineText(line: ScoreLine): string {
  const points = line.points > 0 ? `+${line.points}` : String(line.points);
  switch (line.kind) {
    case ScoreLineKind.FINISHED:
      return t("line_finished", { points });
    case ScoreLineKind.NEVER_OPENED:
      return t("line_never_opened", { points });
    case ScoreLineKind.RACK_SUM:
      return t("line_rack_sum", { count: line.count, points });
    case ScoreLineKind.OKEY_IN_HAND:
      return t("line_okey_in_hand", { count: line.count, points });
    case ScoreLineKind.DOUBLED:
      return t("line_doubled", { why: line.doubledFor.map((w) => t(WHY[w] ?? "")).join(", "), points });
    case ScoreLineKind.CAPPED:
      return t("line_capped", { points });
    case ScoreLineKind.INDICATOR_SHOWN:
      return t("line_indicator", { points });
    case ScoreLineKind.PENALTY:
      return t("line_penalty", { why: t(PENALTY[line.penaltyReason] ?? ""), points });
    default:
      return points;
  }
}

export interface RevealInput {
  handNumber: number;
  result: HandResult;
  racks: RevealedRack[];
  totals: number[];
}

export function revealFromEvent(event: Event): RevealInput {
  return {
    handNumber: event.handNumber,
    result: event.handResult!,
    racks: event.revealedRacks,
    totals: event.matchProgress?.totals ?? [],
  };
}

export function revealFromView(view: SeatView): RevealInput | undefined {
  if (!view.result) return undefined;
  return { handNumber: view.handNumber, result: view.result, racks: view.revealedRacks, totals: view.matchTotals };
}

function howEnded(result: HandResult, view: SeatView | undefined, mySeat: number | undefined): string {
  if (result.reason === HandEndReason.FINISHED && result.finish) {
    const winner = result.finish.winnerSeat;
    let text = winner === mySeat ? t("finished_by_own") : t("finished_by", { name: seatName(view, winner) });
    if (result.finish.multiplier > 1) text += ` ×${result.finish.multiplier}`;
    return text;
  }
  return result.reason === HandEndReason.VOID ? t("void_hand") : t("stock_out");
}

export function revealView(input: RevealInput, view: SeatView | undefined, mySeat: number | undefined): HTMLElement {
  const section = h(
    "section",
    { class: "reveal", "aria-label": t("reveal_title", { number: input.handNumber }), "data-hand": input.handNumber },
    h("h2", {}, t("reveal_title", { number: input.handNumber })),
    h("p", { class: "how" }, howEnded(input.result, view, mySeat)),
  );
  const list = h("ol", { class: "scores" });
  for (const score of input.result.scores) {
    const opened =
      score.openedAs === OpeningKind.RUNS ? t("opened_runs") : score.openedAs === OpeningKind.PAIRS ? t("opened_pairs") : t("not_opened");
    const rack = h("div", { class: "revealed-rack", "aria-label": `${seatName(view, score.seat)}: ${t("rack")}` });
    // Face up and sorted (colour, then number), as a player would lay their own rack out.
    const tiles = [...(input.racks.find((r) => r.seat === score.seat)?.tiles ?? [])].sort((a, b) => sortKey(a, false) - sortKey(b, false));
    if (!tiles.length) rack.append(h("span", { class: "none" }, t("reveal_empty_rack")));
    for (const tile of tiles) rack.append(tileElement(tile, { small: true }));
    const lines = score.lines.map(lineText);
    list.append(
      h(
        "li",
        { class: "score", "data-seat": score.seat, "data-points": score.points },
        h("h3", {}, `${seatName(view, score.seat)}${score.seat === mySeat ? ` (${t("you")})` : ""} · ${opened}`),
        rack,
        h("p", { class: "lines" }, `${lines.join(" · ") || "0"} = ${t("points", { points: score.points })}`),
        input.totals.length ? h("p", { class: "total" }, t("match_total", { points: input.totals[score.seat] ?? 0 })) : "",
      ),
    );
  }
  section.append(list);
  return section;
}

export function resultView(event: Event, sheet: ScoreSheet | undefined, view: SeatView | undefined): HTMLElement {
  const result = event.matchResult;
  const winners = (result?.seats ?? []).filter((s) => s.winner).map((s) => s.displayName || seatName(view, s.seat));
  const section = h(
    "section",
    { class: "result", "aria-label": t("result_title") },
    h("h2", {}, t("result_title")),
    h("p", { class: "winner" }, t("result_winner", { names: winners.join(", ") })),
  );
  const seats = result?.seats ?? [];
  const head = h("tr", {}, h("th", { scope: "col" }, t("sheet_hand")), ...seats.map((s) => h("th", { scope: "col" }, s.displayName || seatName(view, s.seat))));
  const body = h("tbody");
  for (const row of sheet?.rows ?? []) {
    body.append(
      h("tr", {}, h("th", { scope: "row" }, row.handNumber), ...row.scores.map((s, i) => h("td", {}, String(s.points), h("span", { class: "running" }, String(row.runningTotals[i] ?? ""))))),
    );
  }
  body.append(h("tr", { class: "totals" }, h("th", { scope: "row" }, t("sheet_total")), ...seats.map((s) => h("td", {}, s.total))));
  // Fits a phone: four narrow columns, each cell the hand's points over the running total.
  section.append(h("div", { class: "sheet-scroll" }, h("table", { class: "sheet", "aria-label": t("sheet_title") }, h("caption", {}, t("sheet_title")), h("thead", {}, head), body)));
  return section;
}
