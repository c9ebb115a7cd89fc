// The Redis tape and step-through mode in a real browser, against the real server and a real
// Redis (the harness starts both): the tape's caption says the counters' numbers for every
// Redis strategy, the race timeline prints no number the tape does not, a visitor can drive
// naive into an oversell by hand (and cannot split Lua), and a 10,000-buyer run stays smooth.
//
//   cargo build -p oversold && (cd e2e && npm test)

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { NARROW, WIDE, byTestId, fresh, hello, knobs, lab, num, run, setUp, shots, tearDown } from './harness.js';

before(setUp);
after(tearDown);

/** Every number in `text`, commas dropped: "6,937 of 10 units" -> [6937, 10]. */
function numbers(text) {
  return [...text.matchAll(/-?\d[\d,]*/g)].map((m) => Number(m[0].replace(/,/g, '')));
}

/** The tape caption's numbers line: units sold, stock, oversold, and where the counter ends
 *  (absent when the replies cannot fix it). */
async function tapeNumbers() {
  const caption = (await byTestId('tape-caption').textContent()).trim();
  // A run's tape: "7 of 10 units sold, 0 oversold"; step-through's: "2 units sold of 1 in
  // stock: 1 oversold" ("…, none oversold").
  const m =
    caption.match(/^(?:So far: )?(-?[\d,]+) of ([\d,]+) units? sold, ([\d,]+) oversold(?:; the counter (?:ends|is) at (-?[\d,]+))?/) ??
    caption.match(/^Step-through: (-?[\d,]+) units? sold of ([\d,]+) in stock[:,] ([\d,]+|none) oversold(?:; the counter (?:ends|is) at (-?[\d,]+))?/);
  assert.ok(m, `the tape caption starts with its numbers: ${caption}`);
  const n = (s) => (s === undefined ? undefined : s === 'none' ? 0 : Number(s.replace(/,/g, '')));
  return { caption, sold: n(m[1]), stock: n(m[2]), oversold: n(m[3]), ends: n(m[4]) };
}

/** The tape's numbers equal the counters above it. */
async function assertTapeAgrees(label) {
  const t = await tapeNumbers();
  assert.equal(t.sold, await num('units-sold'), `${label}: units sold\n${t.caption}`);
  assert.equal(t.oversold, await num('oversold-units'), `${label}: oversold units\n${t.caption}`);
  if (t.ends !== undefined) {
    assert.equal(t.ends, await num('stock-remaining'), `${label}: the counter\n${t.caption}`);
  }
  return t;
}

/** Every number the timeline's caption prints (but where its run-out marker sits on the clock)
 *  is one the tape's caption prints too. */
async function assertTimelineAgrees(label, tape) {
  const line = (await byTestId('timeline-caption').textContent()).trim();
  const counts = numbers(line.replace(/ at [\d.]+ (µs|ms|s)/, ''));
  const said = new Set(numbers(tape.caption));
  for (const n of counts) assert.ok(said.has(n), `${label}: the timeline says ${n}, the tape does not\n${line}\n${tape.caption}`);
  return line;
}

/** Redis strategies this server can run that draw a tape (a `database` one keeps its stock
 *  in PostgreSQL; a `story` one, like `sharded_sum`'s sum over four keys, has no point in
 *  Redis's order to draw). */
async function redisStrategies() {
  const h = await hello();
  return h.strategies
    .filter((s) => s.category !== 'database' && s.available && s.tape?.kind !== 'story')
    .map((s) => s.name);
}

/** Wait until the tape canvas has drawn something for the page's current state. */
async function tapeDrawn() {
  await lab.page.waitForFunction(() => {
    const c = document.querySelector('[data-testid="tape"] canvas');
    return c && c.width > 0 && c.height > 0;
  });
}

