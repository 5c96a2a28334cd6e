// What the browser keeps between visits (localStorage): the guest's device id, secret and name
// (so the same player comes back), the table being played (a reload returns to its seat), and
// the move sent but not yet answered (resent under its request id after a reload).
import { LoginGuestResponse } from "./gen/okey/v1/lobby_pb.js";
import { Code, ConnectError, lobby, newRequestId, retrying, setRenew, setToken } from "./api.js";

const IDENTITY = "okey101.identity";
const SEAT = "okey101.seat";

export interface Identity {
  deviceId: string;
  displayName: string;
  guestSecret: string;
  playerId: string;
}

export interface Seating {
  tableId: string;
  seat: number;
}

function read<T>(key: string): T | undefined {
  try {
    const text = localStorage.getItem(key);
    return text ? (JSON.parse(text) as T) : undefined;
  } catch {
    return undefined;
  }
}

export function identity(): Identity | undefined {
  return read<Identity>(IDENTITY);
}

export function forget(): void {
  localStorage.removeItem(IDENTITY);
  localStorage.removeItem(SEAT);
}

/** Log in as the kept guest (or a new one for a first visit or a new name); the token is then on
 * every call. The first login's guest_secret is the credential: it is kept with the device id. */
export async function login(displayName: string): Promise<LoginGuestResponse> {
  try {
    return await loginOnce(displayName, identity());
  } catch (error) {
    // The kept secret is refused (the lobby's data was reset, say): start as a new guest.
    if (ConnectError.from(error).code !== Code.Unauthenticated || !identity()) throw error;
    forget();
    return await loginOnce(displayName, undefined);
  }
}

async function loginOnce(displayName: string, kept: Identity | undefined): Promise<LoginGuestResponse> {
  const deviceId = kept?.deviceId ?? `web-${newRequestId()}`;
  const requestId = newRequestId();
  const answer = await retrying(() =>
    lobby.loginGuest({ requestId, deviceId, displayName, guestSecret: kept?.guestSecret ?? "" }),
  );
  setToken(answer.tokens?.accessToken ?? "");
  setRenew(async () => {
    await login(identity()?.displayName ?? displayName);
  });
  localStorage.setItem(
    IDENTITY,
    JSON.stringify({
      deviceId,
      displayName: answer.player?.displayName || displayName,
      guestSecret: answer.guestSecret || kept?.guestSecret || "",
      playerId: answer.player?.playerId ?? "",
    } satisfies Identity),
  );
  return answer;
}

export function seating(): Seating | undefined {
  return read<Seating>(SEAT);
}

export function keepSeating(value: Seating | undefined): void {
  if (value) localStorage.setItem(SEAT, JSON.stringify(value));
  else localStorage.removeItem(SEAT);
}
