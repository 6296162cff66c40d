#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The table of make netbench, from the logs scripts/kit/netbench.sh
collected under REPORT/netbench/<flavour>-<modules>/:

  nb-<irq>-<chip>-l2.txt      the L2 guest's console (rr-client lines)
  nb-<irq>-<chip>-server.txt  the rr server in the testbed (counters)

  nb-<irq>-<chip>-a-*.txt     kit-modules boots: the same-boot A guests
                              (stock paths); the files above are then B's

Writes REPORT/tcprr.csv (header irq,irqchip,kernel,modules,trans_per_s,
spread_pct,ratio_to_msi_on, then qemu,uexits_per_trans,vmexits_per_trans,
ctxsw_per_trans,kit_stock_ratio,kit_stock_ci_low,kit_stock_ci_high),
tcprr-reps.csv (every repetition, with the server's counters), tcprr.md
and tcprr.txt, and prints the text table.

trans_per_s is the median over the repetitions of the client's rate (as
netperf's TCP_RR reports it, measured in the L2 guest); spread_pct is
(max - min) / median.  The per-transaction counts are host-wide deltas the
server read around each repetition, medians over the repetitions.

kit_stock_ratio is the median of the paired ratios B/A of a kit-modules
boot (guest i of B over guest i of A, one boot) and kit_stock_ci_low/high
its distribution-free interval for the median (the sign test's order
statistics; no resampling, nothing random): the widest-inward pair of
order statistics x(k), x(n-k+1) whose coverage 1 - 2 P(Bin(n, 1/2) < k)
is at least 95 %.  With 6 to 8 pairs that is min..max (96.9 % to 99.2 %);
with 5 or fewer pairs no pair reaches 95 % and min..max is given with its
lower coverage (5 pairs: 93.8 %), which the notes state.
"""
import argparse
import csv
import datetime
import importlib.util
import math
import os
import re
import statistics
import sys

IRQS = ("msi", "nomsi")
CHIPS = ("on", "split")
SEED_NOMSI_SPLIT = 0.93  # 13142 / 14056 pps, seed 000 (whole series)
KV = re.compile(r"(\w+)=(-?[0-9.]+)")


CONF = 0.95
COUNTS = ("exits", "irq_exits", "halt_exits", "io_exits", "mmio_exits",
          "irqwin_exits", "uexits", "ctxt", "irqs", "fp_hit", "l2_tx", "l2_rx")


def parse(path, prefix):
    """The repetitions' lines; each carries "guest", the NB-GUEST line
    before it (0 when the log has none: one guest for all)."""
    reps, guest = [], 0
    try:
        with open(path, errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith("NB-GUEST: "):
                    guest = int(line.split()[1])
                elif line.startswith(prefix + ": rep="):
                    r = {k: float(v) for k, v in KV.findall(line)}
                    r["guest"] = guest
                    reps.append(r)
    except OSError:
        pass
    return reps


def binom_cdf(k, n):
    """P(Bin(n, 1/2) <= k)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n


def median_interval(vals, conf=CONF):
    """(median, low, high, coverage): the sign-test interval of the median,
    x(k)..x(n-k+1) for the largest k whose coverage reaches conf; min..max
    with its own coverage when none does.  None for no values."""
    x = sorted(vals)
    n = len(x)
    if not n:
        return None
    k = 1
    while k + 1 <= n - k and 1 - 2 * binom_cdf(k, n) >= conf:
        k += 1
    return (statistics.median(x), x[k - 1], x[n - k],
            1 - 2 * binom_cdf(k - 1, n))


def pairs(a, b):
    """B/A of the client's rates, guest i of B over guest i of A."""
    ra = {r["guest"]: r["trans_per_s"] for r in a if r["guest"]}
    return [r["trans_per_s"] / ra[r["guest"]] for r in b
            if r["guest"] in ra and ra[r["guest"]] > 0]


def verdict(interval, what, below, above, neither=None):
    """The verdict line on a median's sign-test interval (median, low,
    high, coverage, as median_interval() gives it): @below or @above only
    when the whole interval lies below or above 1, none when it covers
    less than CONF, @neither (or no line: None) when it contains 1."""
    _, lo, hi, cov = interval
    if cov < CONF:
        return ("no verdict, the interval covers less than "
                f"{CONF * 100:.0f} %: " + what)
    if hi < 1:
        return f"{below} (the whole interval below 1): " + what
    if lo > 1:
        return f"{above} (the whole interval above 1): " + what
    if neither is None:
        return None
    return f"{neither} (the interval contains 1): " + what


def split_on_paired(kernel, modules, on, split):
    """The note on nomsi/split against nomsi/on, paired: guest i of split
    over guest i of on (kit-modules boots, B guests).  l1-run.sh runs the
    combinations' guests round by round (guest i of every combination
    before guest i + 1), so a pair ran minutes apart, not a combination's
    whole run apart.  [] without guest numbers (no A/B)."""
    pr = pairs(on, split)
    if len(pr) < 2:
        return []
    iv = median_interval(pr)
    what = (f"{kernel} {modules} nomsi/split over nomsi/on, paired "
            f"(guest i of each): {iv[0]:.3f}, interval {iv[1]:.3f}..{iv[2]:.3f} "
            f"({len(pr)} pairs, coverage {iv[3] * 100:.1f} %)")
    return [verdict(iv, what, "split BELOW on", "split above on",
                    "split not shown below on")]


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
    clients = {}    # (kernel, modules, irq, chip): the row's client lines
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
                a_client = parse(stem + "-a-l2.txt", "rr-client")
                a_server = parse(stem + "-a-server.txt", "rr-server")
                if not client:
                    if os.path.exists(stem + "-l2.txt"):
                        print(f"netbench: {kernel}/{modules} {irq}/{chip}: "
                              "no result (see the log)", file=sys.stderr)
                    continue
                tps, sp = spread([r["trans_per_s"] for r in client])
                row = dict(
                    irq=irq, irqchip=chip, kernel=kernel, modules=modules,
                    trans_per_s=tps, spread_pct=sp, reps=len(client),
                    n=int(client[0]["n"]),
                    exits=per_trans(server, "exits"),
                    irq_exits=per_trans(server, "irq_exits"),
                    halt_exits=per_trans(server, "halt_exits"),
                    uexits=per_trans(server, "uexits"),
                    ctxsw=per_trans(server, "ctxt"),
                    irqs=per_trans(server, "irqs"),
                    l2_tx=per_trans(server, "l2_tx"),
                    l2_rx=per_trans(server, "l2_rx"),
                    fastpath=fastpath_pct(server),
                    a_tps=None, a_exits=None, pair=None, npairs=0)
                if modules == "kit" and a_client:
                    pr = pairs(a_client, client)
                    row.update(
                        a_tps=statistics.median(
                            r["trans_per_s"] for r in a_client),
                        a_exits=per_trans(a_server, "exits"),
                        pair=median_interval(pr), npairs=len(pr))
                rows.append(row)
                clients[(kernel, modules, irq, chip)] = client
                for path, cl, sv in (("a", a_client, a_server),
                                     ("b" if a_client else "", client, server)):
                    bysrv = {(r["guest"], r["rep"]): r for r in sv}
                    for i, c in enumerate(cl):
                        s = bysrv.get((c["guest"], c["rep"]), {})
                        n = c["n"]
                        reprows.append([irq, chip, kernel, modules, i + 1,
                                        int(n), f"{c['trans_per_s']:.1f}",
                                        f"{s.get('trans_per_s', 0):.1f}",
                                        *(f"{s[k] / n:.3f}"
                                          if s.get(k, -1) >= 0 else ""
                                          for k in COUNTS),
                                        path, int(c["guest"])])
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
                    "spread_pct", "ratio_to_msi_on", "qemu",
                    "uexits_per_trans", "vmexits_per_trans",
                    "ctxsw_per_trans", "kit_stock_ratio", "kit_stock_ci_low",
                    "kit_stock_ci_high"])
        for r in rows:
            pr = r["pair"]
            w.writerow([r["irq"], r["irqchip"], r["kernel"], r["modules"],
                        f"{r['trans_per_s']:.1f}", f"{r['spread_pct']:.2f}",
                        fmt(r["ratio"], 3) if r["ratio"] else "", a.qemu,
                        *("" if v is None else f"{v:.3f}"
                          for v in (r["uexits"], r["exits"], r["ctxsw"])),
                        *((f"{v:.3f}" for v in pr[:3]) if pr else
                          ("", "", ""))])
    with open(os.path.join(a.report, "tcprr-reps.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["irq", "irqchip", "kernel", "modules", "rep", "n",
                    "client_trans_per_s", "server_trans_per_s",
                    "vmexits_per_trans", "irq_exits_per_trans",
                    "halt_exits_per_trans", "io_exits_per_trans",
                    "mmio_exits_per_trans", "irq_window_exits_per_trans",
                    "uexits_per_trans",
                    "ctxsw_per_trans", "vfio_irqs_per_trans",
                    "fastpath_hits_per_trans", "l2_tx_pkts_per_trans",
                    "l2_rx_pkts_per_trans", "ab", "guest"])
        w.writerows(reprows)

    # The seed's columns first, then spread and the counts behind them.
    head = ["IRQ type", "irqchip", "kernel", "modules", "TCP_RR trans/s",
            "ratio to msi/on", "VM exits/trans", "user exits/trans",
            "spread %", "kit/stock", "B/A paired", "B/A interval",
            "A trans/s", "host-irq exits/trans", "halt exits/trans",
            "ctxsw/trans", "vfio irqs/trans", "fast path %",
            "L2 tx pkts/trans", "L2 rx pkts/trans"]

    def interval(pr):
        return f"{pr[1]:.2f}..{pr[2]:.2f}" if pr else "-"

    body = [[r["irq"], r["irqchip"], r["kernel"], r["modules"],
             f"{r['trans_per_s']:.0f}", fmt(r["ratio"]), fmt(r["exits"]),
             fmt(r["uexits"]), f"{r['spread_pct']:.1f}", fmt(r["vs_stock"]),
             fmt(r["pair"][0] if r["pair"] else None),
             interval(r["pair"]), fmt(r["a_tps"], 0),
             fmt(r["irq_exits"]), fmt(r["halt_exits"]),
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
                 "each repetition): VM exits (kvm/exits) and, of them, host "
                 "interrupts that arrived while a guest ran, the NIC's own "
                 "and timer ticks (kvm/irq_exits), and guest HLTs "
                 "(kvm/halt_exits); context switches (/proc/stat ctxt), "
                 "interrupts vfio handled (/proc/interrupts), packets the L2 "
                 "guest sent and received (the testbed NIC's counters).  "
                 "Only with NETBENCH_EVENTS=1, which turns trace events on: "
                 "returns of KVM_RUN to QEMU (kvm_userspace_exit; KVM keeps "
                 "no counter of them, and none of the split irqchip's EOI "
                 "exits) and fast path %, the kit's MSIs injected from the "
                 "hard-irq handler (vfio_fastpath_hit) out of all its "
                 "attempts.")
    npairs = sorted({r["npairs"] for r in rows if r["pair"]})
    if npairs:
        cov = ", ".join(f"{n} pairs {median_interval([1.0] * n)[3] * 100:.1f} %"
                        for n in npairs)
        notes.append("Same-boot A/B (kit-modules boots): per combination "
                     "pairs of guests, one repetition each, A B A B ...; A "
                     "is the stock path: vfio_pci_core.fastpath=0 (stock's "
                     "hard-irq handlers, MSI and INTx)" +
                     (" and the vfio-pci property x-kvm-split-resample=off "
                      "(QEMU resamples split-irqchip INTx on the EOI exit; "
                      "the property changes only the nomsi/split rows)"
                      if a.qemu == "kit" else "") +
                     "; B the kit's path (fastpath=1" +
                     (", the property on" if a.qemu == "kit" else "") +
                     ").  The kit row's trans/s and counts are B's; B/A "
                     "paired: the median of guest i's B/A; its interval: "
                     "the sign test's distribution-free interval for the "
                     "median (order statistics, nothing resampled), "
                     f"coverage {cov} (at least 95 % needs 6 pairs; "
                     "6 to 8 pairs give min..max).  kit/stock: the kit "
                     "row over the stock-modules boot's row (two boots).")
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
                notes.extend(split_on_paired(
                    k, m, clients[(k, m, "nomsi", "on")],
                    clients[(k, m, "nomsi", "split")]))
    for r in rows:
        pr = r["pair"]
        if not pr:
            continue
        what = (f"{r['kernel']} {r['irq']}/{r['irqchip']} kit B/A "
                f"{pr[0]:.3f}, interval {pr[1]:.3f}..{pr[2]:.3f} "
                f"({r['npairs']} pairs, coverage {pr[3] * 100:.1f} %)")
        v = verdict(pr, what, "BELOW STOCK", "above stock")
        if v:
            notes.append(v)

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
