// The game clocks in the browser (client/clock.js): a game created with a short clock from the
// lobby's form, both clocks shown, the running one counting down in the page between the
// server's messages, and a flag fall shown to both players. Real Chromium, real server binary.

import { test } from "node:test";
import assert from "node:assert/strict";
import { testEnv, screenshot } from "./harness.js";
import { testConfig } from "./config.js";

const env = testEnv(testConfig);
const newPlayer = env.newPlayer;

// The time left a clock element shows, in ms ("0:04.2" or "1:05").
async function shown(page, seat) {
  const text = await page.textContent(`[data-clock="${seat}"]`);
  const [m, s] = text.split(":");
  return Math.round((Number(m) * 60 + Number(s)) * 1000);
}

test("a short clock counts down in the page and its flag fall ends the game", async () => {
  const a = await newPlayer("Ann");
  const b = await newPlayer("Bob");
  try {
    // The form offers the usual controls; this test adds a 5 s per-move clock to it, so the
    // flag falls within the test's time.
    const offered = await a.page.$$eval("#time-control option", (os) => os.map((o) => o.textContent));
    assert.deepEqual(offered, ["No clock", "3 + 2", "5 + 3", "10 + 5", "30 s per move"]);
    await a.page.evaluate(() => document.querySelector("#time-control").append(new Option("5 s per move", "per_move:5000")));
    await a.page.check('input[name="game"][value="caro"]');
    await a.page.selectOption("#seat-x", "me");
    await a.page.selectOption("#seat-o", "open");
    await a.page.selectOption("#time-control", "per_move:5000");
    await a.page.click('#create-form button[type="submit"]');
    await a.page.waitForFunction(() => location.hash.startsWith("#/room/"));
    const roomId = await a.page.evaluate(() => location.hash.split("/")[2]);
    // Waiting for a player: both clocks full, none running.
    await a.page.waitForSelector('[data-clock="x"]:not([hidden])');
    assert.equal(await a.page.textContent('[data-clock="x"]'), "0:05.0");
    assert.equal(await a.page.textContent('[data-clock="o"]'), "0:05.0");
    assert.match(await a.page.textContent("#room-rule"), /5 s per move/);

    // Bob joins: the game and X's clock start; Ann sees hers count down with no message
    // from the server in between.
    await b.page.goto(`${env.server.base}/#/room/${roomId}`);
    await b.page.waitForSelector('[data-clock="x"].running');
    await a.page.waitForSelector('[data-clock="x"].running');
    const first = await shown(a.page, "x");
    await a.page.waitForFunction((t) => {
      const [m, s] = document.querySelector('[data-clock="x"]').textContent.split(":");
      return (Number(m) * 60 + Number(s)) * 1000 <= t - 500;
    }, first);
    assert.equal(await a.page.textContent('[data-clock="o"]'), "0:05.0");

    // Ann moves: her clock resets to 5 s and stops, Bob's runs, in both pages.
    await a.page.click('#board button.cell[data-x="7"][data-y="7"]');
    await b.page.waitForSelector('[data-clock="o"].running');
    await a.page.waitForSelector('[data-clock="o"].running');
    assert.equal(await a.page.textContent('[data-clock="x"]'), "0:05.0");
    assert.ok(!(await a.page.$eval('[data-clock="x"]', (e) => e.classList.contains("running"))));
    // Under ten seconds the running clock is marked low.
    assert.ok(await b.page.$eval('[data-clock="o"]', (e) => e.classList.contains("low")));
    await screenshot(b.page, "clock");

    // Bob does not move: his flag falls, and both see the loss on time.
    for (const p of [a.page, b.page]) {
      await p.waitForFunction(() => document.querySelector("#turn").textContent.startsWith("X wins on time"), null, { timeout: 15000 });
      assert.equal(await p.textContent('[data-clock="o"]'), "0:00.0");
      assert.ok(await p.$eval('[data-clock="o"]', (e) => e.classList.contains("flagged") && !e.classList.contains("running")));
      assert.equal(await p.textContent('[data-clock="x"]'), "0:05.0");
    }
    // The stored game keeps its time control (the replay API).
    const game = await (await fetch(`${env.server.base}/api/games/${roomId}`)).json();
    assert.deepEqual(game.time_control, { kind: "per_move", move_ms: 5000 });
    assert.equal(game.reason, "time");
  } finally {
    await a.context.close();
    await b.context.close();
  }
});

test("the opponent sees an away player's countdown to abandonment", async () => {
  const a = await newPlayer("Ann");
  const b = await newPlayer("Bob");
  try {
    await a.page.selectOption("#seat-x", "me");
    await a.page.selectOption("#seat-o", "open");
    await a.page.selectOption("#time-control", "none");
    await a.page.click('#create-form button[type="submit"]');
    await a.page.waitForFunction(() => location.hash.startsWith("#/room/"));
    const roomId = await a.page.evaluate(() => location.hash.split("/")[2]);
    // No clock: no clock shown.
    assert.ok(await a.page.$eval('[data-clock="x"]', (e) => e.hidden));
    await b.page.goto(`${env.server.base}/#/room/${roomId}`);
    await a.page.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
    // Bob leaves the page: on Ann's turn his countdown is the absence cap (5 min)...
    await b.context.close();
    await a.page.waitForSelector('[data-away="o"]:not([hidden])');
    assert.match(await a.page.textContent('[data-away="o"]'), /^away: loses in (5:00|4:5\d)$/);
    // ...and once it is his turn, the grace (rooms.grace_ms, 30 s here), counting down.
    await a.page.click('#board button.cell[data-x="7"][data-y="7"]');
    await a.page.waitForFunction(() => /^away: loses in 0:(30|2\d)$/.test(document.querySelector('[data-away="o"]').textContent));
    const first = await a.page.textContent('[data-away="o"]');
    await a.page.waitForFunction((t) => document.querySelector('[data-away="o"]').textContent !== t, first);
    await screenshot(a.page, "away");
  } finally {
    await a.context.close();
  }
});
