// The replay view (#/replay/<id>): a finished game from GET /api/games/{id}, stepped through
// move by move (first / previous / next / last, a slider, the move list, arrow keys), with the
// players' chat and download links for the .psq record and the JSON, and the engine's review of
// the game (review.js: the evaluation graph, mistakes and blunders, the best move and line at
// each position). Reads only the HTTP API: no WebSocket needed.

import { renderBoard } from "./board.js";
import { renderMoveList } from "./movelist.js";
import { seatText } from "./seats.js";
import { t, has } from "./i18n.js";
import { openReview, closeReview, renderReview, reviewBoard, reviewMarks, initReview } from "./review.js";

const $ = (sel) => document.querySelector(sel);

const rp = { game: null, ply: 0 };

// "X wins by five in a row", "Draw (the board is full)", "X wins on time": for a live room or a
// stored game (which has no win_length: tic-tac-toe is three in a row, Caro five). A reason the
// catalogue does not know reads as the server names it.
export function resultText(g) {
  if (!g.result) return t("result.unfinished");
  const k = g.win_length ?? (g.game === "tictactoe" ? 3 : 5);
  const outcome = g.result === "draw" ? "draw" : "win";
  const key = `result.${outcome}.${g.reason}`;
  const params = { side: g.result.toUpperCase(), count: has(`count.${k}`) ? t(`count.${k}`) : k, reason: g.reason ?? "" };
  return t(has(key) ? key : `result.${outcome}.other`, params);
}

export function gameTitle(g) {
  const unknown = t("title.unknown");
  return t("title.vs", { x: seatText(g.players.x, unknown), o: seatText(g.players.o, unknown) });
}

// `analyse`: ask for the engine's review at once (the game view's "Analyse" button).
export async function openReplay(id, onMissing, { analyse = false } = {}) {
  rp.game = null;
  closeReview();
  $("#rp-title").textContent = t("game.loading");
  $("#rp-board").replaceChildren();
  $("#rp-moves").replaceChildren();
  const res = await fetch(`/api/games/${encodeURIComponent(id)}`);
  if (!res.ok) {
    onMissing(t(res.status === 404 ? "replay.missing" : "replay.failed"));
    return;
  }
  rp.game = await res.json();
  rp.ply = rp.game.moves.length;
  const g = rp.game;
  $("#rp-title").textContent = gameTitle(g);
  // A stored forfeit keeps what the outside engine did, as the live room showed it.
  const result = resultText(g);
  $("#rp-result").textContent = g.reason === "forfeit" && g.detail ? t("game.forfeit_detail", { result, detail: g.detail }) : result;
  $("#rp-psq").href = `/api/games/${g.id}.psq`;
  $("#rp-json").href = `/api/games/${g.id}.json`;
  const slider = $("#rp-slider");
  slider.max = String(g.moves.length);
  renderChat(g.chat ?? []);
  render();
  openReview(g, { start: analyse });
}

export function leaveReplay() {
  closeReview();
}

// The players' chat, kept with the game: "Ann (X): gg".
function renderChat(lines) {
  $("#rp-chat-panel").hidden = lines.length === 0;
  $("#rp-chat").replaceChildren(
    ...lines.map((l) => {
      const li = document.createElement("li");
      li.textContent = t("replay.chat_line", { from: l.from, seat: (l.seat ?? "").toUpperCase(), text: l.text });
      return li;
    }),
  );
}

function go(ply) {
  if (!rp.game) return;
  rp.ply = Math.max(0, Math.min(rp.game.moves.length, ply));
  render();
}

// The record keeps no winning line: at the final position of a game won by a line, find the
// run through the last move (at least 3 at tic-tac-toe, 5 at Caro; every rule variant's win
// is such a run).
function winningLine(g, moves) {
  if (g.reason !== "line" || !moves.length || moves.length !== g.moves.length) return [];
  const need = g.game === "tictactoe" ? 3 : 5;
  const side = (moves.length - 1) % 2;
  const mine = new Set(moves.filter((_, i) => i % 2 === side).map(([x, y]) => `${x},${y}`));
  const [lx, ly] = moves[moves.length - 1];
  for (const [dx, dy] of [[1, 0], [0, 1], [1, 1], [1, -1]]) {
    const line = [[lx, ly]];
    for (const s of [1, -1]) {
      let x = lx + s * dx;
      let y = ly + s * dy;
      while (mine.has(`${x},${y}`)) {
        line.push([x, y]);
        x += s * dx;
        y += s * dy;
      }
    }
    if (line.length >= need) return line;
  }
  return [];
}

function render() {
  const g = rp.game;
  const moves = g.moves.slice(0, rp.ply).map((m) => [m.x, m.y]);
  const engine = reviewBoard(rp.ply);
  renderBoard($("#rp-board"), { width: g.width, height: g.height, moves }, {
    last: moves[moves.length - 1],
    line: winningLine(g, moves),
    pv: engine.pv,
    best: engine.best,
    clickable: false,
    onMove: () => {},
    navigable: false,
  });
  $("#rp-slider").value = String(rp.ply);
  $("#rp-pos").textContent = t("replay.pos", { n: rp.ply, total: g.moves.length });
  renderMoveList($("#rp-moves"), g.moves.map((m) => [m.x, m.y]), { current: rp.ply, live: false, onPick: go, marks: reviewMarks() });
  renderReview(rp.ply);
}

export function initReplay() {
  initReview((ply) => (ply === null ? rp.game && render() : go(ply)));
  $("#rp-first").addEventListener("click", () => go(0));
  $("#rp-prev").addEventListener("click", () => go(rp.ply - 1));
  $("#rp-next").addEventListener("click", () => go(rp.ply + 1));
  $("#rp-last").addEventListener("click", () => go(Infinity));
  $("#rp-slider").addEventListener("input", (ev) => go(Number(ev.target.value)));
  document.addEventListener("keydown", (ev) => {
    if ($("#replay").hidden || ev.target.tagName === "INPUT") return;
    const to = { ArrowLeft: rp.ply - 1, ArrowRight: rp.ply + 1, Home: 0, End: Infinity }[ev.key];
    if (to === undefined) return;
    ev.preventDefault();
    go(to);
  });
}
