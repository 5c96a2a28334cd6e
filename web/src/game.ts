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
import { Code, explain, newRequestId, retrying, rules, scoring, table, tableHeaders } from "./api.js";
import { payoutFor, type Payout } from "./chips.js";
import { identity, keepSeating, login } from "./identity.js";
import { t } from "./i18n.js";
import { actRequest, pendingFor, sendKept } from "./pending.js";
import { Rack } from "./rack.js";
import { watch } from "./stream.js";
import { describeEvent } from "./events.js";
import { tileName as describeTile } from "./tiles.js";

export interface Choice {
  label: string;
  action: Action;
}

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
  message?: { text: string; error: boolean; reason?: string };
  log: string[];
  reveal?: Event;
  result?: Event;
  sheet?: ScoreSheet;
  showReveal: boolean;
  reconnecting: boolean;
  busy: boolean;
  choices?: Choice[];
  confirm?: { text: string; action: Action };
  ended: boolean;
}

export class Game {
  readonly state: State;
  readonly rack = new Rack();
  private readonly abort = new AbortController();
  private viewWanted = false;
  private viewLoading = false;
  private worthTimer = 0;

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
    const line = describeEvent(event, this.state.view, this.state.seat);
    if (line) this.state.log = [line, ...this.state.log].slice(0, 8);
    switch (event.kind) {
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
        this.state.message = { text: t("table_closed"), error: false };
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

  private takeView(view: SeatView): void {
    if (this.state.view && view.stateVersion < this.state.view.stateVersion) return;
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
          ? t("opening_pairs", { count: answer.pairCount, minimum: answer.minimum })
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
      text = t("best_pairs", { count: opening.pairCount, minimum: minPairs });
    } else {
      text = t("no_opening", { value: opening.runsAndSetsValue, minimum, pairs: opening.pairCount, min_pairs: minPairs });
    }
    this.state.message = { text, error: false, reason: "BEST_OPENING" };
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
    } else if (meldIndex !== undefined) {
      // No hint says it fits: ask the table anyway, so the player reads the rules' reason.
      void this.send([create(ActionSchema, { move: { case: "layOff", value: { tileId: id, meldIndex } } })]);
    } else {
      this.say(t("no_fit", { tiles: this.name(this.tile(id)) }));
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
      this.state.confirm = { text: t("confirm_costly", { tile: this.name(this.tile(id)) }), action };
      this.changed();
      return;
    }
    void this.send([action]);
  }

  confirm(yes: boolean): void {
    const pending = this.state.confirm;
    this.state.confirm = undefined;
    if (yes && pending) void this.send([pending.action]);
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
    this.state.message = { text, error };
    this.changed();
  }

  private fail(error: unknown): void {
    const refusal = explain(error);
    this.state.message = { text: t("rejected", { message: refusal.sentence }), error: true, reason: refusal.reason };
    this.changed();
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
        this.state.message = { text: t("stale"), error: true, reason: refusal.reason };
        this.wantView();
      } else {
        this.state.message = { text: t("rejected", { message: refusal.sentence }), error: true, reason: refusal.reason };
      }
    } finally {
      this.state.busy = false;
      this.changed();
    }
  }
}

