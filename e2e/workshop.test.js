// The workshop view in a real browser, against the real server, its judge and a Redis of the
// test's own (the harness starts them): the starter of `reserve` oversells and the verdict
// shows the tape; a correct script passes with its figures beside the reference's, the list
// marks it passed, and a reload keeps it; the editor's keys; Export and Import; the links
// between the lab and the workshop page, and the address.
//
//   cargo build -p oversold && scripts/frontend.sh --browser && (cd e2e && node --test workshop.test.js)
//
// Screenshots land in e2e/screenshots/ (gitignored): workshop-*.png at 1280x720, 1920x1080 and
// 390x844. The page's errors (a closure called inside itself, say) fail the test.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NARROW, byTestId, hello, lab, setUp, shots, tearDown } from './harness.js';

const HD = { width: 1280, height: 720 };
const FULL_HD = { width: 1920, height: 1080 };
const scratch = mkdtempSync(path.join(tmpdir(), 'oversold-workshop-'));

/** A correct `reserve`: compare with the quantity, take nothing when short. */
const SOLUTION = `local stock = tonumber(redis.call('GET', KEYS[1]) or '0')
local qty = tonumber(ARGV[1])
if stock < qty then return 0 end
redis.call('DECRBY', KEYS[1], qty)
return 1
`;

const pageErrors = [];
before(async () => {
  await setUp();
  lab.page.on('pageerror', (err) => pageErrors.push(err.message));
});
after(async () => {
  await tearDown();
  assert.deepEqual(pageErrors, [], 'the page threw');
  rmSync(scratch, { recursive: true, force: true });
});

/** Load `query` afresh at `viewport`, and wait until the exercise is on screen. */
async function open(query = '?view=workshop&exercise=reserve', viewport = HD) {
  await lab.page.setViewportSize(viewport);
  await lab.page.goto(`${lab.server.url}/${query}`);
  await lab.page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor({ timeout: 20_000 });
  await lab.page.locator('#ws-title').waitFor({ timeout: 20_000 });
}

const editor = () => lab.page.locator('#ws-source');
const headline = () => lab.page.locator('#ws-headline');

/** Press Check and wait for its verdict (or refusal); returns the verdict's code. */
async function check() {
  await lab.page.locator('#ws-check').click();
  await lab.page.waitForFunction(() => {
    const h = document.querySelector('#ws-headline');
    const busy = document.querySelector('#ws-check')?.getAttribute('aria-disabled');
    return h && h.dataset.verdict !== 'checking' && busy !== 'true';
  }, null, { timeout: 30_000 });
  return headline().getAttribute('data-verdict');
}

/** The exercise `id` in the list: its progress. */
const progress = (id) => lab.page.locator(`#ws-ex-${id}`).getAttribute('data-progress');

/** The page's own frames over its WebSocket, from now on. */
function sentFrames() {
  const sent = [];
  lab.page.on('websocket', (ws) => ws.on('framesent', (f) => sent.push(JSON.parse(f.payload))));
  return sent;
}

