// Replay links, recent runs, saved runs, the stage view, the light theme and the keyboard
// shortcuts, in a real browser against the real server and a Redis of the test's own.
//
//   cargo build -p oversold && (cd e2e && npm test)      # or: node --test stage.test.js
//
// Screenshots land in e2e/screenshots/ (gitignored); the README's stage shots are copies.
// The last test stops Redis for good (a speaker's venue network failing), so it stays last.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { NARROW, WIDE, byTestId, fresh, hello, knobs, lab, num, redisCli, run, setUp, shots, tearDown } from './harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const serverBin = path.resolve(here, '..', process.env.OVERSOLD_BIN ?? 'target/debug/oversold');
const FULL_HD = { width: 1920, height: 1080 };
const HD = { width: 1280, height: 720 };
const scratch = mkdtempSync(path.join(tmpdir(), 'oversold-stage-'));

before(setUp);
after(async () => {
  await tearDown();
  rmSync(scratch, { recursive: true, force: true });
});

/** Every frame the page sends over its WebSocket, as parsed JSON, from the next page load on. */
function watchFrames() {
  const sent = [];
  lab.page.on('websocket', (ws) => ws.on('framesent', (f) => sent.push(JSON.parse(f.payload))));
  return sent;
}

/** The run on screen's knobs, from the address the page wrote. */
async function addressParams(page = lab.page) {
  return Object.fromEntries(new URL(page.url()).searchParams);
}

/** The featured strategies as hello lists them: [unsafe, safe]. */
async function featuredPair() {
  const h = await hello();
  const featured = h.strategies.filter((s) => s.featured);
  return [featured.find((s) => s.unsafe_by_design), featured.find((s) => !s.unsafe_by_design)];
}

/** Click "save this run" and return the downloaded file's text. */
async function saveRun(page = lab.page) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('save-run').click()]);
  const file = path.join(scratch, download.suggestedFilename());
  await download.saveAs(file);
  return { file, name: download.suggestedFilename(), text: readFileSync(file, 'utf8') };
}

/** Wait until the run on screen is `id` and finished. */
async function onScreen(id, page = lab.page) {
  await page.waitForFunction(
    (id) => {
      const el = document.querySelector('[data-testid="run-status"]');
      return el?.getAttribute('data-run-id') === id && el.textContent.trim() === 'finished';
    },
    id,
  );
}

/** Pixels of the timeline canvas, once drawn: how many show each theme's plot ground
 *  (model/theme.rs: #0a0c11 dark, #ffffff light), and how many are red (oversold bars). */
async function timelineGround() {
  await lab.page.waitForFunction(() => {
    const c = document.querySelector('[data-testid="timeline"] canvas');
    return c && c.width > 0 && c.height > 0;
  });
  await lab.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return lab.page.evaluate(() => {
    const c = document.querySelector('[data-testid="timeline"] canvas');
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    const n = { dark: 0, light: 0, red: 0 };
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b, a] = [data[i], data[i + 1], data[i + 2], data[i + 3]];
      if (a < 255) continue;
      if (r === 10 && g === 12 && b === 17) n.dark += 1;
      else if (r === 255 && g === 255 && b === 255) n.light += 1;
      else if (r > 190 && g < 120 && b < 120) n.red += 1;
    }
    return n;
  });
}

/** A second browser with nothing remembered: what a colleague who got the link sees. */
async function freshBrowser() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  const page = await (await browser.newContext({ viewport: WIDE })).newPage();
  page.on('pageerror', (err) => console.error('page error (fresh browser):', err.message));
  return { browser, page };
}

