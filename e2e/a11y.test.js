// Accessibility: axe-core (npm, run inside the page) on the lab (fresh, and after a naive run
// oversold), the workshop (after a failing check), a phone (after its buy) and a spectator
// screen (on a phone, and on a projector), in the dark and the light theme: no serious or
// critical violation of WCAG 2 A/AA or axe's best practices. Each violation is printed with
// where it is before the test fails.
//
//   cargo build -p oversold && scripts/frontend.sh --browser && (cd e2e && node --test a11y.test.js)

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { byTestId, fresh, lab, run, setUp, tearDown } from './harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const AXE = readFileSync(path.join(here, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const HD = { width: 1280, height: 720 };
let phones = null;

before(setUp);
after(async () => {
  await phones?.close().catch(() => {});
  await tearDown();
});

/** axe on `page` as it stands: the serious and critical violations, printed. */
async function audit(page, what) {
  // Let the tiles' arrival animation end: mid-fade, a colour is not the one it settles on.
  await page.waitForTimeout(500);
  // Evaluated through the DevTools protocol, so the page's script policy does not apply.
  await page.evaluate(AXE);
  const result = await page.evaluate(() =>
    window.axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'best-practice'] }),
  );
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  for (const v of bad) {
    const where = v.nodes.slice(0, 4).map((n) => `${n.target.join(' ')} (${n.any[0]?.message ?? n.failureSummary})`);
    console.log(`${what}: ${v.impact} ${v.id} x${v.nodes.length}: ${v.help}\n    ${where.join('\n    ')}`);
  }
  return bad.map((v) => `${v.id} x${v.nodes.length}`);
}

/** Set the theme the page keeps in localStorage, and reload at `url`. */
async function themed(page, url, theme) {
  // A clean slate (no room kept from the other theme's test), in this theme.
  await page.evaluate((t) => { localStorage.clear(); localStorage.setItem('oversold.theme', t); }, theme);
  await page.goto(url);
}

for (const theme of ['dark', 'light']) {
  test(`the lab, the workshop, a phone and a spectator screen pass axe (${theme} theme)`, async () => {
    await fresh(HD);
    await themed(lab.page, lab.server.url, theme);
    await lab.page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    await lab.page.waitForFunction(() => document.querySelectorAll('button.run.primary:not([disabled])').length >= 2);
    const found = {};
    found.lab = await audit(lab.page, `lab (${theme})`);
    await run('run-naive');
    found.labAfterNaive = await audit(lab.page, `lab after a naive run (${theme})`);

    await lab.page.goto(`${lab.server.url}/?view=workshop&exercise=reserve`);
    await lab.page.locator('#ws-title').waitFor();
    await lab.page.locator('#ws-check').click();
    await lab.page.locator('#ws-tape li.ws-call').first().waitFor({ timeout: 30_000 });
    found.workshop = await audit(lab.page, `workshop after a failing check (${theme})`);

    // A room: the presenter's panel, a phone after its buy, a spectator screen.
    await lab.page.goto(lab.server.url);
    await byTestId('create-room').click();
    const joinUrl = (await byTestId('room-url').textContent()).trim();
    await byTestId('open-sale').click();
    found.presenter = await audit(lab.page, `presenter (${theme})`);
    phones ??= await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
    const context = await phones.newContext({ viewport: { width: 390, height: 844 } });
    const phone = await context.newPage();
    await phone.goto(joinUrl);
    await themed(phone, joinUrl, theme);
    await phone.locator('[data-testid="buy"]:not([disabled])').waitFor({ timeout: 20_000 });
    await phone.getByTestId('buy').click();
    await phone.getByTestId('buy-verdict').filter({ hasText: /\S/ }).waitFor();
    found.phone = await audit(phone, `phone after its buy (${theme})`);
    // The spectator screen (the lab's page drawing the room): stacked on a phone, and the
    // projector's one screen at 1280x720.
    await phone.goto(`${joinUrl}?as=spectator`);
    await phone.getByTestId('spectator').waitFor();
    await phone.getByTestId('room-sale').filter({ hasText: 'Sale open' }).waitFor();
    found.spectator = await audit(phone, `spectator (${theme})`);
    await phone.setViewportSize(HD);
    await phone.waitForFunction(() => document.body.dataset.view === 'stage');
    found.spectatorProjector = await audit(phone, `spectator at 1280x720 (${theme})`);
    await context.close();
    await byTestId('close-sale').click();

    for (const [where, rules] of Object.entries(found)) {
      assert.deepEqual(rules, [], `${where} (${theme}): serious or critical axe violations`);
    }
  });
}
