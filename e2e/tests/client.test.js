// End-to-end tests of the browser client: real headless Chromium, real server binary, real
// WebSocket. The file starts one server on a free port and one browser for all its tests.

import { test } from "node:test";
import assert from "node:assert/strict";
import { testEnv, createRoom, screenshot } from "./harness.js";
import { testConfig } from "./config.js";

const env = testEnv(testConfig);
const newPlayer = env.newPlayer;

const cell = (x, y) => `#board button.cell[data-x="${x}"][data-y="${y}"]`;

async function stoneAt(page, x, y) {
  const label = await page.getAttribute(cell(x, y), "aria-label");
  if (label.includes(", X")) return "x";
  if (label.includes(", O")) return "o";
  return null;
}

async function waitStone(page, x, y, side) {
  await page.waitForFunction(
    ([sel, side]) => document.querySelector(sel)?.getAttribute("aria-label").includes(`, ${side.toUpperCase()}`),
    [cell(x, y), side],
  );
}

test("a game against a bot is played to its end", async () => {
  const { context, page } = await newPlayer("Ann");
  await createRoom(page, { game: "caro", size: "10", x: "me", o: "bot:quick" });
  // Play the first free cell nearest the top-left whenever it is our turn, until the game ends.
  for (let i = 0; i < 60; i++) {
    await page.waitForFunction(() => {
      const t = document.querySelector("#turn").textContent;
      return t === "Your move" || / wins| Draw/.test(t);
    });
    const text = await page.textContent("#turn");
    if (/ wins|Draw/.test(text)) break;
    const before = await page.$$eval("#move-list .mv", (bs) => bs.length);
    if (before > 0) {
      // The bot's answer is marked as the last move, and only it.
      const lastMove = await page.$$eval("#move-list .mv", (bs) => bs[bs.length - 1].textContent);
      const marked = await page.$$eval("#board .cell.last", (cs) => cs.map((c) => c.getAttribute("aria-label")));
      assert.equal(marked.length, 1);
      assert.ok(marked[0].startsWith(`${lastMove}, O`), `${marked[0]} vs ${lastMove}`);
    }
    await page.click('#board button.cell[aria-disabled="false"]');
    // Our move is announced before the next turn is considered: a stale "Your move" must not
    // send a second click into a board the bot may already have won.
    await page.waitForFunction((n) => document.querySelectorAll("#move-list .mv").length > n, before);
  }
  const text = await page.textContent("#turn");
  assert.match(text, /^(X|O) wins by five in a row|^Draw/);
  // A winning line is highlighted (a draw has none) and the move list has every move.
  const win = (await page.$$("#board .cell.win")).length;
  if (text.startsWith("Draw")) assert.equal(win, 0);
  else assert.ok(win >= 5, `${win} cells in the winning line`);
  // Nothing can be played any more.
  assert.equal((await page.$$('#board .cell[aria-disabled="false"]')).length, 0);
  const moves = await page.$$eval("#move-list .mv", (bs) => bs.length);
  const stones = await page.$$eval("#board .cell.has-x, #board .cell.has-o", (cells) => cells.length);
  assert.equal(moves, stones);
  await context.close();
});

