// The list of finished games (#/games): every stored game, newest first, twenty at a time from
// GET /api/games (its `next` cursor fetches older ones), each opening the replay view. The lobby
// shows only the latest few and links here.

import { gameTitle, resultText } from "./replay.js";
import { t } from "./i18n.js";

const $ = (sel) => document.querySelector(sel);
let next = null;

export function gameLink(g) {
  const li = document.createElement("li");
  const a = document.createElement("a");
  a.href = `#/replay/${g.id}`;
  a.className = "recent-game";
  a.textContent = t("games.item", { title: gameTitle(g), result: resultText(g), moves: g.moves });
  li.append(a);
  return li;
}

export async function openGames() {
  $("#games-list").replaceChildren();
  next = null;
  await page();
}

async function page() {
  const more = $("#games-more");
  more.hidden = true;
  const url = `/api/games?limit=20${next ? `&before=${encodeURIComponent(next)}` : ""}`;
  try {
    const res = await fetch(url);
    if (!res.ok) return;
    const body = await res.json();
    $("#games-list").append(...body.games.map(gameLink));
    next = body.next ?? null;
    more.hidden = !next;
    if (!$("#games-list").children.length) {
      const li = document.createElement("li");
      li.className = "empty";
      li.textContent = t("games.none");
      $("#games-list").append(li);
    }
  } catch {
    // offline: what was shown stays
  }
}

export function initGames() {
  $("#games-more").addEventListener("click", page);
}
