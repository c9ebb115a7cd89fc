// The live page in a real browser, against the real server binary and a real Redis.
//
//   scripts/frontend.sh --browser      # build dist/, install chromium and playwright-core
//   cargo build -p oversold            # the server the test spawns
//   (cd e2e && npm test)
//
// Env: OVERSOLD_BIN (default target/debug/oversold), CHROMIUM (default /usr/bin/chromium).
// The harness (harness.js) starts its own redis-server (so a test may pause it) and server.
// Screenshots land in e2e/screenshots/ (gitignored).
//
// Every test starts from a fresh page load (the page keeps its history client-side, so a
// reload is a clean slate) and sets the knobs it needs: no test relies on another's run.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  NARROW, WIDE, byTestId, fresh, hello, knobs, lab, num, redisCli, restartServer, run, setUp, shots, startServer,
  tearDown,
} from './harness.js';

before(setUp);
after(tearDown);

test('every word about a strategy comes from the server', async () => {
  await fresh();
  assert.equal(await byTestId('run-status').textContent(), 'idle');
  assert.equal(await byTestId('stock-input').inputValue(), '10');
  assert.equal(await byTestId('buyers-input').inputValue(), '50');
  const h = await hello();
  assert.equal(h.type, 'hello');
  assert.equal(h.protocol_version, 3);
  // One button per strategy the server offers, labelled with the server's own label.
  for (const s of h.strategies) {
    const button = byTestId(`run-${s.name}`);
    assert.ok((await button.textContent()).includes(s.label), `${s.name}: the server's label`);
    assert.equal(await button.isDisabled(), !s.available, `${s.name} enabled iff available`);
  }
  const featured = h.strategies.filter((s) => s.featured).map((s) => s.name);
  const big = await lab.page.locator('button.run.primary').evaluateAll((els) =>
    els.map((e) => e.getAttribute('data-testid').replace(/^run-/, '')),
  );
  assert.deepEqual(big, featured, 'the big buttons are the featured strategies');
  // The why panel shows, for every strategy, the server's explanation (title and steps).
  for (const s of h.strategies) {
    await byTestId(`explain-${s.name}`).click();
    // The title, then the category badge.
    const title = (await byTestId('explainer-title').textContent()).trim();
    assert.ok(title.startsWith(s.explanation.title), `${s.name}: ${title}`);
    const steps = await lab.page.locator('[data-testid="explainer"] ol li').count();
    assert.equal(steps, s.explanation.steps.length, `${s.name}: one line per step`);
    if (s.scripts.length > 0) {
      const file = h.scripts.find((f) => f.file === s.scripts[0]);
      assert.equal((await byTestId('lua-source').textContent()).trim(), file.source.trim(), `${s.name} shows its Lua`);
    }
  }
});

test('naive oversells with the defaults, and every number on the page agrees', async () => {
  await fresh();
  // Whether one run oversells is up to the interleaving (the server's tests measure 100 of
  // 100 with the defaults): up to three tries, then every figure must agree with the others.
  let oversold = 0;
  for (let i = 0; i < 3 && oversold === 0; i += 1) {
    await run('run-naive');
    oversold = await num('oversold-units');
  }
  assert.ok(oversold > 0, 'naive should oversell within three runs');
  const sold = await num('units-sold');
  assert.equal(await num('stock-remaining'), 10 - sold, 'the counter is read back from Redis');
  assert.equal(oversold, sold - 10);
  assert.equal(await num('orders-accepted'), sold, 'one unit per order');
  assert.equal(await num('audit-count'), 50);
  assert.equal(await num('rejected'), 50 - sold);
  // One real tile per unit in stock, one red tile per unit that never existed.
  assert.equal(await lab.page.locator('[data-testid="inventory-grid"] .tile').count(), 10);
  assert.equal(await lab.page.locator('.tile.phantom').count(), oversold, 'one phantom tile per oversold unit');
  await byTestId('audit-filter-oversold').click();
  await lab.page.locator('[data-testid="audit-row"][data-mark="oversold"]').first().waitFor();
  const marks = await lab.page.locator('[data-testid="audit-row"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-mark')));
  assert.ok(marks.length > 0 && marks.every((m) => m === 'oversold'), `filtered rows: ${marks}`);
  await byTestId('audit-filter-all').click();
  assert.match(await byTestId('run-verdict').textContent(), new RegExp(`${sold} sold \\(stock ${10 - sold}\\), ${oversold} oversold`));
  await lab.page.screenshot({ path: path.join(shots, 'wide-naive.png'), fullPage: true });
});

