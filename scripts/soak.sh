#!/usr/bin/env bash
# A bounded soak of the release server (not in CI): a mixed load for N minutes over many
# sockets, one Redis restart halfway, then a verdict on leaks (fds back near start, no keys).
#
#   scripts/soak.sh                           # 3 minutes, 24 sockets
#   scripts/soak.sh --minutes 10 --sockets 64 --server-log /tmp/soak.log
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --release -q -p oversold --example soak -- "$@"