test('the tape caption says the counters\' numbers, for every Redis strategy', async () => {
  await fresh();
  const names = await redisStrategies();
  assert.ok(names.includes('naive') && names.includes('lua'), `strategies: ${names}`);
  for (const name of names) {
    await run(`run-${name}`);
    await tapeDrawn();
    const t = await assertTapeAgrees(name);
    assert.equal(t.stock, 10, `${name}: the caption names the stock`);
    const line = await assertTimelineAgrees(name, t);
    console.log(`${name}: ${t.caption}\n  timeline: ${line}`);
  }
});

test('naive runs of every shape: spread arrivals, random quantities, one app server', async () => {
  await fresh();
  const shapes = [
    ['defaults', {}],
    ['arrivals spread over 300 ms', { 'spread-input': 300 }],
    ['random quantities 1 to 3', { 'spread-input': 0, 'qty-input': 3 }],
    ['one app server, 200 buyers', { 'qty-input': 1, 'app-servers-input': 1, 'buyers-input': 200 }],
  ];
  for (const [label, values] of shapes) {
    await knobs(values);
    if (label.startsWith('random')) await byTestId('random-qty').check();
    if (label.startsWith('one app')) await byTestId('random-qty').uncheck();
    await run('run-naive');
    await tapeDrawn();
    const t = await assertTapeAgrees(`naive, ${label}`);
    await assertTimelineAgrees(`naive, ${label}`, t);
    console.log(`naive, ${label}: ${t.caption}`);
    if (label === 'defaults') {
      await byTestId('tape').scrollIntoViewIfNeeded();
      await byTestId('tape').screenshot({ path: path.join(shots, 'wide-tape-naive.png') });
    }
  }
  // The last one on a phone: one app server, so one lane of 200 buyers' commands.
  const tape = byTestId('tape');
  await lab.page.setViewportSize(NARROW);
  await tapeDrawn();
  // The tape scrolls sideways inside its panel rather than widening the page.
  const widths = await lab.page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    panel: document.querySelector('[data-testid="tape"]').getBoundingClientRect().width,
  }));
  assert.ok(widths.page <= 390 && widths.panel <= 390, `nothing wider than the phone: ${JSON.stringify(widths)}`);
  await tape.scrollIntoViewIfNeeded();
  await tape.screenshot({ path: path.join(shots, 'narrow-tape-naive.png') });
  await lab.page.setViewportSize(WIDE);
});

/** The step panel's log length: how many commands went through. */
async function logLength() {
  return Number(await byTestId('step-panel').getAttribute('data-log-len'));
}

/** Press buyer `n` (by its button, or by key) and wait for the command to go through. */
async function step(n, { key = false } = {}) {
  const before = await logLength();
  if (key) await lab.page.keyboard.press(String(n));
  else await byTestId(`step-buyer-${n}`).click();
  await lab.page.waitForFunction(
    (before) => Number(document.querySelector('[data-testid="step-panel"]').getAttribute('data-log-len')) > before,
    before,
  );
}

/** Open (or reopen) step mode on `strategy`, and wait for a fresh session. */
async function stepOn(strategy) {
  await byTestId('step-strategy').selectOption(strategy);
  await lab.page.waitForFunction(
    (s) => {
      const p = document.querySelector('[data-testid="step-panel"]');
      const sel = document.querySelector('[data-testid="step-strategy"]');
      return p?.getAttribute('data-log-len') === '0' && sel?.value === s;
    },
    strategy,
  );
}

test('step-through\'s frames are read by a chunk fetched with the first of them; a race and a comparison never fetch it', async () => {
  const fetched = [];
  const seen = (request) => fetched.push(new URL(request.url()).pathname);
  lab.page.on('request', seen);
  try {
    await fresh();
    const later = () => fetched.filter((p) => p.startsWith('/split_later_frames_')).length;
    await run('run-naive');
    await byTestId('run-compare').click();
    await lab.page.locator('[data-testid="scoreboard"][data-state="finished"]').waitFor({ timeout: 120_000 });
    assert.equal(later(), 0, 'a race and a comparison read every frame with the first download');
    await byTestId('step-mode').click();
    await lab.page.locator('[data-testid="step-panel"][data-open="true"]').waitFor();
    // The step state arrived and was read by the fetched chunk; a step's frames after it too.
    await lab.page.locator('[data-testid="step-buyer-1"]:not([disabled])').waitFor();
    assert.equal(await num('stock-remaining'), 1);
    await step(1);
    assert.equal(await logLength(), 1);
    assert.equal(later(), 1, 'fetched once, with step-through\'s first frame');
  } finally {
    lab.page.off('request', seen);
  }
});

