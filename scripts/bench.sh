#!/usr/bin/env bash
# Measure `oversold bench` against redis-benchmark in one run, on one private Redis:
# the same reserve.lua, the same key, the same number of concurrent clients.
# Prints both throughputs and our ratio to the reference. Figures, not assertions.
#
#   scripts/bench.sh                      # 200k orders, 50 concurrent
#   REQUESTS=500000 CONCURRENCY=50 scripts/bench.sh
#   PG_REQUESTS=0 scripts/bench.sh        # skip the PostgreSQL row-lock figure
set -euo pipefail
cd "$(dirname "$0")/.."

REQUESTS=${REQUESTS:-200000}
CONCURRENCY=${CONCURRENCY:-50}
CONNECTIONS=${CONNECTIONS:-4}
PG_REQUESTS=${PG_REQUESTS:-10000}

for tool in redis-server redis-cli redis-benchmark python3; do
  command -v "$tool" >/dev/null || { echo "bench.sh needs $tool (apt-get install -y redis-server redis-tools python3)" >&2; exit 1; }
done

cargo build --release -q -p oversold
bin=target/release/oversold

# The reference Redis is started the way the server starts its own fallback (the same code:
# `oversold private-redis`), so both figures are measured on an identical redis-server.
dir=$(mktemp -d)
"$bin" private-redis >"$dir/url" 2>/dev/null &
redis_pid=$!
trap 'kill $redis_pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [ -s "$dir/url" ] && break; sleep 0.05; done
url=$(cat "$dir/url")
port=${url##*:}

key='bench:{ref}:stock'
sha=$(redis-cli -p "$port" SCRIPT LOAD "$(cat lua/reserve.lua)")
redis-cli -p "$port" SET "$key" 2000000000 >/dev/null

# Print one `oversold bench --json` report as a line.
show='
import json, sys
r = json.load(sys.stdin)
l = r["latency"]
print("   throughput         %10.0f orders/s   p50 %d us  p99 %d us  errors %d"
      % (r["throughput_per_s"], l["p50_us"], l["p99_us"], r["errors"]))'

rps() { # redis-benchmark --csv prints "test","rps",...; take the rps of the last line
  tail -n 1 | python3 -c 'import csv,sys; print(float(list(csv.reader(sys.stdin))[0][1]))'
}

echo "== reference: redis-benchmark, EVALSHA reserve.lua, $CONCURRENCY clients, $REQUESTS requests"
ref=$(redis-benchmark -p "$port" -n "$REQUESTS" -c "$CONCURRENCY" --csv EVALSHA "$sha" 1 "$key" 1 | rps)
ref_pipe=$(redis-benchmark -p "$port" -n "$REQUESTS" -c "$CONCURRENCY" -P 16 --csv EVALSHA "$sha" 1 "$key" 1 | rps)
printf '   unpipelined        %10.0f req/s\n' "$ref"
printf '   pipelined -P 16    %10.0f req/s  (upper bound, not a like-for-like client)\n' "$ref_pipe"

echo "== oversold bench --strategy lua, $CONCURRENCY concurrent over $CONNECTIONS multiplexed connections"
ours=$("$bin" --redis-url "redis://127.0.0.1:$port" bench --strategy lua --requests "$REQUESTS" \
  --concurrency "$CONCURRENCY" --connections "$CONNECTIONS" --json 2>/dev/null)
echo "$ours" | python3 -c "$show"
lua_tp=$(echo "$ours" | python3 -c 'import json,sys; print(json.load(sys.stdin)["throughput_per_s"])')
python3 -c "print(f'   ratio lua / redis-benchmark unpipelined: {$lua_tp / $ref:.2f}x')"

echo "== a 10,000-buyer lua race (8 app servers) vs the same 10,000 EVALSHA from redis-benchmark -c 8"
redis-cli -p "$port" SET "$key" 5000 >/dev/null
ref_race=$(redis-benchmark -p "$port" -n 10000 -c 8 --csv EVALSHA "$sha" 1 "$key" 1 | rps)
race=$("$bin" --redis-url "redis://127.0.0.1:$port" run --strategy lua --buyers 10000 --stock 5000 --json 2>/dev/null)
race_ms=$(echo "$race" | python3 -c 'import json,sys; print(json.load(sys.stdin)["duration_ms"])')
python3 -c "
ref_ms = 10000 / $ref_race * 1000
print(f'   redis-benchmark: {ref_ms:8.1f} ms for 10,000 scripts')
print(f'   oversold race:   {$race_ms:8.1f} ms gate to last answer (spawning 10,000 tasks included)')
print(f'   ratio race / reference: {$race_ms / ref_ms:.2f}x')"

if [ "$PG_REQUESTS" -gt 0 ]; then
  echo "== oversold bench --strategy postgres (SELECT ... FOR UPDATE), $CONCURRENCY concurrent, $PG_REQUESTS orders"
  if pg=$("$bin" --redis-url "redis://127.0.0.1:$port" bench --strategy postgres --requests "$PG_REQUESTS" \
      --concurrency "$CONCURRENCY" --connections 8 --json 2>/dev/null); then
    pg_tp=$(echo "$pg" | python3 -c 'import json,sys; print(json.load(sys.stdin)["throughput_per_s"])')
    echo "$pg" | python3 -c "$show"
    python3 -c "print(f'   ratio lua / postgres: {$lua_tp / $pg_tp:.1f}x')"
  else
    echo "   skipped: PostgreSQL unavailable (set DATABASE_URL)"
  fi
fi
