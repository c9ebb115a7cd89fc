#!/usr/bin/env bash
# Trunk's post_build hook (Trunk.toml): splits the lab's wasm into the main module and the
# chunks its rarely opened parts load when first shown (frontend/src/components/lazy.rs,
# Leptos's `#[lazy]`). Trunk cannot split a wasm itself, so this redoes its last steps for the
# lab, in its staging folder, before Trunk moves that to dist/:
#
#   1. wasm_split_cli (crates.io `wasm_split_cli_support`, installed by scripts/frontend.sh)
#      cuts the linked wasm (frontend/build.rs has the linker keep its relocations) into
#      main.wasm, one split_*.wasm per lazy part, chunk_*.wasm for code several parts share,
#      and __wasm_split.js, which fetches and instantiates them against the main module;
#   2. wasm-bindgen, as Trunk ran it, on main.wasm, keeping the exports the chunks link to;
#   3. in release builds, wasm-opt -Oz on every wasm (Trunk's own pass is off for the lab:
#      frontend/index.html), with the features the stripped wasm no longer names;
#   4. the new files replace Trunk's under the same names, and index.html's integrity hashes
#      of the script and the wasm are recomputed.
#
# Every chunk is served by our server from dist/ (same origin; the page's CSP allows it). The
# workshop and phone pages have no lazy parts: the hook leaves them alone.
set -euo pipefail

case "${TRUNK_HTML_FILE:-}" in
  */frontend/index.html) ;;
  *) exit 0 ;;
esac
stage=${TRUNK_STAGING_DIR:?run by trunk as a post_build hook}

target_dir=$(cargo metadata --format-version 1 --no-deps |
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).target_directory))')
# The cargo profile Trunk built with: frontend/index.html's data-cargo-profile-release.
if [ "${TRUNK_PROFILE:-}" = release ]; then profile=wasm-release; else profile=debug; fi
raw="$target_dir/wasm32-unknown-unknown/$profile/oversold-frontend.wasm"

js=$(cd "$stage" && ls oversold-frontend-*.js)
stem=${js%.js}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

wasm_split_cli "$raw" "$work/split" >/dev/null
wasm-bindgen --target=web --no-typescript --keep-lld-exports --no-demangle \
  --out-dir="$work/bindgen" --out-name="$stem" "$work/split/main.wasm"

cp "$work/bindgen/$js" "$stage/$js"
cp "$work/bindgen/${stem}_bg.wasm" "$stage/${stem}_bg.wasm"
# The loader imports the main module by the name wasm_split_cli assumes (./main.js).
sed "s|from \"./main.js\"|from \"./$js\"|" "$work/split/__wasm_split.js" >"$stage/__wasm_split.js"
for chunk in "$work/split"/split_*.wasm "$work/split"/chunk_*.wasm; do
  if [ -e "$chunk" ]; then cp "$chunk" "$stage"/; fi
done

if [ "${TRUNK_PROFILE:-}" = release ]; then
  for wasm in "$stage/${stem}_bg.wasm" "$stage"/split_*.wasm "$stage"/chunk_*.wasm; do
    [ -e "$wasm" ] || continue
    wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      --enable-mutable-globals --enable-reference-types --enable-multivalue \
      "$wasm" -o "$wasm"
  done
fi

# Trunk's <link rel="modulepreload"> and <link rel="preload"> carry integrity hashes of the
# files it wrote; these are new files.
node - "$stage" "$js" "${stem}_bg.wasm" <<'EOF'
const fs = require("fs"), path = require("path"), crypto = require("crypto");
const [stage, ...files] = process.argv.slice(2);
const page = path.join(stage, "index.html");
let html = fs.readFileSync(page, "utf8");
for (const f of files) {
  const sri = "sha384-" + crypto.createHash("sha384").update(fs.readFileSync(path.join(stage, f))).digest("base64");
  const at = new RegExp(`(href="[^"]*/${f.replace(/[.]/g, "\\.")}"[^>]*integrity=")[^"]*(")`);
  if (!at.test(html)) throw new Error(`split-lab.sh: no integrity attribute for ${f} in index.html`);
  html = html.replace(at, `$1${sri}$2`);
}
fs.writeFileSync(page, html);
EOF
