// One seat at one table (or a spectator): what the page knows of it and the moves it sends.
// The server is the authority: every event that changes the hand fetches a fresh view (coalesced)
// and, for a seat, its hints; a move is an Act with a new request id, kept until answered.
import { create } from "@bufbuild/protobuf";
import {
  ActionSchema,
  EventKind,
  OpeningKind,
  Phase,
  RunEnd,
  TileGroupSchema,
  type Action,
  type Event,
  type SeatHints,
  type SeatView,
  type Table,
  type Tile,
} from "./gen/okey/v1/common_pb.js";
import type { ScoreSheet } from "./gen/okey/v1/scoring_pb.js";
import type { WatchTableResponse } from "./gen/okey/v1/table_pb.js";
import { Code, explain, lobby, newRequestId, retrying, rules, scoring, table, tableHeaders } from "./api.js";
import { payoutFor, type Payout } from "./chips.js";
import { identity, keepSeating, login } from "./identity.js";
import { t, tn } from "./i18n.js";
import { actRequest, pendingFor, sendKept } from "./pending.js";
import { Rack } from "./rack.js";
import { watch } from "./stream.js";
import { describeEvent, freshTiles, seatAction } from "./events.js";
import { play as playSound } from "./sounds.js";
import { tileName as describeTile } from "./tiles.js";

export interface Choice {
  label: string;
  action: Action;
}

/** One line of the hand's log: what the event said, and the note beside the seat that acted. */
export interface LogLine {
  sequence: bigint;
  handId: string;
  seat?: number;
  text: string;
  action: string;
}

/** A question over the table (+101 discard, leaving): its words and what "yes" does. */
export interface Confirm {
  text: string;
  yes: string;
  no: string;
  run: () => void;
}

export interface Message {
  text: string;
  error: boolean;
  reason?: string;
}

/** How long a toast stays (ms): a refusal a little longer than news. */
const TOAST_MS = { info: 5_000, error: 8_000, notice: 10_000 };
/** How long a tile new on the table or in the rack stays highlighted (ms). */
export const FRESH_MS = 2_500;
/** How long the last hand's reveal stays once the next hand is dealt (ms). */
export const REVEAL_CLOSE_MS = 5_000;

export interface State {
  tableId: string;
  seat: number | undefined;
  view?: SeatView;
  /** The table (GetTable): its stake and pot, asked again when a seat or the match changes. */
  table?: Table;
  /** At a staked match's end: what the seat got from the pot. */
  payout?: Payout;
  hints?: SeatHints;
  hintsVersion: bigint;
  lastSequence: bigint;
  /** The group being selected (in the order clicked: a run with an okey is selected low to high). */
  selected: number[];
  /** Groups closed so far (Group), for an opening or new melds. */
  groups: number[][];
  worth: string;
  message?: Message;
  /** The whole hand, newest first (rebuilt from the stream's events after a reload). */
  log: LogLine[];
  /** Tiles new on the table or in the rack: tile id -> until when (ms) they are highlighted. */
  fresh: Map<number, number>;
  /** When the last hand's reveal closes by itself (the next hand is dealt), ms. */
  revealClosesAt?: number;
  showLog: boolean;
  reveal?: Event;
  result?: Event;
  sheet?: ScoreSheet;
  showReveal: boolean;
  reconnecting: boolean;
  busy: boolean;
  choices?: Choice[];
  confirm?: Confirm;
  ended: boolean;
}

export class Game {
  readonly state: State;
  readonly rack = new Rack();
  private readonly abort = new AbortController();
  private viewWanted = false;
  private viewLoading = false;
  private worthTimer = 0;
  private toastTimer = 0;
  private backfilled = false;

  constructor(tableId: string, seat: number | undefined, private readonly changed: () => void) {
    this.state = {
      tableId,
      seat,
      hintsVersion: -1n,
      lastSequence: 0n,
      selected: [],
      groups: [],
      worth: "",
      log: [],
      fresh: new Map(),
      showLog: false,
      showReveal: false,
      reconnecting: false,
      busy: false,
      ended: false,
    };
  }

  get spectator(): boolean {
    return this.state.seat === undefined;
  }

  get myTurn(): boolean {
    const view = this.state.view;
    return !!view && !this.spectator && view.turn === this.state.seat && view.phase !== Phase.ENDED
      && view.phase !== Phase.UNSPECIFIED;
  }

