// Ratings in the browser (issue 18, docs/ratings.md): two accounts play a rated game and its end
// shows both rating changes (Glicko-2 from 1500 each: +162 / -162); the seats show ratings and
// link to profiles; the winner logs out, logs in on a fresh browser context and finds the game
// in the rating history of the profile page (a graph point linking to the replay, W/D/L, the
// latest games); the leaderboard lists both, best first, its family picker and its links work;
// a rated bot level shows its rating in the create form, an account's seek its rating in the
// lobby; an unknown player is a translated 404.

import { test } from "node:test";
import assert from "node:assert/strict";
import { testEnv, createRoom, screenshot } from "./harness.js";
import { testConfig } from "./config.js";

// One rated game is enough to be listed (the defaults ask 5 games and a settled deviation), and
// `quick` gets a published rating.
const env = testEnv(`${testConfig.replace('blunder = 0.0\n', 'blunder = 0.0\nrating = 1450\n')}
[ratings]
min_games = 1
max_deviation = 350
`);

const PASSWORD = "correct horse battery";
const cell = (board, x, y) => `${board} button.cell[data-x="${x}"][data-y="${y}"]`;

async function register(page, username) {
  await page.click("#account-button");
  await page.fill("#account-username", username);
  await page.fill("#account-password", PASSWORD);
  await page.click("#account-register");
  await page.waitForFunction((u) => window.caroArena.conn.welcome?.account === u, username);
}

// X: (0,0)..(4,0); O: (0,1)..(3,1). X wins on the 9th move.
const script = Array.from({ length: 9 }, (_, i) => [Math.floor(i / 2), i % 2]);

