// The move list of a live game and of a replay: moves paired by number ("1. h8 i9"), one row per
// pair, each move a button that shows the position after it. The list scrolls inside its panel
// (never wider than it: rows, not columns) and keeps the chosen move, or the latest one, in view.

import { cellName } from "./board.js";
import { t } from "./i18n.js";

// `moves` are [x, y] pairs, X first. `current` is the ply shown on the board (1-based; 0 is the
// empty board); `live` says the board follows the game, so the list sticks to its end. `marks`
// (the replay's review) maps a move number to "mistake" or "blunder", shown as "?" / "??".
export function renderMoveList(ol, moves, { current, live, onPick, marks = new Map() }) {
  const rows = [];
  for (let i = 0; i < moves.length; i += 2) {
    const li = document.createElement("li");
    li.className = "mv-row";
    const n = document.createElement("span");
    n.className = "mv-n";
    n.textContent = `${i / 2 + 1}.`;
    li.append(n);
    for (const ply of [i + 1, i + 2]) {
      if (ply > moves.length) break;
      const [x, y] = moves[ply - 1];
      const b = document.createElement("button");
      b.type = "button";
      b.className = "mv";
      b.dataset.ply = ply;
      b.dataset.side = ply % 2 === 1 ? "x" : "o";
      b.textContent = cellName(x, y);
      let label = t("move.label", { n: ply, side: b.dataset.side.toUpperCase(), cell: cellName(x, y) });
      const mark = marks.get(ply);
      if (mark) {
        const m = document.createElement("span");
        m.className = `mv-mark mv-${mark}`;
        m.textContent = mark === "blunder" ? "??" : "?";
        m.setAttribute("aria-hidden", "true");
        b.append(m);
        b.dataset.judgement = mark;
        label += `, ${t(`review.${mark}`)}`;
      }
      b.setAttribute("aria-label", label);
      const here = ply === current;
      b.classList.toggle("current", here);
      b.setAttribute("aria-current", here ? "step" : "false");
      b.addEventListener("click", () => onPick(ply));
      li.append(b);
    }
    rows.push(li);
  }
  ol.replaceChildren(...rows);
  if (live) {
    ol.scrollTop = ol.scrollHeight;
  } else {
    const item = ol.querySelector(".mv.current")?.parentElement;
    if (item) keepInView(ol, item);
  }
}

// Scrolls only the list (scrollIntoView could scroll the page as well).
function keepInView(box, item) {
  const top = item.offsetTop - box.offsetTop;
  if (top < box.scrollTop) box.scrollTop = top;
  else if (top + item.offsetHeight > box.scrollTop + box.clientHeight) box.scrollTop = top + item.offsetHeight - box.clientHeight;
}
