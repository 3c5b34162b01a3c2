// Draws the board as a grid of buttons (one per cell, each with a label for screen readers),
// with coordinates on the edges, the last move, the winning line and a bot's principal variation
// drawn faintly with move numbers.

export function cellName(x, y) {
  // Columns a, b, c ... (skipping nothing), rows numbered from 1 at the top, as in the Gomocup
  // position files the engine is tested with.
  return `${String.fromCharCode(97 + x)}${y + 1}`;
}

export function renderBoard(el, room, { last, line, pv, clickable, onMove }) {
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

  el.style.setProperty("--cols", width);
  el.style.setProperty("--rows", height);
  el.classList.toggle("small", width <= 5);
  const frag = document.createDocumentFragment();
  // Header row with column letters.
  frag.append(label(""));
  for (let x = 0; x < width; x++) frag.append(label(String.fromCharCode(97 + x)));
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
      let desc = stone ? stone.toUpperCase() : "empty";
      if (stone) b.classList.add(`has-${stone}`);
      if (last && last[0] === x && last[1] === y) {
        b.classList.add("last");
        desc += ", last move";
      }
      if (inLine.has(key)) {
        b.classList.add("win");
        desc += ", winning line";
      }
      if (p && !stone) {
        b.classList.add("pv", `pv-${p.side}`);
        b.dataset.pv = p.n;
      }
      b.setAttribute("aria-label", `${cellName(x, y)}, ${desc}`);
      b.disabled = !clickable || !!stone;
      if (!stone && clickable) b.addEventListener("click", () => onMove(x, y));
      row.append(b);
    }
    frag.append(row);
  }
  el.replaceChildren(frag);
}

function label(text) {
  const s = document.createElement("span");
  s.className = "coord";
  s.setAttribute("aria-hidden", "true");
  s.textContent = text;
  return s;
}
