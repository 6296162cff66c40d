#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Print make bench-lifecycle's table with the kit/stock ratio per row.

Reads, in the report directory written by scripts/kit/bench-lifecycle.sh:

  lifecycle.csv        case,vectors,kernel,modules,ops,ns_per_op,
                       ipis_per_op,other_vm_p99_ns
  lifecycle-other.csv  the other VM's latency without and with the churn
                       (kernel,modules,quiet_p99_ns,quiet_med_ns,
                       churn_p99_ns,churn_med_ns,churn_swaps), optional

and writes lifecycle.txt (the table, also printed).  Each kit row's ratios
are kit/stock for the same case, vector count and kernel: below 1 the kit
is cheaper.  A report, not a test: no figure is judged.
"""
import argparse
import csv
import datetime
import os
import platform
import subprocess
import sys

CASE_ORDER = ["irqfd", "trigger-swap", "vm"]
MOD_ORDER = ["stock", "kit"]


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def ratio(a, b):
    a, b = num(a), num(b)
    if a is None or b is None:
        return "-"
    if b == 0:
        return "-" if a else "1.00"
    return "%.2f" % (a / b)


def idx(lst, v):
    return lst.index(v) if v in lst else len(lst)


def order_key(r):
    k = r["kernel"]
    line = tuple(int(x) for x in k.split("-")[0].split(".") if x.isdigit())
    return (idx(CASE_ORDER, r["case"]), int(r["vectors"]),
            tuple(-x for x in line), k.endswith("-rt"),
            idx(MOD_ORDER, r["modules"]))


def fmt(v, digits):
    f = num(v)
    if f is None:
        return v if v else "-"
    return "%.*f" % (digits, f)


def where():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    osname = platform.system()
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    osname = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    try:
        qemu = subprocess.run(["qemu-system-x86_64", "--version"],
                              capture_output=True, text=True,
                              check=False).stdout.splitlines()[0]
    except (OSError, IndexError):
        qemu = "QEMU ?"
    return "%d x %s, %s, %s" % (os.cpu_count() or 0, cpu, osname, qemu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", help="the report directory")
    ap.add_argument("--icount", default="off",
                    help="the testbed's -icount shift, or off")
    ap.add_argument("--commit", default="", help="what was measured")
    args = ap.parse_args()

    path = os.path.join(args.report, "lifecycle.csv")
    with open(path) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit("report.py: %s has no rows" % path)
    rows.sort(key=order_key)
    other = {}
    opath = os.path.join(args.report, "lifecycle-other.csv")
    if os.path.exists(opath):
        with open(opath) as f:
            for r in csv.DictReader(f):
                other[(r["kernel"], r["modules"])] = r

    def stock_of(r):
        for s in rows:
            if (s["case"], s["vectors"], s["kernel"], s["modules"]) == \
               (r["case"], r["vectors"], r["kernel"], "stock"):
                return s
        return None

    head = ["case", "vectors", "kernel", "modules", "ops", "ns/op",
            "IPIs/op", "other VM p99 ns", "quiet p99 ns",
            "p99 churn/quiet", "ns/op kit/stock", "IPIs/op kit/stock",
            "p99 kit/stock"]
    table = []
    for r in rows:
        s = stock_of(r)
        kit = r["modules"] == "kit" and s is not None
        quiet = "-"
        if r["case"] == "trigger-swap":
            o = other.get((r["kernel"], r["modules"]))
            quiet = o["quiet_p99_ns"] if o else "-"
        table.append([
            r["case"], r["vectors"], r["kernel"], r["modules"], r["ops"],
            fmt(r["ns_per_op"], 0), fmt(r["ipis_per_op"], 2),
            fmt(r["other_vm_p99_ns"], 0), fmt(quiet, 0),
            ratio(r["other_vm_p99_ns"], quiet)
            if r["case"] == "trigger-swap" else "-",
            ratio(r["ns_per_op"], s["ns_per_op"]) if kit else "-",
            ratio(r["ipis_per_op"], s["ipis_per_op"]) if kit else "-",
            ratio(r["other_vm_p99_ns"], s["other_vm_p99_ns"])
            if kit and r["case"] == "trigger-swap" else "-",
        ])
    widths = [max(len(h), *(len(t[i]) for t in table))
              for i, h in enumerate(head)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.rjust(w) for c, w in zip(t, widths))
              for t in table]
    when = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")
    ic = ("-icount shift=%s,sleep=off: emulated time counts executed "
          "instructions (a path length, repeatable)" % args.icount
          if args.icount != "off" else "real time (no -icount): "
          "load-dependent")
    lines += [
        "",
        "ops: irqfd = KVM_IRQFD assign + deassign, eventfd #0 paired with "
        "the edu's MSI; trigger-swap = VFIO_DEVICE_SET_IRQS moving MSI "
        "vector 0 to the other of two irqfd eventfds; vm = create + destroy "
        "a VM with a vCPU, N MSI routes and N irqfds.",
        "ns/op: the testbed's CLOCK_MONOTONIC around the loop (%s); "
        "compare within this table only." % ic,
        "IPIs/op: CAL + TLB lines of the testbed's /proc/interrupts, all "
        "CPUs, over the loop.",
        "other VM p99 ns: irqlat msi/kernel on a second edu in a second VM "
        "during the swaps; quiet p99 ns: the same VM just before, without "
        "swaps; p99 churn/quiet: the disturbance (1.00: none).",
        "kit/stock: the kit row against the stock row of the same case, "
        "vectors and kernel (below 1: the kit is cheaper).",
    ]
    if args.commit:
        lines.append("Measured: %s." % args.commit)
    lines.append("Run %s on %s." % (when, where()))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(args.report, "lifecycle.txt"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
