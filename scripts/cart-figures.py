#!/usr/bin/env python3
"""The README's cart and warehouse figures: `oversold compare --json` of each scenario for
seeds 1..N with the defaults, averaged per strategy, as Markdown tables.

    REDIS_URL=redis://127.0.0.1:6379 scripts/cart-figures.py 50

OVERSOLD_BIN names the binary (default target/debug/oversold); REDIS_URL or REDIS_CLUSTER
pick the Redis, as for the binary itself.
"""
import json
import os
import statistics
import subprocess
import sys

BIN = os.environ.get("OVERSOLD_BIN", "target/debug/oversold")


def compare(scenario, extra, seed):
    out = subprocess.run(
        [BIN, "compare", "--scenario", scenario, "--seed", str(seed), "--json", *extra],
        capture_output=True, text=True, timeout=300, check=True,
    )
    return json.loads(out.stdout)


def table(scenario, extra, n):
    runs = {}
    for seed in range(1, n + 1):
        for s in compare(scenario, extra, seed):
            runs.setdefault(s["strategy"], []).append(s)
    print(f"## {scenario} {' '.join(extra)}: defaults, seeds 1 to {n}")
    print("| strategy | runs with partial carts | partial carts (mean, max) | stranded units (mean) "
          "| runs oversold | oversold units (mean) | compensations (mean, max) | fallback orders (mean) "
          "| refused, units back by the end (mean) | longest doomed hold µs (median) |")
    print("| --- " * 10 + "|")
    for name, ss in runs.items():
        mean = lambda k: statistics.mean(s[k] for s in ss)
        top = lambda k: max(s[k] for s in ss)
        count = lambda k: sum(1 for s in ss if s[k] > 0)
        hold = statistics.median(s["longest_doomed_hold_us"] for s in ss)
        print(f"| `{name}` | {count('partial_carts')}/{len(ss)} | {mean('partial_carts'):.1f}, {top('partial_carts')} "
              f"| {mean('stranded_units'):.1f} | {count('oversold_units')}/{len(ss)} | {mean('oversold_units'):.1f} "
              f"| {mean('compensations'):.1f}, {top('compensations')} | {mean('fallback_orders'):.1f} "
              f"| {mean('false_sold_out'):.1f} | {hold:.0f} |")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    for scenario, extra in [("cart", []), ("warehouses", []), ("warehouses", ["--max-qty", "3", "--split"])]:
        table(scenario, extra, n)
