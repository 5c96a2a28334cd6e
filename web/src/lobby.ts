// The front door: a name (a guest, kept in localStorage), the player's chips (wallet.ts), then a
// quick match (with a Cancel and the seconds until bots fill the table) or a private table with
// bots (a preset, the match's length as that preset allows it, a stake). Ends with a seat at a
// table.
import { BotLevel, MatchEnd, RulePreset, TableVisibility } from "./gen/okey/v1/common_pb.js";
import { PlayerEventKind, QuickMatchState, type PlayerEvent } from "./gen/okey/v1/lobby_pb.js";
import { Code, ConnectError, explain, isRetryable, lobby, newRequestId, retrying, sleep } from "./api.js";
import { stakeField } from "./chips.js";
import { h } from "./dom.js";
import { identity, login, type Seating } from "./identity.js";
import { t, tn } from "./i18n.js";
import { pageLink } from "./tournamentFacts.js";
import { walletCard } from "./wallet.js";

const PRESETS: Array<[RulePreset, string]> = [
  [RulePreset.OYNA, "preset_oyna"],
  [RulePreset.BOOMBALA, "preset_boombala"],
  [RulePreset.NORTH_SULTAN, "preset_north_sultan"],
];
/** The same preset first in both forms: oyna, the quick match's own default. */
const DEFAULT_PRESET = RulePreset.OYNA;
/** What each preset allows for the match's length (docs/rules: oyna plays to 1,000, boombala's
 * host picks 1 to 11 hands, odd, North Sultan plays 11); 0 stands for "to 1,000". */
const MATCH_LENGTHS: Record<number, number[]> = {
  [RulePreset.OYNA]: [0],
  [RulePreset.BOOMBALA]: [1, 3, 5, 7, 9, 11],
  [RulePreset.NORTH_SULTAN]: [11],
};
const LEVELS: Array<[BotLevel, string]> = [
  [BotLevel.EASY, "level_easy"],
  [BotLevel.NORMAL, "level_normal"],
  [BotLevel.HARD, "level_hard"],
];

function select(id: string, options: Array<[number, string]>, chosen: number): HTMLSelectElement {
  const element = h("select", { id, name: id });
  for (const [value, key] of options) element.append(h("option", { value, selected: value === chosen }, t(key)));
  return element;
}

/** Draws the lobby into ``root``; ``seated`` is called with the seat once there is one,
 * ``openWallet`` when the player asks for the wallet's history. */
