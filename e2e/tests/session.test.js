// End-to-end tests of the game session around the board (issue 17): the chat's two channels,
// draw offers and takebacks, rematches followed by a spectator, and quick pairing from the lobby
// (client/chat.js, offers.js, seek.js). Real Chromium, the real server binary; several people
// are several browser contexts.

import { test } from "node:test";
import assert from "node:assert/strict";
import { testEnv, createRoom, screenshot } from "./harness.js";
import { testConfig } from "./config.js";

const env = testEnv(testConfig);
const newPlayer = env.newPlayer;
const seatedPair = env.seatedPair;
const cell = (x, y) => `#board button.cell[data-x="${x}"][data-y="${y}"]`;
const moveCount = (page) => page.evaluate(() => window.caroArena.state.room?.moves.length ?? -1);
const roomOf = (page) => page.evaluate(() => window.caroArena.state.room?.room_id);

async function watcher(name, roomId) {
  const w = await newPlayer(name);
  await w.page.goto(`${env.server.base}/#/watch/${roomId}`);
  await w.page.waitForFunction(() => window.caroArena.state.you?.role === "spectator");
  return w;
}

// Plays [x, y] as a click by whoever is to move, and waits until every page has it (a bot may
// have replied by then: at least that many moves).
async function play(pages, mover, [x, y]) {
  const n = await moveCount(mover);
  await mover.waitForFunction(() => document.querySelector("#turn").textContent === "Your move");
  await mover.click(cell(x, y));
  for (const p of pages) await p.waitForFunction((n) => window.caroArena.state.room.moves.length >= n, n + 1);
}

const chatTexts = (page) => page.$$eval("#chat-lines .chat-line", (lis) => lis.map((li) => li.textContent));
async function say(page, text) {
  await page.fill("#chat-input", text);
  await page.click('#chat-form button[type="submit"]');
}
const waitLine = (page, line) =>
  page.waitForFunction((line) => [...document.querySelectorAll("#chat-lines .chat-line")].some((li) => li.textContent === line), line);
const waitOffer = (page, text) => page.waitForFunction((t) => document.querySelector("#offer-text").textContent === t, text);
const waitTurn = (page, text) => page.waitForFunction((t) => document.querySelector("#turn").textContent === t, text);
const close = async (...people) => {
  for (const p of people) await p.context.close();
};

test("chat: players talk in their channel, spectators in theirs, unseen by the players until the game ends", async () => {
  const { a, b, roomId } = await seatedPair("Ann", "Bob");
  const c = await watcher("Cid", roomId);
  const d = await watcher("Dee", roomId);
  try {
    await say(a.page, "gl hf");
    // Everyone in the room reads the players' channel; the players see it unlabelled, the
    // spectators (who read both) see each line's channel.
    await waitLine(b.page, "Ann (X): gl hf");
    await waitLine(c.page, "[players] Ann (X): gl hf");
    await say(b.page, "you too");
    await waitLine(a.page, "Bob (O): you too");
    await waitLine(d.page, "[players] Bob (O): you too");
    assert.equal(await a.page.inputValue("#chat-input"), "");

    // A spectator's line: the other spectator reads it, the players do not. Bob's next line is
    // sent after the room handled Cid's, so once the players have Bob's line they would have
    // had Cid's before it.
    await say(c.page, "nice opening");
    await waitLine(d.page, "[spectators] Cid: nice opening");
    await say(b.page, "thinking");
    await waitLine(a.page, "Bob (O): thinking");
    await waitLine(b.page, "Bob (O): thinking");
    for (const p of [a.page, b.page]) assert.deepEqual(await chatTexts(p), ["Ann (X): gl hf", "Bob (O): you too", "Bob (O): thinking"]);
    await screenshot(d.page, "chat");

    // The server's limit: a line over 280 characters is refused with a readable message (the
    // input itself stops at 280; this test lifts that to reach the server's check).
    assert.equal(await a.page.getAttribute("#chat-input", "maxlength"), "280");
    await a.page.evaluate(() => document.querySelector("#chat-input").removeAttribute("maxlength"));
    await say(a.page, "y".repeat(281));
    await a.page.waitForFunction(() => document.querySelector("#toast").textContent.startsWith("That message is too long"));

    // The game ends: the players now read the spectators' channel too, labelled.
    a.page.once("dialog", (dlg) => dlg.accept());
    await a.page.click("#resign");
    await waitTurn(b.page, "O wins by resignation: well played!");
    await say(d.page, "gg");
    await waitLine(a.page, "[spectators] Dee: gg");
    await waitLine(b.page, "[spectators] Dee: gg");
    await waitLine(b.page, "[players] Ann (X): gl hf");

    // Hiding the chat is remembered by the browser.
    await b.page.check("#chat-hide");
    assert.ok(await b.page.$eval("#chat-body", (e) => e.hidden));
    await b.page.reload();
    await b.page.waitForFunction(() => window.caroArena.state.room?.status === "finished");
    assert.ok(await b.page.$eval("#chat-hide", (e) => e.checked));
    assert.ok(await b.page.$eval("#chat-body", (e) => e.hidden));
    // The snapshot after the game has both channels' lines.
    await b.page.uncheck("#chat-hide");
    await waitLine(b.page, "[spectators] Cid: nice opening");
  } finally {
    await close(a, b, c, d);
  }
});

