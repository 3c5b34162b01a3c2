// How a seat reads, the one shape for the lobby, the room and the replay. A live room's seat is
// {kind, name, connected} (a bot's name is its level); a stored game's is {kind: "human", name}
// or {kind: "bot", level} (docs/protocol.md): both read "name" or "name (bot)", ", away" for a
// live player whose connection is gone (in the page's language), and the rating of an account or
// a rated bot. `empty` is what a seat nobody took reads.

import { t } from "./i18n.js";

export function seatText(p, empty = t("seat.open")) {
  if (!p) return empty;
  let who = p.kind === "bot" ? t("seat.as_bot", { name: p.name ?? p.level }) : p.name;
  if (p.rating) who = t("seat.rated", { who, rating: ratingText(p.rating) });
  return p.connected === false ? t("seat.away", { who }) : who;
}

// A seat's rating ({value, provisional}, docs/protocol.md "Ratings") or a bare number: "1523",
// "1500?" while provisional (the lichess habit).
export function ratingText(r) {
  if (typeof r === "number") return String(r);
  return `${r.value}${r.provisional ? "?" : ""}`;
}

// A seat's name as a link to its profile when it is an account's (a human seat with a rating:
// guests have none), else as text.
export function seatNode(p, empty) {
  const text = seatText(p, empty);
  if (!p || p.kind === "bot" || !p.rating) return document.createTextNode(text);
  const a = document.createElement("a");
  a.href = `#/player/${encodeURIComponent(p.name)}`;
  a.className = "player-link";
  a.textContent = text;
  return a;
}