export function mountLobby(root: HTMLElement, seated: (seating: Seating) => void, openWallet: () => void): void {
  const kept = identity();
  const status = h("p", { class: "status", role: "status" });
  const error = h("p", { class: "message error", role: "alert" });
  // A refusal: the server's sentence, its ErrorInfo reason in data-reason (INSUFFICIENT_CHIPS...).
  const refused = (e: unknown) => {
    const refusal = explain(e);
    error.dataset.reason = refusal.reason;
    error.textContent = refusal.sentence;
  };
  const wallet = walletCard(openWallet);
  const nameInput = h("input", { id: "name", name: "name", autocomplete: "nickname", maxlength: 32, required: true, value: kept?.displayName ?? "" });
  const nameForm = h(
    "form",
    { class: "card name", "aria-label": t("your_name") },
    h("label", { for: "name" }, t("your_name")),
    nameInput,
    h("button", { type: "submit", class: "primary" }, t("login")),
  );
  const play = h("div", { class: "play", hidden: true });
  const loggedIn = (name: string) => {
    status.textContent = t("logged_in", { name });
    nameForm.hidden = true;
    play.hidden = false;
    wallet.load();
    quickStake.load();
    hostStake.load();
  };
  nameForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const name = nameInput.value.trim();
    if (!name) return;
    status.textContent = t("logging_in");
    error.textContent = "";
    login(name)
      .then((answer) => loggedIn(answer.player?.displayName ?? name))
      .catch(refused);
  });

  // Quick match.
  const quickPreset = select("quick-preset", PRESETS, DEFAULT_PRESET);
  const queueCancel = h("button", { type: "button", class: "queue-cancel", hidden: true }, t("queue_cancel"));
  const queueJoin = h("button", { type: "submit" }, t("join"));
  const quickStake = stakeField("quick-stake");
  const quickForm = h(
    "form",
    { class: "card quick", "aria-label": t("quick_match") },
    h("h2", {}, t("quick_match")),
    h("label", { for: "quick-preset" }, t("rules_preset")),
    quickPreset,
    ...quickStake.elements,
    queueJoin,
    queueCancel,
  );
  quickForm.addEventListener("submit", (event) => {
    event.preventDefault();
    error.textContent = "";
    queueJoin.disabled = true;
    void quickMatch(Number(quickPreset.value) as RulePreset, quickStake.value(), status, queueCancel)
      .then((seating) => seating && seated(seating))
      .catch(refused)
      .finally(() => {
        queueJoin.disabled = false;
        queueCancel.hidden = true;
      });
  });

  // A private table with bots.
  const hostPreset = select("host-preset", PRESETS, DEFAULT_PRESET);
  const hands = h("select", { id: "hands", name: "hands" });
  const lengths = () => {
    const kept = hands.value;
    hands.replaceChildren(
      ...(MATCH_LENGTHS[Number(hostPreset.value)] ?? [0]).map((count) =>
        h("option", { value: count, selected: String(count) === kept }, count ? tn("hands_count", count) : t("match_to_1000")),
      ),
    );
    hands.disabled = hands.options.length < 2;
  };
  lengths();
  hostPreset.addEventListener("change", lengths);
  const level = select("bot-level", LEVELS, BotLevel.NORMAL);
  const open = h("input", { id: "public", name: "public", type: "checkbox" });
  const hostStake = stakeField("host-stake");
  const hostForm = h(
    "form",
    { class: "card host", "aria-label": t("host_table") },
    h("h2", {}, t("host_table")),
    h("label", { for: "host-preset" }, t("rules_preset")),
    hostPreset,
    h("label", { for: "hands" }, t("hands")),
    hands,
    h("label", { for: "bot-level" }, t("bot_level")),
    level,
    ...hostStake.elements,
    h("label", { class: "check", for: "public" }, open, ` ${t("public_table")}`),
    h("button", { type: "submit", class: "primary" }, t("host")),
  );
  hostForm.addEventListener("submit", (event) => {
    event.preventDefault();
    error.textContent = "";
    const requestId = newRequestId();
    const bots = [1, 2, 3].map((seat) => ({ seat, level: Number(level.value) as BotLevel }));
    const count = Number(hands.value) || 0;
    const stake = hostStake.value();
    retrying(() =>
      lobby.hostTable({
        requestId,
        // Oyna plays to its target; the others for the hands chosen.
        rules: count
          ? { preset: Number(hostPreset.value) as RulePreset, matchEnd: MatchEnd.FIXED_HANDS, matchHands: count }
          : { preset: Number(hostPreset.value) as RulePreset },
        visibility: open.checked ? TableVisibility.PUBLIC : TableVisibility.PRIVATE,
        hostSeat: 0,
        bots,
        startWhenFull: true,
        stake,
      }),
    )
      .then((answer) => seated({ tableId: answer.table!.tableId, seat: answer.seat }))
      .catch(refused);
  });
  play.append(
    h("button", { type: "button", class: "link", onclick: () => { nameForm.hidden = false; play.hidden = true; nameInput.focus(); } }, t("change_name")),
    wallet.element,
    pageLink("/tournaments", { class: "tournaments-link" }, t("tournaments")),
    quickForm,
    hostForm,
  );
  root.replaceChildren(h("section", { class: "lobby" }, status, error, nameForm, play));
  if (kept) {
    status.textContent = t("logging_in");
    login(kept.displayName)
      .then((answer) => loggedIn(answer.player?.displayName ?? kept.displayName))
      .catch((e) => {
        status.textContent = "";
        refused(e);
      });
  } else {
    nameInput.focus();
  }
}

