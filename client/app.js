// caro-arena's page: the lobby, the board, live analysis of bots, reconnection. Plain ES module,
// no build step; talks the protocol of docs/protocol.md through net.js.

import { Connection } from "./net.js";
import { renderBoard, cellName } from "./board.js";
import { openReplay, leaveReplay, initReplay, resultText } from "./replay.js";
import { seatText, seatNode } from "./seats.js";
import { openLeaderboard, openProfile, initPlayers, ratingsCatalogue } from "./players.js";
import { Clocks, TIME_CONTROLS, timeControlOf, timeControlText } from "./clock.js";
import { renderMoveList } from "./movelist.js";
import { EVAL_SCALE } from "./review.js";
import { initAlerts, alertPlayer } from "./alerts.js";
import { askName } from "./askname.js";
import { openGames, initGames, gameLink } from "./games.js";
import { initChat, chatJoined, chatLine, chatStatus } from "./chat.js";
import { initOffers, offersJoined, offerMessage, renderOffers } from "./offers.js";
import { initAccount } from "./account.js";
import { initSeek, seekBots, seekMessage, seekReset, seekLobby } from "./seek.js";
import { t, has, errorText, botDescription, translatePage } from "./i18n.js";

const NAME_KEY = "caro-arena.name";
const WIN = 1_000_000;
// How many finished games the lobby lists (live rooms and stored games each); "more" opens #/games.
const LOBBY_FINISHED = 5;

const $ = (sel) => document.querySelector(sel);
translatePage();
const nameInput = $("#name-input");
nameInput.value = localStorage.getItem(NAME_KEY) || "";

const wsUrl = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
const conn = new Connection(wsUrl, () => nameInput.value.trim());

// The game's clocks and the away countdowns, counted down between the server's messages.
const clocks = new Clocks(
  { x: $('[data-clock="x"]'), o: $('[data-clock="o"]') },
  { x: $('[data-away="x"]'), o: $('[data-away="o"]') },
);
for (const [value, label] of TIME_CONTROLS) $("#time-control").append(new Option(label, value));

const state = {
  room: null, // the room snapshot, kept current by events
  you: null, // { role, seat }
  analysis: null, // the latest bot_thinking of the search now running (its PV is drawn)
  lastAnalysis: null, // the latest bot_thinking of this room, kept after the bot has moved
  evals: new Map(), // move number -> the deciding search's score from X's side, for the graph
  sending: null, // [x, y] of our move sent and not yet answered: the board stays locked
  viewPly: null, // looking back at the position after this many moves, or null: the live board
  preview: null, // [x, y] tapped once on a touch screen: a second tap there plays it
  wasMyTurn: false, // for the alert when the turn comes back to us
  wasStatus: null, // the room's status at the last render: "waiting" then "playing" is a start
  rooms: [],
  watchingLobby: false, // lobby_update messages are applied
};

// ---------- notifications ----------

let toastTimer = null;
function toast(text) {
  const el = $("#toast");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (el.hidden = true), 5000);
}

// A server error, translated by its code (i18n.js).
function showError(err) {
  if (!err) return;
  toast(errorText(err));
}

// The server's errors name cells as zero-based (x, y); the board names them e5. Errors about a
// move we sent are worded with the board's names, anything else is translated by its code.
function moveError(err, x, y) {
  const known = ["occupied", "out_of_bounds", "not_your_turn", "game_over", "not_started", "not_a_player"];
  if (known.includes(err?.code)) toast(t(`move_error.${err.code}`, { cell: cellName(x, y) }));
  else showError(err);
}

// ---------- connection status ----------

conn.addEventListener("state", (ev) => {
  const el = $("#conn");
  el.dataset.state = ev.detail;
  el.textContent = t(`conn.${ev.detail}`);
});

nameInput.addEventListener("change", () => {
  localStorage.setItem(NAME_KEY, nameInput.value.trim());
  // The name travels with hello: say it again on a fresh connection (the token keeps our seats).
  if (conn.welcome && nameInput.value.trim() && nameInput.value.trim() !== conn.welcome.name) conn.reconnect();
});

// ---------- routing ----------