test('a link carries the run: a fresh browser restores its settings and runs the same crowd again', async () => {
  await fresh();
  await knobs({ 'stock-input': 7, 'buyers-input': 30, 'qty-input': 3, 'app-servers-input': 4, 'race-input': 2 });
  await byTestId('random-qty').check();
  const id = await run('run-naive');
  const params = await addressParams();
  assert.deepEqual(
    { ...params, seed: undefined },
    {
      strategy: 'naive', stock: '7', buyers: '30', qty: '1', max_qty: '3', app_servers: '4',
      arrival_spread_ms: '0', race_window_ms: '2', seed: undefined,
    },
    'the address holds every knob of the run, as the protocol names them',
  );
  assert.match(params.seed, /^\d+$/);
  const first = JSON.parse((await saveRun()).text);
  assert.equal(first.run_id, id);

  const { browser, page } = await freshBrowser();
  try {
    await page.goto(lab.page.url());
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor({ timeout: 20_000 });
    await page.getByTestId('run-again').waitFor();
    for (const [testid, value] of Object.entries({ 'stock-input': '7', 'buyers-input': '30', 'qty-input': '3', 'app-servers-input': '4', 'race-input': '2' })) {
      assert.equal(await page.getByTestId(testid).inputValue(), value, testid);
    }
    assert.equal(await page.getByTestId('random-qty').isChecked(), true);
    assert.equal(await page.getByTestId('run-status').textContent(), 'idle', 'a link restores, it does not run');
    assert.equal(await page.getByTestId('replay-what').textContent(), `From the link: Naive · 30 buyers · 7 in stock · seed ${params.seed}:`);
    assert.match(await page.getByTestId('replay-note').textContent(), /^ the same crowd; the interleaving is still up to the network and Redis\.$/);
    assert.equal(await page.getByTestId('error-notice').count(), 0, 'a good link raises nothing');

    // Run it again: the same seed, so the same crowd (each buyer's quantity and app server).
    const previous = await page.getByTestId('run-status').getAttribute('data-run-id');
    await page.getByTestId('run-again').click();
    await page.waitForFunction(
      (prev) => {
        const el = document.querySelector('[data-testid="run-status"]');
        return el.getAttribute('data-run-id') !== prev && el.textContent.trim() === 'finished';
      },
      previous,
    );
    assert.deepEqual(await addressParams(page), params, 'the replay wrote the same address');
    const again = JSON.parse((await saveRun(page)).text);
    assert.notEqual(again.run_id, first.run_id);
    assert.deepEqual(again.config, first.config);
    const crowd = (r) => r.outcomes.map((o) => [o.buyer, o.qty, o.app_server]).sort((a, b) => a[0] - b[0]);
    assert.deepEqual(crowd(again), crowd(first), 'same seed, same quantities and app servers per buyer');
    assert.equal(await page.getByTestId('run-again').isEnabled(), true, 'and it can be run again');
    assert.equal(await page.getByTestId('replay-what').textContent(), `Seed ${params.seed}:`);
  } finally {
    await browser.close();
  }
});

test('a link with a value out of range says so and clamps nothing', async () => {
  await fresh();
  await lab.page.goto(`${lab.server.url}/?strategy=naive&stock=10&buyers=20000&qty=0&seed=5`);
  const notice = byTestId('error-notice');
  await notice.waitFor();
  const text = await notice.textContent();
  assert.match(text, /bad_link/);
  assert.match(text, /buyers = 20000 is out of range: it must be between 1 and 10000; the form keeps 50\./);
  assert.match(text, /qty = 0 is out of range: it must be between 1 and 100; the form keeps 1\./);
  assert.equal(await byTestId('buyers-input').inputValue(), '50', 'the default, not the nearest valid value');
  assert.equal(await byTestId('run-again').count(), 0, 'a crowd with a knob changed is not the same crowd');
});