// Quick match learns its seat from the player's own stream (WatchPlayer), not by polling: the
// stream is open (its snapshot read) before the ticket is asked for, so the QUICK_MATCH_SEATED
// that follows is never missed; a player waits in one queue at a time, so it is this ticket's.
async function quickMatch(preset: RulePreset, stake: bigint, status: HTMLElement, cancel: HTMLButtonElement): Promise<Seating | undefined> {
  const requestId = newRequestId();
  const abort = new AbortController();
  let countdown = 0;
  let opened: () => void = () => {};
  const open = new Promise<void>((resolve) => (opened = resolve));
  const seated = nextPlayerEvent(PlayerEventKind.QUICK_MATCH_SEATED, opened, abort.signal);
  seated.catch(() => {}); // awaited below, or abandoned once the ticket says otherwise
  try {
    await open;
    const ticket = (await retrying(() => lobby.joinQuickMatch({ requestId, preset, stake }))).ticket!;
    if (ticket.state === QuickMatchState.MATCHED) return { tableId: ticket.tableId, seat: ticket.seat };
    if (ticket.state !== QuickMatchState.WAITING) {
      status.textContent = t("queue_cancelled");
      return undefined;
    }
    // Waiting: the seconds until bots fill the table count down, and Cancel leaves the queue
    // (a ticket matched meanwhile is a seat all the same).
    const fillAt = ticket.botsFillTime ? Number(ticket.botsFillTime.seconds) * 1000 + Math.floor(ticket.botsFillTime.nanos / 1e6) : 0;
    const tick = () => {
      const seconds = Math.max(0, Math.ceil((fillAt - Date.now()) / 1000));
      status.textContent = fillAt && seconds > 0 ? t("queue_countdown", { players: ticket.playersWaiting, seconds }) : t("queue_filling");
    };
    tick();
    countdown = window.setInterval(tick, 1000);
    cancel.hidden = false;
    const cancelled = new Promise<Seating | undefined>((resolve, reject) => {
      cancel.onclick = () => {
        cancel.disabled = true;
        retrying(() => lobby.leaveQuickMatch({ requestId: newRequestId(), ticketId: ticket.ticketId }))
          .then((answer) => {
            const left = answer.ticket;
            if (left?.state === QuickMatchState.MATCHED) return resolve({ tableId: left.tableId, seat: left.seat });
            status.textContent = t("queue_cancelled");
            resolve(undefined);
          })
          .catch(reject)
          .finally(() => (cancel.disabled = false));
      };
    });
    return await Promise.race([seated.then((event) => ({ tableId: event.tableId, seat: event.seat })), cancelled]);
  } finally {
    window.clearInterval(countdown);
    cancel.onclick = null;
    abort.abort();
  }
}

/** The first event of ``kind`` on the player's own stream after it opened (``opened`` is called
 * once its snapshot is read). A stream that breaks is opened again after the last sequence
 * seen; one whose events have expired starts again from a snapshot. */
async function nextPlayerEvent(
  kind: PlayerEventKind,
  opened: () => void,
  signal: AbortSignal,
): Promise<PlayerEvent> {
  let after: bigint | undefined; // undefined: start with a snapshot
  let wait = 200;
  for (;;) {
    try {
      const stream = lobby.watchPlayer(
        { afterSequence: after ?? 0n, startWithSnapshot: after === undefined },
        { signal, timeoutMs: 0 },
      );
      for await (const message of stream) {
        wait = 200;
        if (message.item.case === "snapshot") {
          after = message.item.value.asOfSequence;
          opened();
        } else if (message.item.case === "event") {
          after = message.item.value.sequence;
          if (message.item.value.kind === kind) return message.item.value;
        }
      }
    } catch (error) {
      if (signal.aborted) throw error;
      const code = ConnectError.from(error).code;
      if (code === Code.OutOfRange) after = undefined;
      else if (!isRetryable(error) && code !== Code.Canceled) throw error;
    }
    await sleep(wait);
    wait = Math.min(wait * 2, 5000);
  }
}
