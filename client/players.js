// Ratings pages (docs/ratings.md, docs/protocol.md "Players, leaderboards and ratings"):
// the leaderboard (#/leaderboard/<family>, a family picker filled from GET /api/ratings) and a
// player's profile (#/player/<name>: rating per family, its history as an SVG graph, W/D/L, the
// latest games linking to their replays). Reads only the HTTP API. Also keeps the bot levels'
// published ratings for the create form's seat menus.

import { t, errorText } from "./i18n.js";
import { gameLink } from "./games.js";

const $ = (sel) => document.querySelector(sel);
const SVG = "http://www.w3.org/2000/svg";

let catalogue = null; // GET /api/ratings: {families, bots}

// The families and bot ratings, fetched once (null while offline or on a server without them).
export async function ratingsCatalogue() {
  if (catalogue) return catalogue;
  try {
    const res = await fetch("/api/ratings");
    if (res.ok) catalogue = await res.json();
  } catch {
    // offline: asked again next time
  }
  return catalogue;
}

// A family's name as read: "caro-blitz" -> "Caro rule, blitz" (an unknown one as sent).
export function familyText(family) {
  const [rule, speed] = family.split("-");
  const r = t(`family.${rule}`);
  const s = t(`speed.${speed}`);
  return r.startsWith("family.") || s.startsWith("speed.") ? family : t("family.name", { rule: r, speed: s });
}

function playerLink(name) {
  const a = document.createElement("a");
  a.href = `#/player/${encodeURIComponent(name)}`;
  a.className = "player-link";
  a.textContent = name;
  return a;
}

function cellRow(tag, cells) {
  const tr = document.createElement("tr");
  for (const c of cells) {
    const td = document.createElement(tag);
    if (c instanceof Node) td.append(c);
    else td.textContent = String(c);
    tr.append(td);
  }
  return tr;
}

async function getJson(url) {
  try {
    const res = await fetch(url);
    const body = await res.json().catch(() => null);
    return res.ok ? { body } : { error: body?.error ?? { code: String(res.status), message: res.statusText } };
  } catch {
    return { error: { code: "disconnected" } };
  }
}

// ---------- the leaderboard ----------

export async function openLeaderboard(family) {
  const pick = $("#lb-family");
  const cat = await ratingsCatalogue();
  const families = cat?.families ?? [];
  pick.replaceChildren(...families.map((f) => new Option(familyText(f), f)));
  const chosen = families.includes(family) ? family : families.find((f) => f === "freestyle-untimed") ?? families[0];
  if (!chosen) {
    $("#lb-error").textContent = t("lb.unavailable");
    return;
  }
  pick.value = chosen;
  const body = $("#lb-rows");
  body.replaceChildren();
  $("#lb-error").textContent = "";
  const { body: board, error } = await getJson(`/api/leaderboard?family=${encodeURIComponent(chosen)}&limit=50`);
  if (error) {
    $("#lb-error").textContent = errorText(error);
    return;
  }
  body.replaceChildren(...board.players.map((p) => cellRow("td", [p.rank, playerLink(p.name), p.rating, `±${p.deviation}`, p.games])));
  $("#lb-empty").hidden = board.players.length > 0;
}

// ---------- a profile ----------

export async function openProfile(name) {
  $("#pf-name").textContent = name;
  $("#pf-error").textContent = "";
  for (const id of ["#pf-ratings", "#pf-games"]) $(id).replaceChildren();
  $("#pf-record").textContent = "";
  $("#pf-history").replaceChildren();
  $("#pf-body").hidden = true;
  const enc = encodeURIComponent(name);
  const [{ body: p, error }, games] = await Promise.all([getJson(`/api/players/${enc}`), getJson(`/api/players/${enc}/games?limit=10`)]);
  if (error) {
    $("#pf-error").textContent = errorText(error);
    return;
  }
  $("#pf-body").hidden = false;
  $("#pf-name").textContent = p.name;
  $("#pf-joined").textContent = t("pf.joined", { date: new Date(p.joined_ms).toLocaleDateString() });
  $("#pf-record").textContent = t("pf.record", p.record);
  $("#pf-ratings").replaceChildren(
    ...p.ratings.map((r) =>
      cellRow("td", [familyText(r.family), `${r.rating}${r.provisional ? "?" : ""}`, `±${r.deviation}`, r.games, `${r.wins} / ${r.draws} / ${r.losses}`]),
    ),
  );
  $("#pf-no-ratings").hidden = p.ratings.length > 0;
  renderHistory(p.history);
  const list = games.body?.games ?? [];
  $("#pf-games").replaceChildren(...list.map(gameLink));
  $("#pf-no-games").hidden = list.length > 0;
}

// The rating after each rated game, one line per family, oldest left: a point per game with its
// label (family, rating, game), the axis labelled with the lowest and highest rating.
function renderHistory(history) {
  const svg = $("#pf-history");
  svg.toggleAttribute("hidden", history.length === 0);
  if (!history.length) return;
  const W = 300;
  const H = 120;
  const PAD = 12;
  const values = history.map((h) => h.rating);
  const lo = Math.min(...values) - 20;
  const hi = Math.max(...values) + 20;
  const n = Math.max(1, history.length - 1);
  const px = (i) => PAD + 24 + (i / n) * (W - 2 * PAD - 24);
  const py = (v) => H - PAD - ((v - lo) / (hi - lo)) * (H - 2 * PAD);
  const el = (tag, attrs = {}) => {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    return e;
  };
  const title = el("title", { id: "pf-history-title" });
  title.textContent = t("pf.history_graph", { n: history.length });
  const kids = [title];
  for (const v of [Math.round(lo + 20), Math.round(hi - 20)]) {
    const label = el("text", { x: 2, y: py(v) + 3, class: "axis" });
    label.textContent = String(v);
    kids.push(label);
  }
  const families = [...new Set(history.map((h) => h.family))];
  families.forEach((family, k) => {
    const idx = history.map((h, i) => [h, i]).filter(([h]) => h.family === family);
    kids.push(el("polyline", { points: idx.map(([h, i]) => `${px(i)},${py(h.rating)}`).join(" "), class: `curve c${k % 4}` }));
    for (const [h, i] of idx) {
      const a = el("a", { href: `#/replay/${h.game_id}`, class: `pt c${k % 4}`, "data-game": h.game_id });
      const label = t("pf.history_point", { family: familyText(family), rating: h.rating, date: new Date(h.at_ms).toLocaleDateString() });
      a.setAttribute("aria-label", label);
      const tip = el("title");
      tip.textContent = label;
      a.append(tip, el("circle", { cx: px(i), cy: py(h.rating), r: 3.5 }));
      kids.push(a);
    }
  });
  svg.replaceChildren(...kids);
}

export function initPlayers() {
  $("#lb-family").addEventListener("change", (ev) => (location.hash = `#/leaderboard/${ev.target.value}`));
}
