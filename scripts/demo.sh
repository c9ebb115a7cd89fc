#!/usr/bin/env bash
# Run the demo: build the page, then serve it with the race engine on http://127.0.0.1:3000.
# Installs what is missing first. Uses the Redis on 127.0.0.1:6379 if one answers, else the
# server starts a private redis-server for itself (and stops it on exit).
#
#   scripts/demo.sh                   # http://127.0.0.1:3000
#   ADDR=0.0.0.0:8080 scripts/demo.sh # another address
#   REDIS_URL=redis://host:6379 scripts/demo.sh
#   scripts/demo.sh --cluster         # on a private three-master Redis Cluster the server
#                                     # starts for itself (and stops on exit)
#   REDIS_CLUSTER=host:7000,host:7001 scripts/demo.sh   # on a Redis Cluster of yours
#   scripts/demo.sh --room            # a room for the audience's phones: serves on every
#                                     # interface (0.0.0.0:3000) with a Redis of its own, so
#                                     # the chaos buttons work; prints the addresses to open
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

redis_flags=()
room=0
if [ "${1:-}" = "--room" ]; then
  room=1
  redis_flags=(--private-redis) # chaos buttons act only on a Redis the server started
  unset REDIS_URL REDIS_CLUSTER
  ADDR=${ADDR:-0.0.0.0:3000}
  ensure_redis_tools
elif [ "${1:-}" = "--cluster" ]; then
  redis_flags=(--private-cluster)
  unset REDIS_URL REDIS_CLUSTER # the private cluster replaces them
  ensure_redis_tools # the server starts three cluster nodes from this binary
elif [ -z "${REDIS_URL:-}${REDIS_CLUSTER:-}" ] && ! (command -v redis-cli >/dev/null && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1); then
  ensure_redis_tools # the server starts its own from this binary
fi
command -v cc >/dev/null || apt_install build-essential pkg-config
# The server's release build and the page's tools do not depend on each other, so they build
# side by side: on a fresh machine `cargo install` of Trunk and wasm-bindgen (each in a
# directory of its own) overlaps the server's build, and each has long single-threaded
# stretches (linking, the page's whole-program optimisation) that leave a core free.
server_log=$(mktemp "${TMPDIR:-/tmp}/oversold-server-build.XXXXXX")
cargo build --release -p oversold --locked >"$server_log" 2>&1 &
server_build=$!
say "building the server (release) in the background; its log: $server_log"
scripts/frontend.sh
say "waiting for the server's release build"
if ! wait "$server_build"; then
  cat "$server_log" >&2
  echo "demo.sh: the server did not build (log above)" >&2
  exit 1
fi
rm -f "$server_log"
say "serving on http://${ADDR:-127.0.0.1:3000} (Ctrl-C to stop)"
if [ "$room" -eq 1 ]; then
  # Phones join through the address the presenter's browser used: open one of these, not
  # 127.0.0.1, so the join URL and its QR code point somewhere a phone on the Wi-Fi can reach.
  port=${ADDR##*:}
  for ip in $(hostname -I 2>/dev/null); do
    case "$ip" in *:*) continue ;; esac # IPv6: skip, a QR code of one is rarely typed
    say "presenter: open http://$ip:$port and press Start a room"
  done
fi
print_step_times
exec target/release/oversold serve "${redis_flags[@]}" --addr "${ADDR:-127.0.0.1:3000}" --assets dist