  /** Open the stream (and resend a move a reload interrupted); resolves when the stream ends. */
  async start(): Promise<void> {
    const pending = this.spectator ? undefined : pendingFor(this.state.tableId);
    if (pending) void this.send(pending.actions, pending.requestId, pending.expectedStateVersion);
    void this.loadTable();
    try {
      await watch(
        {
          tableId: this.state.tableId,
          seat: this.state.seat,
          lastSequence: () => this.state.lastSequence,
          onItem: (item) => this.onItem(item),
          onReconnecting: (reconnecting) => {
            if (this.state.reconnecting !== reconnecting) {
              this.state.reconnecting = reconnecting;
              this.changed();
            }
          },
          renewToken: async () => {
            await login(identity()?.displayName ?? "");
          },
        },
        this.abort.signal,
      );
    } catch (error) {
      this.fail(error);
    }
    this.state.ended = true;
    this.changed();
  }

  stop(): void {
    this.abort.abort();
  }

  /** Left (stopped): nothing of it is drawn any more. */
  get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  /** Draw the screen again (the language changed). */
  refresh(): void {
    this.changed();
  }

  private onItem(item: WatchTableResponse): void {
    if (item.item.case === "view") {
      // Only the stream's own items move the resume point: a view fetched on the side may be
      // ahead of the stream, whose events up to it must still be seen (HAND_ENDED...).
      this.state.lastSequence = item.item.value.asOfSequence;
      this.takeView(item.item.value);
      return;
    }
    if (item.item.case !== "event") return;
    const event = item.item.value;
    if (event.sequence <= this.state.lastSequence) return;
    this.state.lastSequence = event.sequence;
    this.addLog([this.logLine(event)]);
    const now = Date.now();
    for (const id of freshTiles(event, this.state.seat)) this.state.fresh.set(id, now + FRESH_MS);
    if (freshTiles(event, this.state.seat).length) window.setTimeout(() => this.changed(), FRESH_MS + 50);
    switch (event.kind) {
      case EventKind.HAND_DEALT:
        // The next hand: the last one's reveal closes by itself a moment later (at once on
        // this seat's turn, see tick), the log starts again.
        if (this.state.showReveal && !this.state.result) this.state.revealClosesAt = now + REVEAL_CLOSE_MS;
        break;
      case EventKind.TURN_STARTED:
        if (event.seat === this.state.seat && !this.spectator) playSound("turn");
        break;
      case EventKind.DISCARDED:
        playSound("discard");
        break;
      case EventKind.TURN_TIMED_OUT:
        if (event.seat === this.state.seat && !this.spectator) {
          this.toast({ text: t("ev_timed_out_own"), error: false, reason: "TURN_TIMED_OUT" }, TOAST_MS.notice);
        }
        break;
      case EventKind.HAND_ENDED:
        this.state.reveal = event;
        this.state.showReveal = true;
        break;
      case EventKind.MATCH_ENDED:
        this.state.result = event;
        this.state.showReveal = true;
        keepSeating(undefined);
        void this.loadSheet(event.matchResult?.matchId ?? "");
        void this.loadPayout(event);
        break;
      case EventKind.TABLE_CLOSED:
        keepSeating(undefined);
        this.toast({ text: t("table_closed"), error: false });
        break;
      case EventKind.SEAT_AWAY:
        if (event.seat === this.state.seat) void this.comeBack();
        break;
      case EventKind.SEAT_TAKEN:
      case EventKind.SEAT_LEFT:
      case EventKind.MATCH_STARTED:
        void this.loadTable(); // the pot moves with the seats taken and the match's start
        break;
      default:
        break;
    }
    this.wantView();
    this.changed();
  }

  private logLine(event: Event): LogLine {
    return {
      sequence: event.sequence,
      handId: event.handId,
      seat: event.seat,
      text: describeEvent(event, this.state.view, this.state.seat),
      action: seatAction(event),
    };
  }

  /** Lines into the log, newest first, once each; only the hand in play is kept. */
  private addLog(lines: LogLine[]): void {
    const seen = new Set(this.state.log.map((line) => line.sequence));
    const fresh = lines.filter((line) => (line.text || line.action) && !seen.has(line.sequence));
    if (!fresh.length) return;
    const hand = this.state.view?.handId;
    const all = [...fresh, ...this.state.log].sort((a, b) => (a.sequence < b.sequence ? 1 : a.sequence > b.sequence ? -1 : 0));
    const newest = all.find((line) => line.handId)?.handId ?? hand;
    this.state.log = all.filter((line) => !line.handId || line.handId === newest);
  }

