// Telling a player in another tab that the game wants them: while the page is hidden, the title
// flashes ("● Your move" and the page's own title in turn) until the page is shown again, and,
// if the player switched the sound on (remembered in localStorage), a short beep plays. The beep
// is made with WebAudio, so no sound file is served.

const SOUND_KEY = "caro-arena.sound";
const FLASH_MS = 1000;

let baseTitle = document.title;
let flashing = null; // the interval flashing the title
let audio = null; // the AudioContext, made on the first user gesture that allows it

export function soundOn() {
  return localStorage.getItem(SOUND_KEY) === "on";
}

// Wires the sound checkbox; the AudioContext is created by the click that switches it on (a
// browser lets a page start audio only after a gesture).
export function initAlerts(toggle) {
  toggle.checked = soundOn();
  toggle.addEventListener("change", () => {
    localStorage.setItem(SOUND_KEY, toggle.checked ? "on" : "off");
    if (toggle.checked) {
      ensureAudio();
      beep();
    }
  });
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") stopFlash();
  });
}

// `text` is what the title says ("Your move", "Your game has started"). Does nothing while the
// page is visible: the board says it already.
export function alertPlayer(text) {
  if (document.visibilityState !== "hidden") return;
  stopFlash();
  baseTitle = document.title;
  let on = true;
  document.title = `● ${text}`;
  flashing = setInterval(() => {
    on = !on;
    document.title = on ? `● ${text}` : baseTitle;
  }, FLASH_MS);
  if (soundOn()) beep();
}

function stopFlash() {
  if (flashing === null) return;
  clearInterval(flashing);
  flashing = null;
  document.title = baseTitle;
}

function ensureAudio() {
  const Ctx = window.AudioContext || window.webkitAudioContext;
  if (!audio && Ctx) audio = new Ctx();
  return audio;
}

// Two short rising tones, quiet.
function beep() {
  const ctx = ensureAudio();
  if (!ctx) return;
  ctx.resume?.();
  const t = ctx.currentTime;
  for (const [i, freq] of [660, 880].entries()) {
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, t + i * 0.15);
    gain.gain.exponentialRampToValueAtTime(0.15, t + i * 0.15 + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, t + i * 0.15 + 0.13);
    osc.connect(gain).connect(ctx.destination);
    osc.start(t + i * 0.15);
    osc.stop(t + i * 0.15 + 0.14);
  }
}
