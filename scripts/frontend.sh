#!/usr/bin/env bash
# Install what the wasm page needs (skipping whatever is already there), then build it into dist/.
#
#   scripts/frontend.sh             # toolchain check/install + release build into dist/
#   scripts/frontend.sh --browser   # also chromium (apt) and the e2e npm packages
#
# Safe to rerun: every step checks first. Works as root on a fresh Debian machine (apt-get is
# called directly) and as a normal user with sudo. Versions are pinned where a mismatch breaks
# the build: Trunk 0.21 (0.22 needs a newer rustc) and wasm-bindgen CLI 0.2.130, which must
# equal the `wasm-bindgen = "=0.2.130"` pin or Trunk tries to download its own copy.
# wasm-opt comes from the npm package `binaryen` (node runs it), pinned by `[tools] wasm_opt` in
# Trunk.toml and installed into .tools/ (gitignored); Debian's binaryen 108 breaks the page.
set -euo pipefail

TRUNK_REQ="^0.21"
TRUNK_MINOR="trunk 0.21."
WASM_BINDGEN_VERSION="0.2.130"

usage() { sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; }

browser=0
for arg in "$@"; do
  case "$arg" in
    --browser) browser=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "frontend.sh: unknown argument: $arg" >&2; usage >&2; exit 2 ;;
  esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"

# shellcheck source=scripts/lib.sh
. scripts/lib.sh

# --- Rust --------------------------------------------------------------------------------------
if ! command -v cargo >/dev/null || ! command -v rustup >/dev/null; then
  echo "frontend.sh: cargo and rustup are required (https://rustup.rs); the toolchain itself is not installed here" >&2
  exit 1
fi
# cargo install compiles C code in some dependencies.
command -v cc >/dev/null || apt_install build-essential pkg-config

ensure_wasm_target
say "rust: $(rustc --version); wasm32 target: $(rustup target list --installed | grep -c wasm32-unknown-unknown) installed"

if command -v trunk >/dev/null && trunk --version | grep -q "^$TRUNK_MINOR"; then
  say "trunk: $(trunk --version)"
else
  say "installing trunk $TRUNK_REQ (about three minutes)"
  # --debug: Trunk only orchestrates (cargo, wasm-bindgen and wasm-opt do the heavy lifting),
  # and an unoptimized build installs in about half the time on a fresh two-core machine.
  cargo install trunk --version "$TRUNK_REQ" --locked --debug --force
fi

