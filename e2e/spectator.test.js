// A room's spectator screen (`/r/CODE?as=spectator`, a projector's second screen) in a real
// browser: the lab's page and wasm (never the phone's), the room's code and QR code large, the
// counters, the grid and the tape on one screen at 1280x720, 1440x900 and 1920x1080 in both
// themes, stacked with no sideways scroll at 390x844, and after a sale every number on it
// equal to the presenter's and to the summary the server sent.
//
//   cargo build -p oversold && scripts/frontend.sh && (cd e2e && node --test spectator.test.js)
//
// Screenshots land in e2e/screenshots/ (gitignored): spectator-{WxH}-{theme}.png.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { NARROW, WIDE, fresh, lab, otherBrowser, setUp, shots, tearDown } from './harness.js';

const HD = { width: 1280, height: 720 };
const FULL_HD = { width: 1920, height: 1080 };
const name = (v) => `${v.width}x${v.height}`;
let screens = null;

before(setUp);
after(async () => {
  await screens?.close().catch(() => {});
  await tearDown();
});

/** Wait for two animation frames: a resize or a theme has been laid out and painted. */
const settled = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

/** The numbers a screen shows: its counters, its grid's tiles, its verdicts and its tape. */
async function numbers(page) {
  return page.evaluate(() => {
    const text = (sel) => document.querySelector(sel)?.textContent.trim() ?? null;
    const counters = Object.fromEntries(
      ['stock-remaining', 'units-sold', 'orders-accepted', 'oversold-units', 'lost-updates', 'rejected', 'errors'].map((id) => [
        id,
        text(`[data-testid="${id}"]`),
      ]),
    );
    const tiles = (grid) => [...document.querySelectorAll(`[data-testid="${grid}"] .tile`)].map((t) => `${t.className}:${t.textContent.trim()}`);
    return {
      counters,
      stock: tiles('inventory-grid'),
      phantoms: tiles('phantom-grid'),
      result: text('[data-testid="result-line"]'),
      caption: text('[data-testid="tape-caption"]'),
    };
  });
}

