// Rooms in a real browser: a presenter page and three phones (three browser contexts) run a
// naive sale against the real server and a Redis of the test's own; each phone shows its own
// result, the QR code the presenter shows decodes to the join URL, and the phone's own
// stylesheet styles it as the lab's does. A phone paints its room before its wasm arrives,
// and joins again on its own after its server restarts.
//
//   cargo build -p oversold && (cd e2e && node --test rooms.test.js)
//
// Screenshots land in e2e/screenshots/ (gitignored); the README's room shots are copies.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import jsQR from 'jsqr';
import { NARROW, WIDE, fresh, lab, otherBrowser, num, restartServer, setUp, shots, tearDown } from './harness.js';

const FULL_HD = { width: 1920, height: 1080 };
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const serverBin = path.resolve(root, process.env.OVERSOLD_BIN ?? 'target/debug/oversold');
let phonesBrowser = null;
let ownRedisServer = null;

before(setUp);
after(async () => {
  ownRedisServer?.kill('SIGTERM');
  await phonesBrowser?.close().catch(() => {});
  await tearDown();
});

/** The QR image on `page`, drawn onto a canvas and read back as RGBA, decoded with jsQR. */
async function decodeQr(page) {
  const { data, width, height } = await page.evaluate(async () => {
    const img = document.querySelector('[data-testid="room-qr"]');
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = 400;
    canvas.height = 400;
    const g = canvas.getContext('2d');
    g.imageSmoothingEnabled = false;
    g.drawImage(img, 0, 0, 400, 400);
    const pixels = g.getImageData(0, 0, 400, 400);
    return { data: Array.from(pixels.data), width: 400, height: 400 };
  });
  const code = jsQR(Uint8ClampedArray.from(data), width, height);
  assert.ok(code, 'the QR code decodes');
  return code.data;
}

/** Every element's computed style on `page` (its ::before and ::after too), custom
 *  properties left out (what they do shows in the properties that use them). */
function computedStyles(page) {
  return page.evaluate(() => {
    const out = {};
    document.querySelectorAll('body, body *').forEach((el, i) => {
      for (const pseudo of [null, '::before', '::after']) {
        const cs = getComputedStyle(el, pseudo);
        const props = {};
        for (const p of cs) if (!p.startsWith('--')) props[p] = cs.getPropertyValue(p);
        out[`${i} ${el.tagName.toLowerCase()}${[...el.classList].map((c) => `.${c}`).join('')}${pseudo ?? ''}`] = props;
      }
    });
    return out;
  });
}

/** The phone's own stylesheet (static/phone.css, written by scripts/phone-css.js) styles the
 *  phone page on `page` exactly as the lab's whole style.css (`labCss`) does, in both themes
 *  and both views. */
async function samePhoneStyles(page, labCss) {
  // No animation mid-way: a swapped sheet restarts the tiles' pop.
  await page.emulateMedia({ reducedMotion: 'reduce' });
  const restyle = (href) =>
    page.evaluate(
      (href) =>
        new Promise((resolve, reject) => {
          const link = document.querySelector('link[rel="stylesheet"]');
          if (link.href === href) return resolve();
          link.removeAttribute('integrity');
          link.onload = resolve;
          link.onerror = () => reject(new Error(`${href} did not load`));
          link.href = href;
        }),
      href,
    );
  const phoneCss = await page.evaluate(() => document.querySelector('link[rel="stylesheet"]').href);
  assert.match(phoneCss, /\/phone\/phone-[0-9a-f]+\.css$/, 'the phone links its own stylesheet');
  const kept = await page.evaluate(() => [document.body.dataset.theme, document.body.dataset.view]);
  for (const [theme, view] of [['dark', 'normal'], ['light', 'normal'], ['dark', 'stage'], ['light', 'stage']]) {
    await page.evaluate(([t, v]) => Object.assign(document.body.dataset, { theme: t, view: v }), [theme, view]);
    await restyle(phoneCss);
    const phone = await computedStyles(page);
    await restyle(labCss);
    const full = await computedStyles(page);
    assert.deepEqual(Object.keys(phone), Object.keys(full));
    const differ = [];
    for (const [el, props] of Object.entries(full)) {
      for (const [p, v] of Object.entries(props)) {
        if (phone[el][p] !== v) differ.push(`${el} ${p}: ${phone[el][p]} with phone.css, ${v} with style.css`);
      }
    }
    assert.deepEqual(differ.slice(0, 8), [], `${theme} theme, ${view} view: ${differ.length} computed values differ`);
  }
  await restyle(phoneCss);
  await page.evaluate(([t, v]) => Object.assign(document.body.dataset, { theme: t, view: v }), kept);
  await page.emulateMedia({ reducedMotion: null });
}

