// A tournament's page (/tournaments/ID): what it is (description, schedule, rules, prizes), the
// player's own entry (register, unregister, check in during the window, with a countdown to the
// start), the bracket (each round's tables, each linking to watch it, the player's own to play
// it) and the standings, a page at a time. It follows the player's own stream (WatchPlayer:
// seated, eliminated, finished, check-in open, cancelled, dropped, promoted) rather than asking
// again and again; what no event of the player's tells (other tables finishing) comes from a
// light GetTournament every few seconds while it runs, which refreshes the standings when a
// table or a round has finished. Timers and the stream end once the page is left.
import { PlayerEventKind, TournamentState, type PlayerEvent, type Tournament, type TournamentStanding } from "./gen/okey/v1/lobby_pb.js";
import { BotLevel } from "./gen/okey/v1/common_pb.js";
import { explain, lobby, newRequestId, retrying } from "./api.js";
import { chips, timestampMs } from "./chips.js";
import { h } from "./dom.js";
import { identity, keepSeating } from "./identity.js";
import { sentenceCase, t } from "./i18n.js";
import {
  checkInLine,
  checkInWindow,
  longWhen,
  moneyLine,
  navigate,
  pageLink,
  playersLine,
  rulesLine,
  startLine,
  stateName,
  stateText,
} from "./tournamentFacts.js";
import { followPlayer } from "./tournamentStream.js";

const STANDINGS_PAGE = 50;
/** GetTournament while it runs (other tables' progress has no event of the player's). */
const RUNNING_REFRESH_MS = 15_000;
/** GetTournament while it registers (the players registered). */
const REGISTERING_REFRESH_MS = 30_000;
/** Own line's search: pages of the most GetTournamentStandings gives (1,024 players and their
 * substitutes fit in 5). */
const OWN_PAGE = 500;

/** The player's own entry, for the page and its tests (data-my-status). */
type MyStatus = "none" | "registered" | "substitute" | "checked-in" | "playing" | "eliminated" | "forfeited" | "disqualified" | "finished";

function statusText(status: MyStatus, own: TournamentStanding | undefined): string {
  switch (status) {
    case "none":
      return t("tn_status_none");
    case "registered":
      return t("tn_status_registered");
    case "substitute":
      return own?.checkedIn ? `${t("tn_status_substitute")} · ${t("tn_status_checked_in")}` : t("tn_status_substitute");
    case "checked-in":
      return t("tn_status_checked_in");
    case "playing":
      return t("tn_status_playing");
    case "eliminated":
      return t("tn_status_eliminated", { round: own?.roundReached ?? 0 });
    case "forfeited":
      return t("tn_status_forfeited");
    case "disqualified":
      return own?.disqualificationReason ? `${t("tn_status_disqualified")} ${own.disqualificationReason}` : t("tn_status_disqualified");
    case "finished":
      return t("tn_status_place", { place: own?.rank ?? 0 });
  }
}

function cancelText(reason: string): string {
  if (reason === "TOO_FEW_PLAYERS") return t("tn_cancel_too_few");
  if (reason === "CANCELLED_BY_ORGANISER") return t("tn_cancel_organiser");
  return reason;
}

function botText(level: BotLevel): string {
  switch (level) {
    case BotLevel.EASY:
      return t("level_easy");
    case BotLevel.HARD:
      return t("level_hard");
    case BotLevel.NORMAL:
      return t("level_normal");
    default:
      return "";
  }
}

