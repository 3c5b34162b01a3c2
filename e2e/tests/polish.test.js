// End-to-end tests of the client's polish around a game (issue 17): the paired move list and
// looking back, Cancel in a waiting room, the lobby after a finished game, the short lists of
// finished games, a friend's link asking for a name, the hidden tab's title, tap-to-preview on a
// phone, and the analysis panel of a level that blunders on purpose. Real Chromium, the real
// server binary.

import { test } from "node:test";
import assert from "node:assert/strict";
import { testEnv, createRoom, screenshot } from "./harness.js";
import { testConfig } from "./config.js";

const env = testEnv(testConfig);
const newPlayer = env.newPlayer;
const seatedPair = env.seatedPair;
const cell = (x, y) => `#board button.cell[data-x="${x}"][data-y="${y}"]`;
const moveCount = (page) => page.evaluate(() => window.caroArena.state.room?.moves.length ?? -1);

// Plays [x, y] for whoever is to move, as a click would, and waits until both pages have it.
async function play(pair, [x, y]) {
  const n = await moveCount(pair.a.page);
  const mover = n % 2 === 0 ? pair.a.page : pair.b.page;
  await mover.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  await mover.evaluate(([x, y]) => window.caroArena.play(x, y), [x, y]);
  for (const p of [pair.a.page, pair.b.page]) await p.waitForFunction((n) => window.caroArena.state.room.moves.length === n, n + 1);
}

// Cells where X (and O) never make five: X where (x + 2y) mod 4 < 2. Along a row, a column and
// both diagonals the pattern repeats with runs of at most two.
function drawnGame(count) {
  const xs = [];
  const os = [];
  for (let y = 0; y < 15; y++) {
    for (let x = 0; x < 15; x++) ((x + 2 * y) % 4 < 2 ? xs : os).push([x, y]);
  }
  return Array.from({ length: count }, (_, i) => (i % 2 === 0 ? xs : os)[Math.floor(i / 2)]);
}

test("the move list pairs 40 moves without clipping, and an earlier move can be looked at while the game goes on", async () => {
  const pair = await seatedPair("Ada", "Ben");
  const { a, b } = pair;
  for (const m of drawnGame(40)) await play(pair, m);

  const p = b.page;
  // Twenty rows "n. X O", forty moves.
  assert.equal(await p.$$eval("#move-list li", (lis) => lis.length), 20);
  assert.equal(await p.$$eval("#move-list .mv", (bs) => bs.length), 40);
  assert.deepEqual(
    await p.$$eval("#move-list li:first-child > *", (cs) => cs.map((c) => c.textContent)),
    ["1.", "a1", "c1"],
  );
  // The latest move is scrolled into view inside the list, and nothing covers or clips it: the
  // point at its centre is the button itself, inside the list and the panel.
  await p.locator("#game .moves").scrollIntoViewIfNeeded();
  const seen = await p.evaluate(() => {
    const all = document.querySelectorAll("#move-list .mv");
    const last = all[all.length - 1];
    const r = last.getBoundingClientRect();
    const list = document.querySelector("#move-list").getBoundingClientRect();
    const panel = document.querySelector("#game .moves").getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return {
      text: last.textContent,
      hit: hit === last,
      inList: r.top >= list.top && r.bottom <= list.bottom + 0.5 && r.left >= list.left && r.right <= list.right,
      inPanel: list.right <= panel.right && list.left >= panel.left,
      scrolled: document.querySelector("#move-list").scrollTop > 0,
    };
  });
  assert.deepEqual(seen, { text: "k3", hit: true, inList: true, inPanel: true, scrolled: true });

  // Ben looks back at move 10 while the game is in progress.
  await p.click('#move-list .mv[data-ply="10"]');
  const stones = (page) => page.$$eval("#board .cell.has-x, #board .cell.has-o", (cs) => cs.length);
  assert.equal(await stones(p), 10);
  assert.equal(await p.textContent("#viewing-text"), "Viewing move 10 of 40");
  assert.ok(await p.$eval(cell(...drawnGame(10)[9]), (c) => c.classList.contains("last")));
  assert.ok(await p.$eval('#move-list .mv[data-ply="10"]', (b) => b.classList.contains("current")));
  // The arrow keys step through the game (outside the board, whose arrows move between points).
  await p.keyboard.press("ArrowLeft");
  assert.equal(await p.textContent("#viewing-text"), "Viewing move 9 of 40");
  assert.equal(await stones(p), 9);
  await p.keyboard.press("ArrowRight");
  assert.equal(await stones(p), 10);
  // Ada plays on: Ben keeps his earlier position, and is told it is his move; he cannot play it
  // from the old position.
  await a.page.evaluate(([x, y]) => window.caroArena.play(x, y), drawnGame(41)[40]);
  await p.waitForFunction(() => window.caroArena.state.room.moves.length === 41);
  assert.equal(await stones(p), 10);
  assert.equal(await p.textContent("#viewing-text"), "Viewing move 10 of 41: it is your move");
  await screenshot(p, "movelist");
  assert.equal(await p.$$eval('#board .cell[aria-disabled="false"]', (cs) => cs.length), 0);
  assert.equal(await p.$$eval("#move-list .mv", (bs) => bs.length), 41);
  // Back to live: the whole board, and the move can be played.
  await p.click("#live-btn");
  assert.ok(await p.isHidden("#viewing"));
  assert.equal(await stones(p), 41);
  await p.click(cell(...drawnGame(42)[41]));
  await a.page.waitForFunction(() => window.caroArena.state.room.moves.length === 42);

  // After the game, too: Ada resigns, then looks at the first move.
  a.page.once("dialog", (d) => d.accept());
  await a.page.click("#resign");
  await a.page.waitForFunction(() => /wins by resignation/.test(document.querySelector("#turn").textContent));
  await a.page.click('#move-list .mv[data-ply="1"]');
  assert.equal(await stones(a.page), 1);
  assert.equal(await a.page.textContent("#viewing-text"), "Viewing move 1 of 42");
  await a.page.keyboard.press("Escape");
  assert.equal(await stones(a.page), 42);
  for (const x of [a, b]) await x.context.close();
});

