#!/usr/bin/env node
// static/phone.css: the rules of static/style.css that can style the phone page, nothing else.
//
//   node scripts/phone-css.js            # rewrite static/phone.css (scripts/frontend.sh does)
//   node scripts/phone-css.js --check    # exit 1 when static/phone.css is not what it would write
//
// The phone downloads its stylesheet before its first paint, on the slowest link in the room;
// the lab's whole stylesheet is 15 KB gzipped, the phone's rules a fraction of it. One source
// still: style.css is the only file anyone edits, and this keeps a rule when every class,
// element and id its selector needs is one the phone page can have (the lists below), with
// each theme's variables the kept rules use and the keyframes they name. `:not(...)` asks for
// nothing, so it is ignored. e2e/rooms.test.js compares the phone's computed styles under
// this file and under style.css, in both themes and both views: a class the phone gains and
// this list lacks fails there.
'use strict';

const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const source = path.join(root, 'static', 'style.css');
const target = path.join(root, 'static', 'phone.css');

// Every class the phone page (phone.html's first paint, components/room/phone.rs, counters.rs,
// inventory.rs, notices.rs, panic_hook.rs, phone_app.rs, model/tiles.rs) puts on an element.
const CLASSES = new Set([
  'room-phone', 'room-phone-head', 'room-brand', 'room-code', 'muted', 'bad',
  'notices', 'notice', 'notice-code', 'dismiss',
  'buy-button', 'buy-verdict', 'buy-why', 'buy-buyer',
  'counters', 'stock-counter', 'negative', 'caption', 'stock-figure', 'big', 'of', 'small',
  'should-be', 'stat', 'lit', 'num', 'run-verdict', 'badge',
  'inventory', 'section-title', 'legend-phone', 'phantom-title',
  'tiles', 'tiles-l', 'tiles-m', 'tiles-s', 'tiles-xs', 'phantoms',
  'tile', 'sold', 'phantom', 'group', 'phone', 'fill',
  'panic-banner',
]);
// Every element it has.
const ELEMENTS = new Set([
  'html', 'body', 'main', 'header', 'h1', 'h2', 'p', 'span', 'div', 'button', 'a', 'i',
  'strong', 'noscript',
]);
// No id of the phone's is styled (`#boot` is only found by the app, to remove it).
const IDS = new Set([]);

