// Draws the board as a grid of buttons (one per cell, each with a label for screen readers),
// with coordinates on the edges, the last move, the winning line, a move being sent, and a bot's
// principal variation drawn faintly with move numbers, and a previewed stone (a first tap on a
// touch screen, which a second tap plays).
//
// Keyboard: the board is one Tab stop (a roving tabindex, as the WAI-ARIA grid pattern asks);
// the arrow keys, Home and End move between cells, Enter or Space plays. Cells that cannot be
// played are aria-disabled rather than disabled, so they stay reachable and readable. The board
// is redrawn on every event, and the focused cell keeps the focus across redraws.

import { t } from "./i18n.js";

export function columnName(x) {
  // Columns a, b, c ... z (skipping nothing), then aa, ab ... for boards wider than 26 (the
  // server allows 32).
  const letter = (i) => String.fromCharCode(97 + i);
  return x < 26 ? letter(x) : letter(Math.floor(x / 26) - 1) + letter(x % 26);
}

export function cellName(x, y) {
  // Rows numbered from 1 at the top, as in Gomocup position files.
  return `${columnName(x)}${y + 1}`;
}

// `best`: a cell to ring as the engine's best move (the replay's review), or null.
export function renderBoard(el, room, { last, line, pv, clickable, onMove, pending = null, preview = null, navigable = true, best = null }) {
  const { width, height } = room;
  const stones = new Map();
  room.moves.forEach(([x, y], i) => stones.set(`${x},${y}`, i % 2 === 0 ? "x" : "o"));
  const inLine = new Set(line.map(([x, y]) => `${x},${y}`));
  const pvAt = new Map();
  let side = room.moves.length % 2 === 0 ? "x" : "o";
  pv.forEach(([x, y], i) => {
    if (!stones.has(`${x},${y}`) && !pvAt.has(`${x},${y}`)) pvAt.set(`${x},${y}`, { n: i + 1, side });
    side = side === "x" ? "o" : "x";
  });
  const toMove = room.moves.length % 2 === 0 ? "x" : "o";

  // The cell that holds the Tab stop: the one focused before this redraw, else the last one
  // focused, else the last move, else the centre.
  const active = document.activeElement;
  const hadFocus = navigable && el.contains(active) && active.dataset.x !== undefined;
  if (hadFocus) el.dataset.focus = `${active.dataset.x},${active.dataset.y}`;
  let [fx, fy] = (el.dataset.focus || "").split(",").map(Number);
  if (!(fx < width && fy < height)) {
    [fx, fy] = last || [Math.floor(width / 2), Math.floor(height / 2)];
  }

  el.style.setProperty("--cols", width);
  el.style.setProperty("--rows", height);
  el.classList.toggle("small", width <= 5);
  el.setAttribute("aria-rowcount", height);
  el.setAttribute("aria-colcount", width);
  const frag = document.createDocumentFragment();
  // Header row with column letters (decoration: every cell's label names its coordinates).
  frag.append(label(""));
  for (let x = 0; x < width; x++) frag.append(label(columnName(x)));
  let focusTarget = null;
  for (let y = 0; y < height; y++) {
    frag.append(label(String(y + 1)));
    const row = document.createElement("div");
    row.setAttribute("role", "row");
    row.className = "row";
    for (let x = 0; x < width; x++) {
      const key = `${x},${y}`;
      const stone = stones.get(key);
      const b = document.createElement("button");
      b.type = "button";
      b.className = "cell";
      b.setAttribute("role", "gridcell");
      b.dataset.x = x;
      b.dataset.y = y;
      const p = pvAt.get(key);
      const sending = pending && pending[0] === x && pending[1] === y && !stone;
      const previewed = !stone && !sending && preview && preview[0] === x && preview[1] === y;
      const side = toMove.toUpperCase();
      let desc = stone ? stone.toUpperCase() : sending ? t("cell.sending", { side }) : previewed ? t("cell.preview", { side }) : t("cell.empty");
      if (stone) b.classList.add(`has-${stone}`);
      if (sending) b.classList.add("pending", `pending-${toMove}`);
      if (previewed) b.classList.add("preview", `pending-${toMove}`);
      if (last && last[0] === x && last[1] === y) {
        b.classList.add("last");
        desc += `, ${t("cell.last")}`;
      }
      if (inLine.has(key)) {
        b.classList.add("win");
        desc += `, ${t("cell.win")}`;
      }
      if (best && best[0] === x && best[1] === y && !stone) {
        b.classList.add("best");
        desc += `, ${t("cell.best")}`;
      }
      if (p && !stone && !sending) {
        b.classList.add("pv", `pv-${p.side}`);
        b.dataset.pv = p.n;
      }
      b.setAttribute("aria-label", `${cellName(x, y)}, ${desc}`);
      const playable = clickable && !stone;
      b.setAttribute("aria-disabled", String(!playable));
      b.tabIndex = navigable && x === fx && y === fy ? 0 : -1;
      if (b.tabIndex === 0) focusTarget = b;
      if (playable) b.addEventListener("click", (ev) => onMove(x, y, ev));
      row.append(b);
    }
    frag.append(row);
  }
  el.replaceChildren(frag);
  if (hadFocus) focusTarget?.focus();
  if (navigable && !el.dataset.nav) {
    el.dataset.nav = "1";
    el.addEventListener("keydown", (ev) => moveFocus(el, ev));
  }
}

function moveFocus(el, ev) {
  const cell = ev.target.closest?.(".cell");
  if (!cell) return;
  const w = Number(el.getAttribute("aria-colcount"));
  const h = Number(el.getAttribute("aria-rowcount"));
  let x = Number(cell.dataset.x);
  let y = Number(cell.dataset.y);
  switch (ev.key) {
    case "ArrowLeft": x = Math.max(0, x - 1); break;
    case "ArrowRight": x = Math.min(w - 1, x + 1); break;
    case "ArrowUp": y = Math.max(0, y - 1); break;
    case "ArrowDown": y = Math.min(h - 1, y + 1); break;
    case "Home": x = 0; if (ev.ctrlKey) y = 0; break;
    case "End": x = w - 1; if (ev.ctrlKey) y = h - 1; break;
    default: return;
  }
  ev.preventDefault();
  const next = el.querySelector(`.cell[data-x="${x}"][data-y="${y}"]`);
  if (!next) return;
  cell.tabIndex = -1;
  next.tabIndex = 0;
  el.dataset.focus = `${x},${y}`;
  next.focus();
}

function label(text) {
  const s = document.createElement("span");
  s.className = "coord";
  s.setAttribute("aria-hidden", "true");
  s.textContent = text;
  return s;
}