test("a waiting room offers Cancel, not Resign, and cancelling leaves it and the lobby's list", async () => {
  const watcher = await newPlayer("Lou");
  const a = await newPlayer("Cal");
  const roomId = await createRoom(a.page);
  await watcher.page.waitForFunction(() => /Cal vs open seat/.test(document.querySelector("#rooms-waiting").textContent));
  assert.equal(await a.page.textContent("#resign"), "Cancel");
  assert.equal(await a.page.textContent("#turn"), "Waiting for a player to join");
  let asked = false;
  a.page.on("dialog", (d) => {
    asked = true;
    d.dismiss();
  });
  await a.page.click("#resign");
  await a.page.waitForFunction(() => location.hash === "#/" && !document.querySelector("#lobby").hidden);
  // The room is no longer listed as waiting for anyone (the server closes a seatless room after
  // rooms.empty_ttl_ms; the lobby lists it no more from the moment its seat is empty).
  await watcher.page.waitForFunction(() => !/Cal vs/.test(document.querySelector("#rooms-waiting").textContent));
  assert.equal(asked, false, "cancelling asks nothing");
  // The server did take the seat back: the room has no player now.
  const rooms = await watcher.page.evaluate(() => window.caroArena.state.rooms);
  const room = rooms.find((r) => r.room_id === roomId);
  assert.ok(!room || (room.players.x === null && room.status === "waiting"), JSON.stringify(room));
  // A game that started shows Resign.
  const pair = await seatedPair("Dee", "Eli");
  assert.equal(await pair.a.page.textContent("#resign"), "Resign");
  for (const x of [watcher, a, pair.a, pair.b]) await x.context.close();
});

test("loading / after a finished game against a bot shows the lobby; the room's link still shows the game", async () => {
  const { context, page } = await newPlayer("Fin");
  const roomId = await createRoom(page, { o: "bot:quick" });
  page.on("dialog", (d) => d.accept());
  await page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  await page.click("#resign");
  await page.waitForFunction(() => /O wins by resignation/.test(document.querySelector("#turn").textContent));
  // Record which messages arrive, from the first one of the next load.
  await page.addInitScript(() => {
    window.seenTypes = [];
    const Ws = window.WebSocket;
    window.WebSocket = class extends Ws {
      constructor(...args) {
        super(...args);
        this.addEventListener("message", (ev) => window.seenTypes.push(JSON.parse(ev.data).type));
      }
    };
  });
  await page.goto(`${env.server.base}/`);
  // The resumed session is sent its finished seat, and the page stays in the lobby.
  await page.waitForFunction(() => window.seenTypes?.includes("room_joined"));
  assert.equal(await page.evaluate(() => location.hash), "");
  assert.ok(await page.isVisible("#lobby"));
  assert.ok(await page.isHidden("#game"));
  await page.goto(`${env.server.base}/#/room/${roomId}`);
  await page.waitForFunction(() => /O wins by resignation/.test(document.querySelector("#turn").textContent));
  await context.close();
});

