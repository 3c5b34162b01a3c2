// End-to-end tests of the browser client: real headless Chromium, real server binary, real
// WebSocket. The file starts one server on a free port and one browser for all its tests.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, screenshot, newPlayer as harnessPlayer } from "./harness.js";
import { testConfig } from "./config.js";

let server;
let browser;

before(async () => {
  server = await startServer(testConfig);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const newPlayer = (name) => harnessPlayer(browser, server.base, name);

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

async function createRoom(page, { game = "caro", size = "15", rule = "freestyle", x = "me", o = "open" }) {
  await page.check(`input[name="game"][value="${game}"]`);
  if (game === "caro") {
    await page.selectOption("#size", size);
    await page.selectOption("#rule", rule);
  }
  await page.selectOption("#seat-x", x);
  await page.selectOption("#seat-o", o);
  await page.click('#create-form button[type="submit"]');
  await page.waitForFunction(() => location.hash.startsWith("#/room/"));
  await page.waitForSelector("#board button.cell");
  return page.evaluate(() => location.hash.split("/")[2]);
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
    const before = await page.$$eval("#move-list li", (lis) => lis.length);
    await page.click("#board button.cell:not([disabled])");
    // Our move is announced before the next turn is considered: a stale "Your move" must not
    // send a second click into a board the bot may already have won.
    await page.waitForFunction((n) => document.querySelectorAll("#move-list li").length > n, before);
  }
  const text = await page.textContent("#turn");
  assert.match(text, /^(X|O) wins by five in a row|^Draw/);
  // The winning line is highlighted and the move list has every move.
  assert.ok((await page.$$("#board .cell.win")).length >= 5);
  const moves = await page.$$eval("#move-list li", (lis) => lis.length);
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
  const c = await newPlayer("Carol");
  await c.page.goto(`${server.base}/#/watch/${roomId}`);
  await c.page.waitForSelector("#board button.cell");
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
  const seen = await c.page.$$eval("#move-list li", (lis) => lis.map((li) => li.textContent));
  assert.deepEqual(seen, ["X f8", "O f10", "X g8", "O g10", "X h8", "O h10", "X i8", "O i10", "X j8"]);
  assert.match(await c.page.textContent("#spectators"), /1 watching/);
  for (const p of [a, b, c]) await p.context.close();
});

test("a reload mid-game brings back the seat and the board", async () => {
  const a = await newPlayer("Dan");
  const roomId = await createRoom(a.page, { x: "me", o: "open" });
  const b = await newPlayer("Eve");
  await b.page.goto(`${server.base}/#/room/${roomId}`);
  await a.page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  await a.page.click(cell(7, 7));
  await waitStone(b.page, 7, 7, "x");
  await b.page.click(cell(8, 8));
  await waitStone(a.page, 8, 8, "o");

  await a.page.reload();
  await a.page.waitForSelector('#conn[data-state="online"]');
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
  await b.page.goto(`${server.base}/#/room/${roomId}`);
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
  await page.goto(`${server.base}/#/room/doesnotexist`);
  await page.waitForSelector("#toast:not([hidden])");
  assert.match(await page.textContent("#toast"), /room/i);
  // Back in the lobby.
  await page.waitForFunction(() => location.hash === "#/");
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
    () => document.querySelectorAll("#move-list li").length >= 4 && Number(document.querySelector("#an-depth").textContent) >= 5,
    null,
    { timeout: 30000 },
  );
  assert.match(await b.page.textContent("#an-nps"), /nodes\/s/);
  assert.ok((await b.page.textContent("#an-pv")).trim().length > 0);
  await screenshot(b.page, "analysis");

  const lobby = await newPlayer("Ivy");
  await lobby.page.waitForSelector("#rooms-waiting li.room");
  await lobby.page.waitForSelector("#rooms-playing li.room");
  await screenshot(lobby.page, "lobby");
  const waiting = await lobby.page.textContent("#rooms-waiting");
  assert.match(waiting, /Gus vs open seat/);
  const playing = await lobby.page.textContent("#rooms-playing");
  assert.match(playing, /deep \(bot\) vs deep \(bot\)/);
  for (const p of [a, b, lobby]) await p.context.close();
});
