// Keyboard shortcuts at the table (besides Tab, Space/Enter on a tile or a meld, and the
// rack's arrows): c draw, a take, g group, b best opening, o open, m meld, l lay off, k okey
// back, x discard, Escape clears the selection (or closes the log, or answers a question its
// safe way). Not while typing in a field or with a modifier.
import type { Game } from "./game.js";

const MOVES: Record<string, (game: Game) => void> = {
  c: (game) => game.draw(),
  a: (game) => game.take(),
  g: (game) => game.closeGroup(),
  b: (game) => game.best(),
  o: (game) => game.open(),
  m: (game) => game.meld(),
  l: (game) => game.layOff(),
  k: (game) => game.takeOkey(),
  x: (game) => game.discard(),
  escape: (game) => game.clear(),
};

/** Listen for the shortcuts until the returned function is called. */
export function bindKeys(game: Game): () => void {
  const listener = (event: KeyboardEvent) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    const target = event.target as HTMLElement | null;
    if (target && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName)) return;
    const key = event.key.toLowerCase();
    // A question over the table takes no moves: Escape answers its safe way ("Keep it").
    if (game.state.confirm) {
      if (key === "escape") {
        event.preventDefault();
        game.confirm(false);
      }
      return;
    }
    if (key === "escape" && game.state.showLog) {
      game.state.showLog = false;
      return game.refresh();
    }
    const move = MOVES[key];
    if (!move || game.spectator) return;
    if (event.key.toLowerCase() !== "escape" && event.key.toLowerCase() !== "g" && event.key.toLowerCase() !== "b" && !game.myTurn) return;
    event.preventDefault();
    move(game);
  };
  document.addEventListener("keydown", listener);
  return () => document.removeEventListener("keydown", listener);
}
