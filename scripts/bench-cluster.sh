#!/usr/bin/env bash
# The hot-key lesson, measured: `oversold bench` with `lua` (one counter: one key, one node)
# and `sharded` (4 buckets, each its own hash tag) on one private redis-server and on a
# private three-master Redis Cluster. Rounds alternate between the four cases so a busy
# machine slows them alike; the table shows each case's median. Figures, not assertions.
#
#   scripts/bench-cluster.sh                 # 3 rounds of 200k orders, 50 concurrent
#   ROUNDS=5 REQUESTS=100000 scripts/bench-cluster.sh
#
# On one machine every node shares the same cores with the benchmark client itself: a
# cluster here cannot show what separate machines would. Read the ratio, not the absolute.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-200000}
CONCURRENCY=${CONCURRENCY:-50}
CONNECTIONS=${CONNECTIONS:-4}

for tool in redis-server python3; do
  command -v "$tool" >/dev/null || { echo "bench-cluster.sh needs $tool" >&2; exit 1; }
done
cargo build --release -q -p oversold
bin=target/release/oversold

# One private redis-server and one private cluster, started by the binary itself (the same
# code the server and the tests use), both up for the whole measurement.
dir=$(mktemp -d)
"$bin" private-redis >"$dir/single" 2>/dev/null &
single_pid=$!
"$bin" private-cluster >"$dir/cluster" 2>/dev/null &
cluster_pid=$!
trap 'kill $single_pid $cluster_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 200); do [ -s "$dir/single" ] && [ -s "$dir/cluster" ] && break; sleep 0.05; done
single=(--redis-url "$(cat "$dir/single")")
cluster=(--redis-cluster "$(cat "$dir/cluster")")
nproc_=$(nproc)
echo "== $ROUNDS rounds of $REQUESTS orders, $CONCURRENCY concurrent over $CONNECTIONS connections, $nproc_ cores"

for round in $(seq "$ROUNDS"); do
  for where in single cluster; do
    for strategy in lua sharded; do
      if [ "$where" = single ]; then flags=("${single[@]}"); else flags=("${cluster[@]}"); fi
      "$bin" "${flags[@]}" bench --strategy "$strategy" --requests "$REQUESTS" \
        --concurrency "$CONCURRENCY" --connections "$CONNECTIONS" --json 2>/dev/null \
        >"$dir/$where-$strategy-$round.json"
      printf '   round %s  %-7s %-8s %8.0f orders/s\n' "$round" "$where" "$strategy" \
        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["throughput_per_s"])' "$dir/$where-$strategy-$round.json")"
    done
  done
done

python3 - "$dir" "$ROUNDS" <<'EOF'
import json, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
def runs(where, strategy):
    return [json.load(open(f"{d}/{where}-{strategy}-{r}.json")) for r in range(1, rounds + 1)]
def median(where, strategy):
    return statistics.median(r["throughput_per_s"] for r in runs(where, strategy))
def served(where, strategy):
    shares = runs(where, strategy)[-1]["served_by"]
    if not shares:
        return "1 node"
    total = sum(s["orders"] for s in shares)
    nodes = "1 node" if len(shares) == 1 else f"{len(shares)} nodes"
    return f"{nodes}: " + " / ".join(f"{100 * s['orders'] / total:.0f}%" for s in shares)
print()
print("| strategy | 1 node (orders/s) | 3-node cluster (orders/s) | cluster / 1 node | cluster: served by |")
print("| --- | ---: | ---: | ---: | --- |")
for strategy in ("lua", "sharded"):
    one, three = median("single", strategy), median("cluster", strategy)
    print(f"| `{strategy}` | {one:,.0f} | {three:,.0f} | {three / one:.2f}x | {served('cluster', strategy)} |")
EOF