/** "1:02:03", "12:34", or "2 d 3 h" beyond a day. */
function countdown(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = String(seconds % 60).padStart(2, "0");
  if (days) return t("tn_days_hours", { days, hours });
  return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${rest}` : `${minutes}:${rest}`;
}

/** The link to play at one's own seat: the seat is kept first, so the table page sits there. */
function seatLink(tableId: string, seat: number, text: string, extra = ""): HTMLAnchorElement {
  const path = `/table/${encodeURIComponent(tableId)}`;
  const link = h("a", { href: path, class: `table-link mine ${extra}`.trim(), "data-table-id": tableId, "data-seat": seat }, text);
  link.addEventListener("click", (event) => {
    keepSeating({ tableId, seat });
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(path);
  });
  return link;
}

export function mountTournament(root: HTMLElement, tournamentId: string): void {
  const me = identity()?.playerId ?? "";
  const abort = new AbortController();
  let tournament: Tournament | undefined;
  let own: TournamentStanding | undefined;
  // The snapshot's word (or an answer's) until the standings have the player's line.
  let registered = false;
  const seats = new Map<string, number>(); // the player's tables in this tournament: seat
  const names = new Map<string, string>();
  let loading = false;
  let again: boolean | undefined; // a refresh asked for while one ran (true: with standings)
  let nextRefresh = Number.POSITIVE_INFINITY;
  let standingsToken = "";

  const error = h("p", { class: "message error", role: "alert" });
  const note = h("p", { class: "message tn-note", role: "status" });
  const head = h("div", { class: "tn-head" }, h("h2", {}, t("tn_loading")));
  const mine = h("section", { class: "card tn-mine", "aria-label": t("tn_your_entry") });
  const facts = h("section", { class: "card tn-facts", "aria-label": t("tn_about") });
  const bracket = h("section", { class: "card tn-bracket", "aria-label": t("tn_bracket") });
  const body = h("tbody");
  const moreStandings = h("button", { type: "button", class: "more", hidden: true }, t("tn_more_standings"));
  const noStandings = h("p", { class: "empty", hidden: true }, t("tn_no_standings"));
  const standings = h(
    "section",
    { class: "card tn-standings", "aria-label": t("tn_standings") },
    h("h3", {}, t("tn_standings")),
    h(
      "div",
      { class: "entries-scroll" },
      h(
        "table",
        { class: "entries standings" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, t("tn_col_rank")),
            h("th", { scope: "col" }, t("tn_col_player")),
            h("th", { scope: "col", class: "num" }, t("tn_col_round")),
            h("th", { scope: "col", class: "num" }, t("tn_col_total")),
            h("th", { scope: "col", class: "num" }, t("tn_col_wins")),
            h("th", { scope: "col" }, t("tn_col_table")),
          ),
        ),
        body,
      ),
    ),
    noStandings,
    moreStandings,
  );
  const section = h(
    "section",
    { class: "tournament-page", "data-tournament-id": tournamentId, "data-state": "", "data-my-status": "" },
    pageLink("/tournaments", { class: "back" }, t("tn_all")),
    head,
    error,
    note,
    mine,
    facts,
    bracket,
    standings,
  );
  root.replaceChildren(section);

  const fail = (e: unknown) => {
    const refusal = explain(e);
    error.dataset.reason = refusal.reason;
    error.textContent = refusal.sentence;
  };

  const isRegistered = () => own !== undefined || registered;

  const myStatus = (): MyStatus => {
    if (!tournament || !isRegistered()) return "none";
    if (own?.disqualified && tournament.state !== TournamentState.CANCELLED) return "disqualified";
    switch (tournament.state) {
      case TournamentState.RUNNING:
        if (!own) return "registered";
        return own.forfeited ? "forfeited" : own.eliminated ? "eliminated" : "playing";
      case TournamentState.FINISHED:
        if (!own) return "registered";
        return own.forfeited ? "forfeited" : "finished";
      case TournamentState.CANCELLED:
        return "none";
      default:
        if (own?.substitute) return "substitute";
        return own?.checkedIn ? "checked-in" : "registered";
    }
  };

  /** The player's table in the round in play, and the seat if the stream told it. */
  const myTable = (): { tableId: string; seat: number | undefined } | undefined => {
    const round = tournament?.rounds.find((r) => r.number === tournament?.currentRound);
    if (!round || tournament?.state !== TournamentState.RUNNING) return undefined;
    for (const tableId of round.tableIds) {
      if (seats.has(tableId)) return { tableId, seat: seats.get(tableId) };
    }
    if (own?.tableId && !own.eliminated && round.tableIds.includes(own.tableId)) return { tableId: own.tableId, seat: undefined };
    return undefined;
  };

  // The player's entry ------------------------------------------------------------------------

  const act = (button: HTMLButtonElement, call: (requestId: string) => Promise<{ tournament?: Tournament }>, done: string) => {
    button.disabled = true;
    button.dataset.busy = "true"; // the countdown's tick leaves it disabled until redrawn
    error.textContent = "";
    note.textContent = "";
    const requestId = newRequestId(); // the same on every retry of this click
    retrying(() => call(requestId))
      .then(async (answer) => {
        if (answer.tournament) tournament = answer.tournament;
        note.textContent = done;
        await reload(true);
      })
      .catch((e) => {
        fail(e);
        drawMine();
      });
  };

  const register = (event: Event) =>
    act(event.currentTarget as HTMLButtonElement, (requestId) => lobby.registerForTournament({ requestId, tournamentId }), t("tn_registered_note"));
  const unregister = (event: Event) => {
    registered = false;
    act(event.currentTarget as HTMLButtonElement, (requestId) => lobby.unregisterFromTournament({ requestId, tournamentId }), t("tn_unregistered_note"));
  };
  const checkIn = (event: Event) =>
    act(event.currentTarget as HTMLButtonElement, (requestId) => lobby.checkInToTournament({ requestId, tournamentId }), t("tn_checked_in_note"));

  const drawMine = () => {
    if (!tournament) return;
    const status = myStatus();
    section.dataset.myStatus = status;
    section.dataset.checkedIn = String(!!own?.checkedIn);
    const parts: Array<HTMLElement | string> = [
      h("h3", {}, t("tn_your_entry")),
      h("p", { class: "tn-my-status", "data-status": status }, statusText(status, own)),
    ];
    const start = timestampMs(tournament.scheduledStartTime);
    const open = tournament.state === TournamentState.UPCOMING || tournament.state === TournamentState.REGISTERING;
    if (open && start !== undefined) parts.push(h("p", { class: "tn-countdown", role: "timer", "data-start": start }));
    const buttons = h("div", { class: "tn-actions" });
    if (tournament.state === TournamentState.UPCOMING) {
      const opens = timestampMs(tournament.registrationOpenTime);
      if (opens !== undefined) parts.push(h("p", { class: "tn-opens" }, t("tn_registration_opens", { time: longWhen(opens) })));
    } else if (tournament.state === TournamentState.REGISTERING && status !== "disqualified") {
      if (!isRegistered()) {
        const full = tournament.registeredPlayers >= tournament.maxPlayers;
        buttons.append(
          h("button", { type: "button", class: "primary register", onclick: register }, full && tournament.maxSubstitutes ? t("tn_register_substitute") : t("tn_register")),
        );
      } else {
        const span = checkInWindow(tournament);
        if (span && !own?.checkedIn) {
          const now = Date.now();
          const inWindow = now >= span.from && now < span.to;
          buttons.append(
            h("button", { type: "button", class: "primary check-in", "data-from": span.from, "data-to": span.to, disabled: !inWindow, onclick: checkIn }, t("tn_check_in")),
          );
          parts.push(h("p", { class: "tn-check-in-note", "data-from": span.from }));
        }
        buttons.append(h("button", { type: "button", class: "unregister", onclick: unregister }, t("tn_unregister")));
      }
    }
    const table = myTable();
    if (table) {
      const index = tournament.rounds.find((r) => r.number === tournament?.currentRound)?.tableIds.indexOf(table.tableId) ?? 0;
      buttons.append(
        table.seat === undefined
          ? pageLink(`/watch/${encodeURIComponent(table.tableId)}`, { class: "table-link mine play-seat", "data-table-id": table.tableId }, t("tn_watch_your_table", { table: index + 1 }))
          : seatLink(table.tableId, table.seat, t("tn_play_your_table", { table: index + 1 }), "play-seat"),
      );
    }
    if (buttons.childElementCount) parts.push(buttons);
    mine.replaceChildren(...parts);
    tick();
  };

  // What it is -------------------------------------------------------------------------------

  const drawHead = (tn: Tournament) => {
    section.dataset.state = stateName(tn.state);
    section.dataset.currentRound = String(tn.currentRound);
    section.dataset.paused = String(tn.paused);
    const nextRound = timestampMs(tn.nextRoundTime);
    const winner = tn.winnerPlayerId ? names.get(tn.winnerPlayerId) ?? "" : "";
    head.replaceChildren(
      h("h2", {}, tn.name),
      h(
        "p",
        { class: "tn-tags" },
        h("span", { class: `tn-state ${stateName(tn.state).toLowerCase()}` }, stateText(tn.state)),
        tn.category ? h("span", { class: "tn-category" }, tn.category) : "",
      ),
      tn.state === TournamentState.CANCELLED && tn.cancelReason ? h("p", { class: "tn-cancelled", "data-reason": tn.cancelReason }, cancelText(tn.cancelReason)) : "",
      tn.paused && tn.state === TournamentState.RUNNING ? h("p", { class: "tn-paused", role: "status" }, t("tn_paused")) : "",
      nextRound !== undefined && tn.state === TournamentState.RUNNING ? h("p", { class: "tn-break", role: "timer", "data-at": nextRound }) : "",
      winner ? h("p", { class: "tn-winner" }, t("tn_winner", { name: winner })) : "",
    );
  };

  const drawFacts = (tn: Tournament) => {
    const schedule: Array<HTMLElement | string> = [];
    const opens = timestampMs(tn.registrationOpenTime);
    if (opens !== undefined) schedule.push(h("li", {}, t("tn_registration_opens", { time: longWhen(opens) })));
    schedule.push(h("li", { class: "tn-start" }, startLine(tn)));
    const checkIn = checkInLine(tn);
    if (checkIn) schedule.push(h("li", { class: "tn-check-in" }, checkIn));
    schedule.push(h("li", { class: "tn-players" }, playersLine(tn)));
    if (tn.minPlayers > 2) schedule.push(h("li", {}, t("tn_min_players", { count: tn.minPlayers })));
    if (tn.maxSubstitutes) schedule.push(h("li", {}, t("tn_max_substitutes", { count: tn.maxSubstitutes })));
    const rules: Array<HTMLElement | string> = [
      h("li", { class: "tn-rules" }, rulesLine(tn.rules)),
      h("li", {}, tn.plannedRounds ? t("tn_rounds_planned", { rounds: tn.plannedRounds }) : t("tn_rounds_to_final")),
      h("li", {}, sentenceCase(t("tn_advance", { count: tn.advancePerTable || 1 }))),
    ];
    const bots = botText(tn.botLevel);
    if (bots) rules.push(h("li", {}, t("tn_bots", { level: bots })));
    if (tn.noShowPolicy?.missedTurns) rules.push(h("li", {}, t("tn_no_show", { turns: tn.noShowPolicy.missedTurns })));
    if (tn.pace?.roundMinutes) rules.push(h("li", {}, t("tn_round_minutes", { minutes: tn.pace.roundMinutes })));
    if (tn.pace?.breakSeconds) rules.push(h("li", {}, t("tn_break_between", { time: countdown(tn.pace.breakSeconds * 1000) })));
    if (tn.pace?.seedByRating) rules.push(h("li", {}, t("tn_seeded")));
    const prizes = h("ul", { class: "tn-prizes" });
    for (const prize of tn.prizes) {
      const what =
        prize.prize.case === "amount"
          ? t("tn_prize_chips", { chips: chips(prize.prize.value) })
          : prize.prize.case === "sharePercent"
            ? t("tn_prize_share", { percent: prize.prize.value })
            : "";
      prizes.append(h("li", { "data-place": prize.place }, `${t("tn_place", { place: prize.place })}: ${what}`));
    }
    facts.replaceChildren(
      tn.description ? h("p", { class: "tn-description" }, tn.description) : "",
      h("h3", {}, t("tn_schedule")),
      h("ul", { class: "tn-schedule" }, ...schedule),
      h("h3", {}, t("tn_rules")),
      h("ul", { class: "tn-rules-list" }, ...rules),
      h("h3", {}, t("tn_prizes")),
      h("p", { class: "tn-money", "data-entry-fee": String(tn.entryFee), "data-prize-pool": String(tn.prizePool) }, moneyLine(tn)),
      tn.prizes.length ? prizes : h("p", {}, t("tn_no_prizes")),
    );
  };

  const drawBracket = (tn: Tournament) => {
    const parts: Array<HTMLElement | string> = [h("h3", {}, t("tn_bracket"))];
    if (!tn.rounds.length) parts.push(h("p", { class: "empty" }, t("tn_no_rounds")));
    const ownTable = myTable();
    for (const round of [...tn.rounds].reverse()) {
      const current = round.number === tn.currentRound && tn.state === TournamentState.RUNNING;
      const deadline = timestampMs(round.deadline);
      const tables = h("ol", { class: "tn-tables" });
      round.tableIds.forEach((tableId, index) => {
        const label = t("tn_table", { table: index + 1 });
        const seat = seats.get(tableId);
        const link =
          current && ownTable?.tableId === tableId && seat !== undefined
            ? seatLink(tableId, seat, `${label} · ${t("tn_your_table")}`)
            : pageLink(
                `/watch/${encodeURIComponent(tableId)}`,
                { class: `table-link${own?.tableId === tableId || seat !== undefined ? " mine" : ""}`, "data-table-id": tableId },
                own?.tableId === tableId || seat !== undefined ? `${label} · ${t("tn_your_table")}` : label,
              );
        tables.append(h("li", {}, link));
      });
      parts.push(
        h(
          "div",
          { class: `tn-round${current ? " current" : ""}`, "data-round": round.number, "data-tables": round.tableIds.length, "data-finished": round.tablesFinished },
          h("h4", {}, t("tn_round", { round: round.number })),
          h(
            "p",
            { class: "tn-round-facts" },
            t("tn_tables_finished", { finished: round.tablesFinished, tables: round.tableIds.length }),
            " · ",
            t("tn_advance", { count: round.advancePerTable }),
            deadline !== undefined ? ` · ${t("tn_round_deadline", { time: longWhen(deadline) })}` : "",
          ),
          tables,
        ),
      );
    }
    bracket.replaceChildren(...parts);
  };

  const draw = () => {
    if (!tournament) return;
    drawHead(tournament);
    drawMine();
    drawFacts(tournament);
    drawBracket(tournament);
  };

  // The standings ----------------------------------------------------------------------------

  const standingRow = (line: TournamentStanding): HTMLElement => {
    names.set(line.playerId, line.displayName);
    const marks: string[] = [];
    if (line.disqualified) marks.push(t("tn_mark_disqualified"));
    else if (line.forfeited) marks.push(t("tn_mark_forfeited"));
    else if (line.eliminated) marks.push(t("tn_mark_eliminated"));
    if (line.substitute) marks.push(t("tn_mark_substitute"));
    if (line.checkedIn && tournament?.state !== TournamentState.RUNNING && tournament?.state !== TournamentState.FINISHED) marks.push(t("tn_mark_checked_in"));
    const classes = ["standing", line.disqualified && "disqualified", line.forfeited && "forfeited", line.eliminated && "eliminated", line.playerId === me && "mine"].filter(Boolean).join(" ");
    return h(
      "tr",
      {
        class: classes,
        "data-player-id": line.playerId,
        "data-rank": line.rank,
        "data-forfeited": String(line.forfeited),
        "data-eliminated": String(line.eliminated),
        "data-disqualified": String(line.disqualified),
      },
      h("td", { class: "rank" }, line.rank),
      h(
        "td",
        { class: "who" },
        line.displayName,
        line.playerId === me ? ` (${t("you")})` : "",
        ...marks.map((mark) => h("span", { class: "mark" }, mark)),
      ),
      h("td", { class: "num" }, line.roundReached || "–"),
      h("td", { class: "num" }, line.roundReached ? line.matchTotal : "–"),
      h("td", { class: "num" }, line.matchesWon),
      h("td", { class: "for" }, line.tableId ? pageLink(`/watch/${encodeURIComponent(line.tableId)}`, { class: "table-link", "data-table-id": line.tableId }, t("tn_watch")) : ""),
    );
  };

  const loadStandings = async (first: boolean) => {
    moreStandings.disabled = true;
    const answer = await retrying(
      () => lobby.getTournamentStandings({ tournamentId, pageSize: STANDINGS_PAGE, pageToken: first ? "" : standingsToken }),
      10,
    );
    if (first) body.replaceChildren();
    for (const line of answer.standings) body.append(standingRow(line));
    standingsToken = answer.nextPageToken;
    moreStandings.hidden = !standingsToken;
    moreStandings.disabled = false;
    noStandings.hidden = body.childElementCount > 0;
  };
  moreStandings.addEventListener("click", () => void loadStandings(false).catch(fail));

  /** The player's own line, wherever it is in the standings. */
  const findOwn = async (): Promise<TournamentStanding | undefined> => {
    if (!me) return undefined;
    let token = "";
    for (let page = 0; page < 5; page++) {
      const answer = await retrying(() => lobby.getTournamentStandings({ tournamentId, pageSize: OWN_PAGE, pageToken: token }), 10);
      const line = answer.standings.find((s) => s.playerId === me);
      if (line) return line;
      token = answer.nextPageToken;
      if (!token) break;
    }
    return undefined;
  };

  // Keeping it current -----------------------------------------------------------------------

  const finishedTables = (tn: Tournament | undefined) => tn?.rounds.reduce((sum, r) => sum + r.tablesFinished, 0) ?? 0;

  const scheduleNext = () => {
    const now = Date.now();
    const tn = tournament;
    let next = Number.POSITIVE_INFINITY;
    if (tn?.state === TournamentState.RUNNING) next = now + RUNNING_REFRESH_MS;
    if (tn?.state === TournamentState.REGISTERING) next = now + REGISTERING_REFRESH_MS;
    // Just after registration opens and after a scheduled start, the page asks again.
    const breakEnds = timestampMs(tn?.nextRoundTime);
    if (breakEnds !== undefined && breakEnds > now) next = Math.min(next, breakEnds + 1500);
    for (const stamp of [tn?.registrationOpenTime, tn?.scheduledStartTime]) {
      const at = timestampMs(stamp);
      if (at !== undefined && at > now && (tn?.state === TournamentState.UPCOMING || tn?.state === TournamentState.REGISTERING)) next = Math.min(next, at + 1500);
    }
    nextRefresh = next;
  };

  /** GetTournament; the standings and the player's line too with ``withStandings``, or when a
   * table or a round has finished since the last answer. */
  const reload = async (withStandings: boolean): Promise<void> => {
    if (loading) {
      again = (again ?? false) || withStandings;
      return;
    }
    loading = true;
    try {
      const before = tournament;
      const answer = await retrying(() => lobby.getTournament({ tournamentId }), 10);
      tournament = answer.tournament;
      const moved =
        !before ||
        before.state !== tournament?.state ||
        before.currentRound !== tournament?.currentRound ||
        finishedTables(before) !== finishedTables(tournament);
      if (withStandings || moved) {
        own = await findOwn();
        if (own) registered = true;
        await loadStandings(true);
      }
      draw();
    } catch (e) {
      fail(e);
    } finally {
      loading = false;
      scheduleNext();
      section.dataset.loaded = "true";
    }
    if (again !== undefined) {
      const withThem = again;
      again = undefined;
      await reload(withThem);
    }
  };

  const onEvent = (event: PlayerEvent) => {
    const ours = event.tournamentId === tournamentId;
    const atOurTable = !!event.tableId && !!tournament?.rounds.some((r) => r.tableIds.includes(event.tableId));
    if (!ours && !atOurTable) return;
    switch (event.kind) {
      case PlayerEventKind.TOURNAMENT_SEATED:
        seats.set(event.tableId, event.seat);
        note.textContent = t("tn_ev_seated", { round: event.round });
        break;
      case PlayerEventKind.TOURNAMENT_STARTING:
        note.textContent = t("tn_ev_starting");
        break;
      case PlayerEventKind.TOURNAMENT_ELIMINATED:
        note.textContent = t("tn_ev_eliminated", { round: event.round });
        break;
      case PlayerEventKind.TOURNAMENT_FINISHED:
        note.textContent = t("tn_ev_finished", { place: event.place });
        break;
      case PlayerEventKind.TOURNAMENT_CHECK_IN_OPEN:
        note.textContent = t("tn_ev_check_in_open");
        break;
      case PlayerEventKind.TOURNAMENT_CANCELLED:
        registered = false;
        note.textContent = `${t("tn_ev_cancelled")} ${cancelText(event.reason)}`;
        break;
      case PlayerEventKind.TOURNAMENT_DROPPED:
        registered = false;
        note.textContent = event.reason === "NO_PLACE_LEFT" ? t("tn_ev_dropped_no_place") : t("tn_ev_dropped_not_checked_in");
        break;
      case PlayerEventKind.TOURNAMENT_PROMOTED:
        note.textContent = t("tn_ev_promoted");
        break;
      case PlayerEventKind.TOURNAMENT_DISQUALIFIED:
        note.textContent = event.reason ? `${t("tn_status_disqualified")} ${event.reason}` : t("tn_status_disqualified");
        break;
      case PlayerEventKind.TOURNAMENT_PAUSED:
        note.textContent = t("tn_paused");
        break;
      case PlayerEventKind.TOURNAMENT_RESUMED:
        note.textContent = t("tn_ev_resumed");
        break;
      case PlayerEventKind.MATCH_ENDED:
        seats.delete(event.tableId); // nothing left to play there: the page offers to watch it
        break;
      case PlayerEventKind.TURN_STARTED:
        if (seats.has(event.tableId)) note.textContent = t("tn_ev_your_turn");
        return;
      default:
        return; // a kind this page does not know or need
    }
    void reload(true);
  };

  // Once a second: the countdown and the check-in button; a refresh when one is due; and the
  // end of it all once the page has been left (another route drew over it).
  const tick = () => {
    if (!section.isConnected) {
      abort.abort();
      window.clearInterval(timer);
      return;
    }
    const now = Date.now();
    const clock = section.querySelector<HTMLElement>(".tn-countdown");
    if (clock) {
      const start = Number(clock.dataset.start);
      clock.textContent = start > now ? t("tn_starts_in", { time: countdown(start - now) }) : t("tn_starting_now");
    }
    const pause = section.querySelector<HTMLElement>(".tn-break");
    if (pause) {
      const at = Number(pause.dataset.at);
      pause.textContent = at > now ? t("tn_next_round_in", { time: countdown(at - now) }) : t("tn_next_round_now");
    }
    const button = section.querySelector<HTMLButtonElement>("button.check-in");
    if (button) {
      const inWindow = now >= Number(button.dataset.from) && now < Number(button.dataset.to);
      button.disabled = !inWindow || button.dataset.busy === "true";
      section.dataset.checkInOpen = String(inWindow);
      const why = section.querySelector<HTMLElement>(".tn-check-in-note");
      if (why) why.textContent = inWindow ? t("tn_check_in_now") : t("tn_check_in_opens", { time: countdown(Number(button.dataset.from) - now) });
    }
    if (now >= nextRefresh && !loading) void reload(false);
  };
  const timer = window.setInterval(tick, 1000);

  void followPlayer(
    {
      onSnapshot: (snapshot) => {
        registered = snapshot.tournamentIds.includes(tournamentId) || own !== undefined;
        for (const seat of snapshot.seats) if (seat.tournamentId === tournamentId) seats.set(seat.tableId, seat.seat);
        if (tournament) draw();
      },
      onEvent,
    },
    abort.signal,
  );
  void reload(true);
}