test('atomic sells exactly the stock', async () => {
  await fresh();
  await run('run-naive');
  await run('run-lua');
  assert.equal(await num('units-sold'), 10);
  assert.equal(await num('oversold-units'), 0);
  assert.equal(await num('stock-remaining'), 0);
  assert.equal(await num('orders-accepted'), 10);
  assert.equal(await num('audit-count'), 50);
  assert.equal(await num('rejected'), 40);
  assert.equal(await lab.page.locator('[data-testid="inventory-grid"] .tile').count(), 10);
  assert.equal(await lab.page.locator('.tile.phantom').count(), 0);
  assert.match(await byTestId('result-line').textContent(), /Naive: 10 in stock.*\| Atomic: exactly 10 sold, 0 oversold/);
  // The audit filter narrows the list without touching the count of buyers received.
  await byTestId('audit-filter-sold-out').click();
  assert.equal(await lab.page.locator('[data-testid="audit-row"]:not([data-mark="sold out"])').count(), 0);
  await byTestId('audit-filter-all').click();
  await lab.page.screenshot({ path: path.join(shots, 'wide-both.png'), fullPage: true });
  await lab.page.setViewportSize(NARROW);
  await lab.page.screenshot({ path: path.join(shots, 'narrow-both.png'), fullPage: true });
  await lab.page.evaluate(() => window.scrollTo(0, 0));
  await lab.page.screenshot({ path: path.join(shots, 'narrow-top.png') });
  await lab.page.setViewportSize(WIDE);
});

/** Pixels of the timeline canvas by colour family, once it has been drawn for the run on screen.
 *  Colours come from components/timeline.rs: red bars (oversold), blue read ticks, green bars. */
async function timelinePixels() {
  await lab.page.waitForFunction(() => {
    const c = document.querySelector('[data-testid="timeline"] canvas');
    return c && c.width > 0 && c.height > 0 && c.getBoundingClientRect().height > 0;
  });
  // The drawing lands on the next animation frame after the last batch; give it two.
  await lab.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return lab.page.evaluate(() => {
    const c = document.querySelector('[data-testid="timeline"] canvas');
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    const n = { red: 0, blue: 0, green: 0, lit: 0, width: c.width, height: c.height, cssWidth: c.clientWidth };
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b, a] = [data[i], data[i + 1], data[i + 2], data[i + 3]];
      if (a === 0) continue;
      if (r > 200 && g < 120 && b < 120) n.red += 1;
      else if (r < 150 && g > 150 && b > 220) n.blue += 1;
      else if (r < 100 && g > 180 && b > 120 && b < 180) n.green += 1;
      if (r + g + b > 150) n.lit += 1;
    }
    return n;
  });
}

test('the race timeline shows reads landing before the stock ran out, and no race for Lua', async () => {
  await fresh();
  await run('run-naive');
  const timeline = byTestId('timeline');
  const naive = await timelinePixels();
  assert.ok(naive.lit > 500, `the canvas is drawn: ${JSON.stringify(naive)}`);
  assert.ok(naive.red > 0 && naive.blue > 0 && naive.green > 0, `bars and read ticks show: ${JSON.stringify(naive)}`);
  // Crisp on any screen: the backing store is the CSS size times devicePixelRatio.
  const dpr = await lab.page.evaluate(() => window.devicePixelRatio);
  assert.equal(naive.width, Math.round(naive.cssWidth * dpr));
  const caption = (await byTestId('timeline-caption').textContent()).trim();
  assert.match(caption, /^\d+ buyers? read the stock before it ran out at [\d.]+ (µs|ms|s); /);
  assert.match(caption, /; (all [\d,]+|[\d,]+ of them) went on to sell units that did not exist\.$/, caption);
  console.log(`timeline after naive: ${caption}`);
  await timeline.scrollIntoViewIfNeeded();
  await timeline.screenshot({ path: path.join(shots, 'wide-timeline-naive.png') });
  await lab.page.setViewportSize(NARROW);
  const narrow = await timelinePixels();
  assert.ok(narrow.cssWidth <= 390 && narrow.red > 0, `the canvas follows the width: ${JSON.stringify(narrow)}`);
  await timeline.scrollIntoViewIfNeeded();
  await timeline.screenshot({ path: path.join(shots, 'narrow-timeline-naive.png') });
  // Grouped by app server: still one canvas, still drawn.
  await byTestId('timeline-order-app').click();
  assert.ok((await timelinePixels()).red > 0);
  await timeline.screenshot({ path: path.join(shots, 'narrow-timeline-naive-by-app.png') });
  await byTestId('timeline-order-arrival').click();
  await lab.page.setViewportSize(WIDE);

  await run('run-lua');
  const lua = await timelinePixels();
  assert.equal(lua.red, 0, 'Lua oversells nothing, so no red bars');
  // A read tick is a 3 px wide mark a row high on each bar (hundreds of pixels for 50 buyers).
  // Once in a CI run 3 blue-ish pixels showed without one: most likely the colour fringe of the
  // white "stock ran out" label's anti-aliasing, which moves with the label. Allow a few.
  assert.ok(lua.blue < 20, `Lua reads nothing in the app, so no read ticks: ${JSON.stringify(lua)}`);
  assert.ok(lua.green > 0);
  const luaCaption = (await byTestId('timeline-caption').textContent()).trim();
  assert.doesNotMatch(luaCaption, /read the stock before|did not exist/, luaCaption);
  assert.match(luaCaption, /^The stock ran out at .*atomic/, luaCaption);
  assert.equal(await timeline.locator('canvas').count(), 1, 'one canvas, not a node per buyer');
  await timeline.screenshot({ path: path.join(shots, 'wide-timeline-lua.png') });
});