test('the starter oversells with a tape; a correct script passes with figures, and stays passed after a reload', async () => {
  await open();
  const reserve = (await hello()).exercises.find((e) => e.id === 'reserve');
  assert.ok(reserve, 'the server offers reserve');
  assert.equal(await lab.page.locator('body').getAttribute('data-workshop'), 'on');
  assert.equal((await lab.page.locator('#ws-title').textContent()).trim(), reserve.title);
  assert.equal(await editor().inputValue(), reserve.starter, 'the editor starts from the starter');
  assert.equal(await lab.page.locator('#ws-summary').getAttribute('aria-live'), 'polite');
  assert.ok(await lab.page.locator('.layout').isHidden(), 'the race is hidden');

  assert.equal(await check(), 'oversold');
  assert.equal((await headline().textContent()).trim(), 'Oversold');
  const rows = lab.page.locator('#ws-tape li');
  assert.ok((await rows.count()) >= 1, 'the tape shows at least one row');
  assert.match(await rows.first().textContent(), /buyer \d+/);
  assert.equal(await progress('reserve'), 'tried');
  // Show all reveals every call; Step and Show all are then spent.
  if ((await lab.page.locator('#ws-all').getAttribute('aria-disabled')) !== 'true') {
    await lab.page.locator('#ws-all').click();
    await lab.page.waitForFunction(() => document.querySelector('#ws-all').getAttribute('aria-disabled') === 'true');
  }
  await lab.page.locator('#ws-summary').evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await lab.page.screenshot({ path: path.join(shots, 'workshop-oversold-1280x720.png') });

  await editor().fill(SOLUTION);
  assert.equal(await check(), 'passed');
  assert.equal((await headline().textContent()).trim(), 'Passed');
  const figures = lab.page.locator('#ws-figures');
  assert.match(await figures.textContent(), /Calls a second.*\/s.*\/s/s);
  assert.match(await figures.textContent(), /Longest call inside Redis.*s.*s/s);
  assert.equal(await progress('reserve'), 'passed');
  assert.ok(await lab.page.locator('#ws-steps').isHidden(), 'no tape, no Step');
  await lab.page.evaluate(() => window.scrollTo(0, 0));
  await lab.page.screenshot({ path: path.join(shots, 'workshop-1280x720.png') });

  await lab.page.reload();
  await lab.page.locator('#ws-ex-reserve[data-progress="passed"]').waitFor({ timeout: 20_000 });
  assert.equal(await editor().inputValue(), SOLUTION, 'the script is kept too');
  assert.equal(await lab.page.locator('#ws-ex-reserve').getAttribute('aria-current'), 'true');

  for (const [size, name] of [
    [FULL_HD, 'workshop-1920x1080.png'],
    [NARROW, 'workshop-390x844.png'],
  ]) {
    await lab.page.setViewportSize(size);
    assert.equal(await check(), 'passed');
    const overflow = await lab.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `nothing wider than the window at ${size.width}px (${overflow}px over)`);
    await lab.page.evaluate(() => window.scrollTo(0, 0));
    await lab.page.screenshot({ path: path.join(shots, name), fullPage: size === NARROW });
  }
});

test('Tab types two spaces and Escape then Tab leaves; hints come one at a time; Reset; the race keys stay off', async () => {
  const sent = sentFrames();
  await open('?view=workshop&exercise=reserve');
  const starter = (await hello()).exercises.find((e) => e.id === 'reserve').starter;
  await lab.page.locator('[data-act="reset"]').click();
  await lab.page.waitForFunction((s) => document.querySelector('#ws-source').value === s, starter);

  await editor().focus();
  await lab.page.keyboard.press('Control+Home');
  await lab.page.keyboard.press('Tab');
  assert.equal(await editor().inputValue(), `  ${starter}`, 'two spaces at the caret');
  assert.ok(await editor().evaluate((el) => document.activeElement === el), 'Tab stays in the editor');
  // The page followed the keys too: the text behind the editor is the editor's.
  await lab.page.waitForFunction(() => document.querySelector('#ws-copy').textContent === `${document.querySelector('#ws-source').value} `);
  await lab.page.keyboard.press('Control+z');
  assert.equal(await editor().inputValue(), starter, 'Undo takes the two spaces back');
  await lab.page.waitForFunction((s) => document.querySelector('#ws-copy').textContent === `${s} `, starter);
  await lab.page.keyboard.press('Escape');
  await lab.page.keyboard.press('Tab');
  assert.ok(await editor().evaluate((el) => document.activeElement !== el), 'Escape then Tab leaves');
  // The line numbers follow the text.
  const lines = starter.split('\n').length;
  assert.equal((await lab.page.locator('#ws-gutter').textContent()).split('\n').length, lines);

  const hint = lab.page.locator('#ws-hint');
  const total = (await hello()).exercises.find((e) => e.id === 'reserve').hints.length;
  for (let n = 1; n <= total; n += 1) {
    await hint.click();
    await lab.page.waitForFunction((n) => document.querySelectorAll('.ws-hints li').length === n, n);
  }
  assert.equal(await hint.getAttribute('aria-disabled'), 'true');
  assert.equal((await hint.textContent()).trim(), 'No more hints');

  // A race key on the workshop starts nothing.
  await lab.page.locator('#ws-heading').click();
  await lab.page.keyboard.press('n');
  await lab.page.waitForTimeout(300);
  assert.deepEqual(sent.filter((f) => f.type === 'start_run'), [], 'N started no run');
});

