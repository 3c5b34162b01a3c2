// The game view's chat (docs/protocol.md "Chat"): two channels per room. The seated players speak
// in `players`, everyone else in `spectators`; the server decides who reads what (the players do
// not see the spectators' lines while the game runs), so this module shows every line it gets,
// labelled with its channel when the reader may see both. The channel is the speaker's role:
// nothing here chooses it. Hiding the chat is this browser's choice, remembered in localStorage.
// Its text is the catalogue's (chat.*, error.*: i18n.js).

import { t, errorText } from "./i18n.js";

export const CHAT_MAX = 280; // the server's chat.max_chars
const HIDE_KEY = "caro-arena.hide-chat";
const $ = (sel) => document.querySelector(sel);

const chat = { roomId: null, lines: [], you: null, status: null };
let deps = null;

// `conn` sends the lines; `onError` shows a sentence.
export function initChat(conn, onError) {
  deps = { conn, onError };
  const input = $("#chat-input");
  input.maxLength = CHAT_MAX;
  const hide = $("#chat-hide");
  hide.checked = localStorage.getItem(HIDE_KEY) === "1";
  hide.addEventListener("change", () => {
    localStorage.setItem(HIDE_KEY, hide.checked ? "1" : "0");
    renderChat();
  });
  $("#chat-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = input.value;
    if (!chat.roomId || !text.trim()) return;
    try {
      await conn.request("chat", { room_id: chat.roomId, text });
      input.value = "";
    } catch (err) {
      onError(errorText(err));
    }
  });
  renderChat();
}

// A snapshot (room_joined): the lines it carries replace what we had.
export function chatJoined(msg) {
  if (chat.roomId !== msg.room.room_id) $("#chat-input").value = "";
  chat.roomId = msg.room.room_id;
  chat.lines = (msg.chat || []).slice();
  chat.you = msg.you;
  chat.status = msg.room.status;
  renderChat();
}

// A live `chat` message.
export function chatLine(msg) {
  if (msg.room_id !== chat.roomId) return;
  chat.lines.push(msg);
  renderChat();
}

// The room's status changed (the game ended: the players now read both channels).
export function chatStatus(status) {
  if (chat.status === status) return;
  chat.status = status;
  renderChat();
}

export function chatLeft() {
  chat.roomId = null;
  chat.lines = [];
}

function renderChat() {
  const hidden = $("#chat-hide").checked;
  $("#chat-body").hidden = hidden;
  const spectator = chat.you?.role === "spectator";
  $("#chat-input").placeholder = t(spectator ? "chat.placeholder_spectator" : "chat.placeholder_player");
  const both = spectator || chat.status === "finished" || chat.lines.some((l) => l.channel === "spectators");
  const ul = $("#chat-lines");
  const items = chat.lines.map((l) => {
    const li = document.createElement("li");
    li.className = "chat-line";
    li.dataset.channel = l.channel;
    if (both) {
      const ch = document.createElement("span");
      ch.className = "chat-channel";
      ch.textContent = `[${t(l.channel === "players" ? "chat.channel.players" : "chat.channel.spectators")}]`;
      li.append(ch, " ");
    }
    const who = document.createElement("span");
    who.className = "chat-from";
    if (l.seat) who.dataset.seat = l.seat;
    who.textContent = l.seat ? t("chat.from_seat", { from: l.from, seat: l.seat.toUpperCase() }) : l.from;
    const text = document.createElement("span");
    text.className = "chat-text";
    text.textContent = l.text;
    li.append(who, ": ", text);
    return li;
  });
  if (!items.length) {
    const li = document.createElement("li");
    li.className = "empty";
    li.textContent = t("chat.empty");
    items.push(li);
  }
  ul.replaceChildren(...items);
  ul.scrollTop = ul.scrollHeight;
}
