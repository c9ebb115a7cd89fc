// The browser tests' harness: a redis-server and an `oversold serve` of the test's own, one
// Chromium page, and the small helpers every test file uses. Each *.test.js file calls
// `setUp()` in `before` and `tearDown()` in `after`.
//
//   scripts/frontend.sh --browser      # build dist/, install chromium and playwright-core
//   cargo build -p oversold            # the server the test spawns
//   (cd e2e && npm test)
//
// Env: OVERSOLD_BIN (default target/debug/oversold), CHROMIUM (default /usr/bin/chromium).
// The test starts its own redis-server on a free port (so it may pause it) and its own server.
// Screenshots land in e2e/screenshots/ (gitignored).
//
// Every test starts from a fresh page load (the page keeps its history client-side, so a
// reload is a clean slate) and sets the knobs it needs: no test relies on another's run.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const serverBin = path.resolve(root, process.env.OVERSOLD_BIN ?? 'target/debug/oversold');
const shots = path.join(here, 'screenshots');
export const WIDE = { width: 1440, height: 900 };
export const NARROW = { width: 390, height: 844 };
export { shots };

/** What the tests share: the server (`{ child, url, log }`), the Redis (`{ child, port, dir }`)
 *  and the lab.page. Tests read `lab.page` and `lab.server`; `restartServer` replaces the server. */
export const lab = { server: null, redis: null, context: null, page: null, userDataDir: null };

/** A port the OS hands out now. */
function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A redis-server of the test's own: no persistence, loopback only, killed at the end. */
async function startRedis() {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'oversold-e2e-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 100; i += 1) {
    try {
      if (redisCli(port, 'PING') === 'PONG') return { child, port, dir };
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('redis-server did not answer within 5 s');
}

/** One redis-cli command against the test's Redis; returns its trimmed output. */
export function redisCli(port, ...args) {
  return execFileSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).trim();
}

/** Spawn `oversold serve` on `addr` (a free port by default); resolve once it prints its
 *  listening line. */
export function startServer(addr = '127.0.0.1:0', extra = []) {
  const args = ['serve', '--addr', addr, '--assets', path.join(root, 'dist'), '--redis-url', `redis://127.0.0.1:${lab.redis.port}`, ...extra];
  const child = spawn(serverBin, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = [];
  child.stderr.on('data', (chunk) => log.push(chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not print its listening line within 30 s\n${log.join('')}`));
    }, 30_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`could not start ${serverBin}: ${err.message}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited early with code ${code}\n${log.join('')}`));
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = line.match(/^oversold listening on (http:\/\/\S+)$/);
      if (m) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ child, url: m[1], log });
      }
    });
  });
}

/** A browser of its own (its own storage), as a phone or a second machine in the room has. */
export function otherBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
}

/** `serverArgs`: flags for `oversold serve` beyond the harness's own (e.g. `--max-buyers`). */
export async function setUp({ serverArgs = [] } = {}) {
  mkdirSync(shots, { recursive: true });
  lab.redis = await startRedis();
  lab.server = await startServer('127.0.0.1:0', serverArgs);
  lab.userDataDir = mkdtempSync(path.join(tmpdir(), 'oversold-chromium-'));
  lab.context = await chromium.launchPersistentContext(lab.userDataDir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    viewport: WIDE,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  lab.page = lab.context.pages()[0] ?? (await lab.context.newPage());
  lab.page.on('pageerror', (err) => console.error('page error:', err.message));
}

export async function tearDown() {
  // Runs on failure too: never leave a server or a browser behind.
  await lab.context?.close().catch(() => {});
  const server = lab.server;
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGTERM');
    const exited = new Promise((r) => server.child.once('exit', r));
    const timeout = new Promise((r) => setTimeout(r, 5_000));
    await Promise.race([exited, timeout]);
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  }
  if (lab.userDataDir) rmSync(lab.userDataDir, { recursive: true, force: true });
  if (lab.redis) {
    lab.redis.child.kill('SIGKILL');
    rmSync(lab.redis.dir, { recursive: true, force: true });
  }
}

/** Stop the server (SIGTERM, or SIGKILL when `kill`) and start another on the same port with
 *  `extra` flags. */
export async function restartServer(extra = [], { kill = false } = {}) {
  const port = new URL(lab.server.url).port;
  const exited = new Promise((r) => lab.server.child.once('exit', r));
  lab.server.child.kill(kill ? 'SIGKILL' : 'SIGTERM');
  await exited;
  lab.server = await startServer(`127.0.0.1:${port}`, extra);
}

/** Load the page afresh (a clean slate) at `viewport`, and wait for the server's hello. */
export async function fresh(viewport = WIDE) {
  await lab.page.setViewportSize(viewport);
  await lab.page.goto(lab.server.url);
  await lab.page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor({ timeout: 20_000 });
  // The featured buttons replace their placeholders once hello has arrived.
  await lab.page.waitForFunction(() => document.querySelectorAll('button.run.primary:not([disabled])').length >= 2);
}

/** The server's hello, read over a WebSocket of the page's own origin. */
export async function hello() {
  return lab.page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const ws = new WebSocket(`ws://${location.host}/ws`);
        ws.onmessage = (ev) => {
          resolve(JSON.parse(ev.data));
          ws.close();
        };
        ws.onerror = () => reject(new Error('websocket failed'));
      }),
  );
}

/** Set knob inputs, e.g. `{ 'buyers-input': 200 }`. */
export async function knobs(values) {
  for (const [id, value] of Object.entries(values)) {
    await byTestId(id).fill(String(value));
    assert.equal(await byTestId(id).inputValue(), String(value));
  }
}

export const byTestId = (id) => lab.page.getByTestId(id);

/** The bare number inside a test hook. */
export async function num(id) {
  const text = (await byTestId(id).textContent()).trim();
  assert.match(text, /^-?\d+$/, `${id} should hold a bare number, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** Click a run button and wait until `run-status` says `finished` for a new run id. */
export async function run(buttonId, timeout = 30_000, end = 'finished') {
  const status = byTestId('run-status');
  const previous = await status.getAttribute('data-run-id');
  await byTestId(buttonId).click();
  await lab.page.waitForFunction(
    ([prev, end]) => {
      const el = document.querySelector('[data-testid="run-status"]');
      const id = el?.getAttribute('data-run-id');
      return id && id !== prev && el.textContent.trim() === end;
    },
    [previous, end],
    { timeout },
  );
  return status.getAttribute('data-run-id');
}

