// Game clocks in the page (protocol v2, docs/protocol.md "Time controls"): the server is the
// authority; every `move`, `room_joined`, `room_update` and `game_over` of a game with a clock
// carries both times left as of its send and the running side, and this module counts the
// running one down locally until the next message. It also counts down an away player's time
// before it loses by abandonment (`abandon_ms` on a player of `room_update` / `room_joined`).
//
// Self-contained: app.js hands it the messages and the elements; it owns its timer.

import { t } from "./i18n.js";

const TICK_MS = 100;

// The create form's choices, [value, label]: "none", "fischer:<base_ms>:<increment_ms>",
// "per_move:<move_ms>"; each labelled as the game will read it, in the page's language (fixed
// for the page's life: a language switch reloads it).
const CHOICES = ["none", "fischer:180000:2000", "fischer:300000:3000", "fischer:600000:5000", "per_move:30000"];
export const TIME_CONTROLS = CHOICES.map((v) => [v, v === "none" ? t("tc.none") : timeControlText(timeControlOf(v))]);

// A choice of TIME_CONTROLS as create_room's `time_control`; `undefined` for no clock, so the
// message is the same as a v1 client's.
export function timeControlOf(value) {
  const [kind, a, b] = String(value || "none").split(":");
  if (kind === "fischer") return { kind, base_ms: Number(a), increment_ms: Number(b) };
  if (kind === "per_move") return { kind, move_ms: Number(a) };
  return undefined;
}

// "3 + 2", "30 s per move", "1.5 s + 0": how a time control reads in the lobby and the game.
export function timeControlText(tc) {
  if (!tc) return "";
  const s = (ms) => (ms % 60000 === 0 ? `${ms / 60000}` : t("tc.seconds", { n: ms / 1000 }));
  if (tc.kind === "fischer") return t("tc.fischer", { base: s(tc.base_ms), increment: tc.increment_ms / 1000 });
  if (tc.kind === "per_move") return t("tc.per_move", { n: tc.move_ms / 1000 });
  return "";
}

// m:ss, with tenths under ten seconds.
export function formatMs(ms) {
  const t = Math.max(0, ms);
  if (t < 10000) return `0:0${(Math.floor(t / 100) / 10).toFixed(1)}`;
  const total = Math.ceil(t / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = String(total % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

export class Clocks {
  // `els`: { x, o } elements for the clocks, { x, o } for the away countdowns.
  constructor(clockEls, awayEls) {
    this.clockEls = clockEls;
    this.awayEls = awayEls;
    this.clock = null; // the last clock from the server
    this.at = 0; // performance.now() when it arrived
    this.away = { x: null, o: null }; // { ms, at } per away player
    this.timer = null;
  }

  // A message of the current room: takes its `clock` (if it has one) and the away countdowns
  // of its `players` (if it has them).
  update(clock, players) {
    const now = performance.now();
    if (clock !== undefined) {
      this.clock = clock || null;
      this.at = now;
    }
    if (players) {
      for (const seat of ["x", "o"]) {
        const ms = players[seat]?.abandon_ms;
        this.away[seat] = typeof ms === "number" ? { ms, at: now } : null;
      }
    }
    this.render();
    const ticking = this.clock?.running || this.away.x || this.away.o;
    if (ticking && !this.timer) this.timer = setInterval(() => this.render(), TICK_MS);
    if (!ticking) this.stopTimer();
  }

  // The game ended: the clocks stop as the server stopped them, and nobody is counted away.
  finished(clock) {
    this.away = { x: null, o: null };
    this.update(clock === undefined ? this.clock && { ...this.clock, running: null } : clock, null);
  }

  // Another room, or none.
  reset() {
    this.clock = null;
    this.away = { x: null, o: null };
    this.stopTimer();
    this.render();
  }

  stopTimer() {
    clearInterval(this.timer);
    this.timer = null;
  }

  left(seat) {
    if (!this.clock) return null;
    const ms = this.clock[seat];
    return this.clock.running === seat ? ms - (performance.now() - this.at) : ms;
  }

  render() {
    for (const seat of ["x", "o"]) {
      const el = this.clockEls[seat];
      if (el) {
        const ms = this.left(seat);
        el.hidden = ms === null;
        if (ms !== null) {
          el.textContent = formatMs(ms);
          el.classList.toggle("running", this.clock.running === seat);
          el.classList.toggle("low", ms < 10000);
          el.classList.toggle("flagged", ms <= 0);
        }
      }
      const awayEl = this.awayEls[seat];
      if (awayEl) {
        const a = this.away[seat];
        awayEl.hidden = !a;
        if (a) awayEl.textContent = t("clock.away", { time: formatMs(a.ms - (performance.now() - a.at)) });
      }
    }
  }
}
