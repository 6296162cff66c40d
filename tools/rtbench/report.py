#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""make bench-rt's table: rt.csv with each kit row's ratios to the stock
row of the same kernel and load (max, p99, guest interrupts per second)."""

import csv
import sys


def ratio(a, b):
    return "%.2f" % (a / b) if b else "-"


def main(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print("rtbench: %s has no rows" % path, file=sys.stderr)
        return 1
    stock = {(r["kernel"], r["load"]): r for r in rows
             if r["modules"] == "stock"}
    cols = "%-10s %-13s %-6s %12s %12s %12s %5s %7s %9s %9s %9s"
    print(cols % ("kernel", "modules", "load", "max ns", "p99 ns",
                  "guest irq/s", "lost", "doubled", "max/stk", "p99/stk",
                  "irq/s/stk"))
    for r in rows:
        s = stock.get((r["kernel"], r["load"]))
        mx, p99 = float(r["cyclictest_max_ns"]), float(r["cyclictest_p99_ns"])
        ips = float(r["guest_irqs_per_s"])
        if s and r["modules"] != "stock":
            rs = (ratio(mx, float(s["cyclictest_max_ns"])),
                  ratio(p99, float(s["cyclictest_p99_ns"])),
                  ratio(ips, float(s["guest_irqs_per_s"])))
        else:
            rs = ("", "", "")
        print((cols % ((r["kernel"], r["modules"], r["load"],
                        r["cyclictest_max_ns"], r["cyclictest_p99_ns"],
                        r["guest_irqs_per_s"], r["lost"], r["doubled"]) +
                       rs)).rstrip())
    print("cyclictest: SCHED_FIFO 90 on the vector's CPU; storm: irqlat's "
          "guest raising MSIs one after the other as fast as it takes them")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build/report/rt.csv"))