function route() {
  const hash = location.hash || "#/";
  if (hash === "#/games") return { kind: "games" };
  const lb = hash.match(/^#\/leaderboard(?:\/([\w-]+))?$/);
  if (lb) return { kind: "leaderboard", family: lb[1] };
  const pf = hash.match(/^#\/player\/([^/]+)$/);
  if (pf) return { kind: "profile", name: decodeURIComponent(pf[1]) };
  // #/replay/<id>/analyse opens the replay and asks for the engine's review at once.
  const m = hash.match(/^#\/(room|watch|replay)\/([\w-]+)(\/analyse)?/);
  return m ? { kind: m[1], roomId: m[2], analyse: Boolean(m[3]) } : { kind: "lobby" };
}

function show(view) {
  $("#lobby").hidden = view !== "lobby";
  $("#game").hidden = view !== "game";
  $("#replay").hidden = view !== "replay";
  if (view !== "replay") leaveReplay();
  if (view !== "game") clocks.reset();
  $("#games").hidden = view !== "games";
  $("#leaderboard").hidden = view !== "leaderboard";
  $("#profile").hidden = view !== "profile";
}

async function onRoute() {
  const r = route();
  if (r.kind === "lobby") {
    state.room = null;
    state.you = null;
    show("lobby");
    startLobby();
    return;
  }
  stopLobby();
  if (r.kind === "games") {
    state.room = null;
    state.you = null;
    show("games");
    openGames();
    return;
  }
  if (r.kind === "leaderboard" || r.kind === "profile") {
    state.room = null;
    state.you = null;
    show(r.kind);
    if (r.kind === "leaderboard") openLeaderboard(r.family);
    else openProfile(r.name);
    return;
  }
  if (r.kind === "replay") {
    state.room = null;
    state.you = null;
    show("replay");
    openReplay(
      r.roomId,
      (text) => {
        toast(text);
        location.hash = "#/";
      },
      { analyse: r.analyse },
    );
    return;
  }
  show("game");
  if (!state.room || state.room.room_id !== r.roomId) {
    state.room = null;
    renderGame();
    if (conn.welcome) join(r);
  }
}

let asking = false;

async function join(r) {
  // A friend's link opened by a browser that never chose a name: ask for one before taking the
  // seat. A new name goes with a fresh hello, whose welcome joins again (see onWelcome).
  if (r.kind === "room" && !localStorage.getItem(NAME_KEY)) {
    if (asking) return;
    asking = true;
    const { name, watch } = await askName($("#name-dialog"), conn.welcome?.name);
    asking = false;
    if (route().roomId !== r.roomId) return;
    if (watch) {
      location.hash = `#/watch/${r.roomId}`;
      return;
    }
    localStorage.setItem(NAME_KEY, name);
    nameInput.value = name;
    if (conn.welcome && name !== conn.welcome.name) {
      conn.reconnect();
      return;
    }
  }
  try {
    const body = { room_id: r.roomId };
    if (r.kind === "watch") body.as = "spectator";
    await conn.request("join_room", body);
  } catch (err) {
    showError(err);
    if (err.code === "no_such_room") location.hash = "#/";
  }
}

window.addEventListener("hashchange", onRoute);

// ---------- lobby ----------

// The lobby is live: `watch_lobby` answers with the first page of rooms (and `next` when more
// follow, fetched with `list_rooms`), then the server pushes the rooms that open, change or
// close (`lobby_update`, about once a second) until `unwatch_lobby`.
function startLobby() {
  seekLobby(true);
  state.watchingLobby = true;
  watchLobby();
  refreshRecent();
}

function stopLobby() {
  if (state.watchingLobby) seekLobby(false);
  if (state.watchingLobby && conn.welcome) conn.raw({ type: "unwatch_lobby" });
  state.watchingLobby = false;
}

async function watchLobby() {
  if (!conn.welcome) return; // watched again on the next welcome
  try {
    let reply = await conn.request("watch_lobby");
    state.rooms = reply.rooms;
    renderRooms();
    // Later pages arrive after any update sent before them, so applying both in arrival order
    // (a page's rooms as updates) gives the server's list.
    while (reply.next && state.watchingLobby) {
      reply = await conn.request("list_rooms", { after: reply.next });
      applyLobbyUpdate({ rooms: reply.rooms, removed: [] });
    }
  } catch (err) {
    if (err.code !== "disconnected") showError(err);
  }
}

function applyLobbyUpdate(msg) {
  if (!state.watchingLobby) return;
  const byId = new Map(state.rooms.map((r) => [r.room_id, r]));
  for (const id of msg.removed) byId.delete(id);
  let finished = false;
  for (const r of msg.rooms) {
    finished ||= r.status === "finished" && byId.get(r.room_id)?.status !== "finished";
    byId.set(r.room_id, r);
  }
  state.rooms = [...byId.values()].sort((a, b) => (a.room_id < b.room_id ? -1 : 1));
  renderRooms();
  // A game just ended: it is in the store now, among the recent games.
  if (finished) refreshRecent();
}

// Finished games from the store (GET /api/games), newest first, each opening the replay view.
async function refreshRecent() {
  try {
    const res = await fetch(`/api/games?limit=${LOBBY_FINISHED}`);
    if (!res.ok) return;
    const { games, next } = await res.json();
    const ul = $("#recent-games");
    ul.replaceChildren(...games.map(gameLink));
    $("#more-games").hidden = !next;
    if (!games.length) {
      const li = document.createElement("li");
      li.className = "empty";
      li.textContent = t("lobby.none_yet");
      ul.append(li);
    }
  } catch {
    // offline: the list stays as it was
  }
}

function gameText(r) {
  if (r.game === "tictactoe") return t("room.tictactoe", { width: r.width, height: r.height });
  const game = t("room.caro", { width: r.width, height: r.height, rule: has(`rule_name.${r.rule}`) ? t(`rule_name.${r.rule}`) : r.rule });
  return r.time_control ? t("room.with_clock", { game, clock: timeControlText(r.time_control) }) : game;
}

// "Ann (1523) vs Bob (1500?)" with each account's name a link to its profile.
function vsNodes(x, o) {
  const parts = t("title.vs", { x: "\u0000x", o: "\u0000o" }).split(/(\u0000[xo])/);
  return parts.filter(Boolean).map((part) => (part === "\u0000x" ? seatNode(x) : part === "\u0000o" ? seatNode(o) : document.createTextNode(part)));
}

function renderRooms() {
  const lists = { waiting: $("#rooms-waiting"), playing: $("#rooms-playing"), finished: $("#rooms-finished") };
  for (const ul of Object.values(lists)) ul.replaceChildren();
  let finished = 0;
  for (const r of state.rooms) {
    // A room whose creator cancelled it waits, seatless, for the server to close it: nobody is
    // waiting there.
    if (r.status === "waiting" && !r.players.x && !r.players.o) continue;
    // Finished rooms: the latest few (the room list has no time: its order is the ids'); the
    // rest are among the recent games and in #/games.
    if (r.status === "finished" && ++finished > LOBBY_FINISHED) continue;
    const li = document.createElement("li");
    li.className = "room";
    const title = document.createElement("span");
    title.className = "room-title";
    title.append(...vsNodes(r.players.x, r.players.o));
    const meta = document.createElement("span");
    meta.className = "room-meta";
    meta.textContent = t("lobby.room_meta", { game: gameText(r), moves: r.moves, spectators: r.spectators });
    if (r.rated) meta.textContent += ` · ${t("room.rated")}`;
    const info = document.createElement("div");
    info.className = "room-info";
    info.append(title, meta);
    li.append(info);
    const open = !r.players.x || !r.players.o;
    if (r.status === "waiting" && open) {
      const b = document.createElement("button");
      b.textContent = t("lobby.join");
      b.addEventListener("click", () => (location.hash = `#/room/${r.room_id}`));
      li.append(b);
    }
    const w = document.createElement("button");
    w.textContent = t(r.status === "finished" ? "lobby.view" : "lobby.watch");
    w.addEventListener("click", () => (location.hash = `#/watch/${r.room_id}`));
    li.append(w);
    lists[r.status]?.append(li);
  }
  $("#more-finished").hidden = finished <= LOBBY_FINISHED;
  $("#more-finished").textContent = t("lobby.more_finished", { n: finished - LOBBY_FINISHED });
  for (const [k, ul] of Object.entries(lists)) {
    if (!ul.children.length) {
      const li = document.createElement("li");
      li.className = "empty";
      li.textContent = t(k === "waiting" ? "lobby.none_waiting" : "lobby.none");
      ul.append(li);
    }
  }
}

function fillSeatOptions() {
  const game = new FormData($("#create-form")).get("game");
  const bots = (conn.welcome?.bots || []).filter((b) => b.games.includes(game));
  for (const [sel, def] of [[$("#seat-x"), "me"], [$("#seat-o"), bots[0] ? `bot:${bots[0].name}` : "open"]]) {
    const keep = sel.value;
    sel.replaceChildren();
    const opts = [["me", t("seat.me")], ["open", t("seat.friend")]];
    // The description goes under the menu (seatHelp): in the option it cut the menu short.
    for (const b of bots) {
      const rating = botRatings.get(b.name);
      opts.push([`bot:${b.name}`, rating ? t("seat.bot_rated", { name: b.name, rating }) : t("seat.bot", { name: b.name })]);
    }
    for (const [value, label] of opts) {
      const o = document.createElement("option");
      o.value = value;
      o.textContent = label;
      sel.append(o);
    }
    sel.value = opts.some(([v]) => v === keep) ? keep : def;
  }
  seatHelp();
  ratedHelp();
  $("#create-form .caro-only").hidden = game !== "caro";
  $("#rule-help").textContent = t(`rule_help.${$("#rule").value}`);
}

// The bot levels' published ratings (GET /api/ratings), shown in the seat menus.
const botRatings = new Map();
ratingsCatalogue().then((cat) => {
  for (const b of cat?.bots ?? []) botRatings.set(b.level, b.rating);
  if (cat) fillSeatOptions();
});

// Under the casual box: whether the game is meant to be rated (the server decides: both seats
// ratable, a rated board and rule; docs/ratings.md) or casual.
function ratedHelp() {
  $("#rated-help").textContent = t($("#casual").checked ? "create.will_be_casual" : "create.will_be_rated");
}

// The chosen bots' descriptions, under the seat menus.
function seatHelp() {
  const bots = conn.welcome?.bots || [];
  const text = ["x", "o"]
    .map((seat) => {
      const v = $(`#seat-${seat}`).value;
      const b = v.startsWith("bot:") && bots.find((b) => `bot:${b.name}` === v);
      return b ? t("seat.help", { seat: seat.toUpperCase(), name: b.name, description: botDescription(b) }) : "";
    })
    .filter(Boolean)
    .join(" ");
  $("#seat-help").textContent = text;
}

$("#create-form").addEventListener("change", fillSeatOptions);

$("#create-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const seat = (v) => (v.startsWith("bot:") ? { bot: v.slice(4) } : v);
  const body = { game: f.get("game"), x: seat(f.get("x")), o: seat(f.get("o")) };
  if (body.game === "caro") {
    body.width = body.height = Number(f.get("size"));
    body.rule = f.get("rule");
  }
  const tc = timeControlOf(f.get("time_control"));
  if (tc) body.time_control = tc;
  if (f.get("casual")) body.casual = true;
  try {
    const reply = await conn.request("create_room", body);
    location.hash = `#/room/${reply.room.room_id}`;
  } catch (err) {
    showError(err);
  }
});

// ---------- the game ----------

function myTurn() {
  const r = state.room;
  return r && state.you?.role === "player" && r.turn === state.you.seat && r.status !== "finished";
}

// On a touch screen or a narrow one a cell is small: a tap shows the stone where it would go
// (a preview), a second tap on the same point plays it, a tap elsewhere moves the preview. The
// keyboard (Enter or Space: a click with no pointer, `detail` 0) plays at once.
const touchLike = () => matchMedia("(pointer: coarse)").matches || matchMedia("(max-width: 760px)").matches;

function onCell(x, y, ev) {
  const p = state.preview;
  if (ev?.detail > 0 && touchLike() && !(p && p[0] === x && p[1] === y)) {
    state.preview = [x, y];
    renderGame();
    return;
  }
  state.preview = null;
  sendMove(x, y);
}

// Looking back: the board shows the position after `ply` moves (null or the last move: live).
function viewMove(ply) {
  const r = state.room;
  if (!r) return;
  state.viewPly = ply === null || ply >= r.moves.length || !r.moves.length ? null : Math.max(0, ply);
  state.preview = null;
  renderGame();
}

// Sends our move. One move at a time: the board is locked until the server announces it (or
// refuses it), so a double click or a tap during a slow answer never sends a second move.
function sendMove(x, y) {
  const r = state.room;
  if (!r) return;
  state.sending = [x, y];
  renderGame();
  conn.fire("move", { room_id: r.room_id, x, y }).catch((err) => {
    state.sending = null;
    renderGame();
    moveError(err, x, y);
  });
}

function renderGame() {
  const r = state.room;
  const boardEl = $("#board");
  if (!r) {
    boardEl.replaceChildren();
    $("#turn").textContent = t("game.loading");
    renderOffers(null, null);
    return;
  }
  // Looking back at an earlier position: no line, no bot's plan, nothing to play.
  const viewing = state.viewPly !== null && state.viewPly < r.moves.length;
  const shown = viewing ? r.moves.slice(0, state.viewPly) : r.moves;
  if (!myTurn() || viewing) state.preview = null;
  renderBoard(boardEl, { ...r, moves: shown }, {
    last: shown[shown.length - 1],
    line: viewing ? [] : r.line || [],
    pv: !viewing && state.analysis && r.status === "playing" ? state.analysis.pv : [],
    clickable: !viewing && myTurn() && !state.sending,
    pending: state.sending,
    preview: state.preview,
    onMove: onCell,
  });
  $("#viewing").hidden = !viewing;
  $("#turn").hidden = viewing;
  boardEl.classList.toggle("looking-back", viewing);
  if (viewing) {
    $("#viewing-text").textContent = t(myTurn() ? "game.viewing_your_move" : "game.viewing", { n: state.viewPly, total: r.moves.length });
  }

  for (const seat of ["x", "o"]) {
    const el = document.querySelector(`.player[data-seat="${seat}"]`);
    const p = r.players[seat];
    const pname = el.querySelector(".pname");
    if (state.you?.seat === seat) pname.textContent = t("seat.you", { who: seatText(p) });
    else pname.replaceChildren(seatNode(p));
    el.classList.toggle("to-move", r.turn === seat && r.status === "playing");
  }
  $("#spectators").textContent = t("game.spectators", { n: r.spectators });
  $("#room-rule").textContent = gameText(r);
  $("#room-rated").textContent = `· ${t(r.rated ? "room.rated" : r.casual ? "room.casual" : "room.unrated")}`;
  renderRatingChange(r);

  let text;
  if (r.status === "finished" && r.result) {
    text = resultText(r);
    // A bot's outside engine that broke the rules of play: say what it did.
    if (r.reason === "forfeit" && r.detail) text = t("game.forfeit_detail", { result: text, detail: r.detail });
    else if (state.you?.role === "player" && r.result === state.you.seat) text = t("game.well_played", { result: text });
  } else if (r.status === "waiting") {
    text = t("game.waiting");
  } else if (myTurn() && state.sending) {
    text = t("game.sending");
  } else if (myTurn()) {
    text = t("game.your_move");
  } else {
    const side = (r.turn || "").toUpperCase();
    text = t(state.you?.role === "spectator" ? "game.to_move_watching" : "game.to_move", { side });
  }
  $("#turn").textContent = text;

  renderMoveList($("#move-list"), r.moves, {
    current: viewing ? state.viewPly : r.moves.length,
    live: !viewing,
    onPick: viewMove,
  });

  // Before the opponent comes there is no game to resign: the creator cancels the room.
  $("#resign").hidden = !(state.you?.role === "player" && r.status !== "finished");
  $("#resign").textContent = t(r.status === "waiting" ? "game.cancel" : "game.resign");
  $("#replay-btn").hidden = r.status !== "finished";
  $("#analyse-btn").hidden = r.status !== "finished";
  const open = !r.players.x || !r.players.o;
  $("#share").hidden = !(open && r.status !== "finished");
  $("#share-link").value = `${location.origin}${location.pathname}#/room/${r.room_id}`;
  renderAnalysis();
  renderOffers(r, state.you);
  chatStatus(r.status);

  // The game started (for either player) or the turn came back to us, while the page is
  // hidden: flash the title.
  const mine = Boolean(myTurn() && r.status === "playing");
  const started = state.wasStatus === "waiting" && r.status === "playing";
  if (started && state.you?.role === "player") alertPlayer(t("game.started"));
  else if (mine && !state.wasMyTurn) alertPlayer(t("game.your_move"));
  state.wasMyTurn = mine;
  state.wasStatus = r.status;
}

// A rated game's end: "X: 1500 → 1662 (+162) · O: 1500 → 1338 (−162)".
function renderRatingChange(r) {
  const el = $("#rating-change");
  const ch = r.status === "finished" ? r.ratings : null;
  el.hidden = !ch;
  if (!ch) return;
  el.textContent = ["x", "o"]
    .filter((s) => ch[s])
    .map((s) => t("game.rating_change", { side: s.toUpperCase(), before: ch[s].before, after: ch[s].after, delta: `${ch[s].delta >= 0 ? "+" : ""}${ch[s].delta}` }))
    .join(" · ");
}

function scoreText(score) {
  if (Math.abs(score) > WIN - 1000) {
    const plies = WIN - Math.abs(score);
    return t("an.wins_in", { side: score > 0 ? "X" : "O", n: Math.ceil(plies / 2) });
  }
  return (score / 100).toFixed(2);
}

function count(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(0)}k`;
  return String(n);
}

// Reports are from the searching bot's point of view; the page shows them from X's.
const scoreFromX = (a) => (a.seat === "x" ? a.score : -a.score);
// A score as a share of the bar or graph, -1 (O winning) .. 1 (X winning).
const share = (fromX) => (Math.abs(fromX) > WIN - 1000 ? Math.sign(fromX) : Math.tanh(fromX / EVAL_SCALE));

// The bot's move against the analysis of the search that chose it (the report received while
// the position had one move less).
function noteBotMove(msg) {
  const a = state.lastAnalysis;
  const mover = state.room.moves.length % 2 === 1 ? "x" : "o";
  if (!a || a.seat !== mover || a.ply !== state.room.moves.length - 1 || !a.pv.length) return;
  a.played = [msg.x, msg.y];
  a.deviated = a.pv[0][0] !== msg.x || a.pv[0][1] !== msg.y;
}

function renderAnalysis() {
  const a = state.analysis || state.lastAnalysis;
  const panel = $("#analysis");
  if (!a || !state.room) {
    panel.hidden = true;
    return;
  }
  panel.hidden = false;
  panel.classList.toggle("idle", !state.analysis);
  const fromX = scoreFromX(a);
  // The bot's level is its seat's name: a level searches to its own depth (docs/bots.md).
  const bot = state.room.players[a.seat];
  const who = `${a.seat.toUpperCase()}${bot?.kind === "bot" ? ` (${bot.name})` : ""}`;
  $("#an-state").textContent = t(state.analysis ? "an.thinking" : "an.last", { who });
  $("#an-depth").textContent = a.depth;
  // A level that blunders on purpose may play another move than its line's first: say so
  // instead of leaving a plan on show that the bot did not follow.
  const note = $("#an-note");
  note.hidden = !a.deviated;
  if (a.deviated) {
    note.textContent = t("an.deviated", { played: cellName(...a.played), best: cellName(...a.pv[0]) });
  }
  $("#an-score").textContent = scoreText(fromX);
  $("#an-nps").textContent = t("an.nps", { nps: count(a.nps), nodes: count(a.nodes) });
  $("#an-pv").textContent = a.pv.map(([x, y]) => cellName(x, y)).join(" ");
  $("#evalbar-fill").style.width = `${50 + 50 * share(fromX)}%`;
  renderEvalGraph();
}

// The score of every bot move so far as a line over the game: above the middle X is better.
function renderEvalGraph() {
  const svg = $("#evalgraph");
  const points = [...state.evals].sort((p, q) => p[0] - q[0]);
  // An SVG element has no `hidden` property, only the attribute.
  svg.toggleAttribute("hidden", points.length < 2);
  if (points.length < 2) return;
  const last = Math.max(20, state.room.moves.length + 1);
  const xy = ([ply, fromX]) => `${((ply - 1) / (last - 1)) * 100},${25 - 23 * share(fromX)}`;
  $("#evalgraph-line").setAttribute("points", points.map(xy).join(" "));
  svg.setAttribute("aria-label", t("an.graph", { n: points.length, score: scoreText(points[points.length - 1][1]) }));
}

$("#resign").addEventListener("click", () => {
  const r = state.room;
  if (r?.status === "waiting") {
    // Leaving a seat before the game starts opens it again; a room nobody sits in closes after
    // rooms.empty_ttl_ms, and the lobby stops listing it at once.
    conn.request("leave_room", { room_id: r.room_id }).catch(() => {});
    location.hash = "#/";
    return;
  }
  if (!state.room || !confirm(t("game.confirm_resign"))) return;
  conn.fire("resign", { room_id: state.room.room_id }).catch(showError);
});

$("#leave").addEventListener("click", async () => {
  const r = state.room;
  if (r && state.you?.role === "player" && r.status === "playing" && !confirm(t("game.confirm_leave"))) return;
  if (r) conn.request("leave_room", { room_id: r.room_id }).catch(() => {});
  location.hash = "#/";
});

$("#live-btn").addEventListener("click", () => viewMove(null));
// Escape returns to the live board; outside the board (whose arrows move between points) and
// the inputs, the left and right arrows step back and forth through the game.
document.addEventListener("keydown", (ev) => {
  const r = state.room;
  if (!r || $("#game").hidden || ev.target.closest?.("#board, input, select, textarea, dialog")) return;
  const at = state.viewPly ?? r.moves.length;
  const to = { Escape: null, ArrowLeft: at - 1, ArrowRight: at + 1 }[ev.key];
  if (to === undefined || (ev.key === "Escape" && state.viewPly === null)) return;
  ev.preventDefault();
  viewMove(to);
});

$("#copy-link").addEventListener("click", () => {
  const input = $("#share-link");
  input.select();
  navigator.clipboard?.writeText(input.value).then(() => toast(t("game.copied")), () => {});
});

// ---------- server events ----------

function applyEvent(msg) {
  const r = state.room;
  if (!r || msg.room_id !== r.room_id) return;
  if (msg.seq <= r.seq) return; // already have it (a replay after sync)
  if (msg.seq !== r.seq + 1) {
    conn.raw({ type: "sync", room_id: r.room_id, since_seq: r.seq });
    return;
  }
  r.seq = msg.seq;
  if (msg.type === "move") {
    r.moves.push([msg.x, msg.y]);
    state.sending = null;
    state.preview = null;
    noteBotMove(msg);
    r.turn = msg.turn;
    r.status = "playing";
    state.analysis = null;
    clocks.update(msg.clock);
  } else if (msg.type === "game_over") {
    r.status = "finished";
    r.turn = null;
    r.result = msg.result;
    r.reason = msg.reason;
    r.detail = msg.detail;
    r.line = msg.line || [];
    r.ratings = msg.ratings ?? null;
    // The seats show the ratings the game ended with (a bot's does not move).
    for (const side of ["x", "o"]) {
      const p = r.players[side];
      if (r.ratings?.[side] && p?.rating) p.rating = { ...p.rating, value: r.ratings[side].after };
    }
    state.analysis = null;
    state.sending = null;
    clocks.finished(msg.clock);
  } else if (msg.type === "takeback") {
    // The undone cells are the last moves (the last first): the game goes back that far.
    r.moves.splice(r.moves.length - msg.undone.length);
    r.turn = msg.turn;
    state.sending = null;
    state.preview = null;
    state.analysis = null;
    for (const ply of [...state.evals.keys()]) if (ply > r.moves.length) state.evals.delete(ply);
    if (state.lastAnalysis && state.lastAnalysis.ply >= r.moves.length) state.lastAnalysis = null;
    if (state.viewPly !== null && state.viewPly >= r.moves.length) state.viewPly = null;
    if (msg.clock) clocks.update(msg.clock);
  }
  renderGame();
}

conn.addEventListener("message", (ev) => {
  const msg = ev.detail;
  switch (msg.type) {
    case "welcome":
      fillSeatOptions();
      seekReset();
      seekBots(msg.bots || []);
      onWelcome(msg);
      break;
    case "room_joined": {
      const want = route();
      if (want.kind === "lobby" || want.roomId !== msg.room.room_id) {
        // A seat pushed after a reconnect: go there if we are in the lobby and the game is not
        // over (a finished game stays reachable by its link and the lobby's lists).
        if (want.kind !== "lobby" || msg.room.status === "finished") break;
        location.hash = `#/room/${msg.room.room_id}`;
      }
      if (state.room?.room_id !== msg.room.room_id) {
        state.lastAnalysis = null;
        state.evals = new Map();
        state.viewPly = null;
        state.wasMyTurn = false;
        state.wasStatus = null;
      }
      state.room = { ...msg.room, line: msg.room.line || [] };
      state.you = msg.you;
      clocks.reset();
      clocks.update(msg.room.clock ?? null, msg.room.players);
      state.analysis = null;
      state.sending = null;
      chatJoined(msg);
      offersJoined(msg.room);
      renderGame();
      break;
    }
    case "move":
    case "game_over":
    case "takeback":
      applyEvent(msg);
      break;
    case "chat":
      chatLine(msg);
      break;
    case "offer":
    case "offer_ended":
      if (offerMessage(msg)) {
        renderGame();
        // An opponent's offer waits for an answer: say so in a hidden tab.
        if (msg.type === "offer" && state.you?.role === "player" && msg.by !== state.you.seat) alertPlayer(t("offer.alert"));
      }
      break;
    case "rematch":
      // Players and spectators follow to the new room (its route joins it: a player gets the
      // seat held for them, a spectator watches).
      if (state.room && msg.room_id === state.room.room_id) {
        location.hash = `#/${state.you?.role === "player" ? "room" : "watch"}/${msg.new_room_id}`;
      }
      break;
    case "seeks":
    case "paired":
    case "seek_cancelled":
      seekMessage(msg);
      break;
    case "synced":
      if (state.room && msg.room_id === state.room.room_id && msg.clock) clocks.update(msg.clock);
      break;
    case "room_update":
      if (state.room && msg.room_id === state.room.room_id) {
        state.room.players = msg.players;
        state.room.spectators = msg.spectators;
        if (state.room.status !== "finished") clocks.update(msg.clock, msg.players);
        if (state.room.status === "waiting" && msg.players.x && msg.players.o) {
          // Both seats are filled: the game starts, X first (room_update carries no turn).
          state.room.status = "playing";
          state.room.turn = state.room.moves.length % 2 === 0 ? "x" : "o";
        }
        renderGame();
      }
      break;
    case "lobby_update":
      applyLobbyUpdate(msg);
      break;
    case "bot_thinking":
      if (state.room && msg.room_id === state.room.room_id) {
        msg.ply = state.room.moves.length;
        state.analysis = msg;
        state.lastAnalysis = msg;
        state.evals.set(state.room.moves.length + 1, scoreFromX(msg));
        renderGame();
      }
      break;
    case "room_closed":
      if (state.room && msg.room_id === state.room.room_id) {
        toast(t("game.room_closed"));
        location.hash = "#/";
      }
      break;
    case "error":
      if (msg.re === undefined) showError(msg);
      break;
  }
});