test("a rated game shows the rating change; the profile has the history on a fresh context; the leaderboard lists both", async () => {
  const ann = await env.newPlayer("Ann");
  await register(ann.page, "Annie");
  const bob = await env.newPlayer("Bob");
  await register(bob.page, "Bobby");

  // The create form: a rated bot level shows its rating, the casual box says what it means.
  await ann.page.goto(`${env.server.base}/#/`);
  await ann.page.waitForFunction(() => document.querySelector('#seat-o option[value="bot:quick"]')?.textContent === "Bot: quick (1450)");
  assert.equal(await ann.page.textContent('#seat-o option[value="bot:quick"]'), "Bot: quick (1450)");
  assert.match(await ann.page.textContent("#rated-help"), /^Rated when both players have accounts/);
  await ann.page.check("#casual");
  assert.equal(await ann.page.textContent("#rated-help"), "Casual: this game will not change anyone's rating.");

  const roomId = await createRoom(ann.page);
  await bob.page.goto(`${env.server.base}/#/room/${roomId}`);
  await bob.page.waitForFunction(() => window.caroArena.state.you?.seat === "o");
  await ann.page.waitForFunction(() => window.caroArena.state.room?.status === "playing");
  assert.equal(await ann.page.textContent("#room-rated"), "· Rated");
  // The opponent's seat: its rating (provisional) and a link to its profile.
  await ann.page.waitForSelector('.player[data-seat="o"] .pname a.player-link');
  assert.equal(await ann.page.textContent('.player[data-seat="o"] .pname'), "Bobby (1500?)");
  assert.equal(await ann.page.getAttribute('.player[data-seat="o"] .pname a', "href"), "#/player/Bobby");

  for (const [i, [x, y]] of script.entries()) {
    const mover = i % 2 === 0 ? ann.page : bob.page;
    await mover.waitForSelector(`${cell("#board", x, y)}[aria-disabled="false"]`);
    await mover.click(cell("#board", x, y));
    await ann.page.waitForFunction((n) => window.caroArena.state.room.moves.length === n, i + 1);
  }
  for (const p of [ann.page, bob.page]) {
    await p.waitForSelector("#rating-change:not([hidden])");
    assert.equal(await p.textContent("#rating-change"), "X: 1500 → 1662 (+162) · O: 1500 → 1338 (-162)");
    // The seats show the ratings the game ended with.
    assert.match(await p.textContent('.player[data-seat="o"] .pname'), /^Bobby \(1338\?\)/);
  }
  await screenshot(ann.page, "rating-change");

  // Log out, log in on a fresh context, open the profile.
  await ann.page.click("#account-button");
  await ann.page.click("#account-logout");
  await ann.page.waitForFunction(() => window.caroArena.conn.welcome && !window.caroArena.conn.welcome.account);
  const again = await env.newPlayer("Someone");
  await again.page.click("#account-button");
  await again.page.fill("#account-username", "annie");
  await again.page.fill("#account-password", PASSWORD);
  await again.page.click("#account-login");
  await again.page.waitForFunction(() => window.caroArena.conn.welcome?.account === "Annie");
  const p = again.page;
  await p.goto(`${env.server.base}/#/player/Annie`);
  await p.waitForSelector("#pf-body:not([hidden])");
  assert.equal(await p.textContent("#pf-name"), "Annie");
  assert.equal(await p.textContent("#pf-record"), "Record: 1 wins, 0 draws, 0 losses");
  const rows = await p.$$eval("#pf-ratings tr", (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  assert.equal(rows.length, 1);
  assert.equal(rows[0][0], "Freestyle, no clock");
  assert.equal(rows[0][1], "1662?");
  assert.deepEqual(rows[0].slice(3), ["1", "1 / 0 / 0"]);
  // The history: one point, the game, linking to its replay.
  const points = await p.$$eval("#pf-history a.pt", (as) => as.map((a) => a.getAttribute("href")));
  assert.deepEqual(points, [`#/replay/${roomId}`]);
  assert.match(await p.getAttribute("#pf-history a.pt", "aria-label"), /^Freestyle, no clock: 1662 on /);
  assert.deepEqual(await p.$$eval("#pf-games a", (as) => as.map((a) => a.getAttribute("href"))), [`#/replay/${roomId}`]);
  await screenshot(p, "profile");

  // The leaderboard: its family picker, both players best first, names linking to profiles.
  await p.click("#nav-leaderboard");
  await p.waitForFunction(() => location.hash.startsWith("#/leaderboard"));
  await p.selectOption("#lb-family", "freestyle-untimed");
  await p.waitForFunction(() => document.querySelectorAll("#lb-rows tr").length === 2);
  const board = await p.$$eval("#lb-rows tr", (trs) => trs.map((tr) => [...tr.cells].slice(0, 3).map((c) => c.textContent)));
  assert.deepEqual(board, [["1", "Annie", "1662"], ["2", "Bobby", "1338"]]);
  await screenshot(p, "leaderboard");
  // Another family: nobody there yet.
  await p.selectOption("#lb-family", "caro-blitz");
  await p.waitForFunction(() => location.hash === "#/leaderboard/caro-blitz");
  await p.waitForSelector("#lb-empty:not([hidden])");
  assert.equal(await p.$$eval("#lb-rows tr", (trs) => trs.length), 0);
  await p.selectOption("#lb-family", "freestyle-untimed");
  await p.waitForFunction(() => document.querySelectorAll("#lb-rows tr").length === 2);
  await p.click('#lb-rows a[href="#/player/Bobby"]');
  await p.waitForFunction(() => document.querySelector("#pf-record")?.textContent === "Record: 0 wins, 0 draws, 1 losses");

  // The lobby: a seek of an account shows its rating in the seek's family; the finished room's
  // names link to the profiles.
  await bob.page.goto(`${env.server.base}/#/`);
  await bob.page.waitForSelector('#seek-form button[type="submit"]:not([disabled])');
  await bob.page.click('#seek-form button[type="submit"]');
  await p.goto(`${env.server.base}/#/`);
  await p.waitForFunction(() => [...document.querySelectorAll("#seeks .room-title")].some((e) => e.textContent === "Bobby (1338)"));
  await p.waitForSelector('#rooms-finished a.player-link[href="#/player/Annie"]');
  await p.waitForSelector('#rooms-finished a.player-link[href="#/player/Bobby"]');

  // An unknown player.
  await p.goto(`${env.server.base}/#/player/nobody-here`);
  await p.waitForFunction(() => document.querySelector("#pf-error").textContent !== "");
  assert.equal(await p.textContent("#pf-error"), "No player has that name.");
  for (const who of [ann, bob, again]) await who.context.close();
});