/** Strategy names whose run buttons are enabled (call while idle and connected). */
async function availableStrategies() {
  await lab.page.waitForFunction(() => document.querySelector('[data-testid="run-lua"]') && !document.querySelector('[data-testid="run-lua"]').disabled);
  return lab.page.evaluate(() =>
    [...document.querySelectorAll('button.run:not(.compare)')]
      .filter((b) => !b.disabled)
      .map((b) => b.getAttribute('data-testid').replace(/^run-/, '')),
  );
}

test('compare races every available strategy and scores them side by side', async () => {
  await fresh();
  const available = await availableStrategies();
  assert.ok(available.includes('naive') && available.includes('lua'), `available: ${available}`);
  await byTestId('run-compare').click();
  // While it runs, the button says which race is on: "3 / 7: watch" (after a moment of
  // "Starting…" while the server answers).
  const progress = await lab.page
    .waitForFunction(() => {
      const t = document.querySelector('[data-testid="compare-progress"]')?.textContent.trim();
      return t && /^\d+ \/ \d+/.test(t) ? t : null;
    }, null, { timeout: 10_000 })
    .then((h) => h.jsonValue())
    .catch(() => '');
  if (progress) assert.match(progress, /^\d+ \/ \d+(: \w+)?$/);
  await lab.page.locator('[data-testid="scoreboard"][data-state="finished"]').waitFor({ timeout: 120_000 });

  const rows = lab.page.locator('[data-testid="scoreboard-row"]');
  const names = await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-strategy')));
  assert.deepEqual([...names].sort(), [...available].sort(), 'one scoreboard row per available strategy');
  const oversold = async (name) =>
    Number(await lab.page.locator(`[data-testid="scoreboard-row"][data-strategy="${name}"]`).getAttribute('data-oversold'));
  assert.equal(await oversold('lua'), 0, 'lua never oversells');
  const cell = await lab.page
    .locator('[data-testid="scoreboard-row"][data-strategy="lua"] [data-testid="scoreboard-oversold"]')
    .textContent();
  assert.equal(cell.trim(), '0');
  const h = await hello();
  for (const safe of h.strategies.filter((s) => !s.unsafe_by_design && available.includes(s.name))) {
    assert.equal(await oversold(safe.name), 0, `${safe.name} must not oversell`);
  }
  if (available.includes('naive_set')) {
    const lost = await lab.page.locator('[data-testid="scoreboard-row"][data-strategy="naive_set"]').getAttribute('data-lost-updates');
    console.log(`naive_set in the comparison: ${await oversold('naive_set')} oversold, ${lost} lost updates`);
  }
  // Every race also went through the normal run path: the buttons are free again.
  assert.equal(await byTestId('run-compare').isEnabled(), true);
  // The comparison stays whole: every strategy it raced in Recent runs and in the result
  // line, however many there are (the history keeps eight runs, a comparison counts as one).
  const historyNames = await lab.page.locator('[data-testid="history-row"].from-compare').evaluateAll((rows) => rows.length);
  assert.equal(historyNames, available.length, 'one Recent runs row per strategy raced');
  const line = await byTestId('result-line').textContent();
  for (const s of h.strategies.filter((x) => available.includes(x.name))) {
    assert.ok(line.includes(s.short_label), `the result line names ${s.short_label}: ${line}`);
  }
  // The stage view shows the comparison's headline and bars, not the last race's grid and
  // tape: every strategy's bar on the one screen, none behind a scroll bar, at each projector
  // size (issue 19, item 1; at 1440x900 seven of thirteen were hidden).
  await byTestId('view-stage').click();
  await lab.page.locator('[data-testid="scoreboard"]').waitFor({ state: 'visible' });
  for (const size of [WIDE, { width: 1280, height: 720 }, { width: 1920, height: 1080 }]) {
    const where = `${size.width}x${size.height}`;
    await lab.page.setViewportSize(size);
    await lab.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    assert.equal(await lab.page.locator('.layout .tape').isVisible(), false, `${where}: no tape on the stage after a comparison`);
    const seen = await lab.page.evaluate(() => {
      const board = document.querySelector('[data-testid="scoreboard"]').getBoundingClientRect();
      const bars = [...document.querySelectorAll('.scoreboard .bar-row.units')]
        .map((e) => e.getBoundingClientRect())
        .filter((r) => r.height > 0);
      return {
        bars: bars.length,
        // On screen, and not behind the scoreboard's own scroll bar.
        hidden: bars.filter((r) => r.top < Math.max(0, board.top) - 0.5 || r.bottom > Math.min(innerHeight, board.bottom) + 0.5).length,
        scroll: [document.scrollingElement.scrollHeight - innerHeight, document.scrollingElement.scrollWidth - innerWidth],
      };
    });
    const shot = size === WIDE ? 'stage-after-compare.png' : `stage-after-compare-${where}.png`;
    await lab.page.screenshot({ path: path.join(shots, shot) });
    assert.equal(seen.bars, available.length, `${where}: a bar per strategy on the stage`);
    assert.equal(seen.hidden, 0, `${where}: every bar on screen: ${JSON.stringify(seen)}`);
    assert.deepEqual(seen.scroll.map((n) => Math.max(0, n)), [0, 0], `${where}: one screen, no scrolling`);
  }
  await lab.page.setViewportSize(WIDE);
  await byTestId('view-stage').click();

  const board = byTestId('scoreboard');
  await board.scrollIntoViewIfNeeded();
  await board.screenshot({ path: path.join(shots, 'wide-scoreboard.png') });
  await lab.page.screenshot({ path: path.join(shots, 'wide-compare.png'), fullPage: true });
  await lab.page.setViewportSize(NARROW);
  await board.scrollIntoViewIfNeeded();
  await board.screenshot({ path: path.join(shots, 'narrow-scoreboard.png') });
  await lab.page.screenshot({ path: path.join(shots, 'narrow-compare.png'), fullPage: true });
  await lab.page.setViewportSize(WIDE);
});