test("two players play each other while a third watches the same moves", async () => {
  const a = await newPlayer("Alice");
  const roomId = await createRoom(a.page, { x: "me", o: "open" });
  const link = await a.page.inputValue("#share-link");
  assert.ok(link.endsWith(`#/room/${roomId}`));

  const b = await newPlayer("Bob");
  await b.page.goto(link);
  await b.page.waitForSelector("#board button.cell");
  // Carol finds the game in the live lobby and watches it from there.
  const c = await newPlayer("Carol");
  const listed = c.page.locator("#rooms-playing li.room", { hasText: "Alice vs Bob" });
  await listed.getByRole("button", { name: "Watch" }).click();
  await c.page.waitForFunction((id) => location.hash === `#/watch/${id}`, roomId);
  await c.page.waitForSelector("#board button.cell");
  // Coordinates on the edges: columns a to o across the top, rows 1 to 15 down the side.
  const coords = await c.page.$$eval("#board .coord", (spans) => spans.map((s) => s.textContent));
  assert.deepEqual(coords.slice(0, 16), ["", ..."abcdefghijklmno"]);
  assert.deepEqual(coords.slice(16), Array.from({ length: 15 }, (_, i) => String(i + 1)));
  // Boards up to the server's 32 columns: after z come aa, ab ...
  const names = await c.page.evaluate(async () => [0, 25, 26, 31].map((await import("/board.js")).columnName));
  assert.deepEqual(names, ["a", "z", "aa", "af"]);
  await a.page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");

  // X makes five on row 7; O plays on row 9.
  const script = [];
  for (let i = 0; i < 5; i++) {
    script.push([a.page, i + 5, 7, "x"]);
    if (i < 4) script.push([b.page, i + 5, 9, "o"]);
  }
  for (const [page, x, y, side] of script) {
    await page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
    await page.click(cell(x, y));
    for (const p of [a.page, b.page, c.page]) await waitStone(p, x, y, side);
    if (side === "o" && x === 6) await screenshot(c.page, "game");
  }
  for (const p of [a.page, b.page, c.page]) {
    await p.waitForFunction(() => document.querySelector("#turn").textContent.startsWith("X wins by five in a row"));
    assert.equal((await p.$$("#board .cell.win")).length, 5);
  }
  // The spectator saw the moves in the order they were played.
  const seen = await c.page.$$eval("#move-list .mv", (bs) => bs.map((b) => `${b.dataset.side.toUpperCase()} ${b.textContent}`));
  assert.deepEqual(seen, ["X f8", "O f10", "X g8", "O g10", "X h8", "O h10", "X i8", "O i10", "X j8"]);
  assert.match(await c.page.textContent("#spectators"), /1 watching/);
  for (const p of [a, b, c]) await p.context.close();
});

test("a reload mid-game brings back the seat and the board", async () => {
  const a = await newPlayer("Dan");
  const roomId = await createRoom(a.page, { x: "me", o: "open" });
  const b = await newPlayer("Eve");
  await b.page.goto(`${env.server.base}/#/room/${roomId}`);
  await a.page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  await a.page.click(cell(7, 7));
  await waitStone(b.page, 7, 7, "x");
  await b.page.click(cell(8, 8));
  await waitStone(a.page, 8, 8, "o");

  await a.page.reload();
  await a.page.waitForSelector('#conn[data-state="online"]');
  // The browser remembers the name.
  assert.equal(await a.page.inputValue("#name-input"), "Dan");
  await waitStone(a.page, 7, 7, "x");
  await waitStone(a.page, 8, 8, "o");
  await a.page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  assert.match(await a.page.textContent('.player[data-seat="x"] .pname'), /Dan \(you\)/);
  // The seat is really ours: the move goes through and Bob sees it.
  await a.page.click(cell(7, 8));
  await waitStone(b.page, 7, 8, "x");
  assert.equal(await stoneAt(a.page, 7, 8), "x");
  for (const p of [a, b]) await p.context.close();
});

test("a dropped connection reconnects, keeps the seat and catches up without a reload", async () => {
  const a = await newPlayer("Jon");
  const roomId = await createRoom(a.page, { x: "me", o: "open" });
  const b = await newPlayer("Kim");
  await b.page.goto(`${env.server.base}/#/room/${roomId}`);
  await a.page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  await a.page.click(cell(7, 7));
  await waitStone(b.page, 7, 7, "x");

  // Cut Jon's connection and keep it down while Kim moves.
  await a.page.evaluate(() => {
    const c = window.caroArena.conn;
    c.open = () => {}; // no reconnection yet
    c.ws.close();
  });
  await a.page.waitForSelector('#conn[data-state="offline"]');
  await b.page.waitForFunction(() => document.querySelector('.player[data-seat="x"] .pname').textContent.includes("away"));
  await b.page.click(cell(8, 8));
  await waitStone(b.page, 8, 8, "o");

  // Reconnect: the seat comes back and the missed move appears, with no reload.
  const loads = await a.page.evaluate(() => performance.getEntriesByType("navigation").length);
  await a.page.evaluate(() => {
    const c = window.caroArena.conn;
    delete c.open; // the prototype's open again
    c.open();
  });
  await a.page.waitForSelector('#conn[data-state="online"]');
  await waitStone(a.page, 8, 8, "o");
  await a.page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  assert.equal(await a.page.evaluate(() => performance.getEntriesByType("navigation").length), loads);
  await a.page.click(cell(7, 8));
  await waitStone(b.page, 7, 8, "x");
  for (const p of [a, b]) await p.context.close();
});

