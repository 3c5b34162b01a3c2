// The client in the players' language (issue 17): the two catalogues agree, every key the page
// names is in them and every error code of docs/protocol.md is translated; in real Chromium a
// Vietnamese browser gets the page in Vietnamese (lobby, a game against a bot, a refused move, a
// server error), the header's switch changes to English and the choice survives a reload, and
// an English browser gets English.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { startServer, launchBrowser, screenshot, root } from "./harness.js";
import { testConfig } from "./config.js";

const client = join(root, "client");

// A catalogue is an ES module with no imports; the client's folder has no package.json, so it
// is loaded from its text.
async function catalogue(lang) {
  const text = readFileSync(join(client, "i18n", `${lang}.js`), "utf8");
  return (await import(`data:text/javascript;base64,${Buffer.from(text).toString("base64")}`)).default;
}

const params = (text) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

test("both catalogues have the same keys, each with the same {params}", async () => {
  const en = await catalogue("en");
  const vi = await catalogue("vi");
  assert.deepEqual(Object.keys(vi).sort(), Object.keys(en).sort());
  for (const [key, text] of Object.entries(en)) {
    assert.equal(typeof vi[key], "string", key);
    assert.deepEqual(params(vi[key]), params(text), `{params} of ${key}`);
  }
});

test("every key the page names is in the catalogue, and every error code of the protocol", async () => {
  const en = await catalogue("en");
  const named = new Set();
  for (const file of readdirSync(client).filter((f) => f.endsWith(".js") || f.endsWith(".html"))) {
    const text = readFileSync(join(client, file), "utf8");
    // t("key" ...) with a literal key, and the static page's data-i18n attributes.
    for (const m of text.matchAll(/\bt\("([\w.]+)"/g)) named.add(m[1]);
    for (const m of text.matchAll(/data-i18n(?:-[\w-]+)?="([\w.]+)"/g)) named.add(m[1]);
  }
  assert.ok(named.size > 50, `${named.size} keys found`);
  for (const key of named) assert.ok(key in en, `${key} is named by the client but not in the catalogue`);

  const protocol = readFileSync(join(root, "docs", "protocol.md"), "utf8");
  const section = protocol.slice(protocol.indexOf("| code | when | example |"), protocol.indexOf("## Close codes"));
  const codes = [...section.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]);
  assert.ok(codes.length >= 30, `${codes.length} codes found`);
  for (const code of [...codes, "disconnected"]) assert.ok(`error.${code}` in en, `no translation for the error code ${code}`);
});

// The browser tests: the test config's bots, plus `beginner` with its shipped description (which
// the catalogue translates; the others' descriptions are shown as the server wrote them).
let server;
let browser;

before(async () => {
  server = await startServer(`${testConfig}
[bots.beginner]
description = "Learning the game: misses a lot"
games = ["caro", "tictactoe"]
style = "full"
max_depth = 2
time_ms = 60
blunder = 0.0
`);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

async function open(locale) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 860 }, locale });
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error(`[${locale}] page error:`, e));
  await page.goto(server.base + "/");
  await page.waitForSelector('#conn[data-state="online"]');
  return { context, page };
}

const text = (page, sel) => page.textContent(sel).then((s) => s.trim());
const turnIs = (page, want) => page.waitForFunction((want) => document.querySelector("#turn").textContent === want, want);

