#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Print make bench-lifecycle's table with the kit/stock ratio per row.

Reads, in the report directory written by scripts/kit/bench-lifecycle.sh:

  lifecycle.csv        case,vectors,kernel,modules,ops,ns_per_op,
                       ipis_per_op,other_vm_p99_ns
  lifecycle-other.csv  the other VM's latency without and with the churn
                       (kernel,modules,quiet_p99_ns,quiet_med_ns,
                       churn_p99_ns,churn_med_ns,churn_swaps), optional

  lifecycle-ab.csv     rep,<the lifecycle.csv columns>: every rep of a
                       same-boot run (tools/lifecycle/ab.sh), optional

and writes lifecycle.txt (the table, also printed).  Each kit row's ratios
are kit/stock for the same case, vector count and kernel: below 1 the kit
is cheaper.  With lifecycle-ab.csv the ns/op ratio is the median of the
reps' paired ratios (each rep's stock and kit ran in the same boot), with
their range.  --merge-ab writes lifecycle.csv and lifecycle-other.csv from
the reps (per row the median; ops: the sum) and exits.  A report, not a
test: no figure is judged.
"""
import argparse
import csv
import datetime
import importlib.util
import os
import platform
import subprocess
import sys

CASE_ORDER = ["irqfd", "trigger-swap", "vm", "swap-irqfd"]
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


def median(vals):
    vals = sorted(v for v in vals if v is not None)
    if not vals:
        return None
    n = len(vals)
    return vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def merge_ab(report):
    """lifecycle.csv and lifecycle-other.csv from the reps' medians."""
    for src, dst, keys in (
            ("lifecycle-ab.csv", "lifecycle.csv",
             ("case", "vectors", "kernel", "modules")),
            ("lifecycle-ab-other.csv", "lifecycle-other.csv",
             ("kernel", "modules"))):
        path = os.path.join(report, src)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            rd = csv.DictReader(f)
            cols = [c for c in rd.fieldnames
                    if c not in ("rep", "busy_ns_per_op")]
            rows = list(rd)
        groups = {}
        for r in rows:
            groups.setdefault(tuple(r[k] for k in keys), []).append(r)
        with open(os.path.join(report, dst), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(cols)
            for key, rs in groups.items():
                out = []
                for c in cols:
                    if c in keys:
                        out.append(rs[0][c])
                    elif c in ("ops", "churn_swaps"):
                        out.append(str(sum(int(num(r[c]) or 0) for r in rs)))
                    else:
                        m = median(num(r[c]) for r in rs)
                        out.append("-" if m is None else
                                   ("%.3f" % m if c == "ipis_per_op"
                                    else "%.1f" % m))
                w.writerow(out)


def rep_ratios(ab, r, col="ns_per_op"):
    """The reps' kit/stock @col of kit row @r (each rep's two sets ran in
    the same boot); [] for a stock row or without reps."""
    if r["modules"] != "kit":
        return []
    by_rep = {}
    for a in ab:
        if (a["case"], a["vectors"], a["kernel"]) == \
           (r["case"], r["vectors"], r["kernel"]):
            by_rep.setdefault(a["rep"], {})[a["modules"]] = num(a.get(col))
    return [v["kit"] / v["stock"] for v in by_rep.values()
            if v.get("kit") is not None and v.get("stock")]


def paired(ab, r, col="ns_per_op"):
    """Median and range of the reps' kit/stock @col, or "-"."""
    rs = rep_ratios(ab, r, col)
    if not rs:
        return "-"
    return "%.2f [%.2f-%.2f] n=%d" % (median(rs), min(rs), max(rs), len(rs))


def netbench_report():
    """tools/netbench/report.py: its sign-test interval of the median and
    its verdict rule, one definition for both benchmarks."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "netbench", "report.py")
    spec = importlib.util.spec_from_file_location("netbench_report", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def verdicts(ab, rows):
    """Per kit row, a verdict on ns/op from the reps' paired ratios: the
    sign test's interval of their median (at least 95 %: 6 reps or more),
    above or below stock only when the whole interval is."""
    nb = netbench_report()
    out = []
    for r in rows:
        rs = rep_ratios(ab, r)
        if len(rs) < 2:
            continue
        iv = nb.median_interval(rs)
        what = "%s/%s %s kit/stock ns/op %.2f, interval %.2f..%.2f " \
            "(%d reps, coverage %.1f %%)" % (r["case"], r["vectors"],
                                             r["kernel"], iv[0], iv[1],
                                             iv[2], len(rs), iv[3] * 100)
        out.append(nb.verdict(iv, what, "below stock", "ABOVE STOCK",
                              "neither"))
    return out


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
    ap.add_argument("--merge-ab", action="store_true",
                    help="write lifecycle.csv from lifecycle-ab.csv, exit")
    args = ap.parse_args()
    if args.merge_ab:
        merge_ab(args.report)
        return
    ab = read_csv(os.path.join(args.report, "lifecycle-ab.csv"))

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
            "p99 kit/stock"] + (["ns/op kit/stock per rep",
                                 "busy/op kit/stock per rep"] if ab else [])
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
            if kit and r["case"] in ("trigger-swap", "swap-irqfd") else "-",
        ] + ([paired(ab, r), paired(ab, r, "busy_ns_per_op")]
             if ab else []))
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
        "a VM with a vCPU, N MSI routes and N irqfds; swap-irqfd = a second "
        "VM's KVM_IRQFD assign + deassign (no producer) while the first "
        "swaps its trigger, other VM p99 ns being that op's p99.",
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
    if ab:
        lines.append(
            "Same boot: each kernel booted once and ran stock and kit "
            "modules alternately (tools/lifecycle/ab.sh, stock-kit then "
            "kit-stock); the rows are medians over the reps, per rep: the "
            "median of the reps' own kit/stock ratios [min-max], n reps. "
            "busy/op: CPU time that tasks ran over the loop "
            "(/proc/schedstat, all CPUs) per op: the work, without the "
            "idle waits for ticks and grace periods (lifecycle --busy).")
    if ab:
        lines += verdicts(ab, rows)
    if args.commit:
        lines.append("Measured: %s." % args.commit)
    lines.append("Run %s on %s." % (when, where()))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(args.report, "lifecycle.txt"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