test("an illegal action shows the server's error", async () => {
  const { context, page } = await newPlayer("Fay");
  await page.goto(`${env.server.base}/#/room/doesnotexist`);
  await page.waitForSelector("#toast:not([hidden])");
  assert.match(await page.textContent("#toast"), /room/i);
  // Back in the lobby.
  await page.waitForFunction(() => location.hash === "#/");
  await context.close();
});

test("illegal moves are refused with readable errors and change nothing", async () => {
  const a = await newPlayer("Lea");
  const roomId = await createRoom(a.page, { x: "me", o: "open" });
  const b = await newPlayer("Max");
  await b.page.goto(`${env.server.base}/#/room/${roomId}`);
  await a.page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  await a.page.click(cell(7, 7));
  await waitStone(b.page, 7, 7, "x");
  // The board offers neither of these; the page sends them as a click would.
  const toastAfter = async (page, x, y) => {
    await page.evaluate(() => (document.querySelector("#toast").hidden = true));
    await page.evaluate(([x, y]) => window.caroArena.play(x, y), [x, y]);
    await page.waitForSelector("#toast:not([hidden])");
    return page.textContent("#toast");
  };
  assert.equal(await toastAfter(a.page, 3, 3), "Wait for your turn: your opponent is to move.");
  assert.equal(await toastAfter(b.page, 7, 7), "h8 is already taken: pick an empty point.");
  // Nothing changed: one stone, still O to move, and O's board is unlocked again.
  for (const p of [a.page, b.page]) {
    assert.equal(await p.$$eval("#move-list .mv", (bs) => bs.length), 1);
    assert.equal(await stoneAt(p, 3, 3), null);
  }
  await b.page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  await b.page.click(cell(8, 8));
  await waitStone(a.page, 8, 8, "o");
  for (const p of [a, b]) await p.context.close();
});

test("on a phone: the board fits, the keyboard plays, resigning ends the game", async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, locale: "en-US" });
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("[phone] page error:", e));
  page.on("dialog", (d) => d.accept());
  await page.goto(env.server.base + "/");
  await page.waitForSelector('#conn[data-state="online"]');
  await page.check('input[name="game"][value="caro"]');
  await page.selectOption("#rule", "caro");
  assert.match(await page.textContent("#rule-help"), /both ends are blocked/);
  const roomId = await createRoom(page, { game: "caro", size: "15", rule: "caro", x: "me", o: "open" });
  const box = await page.$eval("#board", (b) => b.getBoundingClientRect().toJSON());
  assert.ok(box.left >= 0 && box.right <= 390, `board ${box.left}..${box.right} in 390 px`);

  const b = await newPlayer("Ned");
  await b.page.goto(`${env.server.base}/#/room/${roomId}`);
  await page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  // One Tab stop on the board, at the centre; arrows move it, Enter plays.
  assert.equal(await page.$$eval('#board .cell[tabindex="0"]', (cs) => cs.length), 1);
  await page.focus('#board .cell[tabindex="0"]');
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), "i9, empty");
  await page.keyboard.press("Enter");
  await waitStone(b.page, 8, 8, "x");
  // The board was redrawn, and the focus stayed on the same point (the opponent may see the
  // stone before the mover's own page has drawn it: waited for, not read once).
  await page.waitForFunction(() => document.activeElement.getAttribute("aria-label") === "i9, X, last move");
  await screenshot(page, "phone");

  await b.page.click(cell(7, 7));
  await waitStone(page, 7, 7, "o");
  await page.click("#resign");
  await page.waitForFunction(() => document.querySelector("#turn").textContent.startsWith("O wins by resignation"));
  await b.page.waitForFunction(() => document.querySelector("#turn").textContent.startsWith("O wins by resignation: well played!"));
  assert.ok(await page.isHidden("#resign"));
  for (const c of [context, b.context]) await c.close();
});