  /** After a reload the log is rebuilt from the stream: the table's events read from its first
   * up to the view's, this hand's kept. A table whose old events have expired keeps the log of
   * what the page saw since. */
  private async backfill(view: SeatView): Promise<void> {
    if (this.backfilled || !view.handId || view.asOfSequence === 0n) return;
    this.backfilled = true;
    const abort = new AbortController();
    const stop = () => abort.abort();
    this.abort.signal.addEventListener("abort", stop);
    const lines: LogLine[] = [];
    try {
      const stream = table.watchTable(
        { tableId: this.state.tableId, seat: this.state.seat, afterSequence: 0n, startWithView: false },
        { signal: abort.signal, headers: tableHeaders(this.state.tableId), timeoutMs: 30_000 },
      );
      for await (const item of stream) {
        if (item.item.case !== "event") continue;
        const event = item.item.value;
        if (event.handId === view.handId) lines.push(this.logLine(event));
        if (event.sequence >= view.asOfSequence) break;
      }
    } catch {
      // The log is what the page has seen since: the hand plays on without the rest.
    } finally {
      abort.abort();
      this.abort.signal.removeEventListener("abort", stop);
    }
    this.addLog(lines);
    this.changed();
  }

  /** The screen's clock (twice a second): the reveal closing at the next deal, never over this
   * seat's turn. */
  tick(): void {
    const closes = this.state.revealClosesAt;
    if (closes === undefined || !this.state.showReveal) return;
    if (Date.now() >= closes || this.myTurn) {
      this.state.showReveal = false;
      this.state.revealClosesAt = undefined;
      this.changed();
    }
  }

  /** A toast: news or a refusal over the table, gone by itself (nothing under it moves). */
  toast(message: Message, ms?: number): void {
    this.state.message = message;
    window.clearTimeout(this.toastTimer);
    this.toastTimer = window.setTimeout(() => {
      if (this.state.message === message) {
        this.state.message = undefined;
        this.changed();
      }
    }, ms ?? (message.error ? TOAST_MS.error : TOAST_MS.info));
    this.changed();
  }

  dismissToast(): void {
    this.state.message = undefined;
    this.changed();
  }

  /** Leave the table (a bot plays the seat to the match's end), asked first while it is on. */
  leave(done: () => void): void {
    const go = () => {
      if (!this.spectator && !this.state.result) {
        void retrying(() => lobby.leaveTable({ requestId: newRequestId(), tableId: this.state.tableId }), 3).catch(() => {});
      }
      keepSeating(undefined);
      this.stop();
      done();
    };
    if (this.spectator || this.state.result || this.state.ended) return go();
    this.state.confirm = { text: t("leave_confirm"), yes: t("leave_yes"), no: t("leave_no"), run: go };
    this.changed();
  }

  private takeView(view: SeatView): void {
    if (this.state.view && view.stateVersion < this.state.view.stateVersion) return;
    void this.backfill(view);
    // Arriving at a hand already over (a reload after it): its reveal is what there is to see.
    if (!this.state.view && view.phase === Phase.ENDED && view.result) this.state.showReveal = true;
    this.state.view = view;
    if (!this.spectator) {
      const fresh = this.rack.sync(view.handId, view.rack.map((r) => r.tile!.id));
      if (fresh) this.rack.sort(this.rackTiles(), false);
      const ids = new Set(this.rack.tiles);
      this.state.selected = this.state.selected.filter((id) => ids.has(id));
      this.state.groups = this.state.groups.map((g) => g.filter((id) => ids.has(id))).filter((g) => g.length);
      if (view.seats[this.state.seat!]?.occupant?.away) void this.comeBack();
      void this.loadHints(view.stateVersion);
    }
    this.changed();
  }

  /** A fresh view, at most one request at a time (events coalesce). */
  private wantView(): void {
    this.viewWanted = true;
    if (this.viewLoading) return;
    this.viewLoading = true;
    void (async () => {
      try {
        while (this.viewWanted) {
          this.viewWanted = false;
          const answer = await retrying(() =>
            // Never older than the last event seen: the table process asked may not have heard of it yet.
            table.getSeatView(
              { tableId: this.state.tableId, seat: this.state.seat, minSequence: this.state.lastSequence },
              { headers: tableHeaders(this.state.tableId) },
            ),
          );
          if (answer.view) this.takeView(answer.view);
        }
      } catch (error) {
        this.fail(error);
      } finally {
        this.viewLoading = false;
      }
    })();
  }

