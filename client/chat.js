// The game view's chat (docs/protocol.md "Chat"): two channels per room. The seated players speak
// in `players`, everyone else in `spectators`; the server decides who reads what (the players do
// not see the spectators' lines while the game runs), so this module shows every line it gets,
// labelled with its channel when the reader may see both. The channel is the speaker's role:
// nothing here chooses it. Hiding the chat is this browser's choice, remembered in localStorage.

// The user-visible strings, together for the string catalogue.
const TEXT = {
  players: "players",
  spectators: "spectators",
  placeholder_player: "To your opponent…",
  placeholder_spectator: "To the spectators…",
  hide: "Hide chat",
  empty: "No messages yet.",
  chat_too_long: (max) => `That message is too long: at most ${max} characters.`,
  chat_too_fast: "You are sending messages too fast: wait a moment.",
  bad_chat: "That message cannot be sent (empty, or with control characters).",
  not_in_room: "You are not in this room.",
};

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
  $("#chat-hide-text").textContent = TEXT.hide;
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
      onError(chatError(err));
    }
  });
  renderChat();
}

export function chatError(err) {
  if (err?.code === "chat_too_long") return TEXT.chat_too_long(CHAT_MAX);
  return TEXT[err?.code] || err?.message || String(err);
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
  $("#chat-input").placeholder = spectator ? TEXT.placeholder_spectator : TEXT.placeholder_player;
  const both = spectator || chat.status === "finished" || chat.lines.some((l) => l.channel === "spectators");
  const ul = $("#chat-lines");
  const items = chat.lines.map((l) => {
    const li = document.createElement("li");
    li.className = "chat-line";
    li.dataset.channel = l.channel;
    if (both) {
      const ch = document.createElement("span");
      ch.className = "chat-channel";
      ch.textContent = `[${TEXT[l.channel] || l.channel}]`;
      li.append(ch, " ");
    }
    const who = document.createElement("span");
    who.className = "chat-from";
    if (l.seat) who.dataset.seat = l.seat;
    who.textContent = l.seat ? `${l.from} (${l.seat.toUpperCase()})` : l.from;
    const text = document.createElement("span");
    text.className = "chat-text";
    text.textContent = l.text;
    li.append(who, ": ", text);
    return li;
  });
  if (!items.length) {
    const li = document.createElement("li");
    li.className = "empty";
    li.textContent = TEXT.empty;
    items.push(li);
  }
  ul.replaceChildren(...items);
  ul.scrollTop = ul.scrollHeight;
}
