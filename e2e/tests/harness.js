// Starts the real server binary on a free port with a test config, and headless Chromium
// driven by playwright-core. Test tools cannot download browsers here, so Chromium is Debian's
// (/usr/bin/chromium, installed by .ci/run) or whatever CHROMIUM names.

import { before, after } from "node:test";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, "..", "..");
// Screenshots go outside the tree, so a test run leaves it clean; `CARO_SCREENSHOTS=docs/screenshots
// npm test` (a path relative to the repository, or absolute) refreshes the README's pictures.
export const screenshots = process.env.CARO_SCREENSHOTS
  ? resolve(root, process.env.CARO_SCREENSHOTS)
  : mkdtempSync(join(tmpdir(), "caro-screenshots-"));

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

async function waitHealthy(base, child, ms = 20000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${base}/healthz`);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("server did not become healthy");
}

export async function startServer(configText) {
  const bin = process.env.CARO_ARENA_BIN || join(root, "target", "debug", "caro-arena");
  const dir = mkdtempSync(join(tmpdir(), "caro-e2e-"));
  const config = join(dir, "config.toml");
  // Each server gets its own game database in its temp dir (the harness owns [store]).
  const db = join(dir, "games.db");
  writeFileSync(config, `${configText}\n[store]\npath = ${JSON.stringify(db)}\n`);
  const port = await freePort();
  const child = spawn(bin, ["--config", config, "--bind", `127.0.0.1:${port}`], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG || "warn" },
  });
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base, child);
  return {
    base,
    dir,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export async function screenshot(page, name) {
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, `${name}.png`) });
}

// A person in their own browser context: opens the page, waits to be online, and takes `name`
// (a changed name is sent with a fresh hello on a new connection).
export async function newPlayer(browser, base, name) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 860 }, locale: "en-US" });
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error(`[${name}] page error:`, e));
  await page.goto(base + "/");
  await page.waitForSelector('#conn[data-state="online"]');
  await page.fill("#name-input", name);
  await page.dispatchEvent("#name-input", "change");
  await page.waitForFunction((n) => window.caroArena.conn.welcome?.name === n, name);
  return { context, page };
}

// The server (started with `configText`) and the browser that one test file's tests share,
// started before them and stopped after them: `env.server`, `env.browser`, and
// `env.newPlayer(name)`.
export function testEnv(configText) {
  const env = { server: null, browser: null };
  before(async () => {
    env.server = await startServer(configText);
    env.browser = await launchBrowser();
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.stop();
  });
  env.newPlayer = (name) => newPlayer(env.browser, env.server.base, name);
  // Two players seated in a new 15x15 freestyle room: {a (X), b (O), roomId}.
  env.seatedPair = async (nameA, nameB) => {
    const a = await env.newPlayer(nameA);
    const roomId = await createRoom(a.page);
    const b = await env.newPlayer(nameB);
    await b.page.goto(`${env.server.base}/#/room/${roomId}`);
    await b.page.waitForFunction(() => window.caroArena.state.you?.seat === "o");
    await a.page.waitForFunction(() => window.caroArena.state.room?.status === "playing");
    return { a, b, roomId };
  };
  return env;
}

// Creates a room from the lobby's form and waits for its board; returns the room id. The
// defaults are the form's own: 15x15 Caro, freestyle, me against an open seat, not casual, no
// clock.
export async function createRoom(
  page,
  { game = "caro", size = "15", rule = "freestyle", x = "me", o = "open", casual = false, clock = "none" } = {},
) {
  await page.check(`#create-form input[name="game"][value="${game}"]`);
  if (game === "caro") {
    await page.selectOption("#size", size);
    await page.selectOption("#rule", rule);
  }
  await page.selectOption("#seat-x", x);
  await page.selectOption("#seat-o", o);
  await page.setChecked("#casual", casual);
  await page.selectOption("#time-control", clock);
  await page.click('#create-form button[type="submit"]');
  await page.waitForFunction(() => location.hash.startsWith("#/room/"));
  await page.waitForSelector("#board button.cell");
  return page.evaluate(() => location.hash.split("/")[2]);
}