  private async loadHints(version: bigint): Promise<void> {
    if (this.spectator || this.state.view?.phase === Phase.ENDED) return;
    try {
      const answer = await retrying(() =>
        table.getHints({ tableId: this.state.tableId, seat: this.state.seat! }, { headers: tableHeaders(this.state.tableId) }),
      );
      if (this.state.view && answer.stateVersion >= this.state.view.stateVersion && answer.stateVersion >= this.state.hintsVersion) {
        this.state.hints = answer.hints;
        this.state.hintsVersion = answer.stateVersion;
        this.changed();
      } else if (this.state.view && version < this.state.view.stateVersion) {
        // A newer view came meanwhile; its own hints request follows.
      }
    } catch {
      // Hints are help, not play: without them the moves still go to the table.
    }
  }

  private async loadSheet(matchId: string): Promise<void> {
    if (!matchId) return;
    try {
      const answer = await retrying(() => scoring.getScoreSheet({ matchId }), 5);
      this.state.sheet = answer.sheet;
      this.changed();
    } catch {
      // The reveal and the result's totals are on screen anyway.
    }
  }

  /** The table's stake and pot (GetTable); kept as it was if the table cannot be asked. */
  private async loadTable(): Promise<Table | undefined> {
    try {
      const answer = await retrying(
        () => table.getTable({ tableId: this.state.tableId }, { headers: tableHeaders(this.state.tableId) }),
        5,
      );
      if (answer.table) {
        this.state.table = answer.table;
        this.changed();
      }
    } catch {
      // The stake line is information: the table plays on without it.
    }
    return this.state.table;
  }

  /** What the seat got from a staked match's pot: its PAYOUT entries for this table in the
   * wallet (docs/web.md, Chips), waited for while the lobby records them; a seat that did not
   * win gets none. */
  private async loadPayout(ended: Event): Promise<void> {
    const known = await this.loadTable();
    const stake = known?.stake ?? 0n;
    if (!stake || this.spectator) return;
    const mine = ended.matchResult?.seats.find((s) => s.seat === this.state.seat);
    if (!mine?.winner) {
      this.state.payout = { kind: "none", stake };
      this.changed();
      return;
    }
    this.state.payout = { kind: "waiting" };
    this.changed();
    try {
      const amount = await payoutFor(this.state.tableId, this.abort.signal);
      this.state.payout = amount === undefined ? { kind: "late", stake } : { kind: "paid", amount, stake };
    } catch {
      this.state.payout = { kind: "late", stake };
    }
    this.changed();
    void this.loadTable(); // the pot, paid out
  }

  private async comeBack(): Promise<void> {
    try {
      await table.sit(
        { requestId: newRequestId(), tableId: this.state.tableId, seat: this.state.seat, displayName: identity()?.displayName ?? "" },
        { headers: tableHeaders(this.state.tableId) },
      );
    } catch {
      // Still away: a bot keeps the seat; the next move tries again.
    }
  }

  rackTiles(): Tile[] {
    return (this.state.view?.rack ?? []).map((r) => r.tile!).filter(Boolean);
  }

  tile(id: number): Tile | undefined {
    return this.state.view?.rack.find((r) => r.tile?.id === id)?.tile;
  }

  // Selecting ----------------------------------------------------------------------------------

  toggle(id: number): void {
    const at = this.state.selected.indexOf(id);
    if (at >= 0) this.state.selected.splice(at, 1);
    else {
      this.state.groups = this.state.groups.map((g) => g.filter((x) => x !== id)).filter((g) => g.length);
      this.state.selected.push(id);
    }
    this.state.choices = undefined;
    this.selectionChanged();
  }

  closeGroup(): void {
    if (this.state.selected.length) this.state.groups.push(this.state.selected);
    this.state.selected = [];
    this.selectionChanged();
  }

  clear(): void {
    this.state.selected = [];
    this.state.groups = [];
    this.state.choices = undefined;
    this.state.worth = "";
    this.changed();
  }

  /** The groups to send: the closed ones and the one being selected. */
  private allGroups(): number[][] {
    return [...this.state.groups, ...(this.state.selected.length ? [this.state.selected] : [])];
  }

  private selectionChanged(): void {
    this.changed();
    window.clearTimeout(this.worthTimer);
    this.worthTimer = window.setTimeout(() => void this.worth(), 120);
  }

