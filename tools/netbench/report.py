#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The table of make netbench, from the logs scripts/kit/netbench.sh
collected under REPORT/netbench/<flavour>-<modules>/:

  nb-<irq>-<chip>-l2.txt      the L2 guest's console (rr-client lines)
  nb-<irq>-<chip>-server.txt  the rr server in the testbed (counters)

Writes REPORT/tcprr.csv (header irq,irqchip,kernel,modules,trans_per_s,
spread_pct,ratio_to_msi_on), tcprr-reps.csv (every repetition, with the
server's counters), tcprr.md and tcprr.txt, and prints the text table.

trans_per_s is the median over the repetitions of the client's rate (as
netperf's TCP_RR reports it, measured in the L2 guest); spread_pct is
(max - min) / median.  The per-transaction counts are host-wide deltas the
server read around each repetition, medians over the repetitions.
"""
import argparse
import csv
import datetime
import importlib.util
import os
import re
import statistics
import sys

IRQS = ("msi", "nomsi")
CHIPS = ("on", "split")
SEED_NOMSI_SPLIT = 0.93  # 13142 / 14056 pps, seed 000 (whole series)
KV = re.compile(r"(\w+)=(-?[0-9.]+)")


def parse(path, prefix):
    reps = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith(prefix + ": rep="):
                    reps.append({k: float(v) for k, v in KV.findall(line)})
    except OSError:
        pass
    return reps


def spread(vals):
    med = statistics.median(vals)
    return med, (max(vals) - min(vals)) * 100 / med if med else 0.0


def per_trans(server, key):
    vals = [r[key] / r["n"] for r in server if r.get(key, -1) >= 0 and r["n"]]
    return statistics.median(vals) if vals else None


def fastpath_pct(server):
    """Share of the vfio MSIs the kit's fast path injected (kit only)."""
    hit = sum(r.get("fp_hit", -1) for r in server if r.get("fp_hit", -1) >= 0)
    miss = sum(r.get("fp_miss", -1) for r in server
               if r.get("fp_miss", -1) >= 0)
    if not any("fp_hit" in r for r in server) or hit + miss == 0:
        return None
    return hit * 100 / (hit + miss)


def machine():
    """The machine line of tools/irqlat/report.py (CPUs, distribution, QEMU)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "irqlat", "report.py")
    spec = importlib.util.spec_from_file_location("irqlat_report", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.machine()


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--icount", default="off")
    ap.add_argument("--kline", default="6.12")
    ap.add_argument("--qemu", default="stock", choices=("stock", "kit"))
    ap.add_argument("report")
    a = ap.parse_args()
    base = os.path.join(a.report, "netbench")
    rows, reprows = [], []
    for d in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        m = re.fullmatch(r"(generic|rt)-(stock|kit)", d)
        if not m:
            continue
        flavour, modules = m.groups()
        kernel = f"{a.kline}-{flavour}"
        for irq in IRQS:
            for chip in CHIPS:
                stem = os.path.join(base, d, f"nb-{irq}-{chip}")
                client = parse(stem + "-l2.txt", "rr-client")
                server = parse(stem + "-server.txt", "rr-server")
                if not client:
                    if os.path.exists(stem + "-l2.txt"):
                        print(f"netbench: {kernel}/{modules} {irq}/{chip}: "
                              "no result (see the log)", file=sys.stderr)
                    continue
                tps, sp = spread([r["trans_per_s"] for r in client])
                rows.append(dict(
                    irq=irq, irqchip=chip, kernel=kernel, modules=modules,
                    trans_per_s=tps, spread_pct=sp, reps=len(client),
                    n=int(client[0]["n"]),
                    exits=per_trans(server, "exits"),
                    uexits=per_trans(server, "uexits"),
                    ctxsw=per_trans(server, "ctxt"),
                    irqs=per_trans(server, "irqs"),
                    l2_tx=per_trans(server, "l2_tx"),
                    l2_rx=per_trans(server, "l2_rx"),
                    fastpath=fastpath_pct(server)))
                for i, c in enumerate(client):
                    s = server[i] if i < len(server) else {}
                    n = c["n"]
                    reprows.append([irq, chip, kernel, modules, i + 1, int(n),
                                    f"{c['trans_per_s']:.1f}",
                                    f"{s.get('trans_per_s', 0):.1f}",
                                    *(f"{s[k] / n:.3f}" if s.get(k, -1) >= 0
                                      else "" for k in ("exits", "uexits",
                                                        "ctxt", "irqs",
                                                        "fp_hit", "l2_tx",
                                                        "l2_rx"))])
    if not rows:
        print("netbench: no results", file=sys.stderr)
        return 1

    order = {(f"{a.kline}-{f}", mo, i, c): n for n, (f, i, c, mo) in enumerate(
        (f, i, c, mo) for f in ("generic", "rt") for i in IRQS
        for c in CHIPS for mo in ("stock", "kit"))}
    rows.sort(key=lambda r: order.get(
        (r["kernel"], r["modules"], r["irq"], r["irqchip"]), 99))
    idx = {(r["kernel"], r["modules"], r["irq"], r["irqchip"]): r for r in rows}
    for r in rows:
        ref = idx.get((r["kernel"], r["modules"], "msi", "on"))
        r["ratio"] = r["trans_per_s"] / ref["trans_per_s"] if ref else None
        st = idx.get((r["kernel"], "stock", r["irq"], r["irqchip"]))
        r["vs_stock"] = (r["trans_per_s"] / st["trans_per_s"]
                         if st and r["modules"] == "kit" else None)

    with open(os.path.join(a.report, "tcprr.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["irq", "irqchip", "kernel", "modules", "trans_per_s",
                    "spread_pct", "ratio_to_msi_on"])
        for r in rows:
            w.writerow([r["irq"], r["irqchip"], r["kernel"], r["modules"],
                        f"{r['trans_per_s']:.1f}", f"{r['spread_pct']:.2f}",
                        fmt(r["ratio"], 3) if r["ratio"] else ""])
    with open(os.path.join(a.report, "tcprr-reps.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["irq", "irqchip", "kernel", "modules", "rep", "n",
                    "client_trans_per_s", "server_trans_per_s",
                    "vmexits_per_trans", "uexits_per_trans",
                    "ctxsw_per_trans", "vfio_irqs_per_trans",
                    "fastpath_hits_per_trans", "l2_tx_pkts_per_trans",
                    "l2_rx_pkts_per_trans"])
        w.writerows(reprows)

    # The seed's columns first, then spread and the counts behind them.
    head = ["IRQ type", "irqchip", "kernel", "modules", "TCP_RR trans/s",
            "ratio to msi/on", "VM exits/trans", "user exits/trans",
            "spread %", "kit/stock", "ctxsw/trans", "vfio irqs/trans",
            "fast path %", "L2 tx pkts/trans", "L2 rx pkts/trans"]
    body = [[r["irq"], r["irqchip"], r["kernel"], r["modules"],
             f"{r['trans_per_s']:.0f}", fmt(r["ratio"]), fmt(r["exits"]),
             fmt(r["uexits"]), f"{r['spread_pct']:.1f}", fmt(r["vs_stock"]),
             fmt(r["ctxsw"]), fmt(r["irqs"]), fmt(r["fastpath"], 1),
             fmt(r["l2_tx"]), fmt(r["l2_rx"])]
            for r in rows]
    notes = []
    clock = ("emulated time: the testbed ran under -icount shift=%s,sleep=off"
             % a.icount if a.icount != "off" else
             "wall-clock time of an emulated machine (no -icount): load-dependent")
    notes.append(f"trans/s: median of {rows[0]['reps']} repetitions of "
                 f"{rows[0]['n']} transactions, {clock}; compare rows "
                 "only within one run.")
    notes.append("Counts per transaction (host-wide, read by the server around "
                 "each repetition): VM exits (kvm/exits), context switches "
                 "(/proc/stat ctxt), interrupts vfio handled (/proc/interrupts), "
                 "packets the L2 guest sent and received (the testbed NIC's "
                 "counters); only with NETBENCH_EVENTS=1, which turns trace "
                 "events on: returns of KVM_RUN to QEMU (kvm_userspace_exit) "
                 "and fast path %, the kit's MSIs injected from the hard-irq "
                 "handler (vfio_fastpath_hit) out of all its attempts.")
    notes.append("VMM of the L2 guests, every row: " +
                 ("the kit's QEMU (make qemu, QEMU=kit): split-irqchip INTx "
                  "resampled by KVM where the modules offer "
                  "KVM_CAP_SPLIT_IRQCHIP_RESAMPLE" if a.qemu == "kit" else
                  "Debian's QEMU (QEMU=stock): split-irqchip INTx resampled "
                  "by QEMU on the EOI exit"))
    for k in sorted({r["kernel"] for r in rows}):
        for m in ("stock", "kit"):
            on = idx.get((k, m, "nomsi", "on"))
            sp = idx.get((k, m, "nomsi", "split"))
            if on and sp:
                notes.append(f"{k} {m} nomsi/split against nomsi/on: "
                             f"{sp['trans_per_s'] / on['trans_per_s']:.2f} "
                             f"(the seed: {SEED_NOMSI_SPLIT:.2f})")
    for r in rows:
        st = idx.get((r["kernel"], "stock", r["irq"], r["irqchip"]))
        if r["modules"] != "kit" or not st:
            continue
        margin = max(r["spread_pct"], st["spread_pct"]) / 100
        if r["vs_stock"] < 1 - margin:
            notes.append(f"BELOW STOCK beyond the spread: {r['kernel']} "
                         f"{r['irq']}/{r['irqchip']} kit/stock "
                         f"{r['vs_stock']:.3f} (spread {margin * 100:.1f}%)")

    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    notes.append("Run %s on %s; load average %.1f at the end (the emulator itself keeps about 2)." %
                 (when, machine(), os.getloadavg()[0]))

    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    line = lambda cells: "  ".join(str(c).rjust(w) for c, w in zip(cells, widths))
    txt = [line(head), line(["-" * w for w in widths])]
    txt += [line(b) for b in body]
    txt += [""] + notes
    with open(os.path.join(a.report, "tcprr.txt"), "w") as f:
        f.write("\n".join(txt) + "\n")
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    md += ["| " + " | ".join(str(c) for c in b) + " |" for b in body]
    md += [""] + ["- " + n for n in notes]
    with open(os.path.join(a.report, "tcprr.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(txt))
    return 0


if __name__ == "__main__":
    sys.exit(main())