test('naive_set: the counter stays up while the orders pile past the stock', async () => {
  await fresh();
  await run('run-naive_set');
  const orders = await num('orders-accepted');
  const left = await num('stock-remaining');
  const lost = await num('lost-updates');
  // The counter never goes below zero, yet more orders were accepted than units existed.
  assert.ok(left >= 0, `naive_set's counter should stay at zero or above, got ${left}`);
  assert.ok(orders > 10, `naive_set should accept more orders than the 10 units, got ${orders}`);
  assert.equal(lost, orders - 10 + left, 'lost updates = final stock - (stock - sold)');
  assert.match(await byTestId('run-verdict').textContent(), /orders for 10 units, counter says \d+ left/);
  await lab.page.screenshot({ path: path.join(shots, 'wide-naive-set.png'), fullPage: true });
});

test('10,000 buyers: the page stays responsive and receives every outcome', async () => {
  await fresh();
  // Arrivals over 2 s: the 10 units go in the first milliseconds and the run lasts seconds, so
  // the timeline always has a race to zoom to (with everyone at once, whether the run outlasts
  // four times the run-out moment depends on how busy the machine is).
  await knobs({ 'buyers-input': 10000, 'spread-input': 2000 });
  const previous = await byTestId('run-status').getAttribute('data-run-id');
  await byTestId('run-naive').click();

  // Ask the page a trivial question over and over during the run: each answer must come back fast.
  let slowest = 0;
  let samples = 0;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const t0 = Date.now();
    const state = await lab.page.evaluate(() => {
      const el = document.querySelector('[data-testid="run-status"]');
      return { id: el.getAttribute('data-run-id'), status: el.textContent.trim() };
    });
    slowest = Math.max(slowest, Date.now() - t0);
    samples += 1;
    if (state.id !== previous && state.status === 'finished') break;
    assert.ok(Date.now() < deadline, 'the 10,000-buyer run did not finish within 60 s');
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.ok(slowest < 2_000, `page answered slowly during the run: ${slowest} ms`);
  assert.equal(await num('audit-count'), 10_000);
  // Virtualized: a window of rows, not ten thousand.
  const rows = await byTestId('audit-row').count();
  assert.ok(rows > 0 && rows < 200, `expected a window of audit rows, found ${rows}`);
  // And the grid stays a bounded number of tiles however many units were sold.
  assert.ok((await lab.page.locator('.tile').count()) <= 400);
  console.log(`10,000 buyers: ${samples} samples, slowest page answer ${slowest} ms, ${rows} rows in the DOM`);
  await lab.page.screenshot({ path: path.join(shots, 'wide-10k.png'), fullPage: true });
  // The timeline draws all 10,000 buyers into its one canvas.
  const timeline = byTestId('timeline');
  const pixels = await timelinePixels();
  assert.ok(pixels.lit > 1_000, `the 10,000-buyer timeline is drawn: ${JSON.stringify(pixels)}`);
  assert.equal(await timeline.locator('canvas').count(), 1);
  console.log(`10,000 buyers, timeline: ${(await byTestId('timeline-caption').textContent()).trim()}`);
  await timeline.scrollIntoViewIfNeeded();
  await timeline.screenshot({ path: path.join(shots, 'wide-timeline-10k.png') });
  // A 10,000-buyer run lasts far longer than its race: the axis zooms to the race by itself, and
  // a toggle shows the whole run (every buyer) and back.
  const zoom = byTestId('timeline-zoom');
  assert.equal(await zoom.getAttribute('aria-pressed'), 'true', 'zoomed to the race by default');
  const hiddenNote = (await byTestId('timeline-hidden').textContent()).trim();
  assert.match(hiddenNote, /^Zoomed to the first [\d.]+ (µs|ms|s) of a [\d.]+ (µs|ms|s) run; /, hiddenNote);
  console.log(`10,000 buyers, zoomed: ${hiddenNote}`);
  await zoom.click();
  assert.equal(await zoom.getAttribute('aria-pressed'), 'false');
  assert.equal(await byTestId('timeline-hidden').count(), 0, 'the whole run hides no one');
  const whole = await timelinePixels();
  assert.ok(whole.lit > 1_000, `the whole run is drawn after toggling: ${JSON.stringify(whole)}`);
  await timeline.screenshot({ path: path.join(shots, 'wide-timeline-10k-whole.png') });
  await zoom.click();
  assert.equal(await zoom.getAttribute('aria-pressed'), 'true');
  const zoomed = await timelinePixels();
  assert.ok(zoomed.lit > 1_000, `the zoomed race is drawn: ${JSON.stringify(zoomed)}`);
  // Arrivals spread over 2 s do not always oversell (it depends on how busy the machine is);
  // whatever happened, the red of oversold sales appears exactly when the counter says so.
  const oversold = await num('oversold-units');
  assert.equal(zoomed.red > 0, oversold > 0, `red iff oversold (${oversold}): ${JSON.stringify(zoomed)}`);
  await timeline.screenshot({ path: path.join(shots, 'wide-timeline-10k-zoomed.png') });
  assert.equal(await timeline.locator('canvas').count(), 1);
  await lab.page.setViewportSize(NARROW);
  await timelinePixels();
  await timeline.scrollIntoViewIfNeeded();
  await timeline.screenshot({ path: path.join(shots, 'narrow-timeline-10k.png') });
  await lab.page.setViewportSize(WIDE);
});

