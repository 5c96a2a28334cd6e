// WatchTable kept open: the first stream starts with the seat's view; when it breaks (a drop,
// a server's connection age, a deploy) it is opened again after the last sequence seen, without
// a view, so nothing is missed and nothing comes twice (docs/integration.md, section 7).
import type { WatchTableResponse } from "./gen/okey/v1/table_pb.js";
import { Code, ConnectError, isRetryable, sleep, table, tableHeaders } from "./api.js";

export interface Watcher {
  tableId: string;
  seat: number | undefined;
  /** The last event handled (a view counts as its as_of_sequence). */
  lastSequence: () => bigint;
  onItem: (item: WatchTableResponse) => void;
  /** The connection state changed (true: reconnecting). */
  onReconnecting: (reconnecting: boolean) => void;
  /** The token ran out: log in again before the next attempt. */
  renewToken: () => Promise<void>;
}

/** Resolves when the stream ends with OK (the match ended, the table closed) or ``signal``
 * aborts; throws a refusal that no retry can mend. */
export async function watch(watcher: Watcher, signal: AbortSignal): Promise<void> {
  let withView = true;
  let wait = 200;
  while (!signal.aborted) {
    try {
      const stream = table.watchTable(
        {
          tableId: watcher.tableId,
          seat: watcher.seat,
          afterSequence: withView ? 0n : watcher.lastSequence(),
          startWithView: withView,
        },
        { signal, headers: tableHeaders(watcher.tableId), timeoutMs: 0 },
      );
      let first = true;
      for await (const item of stream) {
        if (first) {
          first = false;
          wait = 200;
          watcher.onReconnecting(false);
        }
        watcher.onItem(item);
      }
      return;
    } catch (error) {
      if (signal.aborted) return;
      const code = ConnectError.from(error).code;
      if (code === Code.OutOfRange) withView = true;
      else if (code === Code.Unauthenticated) await watcher.renewToken();
      else if (!isRetryable(error) && code !== Code.Canceled) throw error;
      else withView = watcher.lastSequence() === 0n;
      watcher.onReconnecting(true);
      await sleep(wait);
      wait = Math.min(wait * 2, 5000);
    }
  }
}
