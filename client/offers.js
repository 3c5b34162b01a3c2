// Offers between the players of a room (docs/protocol.md "Offers: draws and takebacks" and
// "Rematch"): the buttons to offer a draw, ask for a takeback or offer a rematch, an opponent's
// offer with Accept and Decline, and how each offer ended. The server keeps the pending offers;
// this module mirrors them from `room_joined.room.offers`, `offer` and `offer_ended`. Its text is
// the catalogue's (offer.*, error.*: i18n.js).

import { t, errorText } from "./i18n.js";

const $ = (sel) => document.querySelector(sel);
// The kinds and outcomes the catalogue words (offer.ended.<kind>.<outcome>).
const KINDS = ["draw", "takeback", "rematch"];
const OUTCOMES = ["accepted", "declined", "lapsed"];
const offers = { roomId: null, pending: [], note: "" };
let deps = null;

// `conn` sends; `onError` shows a sentence; `current()` is {room, you} of the game view.
export function initOffers(conn, onError, current) {
  deps = { conn, onError, current };
  const send = (kind) => () => offer(kind);
  $("#offer-draw").addEventListener("click", send("draw"));
  $("#offer-takeback").addEventListener("click", send("takeback"));
  $("#offer-rematch").addEventListener("click", send("rematch"));
  $("#offer-accept").addEventListener("click", () => respond(true));
  $("#offer-decline").addEventListener("click", () => respond(false));
}

async function offer(kind) {
  const { room } = deps.current();
  if (!room) return;
  try {
    await deps.conn.request("offer", { room_id: room.room_id, kind });
  } catch (err) {
    deps.onError(errorText(err));
  }
}

function incoming() {
  const { you } = deps.current();
  return offers.pending.find((o) => you?.role === "player" && o.by !== you.seat);
}

async function respond(accept) {
  const { room } = deps.current();
  const o = incoming();
  if (!room || !o) return;
  try {
    await deps.conn.request("respond", { room_id: room.room_id, kind: o.kind, accept });
  } catch (err) {
    deps.onError(errorText(err));
  }
}

// A snapshot: its pending offers replace ours.
export function offersJoined(room) {
  if (offers.roomId !== room.room_id) offers.note = "";
  offers.roomId = room.room_id;
  offers.pending = (room.offers || []).filter((o) => KINDS.includes(o.kind)).map((o) => ({ kind: o.kind, by: o.by }));
}

// `offer` and `offer_ended` messages; returns true when the message was this room's.
export function offerMessage(msg) {
  if (msg.room_id !== offers.roomId) return false;
  offers.pending = offers.pending.filter((o) => o.kind !== msg.kind);
  if (msg.type === "offer" && KINDS.includes(msg.kind)) {
    offers.pending.push({ kind: msg.kind, by: msg.by });
    offers.note = "";
  } else if (msg.type === "offer_ended") {
    offers.note = KINDS.includes(msg.kind) && OUTCOMES.includes(msg.outcome) ? t(`offer.ended.${msg.kind}.${msg.outcome}`) : `${msg.kind}: ${msg.outcome}`;
  }
  return true;
}

// Drawn with the game view: which buttons a seated player has, and the offers on the table.
export function renderOffers(room, you) {
  const player = you?.role === "player" && room;
  const playing = player && room.status === "playing";
  const mineOf = (kind) => offers.pending.some((o) => o.kind === kind && o.by === you?.seat);
  $("#offer-draw").hidden = !playing;
  $("#offer-draw").disabled = Boolean(playing && mineOf("draw"));
  $("#offer-takeback").hidden = !playing;
  $("#offer-takeback").disabled = Boolean(playing && mineOf("takeback"));
  $("#offer-rematch").hidden = !(player && room.status === "finished");
  $("#offer-rematch").disabled = Boolean(player && mineOf("rematch"));

  const box = $("#offer-box");
  const inc = room && incoming();
  let text = "";
  if (inc) {
    text = t(`offer.incoming.${inc.kind}`);
  } else if (room && offers.pending.length) {
    const o = offers.pending[offers.pending.length - 1];
    text = player ? t(`offer.mine.${o.kind}`) : t(`offer.watching.${o.kind}`, { side: o.by.toUpperCase() });
  } else if (room) {
    text = offers.note;
  }
  box.hidden = !text;
  box.dataset.kind = inc?.kind || "";
  $("#offer-text").textContent = text;
  $("#offer-accept").hidden = !inc;
  $("#offer-decline").hidden = !inc;
}