test("tic-tac-toe against a bot is played to its end", async () => {
  const { context, page } = await newPlayer("Oli");
  await createRoom(page, { game: "tictactoe", x: "me", o: "bot:quick" });
  assert.equal(await page.$$eval("#board button.cell", (cs) => cs.length), 9);
  assert.equal(await page.textContent("#room-rule"), "Tic-tac-toe 3x3");
  for (let i = 0; i < 5; i++) {
    await page.waitForFunction(() => /Your move| wins|Draw/.test(document.querySelector("#turn").textContent));
    if (/ wins|Draw/.test(await page.textContent("#turn"))) break;
    const before = await page.$$eval("#move-list .mv", (bs) => bs.length);
    await page.click('#board button.cell[aria-disabled="false"]');
    await page.waitForFunction((n) => document.querySelectorAll("#move-list .mv").length > n, before);
  }
  await page.waitForFunction(() => / wins|Draw/.test(document.querySelector("#turn").textContent));
  // Playing the first free cell every time loses or draws against the bot: never a win for X.
  assert.match(await page.textContent("#turn"), /^(O wins by three in a row|Draw \(the board is full\))/);
  await context.close();
});

test("the lobby lists games and a bot's analysis is shown live", async () => {
  const a = await newPlayer("Gus");
  await createRoom(a.page, { x: "me", o: "open" });
  const b = await newPlayer("Hal");
  await createRoom(b.page, { x: "bot:deep", o: "bot:deep" });
  // Bob watches the bot game: the analysis panel shows depth, score, speed and the line.
  await b.page.waitForSelector("#analysis:not([hidden])", { timeout: 20000 });
  // Wait for a few moves and a deep enough iteration, so the picture shows a real line.
  await b.page.waitForFunction(
    () =>
      document.querySelectorAll("#move-list .mv").length >= 6 &&
      !document.querySelector("#analysis").classList.contains("idle") &&
      Number(document.querySelector("#an-depth").textContent) >= 5,
    null,
    { timeout: 30000 },
  );
  assert.match(await b.page.textContent("#an-nps"), /nodes\/s/);
  assert.ok((await b.page.textContent("#an-pv")).trim().length > 0);
  // The line is drawn faintly on the board, numbered, and the score bar is set.
  await b.page.waitForSelector("#board .cell.pv[data-pv='1']");
  assert.match(await b.page.textContent("#an-state"), /^(X|O) \(deep\) is thinking$/);
  // The graph has a point for every bot move searched so far.
  await b.page.waitForSelector("#evalgraph:not([hidden])");
  const points = await b.page.$eval("#evalgraph-line", (l) => l.getAttribute("points").split(" ").length);
  assert.ok(points >= 2, `${points} points`);
  const bar = await b.page.$eval("#evalbar-fill", (e) => e.style.width);
  assert.match(bar, /^\d+(\.\d+)?%$/);
  await screenshot(b.page, "analysis");

  const lobby = await newPlayer("Ivy");
  await lobby.page.waitForSelector("#rooms-waiting li.room");
  await lobby.page.waitForSelector("#rooms-playing li.room");
  await screenshot(lobby.page, "lobby");
  const waiting = await lobby.page.textContent("#rooms-waiting");
  assert.match(waiting, /Gus vs open seat/);
  const playing = await lobby.page.textContent("#rooms-playing");
  assert.match(playing, /deep \(bot\) vs deep \(bot\)/);
  assert.match(playing, /1 watching/);
  // Games finished earlier in this file are listed as finished, from the live rooms and the store.
  await lobby.page.waitForSelector("#rooms-finished li.room");
  assert.match(await lobby.page.textContent("#rooms-finished"), /Ann, away vs quick \(bot\)/);
  await lobby.page.waitForSelector("#recent-games a.recent-game");
  // Live: a room opened now appears without a reload, and leaves "waiting" once it fills.
  const c = await newPlayer("Pia");
  const roomId = await createRoom(c.page, { x: "me", o: "open" });
  await lobby.page.waitForFunction(() => /Pia vs open seat/.test(document.querySelector("#rooms-waiting").textContent));
  const d = await newPlayer("Quin");
  await d.page.goto(`${env.server.base}/#/room/${roomId}`);
  await lobby.page.waitForFunction(() => /Pia vs Quin/.test(document.querySelector("#rooms-playing").textContent));
  assert.doesNotMatch(await lobby.page.textContent("#rooms-waiting"), /Pia/);
  for (const p of [c, d]) await p.context.close();
  for (const p of [a, b, lobby]) await p.context.close();
});