test('a cancelled run says so, with what it sold before the cancel', async () => {
  await fresh();
  await knobs({ 'buyers-input': 300, 'spread-input': 5000 });
  const previous = await byTestId('run-status').getAttribute('data-run-id');
  await byTestId('run-lua').click();
  await lab.page.waitForFunction(
    (prev) => {
      const el = document.querySelector('[data-testid="run-status"]');
      return el.getAttribute('data-run-id') !== prev && el.textContent.trim() === 'running';
    },
    previous,
  );
  await lab.page.waitForTimeout(500);
  await byTestId('cancel-run').click();
  await lab.page.locator('[data-testid="run-status"][data-state="cancelled"]').waitFor({ timeout: 10_000 });
  const answered = await num('audit-count');
  assert.ok(answered > 0 && answered < 300, `some buyers ran before the cancel: ${answered}`);
  assert.equal(await num('units-sold'), Math.min(answered, 10), 'lua sells one per buyer until the 10 are gone');
  assert.equal(await num('stock-remaining'), 10 - (await num('units-sold')));
});

test('writes that got no answer are shown as in doubt, never as sold', async () => {
  await fresh();
  // Buyers arrive over 3 s; Redis stops answering writes for 4 s (past the server's 3 s
  // response timeout), so the EVALSHAs sent meanwhile end `unknown`: maybe applied.
  await knobs({ 'stock-input': 1000, 'buyers-input': 300, 'spread-input': 3000 });
  const previous = await byTestId('run-status').getAttribute('data-run-id');
  await byTestId('run-lua').click();
  await lab.page.waitForFunction(
    (prev) => {
      const el = document.querySelector('[data-testid="run-status"]');
      return el.getAttribute('data-run-id') !== prev && el.textContent.trim() === 'running';
    },
    previous,
  );
  redisCli(lab.redis.port, 'CLIENT', 'PAUSE', '4000', 'WRITE');
  await lab.page.locator('[data-testid="run-status"][data-state="finished"]').waitFor({ timeout: 30_000 });
  const inDoubt = await num('counter-in-doubt');
  assert.ok(inDoubt > 0, 'some writes timed out during the pause');
  const sold = await num('units-sold');
  const left = await num('stock-remaining');
  // Every in-doubt unit either landed or did not: the shelf accounts for both.
  assert.ok(1000 - left >= sold && 1000 - left <= sold + inDoubt, `sold ${sold}, left ${left}, in doubt ${inDoubt}`);
  await byTestId('audit-filter-in-doubt').click();
  // The filtered window renders on the next frame.
  await lab.page.locator('[data-testid="audit-row"][data-mark="in doubt"]').first().waitFor();
  const marks = await lab.page.locator('[data-testid="audit-row"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-mark')));
  assert.ok(marks.length > 0 && marks.every((m) => m === 'in doubt'), `filtered rows: ${marks}`);
  await lab.page.screenshot({ path: path.join(shots, 'wide-in-doubt.png'), fullPage: true });
});