test("the lobby keeps finished games to a short list, with more in #/games, and the bot menu is not cut", async () => {
  const { context, page } = await newPlayer("Gil");
  page.on("dialog", (d) => d.accept());
  for (let i = 0; i < 6; i++) {
    await createRoom(page, { game: "tictactoe", o: "bot:quick" });
    await page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
    await page.click("#resign");
    await page.waitForFunction(() => /wins by resignation/.test(document.querySelector("#turn").textContent));
    await page.click("#leave");
    await page.waitForFunction(() => !document.querySelector("#lobby").hidden);
  }
  await page.waitForFunction(() => document.querySelectorAll("#recent-games a.recent-game").length === 5);
  await page.waitForFunction(() => document.querySelectorAll("#rooms-finished li.room").length === 5);
  assert.ok(await page.isVisible("#more-games"));
  assert.ok(await page.isVisible("#more-finished"));
  await page.click("#more-games");
  await page.waitForFunction(() => location.hash === "#/games");
  await page.waitForFunction(() => document.querySelectorAll("#games-list a.recent-game").length >= 6);
  assert.match(await page.textContent("#games-list"), /Gil vs quick \(bot\): O wins by resignation/);
  await page.click('#games a[href="#/"]');
  await page.waitForFunction(() => !document.querySelector("#lobby").hidden);

  // The bot menu reads "Bot: quick" in full; the level's description is under the menus.
  await page.check('input[name="game"][value="caro"]');
  await page.selectOption("#seat-o", "bot:sloppy");
  const menu = await page.$eval("#seat-o", (s) => ({
    label: s.selectedOptions[0].textContent,
    fits: s.getBoundingClientRect().right <= s.closest("form").getBoundingClientRect().right,
  }));
  assert.deepEqual(menu, { label: "Bot: sloppy", fits: true });
  assert.match(await page.textContent("#seat-help"), /^O, sloppy: Always picks a weaker move/);
  await context.close();
});

test("a friend's link asks a new browser for a name before seating it, and remembers it", async () => {
  const a = await newPlayer("Hana");
  const roomId = await createRoom(a.page);
  const link = await a.page.inputValue("#share-link");
  const context = await env.browser.newContext({ viewport: { width: 1200, height: 860 }, locale: "en-US" });
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("[friend] page error:", e));
  await page.goto(link);
  await page.waitForSelector("#name-dialog[open]");
  // Prefilled with the server's guest name; not seated yet.
  assert.match(await page.inputValue("#name-dialog-input"), /^guest-/);
  assert.equal(await a.page.evaluate(() => window.caroArena.state.room.players.o), null);
  await page.fill("#name-dialog-input", "Ivo");
  await page.press("#name-dialog-input", "Enter");
  await page.waitForFunction(() => window.caroArena.state.you?.seat === "o");
  await a.page.waitForFunction(() => window.caroArena.state.room.players.o?.name === "Ivo");
  assert.match(await page.textContent('.player[data-seat="o"] .pname'), /^Ivo \(you\)/);
  // The stored game has the name (it was the name from the first message of the seat).
  a.page.once("dialog", (d) => d.accept());
  await a.page.click("#resign");
  await a.page.waitForFunction(() => /O wins/.test(document.querySelector("#turn").textContent));
  const game = await (await fetch(`${env.server.base}/api/games/${roomId}`)).json();
  assert.equal(game.players.o.name, "Ivo");
  // Remembered: another link does not ask again.
  await a.page.click("#leave");
  await a.page.waitForFunction(() => !document.querySelector("#lobby").hidden);
  const second = await createRoom(a.page);
  await page.goto(`${env.server.base}/#/room/${second}`);
  await page.waitForFunction(() => window.caroArena.state.room?.room_id === location.hash.split("/")[2] && window.caroArena.state.you?.seat === "o");
  assert.ok(await page.isHidden("#name-dialog"));
  assert.equal(await page.inputValue("#name-input"), "Ivo");
  await context.close();
  await a.context.close();
});

test("a friend's link can be watched instead", async () => {
  const a = await newPlayer("Jan");
  const roomId = await createRoom(a.page);
  const context = await env.browser.newContext({ locale: "en-US" });
  const page = await context.newPage();
  await page.goto(`${env.server.base}/#/room/${roomId}`);
  await page.waitForSelector("#name-dialog[open]");
  await page.click("#name-watch");
  await page.waitForFunction((id) => location.hash === `#/watch/${id}` && window.caroArena.state.you?.role === "spectator", roomId);
  assert.equal(await a.page.evaluate(() => window.caroArena.state.room.players.o), null);
  await context.close();
  await a.context.close();
});