test('a draw offer declined, then one accepted: a draw by agreement', async () => {
  const { a, b } = await seatedPair("Ana", "Ben");
  try {
    await play([a.page, b.page], a.page, [7, 7]);
    assert.ok(await a.page.isVisible("#offer-draw"));
    await a.page.click("#offer-draw");
    await waitOffer(a.page, "You offered a draw.");
    await waitOffer(b.page, "Your opponent offers a draw.");
    await screenshot(b.page, "draw-offer");
    await b.page.click("#offer-decline");
    await waitOffer(a.page, "The draw offer was declined.");
    await waitOffer(b.page, "The draw offer was declined.");
    assert.ok(!(await a.page.isVisible("#offer-accept")));

    await b.page.click("#offer-draw");
    await waitOffer(a.page, "Your opponent offers a draw.");
    await a.page.click("#offer-accept");
    for (const p of [a.page, b.page]) {
      await waitTurn(p, "Draw (agreed)");
      await waitOffer(p, "The draw offer was accepted.");
      // The game is over: no more draw or takeback, a rematch instead.
      assert.ok(!(await p.isVisible("#offer-draw")));
      assert.ok(await p.isVisible("#offer-rematch"));
    }
  } finally {
    await close(a, b);
  }
});

test("a takeback by agreement removes the stone from both boards and the move list", async () => {
  const { a, b } = await seatedPair("Amy", "Bea");
  const pages = [a.page, b.page];
  try {
    await play(pages, a.page, [7, 7]);
    await play(pages, b.page, [8, 8]);
    await play(pages, a.page, [6, 6]);
    // Ann asks to take back her last move (Bob has not replied yet: only it goes).
    await a.page.click("#offer-takeback");
    await waitOffer(b.page, "Your opponent asks to take back a move.");
    await b.page.click("#offer-accept");
    for (const p of pages) {
      await p.waitForFunction(() => window.caroArena.state.room.moves.length === 2);
      assert.ok(!(await p.$eval(cell(6, 6), (e) => e.className.includes("has-"))));
      assert.ok(await p.$eval(cell(8, 8), (e) => e.classList.contains("has-o")));
      assert.equal(await p.$$eval("#move-list .mv", (bs) => bs.length), 2);
      await waitOffer(p, "The move was taken back.");
    }
    await waitTurn(a.page, "Your move");
    // The game goes on from there, and looking back stays within the moves left.
    await play(pages, a.page, [5, 5]);
    // A takeback request that the opponent answers with a move lapses.
    await a.page.click("#offer-takeback");
    await waitOffer(b.page, "Your opponent asks to take back a move.");
    await play(pages, b.page, [9, 9]);
    for (const p of pages) await waitOffer(p, "The takeback request lapsed.");
    assert.equal(await moveCount(a.page), 4);
    await b.page.click('#move-list .mv[data-ply="2"]');
    assert.equal(await b.page.textContent("#viewing-text"), "Viewing move 2 of 4");
  } finally {
    await close(a, b);
  }
});

