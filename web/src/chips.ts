// Chips (docs/chips.md) as the page shows them: a number of chips in the page's language, the
// stake a form offers (ListStakeLevels: 0 for no stake, the default, and the table fee), a
// table's stake and pot (Table.stake, Table.pot), and a match's payout read from the wallet's
// entries for that table (ListWalletEntries, reason PAYOUT).
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { Table } from "./gen/okey/v1/common_pb.js";
import { WalletEntryReason, type ListStakeLevelsResponse } from "./gen/okey/v1/lobby_pb.js";
import { lobby, retrying, sleep } from "./api.js";
import { h } from "./dom.js";
import { locale, t } from "./i18n.js";

/** 1000n -> "1,000" (English) or "1.000" (Turkish). */
export function chips(amount: bigint | number): string {
  return amount.toLocaleString(locale());
}

/** An entry's amount with its sign: "+100", "-50". */
export function signedChips(amount: bigint): string {
  return amount > 0n ? `+${chips(amount)}` : chips(amount);
}

export function timestampMs(stamp: Timestamp | undefined): number | undefined {
  if (!stamp || (!stamp.seconds && !stamp.nanos)) return undefined;
  return Number(stamp.seconds) * 1000 + Math.floor(stamp.nanos / 1e6);
}

/** A moment as a person reads it: the time today, else the date and time. */
export function when(ms: number): string {
  const date = new Date(ms);
  const today = new Date().toDateString() === date.toDateString();
  return today
    ? date.toLocaleTimeString(locale(), { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleString(locale(), { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
}

/** Why chips moved, in the page's words (the keys are in i18n.ts). */
export const REASONS: Record<number, string> = {
  [WalletEntryReason.GRANT]: "entry_grant",
  [WalletEntryReason.DAILY_GRANT]: "entry_daily_grant",
  [WalletEntryReason.STAKE]: "entry_stake",
  [WalletEntryReason.PAYOUT]: "entry_payout",
  [WalletEntryReason.FEE]: "entry_fee",
  [WalletEntryReason.REFUND]: "entry_refund",
  [WalletEntryReason.PRIZE]: "entry_prize",
  [WalletEntryReason.ENTRY_FEE]: "entry_entry_fee",
  [WalletEntryReason.ADJUSTMENT]: "entry_adjustment",
};

// The stake levels ---------------------------------------------------------------------------

let levels: Promise<ListStakeLevelsResponse | undefined> | undefined;

/** The operator's stake levels and table fee (asked once a page; undefined if the lobby has none
 * to give: the forms then offer no stake). */
export function stakeLevels(): Promise<ListStakeLevelsResponse | undefined> {
  levels ??= retrying(() => lobby.listStakeLevels({}), 5).catch(() => {
    levels = undefined; // asked again next time
    return undefined;
  });
  return levels;
}

export interface StakeField {
  /** The label, the select and the fee's note, to put in a form. */
  elements: HTMLElement[];
  /** The stake chosen (0n: none). */
  value(): bigint;
  /** Offer the levels (once logged in: ListStakeLevels takes a player's token). */
  load(): void;
}

/** A form's stake: "No stake" (the default) and each level; the fee's note under it once a
 * stake is chosen. */
export function stakeField(id: string): StakeField {
  const select = h("select", { id, name: id, "data-stake-select": "" }, h("option", { value: "0", selected: true }, t("stake_none")));
  const fee = h("p", { class: "fee-note", id: `${id}-fee`, hidden: true });
  select.setAttribute("aria-describedby", fee.id);
  let percent = 0;
  const noted = () => {
    fee.hidden = select.value === "0";
    fee.textContent = t("stake_fee", { percent });
  };
  select.addEventListener("change", noted);
  const load = () => {
    void stakeLevels().then((answer) => {
      if (!answer || select.options.length > 1) return;
      percent = answer.feePercent;
      for (const stake of answer.stakes) select.append(h("option", { value: String(stake) }, t("stake_chips", { chips: chips(stake) })));
      noted();
    });
  };
  return {
    elements: [h("label", { for: id }, t("stake")), select, fee],
    value: () => BigInt(select.value || "0"),
    load,
  };
}

// At the table -------------------------------------------------------------------------------

/** "Stake 100 · Pot 400" for a staked table (nothing for an unstaked one). */
export function stakeLine(table: Table | undefined): HTMLElement | "" {
  if (!table?.stake) return "";
  return h(
    "span",
    { class: "stakes", "data-stake": String(table.stake), "data-pot": String(table.pot), "data-fee": table.feePercent },
    h("span", { class: "stake" }, t("table_stake", { chips: chips(table.stake) })),
    " · ",
    h("span", { class: "pot" }, t("table_pot", { chips: chips(table.pot) })),
  );
}

/** What a seat got from a staked match's pot. */
export type Payout =
  | { kind: "waiting" }
  | { kind: "paid"; amount: bigint; stake: bigint }
  | { kind: "none"; stake: bigint }
  | { kind: "late"; stake: bigint };

/** The chips the wallet's PAYOUT entries for ``tableId`` add up to, once there is one: the
 * table tells the lobby through an outbox, so the entry may come a moment after MATCH_ENDED.
 * Undefined if none comes within ``patienceMs``. */
export async function payoutFor(tableId: string, signal: AbortSignal, patienceMs = 60_000): Promise<bigint | undefined> {
  const until = Date.now() + patienceMs;
  let wait = 300;
  while (!signal.aborted) {
    const answer = await retrying(() => lobby.listWalletEntries({ pageSize: 50 }), 5);
    const paid = answer.entries.filter((entry) => entry.tableId === tableId && entry.reason === WalletEntryReason.PAYOUT);
    if (paid.length) return paid.reduce((sum, entry) => sum + entry.amount, 0n);
    if (Date.now() > until) return undefined;
    await sleep(wait);
    wait = Math.min(wait * 2, 3000);
  }
  return undefined;
}

/** The result's line about the pot. */
export function payoutLine(payout: Payout | undefined): HTMLElement | "" {
  if (!payout) return "";
  const attrs = { class: `payout ${payout.kind}`, "data-payout": payout.kind, role: "status" };
  switch (payout.kind) {
    case "waiting":
      return h("p", attrs, t("payout_waiting"));
    case "paid":
      return h("p", { ...attrs, "data-amount": String(payout.amount) }, t("payout_paid", { chips: chips(payout.amount), stake: chips(payout.stake) }));
    case "none":
      return h("p", attrs, t("payout_none", { stake: chips(payout.stake) }));
    case "late":
      return h("p", attrs, t("payout_late"));
  }
}