test("a Vietnamese browser gets the page in Vietnamese; the switch changes to English, remembered", async () => {
  const { context, page } = await open("vi-VN");
  // The lobby and the create form.
  assert.equal(await page.getAttribute("html", "lang"), "vi");
  assert.equal(await text(page, "#create-h"), "Ván mới");
  assert.equal(await text(page, "#rooms-h"), "Ván đấu");
  assert.equal(await text(page, "#conn"), "đã kết nối");
  assert.equal(await text(page, '#create-form button[type="submit"]'), "Tạo ván");
  assert.deepEqual(
    await page.$$eval("#rule option", (os) => os.map((o) => o.textContent)),
    ["Tự do", "Đúng năm", "Chặn hai đầu", "Chặn hai đầu, quá năm vẫn thắng"],
  );
  assert.equal((await page.$$eval("#time-control option", (os) => os.map((o) => o.textContent)))[4], "30 giây mỗi nước");
  assert.equal(await page.getAttribute('[data-lang="vi"]', "aria-pressed"), "true");
  assert.equal(await page.getAttribute("#name-input", "placeholder"), "Tên của bạn");
  // A shipped level's description is translated; a level the catalogue does not know keeps the
  // server's words.
  await page.selectOption("#seat-o", "bot:beginner");
  assert.equal(await text(page, "#seat-help"), "O, beginner: Mới học chơi: bỏ sót nhiều.");
  await page.selectOption("#seat-o", "bot:quick");
  assert.equal(await text(page, "#seat-help"), "O, quick: A quick full search for tests.");
  assert.equal(await page.$eval("#seat-o", (s) => s.selectedOptions[0].textContent), "Máy: quick");

  // A server error, translated by its code (a room's link would first ask this new browser for
  // a name: a spectator's link does not).
  await page.goto(`${server.base}/#/watch/doesnotexist`);
  await page.waitForSelector("#toast:not([hidden])");
  assert.equal(await text(page, "#toast"), "Không có phòng này: có thể phòng đã đóng.");
  await page.waitForFunction(() => location.hash === "#/");
  // A code this client does not know (a newer server's) shows the server's English message.
  const unknown = await page.evaluate(async () => (await import("/i18n.js")).errorText({ code: "brand_new", message: "as the server said" }));
  assert.equal(unknown, "as the server said");

  // A game against a bot.
  await page.selectOption("#rule", "caro");
  assert.match(await text(page, "#rule-help"), /chặn cả hai đầu/);
  await page.selectOption("#seat-x", "me");
  await page.selectOption("#seat-o", "bot:quick");
  await page.click('#create-form button[type="submit"]');
  await page.waitForFunction(() => location.hash.startsWith("#/room/"));
  await turnIs(page, "Lượt của bạn");
  assert.equal(await text(page, "#resign"), "Đầu hàng");
  assert.equal(await text(page, "#room-rule"), "Cờ caro 15x15, chặn hai đầu");
  assert.match(await text(page, "#spectators"), /^0 người xem$/);
  assert.match(await text(page, '.player[data-seat="o"] .pname'), /^quick \(máy\)$/);
  await page.click('#board button.cell[data-x="7"][data-y="7"]');
  await page.waitForFunction(() => window.caroArena.state.room.moves.length === 2);
  await turnIs(page, "Lượt của bạn");
  assert.equal(await page.getAttribute('#move-list .mv[data-ply="1"]', "aria-label"), "nước 1, X h8");
  // A refused move: the server's `occupied`, worded with the board's cell names.
  await page.evaluate(() => window.caroArena.play(7, 7));
  await page.waitForFunction(() => document.querySelector("#toast").textContent.startsWith("Ô h8"));
  assert.equal(await text(page, "#toast"), "Ô h8 đã có quân: hãy chọn ô trống.");
  await screenshot(page, "vietnamese");

  // The switch: English at once (the page is drawn again; the seat is kept), and after a reload.
  await Promise.all([page.waitForNavigation(), page.click('[data-lang="en"]')]);
  await page.waitForSelector('#conn[data-state="online"]');
  await turnIs(page, "Your move");
  assert.equal(await page.getAttribute("html", "lang"), "en");
  assert.equal(await text(page, "#resign"), "Resign");
  assert.equal(await text(page, "#room-rule"), "Caro 15x15, caro");
  assert.equal(await page.evaluate(() => localStorage.getItem("caro-arena.lang")), "en");
  await page.reload();
  await page.waitForSelector('#conn[data-state="online"]');
  await turnIs(page, "Your move");
  assert.equal(await page.getAttribute("html", "lang"), "en");
  assert.equal(await page.getAttribute('[data-lang="en"]', "aria-pressed"), "true");
  await page.goto(server.base + "/#/");
  await page.waitForFunction(() => document.querySelector("#create-h").textContent === "New game");
  await context.close();
});

test("an English browser gets the page in English", async () => {
  const { context, page } = await open("en-US");
  assert.equal(await page.getAttribute("html", "lang"), "en");
  assert.equal(await text(page, "#create-h"), "New game");
  assert.equal(await text(page, "#conn"), "online");
  assert.equal(await page.$eval('#rule option[value="caro"]', (o) => o.textContent), "Caro (Vietnamese)");
  await page.selectOption("#seat-o", "bot:beginner");
  assert.equal(await text(page, "#seat-help"), "O, beginner: Learning the game: misses a lot.");
  assert.equal(await page.getAttribute('[data-lang="en"]', "aria-pressed"), "true");
  await context.close();
});