test("under a clock a takeback gives the turn and the running clock back to the asker", async () => {
  const a = await newPlayer("Alf");
  const roomId = await createRoom(a.page, { clock: "fischer:300000:3000" });
  const b = await newPlayer("Bix");
  const pages = [a.page, b.page];
  try {
    await b.page.goto(`${env.server.base}/#/room/${roomId}`);
    await a.page.waitForFunction(() => window.caroArena.state.room?.status === "playing");
    await play(pages, a.page, [7, 7]);
    await play(pages, b.page, [8, 8]);
    await play(pages, a.page, [6, 6]);
    for (const p of pages) await p.waitForSelector('[data-clock="o"].running');
    await a.page.click("#offer-takeback");
    await waitOffer(b.page, "Your opponent asks to take back a move.");
    await b.page.click("#offer-accept");
    for (const p of pages) {
      await p.waitForSelector('[data-clock="x"].running');
      assert.ok(!(await p.$eval('[data-clock="o"]', (e) => e.classList.contains("running"))));
      assert.equal(await moveCount(p), 2);
    }
    await waitTurn(a.page, "Your move");
  } finally {
    await close(a, b);
  }
});

test("against a bot a takeback is granted in a casual game only", async () => {
  const a = await newPlayer("Abe");
  try {
    await createRoom(a.page, { o: "bot:quick" });
    await play([a.page], a.page, [7, 7]);
    await a.page.waitForFunction(() => window.caroArena.state.room.moves.length === 2);
    await a.page.click("#offer-takeback");
    await a.page.waitForFunction(() => document.querySelector("#toast").textContent.includes("casual games only"));
    assert.equal(await moveCount(a.page), 2);

    a.page.once("dialog", (dlg) => dlg.accept());
    await a.page.click("#leave");
    await a.page.waitForSelector("#lobby:not([hidden])");
    await createRoom(a.page, { o: "bot:quick", casual: true });
    assert.equal(await a.page.evaluate(() => window.caroArena.state.room.casual), true);
    await play([a.page], a.page, [7, 7]);
    await a.page.waitForFunction(() => window.caroArena.state.room.moves.length === 2);
    await waitTurn(a.page, "Your move");
    await a.page.click("#offer-takeback");
    // The bot grants it at once: its reply and our move go.
    await a.page.waitForFunction(() => window.caroArena.state.room.moves.length === 0);
    assert.equal(await a.page.$$eval("#board .cell.has-x, #board .cell.has-o", (cs) => cs.length), 0);
    assert.equal(await a.page.$$eval("#move-list .mv", (bs) => bs.length), 0);
    await waitTurn(a.page, "Your move");
  } finally {
    await close(a);
  }
});

test("a rematch swaps the colours, and the spectator follows to the new room", async () => {
  const { a, b, roomId } = await seatedPair("Avi", "Bo");
  const c = await watcher("Cy", roomId);
  try {
    a.page.once("dialog", (dlg) => dlg.accept());
    await a.page.click("#resign");
    await waitTurn(a.page, "O wins by resignation");
    assert.ok(!(await c.page.isVisible("#offer-rematch")));
    await a.page.click("#offer-rematch");
    await waitOffer(b.page, "Your opponent offers a rematch.");
    await waitOffer(c.page, "X offers a rematch.");
    await b.page.click("#offer-accept");
    for (const p of [a.page, b.page, c.page]) {
      await p.waitForFunction((old) => {
        const r = window.caroArena.state.room;
        return r && r.room_id !== old && r.status === "playing";
      }, roomId);
    }
    const newId = await roomOf(a.page);
    assert.equal(await roomOf(b.page), newId);
    assert.equal(await roomOf(c.page), newId);
    assert.equal(await a.page.evaluate(() => location.hash), `#/room/${newId}`);
    assert.equal(await b.page.evaluate(() => location.hash), `#/room/${newId}`);
    assert.equal(await c.page.evaluate(() => location.hash), `#/watch/${newId}`);
    assert.deepEqual(await a.page.evaluate(() => window.caroArena.state.you), { role: "player", seat: "o" });
    assert.deepEqual(await b.page.evaluate(() => window.caroArena.state.you), { role: "player", seat: "x" });
    assert.equal(await c.page.evaluate(() => window.caroArena.state.you.role), "spectator");
    // Bob is X now and moves first; everyone sees it.
    await play([a.page, b.page, c.page], b.page, [7, 7]);
  } finally {
    await close(a, b, c);
  }
});

// The page's seek list: [name, terms] of each open seek.
const seekList = (page) => page.$$eval("#seeks li.seek", (lis) => lis.map((li) => li.querySelector(".room-title").textContent));

