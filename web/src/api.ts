// The four services through the edge: one Connect transport to the page's own origin, the
// player's token and language on every call, and a refusal read into its reason and sentence.
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { ErrorInfoSchema, LocalizedMessageSchema } from "./gen/google/rpc/error_details_pb.js";
import { LobbyService } from "./gen/okey/v1/lobby_pb.js";
import { RulesService } from "./gen/okey/v1/rules_pb.js";
import { ScoringService } from "./gen/okey/v1/scoring_pb.js";
import { TableService } from "./gen/okey/v1/table_pb.js";
import { locale } from "./i18n.js";

let accessToken = "";

/** The token every later call carries (from LoginGuest). */
export function setToken(token: string): void {
  accessToken = token;
}

const auth: Interceptor = (next) => async (request) => {
  if (accessToken) request.header.set("Authorization", `Bearer ${accessToken}`);
  // The services answer in the request's language (their sentences, the hints' reasons).
  request.header.set("Accept-Language", locale());
  return next(request);
};

/** Table calls name their table in x-okey-table-id, so a deployment routes them to its pod. */
export function tableHeaders(tableId: string): HeadersInit {
  return { "x-okey-table-id": tableId };
}

const transport = createConnectTransport({
  baseUrl: window.location.origin,
  interceptors: [auth],
  // JSON is what a person debugging the page can read in the network tab; the edge speaks both.
  useBinaryFormat: false,
  // A unary call that hangs (a server stuck under load) is given up and retried (same request
  // id); WatchTable passes timeoutMs 0 (none).
  defaultTimeoutMs: 15_000,
});

export const lobby: Client<typeof LobbyService> = createClient(LobbyService, transport);
export const table: Client<typeof TableService> = createClient(TableService, transport);
export const rules: Client<typeof RulesService> = createClient(RulesService, transport);
export const scoring: Client<typeof ScoringService> = createClient(ScoringService, transport);

/** A refusal as the page shows it: the stable reason and the sentence in the player's language. */
export interface Refusal {
  code: Code;
  reason: string;
  sentence: string;
}

export function explain(error: unknown): Refusal {
  const connect = ConnectError.from(error);
  const info = connect.findDetails(ErrorInfoSchema)[0];
  const messages = connect.findDetails(LocalizedMessageSchema);
  const wanted = locale().slice(0, 2);
  const text = messages.find((m) => m.locale.startsWith(wanted)) ?? messages[0];
  return {
    code: connect.code,
    reason: info?.reason ?? Code[connect.code] ?? "UNKNOWN",
    sentence: text?.message || connect.rawMessage || String(error),
  };
}

/** Not an answer: the same request (same request id) may be sent again. */
export function isRetryable(error: unknown): boolean {
  const code = ConnectError.from(error).code;
  return code === Code.Unavailable || code === Code.DeadlineExceeded || code === Code.Unknown
    || code === Code.Internal && !(error instanceof ConnectError && error.findDetails(ErrorInfoSchema).length);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** How long a rate limit's refusal (RESOURCE_EXHAUSTED, reason RATE_LIMITED) asks the caller to
 * wait before sending the same request again: its retry_after_ms, at least 50 ms; undefined for
 * any other error. */
export function retryAfterMs(error: unknown): number | undefined {
  const connect = ConnectError.from(error);
  if (connect.code !== Code.ResourceExhausted) return undefined;
  const info = connect.findDetails(ErrorInfoSchema)[0];
  if (info?.reason !== "RATE_LIMITED") return undefined;
  const asked = Number(info.metadata["retry_after_ms"] ?? "1000");
  return Math.max(50, Number.isFinite(asked) ? asked : 1000);
}

let renew: (() => Promise<void>) | undefined;
let renewing = false;

/** How to get a new token when one has run out (identity.ts: log in again as the kept guest). */
export function setRenew(how: () => Promise<void>): void {
  renew = how;
}

/** Call until it answers or is refused: retried unchanged while no server answers, backing off
 * from 0.2 s to 5 s (a move is never played twice: its request id is the same each time); a
 * rate limit's refusal waited out as long as it asks and the call sent again; a token that ran
 * out is renewed once and the call sent again. */
export async function retrying<T>(call: () => Promise<T>, attempts = 40): Promise<T> {
  let wait = 200;
  let renewed = false;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!renewed && !renewing && renew && accessToken && ConnectError.from(error).code === Code.Unauthenticated) {
        renewed = true;
        renewing = true;
        try {
          await renew();
        } finally {
          renewing = false;
        }
        continue;
      }
      const limited = retryAfterMs(error);
      if (limited !== undefined && attempt < attempts) {
        await sleep(limited);
        continue;
      }
      if (!isRetryable(error) || attempt >= attempts) throw error;
      await sleep(wait);
      wait = Math.min(wait * 2, 5000);
    }
  }
}

/** A new request id: 32 hex digits (getRandomValues works on plain http too, randomUUID not). */
export function newRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export { Code, ConnectError };