test('a dropped connection marks the run interrupted, and the page reconnects by itself', async () => {
  await fresh();
  // A long run (arrivals spread over 20 s), then the server dies under it.
  await knobs({ 'buyers-input': 500, 'spread-input': 20000 });
  const previous = await byTestId('run-status').getAttribute('data-run-id');
  await byTestId('run-naive').click();
  await lab.page.waitForFunction(
    (prev) => {
      const el = document.querySelector('[data-testid="run-status"]');
      return el.getAttribute('data-run-id') !== prev && el.textContent.trim() === 'running';
    },
    previous,
  );
  const port = new URL(lab.server.url).port;
  const exited = new Promise((r) => lab.server.child.once('exit', r));
  lab.server.child.kill('SIGKILL');
  await exited;
  await lab.page.locator('[data-testid="connection-status"][data-state="reconnecting"]').waitFor({ timeout: 10_000 });
  assert.equal(await byTestId('run-status').textContent(), 'interrupted');

  // Same port again: the page's backoff finds it, gets a fresh hello, and runs work again.
  lab.server = await startServer(`127.0.0.1:${port}`);
  await lab.page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor({ timeout: 20_000 });
  await knobs({ 'buyers-input': 50, 'spread-input': 0 });
  await run('run-lua');
  assert.equal(await num('units-sold'), 10);
  assert.equal(await num('audit-count'), 50);
});

test('error frames show as notices the visitor can dismiss', async () => {
  // A server that may run no races at all answers every start with a `busy` error frame.
  await restartServer(['--max-runs', '0']);
  await fresh();
  await byTestId('run-lua').click();
  const notice = byTestId('error-notice');
  await notice.waitFor();
  assert.match(await notice.textContent(), /busy/);
  // The buttons stay usable after a refusal.
  assert.equal(await byTestId('run-lua').isEnabled(), true);
  await notice.getByRole('button', { name: 'Dismiss' }).click();
  assert.equal(await byTestId('error-notice').count(), 0);
});

test('a strategy the server cannot run is shown disabled, with the reason', async () => {
  // No PostgreSQL at this address: the server lists `postgres` as unavailable.
  await restartServer(['--database-url', 'postgres://oversold@127.0.0.1:1/none']);
  await fresh();
  const button = byTestId('run-postgres');
  await lab.page.waitForFunction(() => document.querySelector('[data-testid="run-postgres"] .run-why'));
  assert.equal(await button.isDisabled(), true);
  const why = (await button.locator('.run-why').textContent()).trim();
  assert.ok(why.length > 0, 'the reason is on the button');
  assert.equal(await button.getAttribute('title'), why, 'and in its tooltip');
  await byTestId('run-compare').scrollIntoViewIfNeeded();
  await lab.page.screenshot({ path: path.join(shots, 'wide-unavailable.png') });
});

