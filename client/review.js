// The engine's review of a finished game in the replay view (docs/analysis.md): the "Analyse"
// button asks the server (POST /api/games/{id}/analysis), the progress is polled (GET, every
// half second) until the stored analysis is there, and then the replay shows an evaluation graph
// over the game (one point per position, mistakes and blunders marked, a click on a point jumps
// there), the marks in the move list, and at each position the engine's score, its best move
// (highlighted on the board) and its line. A game analysed before shows its analysis at once, to
// anyone who opens its replay. Reads only the HTTP API.
//
// The graph is a plain SVG: X better is up, O better is down; a score is drawn as
// tanh(eval / EVAL_SCALE) of the half height (the live panel's scale too), a forced win at the
// edge.

import { cellName } from "./board.js";
import { t, errorText } from "./i18n.js";
import { TOKEN_KEY } from "./net.js";

// Engine units drawn at tanh(1) of the half height, for the review graph and the live bot panel:
// 1.5 times the blunder threshold (src/analysis.rs), so that a blunder from an even position
// moves the line as far as it did before the thresholds grew with the tuned weights (1500 then).
export const EVAL_SCALE = 2250;

const $ = (sel) => document.querySelector(sel);
const SVG = "http://www.w3.org/2000/svg";
const POLL_MS = 500;
// The graph's drawing box (the SVG scales it to the panel's width).
const W = 300;
const H = 110;
const PAD = 8;

const rv = {
  game: null, // the stored game (GET /api/games/{id})
  positions: null, // the analysis' positions, once done
  thresholds: null,
  nodes: null,
  generation: 0, // bumped on every open: a poll of an earlier game stops
  timer: null,
  onJump: () => {},
};

// The judgement of move `ply` ("mistake", "blunder") or undefined.
export function judgementOf(ply) {
  return rv.positions?.[ply]?.judgement;
}

// The marks for the move list: ply -> judgement.
export function reviewMarks() {
  const marks = new Map();
  for (const p of rv.positions ?? []) if (p.judgement) marks.set(p.ply, p.judgement);
  return marks;
}

// What the board shows at position `ply`: the engine's best move and its line, as [x, y].
export function reviewBoard(ply) {
  const p = rv.positions?.[ply];
  if (!p) return { best: null, pv: [] };
  return { best: p.best ? [p.best.x, p.best.y] : null, pv: p.pv.map((c) => [c.x, c.y]) };
}

// A position's score from X's side as text: "+0.35", "X wins in 1", or "game over".
function scoreText(p) {
  if (p.mate === null || p.mate === undefined) return `${p.eval > 0 ? "+" : ""}${(p.eval / 100).toFixed(2)}`;
  if (p.mate === 0) return t("review.over");
  return t("an.wins_in", { side: p.mate > 0 ? "X" : "O", n: Math.ceil(Math.abs(p.mate) / 2) });
}

// -1 (O winning) .. 1 (X winning). A game won on the board (mate 0) is its winner's.
function share(p) {
  if (p.mate === null || p.mate === undefined) return Math.tanh(p.eval / EVAL_SCALE);
  if (p.mate !== 0) return Math.sign(p.mate);
  return rv.game.result === "x" ? 1 : rv.game.result === "o" ? -1 : 0;
}

// "Move 8, O at h8" for move `ply`, or "the start" for position 0.
function moveName(ply) {
  if (ply === 0) return t("review.start_position");
  const m = rv.game.moves[ply - 1];
  return t("review.move", { n: ply, side: ply % 2 === 1 ? "X" : "O", cell: cellName(m.x, m.y) });
}

function setStatus(text) {
  $("#review-status").textContent = text;
}

function stopPolling() {
  clearTimeout(rv.timer);
  rv.timer = null;
}

// Opens the review of `game` (the replay view's game): shows the stored analysis if there is
// one, the progress of a running one, else the button; `start` asks for one at once (the game
// view's "Analyse" button) unless it is done or running.
export async function openReview(game, { start = false } = {}) {
  stopPolling();
  const generation = ++rv.generation;
  rv.game = game;
  rv.positions = null;
  rv.thresholds = null;
  $("#review-error").textContent = "";
  delete $("#review-error").dataset.code;
  $("#review-start").hidden = true;
  $("#review-progress").hidden = true;
  setStatus(t("review.loading"));
  renderGraph();
  const body = await getJson(`/api/games/${encodeURIComponent(game.id)}/analysis`);
  if (generation !== rv.generation) return;
  if (!body) {
    setStatus(t("review.failed"));
    return;
  }
  if (body.status === "none" && start) {
    await request(generation);
    return;
  }
  apply(body, generation);
}

async function getJson(url, init) {
  try {
    const res = await fetch(url, init);
    const body = await res.json().catch(() => null);
    return res.ok ? body : { error: body?.error ?? { code: String(res.status), message: res.statusText } };
  } catch {
    return null;
  }
}

// POST: 202 and the progress, or a refusal shown by its code; an analysis already running is
// followed like one just asked for.
async function request(generation) {
  $("#review-error").textContent = "";
  $("#review-start").disabled = true;
  // The session token: an account's analyses count against the account, wherever it asks from
  // (docs/analysis.md, "Limits"); a guest's count against its address.
  const token = localStorage.getItem(TOKEN_KEY);
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const body = await getJson(`/api/games/${encodeURIComponent(rv.game.id)}/analysis`, { method: "POST", headers });
  $("#review-start").disabled = false;
  if (generation !== rv.generation) return;
  if (!body) {
    $("#review-error").textContent = errorText({ code: "disconnected" });
    return;
  }
  if (body.error && body.error.code !== "analysis_running") {
    $("#review-error").textContent = errorText(body.error);
    $("#review-error").dataset.code = body.error.code;
    return;
  }
  if (body.error) return poll(generation);
  apply(body, generation);
}

