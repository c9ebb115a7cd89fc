#!/usr/bin/env bash
# Issue 20's flash sale, measured against redis-benchmark in the same run, on one private
# Redis: figures and ratios, no assertions (the targets are printed next to them).
#
#   1. a 1,000,000-buyer `lua` race (10,000 units, 8 app servers) vs redis-benchmark's
#      1,000,000 EVALSHA of the same reserve.lua on the same key over 8 clients: time ratio
#      (target <= 1.5x; also against -P 16, a stricter reference: the run pipelines its
#      buyers' commands on each connection) and the run's peak RSS (target <= 1 GB), with
#      bytes per buyer;
#   2. the same for `naive` (a GET per buyer and a DECRBY per accepted order, vs
#      redis-benchmark's as many GETs and DECRBYs), and its oversell;
#   3. `oversold bench --strategy lua --pipeline 16` vs redis-benchmark -P 16, same clients,
#      same requests, 16 commands per write on both sides, the two taking turns (target
#      >= 1.0x); unpipelined `bench` beside it.
#
#   scripts/bench-scale.sh                     # the issue's sizes
#   BUYERS=200000 REQUESTS=200000 scripts/bench-scale.sh
#   BIN=path/to/oversold scripts/bench-scale.sh   # measure another build (skips cargo)
#   ONLY_BENCH=1 scripts/bench-scale.sh        # part 3 alone
set -euo pipefail
cd "$(dirname "$0")/.."

BUYERS=${BUYERS:-1000000}
STOCK=${STOCK:-10000}
APP_SERVERS=${APP_SERVERS:-8}
REQUESTS=${REQUESTS:-1000000}
CONCURRENCY=${CONCURRENCY:-50}
CONNECTIONS=${CONNECTIONS:-4}
ROUNDS=${ROUNDS:-3}

for tool in redis-server redis-cli redis-benchmark python3; do
  command -v "$tool" >/dev/null || { echo "bench-scale.sh needs $tool (apt-get install -y redis-server redis-tools python3)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench-scale.sh needs /usr/bin/time for peak RSS (apt-get install -y time)" >&2; exit 1; }

if [ -z "${BIN:-}" ]; then
  cargo build --release -q -p oversold
  BIN=${CARGO_TARGET_DIR:-target}/release/oversold
fi