if command -v wasm-bindgen >/dev/null && [ "$(wasm-bindgen --version)" = "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  say "wasm-bindgen: $(wasm-bindgen --version)"
else
  # No --locked: its lock file names a webpki-roots release the registry no longer serves.
  # --debug, like Trunk: it only rewrites one file per build (about a second unoptimized),
  # and a debug build installs in about a third of the time. Its output is byte-for-byte
  # the same as a release build's.
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (a minute or two)"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --debug --force
fi

# --- wasm-opt ----------------------------------------------------------------------------------
# Trunk runs the first `wasm-opt` on PATH when its `--version` matches `[tools] wasm_opt` in
# Trunk.toml, and otherwise tries to download that release. Debian's binaryen 108 must not be the
# one it finds: it rewrites the export of wasm-bindgen 0.2.130's externref table to point at the
# function table and the page dies at start-up ("WebAssembly.Table.set(): Argument 1 is invalid").
# So the pinned release comes from the npm registry (`binaryen`, wasm-opt compiled to run on node)
# into .tools/, which goes first on PATH for the build below.
BINARYEN_MAJOR=$(sed -n 's/^wasm_opt *= *"version_\([0-9][0-9]*\)".*/\1/p' Trunk.toml)
if [ -z "$BINARYEN_MAJOR" ]; then
  echo 'frontend.sh: Trunk.toml needs [tools] wasm_opt = "version_NNN" (the binaryen release to use)' >&2
  exit 1
fi
BINARYEN_VERSION="$BINARYEN_MAJOR.0.0"
if ! command -v npm >/dev/null; then
  say "installing node and npm (wasm-opt runs on node)"
  apt_install nodejs npm
fi
installed_binaryen=$(node -p 'require("./.tools/node_modules/binaryen/package.json").version' 2>/dev/null || true)
if [ "$installed_binaryen" = "$BINARYEN_VERSION" ]; then
  say "binaryen (npm) $BINARYEN_VERSION in .tools/: present"
else
  say "installing binaryen $BINARYEN_VERSION from npm into .tools/"
  npm install --prefix .tools --no-audit --no-fund --save-exact "binaryen@$BINARYEN_VERSION"
fi
export PATH="$PWD/.tools/node_modules/.bin:$PATH"
wasm_opt_version=$(wasm-opt --version)
# "wasm-opt version 132 (version_132)": Trunk compares the third word with the pin.
if [ "$(printf '%s' "$wasm_opt_version" | cut -d' ' -f3)" != "$BINARYEN_MAJOR" ]; then
  echo "frontend.sh: wasm-opt on PATH is \"$wasm_opt_version\" ($(command -v wasm-opt)), not $BINARYEN_MAJOR" >&2
  exit 1
fi
say "wasm-opt: $wasm_opt_version"

# --- Browser test dependencies (optional) ------------------------------------------------------
if [ "$browser" -eq 1 ]; then
  if [ -x /usr/bin/chromium ]; then
    say "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo present)"
  else
    say "installing chromium"
    apt_install chromium
  fi
  if ! command -v npm >/dev/null; then
    say "installing node and npm"
    apt_install nodejs npm
  fi
  # npm ci wipes node_modules; skip it when the installed tree already matches the lock file.
  if [ -f e2e/node_modules/.package-lock.json ] && [ e2e/node_modules/.package-lock.json -nt e2e/package-lock.json ]; then
    say "e2e npm packages: up to date"
  elif [ -f e2e/package-lock.json ]; then
    say "npm ci in e2e/"
    (cd e2e && npm ci --no-audit --no-fund)
  else
    say "npm install in e2e/"
    (cd e2e && npm install --no-audit --no-fund)
  fi
fi

# --- Build -------------------------------------------------------------------------------------
# Two pages, two wasm files: the lab (index.html, into dist/) and the workshop (workshop.html,
# into dist/workshop/, whose files the server serves under /workshop/). The lab first: Trunk
# empties its dist folder, and dist/workshop/ lives inside the lab's.
say "trunk build --release: the lab into dist/"
trunk build --release
say "trunk build --release: the workshop into dist/workshop/"
trunk build --release --dist dist/workshop --public-url /workshop/ frontend/workshop.html

# The budget: 500 KB gzipped per page. It was 300 KB while the page was a grid, an audit and a
# timeline; the tape (the protocol's reconstruction runs in the page), step-through, replays and
# saved runs, the stage view and the checkout brought it to about 416 KB, and the cart/warehouse
# shelves and the rooms (presenter, phone and spectator views) to about 470 KB. At 500 KB a
# phone on a weak 5 Mbit/s conference link still loads it in under a second, once: the hashed
# files are cached for good. Crossing it means something grew by accident; look before raising it.
budget_kb=500
over=0
for dir in dist dist/workshop; do
  say "sizes of $dir (gzip -9)"
  total=0
  for f in "$dir"/*.wasm "$dir"/*.js; do
    [ -e "$f" ] || continue
    raw=$(wc -c <"$f")
    gz=$(gzip -9c "$f" | wc -c)
    total=$((total + gz))
    printf '  %-48s %8d bytes, %7d gzipped\n' "$f" "$raw" "$gz"
  done
  printf '  %s: wasm + js gzipped: %d bytes (%d KB; budget %d KB)\n' "$dir" "$total" $(((total + 1023) / 1024)) "$budget_kb"
  if [ "$total" -gt $((budget_kb * 1024)) ]; then
    echo "frontend.sh: $dir is over the $budget_kb KB gzipped budget" >&2
    over=1
  fi
done
[ "$over" -eq 0 ] || exit 1