test("a hidden tab's title flashes when the turn comes back, and the sound setting is remembered", async () => {
  const pair = await seatedPair("Kai", "Lia");
  const p = pair.b.page;
  // Lia turns the sound on (the click is the gesture that lets the page make sound).
  await p.check("#sound-toggle");
  assert.equal(await p.evaluate(() => localStorage.getItem("caro-arena.sound")), "on");
  // Lia switches to another tab.
  const setHidden = (hidden) =>
    p.evaluate((hidden) => {
      Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
      Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
      document.dispatchEvent(new Event("visibilitychange"));
    }, hidden);
  await setHidden(true);
  assert.equal(await p.title(), "caro-arena");
  await pair.a.page.evaluate(() => window.caroArena.play(7, 7));
  await p.waitForFunction(() => document.title === "● Your move");
  // It flashes: the page's own title comes back in turn, then the alert again.
  await p.waitForFunction(() => document.title === "caro-arena");
  await p.waitForFunction(() => document.title === "● Your move");
  // Back to the tab: the title is the page's again and stays so.
  await setHidden(false);
  assert.equal(await p.title(), "caro-arena");
  // A visible tab is not flashed.
  await p.click(cell(8, 8));
  await pair.a.page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  await pair.a.page.evaluate(() => window.caroArena.play(7, 8));
  await p.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  assert.equal(await p.title(), "caro-arena");
  await p.reload();
  await p.waitForSelector('#conn[data-state="online"]');
  assert.ok(await p.isChecked("#sound-toggle"));
  for (const x of [pair.a, pair.b]) await x.context.close();
});

test("a hidden tab's title says so when the game starts", async () => {
  const a = await newPlayer("Ola");
  const roomId = await createRoom(a.page);
  await a.page.evaluate(() => {
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
    document.dispatchEvent(new Event("visibilitychange"));
  });
  const b = await newPlayer("Pim");
  await b.page.goto(`${env.server.base}/#/room/${roomId}`);
  await a.page.waitForFunction(() => document.title === "● Your game has started");
  // The opponent, looking at the page, is not flashed.
  await b.page.waitForFunction(() => window.caroArena.state.room?.status === "playing");
  assert.equal(await b.page.title(), "caro-arena");
  for (const x of [a, b]) await x.context.close();
});

test("on a phone a first tap previews the stone and a second tap plays it", async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, locale: "en-US" });
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("[phone] page error:", e));
  await page.goto(env.server.base + "/");
  await page.waitForSelector('#conn[data-state="online"]');
  const roomId = await createRoom(page);
  const b = await newPlayer("Mo");
  await b.page.goto(`${env.server.base}/#/room/${roomId}`);
  await page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  await page.tap(cell(7, 7));
  // A preview, not a move.
  assert.ok(await page.$eval(cell(7, 7), (c) => c.classList.contains("preview")));
  assert.equal(await page.getAttribute(cell(7, 7), "aria-label"), "h8, preview X, tap again to play");
  assert.equal(await moveCount(page), 0);
  // A tap elsewhere moves the preview.
  await page.tap(cell(6, 6));
  assert.equal(await page.$$eval("#board .cell.preview", (cs) => cs.map((c) => `${c.dataset.x},${c.dataset.y}`)).then((v) => v.join()), "6,6");
  await screenshot(page, "phone-preview");
  // The second tap on it plays.
  await page.tap(cell(6, 6));
  await b.page.waitForFunction(() => window.caroArena.state.room.moves.length === 1);
  assert.deepEqual(await b.page.evaluate(() => window.caroArena.state.room.moves[0]), [6, 6]);
  assert.equal(await page.$$eval("#board .cell.preview", (cs) => cs.length), 0);
  for (const c of [context, b.context]) await c.close();
});

test("the analysis of a level that blunders on purpose shows its final depth and says when it played another move", async () => {
  const { context, page } = await newPlayer("Noa");
  await createRoom(page, { o: "bot:sloppy" });
  // Three moves of ours, each answered by the bot.
  for (const [i, [x, y]] of [[7, 7], [3, 3], [11, 3]].entries()) {
    await page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
    await page.click(cell(x, y));
    await page.waitForFunction((n) => window.caroArena.state.room.moves.length === n, 2 * (i + 1));
  }
  // The panel ends on the depth the level searches to (2), not the first report's depth 1.
  await page.waitForSelector("#analysis:not([hidden])");
  assert.equal(await page.textContent("#an-depth"), "2");
  assert.equal(await page.textContent("#an-state"), "O (sloppy): last search");
  // This level always plays another move than its line's first, and the panel says so.
  const note = await page.textContent("#an-note");
  const moves = await page.evaluate(() => window.caroArena.state.room.moves);
  const played = await page.evaluate(async (m) => (await import("/board.js")).cellName(...m), moves[moves.length - 1]);
  assert.ok(await page.isVisible("#an-note"));
  assert.match(note, new RegExp(`^The bot's analysis: at its level it chose a weaker move, ${played}, instead of [a-o]\\d+\\.$`));
  assert.doesNotMatch(await page.textContent("#an-nps"), /^0 nodes\/s, 0 nodes$/);
  await context.close();
});