# The reference Redis is started the way the server starts its own (`oversold
# private-redis`), so both sides of every ratio run on an identical redis-server.
dir=$(mktemp -d)
"$BIN" private-redis >"$dir/url" 2>/dev/null &
redis_pid=$!
trap 'kill $redis_pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [ -s "$dir/url" ] && break; sleep 0.05; done
url=$(cat "$dir/url")
port=${url##*:}
key='bench:{ref}:stock'
sha=$(redis-cli -p "$port" SCRIPT LOAD "$(cat lua/reserve.lua)")

rps() { # redis-benchmark --csv prints "test","rps",...; take the rps of the last line
  tail -n 1 | python3 -c 'import csv,sys; print(float(list(csv.reader(sys.stdin))[0][1]))'
}
# field FILE NAME: one number from a JSON object
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

# race STRATEGY: run it with peak RSS; leaves $dir/STRATEGY.json and $dir/STRATEGY.rss (KB)
race() {
  /usr/bin/time -f %M -o "$dir/$1.rss" "$BIN" --redis-url "$url" run --strategy "$1" \
    --buyers "$BUYERS" --stock "$STOCK" --app-servers "$APP_SERVERS" --seed 20 --json \
    >"$dir/$1.json" 2>/dev/null
}
# A small run's RSS: the process's own baseline, so the per-buyer bytes are the slope.
/usr/bin/time -f %M -o "$dir/small.rss" "$BIN" --redis-url "$url" run --strategy lua \
  --buyers 1000 --stock 100 --json >/dev/null 2>/dev/null
small_kb=$(cat "$dir/small.rss")

report() { # report STRATEGY REFERENCE_MS WHAT PIPELINED_REFERENCE_MS
  python3 - "$dir/$1.json" "$(cat "$dir/$1.rss")" "$small_kb" "$2" "$BUYERS" "$3" "$4" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
rss_kb, small_kb, ref_ms, buyers, what = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
ref_pipe_ms = float(sys.argv[7])
ms = s["duration_ms"]
per_buyer = (rss_kb - small_kb) * 1024 / max(buyers - 1000, 1)
print(f"   redis-benchmark:  {ref_ms:9.0f} ms for {what}")
print(f"   oversold run:     {ms:9.0f} ms gate to last answer ({s['throughput_per_s']:.0f} buyers/s)")
print(f"   ratio run / reference: {ms / ref_ms:.2f}x   (target <= 1.50x)")
print(f"   ratio run / the same with -P 16: {ms / ref_pipe_ms:.2f}x   ({ref_pipe_ms:.0f} ms)")
print(f"   peak RSS:         {rss_kb / 1024:9.1f} MB   (target <= 1024 MB; {per_buyer:.0f} bytes per buyer over a 1,000-buyer run's {small_kb / 1024:.1f} MB)")
print(f"   sold {s['units_sold']} of {s['stock']}, oversold {s['oversold_units']}, final stock {s['final_stock']}, "
      f"rejected {s['rejected']}, errors {s['errors']}, unknown {s['unknown']}, p99 {s['latency']['p99_us']} us")
EOF
}

if [ -z "${ONLY_BENCH:-}" ]; then
echo "== 1. lua: $BUYERS buyers for $STOCK units on $APP_SERVERS app servers"
redis-cli -p "$port" SET "$key" "$STOCK" >/dev/null
ref=$(redis-benchmark -p "$port" -n "$BUYERS" -c "$APP_SERVERS" --csv EVALSHA "$sha" 1 "$key" 1 | rps)
ref_p=$(redis-benchmark -p "$port" -n "$BUYERS" -c "$APP_SERVERS" -P 16 --csv EVALSHA "$sha" 1 "$key" 1 | rps)
race lua
report lua "$(python3 -c "print($BUYERS / $ref * 1000)")" "$BUYERS EVALSHA reserve.lua over $APP_SERVERS clients" \
  "$(python3 -c "print($BUYERS / $ref_p * 1000)")"

echo "== 2. naive: the same crowd, GET then DECRBY each"
redis-cli -p "$port" SET "$key" "$STOCK" >/dev/null
race naive
# The same commands: a GET per buyer, a DECRBY per order accepted (the refused stop at GET).
decrs=$(field "$dir/naive.json" orders_accepted)
ref_get=$(redis-benchmark -p "$port" -n "$BUYERS" -c "$APP_SERVERS" --csv GET "$key" | rps)
ref_decr=$(redis-benchmark -p "$port" -n "$decrs" -c "$APP_SERVERS" --csv DECRBY "$key" 1 | rps)
ref_get_p=$(redis-benchmark -p "$port" -n "$BUYERS" -c "$APP_SERVERS" -P 16 --csv GET "$key" | rps)
ref_decr_p=$(redis-benchmark -p "$port" -n "$decrs" -c "$APP_SERVERS" -P 16 --csv DECRBY "$key" 1 | rps)
report naive "$(python3 -c "print(($BUYERS / $ref_get + $decrs / $ref_decr) * 1000)")" \
  "$BUYERS GET + $decrs DECRBY over $APP_SERVERS clients" \
  "$(python3 -c "print(($BUYERS / $ref_get_p + $decrs / $ref_decr_p) * 1000)")"

fi

echo "== 3. oversold bench --strategy lua vs redis-benchmark -P 16: $REQUESTS orders, $CONCURRENCY clients"
# Like for like: redis-benchmark -P 16 writes 16 commands per client and waits for their 16
# replies; `bench --pipeline 16` has each worker do the same with 16 orders. Unpipelined
# `bench` (one order in flight per worker, 16 times fewer commands in flight) prints beside
# it. The two tools take turns, $ROUNDS times, so a noisy moment hits both sides.
redis-cli -p "$port" SET "$key" 2000000000 >/dev/null
ours_one() { # ours_one PIPELINE: one bench's orders per second
  "$BIN" --redis-url "$url" bench --strategy lua --requests "$REQUESTS" --concurrency "$CONCURRENCY" \
    --connections "$CONNECTIONS" --pipeline "$1" --json >"$dir/bench.json" 2>/dev/null
  field "$dir/bench.json" throughput_per_s
}
ratios=()
for round in $(seq "$ROUNDS"); do
  ref_pipe=$(redis-benchmark -p "$port" -n "$REQUESTS" -c "$CONCURRENCY" -P 16 --csv EVALSHA "$sha" 1 "$key" 1 | rps)
  piped=$(ours_one 16)
  plain=$(ours_one 1)
  ratio=$(python3 -c "print(f'{$piped / $ref_pipe:.2f}')")
  ratios+=("$ratio")
  printf '   round %d: redis-benchmark -P 16 %9.0f req/s | bench --pipeline 16 %9.0f orders/s (%sx) | bench unpipelined %9.0f orders/s (%.2fx)\n' \
    "$round" "$ref_pipe" "$piped" "$ratio" "$plain" "$(python3 -c "print($plain / $ref_pipe)")"
done
python3 -c "
import statistics
r = [float(x) for x in '${ratios[*]}'.split()]
print(f'   ratio bench --pipeline 16 / -P 16, median of {len(r)}: {statistics.median(r):.2f}x   (target >= 1.00x; each round {\", \".join(f\"{x:.2f}\" for x in r)})')"