test('step-through: naive oversold by hand, Lua cannot be split, keys and reset', async () => {
  await fresh();
  const h = await hello();
  await byTestId('step-mode').click();
  await lab.page.locator('[data-testid="step-panel"][data-open="true"]').waitFor();
  // It opens on the first featured strategy, with one unit and two buyers.
  const first = h.strategies.find((s) => s.featured).name;
  assert.equal(await byTestId('step-strategy').inputValue(), first);
  assert.equal(await byTestId('step-stock').inputValue(), '1');
  assert.equal(await lab.page.locator('[data-testid^="step-buyer-"]').count(), 2);
  assert.equal(await num('stock-remaining'), 1, 'the counter is the real key');
  // The picker offers only what the server says it can step (no PostgreSQL, no redlock).
  const offered = await byTestId('step-strategy').locator('option').evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(offered, h.strategies.filter((s) => !s.step_refusal).map((s) => s.name));
  assert.ok(!offered.includes('redlock'), 'redlock votes on three lock masters at once: not steppable');
  assert.ok(h.strategies.find((s) => s.name === 'redlock')?.step_refusal, 'hello says why');

  // Naive: both read 1 before either writes; the second write sells a unit that did not exist.
  await stepOn('naive');
  assert.match(await byTestId('step-buyer-1').textContent(), /GET stock/);
  for (const b of [1, 2, 1, 2]) await step(b);
  assert.equal(await num('stock-remaining'), -1);
  assert.equal(await num('units-sold'), 2);
  assert.equal(await num('oversold-units'), 1);
  const said = await byTestId('step-story').textContent();
  assert.match(said, /buyer 2 sold a unit that did not exist: buyers 1 and 2 both read 1 before either wrote/);
  assert.equal(await byTestId('step-buyer-2').isDisabled(), true, 'a done buyer cannot move');
  const t = await assertTapeAgrees('step naive');
  assert.equal(t.ends, -1);
  await tapeDrawn();
  await byTestId('step-panel').screenshot({ path: path.join(shots, 'wide-step-naive.png') });
  await byTestId('tape').screenshot({ path: path.join(shots, 'wide-step-tape-naive.png') });

  // Reset: fresh keys, buyers back at the start.
  await byTestId('step-reset').click();
  await lab.page.waitForFunction(() => document.querySelector('[data-testid="step-panel"]').getAttribute('data-log-len') === '0');
  assert.equal(await num('stock-remaining'), 1);
  assert.equal(await byTestId('step-story').textContent(), '');

  // Keys 1 and 2 press the buttons; not while typing in a field.
  await step(1, { key: true });
  await step(2, { key: true });
  assert.equal(await logLength(), 2);
  await byTestId('step-stock').focus();
  await lab.page.keyboard.press('1');
  await lab.page.waitForTimeout(300);
  assert.equal(await logLength(), 2, 'a key typed into a field moves no buyer');
  // (The digit went into the field: put the stock back before leaving it.)
  await byTestId('step-stock').fill('1');
  await byTestId('step-stock').press('Tab');

  // Lua: one command per buyer; the check and the write cannot be split. One unit, one sale.
  await stepOn('lua');
  await step(1);
  assert.equal(await byTestId('step-buyer-1').isDisabled(), true, 'buyer 1 is done after one click');
  await step(2);
  assert.equal(await byTestId('step-buyer-2').isDisabled(), true, 'buyer 2 is done after one click');
  assert.equal(await num('units-sold'), 1);
  assert.equal(await num('stock-remaining'), 0);
  assert.equal(await num('oversold-units'), 0);
  const reserved = await lab.page.locator('[data-testid^="step-buyer-"][data-tone="reserved"]').count();
  assert.equal(reserved, 1, 'exactly one reserved');
  assert.match(await byTestId('step-story').textContent(), /checked and took in one command .*cannot be split/);
  await byTestId('step-panel').screenshot({ path: path.join(shots, 'wide-step-lua.png') });

  // WATCH: the second EXEC comes back nil, straight from Redis's reply.
  if (h.strategies.some((s) => s.name === 'watch')) {
    await stepOn('watch');
    for (const b of [1, 2, 1, 2, 1, 2]) await step(b);
    assert.match(await byTestId('step-story').textContent(), /EXEC came back nil/);
    assert.equal(await num('units-sold'), 1);
  }

  // On a phone: the same panel, the tape drawn beside it.
  await stepOn('naive');
  for (const b of [1, 2, 1, 2]) await step(b);
  await lab.page.setViewportSize(NARROW);
  await tapeDrawn();
  const panel = byTestId('step-panel');
  await panel.scrollIntoViewIfNeeded();
  await panel.screenshot({ path: path.join(shots, 'narrow-step-naive.png') });
  await byTestId('tape').scrollIntoViewIfNeeded();
  await byTestId('tape').screenshot({ path: path.join(shots, 'narrow-step-tape-naive.png') });
  await lab.page.setViewportSize(WIDE);

  // Leaving gives the page back to the runs.
  await byTestId('step-close').click();
  await lab.page.locator('[data-testid="step-panel"][data-open="false"]').waitFor();
  assert.equal(await num('stock-remaining'), 10, 'back to the form\'s stock');
});

