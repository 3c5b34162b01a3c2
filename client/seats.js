// How a seat reads, the one shape for the lobby, the room and the replay. A live room's seat is
// {kind, name, connected} (a bot's name is its level); a stored game's is {kind: "human", name}
// or {kind: "bot", level} (docs/protocol.md): both read "name" or "name (bot)", ", away" for a
// live player whose connection is gone (in the page's language). `empty` is what a seat nobody
// took reads.

import { t } from "./i18n.js";

export function seatText(p, empty = t("seat.open")) {
  if (!p) return empty;
  const who = p.kind === "bot" ? t("seat.as_bot", { name: p.name ?? p.level }) : p.name;
  return p.connected === false ? t("seat.away", { who }) : who;
}
