// The table's two sounds, made by the page itself (Web Audio, no files): a soft chime when it is
// your turn, a click when a tile is discarded. Off on a first visit; the switch is remembered
// (localStorage), and a browser plays sound only after the page has been touched or clicked.
const STORE = "okey101.sound";

let context: AudioContext | undefined;

export function soundOn(): boolean {
  return localStorage.getItem(STORE) === "on";
}

export function setSound(on: boolean): void {
  localStorage.setItem(STORE, on ? "on" : "off");
  if (on) play("turn");
}

/** A short tone; nothing when sound is off or the browser has no Web Audio. */
export function play(kind: "turn" | "discard"): void {
  if (!soundOn()) return;
  try {
    context ??= new AudioContext();
    const now = context.currentTime;
    const gain = context.createGain();
    gain.connect(context.destination);
    const notes = kind === "turn" ? [660, 880] : [220];
    const length = kind === "turn" ? 0.12 : 0.05;
    notes.forEach((frequency, index) => {
      const oscillator = context!.createOscillator();
      oscillator.type = kind === "turn" ? "sine" : "triangle";
      oscillator.frequency.value = frequency;
      oscillator.connect(gain);
      oscillator.start(now + index * length);
      oscillator.stop(now + (index + 1) * length);
    });
    gain.gain.setValueAtTime(0.15, now);
    gain.gain.exponentialRampToValueAtTime(0.001, now + notes.length * length + 0.05);
  } catch {
    // No sound, no harm.
  }
}