function apply(body, generation) {
  const button = $("#review-start");
  const progress = $("#review-progress");
  if (body.error) {
    setStatus(t("review.failed"));
    $("#review-error").textContent = errorText(body.error);
    return;
  }
  if (body.status === "none") {
    setStatus(t("review.none"));
    button.hidden = false;
    progress.hidden = true;
    return;
  }
  if (body.status === "running") {
    button.hidden = true;
    progress.hidden = false;
    progress.max = body.total;
    progress.value = body.done;
    // Nothing searched yet: the analysis waits for a search slot no live bot wants.
    setStatus(t(body.done === 0 ? "review.queued" : "review.running", { done: body.done, total: body.total }));
    rv.timer = setTimeout(() => poll(generation), POLL_MS);
    return;
  }
  // done
  button.hidden = true;
  progress.hidden = true;
  rv.positions = body.analysis.positions;
  rv.thresholds = body.thresholds;
  rv.nodes = body.analysis.nodes_per_position;
  const count = (j) => rv.positions.filter((p) => p.judgement === j).length;
  setStatus(t("review.done", { nodes: rv.nodes, mistakes: count("mistake"), blunders: count("blunder") }));
  rv.onJump(null);
}

async function poll(generation) {
  if (generation !== rv.generation) return;
  const body = await getJson(`/api/games/${encodeURIComponent(rv.game.id)}/analysis`);
  if (generation !== rv.generation) return;
  if (!body) {
    // offline for a moment: look again
    rv.timer = setTimeout(() => poll(generation), POLL_MS * 4);
    return;
  }
  apply(body, generation);
}

// Leaving the replay view stops polling.
export function closeReview() {
  stopPolling();
  rv.generation++;
  rv.positions = null;
}

// The graph and the panel at position `ply` (the replay's current one).
export function renderReview(ply) {
  renderGraph(ply);
  const here = $("#review-here");
  const note = $("#review-note");
  const p = rv.positions?.[ply];
  here.hidden = !p;
  note.textContent = "";
  delete note.dataset.judgement;
  if (!p) return;
  $("#review-score").textContent = scoreText(p);
  $("#review-best").textContent = p.best ? cellName(p.best.x, p.best.y) : "–";
  $("#review-line").textContent = p.pv.length ? p.pv.map((c) => cellName(c.x, c.y)).join(" ") : "–";
  if (p.judgement) {
    const before = rv.positions[ply - 1];
    const best = before?.best ? cellName(before.best.x, before.best.y) : "–";
    const m = rv.game.moves[ply - 1];
    // At a small budget the engine's evaluation can drop after the very move it chose (the
    // tempo): say so rather than "would have played" the same cell.
    const same = before?.best && before.best.x === m.x && before.best.y === m.y;
    note.textContent = t(same ? "review.judged_same" : "review.judged", { move: moveName(ply), judgement: t(`review.${p.judgement}`), best });
    note.dataset.judgement = p.judgement;
  }
}

function el(name, attrs = {}) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

// One point per position (ply 0 .. the number of moves), a line through them, the mistakes and
// blunders marked ("?" / "??" over a coloured point), the current position a vertical rule.
// Each point is a button (Tab, Enter) labelled with its position, score and judgement.
function renderGraph(current = null) {
  const svg = $("#review-graph");
  const ps = rv.positions;
  svg.toggleAttribute("hidden", !ps);
  if (!ps) {
    svg.replaceChildren();
    return;
  }
  const n = Math.max(1, ps.length - 1);
  const px = (ply) => PAD + (ply / n) * (W - 2 * PAD);
  const py = (p) => H / 2 - share(p) * (H / 2 - PAD - 6);
  const title = el("title", { id: "review-graph-title" });
  title.textContent = t("review.graph", { n: ps.length });
  const kids = [
    title,
    el("rect", { x: 0, y: 0, width: W, height: H / 2, class: "x-half" }),
    el("line", { x1: 0, y1: H / 2, x2: W, y2: H / 2, class: "mid" }),
  ];
  if (current !== null && ps[current]) {
    kids.push(el("line", { x1: px(current), y1: 0, x2: px(current), y2: H, class: "now" }));
  }
  kids.push(el("polyline", { points: ps.map((p) => `${px(p.ply)},${py(p)}`).join(" "), class: "curve" }));
  for (const p of ps) {
    const g = el("g", { class: `pt${p.judgement ? ` pt-${p.judgement}` : ""}${p.ply === current ? " current" : ""}`, "data-ply": p.ply, tabindex: 0, role: "button" });
    const mark = p.judgement ? ` ${t(`review.${p.judgement}`)}.` : "";
    const label = t("review.point", { move: moveName(p.ply), score: scoreText(p) }) + mark;
    g.setAttribute("aria-label", label);
    const tip = el("title");
    tip.textContent = label;
    g.append(tip, el("circle", { cx: px(p.ply), cy: py(p), r: p.judgement ? 4.5 : 3 }));
    if (p.judgement) {
      const text = el("text", { x: px(p.ply), y: Math.max(10, py(p) - 7), "text-anchor": "middle" });
      text.textContent = p.judgement === "blunder" ? "??" : "?";
      g.append(text);
    }
    const jump = () => rv.onJump(p.ply);
    g.addEventListener("click", jump);
    g.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter" && ev.key !== " ") return;
      ev.preventDefault();
      jump();
    });
    kids.push(g);
  }
  svg.replaceChildren(...kids);
}

// `onJump(ply)` shows position `ply` in the replay (null: draw the current one again).
export function initReview(onJump) {
  rv.onJump = onJump;
  $("#review-start").addEventListener("click", () => {
    if (rv.game) request(rv.generation);
  });
}
