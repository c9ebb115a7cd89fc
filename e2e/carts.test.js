// The cart and warehouse scenarios in a real browser: the real server, a Redis of the test's
// own, and (for the CROSSSLOT lesson) a server on a private three-master Redis Cluster of its
// own. Every number the page shows is checked against the frames the server sent the page
// (recorded off its own WebSocket), so a figure the page invented fails here.
//
//   scripts/frontend.sh --browser      # build dist/, install chromium and playwright-core
//   cargo build -p oversold            # the server the test spawns
//   (cd e2e && npm test -- carts.test.js)
//
// Screenshots land in e2e/screenshots/ (gitignored): carts-*.png at 1920x1080 and phone width.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { NARROW, byTestId, fresh, hello, knobs, lab, run, setUp, shots, tearDown } from './harness.js';

const FULL_HD = { width: 1920, height: 1080 };

/** Every frame the server sent the page, parsed, oldest first. */
const received = [];

before(async () => {
  await setUp();
  lab.page.on('websocket', (ws) =>
    ws.on('framereceived', (f) => {
      try {
        received.push(JSON.parse(f.payload));
      } catch {
        // not JSON: not ours
      }
    }),
  );
});

/** Servers this file started besides the harness's; stopped (with their cluster) at the end. */
const extra = [];
after(async () => {
  for (const child of extra) {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }
  await tearDown();
});

/** The summary the server sent for `runId`. */
function summaryOf(runId) {
  const end = received.find((m) => m.run_id === runId && m.type === 'run_finished');
  assert.ok(end, `run_finished for ${runId}`);
  return end.summary;
}

/** The shelves the page shows: each one's data hooks, as numbers. */
async function shelves() {
  return lab.page.locator('[data-testid="shelf"]').evaluateAll((els) =>
    els.map((e) => ({
      name: e.getAttribute('data-name'),
      stock: Number(e.getAttribute('data-stock')),
      sold: Number(e.getAttribute('data-sold')),
      stranded: Number(e.getAttribute('data-stranded')),
      final: Number(e.getAttribute('data-final')),
      oversold: Number(e.getAttribute('data-oversold')),
      tiles: e.querySelectorAll('.tile').length,
    })),
  );
}

/** A fact's number (`data-n` of its hook). */
const fact = async (id) => Number(await byTestId(id).getAttribute('data-n'));

/** The page's shelves are the summary's ledger, tile for tile, and each adds up. */
async function assertShelvesAreTheSummarys(sum, ledger) {
  const shown = await shelves();
  assert.deepEqual(
    shown.map((s) => s.name),
    ledger.map((l) => l.name),
  );
  for (const [s, l] of shown.map((s, i) => [s, ledger[i]])) {
    assert.equal(s.stock, l.stock, s.name);
    assert.equal(s.sold, l.units_sold, s.name);
    assert.equal(s.stranded, l.stranded_units, s.name);
    assert.equal(s.final, l.final_stock, s.name);
    assert.equal(s.oversold, l.oversold_units, s.name);
    assert.equal(s.stock, s.final + s.sold + s.stranded, `${s.name}: the ledger adds up`);
    // One tile per unit in stock, plus one per unit that never existed.
    assert.equal(s.tiles, l.stock + l.oversold_units, `${s.name}: tiles`);
  }
  assert.equal(
    sum.oversold_units,
    ledger.reduce((n, l) => n + l.oversold_units, 0),
  );
}