test('Export and Import carry the scripts and the progress to another browser', async () => {
  await open('?view=workshop&exercise=reserve');
  await editor().fill(SOLUTION);
  assert.equal(await check(), 'passed');
  const [download] = await Promise.all([lab.page.waitForEvent('download'), lab.page.locator('[data-act="export"]').click()]);
  const file = path.join(scratch, download.suggestedFilename());
  await download.saveAs(file);
  assert.equal(download.suggestedFilename(), 'oversold-workshop.json');
  const book = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(book.format, 'oversold-workshop');
  assert.deepEqual(book.exercises.find((e) => e.id === 'reserve'), { id: 'reserve', progress: 'passed', script: SOLUTION });

  // Another browser: nothing kept.
  await lab.page.evaluate(() => localStorage.removeItem('oversold.workshop'));
  await open('?view=workshop&exercise=reserve');
  assert.equal(await progress('reserve'), 'not_tried');
  await lab.page.locator('[data-act="import"]').setInputFiles(file);
  await lab.page.locator('#ws-ex-reserve[data-progress="passed"]').waitFor();
  assert.match(await lab.page.locator('#ws-note').textContent(), /^Imported \d+ exercises? from the file\.$/);
  assert.equal(await editor().inputValue(), SOLUTION);
  // Not a workshop file: said, and nothing changes.
  await lab.page.locator('[data-act="import"]').setInputFiles({ name: 'run.json', mimeType: 'application/json', buffer: Buffer.from('{"format":"oversold-run"}') });
  await lab.page.waitForFunction(() => document.querySelector('#ws-note').textContent.startsWith('This is not an oversold workshop file'));
  assert.equal(await progress('reserve'), 'passed');
});

test('the header link opens the workshop page and its own link goes back to the race, the address following', async () => {
  await lab.page.setViewportSize(HD);
  await lab.page.goto(lab.server.url);
  await lab.page.locator('.layout').waitFor();
  const link = byTestId('workshop-link');
  assert.equal((await link.innerText()).trim(), 'Workshop');
  await link.click();
  await lab.page.locator('#ws-title').waitFor({ timeout: 20_000 });
  assert.equal(await lab.page.locator('body').getAttribute('data-workshop'), 'on');
  assert.equal(await lab.page.locator('.layout').count(), 0, 'the workshop page carries none of the lab');
  assert.match(lab.page.url(), /\?view=workshop&exercise=\w+$/);
  await lab.page.locator('.ws-ex').nth(1).click();
  await lab.page.waitForFunction(() => document.querySelectorAll('.ws-ex')[1].getAttribute('aria-current') === 'true');
  assert.ok(await lab.page.locator('.ws-ex').nth(1).evaluate((el) => document.activeElement === el), 'the keyboard stays on the choice');
  const second = await lab.page.locator('.ws-ex').nth(1).getAttribute('data-exercise');
  assert.ok(lab.page.url().endsWith(`exercise=${second}`));
  // A reload keeps the exercise the address names.
  await lab.page.reload();
  await lab.page.waitForFunction((id) => document.querySelector(`#ws-ex-${id}`)?.getAttribute('aria-current') === 'true', second);
  const back = byTestId('race-link');
  assert.equal((await back.innerText()).trim(), 'Back to the race');
  await back.click();
  await lab.page.locator('.layout').waitFor();
  assert.equal(new URL(lab.page.url()).search, '');
});
