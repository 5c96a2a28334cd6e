// The player's own stream (WatchPlayer) kept open for the tournament pages: its snapshot (the
// tournaments the player is registered for, the seats they hold) then every event, resumed
// after the last sequence seen when it breaks; one whose events have expired (OUT_OF_RANGE)
// starts again from a snapshot, so the page never misses where the player is.
import type { PlayerEvent, PlayerSnapshot } from "./gen/okey/v1/lobby_pb.js";
import { Code, ConnectError, isRetryable, lobby, sleep } from "./api.js";
import { identity, login } from "./identity.js";

export interface PlayerFollower {
  /** Where the player is now (the first message, and again after OUT_OF_RANGE). */
  onSnapshot: (snapshot: PlayerSnapshot) => void;
  onEvent: (event: PlayerEvent) => void;
}

/** Follows the stream until ``signal`` aborts; resolves quietly if a refusal no retry can mend
 * ends it (the pages then keep their slow refresh). */
export async function followPlayer(follower: PlayerFollower, signal: AbortSignal): Promise<void> {
  let after: bigint | undefined; // undefined: start with a snapshot
  let wait = 200;
  while (!signal.aborted) {
    try {
      const stream = lobby.watchPlayer(
        { afterSequence: after ?? 0n, startWithSnapshot: after === undefined },
        { signal, timeoutMs: 0 },
      );
      for await (const message of stream) {
        wait = 200;
        if (message.item.case === "snapshot") {
          after = message.item.value.asOfSequence;
          follower.onSnapshot(message.item.value);
        } else if (message.item.case === "event") {
          after = message.item.value.sequence;
          follower.onEvent(message.item.value);
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      const code = ConnectError.from(error).code;
      if (code === Code.OutOfRange) after = undefined;
      else if (code === Code.Unauthenticated) {
        const kept = identity();
        if (!kept) return;
        await login(kept.displayName).catch(() => undefined);
      } else if (!isRetryable(error) && code !== Code.Canceled) return;
    }
    await sleep(wait);
    wait = Math.min(wait * 2, 5000);
  }
}