test('a cart race and a warehouse race render their shelves, and every number is the summary', async () => {
  await fresh(FULL_HD);
  const h = await hello();
  const carts = h.cart_strategies.filter((s) => s.scenario === 'cart');
  assert.ok(carts.length >= 5, 'hello lists the cart strategies');
  await byTestId('scenario-cart').click();
  for (const s of carts) {
    assert.ok((await byTestId(`run-${s.name}`).textContent()).includes(s.label), `${s.name}: the server's label`);
  }
  await knobs({ 'skus-input': 4, 'max-lines-input': 3 });
  // The naive cart strands units in partial carts and (nearly always) oversells a SKU.
  const naive = await run('run-naive_cart');
  const sum = summaryOf(naive);
  assert.equal(sum.per_sku.length, 4);
  await assertShelvesAreTheSummarys(sum, sum.per_sku);
  assert.equal(await fact('partial-carts'), sum.partial_carts);
  assert.equal(await fact('stranded-units'), sum.stranded_units);
  assert.ok(sum.partial_carts > 0, 'the naive cart left partial carts');
  await lab.page.screenshot({ path: path.join(shots, 'carts-naive-1920x1080.png') });
  await byTestId('cart-shelves').screenshot({ path: path.join(shots, 'carts-naive-shelves.png') });
  await byTestId('theme-toggle').click();
  await byTestId('cart-shelves').screenshot({ path: path.join(shots, 'carts-naive-shelves-light.png') });
  await byTestId('theme-toggle').click();
  // The saga leaves none, and says how many lines it gave back.
  const saga = await run('run-saga');
  const ss = summaryOf(saga);
  await assertShelvesAreTheSummarys(ss, ss.per_sku);
  assert.equal(await fact('partial-carts'), 0);
  assert.equal(await fact('compensations'), ss.compensations);
  assert.equal(await fact('refused-with-units'), ss.false_sold_out);
  await lab.page.screenshot({ path: path.join(shots, 'carts-saga-full-1920.png'), fullPage: true });
  // On a single Redis the untagged script runs, and the page says a cluster would refuse it.
  await run('run-cart_script_untagged');
  assert.match(await byTestId('crossslot-lesson').textContent(), /CROSSSLOT/);

  // Warehouses: one row per warehouse, and how many orders a fallback served.
  await byTestId('scenario-warehouses').click();
  await knobs({ 'warehouses-input': 4, 'stock-input': 20, 'qty-input': 2 });
  const wh = await run('run-warehouse_script');
  const ws = summaryOf(wh);
  assert.equal(ws.per_warehouse.length, 4);
  await assertShelvesAreTheSummarys(ws, ws.per_warehouse);
  assert.equal(await fact('fallback-orders'), ws.fallback_orders);
  assert.equal(ws.oversold_units, 0);
  const nw = await run('run-naive_warehouse');
  const ns = summaryOf(nw);
  await assertShelvesAreTheSummarys(ns, ns.per_warehouse);
  // The comparison races this scenario's strategies, and the scoreboard has their numbers.
  await byTestId('run-compare').click();
  await lab.page.locator('[data-testid="scoreboard"][data-state="finished"]').waitFor({ timeout: 120_000 });
  const finished = received.filter((m) => m.type === 'compare_finished').at(-1);
  const warehouseNames = h.cart_strategies.filter((s) => s.scenario === 'warehouses').map((s) => s.name);
  assert.deepEqual(finished.summaries.map((s) => s.strategy), warehouseNames);
  for (const s of finished.summaries) {
    const row = lab.page.locator(`[data-testid="scoreboard-row"][data-strategy="${s.strategy}"]`);
    assert.equal(Number(await row.getByTestId('scoreboard-oversold').textContent()), s.oversold_units, s.strategy);
    // The cart columns replace the race's: partial carts (none for a warehouse order) and more.
    assert.equal(Number(await row.getByTestId('scoreboard-partial').textContent()), s.partial_carts, s.strategy);
  }
  await byTestId('scoreboard').screenshot({ path: path.join(shots, 'carts-warehouses-scoreboard.png') });
  await lab.page.setViewportSize(NARROW);
  await lab.page.screenshot({ path: path.join(shots, 'carts-warehouses-phone.png'), fullPage: true });
  await byTestId('cart-shelves').screenshot({ path: path.join(shots, 'carts-warehouses-shelves-phone.png') });
  // Nothing on the page is wider than a phone.
  const wide = await lab.page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(wide <= NARROW.width + 1, `the page is ${wide} px wide on a phone`);
});

/** An `oversold serve` on a private three-master Redis Cluster of its own. */
function serverOnACluster() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const bin = path.resolve(root, process.env.OVERSOLD_BIN ?? 'target/debug/oversold');
  const args = ['serve', '--addr', '127.0.0.1:0', '--assets', path.join(root, 'dist'), '--private-cluster'];
  const child = spawn(bin, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  extra.push(child);
  const log = [];
  child.stderr.on('data', (c) => log.push(c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line within 60 s\n${log.join('')}`)), 60_000);
    child.once('exit', (code) => reject(new Error(`server exited early with ${code}\n${log.join('')}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = line.match(/^oversold listening on (http:\/\/\S+)$/);
      if (m) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve(m[1]);
      }
    });
  });
}

test('on a cluster the untagged cart script fails with CROSSSLOT, and the page shows the lesson and the fix', async () => {
  const url = await serverOnACluster();
  await lab.page.setViewportSize(FULL_HD);
  await lab.page.goto(url);
  await lab.page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor({ timeout: 20_000 });
  await byTestId('scenario-cart').click();
  const h = await hello();
  const untagged = h.cart_strategies.find((s) => s.name === 'cart_script_untagged');
  const id = await run('run-cart_script_untagged', 60_000, 'failed');
  const failed = received.find((m) => m.type === 'error' && m.run_id === id);
  assert.equal(failed.code, 'run_failed');
  assert.match(failed.message, /CROSSSLOT/);
  const lesson = byTestId('crossslot-lesson');
  const text = await lesson.textContent();
  assert.ok(text.includes(failed.message), 'the server\'s own refusal');
  assert.ok(text.includes(untagged.explanation.why), 'the fix, in the strategy\'s words');
  assert.ok(text.includes(untagged.explanation.cost), 'and its cost');
  await lab.page.screenshot({ path: path.join(shots, 'carts-crossslot-1920x1080.png') });
  await byTestId('cart-shelves').screenshot({ path: path.join(shots, 'carts-crossslot-shelves.png') });
  // The tagged script on the same cluster: every shelf on one node, named and coloured.
  const ok = await run('run-cart_script', 60_000);
  const sum = summaryOf(ok);
  await assertShelvesAreTheSummarys(sum, sum.per_sku);
  const nodes = await lab.page.locator('[data-testid="shelf"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-node')));
  assert.ok(nodes.every((n) => n && n === sum.per_sku[0].node), `one node for the tagged cart: ${nodes}`);
  assert.equal(await lab.page.locator('.node-badge').count(), sum.per_sku.length);
  // Stage view at 1080p: the shelves fill the screen below the big buttons.
  await byTestId('view-stage').click();
  await lab.page.screenshot({ path: path.join(shots, 'carts-cluster-stage-1920x1080.png') });
  const box = await byTestId('cart-shelves').boundingBox();
  assert.ok(box && box.y + 40 < FULL_HD.height, 'the shelves are on the stage screen');
  await byTestId('view-stage').click();
  await lab.page.setViewportSize(NARROW);
  await lab.page.screenshot({ path: path.join(shots, 'carts-cluster-phone.png'), fullPage: true });
  await byTestId('cart-shelves').screenshot({ path: path.join(shots, 'carts-cluster-shelves-phone.png') });
});