test("quick pairing: two seeks with the same terms meet, a seek is taken from the list, one is cancelled, one falls back to a bot", async () => {
  const a = await newPlayer("Ada");
  const b = await newPlayer("Bao");
  const c = await newPlayer("Cam");
  const d = await newPlayer("Dan");
  try {
    // Ada seeks; everyone in the lobby sees her seek, she sees she is waiting.
    await a.page.click('#seek-form button[type="submit"]');
    await a.page.waitForSelector("#seek-status:not([hidden])");
    await b.page.waitForFunction(() => document.querySelectorAll("#seeks li.seek").length === 1);
    assert.deepEqual(await seekList(b.page), ["Ada"]);
    assert.match(await b.page.textContent("#seeks li.seek .room-meta"), /^Caro 15x15, freestyle$/);
    await screenshot(b.page, "seeks");

    // Bao seeks the same terms: both land in the same room, with opposite colours.
    await b.page.click('#seek-form button[type="submit"]');
    for (const p of [a.page, b.page]) await p.waitForFunction(() => window.caroArena.state.room?.status === "playing");
    assert.equal(await roomOf(a.page), await roomOf(b.page));
    const seats = [await a.page.evaluate(() => window.caroArena.state.you.seat), await b.page.evaluate(() => window.caroArena.state.you.seat)];
    assert.deepEqual(seats.sort(), ["o", "x"]);

    // Cam seeks tic-tac-toe; Dan takes it from the list.
    await c.page.check('#seek-form input[name="seek_game"][value="tictactoe"]');
    await c.page.click('#seek-form button[type="submit"]');
    await d.page.waitForFunction(() => document.querySelector("#seeks li.seek .room-meta")?.textContent === "Tic-tac-toe 3x3");
    await d.page.click("#seeks li.seek button");
    for (const p of [c.page, d.page]) await p.waitForFunction(() => window.caroArena.state.room?.status === "playing");
    assert.equal(await roomOf(c.page), await roomOf(d.page));
    assert.equal(await c.page.evaluate(() => window.caroArena.state.room.game), "tictactoe");
    await close(c, d);

    // A seek cancelled leaves the list; a seek with a bot behind it gets the bot.
    const e = await newPlayer("Eve");
    const f = await newPlayer("Fay");
    try {
      await e.page.click('#seek-form button[type="submit"]');
      await f.page.waitForFunction(() => document.querySelectorAll("#seeks li.seek").length === 1);
      await e.page.click("#seek-cancel");
      await e.page.waitForSelector("#seek-status[hidden]", { state: "attached" });
      await f.page.waitForFunction(() => document.querySelectorAll("#seeks li.seek").length === 0);
      // Leaving the lobby withdraws a seek too.
      await e.page.click('#seek-form button[type="submit"]');
      await f.page.waitForFunction(() => document.querySelectorAll("#seeks li.seek").length === 1);
      await e.page.evaluate(() => (location.hash = "#/games"));
      await e.page.waitForSelector("#games:not([hidden])");
      await f.page.waitForFunction(() => document.querySelectorAll("#seeks li.seek").length === 0);

      await f.page.selectOption("#seek-bot", "quick");
      await f.page.fill("#seek-bot-after", "1");
      await f.page.click('#seek-form button[type="submit"]');
      await f.page.waitForFunction(() => document.querySelector("#seek-status-text").textContent.includes("quick plays you after 1 s"));
      await f.page.waitForFunction(() => window.caroArena.state.room?.status === "playing", null, { timeout: 15000 });
      const players = await f.page.evaluate(() => window.caroArena.state.room.players);
      const you = await f.page.evaluate(() => window.caroArena.state.you.seat);
      assert.equal(players[you].name, "Fay");
      assert.equal(players[you === "x" ? "o" : "x"].kind, "bot");
    } finally {
      await close(e, f);
    }
  } finally {
    await close(a, b);
  }
});

test("the new panels read in Vietnamese from the catalogue", async () => {
  const context = await env.browser.newContext({ viewport: { width: 1200, height: 860 }, locale: "vi-VN" });
  try {
    const page = await context.newPage();
    await page.goto(env.server.base + "/");
    await page.waitForSelector('#conn[data-state="online"]');
    assert.equal(await page.textContent("#seek-h"), "Chơi với bất kỳ ai");
    assert.equal(await page.textContent('#seek-form button[type="submit"]'), "Tìm đối thủ");
    assert.equal(await page.textContent("#seeks li.empty"), "Chưa ai đang tìm ván.");
    assert.equal(await page.textContent("#offer-draw"), "Xin hòa");
    assert.equal(await page.getAttribute("#chat-input", "placeholder"), "Nhắn cho đối thủ…");
  } finally {
    await context.close();
  }
});