test('what a click starts comes into view at 1280x720 and 1440x900: the counters, then the step-through panel', async () => {
  for (const viewport of [{ width: 1280, height: 720 }, { width: 1440, height: 900 }]) {
    await fresh(viewport);
    const inView = (selector) =>
      lab.page.evaluate((sel) => {
        const r = document.querySelector(sel).getBoundingClientRect();
        return r.top >= 0 && r.top < innerHeight / 2;
      }, selector);
    assert.equal(await inView('.stage .counters'), false, 'below the fold before the click');
    await run('run-naive');
    assert.ok(await inView('.stage .counters'), `the counters are on screen after the click (${viewport.width}x${viewport.height})`);
    await lab.page.keyboard.press('s');
    await lab.page.locator('[data-testid="step-panel"][data-open="true"]').waitFor();
    await lab.page.waitForFunction(() => {
      const r = document.querySelector('.step-through').getBoundingClientRect();
      return r.top >= 0 && r.top < innerHeight / 2;
    });
    await lab.page.keyboard.press('Escape');
  }
});

test('when Redis fails: the failover scenario on the page shows confirmed sales lost and sold twice, lua_wait none', async () => {
  await fresh({ width: 1280, height: 720 });
  await byTestId('scenario-failover').click();
  // The scenario brings its spread: the failure happens at moments within it.
  await lab.page.waitForFunction(() => [...document.querySelectorAll('input')].some((i) => i.value === '2000'));
  const facts = async () =>
    Object.fromEntries(
      await lab.page.locator('[data-testid="failure-facts"] div').evaluateAll((els) =>
        els.map((e) => [e.querySelector('dt').textContent, e.querySelector('dd').textContent])),
    );
  await run('run-lua', 60_000);
  // The run's link with one seed, raced again: the failure shows in at least 9 of 10 seeds
  // (tests/it/failover.rs), so the random seed of a click would fail now and then. The link
  // names `lua`, which the race has too: the link's scenario says which.
  await lab.page.goto(lab.page.url().replace(/\bseed=\d+/, 'seed=3'));
  await run('run-again', 60_000);
  assert.match(lab.page.url(), /[?&]seed=3\b/);
  assert.match(lab.page.url(), /[?&]scenario=failover\b/);
  await lab.page.screenshot({ path: path.join(shots, 'failover-lua-1280x720.png') });
  await byTestId('failure-facts').waitFor({ timeout: 5_000 });
  const lua = await facts();
  assert.match(lua['Confirmed, then lost'], /^[1-9]\d* units?$/, JSON.stringify(lua));
  assert.equal(lua['Sold twice'], lua['Confirmed, then lost']);
  // The tape's caption tells the same failure: where Redis came back, the decrements lost, the
  // units sold a second time; its numbers are the facts under the counters.
  const said = (await byTestId('tape-caption').textContent()).trim();
  const m = said.match(/Redis came back at (\d+) after confirming down to (\d+): (\d+) acknowledged decrements? (?:was|were) lost, and (\d+|no) units? (?:was|were) sold a second time\./);
  assert.ok(m, `the tape caption names the lost decrements: ${said}`);
  const units = (n) => `${n === 'no' ? 0 : n} unit${n === '1' ? '' : 's'}`;
  assert.deepEqual([units(m[3]), units(m[4])], [lua['Confirmed, then lost'], lua['Sold twice']], said);
  assert.equal(await byTestId('tape-caption').getAttribute('data-tone'), 'bad', 'lost sales wear the unsafe colour');
  await byTestId('tape').scrollIntoViewIfNeeded();
  await lab.page.screenshot({ path: path.join(shots, 'failover-lua-tape-1280x720.png') });
  // The run's words are the failover strategy's, not the race's `lua`.
  const h = await hello();
  const label = h.failover_strategies.find((s) => s.name === 'lua').label;
  assert.ok((await byTestId('run-status').textContent()).length > 0);
  assert.ok(await lab.page.getByText(label, { exact: false }).first().isVisible(), `shows ${label}`);
  await run('run-lua_wait', 60_000);
  const wait = await facts();
  assert.equal(wait['Confirmed, then lost'], '0 units', JSON.stringify(wait));
});