/** `/* … *\/` comments out. */
const stripComments = (css) => css.replace(/\/\*[\s\S]*?\*\//g, '');

/** Top-level blocks: `{ prelude, body }` for rules and at-rules, brace-matched. */
function blocks(css) {
  const out = [];
  let i = 0;
  while (i < css.length) {
    const open = css.indexOf('{', i);
    if (open < 0) break;
    let depth = 1;
    let j = open + 1;
    for (; j < css.length && depth > 0; j += 1) {
      if (css[j] === '{') depth += 1;
      else if (css[j] === '}') depth -= 1;
    }
    out.push({ prelude: css.slice(i, open).trim(), body: css.slice(open + 1, j - 1) });
    i = j;
  }
  return out;
}

/** `s` without its `:not(...)` parts (balanced parentheses). */
function withoutNot(s) {
  let out = '';
  for (let i = 0; i < s.length; ) {
    if (s.startsWith(':not(', i)) {
      let depth = 1;
      let j = i + 5;
      for (; j < s.length && depth > 0; j += 1) {
        if (s[j] === '(') depth += 1;
        else if (s[j] === ')') depth -= 1;
      }
      i = j;
    } else {
      out += s[i];
      i += 1;
    }
  }
  return out;
}

/** Can this one selector (no commas) match on the phone page? */
function phoneMatches(selector) {
  const s = withoutNot(selector)
    .replace(/\[[^\]]*\]/g, '') // attributes ask for no class or element
    .replace(/::?[a-z-]+/g, ' '); // pseudo-classes and -elements
  for (const m of s.matchAll(/\.([A-Za-z0-9_-]+)/g)) if (!CLASSES.has(m[1])) return false;
  for (const m of s.matchAll(/#([A-Za-z0-9_-]+)/g)) if (!IDS.has(m[1])) return false;
  for (const m of s.replace(/[.#][A-Za-z0-9_-]+/g, ' ').matchAll(/(^|[\s>+~(])([a-z][a-z0-9]*)/g)) {
    if (!ELEMENTS.has(m[2])) return false;
  }
  return true;
}

/** Split a selector list on its top-level commas. */
function selectors(prelude) {
  const out = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < prelude.length; i += 1) {
    if (prelude[i] === '(') depth += 1;
    else if (prelude[i] === ')') depth -= 1;
    else if (prelude[i] === ',' && depth === 0) {
      out.push(prelude.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(prelude.slice(start).trim());
  return out;
}

/** The declarations of a rule body (split on the semicolons outside quotes and parentheses),
 *  each tidied to one line. */
function declarations(body) {
  const out = [];
  let depth = 0;
  let quote = null;
  let start = 0;
  for (let i = 0; i < body.length; i += 1) {
    const c = body[i];
    if (quote) {
      if (c === quote && body[i - 1] !== '\\') quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(') depth += 1;
    else if (c === ')') depth -= 1;
    else if (c === ';' && depth === 0) {
      out.push(body.slice(start, i));
      start = i + 1;
    }
  }
  out.push(body.slice(start));
  return out.map((d) => d.trim().replace(/\s+/g, ' ')).filter(Boolean);
}

/** The rules (and @media blocks) of `css` the phone can use, as `{ selectors, decls }` or
 *  `{ media, rules }`; theme blocks and keyframes are collected apart. */
function pick(css, out) {
  for (const { prelude, body } of blocks(css)) {
    if (prelude.startsWith('@keyframes')) {
      out.keyframes.set(prelude.split(/\s+/)[1], `${prelude} {${body.replace(/\s+/g, ' ')}}`);
    } else if (prelude.startsWith('@media') || prelude.startsWith('@supports')) {
      const inner = { rules: [], keyframes: out.keyframes };
      pick(body, inner);
      if (inner.rules.length) out.rules.push({ media: prelude.replace(/\s+/g, ' '), rules: inner.rules });
    } else if (prelude.startsWith('@')) {
      throw new Error(`phone-css.js: an at-rule it does not know: ${prelude}`);
    } else {
      const kept = selectors(prelude).filter(phoneMatches);
      if (kept.length) out.rules.push({ selectors: kept, decls: declarations(body) });
    }
  }
  return out;
}

/** Custom properties a declaration list uses. */
const usedVars = (decls) => [...decls.join(';').matchAll(/var\(\s*(--[A-Za-z0-9_-]+)/g)].map((m) => m[1]);

function build(css) {
  const picked = pick(stripComments(css), { rules: [], keyframes: new Map() });
  // Variables: the ones the kept rules use, and the ones those use, in every block that
  // defines them (:root and each theme).
  const flat = (rules) => rules.flatMap((r) => (r.media ? flat(r.rules) : [r]));
  const all = flat(picked.rules);
  const defines = (r) => r.decls.some((d) => d.startsWith('--'));
  const used = new Set();
  const visit = (name) => {
    if (used.has(name)) return;
    used.add(name);
    for (const r of all.filter(defines)) {
      for (const d of r.decls) if (d.startsWith(`${name}:`)) usedVars([d]).forEach(visit);
    }
  };
  for (const r of all) {
    for (const d of r.decls) if (!d.startsWith('--')) usedVars([d]).forEach(visit);
  }
  // Keyframes the kept rules name.
  const names = new Set();
  for (const r of all) {
    for (const d of r.decls) {
      const m = d.match(/^animation(?:-name)?\s*:\s*(.*)$/);
      if (m) m[1].split(/[\s,]+/).forEach((w) => names.add(w));
    }
  }
  const print = (rules, indent) =>
    rules
      .map((r) => {
        if (r.media) return `${indent}${r.media} {\n${print(r.rules, `${indent}  `)}\n${indent}}`;
        const decls = r.decls.filter((d) => !d.startsWith('--') || used.has(d.split(':')[0].trim()));
        if (!decls.length) return null;
        return `${indent}${r.selectors.join(', ')} { ${decls.join('; ')}; }`;
      })
      .filter(Boolean)
      .join('\n');
  const keyframes = [...picked.keyframes].filter(([name]) => names.has(name)).map(([, text]) => text);
  return [
    '/* Generated by scripts/phone-css.js from style.css: the rules that can style the phone page.',
    '   Edit style.css, not this file (scripts/frontend.sh rewrites it). */',
    print(picked.rules, ''),
    ...keyframes,
    '',
  ].join('\n');
}

const text = build(fs.readFileSync(source, 'utf8'));
if (process.argv.includes('--check')) {
  const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
  if (current !== text) {
    console.error('static/phone.css is not what scripts/phone-css.js writes from style.css: run it');
    process.exit(1);
  }
} else {
  fs.writeFileSync(target, text);
}