test('a recent run reopens with its counters, grid, audit and timeline', async () => {
  await fresh();
  const naiveId = await run('run-naive');
  const naive = {
    sold: await num('units-sold'), left: await num('stock-remaining'), oversold: await num('oversold-units'),
    url: lab.page.url(),
  };
  const luaId = await run('run-lua');
  assert.equal(await num('units-sold'), 10);
  assert.equal(await byTestId('history-row').count(), 2);

  await lab.page.locator(`[data-testid="history-open"][data-run-id="${naiveId}"]`).click();
  await onScreen(naiveId);
  assert.equal(await num('units-sold'), naive.sold);
  assert.equal(await num('stock-remaining'), naive.left);
  assert.equal(await num('oversold-units'), naive.oversold);
  assert.equal(await num('audit-count'), 50);
  assert.equal(await lab.page.locator('.tile.phantom').count(), naive.oversold, 'its phantom tiles are back');
  assert.equal(lab.page.url(), naive.url, 'the address follows the run on screen');
  assert.equal(await lab.page.locator(`[data-testid="history-open"][data-run-id="${naiveId}"]`).getAttribute('aria-current'), 'true');
  if (naive.oversold > 0) assert.ok((await timelineGround()).red > 0, 'the timeline draws its oversold bars again');
  await byTestId('tape').waitFor();
  // And back to the atomic run.
  await lab.page.locator(`[data-testid="history-open"][data-run-id="${luaId}"]`).click();
  await onScreen(luaId);
  assert.equal(await num('units-sold'), 10);
  assert.equal(await lab.page.locator('.tile.phantom').count(), 0);
  assert.equal(await byTestId('history-row').count(), 2, 'reopening adds no run');
});

test('the stage view fits one screen at 1920x1080, 1440x900 and 1280x720, in both themes', async () => {
  await fresh(FULL_HD);
  await run('run-naive');
  await run('run-lua');
  await byTestId('view-stage').click();
  assert.equal(await lab.page.evaluate(() => document.body.dataset.view), 'stage');
  assert.equal(await byTestId('view-stage').getAttribute('aria-pressed'), 'true');
  const [unsafeOne, safeOne] = await featuredPair();
  for (const theme of ['dark', 'light']) {
    if ((await lab.page.evaluate(() => document.body.dataset.theme)) !== theme) await byTestId('theme-toggle').click();
    for (const [name, size] of [['1080', FULL_HD], ['900', WIDE], ['720', HD]]) {
      await lab.page.setViewportSize(size);
      await lab.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const fit = await lab.page.evaluate(() => ({
        scrollHeight: document.scrollingElement.scrollHeight,
        scrollWidth: document.scrollingElement.scrollWidth,
        innerHeight,
        innerWidth,
      }));
      assert.ok(fit.scrollHeight <= fit.innerHeight && fit.scrollWidth <= fit.innerWidth, `${name}p ${theme}: no scrolling: ${JSON.stringify(fit)}`);
      // The two big buttons, the counters, the grid and the tape are all on this one screen,
      // and neither the grid nor the tape hides anything behind a scroll bar of its own.
      const boxes = await lab.page.evaluate(([u, s]) => {
        const box = (sel) => {
          const el = document.querySelector(sel);
          const r = el?.getBoundingClientRect();
          return r && { top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height, clipped: el.scrollHeight > el.clientHeight + 1 };
        };
        return {
          unsafe: box(`[data-testid="run-${u}"]`), safe: box(`[data-testid="run-${s}"]`), counters: box('.counters'),
          grid: box('.inventory'), tape: box('[data-testid="tape"]'), result: box('[data-testid="result-line"]'),
          caption: box('[data-testid="tape-caption"]'), drawing: box('.tape-scroll'),
        };
      }, [unsafeOne.name, safeOne.name]);
      for (const [what, b] of Object.entries(boxes)) {
        assert.ok(b && b.height > 0 && b.top >= 0 && b.bottom <= size.height + 0.5 && b.right <= size.width + 0.5, `${name}p ${theme}: ${what} on screen: ${JSON.stringify(b)}`);
      }
      assert.ok(!boxes.grid.clipped, `${name}p ${theme}: the whole grid shows`);
      // The tape is a drawing, not a sliver between its legend and its caption (at 1440x900
      // it was 27 px tall, at 1280x720 nothing).
      assert.ok(boxes.drawing.height >= size.height * 0.08, `${name}p ${theme}: the tape's drawing is ${boxes.drawing.height} px tall`);
      if (name === '1080') {
        // The line box (getBoundingClientRect), and the digits' own ink: the rendered font's
        // ascent above the baseline for the number shown, measured on a canvas.
        const digits = await lab.page.evaluate(() =>
          ['stock-remaining', 'units-sold', 'oversold-units', 'rejected'].map((id) => {
            const el = document.querySelector(`[data-testid="${id}"]`);
            const ctx = document.createElement('canvas').getContext('2d');
            // (Not `style.font`: the shorthand reads empty under `font-variant-numeric`.)
            const cs = getComputedStyle(el);
            ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
            const ink = ctx.measureText(el.textContent.trim().replace('-', '')).actualBoundingBoxAscent;
            return [id, Math.round(el.getBoundingClientRect().height), Math.round(ink)];
          }),
        );
        for (const [id, box, ink] of digits) assert.ok(box >= 96 && ink >= 96, `${id}: counter digits ${box} px (glyphs ${ink} px) at 1080p`);
        // The tape's labels, read from the back of the room: its smallest is 16 px or more.
        const smallest = Number(await lab.page.locator('.tape-canvas').getAttribute('data-smallest-label-px'));
        assert.ok(smallest >= 16, `the tape's smallest label is ${smallest} px at 1080p`);
        console.log(`stage view, 1080p ${theme}: counter digits ${digits.map(([id, box, ink]) => `${id} ${box} px (glyphs ${ink} px)`).join(', ')}`);
      }
      await lab.page.screenshot({ path: path.join(shots, `stage-${name}-${theme}.png`) });
    }
  }
  // Remembered, like the theme.
  await lab.page.reload();
  await lab.page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
  assert.equal(await lab.page.evaluate(() => document.body.dataset.view), 'stage');
  await byTestId('view-stage').click();
  await byTestId('theme-toggle').click();
  assert.deepEqual(await lab.page.evaluate(() => [document.body.dataset.view, document.body.dataset.theme]), ['normal', 'dark']);
});

