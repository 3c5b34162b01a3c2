// How a seat reads, the one shape for the lobby, the room and the replay. A live room's seat is
// {kind, name, connected} (a bot's name is its level); a stored game's is {kind: "human", name}
// or {kind: "bot", level} (docs/protocol.md): both read "name" or "name (bot)", ", away" for a
// live player whose connection is gone. `empty` is what a seat nobody took reads.
export function seatText(p, empty = "open seat") {
  if (!p) return empty;
  const who = p.kind === "bot" ? `${p.name ?? p.level} (bot)` : p.name;
  return p.connected === false ? `${who}, away` : who;
}