test('presets: the article opening runs in one click and opens from one link, its words the server’s', async () => {
  await fresh({ width: 1280, height: 720 });
  const h = await hello();
  const article = h.presets.find((p) => p.name === 'article');
  assert.ok(article, 'hello lists the article preset');
  const button = byTestId('preset-article');
  assert.equal((await button.textContent()).trim(), article.label);
  assert.equal(await button.getAttribute('title'), article.description);
  await run('preset-article', 60_000);
  await lab.page.screenshot({ path: path.join(shots, 'preset-article-1280x720.png') });
  // The form holds the preset's knobs, and the run used them.
  assert.equal(await byTestId('stock-input').inputValue(), String(article.request.stock));
  assert.equal(await byTestId('buyers-input').inputValue(), String(article.request.buyers));
  const detail = await lab.page.locator('.run-detail').textContent();
  assert.match(detail, /300 buyers · 100 in stock · 1 to 2 units each/);
  assert.ok((await num('units-sold')) >= 100, 'naive sells at least the 100');

  // The link: the same knobs in the form, the preset's button marked, nothing run yet.
  await lab.page.goto(`${lab.server.url}/?preset=article`);
  await lab.page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor({ timeout: 20_000 });
  await lab.page.locator('[data-testid="preset-article"].linked').waitFor({ timeout: 10_000 });
  assert.equal(await byTestId('stock-input').inputValue(), '100');
  assert.equal(await byTestId('run-status').textContent(), 'idle');
});

test('eviction: the policy is a knob of the scenario, said in the protocol’s words, and rides in the link', async () => {
  await fresh({ width: 1280, height: 720 });
  assert.equal(await byTestId('policy-input').count(), 0, 'no policy outside the eviction scenario');
  await byTestId('scenario-eviction').click();
  const select = byTestId('policy-input');
  await select.waitFor();
  await select.selectOption('noeviction');
  await lab.page.getByText('Full memory deletes nothing').first().waitFor({ timeout: 5_000 });
  await run('run-lua', 60_000);
  assert.match(lab.page.url(), /policy=noeviction/);
});

test('eviction: the tape, the facts and the counters tell one story of an evicted counter', async () => {
  await fresh({ width: 1280, height: 720 });
  await byTestId('scenario-eviction').click();
  await byTestId('policy-input').selectOption('allkeys-lru');
  await run('run-lua', 60_000);
  // The run's link with one seed, raced again: the scenario shows its failure in at least 9
  // of 10 seeds (tests/it/eviction.rs), so the random seed of a click would fail now and then.
  await lab.page.goto(lab.page.url().replace(/\bseed=\d+/, 'seed=3'));
  await run('run-again', 60_000);
  assert.match(lab.page.url(), /[?&]seed=3\b/);
  assert.match(lab.page.url(), /[?&]scenario=eviction\b/);
  await byTestId('failure-facts').waitFor({ timeout: 10_000 });
  const facts = Object.fromEntries(
    await lab.page.locator('[data-testid="failure-facts"] div').evaluateAll((els) =>
      els.map((e) => [e.querySelector('dt').textContent, e.querySelector('dd').textContent])),
  );
  assert.equal(facts['The stock counter'], 'evicted', JSON.stringify(facts));
  const refused = Number(facts['Told "sold out" with units left']);
  assert.ok(refused > 0, JSON.stringify(facts));
  // The tape places every false sold-out on the missing key, with the facts' number, and says
  // the counter ends where the page's stock counter reads it.
  const said = (await byTestId('tape-caption').textContent()).trim();
  const m = said.match(/Redis evicted the counter at (\d+) to free memory; a missing key reads as 0, so (\d+) buyers? (?:was|were) told "sold out" with units unsold\./);
  assert.ok(m, `the caption names the eviction: ${said}`);
  assert.equal(Number(m[2]), refused, said);
  assert.match(said, /the counter ends at 0\./, said);
  assert.equal(await num('stock-remaining'), 0);
  assert.doesNotMatch(said, /not on the tape/, said);
  assert.equal(await byTestId('tape-caption').getAttribute('data-tone'), 'bad', 'false sold-outs wear the unsafe colour');
  // An eviction is not a lost update: neither the counter nor the verdict says so.
  assert.equal(await num('lost-updates'), 0);
  assert.notEqual(await byTestId('run-verdict').getAttribute('data-kind'), 'lost update');
  await byTestId('tape').scrollIntoViewIfNeeded();
  await lab.page.screenshot({ path: path.join(shots, 'eviction-lua-tape-1280x720.png') });
});
