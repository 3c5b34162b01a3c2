// End-to-end tests of the replay view: two people play a short Caro game in two browser
// contexts, then the finished game is opened from its end screen and from the lobby's recent
// games, stepped through (buttons, arrow keys, the move list, the slider) and downloaded.

import { test } from "node:test";
import assert from "node:assert/strict";
import { testEnv, screenshot } from "./harness.js";
import { testConfig } from "./config.js";

const env = testEnv(testConfig);
const newPlayer = env.newPlayer;

const cell = (board, x, y) => `${board} button.cell[data-x="${x}"][data-y="${y}"]`;

async function stonesOn(page, board) {
  return page.$$eval(`${board} button.cell`, (cells) =>
    cells
      .filter((c) => c.classList.contains("has-x") || c.classList.contains("has-o"))
      .map((c) => `${c.classList.contains("has-x") ? "X" : "O"}${c.dataset.x},${c.dataset.y}`)
      .sort(),
  );
}

// X: (0,0)..(4,0); O: (0,1)..(3,1). X wins on the 9th move.
const script = Array.from({ length: 9 }, (_, i) => [Math.floor(i / 2), i % 2]);

test("a finished game replays step by step and downloads as .psq and JSON", async () => {
  const ann = await newPlayer("Ann");
  const bob = await newPlayer("Bob");
  await ann.page.selectOption("#size", "10");
  await ann.page.selectOption("#seat-x", "me");
  await ann.page.selectOption("#seat-o", "open");
  await ann.page.click('#create-form button[type="submit"]');
  await ann.page.waitForFunction(() => location.hash.startsWith("#/room/"));
  const room = await ann.page.evaluate(() => location.hash.split("/")[2]);
  await bob.page.goto(`${env.server.base}/#/room/${room}`);
  await bob.page.waitForFunction(() => window.caroArena.state.you?.seat === "o");

  // The players chat; their lines are kept with the game and shown in its replay.
  for (const [page, text] of [[ann.page, "good luck"], [bob.page, "you too"]]) {
    await page.evaluate((msg) => window.caroArena.conn.raw(msg), { type: "chat", room_id: room, text });
  }
  for (const [i, [x, y]] of script.entries()) {
    const mover = i % 2 === 0 ? ann.page : bob.page;
    await mover.waitForSelector(`${cell("#board", x, y)}[aria-disabled="false"]`);
    await mover.click(cell("#board", x, y));
    await ann.page.waitForFunction((n) => window.caroArena.state.room.moves.length === n, i + 1);
  }
  await ann.page.waitForFunction(() => /X wins/.test(document.querySelector("#turn").textContent));

  // From the end screen.
  await ann.page.click("#replay-btn");
  await ann.page.waitForFunction((id) => location.hash === `#/replay/${id}`, room);
  await ann.page.waitForFunction(() => document.querySelector("#rp-pos").textContent === "Move 9 / 9");
  const p = ann.page;
  assert.equal((await stonesOn(p, "#rp-board")).length, 9);
  const winCells = () => p.$$eval("#rp-board button.cell.win", (cs) => cs.map((c) => `${c.dataset.x},${c.dataset.y}`).sort());
  assert.deepEqual(await winCells(), ["0,0", "1,0", "2,0", "3,0", "4,0"]);
  assert.match(await p.textContent("#rp-result"), /X wins by five in a row/);
  assert.match(await p.textContent("#rp-title"), /Ann vs Bob/);
  // The players' chat (the two connections' lines may have been taken in either order).
  const chat = await p.$$eval("#rp-chat li", (lis) => lis.map((li) => li.textContent).sort());
  assert.deepEqual(chat, ["Ann (X): good luck", "Bob (O): you too"]);
  await screenshot(p, "replay");

  await p.click("#rp-first");
  assert.equal(await p.textContent("#rp-pos"), "Move 0 / 9");
  assert.deepEqual(await winCells(), []);
  assert.deepEqual(await stonesOn(p, "#rp-board"), []);
  await p.click("#rp-next");
  assert.deepEqual(await stonesOn(p, "#rp-board"), ["X0,0"]);
  await p.keyboard.press("ArrowRight");
  assert.deepEqual(await stonesOn(p, "#rp-board"), ["O0,1", "X0,0"]);
  await p.keyboard.press("ArrowLeft");
  assert.equal(await p.textContent("#rp-pos"), "Move 1 / 9");
  // Jump with the move list: the 5th move is X at (2,0), marked as the last move.
  await p.click('#rp-moves .mv[data-ply="5"]');
  assert.equal(await p.textContent("#rp-pos"), "Move 5 / 9");
  assert.deepEqual(await stonesOn(p, "#rp-board"), ["O0,1", "O1,1", "X0,0", "X1,0", "X2,0"]);
  assert.ok(await p.$eval(cell("#rp-board", 2, 0), (b) => b.classList.contains("last")));
  await p.fill("#rp-slider", "3");
  assert.equal(await p.textContent("#rp-pos"), "Move 3 / 9");
  await p.click("#rp-prev");
  assert.equal(await p.textContent("#rp-pos"), "Move 2 / 9");
  await p.keyboard.press("End");
  assert.equal(await p.textContent("#rp-pos"), "Move 9 / 9");

  // The downloads.
  const psqHref = await p.getAttribute("#rp-psq", "href");
  const psq = await (await fetch(env.server.base + psqHref)).text();
  const lines = psq.trim().split("\n");
  assert.equal(lines[0], "Piskvorky 10x10, 11:11, 0");
  assert.deepEqual(
    lines.slice(1).map((l) => l.split(",").slice(0, 2).join(",")),
    script.map(([x, y]) => `${x + 1},${y + 1}`),
  );
  const json = await (await fetch(env.server.base + (await p.getAttribute("#rp-json", "href")))).json();
  assert.equal(json.id, room);
  assert.equal(json.result, "x");
  assert.deepEqual(json.moves.map((m) => [m.x, m.y]), script);

  // From the lobby's recent games.
  await bob.page.goto(`${env.server.base}/#/`);
  await bob.page.waitForSelector(`#recent-games a[href="#/replay/${room}"]`);
  assert.match(await bob.page.textContent(`#recent-games a[href="#/replay/${room}"]`), /Ann vs Bob: X wins .*9 moves/);
  await bob.page.click(`#recent-games a[href="#/replay/${room}"]`);
  await bob.page.waitForFunction(() => document.querySelector("#rp-pos").textContent === "Move 9 / 9");
  assert.equal((await stonesOn(bob.page, "#rp-board")).length, 9);

  await ann.context.close();
  await bob.context.close();
});