  /** What the selection is worth (RulesService): the opening against its minimum, or the melds. */
  private async worth(): Promise<void> {
    const view = this.state.view;
    const groups = this.allGroups();
    if (!view || !groups.length || groups.every((g) => g.length < 2)) {
      this.state.worth = "";
      this.changed();
      return;
    }
    const tileGroups = groups.map((ids) => create(TileGroupSchema, { tileIds: ids }));
    const openedAs = view.seats[this.state.seat!]?.openedAs;
    const opened = openedAs === OpeningKind.RUNS || openedAs === OpeningKind.PAIRS;
    try {
      if (!opened) {
        const answer = await rules.validateOpening({
          rules: view.rules,
          indicatorTileId: view.indicator?.id ?? 0,
          rackTileIds: this.rack.tiles,
          groups: tileGroups,
          takenTileId: view.turnProgress?.taken?.notation ? view.turnProgress.taken.id : undefined,
        });
        let line = answer.kind === OpeningKind.PAIRS
          ? tn("opening_pairs", answer.pairCount, { minimum: answer.minimum })
          : t("opening_total", { value: answer.value, minimum: answer.minimum });
        if (answer.valid) line += ` ✓ ${t("opening_ok")}`;
        else if (answer.violations[0]) line += ` · ${answer.violations[0].message}`;
        this.state.worth = line;
      } else {
        const answer = await rules.validateMelds({ rules: view.rules, indicatorTileId: view.indicator?.id ?? 0, groups: tileGroups });
        this.state.worth = answer.verdicts
          .map((v) => (v.valid ? `${v.meld?.value ?? ""}` : v.violations[0]?.message ?? "?"))
          .join(" · ");
      }
    } catch (error) {
      this.state.worth = explain(error).sentence;
    }
    this.changed();
  }

  /** The hints' best opening, selected as groups (one click), its value shown. */
  best(): void {
    const opening = this.state.hints?.opening;
    if (!opening) return;
    const minimum = this.state.view?.rules?.openingMinPoints ?? 101;
    const minPairs = this.state.view?.rules?.openingMinPairs ?? 5;
    const byPairs = !opening.canOpenWithRuns && opening.canOpenWithPairs;
    let text: string;
    if (opening.canOpenWithRuns) {
      text = t("best_opening", { value: opening.runsAndSetsValue, minimum, count: opening.runsAndSets.length });
    } else if (byPairs) {
      text = tn("best_pairs", opening.pairCount, { minimum: minPairs });
    } else {
      text = t("no_opening", { value: opening.runsAndSetsValue, minimum, pairs: opening.pairCount, min_pairs: minPairs });
    }
    this.toast({ text, error: false, reason: "BEST_OPENING" });
    const melds = byPairs ? opening.pairs : opening.runsAndSets;
    this.state.groups = melds.map((m) => m.tiles.map((mt) => mt.tile!.id));
    this.state.selected = [];
    this.selectionChanged();
  }

  // Moves ---------------------------------------------------------------------------------------

  draw(): void {
    void this.send([create(ActionSchema, { move: { case: "draw", value: {} } })]);
  }

  take(): void {
    void this.send([create(ActionSchema, { move: { case: "take", value: {} } })]);
  }

  giveBack(): void {
    void this.send([create(ActionSchema, { move: { case: "giveBack", value: {} } })]);
  }

  open(): void {
    const groups = this.allGroups();
    if (!groups.length) return this.say(t("need_groups"));
    const action = groups.every((g) => g.length === 2)
      ? create(ActionSchema, {
          move: { case: "openPairs", value: { pairs: groups.map(([a, b]) => ({ firstTileId: a, secondTileId: b })) } },
        })
      : create(ActionSchema, { move: { case: "open", value: { groups: groups.map((ids) => ({ tileIds: ids })) } } });
    void this.send([action], undefined, undefined, true);
  }

  meld(): void {
    const groups = this.allGroups();
    if (!groups.length) return this.say(t("need_groups"));
    void this.send([create(ActionSchema, { move: { case: "meld", value: { groups: groups.map((ids) => ({ tileIds: ids })) } } })], undefined, undefined, true);
  }