function onWelcome(msg) {
  if (!nameInput.value) nameInput.value = msg.name;
  const r = route();
  if (r.kind === "lobby") {
    startLobby();
    return;
  }
  if (r.kind === "replay") return; // served by the HTTP API
  // A resumed seat comes back as a pushed room_joined; give it a moment before joining again.
  setTimeout(() => {
    if (!state.room || state.room.room_id !== r.roomId) join(r);
    else if (state.you?.role === "spectator") join(r);
  }, msg.resumed ? 300 : 0);
}

$("#replay-btn").addEventListener("click", () => {
  if (state.room) location.hash = `#/replay/${state.room.room_id}`;
});
// The engine's review of the finished game, in its replay (players and spectators alike).
$("#analyse-btn").addEventListener("click", () => {
  if (state.room) location.hash = `#/replay/${state.room.room_id}/analyse`;
});
initReplay();
initGames();
initAlerts($("#sound-toggle"));
initChat(conn, toast);
initOffers(conn, toast, () => ({ room: state.room, you: state.you }));
initSeek(conn, toast, (roomId) => (location.hash = `#/room/${roomId}`));
initAccount(conn);
initPlayers();

// For debugging from the console and for the end-to-end tests (which drop the connection).
// `play` is what a click on a cell does, callable on any cell (the tests use it to send an
// illegal move, which the board itself never offers).
window.caroArena = { conn, state, play: sendMove };

onRoute();
conn.start();
