// The engine's review of a finished game in the browser (issue 18, docs/analysis.md): two
// people play a game in which O ignores X's four, the end screen's "Analyse" opens the replay
// and asks for the analysis, the graph has one point per position with the blunder marked at
// O's move (and in the move list), the engine's best move there is the winning cell and, one
// position earlier, the blocking one; a spectator who opens the finished game later sees the same
// stored analysis. A second server, whose analyses never end, shows the progress and the
// per-player limit's refusal by its code, in English and in Vietnamese.

import { test } from "node:test";
import assert from "node:assert/strict";
import { testEnv, startServer, newPlayer, createRoom, screenshot } from "./harness.js";
import { testConfig } from "./config.js";

// Enough budget for the mistake and blunder marks to mean something (docs/analysis.md: at a
// few thousand nodes nearly every move reads as a mistake), still quick for a 9-move game.
const env = testEnv(`${testConfig}
[analysis]
nodes_per_position = 50000
`);

const cell = (board, x, y) => `${board} button.cell[data-x="${x}"][data-y="${y}"]`;

// X builds a four on row 8 (y = 7) whose left end O closed at once; O's 4th move (ply 8, h9)
// ignores it and X makes five at l8 (11, 7). The game of tests/analysis.rs.
const IGNORED_FOUR = [[7, 7], [6, 7], [8, 7], [8, 8], [9, 7], [9, 8], [10, 7], [7, 8], [11, 7]];

// The review as the page shows it: each graph point's ply and mark, the move list's marks.
async function review(page) {
  return page.evaluate(() => ({
    points: [...document.querySelectorAll("#review-graph .pt")].map((g) => Number(g.dataset.ply)),
    blunders: [...document.querySelectorAll("#review-graph .pt-blunder")].map((g) => Number(g.dataset.ply)),
    listed: [...document.querySelectorAll("#rp-moves .mv[data-judgement]")].map((b) => [Number(b.dataset.ply), b.dataset.judgement, b.textContent]),
  }));
}

async function bestCells(page) {
  return page.$$eval("#rp-board button.cell.best", (cs) => cs.map((c) => [Number(c.dataset.x), Number(c.dataset.y)]));
}

test("the review graph marks the ignored four as a blunder, with the engine's move, for players and spectators", async () => {
  const { a, b, roomId } = await env.seatedPair("Ann", "Bob");
  for (const [i, [x, y]] of IGNORED_FOUR.entries()) {
    const mover = i % 2 === 0 ? a.page : b.page;
    await mover.waitForSelector(`${cell("#board", x, y)}[aria-disabled="false"]`);
    await mover.click(cell("#board", x, y));
    await a.page.waitForFunction((n) => window.caroArena.state.room.moves.length === n, i + 1);
  }
  await a.page.waitForFunction(() => window.caroArena.state.room.status === "finished");

  // The end screen's "Analyse": the replay, asking for the analysis, then its graph.
  const p = a.page;
  await p.click("#analyse-btn");
  await p.waitForFunction((id) => location.hash === `#/replay/${id}/analyse`, roomId);
  await p.waitForSelector("#review-graph .pt", { timeout: 60000 });
  const seen = await review(p);
  assert.deepEqual(seen.points, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], "one point per position");
  assert.deepEqual(seen.blunders, [8], "O's move that ignores the four");
  assert.ok(
    seen.listed.some(([ply, j, text]) => ply === 8 && j === "blunder" && text === "h9??"),
    `the move list marks h9: ${JSON.stringify(seen.listed)}`,
  );
  assert.match(await p.textContent("#review-status"), /^Analysed at 50000 nodes a position: \d+ mistakes, \d+ blunders\.$/);
  assert.match(await p.getAttribute("#review-graph .pt-blunder", "aria-label"), /^Move 8, O at h9: X wins in 1\. Blunder\.$/);

  // A click on the blunder's point: the position after it, X's winning move ringed and named.
  await p.click('#review-graph .pt[data-ply="8"]');
  assert.equal(await p.textContent("#rp-pos"), "Move 8 / 9");
  assert.deepEqual(await bestCells(p), [[11, 7]]);
  assert.equal(await p.textContent("#review-best"), "l8");
  assert.equal(await p.textContent("#review-score"), "X wins in 1");
  assert.equal(await p.textContent("#review-note"), "Move 8, O at h9: Blunder. The engine would have played l8.");
  assert.ok(await p.$eval('#review-graph .pt[data-ply="8"]', (g) => g.classList.contains("current")));
  await screenshot(p, "review");
  // One position earlier (the keyboard on the graph): O to move, the engine blocks at l8.
  await p.focus('#review-graph .pt[data-ply="7"]');
  await p.keyboard.press("Enter");
  assert.equal(await p.textContent("#rp-pos"), "Move 7 / 9");
  assert.deepEqual(await bestCells(p), [[11, 7]]);
  // The empty board is a point too; the last position (won on the board) has no move.
  await p.click('#review-graph .pt[data-ply="9"]');
  assert.deepEqual(await bestCells(p), []);
  assert.equal(await p.textContent("#review-best"), "–");

  // A spectator of the finished game: the same stored analysis, from the room's end screen.
  const cat = await env.newPlayer("Cat");
  await cat.page.goto(`${env.server.base}/#/watch/${roomId}`);
  await cat.page.waitForSelector("#analyse-btn:not([hidden])");
  await cat.page.click("#analyse-btn");
  await cat.page.waitForSelector("#review-graph .pt");
  assert.deepEqual(await review(cat.page), seen);
  await cat.page.click('#rp-moves .mv[data-ply="8"]');
  assert.deepEqual(await bestCells(cat.page), [[11, 7]]);

  // And anyone opening the replay from the lobby sees it without asking.
  await b.page.goto(`${env.server.base}/#/replay/${roomId}`);
  await b.page.waitForSelector("#review-graph .pt");
  assert.deepEqual((await review(b.page)).blunders, [8]);
  assert.ok(await b.page.$eval("#review-start", (el) => el.hidden));
  for (const who of [a, b, cat]) await who.context.close();
});