test('10,000 buyers: the tape draws the race, folds the rest, and the page keeps its frames', async () => {
  await fresh();
  await knobs({ 'buyers-input': 10000 });
  // Count frames while the run streams: the longest gap between two is what a visitor feels.
  await lab.page.evaluate(() => {
    window.__frames = [];
    let last = performance.now();
    const tick = (t) => {
      window.__frames.push(t - last);
      last = t;
      if (!window.__stopFrames) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await run('run-naive', 60_000);
  const frames = await lab.page.evaluate(() => {
    window.__stopFrames = true;
    const f = window.__frames.slice(1).sort((a, b) => a - b);
    const at = (q) => f[Math.min(f.length - 1, Math.floor(q * f.length))];
    return { count: f.length, p50: at(0.5), p95: at(0.95), max: f[f.length - 1] };
  });
  await tapeDrawn();
  const canvas = lab.page.locator('[data-testid="tape"] canvas');
  const build = Number(await canvas.getAttribute('data-build-ms'));
  const draw = Number(await canvas.getAttribute('data-draw-ms'));
  console.log(
    `10,000 buyers: tape build ${build} ms, strip + scene + paint ${draw} ms; frames while streaming: ` +
      `${frames.count}, p50 ${frames.p50.toFixed(1)} ms, p95 ${frames.p95.toFixed(1)} ms, max ${frames.max.toFixed(1)} ms`,
  );
  assert.ok(build > 0 && build < 250, `the tape builds in well under a frame budget: ${build} ms`);
  assert.ok(draw > 0 && draw < 250, `and draws: ${draw} ms`);
  assert.ok(frames.max < 2_000, `no frame waited 2 s while 10,000 outcomes streamed: ${JSON.stringify(frames)}`);
  const t = await assertTapeAgrees('naive, 10,000 buyers');
  await assertTimelineAgrees('naive, 10,000 buyers', t);
  assert.match(await byTestId('tape-notes').textContent(), /later refusals? not shown/);
  assert.equal(await byTestId('tape').locator('canvas').count(), 1, 'one canvas, not a node per command');
  const tape = byTestId('tape');
  await tape.scrollIntoViewIfNeeded();
  await tape.screenshot({ path: path.join(shots, 'wide-tape-10k.png') });
});