test('the stage view on a phone: one column, and no counter spills out of its box', async () => {
  await fresh(NARROW);
  await run('run-naive');
  await byTestId('view-stage').click();
  assert.equal(await lab.page.evaluate(() => document.body.dataset.view), 'stage');
  // Naive at the defaults oversells, so the stock is negative: the widest figure it shows.
  assert.ok((await num('stock-remaining')) < 0);
  const boxes = await lab.page.evaluate(() =>
    [...document.querySelectorAll('.counters .stock-counter, .counters .stat')]
      .filter((el) => el.offsetParent !== null)
      .map((el) => ({
        box: el.getBoundingClientRect(),
        text: el.textContent.trim().slice(0, 24),
        // Past the box's edge, or wider than its own line box (clipped or overflowing).
        spills: el.scrollWidth > el.clientWidth + 1 || [...el.querySelectorAll('.num, .big, .of')].some((n) => {
          const r = n.getBoundingClientRect(), b = el.getBoundingClientRect();
          return r.right > b.right + 1 || r.left < b.left - 1 || n.scrollWidth > n.clientWidth + 1;
        }),
      })),
  );
  assert.ok(boxes.length >= 3, JSON.stringify(boxes));
  for (const b of boxes) {
    assert.equal(b.spills, false, `a figure spills out of its box: ${b.text}`);
    assert.ok(b.box.right <= NARROW.width + 1, `a box past the screen's edge: ${b.text}`);
  }
  const [grid, tape] = await Promise.all(['.inventory', '.tape'].map((sel) =>
    lab.page.locator(sel).first().evaluate((el) => el.getBoundingClientRect().toJSON())));
  assert.ok(tape.top >= grid.bottom - 1, 'the grid and the tape stack in one column');
  await lab.page.screenshot({ path: path.join(shots, 'stage-390x844.png') });
  await byTestId('view-stage').click();
});