// A finished Caro game against a bot: X plays the centre, the bot answers, X resigns. Returns its
// id. (Its positions after a stone are far from solved at any budget; the empty board has one
// candidate and tic-tac-toe is solved in a few hundred nodes, so neither would keep an analysis
// running.)
async function resignedGame(page) {
  await createRoom(page, { o: "bot:quick" });
  await page.waitForFunction(() => window.caroArena.state.room?.status === "playing");
  const id = await page.evaluate(() => window.caroArena.state.room.room_id);
  await page.click(cell("#board", 7, 7));
  await page.waitForFunction(() => window.caroArena.state.room.moves.length === 2);
  page.once("dialog", (d) => d.accept());
  await page.click("#resign");
  await page.waitForFunction(() => window.caroArena.state.room?.status === "finished");
  return id;
}

test("a running analysis shows its progress and the per-player limit is shown by its code, in both languages", async () => {
  // A budget no test waits for: the first analysis is still running when the second is asked.
  const server = await startServer(`${testConfig}
[analysis]
nodes_per_position = 100000000
per_player = 1
max_queued = 2
`);
  try {
    const { context, page } = await newPlayer(env.browser, server.base, "Dan");
    const first = await resignedGame(page);
    await page.goto(`${server.base}/#/`);
    const second = await resignedGame(page);

    await page.goto(`${server.base}/#/replay/${first}`);
    await page.waitForSelector("#review-start:not([hidden])");
    assert.equal(await page.textContent("#review-status"), "This game has not been analysed yet.");
    await page.click("#review-start");
    await page.waitForSelector("#review-progress:not([hidden])");
    // Waiting for a free search slot, or searching: either way three positions, not all done.
    assert.match(
      await page.textContent("#review-status"),
      /^(Waiting for the engine: analyses run only when no live game needs it \(0 \/ 3 positions\)|Analysing: [12] \/ 3 positions)\.$/,
    );
    assert.equal(await page.getAttribute("#review-progress", "max"), "3");
    assert.ok(await page.$eval("#review-graph", (el) => el.hasAttribute("hidden")));

    await page.goto(`${server.base}/#/replay/${second}/analyse`);
    await page.waitForFunction(() => document.querySelector("#review-error").textContent !== "");
    assert.equal(await page.getAttribute("#review-error", "data-code"), "too_many_analyses");
    assert.equal(
      await page.textContent("#review-error"),
      "You already have as many analyses running as allowed: wait for one to finish.",
    );
    await context.close();

    const vi = await env.browser.newContext({ locale: "vi-VN" });
    const vp = await vi.newPage();
    await vp.goto(`${server.base}/#/replay/${second}`);
    await vp.waitForSelector("#review-start:not([hidden])");
    await vp.click("#review-start");
    await vp.waitForFunction(() => document.querySelector("#review-error").textContent !== "");
    assert.equal(await vp.textContent("#review-error"), "Bạn đã có đủ số bản phân tích được phép đang chạy: hãy chờ một bản xong.");
    await vi.close();
  } finally {
    await server.stop();
  }
});