/** A phone: its own browser context (its own cookies, storage and socket), 390 px wide. */
async function phone(joinUrl) {
  const context = await phonesBrowser.newContext({ viewport: NARROW });
  const page = await context.newPage();
  page.on('pageerror', (err) => console.error('phone page error:', err.message));
  await page.goto(joinUrl);
  await page.getByTestId('room-phone').waitFor();
  return page;
}

test('a presenter and three phones run a naive sale; each phone shows its own result', async () => {
  phonesBrowser = await otherBrowser();
  await fresh(WIDE);
  const presenter = lab.page;
  await presenter.getByTestId('create-room').click();
  const code = (await presenter.getByTestId('room-code').textContent()).trim();
  assert.match(code, /^[A-Z2-9]{5}$/);
  const joinUrl = (await presenter.getByTestId('room-url').textContent()).trim();
  assert.equal(joinUrl, `${lab.server.url}/r/${code}`);
  assert.equal(await decodeQr(presenter), joinUrl, 'the QR code is the join URL');

  const phones = [];
  for (let i = 0; i < 3; i += 1) phones.push(await phone(joinUrl));
  await presenter.getByTestId('room-presence').filter({ hasText: '3 phones' }).waitFor();

  await presenter.getByTestId('sale-stock').fill('2');
  await presenter.getByTestId('sale-stock').dispatchEvent('change');
  await presenter.getByTestId('open-sale').click();
  for (const p of phones) await p.locator('[data-testid="buy"]:not([disabled])').waitFor();

  // One phone at a time, so the outcome is certain: units #2 and #1, then sold out.
  const verdicts = [];
  for (const p of phones) {
    await p.getByTestId('buy').click();
    const verdict = p.getByTestId('buy-verdict');
    await verdict.filter({ hasText: /\S/ }).waitFor();
    verdicts.push((await verdict.textContent()).trim());
    assert.ok(await p.getByTestId('buy').isDisabled(), 'one buy per phone');
  }
  assert.deepEqual(verdicts, ['you got unit #2', 'you got unit #1', 'refused: sold out']);
  // Each phone knows its buyer number, and the presenter's grid shows the same numbers, each
  // tile marked as a phone's (no bots in this sale).
  const buyers = [];
  for (const p of phones) {
    const line = (await p.getByTestId('buy-buyer').textContent()).trim();
    const m = line.match(/^You are buyer #(\d+) on the projector\.$/);
    assert.ok(m, line);
    buyers.push(Number(m[1]));
  }
  assert.equal(new Set(buyers).size, 3, `three buyer numbers: ${buyers}`);
  const tiles = await presenter.locator('[data-testid="inventory-grid"] .tile.phone').evaluateAll((els) => els.map((e) => e.textContent.trim()).sort());
  assert.deepEqual(tiles, buyers.slice(0, 2).map((b) => `#${b}`).sort(), 'the two units sold, under the phones\' numbers');
  await presenter.getByTestId('legend-phone').waitFor();

  // A reload is the same phone: its result comes back, and it cannot buy again.
  await phones[0].reload();
  await phones[0].getByTestId('buy-verdict').filter({ hasText: 'you got unit #2' }).waitFor();
  assert.ok(await phones[0].getByTestId('buy').isDisabled(), 'still one buy per phone after a reload');
  assert.equal(phones[0].url(), joinUrl, 'the join URL stays the room\'s (a sale is no shareable run link)');
  assert.equal(await phones[0].getByTestId('error-notice').count(), 0);

  // The big screen shows the same race: two sold, none left.
  await presenter.getByTestId('room-presence').filter({ hasText: '3 clicks' }).waitFor();
  // The presenter's reload takes the room back: same code, and the open sale can be closed.
  await presenter.reload();
  await presenter.getByTestId('room-code').filter({ hasText: code }).waitFor();
  await presenter.locator('[data-testid="close-sale"]:not([disabled])').waitFor();
  await presenter.getByTestId('close-sale').click();
  await presenter.getByTestId('sale-ended').filter({ hasText: 'Last sale: 0 oversold' }).waitFor();
  for (const p of phones) await p.getByTestId('room-sale').filter({ hasText: 'Sale over' }).waitFor();
  // The phone downloads only the rules that can style it, and they style it as the lab's do.
  const labCss = await presenter.evaluate(() =>
    [...document.querySelectorAll('link[rel="stylesheet"]')].map((l) => l.href).find((h) => /\/style-[0-9a-f]+\.css$/.test(h)),
  );
  assert.ok(labCss, 'the lab links style.css');
  await samePhoneStyles(phones[0], labCss);
  await phones[0].screenshot({ path: path.join(shots, 'room-phone.png'), fullPage: true });
  await presenter.screenshot({ path: path.join(shots, 'room-presenter.png') });
  await presenter.setViewportSize(FULL_HD);
  await presenter.getByTestId('view-stage').click();
  await presenter.screenshot({ path: path.join(shots, 'room-stage.png') });
});

test('a phone paints its room and a disabled Buy, and joins, before its wasm arrives, in the theme it keeps', async () => {
  phonesBrowser ??= await otherBrowser();
  for (const theme of ['dark', 'light']) {
    const context = await phonesBrowser.newContext({ viewport: NARROW });
    await context.addInitScript((t) => localStorage.setItem('oversold.theme', t), theme);
    const page = await context.newPage();
    // The wasm never comes: what shows is the HTML's own paint, and its own socket joins.
    await page.route('**/*.wasm', (route) => route.abort());
    const joined = new Promise((resolve) =>
      page.on('websocket', (ws) => ws.on('framesent', (f) => resolve(JSON.parse(f.payload)))),
    );
    await page.goto(`${lab.server.url}/r/AB3CD`);
    assert.deepEqual(await joined, { type: 'join_room', room: 'AB3CD', as: 'phone' });
    assert.equal((await page.locator('#boot .room-code').textContent()).trim(), 'AB3CD');
    assert.ok(await page.locator('#boot .buy-button').isDisabled());
    assert.equal(await page.evaluate(() => document.body.dataset.theme), theme);
    const ground = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(ground, theme === 'light' ? 'rgb(233, 236, 242)' : 'rgb(10, 12, 17)');
    await page.screenshot({ path: path.join(shots, `room-phone-first-paint-${theme}.png`) });
    await context.close();
  }
});

/**
 * A room of its own, presented by the lab's page: not the one an earlier test's presenter kept
 * in this browser (cleared from a page of the origin that runs no app, which could keep it
 * again meanwhile). Returns the room's join URL.
 */
async function presentNewRoom() {
  await lab.page.goto(`${lab.server.url}/healthz`);
  await lab.page.evaluate(() => localStorage.clear());
  await fresh(WIDE);
  await lab.page.getByTestId('create-room').click();
  return (await lab.page.getByTestId('room-url').textContent()).trim();
}

/**
 * A phone whose wasm is held back until `until` (given the page's buys sent and a promise of
 * its click's answer) resolves: the HTML alone joins and, when pressed, buys.
 */
async function phoneWithoutItsWasm(joinUrl, until) {
  const context = await phonesBrowser.newContext({ viewport: NARROW });
  const p = await context.newPage();
  p.on('pageerror', (err) => console.error('phone page error:', err.message));
  const buys = [];
  let answered;
  const answer = new Promise((resolve) => { answered = resolve; });
  p.on('websocket', (ws) => {
    ws.on('framesent', (f) => { const m = JSON.parse(f.payload); if (m.type === 'buy') buys.push(m); });
    ws.on('framereceived', (f) => { if (String(f.payload).startsWith('{"type":"buy_result"')) answered(JSON.parse(f.payload)); });
  });
  await p.route('**/*.wasm', async (route) => { await until({ buys, answer }); await route.continue(); });
  await p.goto(joinUrl, { waitUntil: 'commit' });
  const early = p.locator('#boot [data-testid="buy"]:not([disabled])');
  await early.waitFor();
  await early.click();
  return { context, p, buys, answer };
}

test('a phone buys before its wasm arrives, and the app, once there, shows that click\'s answer', async () => {
  phonesBrowser ??= await otherBrowser();
  const joinUrl = await presentNewRoom();
  const presenter = lab.page;
  // A wide race window: a click's answer comes seconds after it, so an app can arrive between.
  for (const [id, value] of [['sale-stock', '3'], ['sale-seconds', '120'], ['sale-race-window', '4000']]) {
    await presenter.getByTestId(id).fill(value);
    await presenter.getByTestId(id).dispatchEvent('change');
  }
  await presenter.getByTestId('open-sale').click();
  await presenter.locator('[data-testid="close-sale"]:not([disabled])').waitFor();

  // The app arrives after the answer: it shows it, and keeps to one buy.
  const first = await phoneWithoutItsWasm(joinUrl, ({ answer }) => answer);
  const boot = first.p.locator('#boot [data-testid="buy"]');
  assert.equal((await boot.textContent()).trim(), 'Buying…');
  assert.ok(await boot.isDisabled(), 'one click from the HTML');
  const result = await first.answer;
  assert.equal(result.result, 'reserved', JSON.stringify(result));
  assert.equal(first.buys.length, 1);
  assert.match(first.buys[0].request_id, /^p\d+-c1$/);
  assert.equal(result.request_id, first.buys[0].request_id);
  await first.p.getByTestId('room-phone').waitFor();
  await first.p.getByTestId('buy-verdict').filter({ hasText: 'you got unit #3' }).waitFor();
  await first.p.getByTestId('buy-buyer').filter({ hasText: /^You are buyer #\d+ on the projector\.$/ }).waitFor();
  assert.ok(await first.p.getByTestId('buy').isDisabled(), 'still one buy per phone');
  assert.equal(await first.p.locator('#boot').count(), 0, 'the HTML\'s placeholder is gone');

  // The app arrives while the click is on its way: it waits for that answer, as for its own.
  let answeredYet = false;
  const second = await phoneWithoutItsWasm(joinUrl, async ({ buys }) => {
    while (buys.length === 0) await new Promise((r) => setTimeout(r, 20));
  });
  second.answer.then(() => { answeredYet = true; });
  await second.p.getByTestId('room-phone').waitFor();
  const buy = second.p.getByTestId('buy');
  assert.ok(!answeredYet, 'the app mounted before the answer came (the race window is 4 s)');
  assert.equal((await buy.textContent()).trim(), 'Buying…');
  assert.ok(await buy.isDisabled(), 'the app does not offer a second click while the first is out');
  await second.p.getByTestId('buy-verdict').filter({ hasText: /^you got unit #\d$/ }).waitFor({ timeout: 15_000 });
  assert.ok(await buy.isDisabled(), 'one buy per phone');

  await presenter.getByTestId('room-presence').filter({ hasText: /\b2 clicks\b/ }).waitFor();
  assert.deepEqual([first.buys.length, second.buys.length], [1, 1], 'no app sent a second click');
  await first.context.close();
  await second.context.close();
});

test('a phone whose server restarts joins again on its own, as the same buyer', async () => {
  phonesBrowser ??= await otherBrowser();
  const joinUrl = await presentNewRoom();
  const presenter = lab.page;
  await presenter.getByTestId('sale-seconds').fill('120');
  await presenter.getByTestId('sale-seconds').dispatchEvent('change');
  await presenter.getByTestId('open-sale').click();
  const context = await phonesBrowser.newContext({ viewport: NARROW });
  const p = await context.newPage();
  // Each socket's joins, in order.
  const joins = [];
  p.on('websocket', (ws) => {
    const mine = [];
    joins.push(mine);
    ws.on('framesent', (f) => {
      const msg = JSON.parse(f.payload);
      if (msg.type === 'join_room') mine.push(msg);
    });
  });
  await p.goto(joinUrl);
  await p.locator('[data-testid="buy"]:not([disabled])').waitFor();
  await p.getByTestId('buy').click();
  await p.getByTestId('buy-verdict').filter({ hasText: /\S/ }).waitFor();
  const buyer = (await p.getByTestId('buy-buyer').textContent()).trim();
  // The page's HTML opened the first socket and joined on it; the app took it over and did
  // not join again.
  assert.equal(joins.length, 1);
  assert.deepEqual(joins[0].map((j) => [j.room, j.as]), [[joinUrl.split('/r/')[1], 'phone']]);
  // That connection goes; the app opens its own and joins on it, with the seat it kept.
  await restartServer();
  await p.locator('.room-phone-head .bad').filter({ hasText: 'reconnecting' }).waitFor();
  await p.locator('.room-phone-head .muted').filter({ hasText: /^live$/ }).waitFor({ timeout: 20_000 });
  await p.getByTestId('buy-buyer').filter({ hasText: buyer }).waitFor();
  // (Attempts while the server was down opened nothing and said nothing.)
  const again = joins.slice(1).flat();
  assert.equal(again.length, 1, `one join after the restart: ${JSON.stringify(joins)}`);
  assert.ok(again[0].participant_id > 0 && /^[0-9a-f]+$/.test(again[0].seat_token), 'it joins back with its seat');
  assert.ok(await p.getByTestId('buy').isDisabled(), 'still one buy per phone');
  await context.close();
});

/** `oversold --private-redis serve`: a server that starts its own Redis, so chaos is allowed. */
function startOwningServer() {
  const args = ['--private-redis', 'serve', '--addr', '127.0.0.1:0', '--assets', path.join(root, 'dist')];
  const child = spawn(serverBin, args, { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] });
  ownRedisServer = child;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no listening line in 30 s')), 30_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = line.match(/^oversold listening on (http:\/\/\S+)$/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
}

test('on a server that owns its Redis, a chaos button lands on the timeline and in the audit trail', async () => {
  const url = await startOwningServer();
  const page = lab.page;
  await page.setViewportSize(WIDE);
  await page.goto(url);
  await page.getByTestId('create-room').click();
  await page.getByTestId('room-code').waitFor();
  await page.getByTestId('sale-strategy').selectOption('lua');
  for (const [id, value] of [['sale-stock', '100'], ['sale-bots', '400'], ['sale-seconds', '3']]) {
    await page.getByTestId(id).fill(value);
    await page.getByTestId(id).dispatchEvent('change');
  }
  await page.getByTestId('open-sale').click();
  await page.getByTestId('close-sale').and(page.locator(':not([disabled])')).waitFor();
  await page.waitForTimeout(300);
  await page.getByTestId('chaos-pause_redis').click();
  const log = page.getByTestId('chaos-log');
  await log.filter({ hasText: 'CLIENT PAUSE 1000 ms' }).waitFor({ timeout: 15_000 });
  await page.getByTestId('sale-ended').filter({ hasText: 'Last sale: 0 oversold' }).waitFor({ timeout: 30_000 });
  // The audit trail names it with its moment on the sale's clock.
  const note = (await page.getByTestId('audit-chaos').textContent()).trim();
  assert.match(note, /^chaos at \d[\d.]* (ms|s): CLIENT PAUSE 1000 ms/);
  // Nobody failed: the pause was only latency.
  assert.equal(await num('units-sold'), 100);
  assert.equal(await page.getByTestId('errors').count(), 0, 'no errors counter: nobody failed');
  await page.getByTestId('timeline').scrollIntoViewIfNeeded();
  await page.getByTestId('timeline').screenshot({ path: path.join(shots, 'room-chaos-timeline.png') });

  // On stage the presenter still drives the sale: Open/Close and every chaos button, on
  // screen at projector sizes, and the busy-script button answered.
  await page.getByTestId('view-stage').click();
  for (const size of [FULL_HD, { width: 1280, height: 720 }]) {
    await page.setViewportSize(size);
    for (const id of ['open-sale', 'close-sale', 'chaos-pause_redis', 'chaos-busy_script', 'chaos-unkillable_script']) {
      const box = await page.getByTestId(id).boundingBox();
      assert.ok(box && box.y >= 0 && box.y + box.height <= size.height && box.x + box.width <= size.width, `${id} on screen at ${size.width}x${size.height}: ${JSON.stringify(box)}`);
    }
    // Three-digit counters (100 in stock, 300 refused) stay inside their boxes.
    const spills = await page.locator('.counters .stat, .stock-counter').evaluateAll((els) =>
      els.filter((e) => e.offsetParent && e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent.trim()));
    assert.deepEqual(spills, [], `counters spill out of their boxes at ${size.width}x${size.height}`);
    await page.screenshot({ path: path.join(shots, `room-stage-controls-${size.width}x${size.height}.png`) });
  }
  await page.getByTestId('open-sale').click();
  await page.getByTestId('close-sale').and(page.locator(':not([disabled])')).waitFor();
  await page.getByTestId('chaos-busy_script').click();
  // The log is the normal view's (the stage keeps to the sale itself).
  await page.getByTestId('view-stage').click();
  await log.filter({ hasText: 'SCRIPT KILL at' }).waitFor({ timeout: 15_000 });
});
