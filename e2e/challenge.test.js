// A room's workshop challenge in a real browser: the presenter starts a room on the lab, opens
// its challenge page (the workshop page, presenting) and opens `reserve` for the room; two
// participants on laptops of their own (their own browser contexts) submit under nicknames, one
// the starter (it oversells) and one a fix (it passes); the projector's leaderboard ranks both
// live, and the presenter puts the failing script's tape on every screen.
//
//   cargo build -p oversold && scripts/frontend.sh --browser && (cd e2e && node --test challenge.test.js)
//
// Screenshots land in e2e/screenshots/ (gitignored): challenge-*.png.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { WIDE, fresh, lab, setUp, shots, tearDown } from './harness.js';

const HD = { width: 1280, height: 720 };
const FULL_HD = { width: 1920, height: 1080 };
let laptops = null;
const pageErrors = [];

/** A correct `reserve`, in another style than the reference. */
const FIX = `local left = redis.call('DECRBY', KEYS[1], ARGV[1])
if left < 0 then
  redis.call('INCRBY', KEYS[1], ARGV[1])
  return 0
end
return 1
`;

before(setUp);
after(async () => {
  await laptops?.close().catch(() => {});
  await tearDown();
  assert.deepEqual(pageErrors, [], 'a page threw');
});

/** A participant's laptop: its own browser context, on the room's workshop page. */
async function laptop(code) {
  const context = await laptops.newContext({ viewport: HD });
  const page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await page.goto(`${lab.server.url}/?view=workshop&room=${code}`);
  await page.locator('#ws-room-take:not([hidden])').waitFor({ timeout: 20_000 });
  return page;
}

/** Submit the editor's text as `nickname` on `page`; wait for this laptop's verdict. */
async function submit(page, nickname, source) {
  if (source !== undefined) await page.locator('#ws-source').fill(source);
  await page.locator('#ws-nick').fill(nickname);
  await page.locator('#ws-submit').click();
  await page.waitForFunction(() => {
    const h = document.querySelector('#ws-headline');
    return h && h.dataset.verdict !== 'checking' && document.querySelector('#ws-submit').getAttribute('aria-disabled') !== 'true';
  }, null, { timeout: 30_000 });
  return page.locator('#ws-headline').getAttribute('data-verdict');
}

/** The leaderboard rows on `page`: [nickname, verdict code]. */
async function board(page) {
  return page.locator('#ws-board-table tr[data-participant]').evaluateAll((rows) =>
    rows.map((r) => [r.querySelector('.ws-nick').textContent, r.querySelector('[data-verdict]').dataset.verdict]));
}

test('a presenter opens reserve for the room, two laptops submit, the board ranks them and the tape goes on every screen', async () => {
  laptops = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  lab.page.on('pageerror', (err) => pageErrors.push(err.message));
  await fresh(WIDE);
  await lab.page.getByTestId('create-room').click();
  const code = (await lab.page.getByTestId('room-code').textContent()).trim();
  const href = await lab.page.getByTestId('room-challenge').getAttribute('href');
  assert.equal(href, `/?view=workshop&room=${code}&as=presenter`);

  // The projector: the same browser (it keeps the room's token), on the challenge page.
  const projector = lab.page;
  await projector.setViewportSize(FULL_HD);
  await projector.goto(`${lab.server.url}${href}&exercise=reserve`);
  await projector.locator('#ws-room-present:not([hidden])').waitFor({ timeout: 20_000 });
  assert.match(await projector.locator('#ws-room-title').textContent(), new RegExp(`^Room ${code}: no exercise open yet$`));
  await projector.locator('#ws-ex-reserve[aria-current="true"]').waitFor();
  await projector.locator('#ws-open').click();
  await projector.waitForFunction(() => !document.querySelector('#ws-room-title').textContent.endsWith('no exercise open yet'));
  const title = (await projector.locator('#ws-room-title').textContent()).trim();

  // Two laptops; each sees the open exercise, chosen for it.
  const ada = await laptop(code);
  const bob = await laptop(code);
  for (const p of [ada, bob]) {
    await p.waitForFunction((t) => document.querySelector('#ws-room-title')?.textContent.trim() === t, title);
    await p.locator('#ws-ex-reserve[aria-current="true"]').waitFor();
    assert.equal(await p.locator('[data-act="show"]').count(), 0, 'a participant cannot put tapes on screen');
  }
  // A nickname is needed, and said so, before anything is sent.
  await ada.locator('#ws-nick').fill('');
  await ada.locator('#ws-submit').click();
  await ada.waitForFunction(() => document.querySelector('#ws-room-note').textContent.startsWith('Pick a nickname'));

  assert.equal(await submit(ada, '<b>ada</b>'), 'oversold', "the starter oversells");
  await ada.locator('#ws-tape li.ws-call').first().waitFor();
  assert.equal(await submit(bob, 'bob', FIX), 'passed');

  // The projector ranks the pass first; the nickname is text, not markup.
  await projector.waitForFunction(() => document.querySelectorAll('#ws-board-table tr[data-participant]').length === 2);
  assert.deepEqual(await board(projector), [['bob', 'passed'], ['<b>ada</b>', 'oversold']]);
  assert.equal(await projector.locator('#ws-board-table b').count(), 0);
  // The laptops see the same board.
  await ada.waitForFunction(() => document.querySelectorAll('#ws-board-table tr[data-participant]').length === 2);
  assert.deepEqual(await board(ada), await board(projector));
  await projector.screenshot({ path: path.join(shots, 'challenge-board-1920x1080.png') });

  // The presenter puts ada's tape on every screen.
  await projector.locator('#ws-board-table tr[data-passed="false"] [data-act="show"]').click();
  for (const p of [projector, ada, bob]) {
    await p.locator('#ws-shown-tape li.ws-call').first().waitFor({ timeout: 10_000 });
    assert.equal((await p.locator('#ws-shown-title').textContent()).trim(), "On every screen: <b>ada</b>'s script");
  }
  await projector.screenshot({ path: path.join(shots, 'challenge-tape-1920x1080.png') });
  await projector.setViewportSize(HD);
  await projector.screenshot({ path: path.join(shots, 'challenge-tape-1280x720.png') });
  await bob.setViewportSize({ width: 390, height: 844 });
  await bob.screenshot({ path: path.join(shots, 'challenge-laptop-390x844.png'), fullPage: true });

  // A laptop that reloads catches up: the exercise and both entries.
  await ada.reload();
  await ada.waitForFunction(() => document.querySelectorAll('#ws-board-table tr[data-participant]').length === 2, null, { timeout: 20_000 });
  assert.equal((await ada.locator('#ws-room-title').textContent()).trim(), title);
});
