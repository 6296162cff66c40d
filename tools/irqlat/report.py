#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn irqlat's rows and samples into the interrupt-path matrix.

Reads the report directory written by scripts/kit/bench.sh (matrix.csv and
samples-*.csv) and writes, next to them:

  matrix.txt    the table for the terminal (also printed)
  matrix.md     the same table in Markdown, with the notes
  latency.dat   per row: its latency samples as a cumulative distribution
  latency.svg   the distributions, one panel per IRQ type and irqchip
  latency.png   wiring, one line per kernel and module set (gnuplot)

Each row's ratios are against its reference row: the stock row of the same
IRQ type with the full in-kernel irqchip on the generic kernel of the same
line (the seeds' "msi/on" and INTx kernel-irqchip baselines).  No figure is
judged here: this is a report, not a test.
"""
import argparse
import csv
import datetime
import json
import math
import os
import platform
import shutil
import subprocess
import sys

IRQ_ORDER = ["msi", "intx"]
CHIP_ORDER = ["kernel", "split-user", "split-userspace-only", "split-kernel",
              "split-kernel-noexit"]
MOD_ORDER = ["stock", "kit"]

COLS = [
    # (csv column, header, kind) kind: t text, c count, e emulated time
    ("irq", "irq", "t"), ("irqchip", "irqchip", "t"),
    ("kernel", "kernel", "t"), ("modules", "modules", "t"),
    ("n", "n", "c"),
    ("lat_med_ns", "lat med ns", "e"), ("lat_p99_ns", "lat p99 ns", "e"),
    ("irqs_per_s", "irqs/s", "e"),
    ("vmexits_per_irq", "VM exits/irq", "c"),
    ("uexits_per_irq", "user exits/irq", "c"),
    ("ctxsw_per_irq", "ctxsw/irq", "c"),
    ("lost", "lost", "c"), ("doubled", "doubled", "c"),
]


def order_key(row):
    def idx(lst, v):
        return lst.index(v) if v in lst else len(lst)
    kern = row["kernel"]
    return (idx(IRQ_ORDER, row["irq"]), idx(CHIP_ORDER, row["irqchip"]),
            kern.split("-")[0], kern.endswith("-rt"),
            idx(MOD_ORDER, row["modules"]))


def reference(rows, row):
    """The stock kernel-irqchip row of the same IRQ type and line, generic
    flavour if it ran, else the same flavour."""
    line = row["kernel"].split("-")[0]
    cands = [r for r in rows if r["irq"] == row["irq"] and
             r["irqchip"] == "kernel" and r["modules"] == "stock" and
             r["kernel"].split("-")[0] == line]
    cands.sort(key=lambda r: r["kernel"].endswith("-rt"))
    return cands[0] if cands else None


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def ratio(a, b):
    a, b = num(a), num(b)
    if a is None or not b:
        return "-"
    return "%.2f" % (a / b)


def percentile(s, pct):
    """Nearest rank, as irqlat computes its median and p99."""
    rank = (len(s) * pct + 99) // 100
    return s[max(rank, 1) - 1]


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    distro = ""
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    distro = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    qemu = ""
    if shutil.which("qemu-system-x86_64"):
        out = subprocess.run(["qemu-system-x86_64", "--version"],
                             capture_output=True, text=True).stdout
        qemu = out.splitlines()[0] if out else ""
    return "%d x %s, %s, %s" % (os.cpu_count() or 0, cpu, distro,
                                qemu or "no QEMU")


def load_samples(paths):
    samples = {}
    for p in paths:
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                key = (r["irq"], r["irqchip"], r["kernel"], r["modules"])
                samples.setdefault(key, []).append(float(r["lat_ns"]))
    return samples


def boot_records(outdir):
    """(file name, its records) of each boot's irqlat-*.json, by name."""
    for name in sorted(p for p in os.listdir(outdir)
                       if p.startswith("irqlat-") and p.endswith(".json")):
        with open(os.path.join(outdir, name)) as f:
            yield name, json.load(f)


def tracing_refusals(outdir):
    """Each boot's irqlat-*.json says what of the kernel's tracing was on;
    a figure measured with an event, probe or tracer on describes a kernel
    no user runs.  Returns one line per boot that was not "off"."""
    bad = []
    boots = list(boot_records(outdir))
    if not boots:
        return ["no irqlat-*.json beside matrix.csv: tracing state unknown"]
    for name, records in boots:
        states = {r.get("tracing", "unknown") for r in records}
        states.discard("off")
        if states:
            bad.append("%s: tracing %s" % (name, ", ".join(sorted(states))))
    return bad


def stray_line(outdir):
    """ISR runs that no LAPIC delivered (irqlat's "stray" count, not in the
    doubled column): the testbed's emulated CPU, Documentation/testing.rst.
    One line, so that the table says when there were any."""
    found = ["%s %s/%s %s/%s" % (r["stray"], r["irq"], r["irqchip"],
                                 r["kernel"], r["modules"])
             for _, records in boot_records(outdir)
             for r in records if int(r.get("stray", 0))]
    return ("ISR runs that no LAPIC delivered (the emulated CPU's, not "
            "counted as doubled; Documentation/testing.rst): %s." %
            (", ".join(found) if found else "none"))


def table(rows):
    head = [h for _, h, _ in COLS] + ["lat vs ref", "irqs/s vs ref"]
    body = []
    for r in rows:
        ref = reference(rows, r)
        cells = [r[c] for c, _, _ in COLS]
        if ref is r:
            cells += ["ref", "ref"]
        elif ref:
            cells += [ratio(r["lat_med_ns"], ref["lat_med_ns"]),
                      ratio(r["irqs_per_s"], ref["irqs_per_s"])]
        else:
            cells += ["-", "-"]
        body.append(cells)
    return head, body


def notes(icount, when, where):
    counts = ", ".join(h for _, h, k in COLS if k == "c")
    times = ", ".join(h for _, h, k in COLS if k == "e")
    clock = ("-icount shift=%s,sleep=off: time counts executed instructions "
             "(a path length, repeatable)" % icount if icount not in
             ("", "off") else "real time: follows the host's load")
    return [
        "Counts, machine-independent: %s." % counts,
        "Emulated time (TCG testbed, %s); compare within this table "
        "only: %s." % (clock, times),
        "ctxsw/irq: host context switches per interrupt minus a control "
        "run without interrupts.",
        "Ratios (lat = median latency, irqs/s): against the row marked ref, "
        "the stock row with the in-kernel irqchip of the same IRQ type "
        "on the generic kernel of the same line.",
        "Run %s on %s." % (when, where),
    ]


def write_text(path, head, body, note_lines):
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    lines = []
    for cells in [head] + body:
        lines.append("  ".join(str(c).ljust(w) if i < 4 else str(c).rjust(w)
                               for i, (c, w) in
                               enumerate(zip(cells, widths))).rstrip())
    lines.append("")
    lines += note_lines
    text = "\n".join(lines) + "\n"
    with open(path, "w") as f:
        f.write(text)
    return text


def write_md(path, head, body, note_lines, title):
    out = ["# %s" % title, "",
           "| " + " | ".join(head) + " |",
           "|" + "|".join("---" if i < 4 else "---:"
                          for i in range(len(head))) + "|"]
    for cells in body:
        out.append("| " + " | ".join(str(c) for c in cells) + " |")
    out.append("")
    out += ["- " + n for n in note_lines]
    out += ["", "![latency distribution per row](latency.svg)", ""]
    with open(path, "w") as f:
        f.write("\n".join(out))


def write_plot(outdir, rows, samples, title):
    """One panel per IRQ type and irqchip wiring, one cumulative latency
    distribution per kernel flavour and module set in it."""
    dat = os.path.join(outdir, "latency.dat")
    panels = []         # [(name, [(index, label, rt, kit)])]
    index = 0
    lo, hi = float("inf"), 0.0
    with open(dat, "w") as f:
        f.write("# per row (a gnuplot index block): latency ns, fraction of "
                "interrupts at or below it\n")
        for r in rows:
            key = (r["irq"], r["irqchip"], r["kernel"], r["modules"])
            s = sorted(samples.get(key, []))
            if not s:
                continue
            f.write("# %s\n" % " ".join(key))
            n = len(s)
            # The range leaves out the lowest 1% of a row: emulated time
            # has produced a single 0 ns sample in 14000.
            lo, hi = min(lo, percentile(s, 1)), max(hi, s[-1])
            f.write("%.0f 0\n" % s[0])
            for i, v in enumerate(s):
                if i + 1 == n or s[i + 1] != v:
                    f.write("%.0f %.4f\n" % (v, (i + 1) / n))
            f.write("\n\n")
            name = "%s, %s irqchip" % (r["irq"].upper() if r["irq"] == "msi"
                                       else "INTx", r["irqchip"])
            if not panels or panels[-1][0] != name:
                panels.append((name, []))
            panels[-1][1].append((index, "%s %s" % (r["kernel"], r["modules"]),
                                  r["kernel"].split("-")[0],
                                  r["kernel"].endswith("-rt"),
                                  r["modules"] == "kit"))
            index += 1
    if not panels:
        return "no latency samples: no plot"
    if not shutil.which("gnuplot"):
        return "gnuplot missing: latency.dat only"
    cols = min(4, len(panels))
    nrows = (len(panels) + cols - 1) // cols
    lines = [
        'set multiplot layout %d,%d title "%s: raise to ISR entry, '
        'cumulative distribution"' % (nrows, cols, title.replace('"', "'")),
        "set logscale x", "set grid", "set yrange [0:1.02]",
        # one x range for every panel, in whole decades
        "set xrange [%g:%g]" % (10 ** math.floor(math.log10(max(lo, 1))),
                                10 ** math.ceil(math.log10(max(hi, 10)))),
        'set xlabel "ns (log scale)"', 'set ylabel "fraction of interrupts"',
        "set key bottom right font \",8\"", "set format x \"%.0s%c\"",
    ]
    # Per kernel line (first seen first): blue generic, red rt; then green
    # generic, purple rt.  Dark and solid kit, light and dashed stock.
    palette = [[["#80a8e0", "#1f4e9a"], ["#f0a070", "#b01818"]],
               [["#90d090", "#1d7a2e"], ["#c8a0e0", "#6a2c91"]]]
    klines = []
    for _, members in panels:
        for m in members:
            if m[2] not in klines:
                klines.append(m[2])
    for name, members in panels:
        lines.append('set title "%s"' % name)
        plots = []
        for idx, label, kline, rt, kit in members:
            colour = palette[klines.index(kline) % len(palette)][rt][kit]
            plots.append('"%s" index %d using 1:2 with steps lw 2 lc rgb "%s" '
                         'dt %d title "%s"' %
                         (dat, idx, colour, 1 if kit else 2, label))
        lines.append("plot " + ", \\\n     ".join(plots))
    lines.append("unset multiplot")
    body = "\n".join(lines) + "\n"
    width, height = 360 * cols + 60, 300 * nrows + 40
    made = []
    for term, name in (("svg size %d,%d dynamic" % (width, height),
                        "latency.svg"),
                       ("pngcairo size %d,%d font \",10\"" % (width, height),
                        "latency.png")):
        out = os.path.join(outdir, name)
        script = "set terminal %s\nset output \"%s\"\n%s" % (term, out, body)
        p = subprocess.run(["gnuplot"], input=script, text=True,
                           capture_output=True)
        if p.returncode == 0 and os.path.getsize(out) > 0:
            made.append(name)
        else:
            sys.stderr.write("report: gnuplot (%s): %s\n" %
                             (name, p.stderr.strip()[-300:]))
    with open(os.path.join(outdir, "latency.gp"), "w") as f:
        f.write("# the gnuplot script behind latency.svg; replot with\n"
                "#   gnuplot -e 'set terminal svg' latency.gp > x.svg\n" + body)
    return "plot: " + ", ".join(made) if made else "gnuplot failed"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="report directory (matrix.csv, samples-*.csv)")
    ap.add_argument("--icount", default="off",
                    help="the testbed's -icount shift, or off")
    ap.add_argument("--title", default="kvm-irqbypass interrupt-path matrix")
    a = ap.parse_args()

    path = os.path.join(a.dir, "matrix.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit("report: %s has no rows" % path)
    refusals = tracing_refusals(a.dir)
    if refusals:
        sys.exit("report: refusing to print figures measured with tracing "
                 "on:\n  " + "\n  ".join(refusals))
    rows.sort(key=order_key)
    sample_files = sorted(os.path.join(a.dir, p) for p in os.listdir(a.dir)
                          if p.startswith("samples-") and p.endswith(".csv"))
    samples = load_samples(sample_files)

    when = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")
    head, body = table(rows)
    note_lines = notes(a.icount, when, machine()) + [stray_line(a.dir)]
    sys.stdout.write(write_text(os.path.join(a.dir, "matrix.txt"), head, body,
                                note_lines))
    write_md(os.path.join(a.dir, "matrix.md"), head, body, note_lines, a.title)
    print(write_plot(a.dir, rows, samples, a.title))


if __name__ == "__main__":
    main()
