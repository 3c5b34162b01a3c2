// Offers between the players of a room (docs/protocol.md "Offers: draws and takebacks" and
// "Rematch"): the buttons to offer a draw, ask for a takeback or offer a rematch, an opponent's
// offer with Accept and Decline, and how each offer ended. The server keeps the pending offers;
// this module mirrors them from `room_joined.room.offers`, `offer` and `offer_ended`.

// The user-visible strings, together for the string catalogue.
const TEXT = {
  offer_draw: "Offer draw",
  takeback: "Takeback",
  rematch: "Rematch",
  accept: "Accept",
  decline: "Decline",
  incoming: { draw: "Your opponent offers a draw.", takeback: "Your opponent asks to take back a move.", rematch: "Your opponent offers a rematch." },
  mine: { draw: "You offered a draw.", takeback: "You asked for a takeback.", rematch: "You offered a rematch." },
  watching: { draw: (s) => `${s} offers a draw.`, takeback: (s) => `${s} asks for a takeback.`, rematch: (s) => `${s} offers a rematch.` },
  ended: {
    draw: { declined: "The draw offer was declined.", lapsed: "The draw offer lapsed.", accepted: "The draw offer was accepted." },
    takeback: { declined: "The takeback was declined.", lapsed: "The takeback request lapsed.", accepted: "The move was taken back." },
    rematch: { declined: "The rematch was declined.", lapsed: "The rematch offer lapsed.", accepted: "Rematch accepted: a new game starts." },
  },
  errors: {
    no_takeback: "No takeback here: you have no move to take back, or a bot grants takebacks in casual games only.",
    offer_pending: "That offer is already waiting for an answer.",
    no_offer: "There is no such offer to answer any more.",
    not_started: "The game has not started yet.",
    game_over: "The game is over.",
    game_not_over: "A rematch is offered once the game is over.",
    not_a_player: "Only the players can do that.",
  },
};

const $ = (sel) => document.querySelector(sel);
const offers = { roomId: null, pending: [], note: "" };
let deps = null;

// `conn` sends; `onError` shows a sentence; `current()` is {room, you} of the game view.
export function initOffers(conn, onError, current) {
  deps = { conn, onError, current };
  $("#offer-draw").textContent = TEXT.offer_draw;
  $("#offer-takeback").textContent = TEXT.takeback;
  $("#offer-rematch").textContent = TEXT.rematch;
  $("#offer-accept").textContent = TEXT.accept;
  $("#offer-decline").textContent = TEXT.decline;
  const send = (kind) => () => offer(kind);
  $("#offer-draw").addEventListener("click", send("draw"));
  $("#offer-takeback").addEventListener("click", send("takeback"));
  $("#offer-rematch").addEventListener("click", send("rematch"));
  $("#offer-accept").addEventListener("click", () => respond(true));
  $("#offer-decline").addEventListener("click", () => respond(false));
}

export function offerError(err) {
  return TEXT.errors[err?.code] || err?.message || String(err);
}

async function offer(kind) {
  const { room } = deps.current();
  if (!room) return;
  try {
    await deps.conn.request("offer", { room_id: room.room_id, kind });
  } catch (err) {
    deps.onError(offerError(err));
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
    deps.onError(offerError(err));
  }
}

// A snapshot: its pending offers replace ours.
export function offersJoined(room) {
  if (offers.roomId !== room.room_id) offers.note = "";
  offers.roomId = room.room_id;
  offers.pending = (room.offers || []).map((o) => ({ kind: o.kind, by: o.by }));
}

// `offer` and `offer_ended` messages; returns true when the message was this room's.
export function offerMessage(msg) {
  if (msg.room_id !== offers.roomId) return false;
  offers.pending = offers.pending.filter((o) => o.kind !== msg.kind);
  if (msg.type === "offer") {
    offers.pending.push({ kind: msg.kind, by: msg.by });
    offers.note = "";
  } else {
    offers.note = TEXT.ended[msg.kind]?.[msg.outcome] || `${msg.kind}: ${msg.outcome}`;
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
    text = TEXT.incoming[inc.kind];
  } else if (room && offers.pending.length) {
    const o = offers.pending[offers.pending.length - 1];
    text = player ? TEXT.mine[o.kind] : TEXT.watching[o.kind](o.by.toUpperCase());
  } else if (room) {
    text = offers.note;
  }
  box.hidden = !text;
  box.dataset.kind = inc?.kind || "";
  $("#offer-text").textContent = text;
  $("#offer-accept").hidden = !inc;
  $("#offer-decline").hidden = !inc;
}
