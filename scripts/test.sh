#!/usr/bin/env bash
# Everything CI runs, on a fresh Debian machine or a warm one: installs what is missing
# (each step skips what is there), then runs every test against real services.
#
#   scripts/test.sh            # all of it
#   scripts/test.sh --no-browser   # skip the wasm build and the Chromium test
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

browser=1
[ "${1:-}" = "--no-browser" ] && browser=0

# CI tests a fresh clone every time; keeping compiled dependencies outside the clone turns a
# warm run from a full rebuild into a few minutes. Cargo's fingerprints keep this correct.
if [ -n "${CI:-}" ] && [ -z "${CARGO_TARGET_DIR:-}" ]; then
  export CARGO_TARGET_DIR="$HOME/.cache/oversold/target"
fi
target_dir=${CARGO_TARGET_DIR:-$PWD/target}

ensure_redis_tools
ensure_postgres
ensure_wasm_target
command -v cc >/dev/null || apt_install build-essential pkg-config

# Chromium and the browser test's npm packages come from the network and the disk, not the
# CPU: on a fresh machine they install while the Rust code compiles (frontend.sh --browser
# below then finds them present).
browser_deps=
if [ "$browser" -eq 1 ] && { [ ! -x /usr/bin/chromium ] || [ ! -d e2e/node_modules ]; }; then
  deps_log=$(mktemp "${TMPDIR:-/tmp}/oversold-browser-deps.XXXXXX")
  (
    [ -x /usr/bin/chromium ] || apt_install chromium
    command -v npm >/dev/null || apt_install nodejs npm
    [ -d e2e/node_modules ] || (cd e2e && npm ci --no-audit --no-fund)
  ) >"$deps_log" 2>&1 &
  browser_deps=$!
  say "installing Chromium and the browser test's packages in the background; log: $deps_log"
fi

say "formatting"
cargo fmt --all -- --check

say "clippy, every crate and target on the host, then the page for wasm32 (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo clippy -p oversold-frontend -p oversold-protocol --target wasm32-unknown-unknown --locked -- -D warnings

say "server and protocol tests (each test starts its own redis-server)"
cargo test --locked

say "frontend model tests (host)"
cargo test -p oversold-frontend --locked

if [ "$browser" -eq 1 ]; then
  if [ -n "$browser_deps" ]; then
    say "waiting for Chromium and the browser test's packages"
    wait "$browser_deps" || { cat "$deps_log" >&2; exit 1; }
  fi
  scripts/frontend.sh --browser
  say "browser test: headless Chromium against the real server and Redis"
  cargo build -p oversold --locked
  (cd e2e && OVERSOLD_BIN="$target_dir/debug/oversold" npm test)
fi
say "all tests passed"