test('a spectator screen is the lab page drawing the room on one screen, with the presenter\'s numbers', async () => {
  screens = await otherBrowser();
  await fresh(WIDE);
  const presenter = lab.page;
  await presenter.getByTestId('create-room').click();
  const code = (await presenter.getByTestId('room-code').textContent()).trim();
  const joinUrl = (await presenter.getByTestId('room-url').textContent()).trim();

  // The projector: a browser of its own (its own storage, as a second machine would have).
  const context = await screens.newContext({ viewport: HD });
  const screen = await context.newPage();
  screen.on('pageerror', (err) => console.error('spectator page error:', err.message));
  const received = [];
  screen.on('websocket', (ws) => {
    ws.on('framereceived', (f) => {
      try {
        received.push(JSON.parse(f.payload));
      } catch {
        // not JSON: not ours
      }
    });
  });
  await screen.goto(`${joinUrl}?as=spectator`);
  await screen.getByTestId('spectator').waitFor();
  await screen.getByTestId('room-sale').filter({ hasText: 'Waiting for the presenter' }).waitFor({ timeout: 20_000 });
  // Before the first sale: the code, the QR code and an invitation where the race will be.
  assert.ok(await screen.getByTestId('spectator-waiting').isVisible(), 'an invitation before the sale');
  assert.equal(await screen.locator('.counters').isVisible(), false, 'no counters of a sale that is not there');
  await screen.screenshot({ path: path.join(shots, `spectator-${name(HD)}-before.png`) });
  assert.equal((await screen.getByTestId('room-code').textContent()).trim(), code);
  assert.equal((await screen.getByTestId('room-url').textContent()).trim(), joinUrl.replace(/^https?:\/\//, ''));
  // The lab's page and wasm (the phone's stays small), and a socket that says which page it is.
  const loaded = await screen.evaluate(() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname));
  assert.ok(!loaded.some((p) => p.startsWith('/phone/')), `nothing of the phone's page: ${loaded.join(' ')}`);
  assert.ok(loaded.some((p) => /^\/oversold-frontend-[0-9a-f]+_bg\.wasm$/.test(p)), `the lab's wasm: ${loaded.join(' ')}`);
  const hello = received.find((m) => m.type === 'hello');
  assert.ok(hello && hello.scripts.length === 0, 'a spectator\'s hello carries no Lua sources');
  await presenter.getByTestId('room-presence').filter({ hasText: '2 watching' }).waitFor();

  // A naive sale with bots: it oversells, so the grid has phantoms and the tape red marks.
  for (const [id, value] of [['sale-stock', '20'], ['sale-bots', '120'], ['sale-seconds', '3']]) {
    await presenter.getByTestId(id).fill(value);
    await presenter.getByTestId(id).dispatchEvent('change');
  }
  await presenter.getByTestId('open-sale').click();
  await screen.getByTestId('room-sale').filter({ hasText: 'Sale open: 20 units' }).waitFor();
  assert.equal(await screen.getByTestId('spectator-waiting').isVisible(), false, 'the race takes the invitation\'s place');
  await presenter.getByTestId('sale-ended').filter({ hasText: 'Last sale:' }).waitFor({ timeout: 30_000 });
  await screen.getByTestId('room-sale').filter({ hasText: 'Sale over.' }).waitFor({ timeout: 30_000 });

  // One source of truth: the projector's numbers are the presenter's, and the summary's.
  const closed = received.find((m) => m.type === 'sale_closed');
  assert.ok(closed?.summary, 'the screen got the sale\'s summary');
  const s = closed.summary;
  const mine = await numbers(screen);
  const theirs = await numbers(presenter);
  assert.deepEqual(mine, theirs, 'the spectator screen shows the presenter\'s numbers');
  assert.equal(Number(mine.counters['units-sold']), s.units_sold);
  assert.equal(Number(mine.counters['oversold-units']), s.oversold_units);
  assert.equal(Number(mine.counters['stock-remaining']), s.final_stock);
  assert.equal(mine.stock.length, 20, 'a tile per unit in stock');
  assert.ok(s.oversold_units > 0, `a naive sale of 120 bots oversells: ${JSON.stringify(s)}`);
  assert.ok(mine.phantoms.length > 0, 'phantoms on the grid');
  assert.match(mine.caption, /oversold/, 'the tape counts the oversold units');
  console.log(`spectator after the sale: ${JSON.stringify(mine.counters)}; ${mine.caption}`);

  for (const theme of ['dark', 'light']) {
    if ((await screen.evaluate(() => document.body.dataset.theme)) !== theme) await screen.getByTestId('theme-toggle').click();
    for (const size of [HD, WIDE, FULL_HD]) {
      await screen.setViewportSize(size);
      await settled(screen);
      await screen.screenshot({ path: path.join(shots, `spectator-${name(size)}-${theme}.png`) });
      const where = `${name(size)} ${theme}`;
      assert.equal(await screen.evaluate(() => document.body.dataset.view), 'stage', `${where}: the projector's layout`);
      const fit = await screen.evaluate(() => ({
        scrollHeight: document.scrollingElement.scrollHeight,
        scrollWidth: document.scrollingElement.scrollWidth,
        innerHeight,
        innerWidth,
      }));
      assert.ok(fit.scrollHeight <= fit.innerHeight && fit.scrollWidth <= fit.innerWidth, `${where}: no scrolling: ${JSON.stringify(fit)}`);
      const boxes = await screen.evaluate(() => {
        const box = (sel) => {
          const el = document.querySelector(sel);
          const r = el?.getBoundingClientRect();
          return r && { top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, height: r.height, clipped: el.scrollHeight > el.clientHeight + 1 };
        };
        return {
          code: box('[data-testid="room-code"]'), qr: box('[data-testid="room-qr"]'), url: box('[data-testid="room-url"]'),
          counters: box('.counters'), result: box('[data-testid="result-line"]'), grid: box('.inventory'),
          tape: box('[data-testid="tape"]'), caption: box('[data-testid="tape-caption"]'), drawing: box('.tape-scroll'),
        };
      });
      for (const [what, b] of Object.entries(boxes)) {
        assert.ok(
          b && b.height > 0 && b.top >= 0 && b.left >= 0 && b.bottom <= size.height + 0.5 && b.right <= size.width + 0.5,
          `${where}: ${what} on screen: ${JSON.stringify(b)}`,
        );
      }
      assert.ok(!boxes.grid.clipped, `${where}: the whole grid shows`);
      assert.ok(boxes.drawing.height >= size.height * 0.15, `${where}: the tape's drawing is ${boxes.drawing.height} px tall`);
      // Large: the QR code a third of the screen's height at the least, the code's letters
      // 48 px and more (a tenth of that on a projected 3 m screen is readable from 15 m).
      assert.ok(boxes.qr.height >= size.height * 0.3 && boxes.qr.width >= size.height * 0.3, `${where}: the QR code is large: ${JSON.stringify(boxes.qr)}`);
      const codePx = await screen.evaluate(() => parseFloat(getComputedStyle(document.querySelector('[data-testid="room-code"]')).fontSize));
      assert.ok(codePx >= 48, `${where}: the room code is ${codePx} px`);
      if (size === FULL_HD) {
        const smallest = Number(await screen.locator('.tape-canvas').getAttribute('data-smallest-label-px'));
        assert.ok(smallest >= 16, `${where}: the tape's smallest label is ${smallest} px`);
      }
    }
  }
  // Resizing changed nothing it shows.
  assert.deepEqual(await numbers(screen), theirs);

  // On a phone: the same panels, stacked, with no sideways scroll.
  await screen.setViewportSize(NARROW);
  await settled(screen);
  assert.equal(await screen.evaluate(() => document.body.dataset.view), 'normal');
  const narrow = await screen.evaluate(() => ({
    scrollWidth: document.scrollingElement.scrollWidth,
    innerWidth,
    wider: [...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5 && !e.closest('.tape-scroll')).map((e) => e.className || e.tagName).slice(0, 5),
  }));
  assert.ok(narrow.scrollWidth <= narrow.innerWidth, `390 px: no sideways scroll: ${JSON.stringify(narrow)}`);
  assert.deepEqual(narrow.wider, [], '390 px: nothing wider than the window (the tape scrolls inside its panel)');
  for (const id of ['room-code', 'room-qr']) {
    const b = await screen.getByTestId(id).boundingBox();
    assert.ok(b && b.y >= 0 && b.y + b.height <= NARROW.height, `390 px: ${id} on the first screen: ${JSON.stringify(b)}`);
  }
  await screen.screenshot({ path: path.join(shots, `spectator-${name(NARROW)}-light.png`), fullPage: true });
  await context.close();
});
