// The player's chips: the lobby's card (GetWallet's balance and the chips held in play, the
// daily grant to claim or when it is next due: ClaimDailyChips) and the wallet's history page
// (/wallet: ListWalletEntries, newest first, a page at a time).
import { WalletEntryReason, type GetWalletResponse, type WalletEntry } from "./gen/okey/v1/lobby_pb.js";
import { explain, lobby, newRequestId, retrying } from "./api.js";
import { REASONS, chips, signedChips, timestampMs, when } from "./chips.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";

const PAGE = 20;

function balanceLine(wallet: GetWalletResponse): HTMLElement {
  return h("p", { class: "balance", "data-balance": String(wallet.balance) }, t("balance", { chips: chips(wallet.balance) }));
}

/** The lobby's card of the player's chips; ``load`` (after logging in) asks for the wallet. */
export function walletCard(openHistory: () => void): { element: HTMLElement; load: () => void } {
  const body = h("div", { class: "wallet-body" }, h("p", { class: "balance" }, t("wallet_loading")));
  const note = h("p", { class: "wallet-note", role: "status" });
  const error = h("p", { class: "message error", role: "alert" });
  const element = h(
    "section",
    { class: "card wallet", "aria-label": t("wallet_chips") },
    h("h2", {}, t("wallet_chips")),
    body,
    note,
    error,
    h("button", { type: "button", class: "link history", onclick: openHistory }, t("wallet_history")),
  );
  let dueTimer = 0;

  const show = (wallet: GetWalletResponse) => {
    const parts: HTMLElement[] = [balanceLine(wallet)];
    if (wallet.held) parts.push(h("p", { class: "held", "data-held": String(wallet.held) }, t("held", { chips: chips(wallet.held) })));
    const due = timestampMs(wallet.nextDailyClaimTime);
    window.clearTimeout(dueTimer);
    if (due !== undefined && wallet.dailyAmount) {
      if (due <= Date.now()) {
        parts.push(h("button", { type: "button", class: "primary claim", onclick: claim }, t("claim_daily", { chips: chips(wallet.dailyAmount) })));
      } else {
        parts.push(h("p", { class: "daily-next", "data-next": String(due) }, t("daily_next", { chips: chips(wallet.dailyAmount), time: when(due) })));
        // The button comes back by itself when the grant is due (a timer holds at most ~24 days).
        dueTimer = window.setTimeout(load, Math.min(due - Date.now() + 500, 2 ** 31 - 1));
      }
    }
    body.replaceChildren(...parts);
  };

  const load = () => {
    retrying(() => lobby.getWallet({}), 10)
      .then(show)
      .catch((e) => {
        const refusal = explain(e);
        error.dataset.reason = refusal.reason;
        error.textContent = refusal.sentence;
      });
  };

  // One click, one claim: its request id is the same on every retry of it (api.ts), and the
  // button stays disabled until the wallet is drawn again.
  function claim(event: Event) {
    (event.currentTarget as HTMLButtonElement).disabled = true;
    error.textContent = "";
    note.textContent = "";
    const requestId = newRequestId();
    retrying(() => lobby.claimDailyChips({ requestId }))
      .then((answer) => {
        note.textContent = t("daily_claimed", { chips: chips(answer.entry?.amount ?? 0n), balance: chips(answer.balance) });
        load();
      })
      .catch((e) => {
        const refusal = explain(e);
        error.dataset.reason = refusal.reason;
        error.textContent = refusal.sentence;
        load();
      });
  }

  return { element, load };
}

// The history page ---------------------------------------------------------------------------

function what(entry: WalletEntry): string {
  const reason = t(REASONS[entry.reason] ?? "entry_other");
  return entry.note ? `${reason}: ${entry.note}` : reason;
}

function belongsTo(entry: WalletEntry): string {
  if (entry.tableId) return t("entry_table", { id: entry.tableId });
  if (entry.tournamentId) return t("entry_tournament", { id: entry.tournamentId });
  return "";
}

function row(entry: WalletEntry): HTMLElement {
  const at = timestampMs(entry.createTime);
  return h(
    "tr",
    {
      class: `entry ${entry.amount < 0n ? "out" : "in"}`,
      "data-reason": WalletEntryReason[entry.reason] ?? "UNSPECIFIED",
      "data-amount": String(entry.amount),
      "data-table-id": entry.tableId,
      "data-tournament-id": entry.tournamentId,
    },
    h("td", { class: "when" }, at === undefined ? "" : when(at)),
    h("td", { class: "what" }, what(entry)),
    h("td", { class: "amount" }, signedChips(entry.amount)),
    h("td", { class: "after" }, chips(entry.balanceAfter)),
    h("td", { class: "for" }, belongsTo(entry)),
  );
}

/** The wallet's history: the balance, then the entries newest first, a page at a time. */
export function mountWallet(root: HTMLElement, back: () => void): void {
  const error = h("p", { class: "message error", role: "alert" });
  const balance = h("p", { class: "balance" }, t("wallet_loading"));
  const body = h("tbody");
  const empty = h("p", { class: "empty", hidden: true }, t("wallet_empty"));
  const more = h("button", { type: "button", class: "more", hidden: true }, t("wallet_more"));
  const table = h(
    "table",
    { class: "entries", "aria-label": t("wallet_history") },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ...["col_when", "col_what", "col_amount", "col_after", "col_for"].map((key) => h("th", { scope: "col" }, t(key))),
      ),
    ),
    body,
  );
  root.replaceChildren(
    h(
      "section",
      { class: "wallet-history" },
      h("button", { type: "button", class: "link", onclick: back }, t("back_to_lobby")),
      h("h2", {}, t("wallet_history")),
      balance,
      error,
      h("div", { class: "entries-scroll" }, table),
      empty,
      more,
    ),
  );
  const fail = (e: unknown) => {
    const refusal = explain(e);
    error.dataset.reason = refusal.reason;
    error.textContent = refusal.sentence;
  };
  retrying(() => lobby.getWallet({}), 10)
    .then((wallet) => balance.replaceWith(balanceLine(wallet)))
    .catch(fail);
  let token = "";
  const page = () => {
    more.disabled = true;
    retrying(() => lobby.listWalletEntries({ pageSize: PAGE, pageToken: token }), 10)
      .then((answer) => {
        for (const entry of answer.entries) body.append(row(entry));
        token = answer.nextPageToken;
        more.hidden = !token;
        more.disabled = false;
        empty.hidden = body.childElementCount > 0;
      })
      .catch(fail);
  };
  more.addEventListener("click", page);
  page();
}
