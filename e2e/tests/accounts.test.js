// Accounts in the browser (issue 18): a guest plays a game, registers from the header and keeps
// its player id; logging out everywhere makes the page a new guest; a fresh browser context logs
// in and is the same player, whose finished game the replay API lists under it. A wrong password
// is shown, translated, in the dialog. A changed password: the old one is refused on a fresh
// context, the new one logs in.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, screenshot, newPlayer } from "./harness.js";
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

const PASSWORD = "correct horse battery";
const welcome = (page) => page.evaluate(() => window.caroArena.conn.welcome);

async function fillAccount(page, username, password) {
  await page.click("#account-button");
  await page.fill("#account-username", username);
  await page.fill("#account-password", password);
}

test("register keeps the guest's game, log out everywhere, log in on a fresh context", async () => {
  const a = await newPlayer(browser, server.base, "Guest A");
  assert.equal(await a.page.textContent("#account-button"), "Log in");
  // A finished game as a guest: against a bot, resigned at once.
  await a.page.check('#create-form input[name="game"][value="tictactoe"]');
  await a.page.selectOption("#seat-x", "me");
  await a.page.selectOption("#seat-o", "bot:quick");
  await a.page.click('#create-form button[type="submit"]');
  await a.page.waitForFunction(() => window.caroArena.state.room?.status === "playing");
  const roomId = await a.page.evaluate(() => window.caroArena.state.room.room_id);
  a.page.once("dialog", (d) => d.accept());
  await a.page.click("#resign");
  await a.page.waitForFunction(() => window.caroArena.state.room?.status === "finished");
  const guestId = (await welcome(a.page)).player_id;

  await fillAccount(a.page, "Alice", PASSWORD);
  await a.page.click("#account-register");
  await a.page.waitForFunction(() => window.caroArena.conn.welcome?.account === "Alice");
  assert.equal((await welcome(a.page)).player_id, guestId, "registering keeps the player id");
  assert.equal(await a.page.textContent("#account-button"), "Alice");
  await screenshot(a.page, "account-registered");

  await a.page.click("#account-button");
  await a.page.click("#account-logout");
  await a.page.waitForFunction(
    (id) => window.caroArena.conn.welcome && !window.caroArena.conn.welcome.account && window.caroArena.conn.welcome.player_id !== id,
    guestId,
  );
  assert.equal(await a.page.textContent("#account-button"), "Log in");

  const b = await newPlayer(browser, server.base, "Someone");
  await fillAccount(b.page, "alice", "not the password");
  await b.page.click("#account-login");
  await b.page.waitForFunction(() => document.querySelector("#account-error").textContent !== "");
  assert.equal(await b.page.textContent("#account-error"), "Wrong username or password.");
  await b.page.fill("#account-password", PASSWORD);
  await b.page.click("#account-login");
  await b.page.waitForFunction(() => window.caroArena.conn.welcome?.account === "Alice");
  assert.equal((await welcome(b.page)).player_id, guestId);
  const games = await b.page.evaluate(async (id) => (await (await fetch(`/api/games?player=${id}`)).json()).games.map((g) => g.id), guestId);
  assert.deepEqual(games, [roomId]);
  // A reload keeps the account (the token in storage is the account's).
  await b.page.reload();
  await b.page.waitForFunction(() => window.caroArena.conn.welcome?.account === "Alice");
  assert.equal((await welcome(b.page)).player_id, guestId);
  await a.context.close();
  await b.context.close();
});

test("change password: the old one stops working, the new one logs in on a fresh context", async () => {
  const NEW = "a brand new password";
  const a = await newPlayer(browser, server.base, "Carol");
  await fillAccount(a.page, "Carol", PASSWORD);
  await a.page.click("#account-register");
  await a.page.waitForFunction(() => window.caroArena.conn.welcome?.account === "Carol");
  const id = (await welcome(a.page)).player_id;

  await a.page.click("#account-button");
  // A wrong current password is refused, translated, and changes nothing.
  await a.page.fill("#account-old", "not the password");
  await a.page.fill("#account-new", NEW);
  await a.page.click("#account-change");
  await a.page.waitForFunction(() => document.querySelector("#account-error").textContent !== "");
  assert.equal(await a.page.textContent("#account-error"), "Wrong username or password.");
  assert.equal(await a.page.textContent("#account-changed"), "");
  await a.page.fill("#account-old", PASSWORD);
  await a.page.fill("#account-new", NEW);
  await a.page.click("#account-change");
  await a.page.waitForFunction(() => document.querySelector("#account-changed").textContent !== "");
  assert.match(await a.page.textContent("#account-changed"), /^Password changed\./);
  assert.equal(await a.page.textContent("#account-error"), "");
  // This session stays logged in.
  assert.equal((await welcome(a.page)).account, "Carol");

  const b = await newPlayer(browser, server.base, "Elsewhere");
  await fillAccount(b.page, "carol", PASSWORD);
  await b.page.click("#account-login");
  await b.page.waitForFunction(() => document.querySelector("#account-error").textContent !== "");
  assert.equal(await b.page.textContent("#account-error"), "Wrong username or password.");
  await b.page.fill("#account-password", NEW);
  await b.page.click("#account-login");
  await b.page.waitForFunction(() => window.caroArena.conn.welcome?.account === "Carol");
  assert.equal((await welcome(b.page)).player_id, id);
  await a.context.close();
  await b.context.close();
});
