// The tournaments list (/tournaments): upcoming, registering, running and finished tournaments
// (ListTournaments by state, one category, a page at a time), each with its start, players,
// entry fee and prize pool and check-in window; and the routes' login. A tournament's own page
// is tournament.ts, the facts both show tournamentFacts.ts.
import { TournamentState, type Tournament } from "./gen/okey/v1/lobby_pb.js";
import { explain, lobby, retrying } from "./api.js";
import { h } from "./dom.js";
import { identity, login } from "./identity.js";
import { t } from "./i18n.js";
import { mountTournament } from "./tournament.js";
import { checkInLine, moneyLine, navigate, pageLink, playersLine, startLine, stateName, stateText } from "./tournamentFacts.js";

const PAGE = 20;

/** The routes /tournaments and /tournaments/ID: log in as the kept guest (a new visitor starts in
 * the lobby, where the name is asked), then draw the page. */
export async function openTournaments(root: HTMLElement, path: string): Promise<void> {
  const kept = identity();
  if (!kept) return navigate("/");
  root.replaceChildren(h("p", { role: "status" }, t("logging_in")));
  try {
    await login(kept.displayName);
  } catch (error) {
    root.replaceChildren(h("p", { class: "message error", role: "alert" }, explain(error).sentence));
    return;
  }
  if (window.location.pathname !== path) return; // the player went elsewhere meanwhile
  const one = path.match(/^\/tournaments\/([^/]+)/);
  if (one) mountTournament(root, decodeURIComponent(one[1]));
  else mountTournaments(root);
}

// The list page ----------------------------------------------------------------------------------

type Tab = "upcoming" | "registering" | "running" | "finished";

const TABS: Record<Tab, TournamentState[]> = {
  upcoming: [TournamentState.UPCOMING],
  registering: [TournamentState.REGISTERING],
  running: [TournamentState.RUNNING],
  finished: [TournamentState.FINISHED, TournamentState.CANCELLED],
};

function tabText(tab: Tab): string {
  switch (tab) {
    case "upcoming":
      return t("tn_tab_upcoming");
    case "registering":
      return t("tn_tab_registering");
    case "running":
      return t("tn_tab_running");
    case "finished":
      return t("tn_tab_finished");
  }
}

function item(tournament: Tournament): HTMLElement {
  const id = tournament.tournamentId;
  const checkIn = checkInLine(tournament);
  return h(
    "li",
    { class: "tn-item", "data-tournament-id": id, "data-state": stateName(tournament.state) },
    h(
      "h3",
      {},
      pageLink(`/tournaments/${encodeURIComponent(id)}`, { class: "tn-name" }, tournament.name),
    ),
    h(
      "p",
      { class: "tn-tags" },
      h("span", { class: `tn-state ${stateName(tournament.state).toLowerCase()}` }, stateText(tournament.state)),
      tournament.category ? h("span", { class: "tn-category" }, tournament.category) : "",
    ),
    h("p", { class: "tn-start" }, startLine(tournament)),
    h("p", { class: "tn-players", "data-registered": tournament.registeredPlayers, "data-max": tournament.maxPlayers }, playersLine(tournament)),
    h("p", { class: "tn-money", "data-entry-fee": String(tournament.entryFee), "data-prize-pool": String(tournament.prizePool) }, moneyLine(tournament)),
    checkIn ? h("p", { class: "tn-check-in" }, checkIn) : "",
  );
}

/** The list: a tab per state, a category, the tournaments newest first, a page at a time. The
 * tab and the category are in the address (?tab=running&category=weekly), so a reload or a
 * shared link shows the same list. */
export function mountTournaments(root: HTMLElement): void {
  const query = new URLSearchParams(window.location.search);
  let tab: Tab = (query.get("tab") as Tab) in TABS ? (query.get("tab") as Tab) : "registering";
  let category = query.get("category") ?? "";
  const error = h("p", { class: "message error", role: "alert" });
  const list = h("ul", { class: "tn-list", "aria-label": t("tournaments") });
  const empty = h("p", { class: "empty", hidden: true }, t("tn_none"));
  const more = h("button", { type: "button", class: "more", hidden: true }, t("tn_more"));
  const tabs = h("div", { class: "tn-tabs", role: "group", "aria-label": t("tn_state") });
  const seen = h("datalist", { id: "tn-categories" });
  const categoryInput = h("input", {
    id: "tn-category",
    name: "category",
    value: category,
    list: "tn-categories",
    maxlength: 32,
    pattern: "[a-z0-9\\-]*",
    autocomplete: "off",
    autocapitalize: "none",
    placeholder: t("tn_category_any"),
  });
  const filter = h(
    "form",
    { class: "tn-filter", role: "search", "aria-label": t("tn_category") },
    h("label", { for: "tn-category" }, t("tn_category")),
    categoryInput,
    seen,
    h("button", { type: "submit" }, t("tn_filter")),
  );
  const section = h(
    "section",
    { class: "tournaments", "data-tab": tab },
    pageLink("/", { class: "back" }, t("back_to_lobby")),
    h("h2", {}, t("tournaments")),
    tabs,
    filter,
    error,
    list,
    empty,
    more,
  );
  root.replaceChildren(section);

  const categories = new Set<string>();
  let token = "";
  let asked = 0; // a newer question makes an older answer moot
  const fail = (e: unknown) => {
    const refusal = explain(e);
    error.dataset.reason = refusal.reason;
    error.textContent = refusal.sentence;
  };
  const page = (first: boolean) => {
    const question = first ? ++asked : asked;
    if (first) token = "";
    more.disabled = true;
    error.textContent = "";
    retrying(() => lobby.listTournaments({ states: TABS[tab], category, pageSize: PAGE, pageToken: token }), 10)
      .then((answer) => {
        if (question !== asked) return;
        if (first) list.replaceChildren();
        for (const tournament of answer.tournaments) {
          list.append(item(tournament));
          if (tournament.category && !categories.has(tournament.category)) {
            categories.add(tournament.category);
            seen.append(h("option", { value: tournament.category }));
          }
        }
        token = answer.nextPageToken;
        more.hidden = !token;
        more.disabled = false;
        empty.hidden = list.childElementCount > 0;
        section.dataset.loaded = "true";
      })
      .catch((e) => {
        if (question === asked) fail(e);
        more.disabled = false;
      });
  };
  const remember = () => {
    const params = new URLSearchParams({ tab });
    if (category) params.set("category", category);
    history.replaceState(null, "", `/tournaments?${params}`);
    section.dataset.tab = tab;
    section.dataset.loaded = "false";
  };
  const drawTabs = () => {
    tabs.replaceChildren(
      ...(Object.keys(TABS) as Tab[]).map((name) =>
        h(
          "button",
          {
            type: "button",
            "data-tab": name,
            "aria-pressed": String(name === tab),
            onclick: () => {
              tab = name;
              drawTabs();
              remember();
              page(true);
            },
          },
          tabText(name),
        ),
      ),
    );
  };
  filter.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!categoryInput.checkValidity()) {
      error.dataset.reason = "BAD_CATEGORY";
      error.textContent = t("tn_bad_category");
      return;
    }
    category = categoryInput.value.trim();
    remember();
    page(true);
  });
  more.addEventListener("click", () => page(false));
  drawTabs();
  page(true);
}
