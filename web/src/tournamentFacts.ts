// What the tournament pages share: moving between pages without a reload, and a tournament's
// facts in the page's words (its state, start, check-in window, players, fee and prize pool,
// rules), the browser's time zone for every time.
import { MatchEnd, RulePreset, type RuleSet } from "./gen/okey/v1/common_pb.js";
import { TournamentState, type Tournament } from "./gen/okey/v1/lobby_pb.js";
import { chips, timestampMs } from "./chips.js";
import { h } from "./dom.js";
import { locale, t } from "./i18n.js";

/** Goes to ``path`` in the page (main.ts's router listens to popstate and draws the route). */
export function navigate(path: string): void {
  if (window.location.pathname + window.location.search !== path) history.pushState(null, "", path);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

/** A link that moves in the page without a reload (a new tab still opens the address). */
export function pageLink(path: string, attrs: Record<string, string>, ...children: Array<Node | string>): HTMLAnchorElement {
  const link = h("a", { ...attrs, href: path }, ...children);
  link.addEventListener("click", (event) => {
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(path);
  });
  return link;
}

// A tournament's facts in words ------------------------------------------------------------------

export function stateText(state: TournamentState): string {
  switch (state) {
    case TournamentState.UPCOMING:
      return t("tn_state_upcoming");
    case TournamentState.REGISTERING:
      return t("tn_state_registering");
    case TournamentState.RUNNING:
      return t("tn_state_running");
    case TournamentState.FINISHED:
      return t("tn_state_finished");
    case TournamentState.CANCELLED:
      return t("tn_state_cancelled");
    default:
      return "";
  }
}

/** The state's name for CSS and tests: "REGISTERING", "RUNNING"... */
export function stateName(state: TournamentState): string {
  return TournamentState[state] ?? "UNSPECIFIED";
}

/** A moment with its day, in the page's language and the browser's time zone. */
export function longWhen(ms: number): string {
  return new Date(ms).toLocaleString(locale(), {
    weekday: "short",
    day: "numeric",
    month: "short",
    hour: "2-digit",
    minute: "2-digit",
  });
}

function clock(ms: number): string {
  return new Date(ms).toLocaleTimeString(locale(), { hour: "2-digit", minute: "2-digit" });
}

/** When it starts (scheduled) or started; undefined for one started by hand, not yet started. */
export function startMs(tournament: Tournament): number | undefined {
  return timestampMs(tournament.startTime) ?? timestampMs(tournament.scheduledStartTime);
}

/** The check-in window [from, to) in ms, if the tournament has one. */
export function checkInWindow(tournament: Tournament): { from: number; to: number } | undefined {
  const start = timestampMs(tournament.scheduledStartTime);
  if (start === undefined || !tournament.checkInMinutes) return undefined;
  return { from: start - tournament.checkInMinutes * 60_000, to: start };
}

export function startLine(tournament: Tournament): string {
  const started = timestampMs(tournament.startTime);
  if (started !== undefined) return t("tn_started_at", { time: longWhen(started) });
  const scheduled = timestampMs(tournament.scheduledStartTime);
  if (scheduled !== undefined) return t("tn_starts_at", { time: longWhen(scheduled) });
  return t("tn_starts_by_hand");
}

export function checkInLine(tournament: Tournament): string {
  const span = checkInWindow(tournament);
  if (!span) return "";
  return t("tn_check_in_window", { from: clock(span.from), to: clock(span.to), minutes: tournament.checkInMinutes });
}

export function playersLine(tournament: Tournament): string {
  const line = t("tn_players", { registered: tournament.registeredPlayers, max: tournament.maxPlayers });
  return tournament.substitutes ? `${line} · ${t("tn_substitutes_waiting", { count: tournament.substitutes })}` : line;
}

export function moneyLine(tournament: Tournament): string {
  const fee = tournament.entryFee ? t("tn_entry_fee", { chips: chips(tournament.entryFee) }) : t("tn_free_entry");
  return `${fee} · ${t("tn_prize_pool", { chips: chips(tournament.prizePool) })}`;
}

export function rulesLine(rules: RuleSet | undefined): string {
  let preset: string;
  switch (rules?.preset) {
    case RulePreset.BOOMBALA:
      preset = t("preset_boombala");
      break;
    case RulePreset.NORTH_SULTAN:
      preset = t("preset_north_sultan");
      break;
    default:
      preset = t("preset_oyna");
  }
  if (rules?.matchEnd === MatchEnd.FIXED_HANDS && rules.matchHands) return `${preset} · ${t("tn_hands_per_match", { hands: rules.matchHands })}`;
  if (rules?.matchEnd === MatchEnd.TARGET_TOTAL && rules.matchTarget) return `${preset} · ${t("tn_target_per_match", { target: chips(rules.matchTarget) })}`;
  return preset;
}