  /** Lay the one selected tile off: on ``meldIndex`` (a drop, a click on a meld), else wherever
   * the hints say it fits (a choice when there are several). */
  layOff(tileId?: number, meldIndex?: number): void {
    const id = tileId ?? this.single();
    if (id === undefined) return this.say(t("need_one_tile"));
    const hints = this.state.hints;
    const all = [...(hints?.layOffs ?? []), ...(hints?.okeys.flatMap((o) => o.layOffs) ?? [])];
    const fits = all.filter((h) => h.tile?.id === id && (meldIndex === undefined || h.meldIndex === meldIndex));
    if (fits.length === 1 && fits[0].action) {
      void this.send([fits[0].action], undefined, undefined, true);
    } else if (fits.length > 1) {
      this.state.choices = fits.map((h) => ({
        label: t("lay_off_on", { tile: this.name(h.tile), index: h.meldIndex + 1, end: h.end === RunEnd.LOW ? t("end_low") : h.end === RunEnd.HIGH ? t("end_high") : "" }).trim(),
        action: h.action!,
      }));
      this.changed();
    } else {
      // No hint says it fits: ask the table anyway, so the player reads the rules' own reason
      // (not opened yet, not in the opening turn, no meld takes it...).
      const target = meldIndex ?? this.state.view?.table[0]?.index ?? 0;
      void this.send([create(ActionSchema, { move: { case: "layOff", value: { tileId: id, meldIndex: target } } })]);
    }
  }

  takeOkey(): void {
    const backs = this.state.hints?.takeBacks ?? [];
    if (!backs.length) return this.say(t("need_okey_meld"));
    if (backs.length === 1) {
      void this.send([backs[0].action!]);
      return;
    }
    this.state.choices = backs.map((b) => ({
      label: `${t("take_okey")} #${b.meldIndex + 1}: ${b.tiles.map((x) => this.name(x)).join(" ")}`,
      action: b.action!,
    }));
    this.changed();
  }

  /** Discard the one selected tile; a +101 discard asks first. */
  discard(tileId?: number): void {
    const id = tileId ?? this.single();
    if (id === undefined) return this.say(t("need_one_tile"));
    const action = create(ActionSchema, { move: { case: "discard", value: { tileId: id } } });
    const hint = this.state.hints?.discards.find((d) => d.tile?.id === id);
    const costly = hint ? hint.penaltyPoints > 0 : !!this.state.view?.rack.find((r) => r.tile?.id === id)?.costlyDiscard;
    if (costly) {
      this.state.confirm = {
        text: t("confirm_costly", { tile: this.name(this.tile(id)) }),
        yes: t("confirm_yes"),
        no: t("confirm_no"),
        run: () => void this.send([action]),
      };
      this.changed();
      return;
    }
    void this.send([action]);
  }

  confirm(yes: boolean): void {
    const pending = this.state.confirm;
    this.state.confirm = undefined;
    if (yes && pending) pending.run();
    else this.changed();
  }

  choose(choice: Choice): void {
    this.state.choices = undefined;
    void this.send([choice.action], undefined, undefined, true);
  }

  private single(): number | undefined {
    return this.state.selected.length === 1 && !this.state.groups.length ? this.state.selected[0] : undefined;
  }

  private name(tile: Tile | undefined): string {
    return describeTile(tile);
  }

  say(text: string, error = false): void {
    this.toast({ text, error });
  }

  private fail(error: unknown): void {
    const refusal = explain(error);
    this.toast({ text: t("rejected", { message: refusal.sentence }), error: true, reason: refusal.reason });
  }

  /** Act: the actions under a new request id (or the kept one of a resent move). */
  async send(actions: Action[], requestId?: string, expected?: bigint, clearsSelection = false): Promise<void> {
    const view = this.state.view;
    if (this.spectator || (!view && expected === undefined)) return;
    this.state.busy = true;
    this.state.message = undefined;
    this.state.choices = undefined;
    this.changed();
    const request = actRequest({
      requestId: requestId ?? newRequestId(),
      tableId: this.state.tableId,
      seat: this.state.seat!,
      actions,
      expectedStateVersion: expected ?? view!.stateVersion,
    });
    try {
      const answer = await sendKept(request);
      if (clearsSelection) {
        this.state.selected = [];
        this.state.groups = [];
        this.state.worth = "";
      }
      if (answer.view) this.takeView(answer.view);
    } catch (error) {
      const refusal = explain(error);
      if (refusal.code === Code.Aborted) {
        this.toast({ text: t("stale"), error: true, reason: refusal.reason });
        this.wantView();
      } else {
        this.toast({ text: t("rejected", { message: refusal.sentence }), error: true, reason: refusal.reason });
      }
    } finally {
      this.state.busy = false;
      this.changed();
    }
  }
}

