#!/usr/bin/env bash
# Run the demo: build the page, then serve it with the race engine on http://127.0.0.1:3000.
# Installs what is missing first. Uses the Redis on 127.0.0.1:6379 if one answers, else the
# server starts a private redis-server for itself (and stops it on exit).
#
#   scripts/demo.sh                   # http://127.0.0.1:3000
#   ADDR=0.0.0.0:8080 scripts/demo.sh # another address
#   REDIS_URL=redis://host:6379 scripts/demo.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

if [ -z "${REDIS_URL:-}" ] && ! (command -v redis-cli >/dev/null && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1); then
  ensure_redis_tools # the server starts its own from this binary
fi
command -v cc >/dev/null || apt_install build-essential pkg-config
scripts/frontend.sh
say "building the server (release)"
cargo build --release -p oversold --locked
say "serving on http://${ADDR:-127.0.0.1:3000} (Ctrl-C to stop)"
exec target/release/oversold serve --addr "${ADDR:-127.0.0.1:3000}" --assets dist
