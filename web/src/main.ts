// The page's routes: / (the lobby, or back to the table being played), /table/ID (your seat
// there), /watch/ID (a spectator), /wallet (the wallet's history), /tournaments and
// /tournaments/ID (tournaments.ts, tournament.ts). The language switch redraws
// the current route.
import { h } from "./dom.js";
import type { Game } from "./game.js";
import { identity, keepSeating, login, seating, type Seating } from "./identity.js";
import { language, onLanguageChange, setLanguage, t, type Language } from "./i18n.js";
import { explain } from "./api.js";
import { mountLobby } from "./lobby.js";
import { mountTable } from "./screen.js";
import { openTournaments } from "./tournaments.js";
import { mountWallet } from "./wallet.js";
import "./style.css";

const app = document.getElementById("app")!;
let game: Game | undefined;

/** The switch: its label in the page's language, the current language pressed. */
function showLanguage(): void {
  document.querySelector(".lang")?.setAttribute("aria-label", t("language"));
  for (const button of document.querySelectorAll<HTMLButtonElement>("[data-lang]")) {
    button.setAttribute("aria-pressed", String(button.dataset.lang === language()));
  }
}

function go(path: string): void {
  if (window.location.pathname !== path) history.pushState(null, "", path);
  route();
}

function route(): void {
  game?.stop();
  game = undefined;
  document.documentElement.lang = language();
  document.getElementById("title")!.textContent = t("title");
  showLanguage();
  const path = window.location.pathname;
  const watching = path.match(/^\/watch\/([^/]+)/);
  const playing = path.match(/^\/table\/([^/]+)/);
  if (watching) return void enter(decodeURIComponent(watching[1]), undefined);
  if (path === "/wallet") return void wallet();
  if (path === "/tournaments" || path.startsWith("/tournaments/")) return void openTournaments(app, path);
  if (playing) {
    const kept = seating();
    const tableId = decodeURIComponent(playing[1]);
    if (kept?.tableId === tableId) return void enter(tableId, kept.seat);
    return void enter(tableId, undefined);
  }
  const kept = seating();
  if (kept && identity()) return go(`/table/${encodeURIComponent(kept.tableId)}`);
  mountLobby(
    app,
    (seated: Seating) => {
      keepSeating(seated);
      go(`/table/${encodeURIComponent(seated.tableId)}`);
    },
    () => go("/wallet"),
  );
}

async function wallet(): Promise<void> {
  const kept = identity();
  if (!kept) return go("/");
  app.replaceChildren(h("p", { role: "status" }, t("logging_in")));
  try {
    await login(kept.displayName);
  } catch (error) {
    app.replaceChildren(h("p", { class: "message error", role: "alert" }, explain(error).sentence));
    return;
  }
  if (window.location.pathname === "/wallet") mountWallet(app, () => go("/"));
}

async function enter(tableId: string, seat: number | undefined): Promise<void> {
  app.replaceChildren(h("p", { role: "status" }, t("logging_in")));
  try {
    await login(identity()?.displayName ?? (language() === "tr" ? "İzleyici" : "Spectator"));
  } catch (error) {
    app.replaceChildren(h("p", { class: "message error", role: "alert" }, explain(error).sentence));
    return;
  }
  game = mountTable(app, tableId, seat, () => {
    keepSeating(undefined);
    go("/");
  });
}

for (const button of document.querySelectorAll<HTMLButtonElement>("[data-lang]")) {
  button.addEventListener("click", () => setLanguage(button.dataset.lang as Language));
}
onLanguageChange(() => {
  // At a table the screen is drawn again in the new language, the stream kept open.
  if (!game) return route();
  document.documentElement.lang = language();
  document.getElementById("title")!.textContent = t("title");
  showLanguage();
  game.refresh();
});
window.addEventListener("popstate", route);
route();
