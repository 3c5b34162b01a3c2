// Quick pairing in the lobby (docs/protocol.md "Quick pairing"): "Play anyone" sends a `seek`
// with the chosen terms (and, optionally, a bot to play if nobody comes in time), shows a
// waiting state with Cancel, and lists the other players' open seeks (the `seeks` message that
// lobby watchers get) with a button to take one. On `paired` the page goes to the new room,
// whose route joins it and takes the held seat. Its text is the catalogue's (seek.*: i18n.js).

import { TIME_CONTROLS, timeControlOf, timeControlText } from "./clock.js";
import { seatText } from "./seats.js";
import { t, has, errorText } from "./i18n.js";

// How long the page waits for `seek_cancelled` before it shows the seek as cancelled.
const CANCEL_WAIT_MS = 5000;

const $ = (sel) => document.querySelector(sel);
const seek = { id: null, list: [] };
let deps = null;

// A seek's terms as the lobby words a room's (room.*, rule_name.*).
function gameText(s) {
  if (s.game === "tictactoe") return t("room.tictactoe", { width: s.width, height: s.height });
  let game = t("room.caro", { width: s.width, height: s.height, rule: has(`rule_name.${s.rule}`) ? t(`rule_name.${s.rule}`) : s.rule });
  if (s.time_control) game = t("room.with_clock", { game, clock: timeControlText(s.time_control) });
  return s.casual ? t("seek.casual_tag", { game }) : game;
}

// `conn` sends; `onError` shows a sentence; `onPaired(roomId)` goes to the room.
export function initSeek(conn, onError, onPaired) {
  deps = { conn, onError, onPaired };
  for (const [value, label] of TIME_CONTROLS) $("#seek-time-control").append(new Option(label, value));
  $("#seek-form").addEventListener("change", () => {
    $("#seek-form .caro-only").hidden = new FormData($("#seek-form")).get("seek_game") !== "caro";
  });
  $("#seek-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    const body = { game: f.get("seek_game") };
    if (body.game === "caro") {
      body.width = body.height = Number(f.get("size"));
      body.rule = f.get("rule");
    }
    const tc = timeControlOf(f.get("time_control"));
    if (tc) body.time_control = tc;
    if (f.get("casual")) body.casual = true;
    const bot = f.get("bot");
    const after = Number(f.get("bot_after_s"));
    if (bot) {
      body.bot = bot;
      body.bot_after_ms = Math.round(after * 1000);
    }
    try {
      const reply = await conn.request("seek", body);
      if (reply.type === "seeking") {
        seek.id = reply.seek_id;
        $("#seek-status-text").textContent = bot ? t("seek.waiting_bot", { bot, seconds: after }) : t("seek.waiting");
      }
      // `paired` at once: onPaired has run from the message listener.
    } catch (err) {
      onError(errorText(err));
    }
    render();
  });
  $("#seek-cancel").addEventListener("click", async () => {
    try {
      // In a cluster another node answers; should that answer be lost (the node died), the
      // seek is over for us anyway after a few seconds.
      await Promise.race([conn.request("cancel_seek"), new Promise((done) => setTimeout(done, CANCEL_WAIT_MS))]);
    } catch {
      // no seek any more: nothing to cancel
    }
    seek.id = null;
    render();
  });
  render();
}

// The bots a seek may fall back to, after a welcome.
export function seekBots(bots) {
  const sel = $("#seek-bot");
  const keep = sel.value;
  sel.replaceChildren(new Option(t("seek.no_bot"), ""));
  for (const b of bots) sel.append(new Option(b.name, b.name));
  sel.value = [...sel.options].some((o) => o.value === keep) ? keep : "";
}

// The messages of quick pairing; returns true when it was one.
export function seekMessage(msg) {
  if (msg.type === "seeks") {
    seek.list = msg.seeks;
    render();
    return true;
  }
  if (msg.type === "paired") {
    seek.id = null;
    render();
    deps.onPaired(msg.room_id);
    return true;
  }
  if (msg.type === "seek_cancelled") {
    seek.id = null;
    render();
    return true;
  }
  return false;
}

// Entering the lobby: its watch sends the open seeks afresh (none is sent when none is open).
// Leaving it: a seek is a lobby's business, withdrawn when the page goes elsewhere (so a pairing
// never pulls the page out of a game begun meanwhile).
export function seekLobby(active) {
  if (!active && seek.id !== null) {
    deps.conn.raw({ type: "cancel_seek" });
    seek.id = null;
  }
  seek.list = [];
  render();
}

// A new connection has no seek (closing the old one ended it).
export function seekReset() {
  seek.id = null;
  seek.list = [];
  render();
}

function render() {
  const waiting = seek.id !== null;
  $("#seek-status").hidden = !waiting;
  $("#seek-form button[type=submit]").disabled = waiting;
  const ul = $("#seeks");
  const items = seek.list.map((s) => {
    const li = document.createElement("li");
    li.className = "room seek";
    li.dataset.seekId = s.seek_id;
    const info = document.createElement("div");
    info.className = "room-info";
    const title = document.createElement("span");
    title.className = "room-title";
    title.textContent = seatText({ kind: "human", name: s.name, rating: s.rating });
    const meta = document.createElement("span");
    meta.className = "room-meta";
    meta.textContent = gameText(s);
    info.append(title, meta);
    li.append(info);
    if (s.seek_id === seek.id) {
      const mine = document.createElement("span");
      mine.className = "room-meta";
      mine.textContent = t("seek.yours");
      li.append(mine);
    } else {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = t("seek.take");
      b.addEventListener("click", async () => {
        try {
          await deps.conn.request("accept_seek", { seek_id: s.seek_id });
        } catch (err) {
          deps.onError(errorText(err));
        }
      });
      li.append(b);
    }
    return li;
  });
  if (!items.length) {
    const li = document.createElement("li");
    li.className = "empty";
    li.textContent = t("seek.none");
    items.push(li);
  }
  ul.replaceChildren(...items);
}