test('the light theme is remembered across a reload and repaints the canvas', async () => {
  await fresh();
  await run('run-naive');
  const dark = await timelineGround();
  assert.ok(dark.dark > 1000 && dark.light === 0, `dark ground: ${JSON.stringify(dark)}`);
  await byTestId('theme-toggle').click();
  assert.equal(await byTestId('theme-toggle').getAttribute('aria-pressed'), 'true');
  assert.equal(await lab.page.evaluate(() => document.body.dataset.theme), 'light');
  const light = await timelineGround();
  assert.ok(light.light > 1000 && light.dark === 0, `light ground: ${JSON.stringify(light)}`);
  await lab.page.reload();
  await lab.page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
  assert.equal(await lab.page.evaluate(() => document.body.dataset.theme), 'light', 'remembered');
  assert.equal(await lab.page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(233, 236, 242)');
  await run('run-naive');
  const again = await timelineGround();
  assert.ok(again.light > 1000 && again.dark === 0, `a new run paints on the light ground too: ${JSON.stringify(again)}`);
  await lab.page.setViewportSize({ width: 1440, height: 900 });
  await lab.page.screenshot({ path: path.join(shots, 'wide-light.png'), fullPage: true });
  await byTestId('theme-toggle').click();
  assert.equal(await lab.page.evaluate(() => localStorage.getItem('oversold.theme')), 'dark');
});

test('each shortcut does what the ? list says', async () => {
  const sent = watchFrames();
  await fresh();
  const [unsafeOne, safeOne] = await featuredPair();
  // ? opens the list; it names the featured strategies with the server's words.
  await lab.page.keyboard.press('?');
  const overlay = byTestId('shortcuts-overlay');
  await overlay.waitFor();
  const keys = await overlay.locator('dt').evaluateAll((els) => els.map((e) => e.dataset.key));
  assert.deepEqual(keys, ['N', 'L', 'C', 'S', 'R', 'F', '?', 'Esc']);
  const says = async (key) => (await overlay.locator(`dt[data-key="${key}"] + dd`).textContent()).trim();
  assert.match(await says('N'), new RegExp(`^Run ${unsafeOne.short_label}, `));
  assert.match(await says('L'), new RegExp(`^Run ${safeOne.short_label}, `));
  assert.match(await says('S'), new RegExp(`^Step through ${unsafeOne.short_label}`));
  assert.match(await says('R'), /^Reset: settings back to their defaults, the run on screen cleared/);
  await lab.page.screenshot({ path: path.join(shots, 'wide-shortcuts.png') });
  await lab.page.keyboard.press('Escape');
  await overlay.waitFor({ state: 'detached' });
  await byTestId('shortcuts-button').click();
  await overlay.waitFor();
  await lab.page.keyboard.press('?');
  await overlay.waitFor({ state: 'detached' });

  // N and L run the featured pair.
  const status = byTestId('run-status');
  for (const [key, strategy] of [['n', unsafeOne.name], ['l', safeOne.name]]) {
    const previous = await status.getAttribute('data-run-id');
    await lab.page.keyboard.press(key);
    await lab.page.waitForFunction(
      (prev) => {
        const el = document.querySelector('[data-testid="run-status"]');
        return el.getAttribute('data-run-id') !== prev && el.textContent.trim() === 'finished';
      },
      previous,
    );
    assert.equal((await addressParams()).strategy, strategy, `${key} ran ${strategy}`);
  }
  // Not while typing, not with a modifier held.
  const before = await status.getAttribute('data-run-id');
  await byTestId('buyers-input').focus();
  await lab.page.keyboard.press('n');
  await lab.page.locator('body').click({ position: { x: 5, y: 5 } });
  await lab.page.keyboard.press('Alt+n');
  await lab.page.waitForTimeout(500);
  assert.equal(await status.getAttribute('data-run-id'), before, 'no run from a key typed into a field or with Alt');
  assert.equal(sent.filter((f) => f.type === 'start_run').length, 2);

  // C races every strategy.
  await lab.page.keyboard.press('c');
  await lab.page.locator('[data-testid="scoreboard"][data-state="finished"]').waitFor({ timeout: 120_000 });
  assert.equal(sent.filter((f) => f.type === 'start_compare').length, 1);

  // S opens step-through mode on the first featured strategy, with the server's classic case.
  await lab.page.keyboard.press('s');
  await new Promise((r) => setTimeout(r, 300));
  const step = sent.filter((f) => f.type === 'step_open');
  assert.deepEqual(step, [{ type: 'step_open', config: { strategy: unsafeOne.name } }]);

  // R: the form back to its defaults, the run on screen and the address cleared; recent runs stay.
  await knobs({ 'buyers-input': 30 });
  const rows = await byTestId('history-row').count();
  await lab.page.locator('body').click({ position: { x: 5, y: 5 } });
  await lab.page.keyboard.press('r');
  await lab.page.waitForFunction(() => document.querySelector('[data-testid="run-status"]').textContent.trim() === 'idle');
  assert.equal(await byTestId('buyers-input').inputValue(), '50');
  assert.equal(new URL(lab.page.url()).search, '');
  assert.equal(await byTestId('history-row').count(), rows);

  // F: full screen on, and off.
  await lab.page.keyboard.press('f');
  await lab.page.waitForFunction(() => document.fullscreenElement === document.documentElement);
  await lab.page.keyboard.press('f');
  await lab.page.waitForFunction(() => document.fullscreenElement === null);
});

test('a saved run loads from a file with no server round trip, even with Redis stopped', async () => {
  // The real CLI writes the file, against this test's Redis.
  const cliFile = path.join(scratch, 'naive-seed-3.json');
  execFileSync(serverBin, ['run', '--strategy', 'naive', '--seed', '3', '--outcomes', cliFile, '--redis-url', `redis://127.0.0.1:${lab.redis.port}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const cli = JSON.parse(readFileSync(cliFile, 'utf8'));
  assert.equal(cli.format, 'oversold-run');

  const sent = watchFrames();
  await fresh();
  // "Save this run" writes the same format, from memory.
  await run('run-lua');
  const saved = await saveRun();
  const mine = JSON.parse(saved.text);
  assert.match(saved.name, /^oversold-lua-seed-\d+\.json$/);
  assert.equal(mine.format, 'oversold-run');
  assert.equal(mine.outcomes.length, 50);
  assert.equal(mine.summary.units_sold, 10);
  assert.equal(mine.strategy.name, 'lua');

  // The venue's network fails: Redis is gone (for the rest of this file).
  redisCli(lab.redis.port, 'SHUTDOWN', 'NOSAVE');
  await lab.page.locator('[data-testid="redis-status"][data-state="down"]').waitFor({ timeout: 10_000 });
  const mark = sent.length;

  // The file picker (phones) loads the CLI's file.
  await byTestId('open-run').setInputFiles(cliFile);
  await onScreen(cli.run_id);
  assert.equal(await num('units-sold'), cli.summary.units_sold);
  assert.equal(await num('stock-remaining'), cli.summary.final_stock);
  assert.equal(await num('oversold-units'), cli.summary.oversold_units);
  assert.equal(await num('audit-count'), cli.outcomes.length);
  assert.equal(await lab.page.locator('.tile.phantom').count(), Math.min(cli.summary.oversold_units, 400));
  assert.match(await byTestId('run-verdict').textContent(), new RegExp(`${cli.summary.units_sold} sold`));
  assert.equal(await lab.page.locator(`[data-testid="history-open"][data-run-id="${cli.run_id}"]`).count(), 1, 'it joins the recent runs');
  assert.equal((await addressParams()).seed, '3', 'and its crowd is one link away');

  // A file dropped on the page: the one this page saved.
  await lab.page.evaluate(
    ([name, text]) => {
      const data = new DataTransfer();
      data.items.add(new File([text], name, { type: 'application/json' }));
      window.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, cancelable: true }));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: data, cancelable: true }));
    },
    [saved.name, saved.text],
  );
  await onScreen(mine.run_id);
  assert.equal(await num('units-sold'), 10);
  assert.equal(await num('oversold-units'), 0);
  assert.equal(await lab.page.evaluate(() => document.body.dataset.drop), 'off', 'the veil is gone');

  // A wrong file: one clear sentence, and the run on screen stays.
  const wrong = path.join(scratch, 'not-a-run.json');
  writeFileSync(wrong, JSON.stringify({ type: 'hello' }));
  await byTestId('open-run').setInputFiles(wrong);
  await lab.page.locator('[data-testid="error-notice"]', { hasText: 'This file is not a saved oversold run' }).waitFor();
  assert.equal(await byTestId('run-status').getAttribute('data-run-id'), mine.run_id);

  assert.deepEqual(sent.slice(mark), [], 'loading sent the server nothing at all');
  await lab.page.screenshot({ path: path.join(shots, 'wide-saved-redis-down.png'), fullPage: true });
});
