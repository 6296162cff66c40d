#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The table and the check step of make mmiobench, from the logs
scripts/kit/mmiobench.sh collected under
REPORT/mmiobench/<line>-<flavour>-<modules>/:

  mb-<transport>-<irqchip>-l2.txt      the L2 guests' consoles (rr-client
                                       lines, MB-L2-* lines of l2-init)
  mb-<transport>-<irqchip>-server.txt  the rr server in the testbed
                                       (counters, MB-L1-RETRANS)

each file one guest after another, every guest led by "MB-GUEST: REP".

Writes REPORT/mmio.csv (header transport,irqchip,kernel,trans_per_s,
spread_pct,ratio_to_pci,ratio_to_mmio,uexits_per_trans,vmexits_per_trans,
guest_irqs_per_trans), REPORT/mmio-guests.csv (every guest) and
REPORT/mmio.txt, and prints the table and the check step.

trans_per_s is the median over the guests of the client's rate (measured
in the L2 guest); spread_pct (max - min) / median.  ratio_to_pci and
ratio_to_mmio divide it by the pci and the mmio row of the same irqchip
and kernel.  uexits_per_trans (returns of KVM_RUN to QEMU) and
vmexits_per_trans (KVM's exits) are host-wide deltas the server read
around the timed transactions, divided by them; guest_irqs_per_trans is
the guest's /proc/interrupts delta over the NIC's rows (every vector, or
the legacy line) divided by the transactions of the guest's run (warm-up
included, as the guest reads them around the whole run).  Medians over
the guests.  kernel is the testbed's <line>-<flavour>-<modules>.

The check step (TAP): per combination, every guest connected and ran its
transactions; the MSI transports used MSI (the NIC's legacy rows did not
move, its MSI rows did; mmio the other way round; for mmio-msi* the driver
reported the extension); no lost interrupt: no TCP segment was
retransmitted by the guest during any guest or by the testbed during the
timed transactions (a response whose interrupt was lost stays unread
until a retransmission; rr's transactions have one in flight; the
testbed's count around the whole guest, connect and teardown included, is
printed beside it, and judged for logs without the timed count), and the
NIC's packets received cover
the transactions; and the guest's write to /dev/console arrived (the
UART's transmit interrupt is a legacy IOAPIC interrupt: with
kernel-irqchip=on it is lost if committing the NIC's MSI routes dropped
KVM's default GSI routes, patches/qemu-7.2/0004).  Interrupts whose
handler found no used-ring update (/proc/irq/N/spurious) are reported,
not judged.  Exit code 1 when a
check failed, 2 when the script itself failed.
"""
import argparse
import csv
import datetime
import importlib.util
import os
import re
import statistics
import sys

TRANSPORTS = ("pci", "mmio", "mmio-msi", "mmio-msi-doorbell")
# Not in the default combinations: mmio-msi with the guest driver's
# max_vectors=2, the config vector and one vector for every queue.
EXTRA_TRANSPORTS = ("mmio-msi-shared",)
CHIPS = ("on", "split")
# Seed 003 (2019, the proposal's TCP_RR table, first run): the patched
# device had MSI and doorbells.
SEED = {"pci": 9536, "mmio": 6939, "mmio-msi": 9500, "mmio-msi-doorbell": 9500}
SEED_NONE = "-"
HEADER = ("transport,irqchip,kernel,trans_per_s,spread_pct,ratio_to_pci,"
          "ratio_to_mmio,uexits_per_trans,vmexits_per_trans,"
          "guest_irqs_per_trans").split(",")
KV = re.compile(r"(\w+)=(-?[0-9.]+)")


def netbench_report():
    """tools/netbench/report.py as a module (spread, fmt, machine)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "netbench", "report.py")
    spec = importlib.util.spec_from_file_location("netbench_report", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def split_guests(path):
    """{rep: [lines]} of a log, split at its MB-GUEST lines."""
    guests, cur = {}, None
    try:
        with open(path, errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith("MB-GUEST: "):
                    cur = int(line.split()[1])
                    guests.setdefault(cur, [])
                elif cur is not None:
                    guests[cur].append(line)
    except OSError:
        pass
    return guests


def kv(line):
    return {k: float(v) for k, v in KV.findall(line)}


def guest_record(rep, l2, srv):
    """One guest's figures from its console and server lines."""
    g = {"rep": rep, "client": None, "server": None, "rc": None,
         "irqs": [], "net": None, "mode": "", "l1_retrans": None,
         "l1_kinds": {}, "tty": False}
    for line in l2:
        if line.startswith("rr-client: rep="):
            g["client"] = kv(line)
        elif line.startswith("MB-L2-RC="):
            g["rc"] = int(line.split("=", 1)[1].split()[0])
        elif line.startswith("MB-L2-IRQ: "):
            f = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
            g["irqs"].append(f)
        elif line.startswith("MB-L2-NET: "):
            g["net"] = kv(line)
        elif line.startswith("MB-L2-MODE: "):
            g["mode"] = line.split(None, 1)[1]
        elif line.startswith("MB-L2-TTY: "):
            g["tty"] = True
    for line in srv:
        if line.startswith("rr-server: rep="):
            g["server"] = kv(line)
        elif line.startswith("MB-L1-RETRANS: "):
            g["l1_retrans"] = int(line.split()[1])
            g["l1_kinds"] = kv(line)
    return g


def irq_sum(g, kind):
    return sum(int(f.get("delta", 0)) for f in g["irqs"] if f.get("kind") == kind)


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


class Tap:
    def __init__(self):
        self.n = self.bad = 0
        self.lines = []

    def ok(self, cond, what):
        self.n += 1
        if not cond:
            self.bad += 1
        self.lines.append(f"{'ok' if cond else 'not ok'} {self.n} - {what}")


def paired_ratios(rows, tps_by, nb):
    """Per row and reference (pci, mmio): the ratios of the repetitions
    both ran, their median and sign-test interval (netbench's), and a
    verdict only from the interval: above/below when it excludes 1."""
    out = []
    for r in rows:
        mine = tps_by.get((r["transport"], r["irqchip"], r["kernel"]))
        for ref in ("pci", "mmio"):
            other = tps_by.get((ref, r["irqchip"], r["kernel"]))
            if ref == r["transport"] or not mine or not other:
                continue
            vals = [mine[k] / other[k] for k in sorted(mine)
                    if k in other and other[k] > 0]
            mi = nb.median_interval(vals)
            if not mi:
                continue
            med, low, high, cov = mi
            if cov < nb.CONF:
                verdict = f"too few pairs for {nb.CONF:.0%}"
            elif low > 1:
                verdict = f"above {ref}"
            elif high < 1:
                verdict = f"below {ref}"
            else:
                verdict = f"not told apart from {ref}"
            out.append({"transport": r["transport"], "irqchip": r["irqchip"],
                        "kernel": r["kernel"], "ref": ref, "n": len(vals),
                        "median": med, "low": low, "high": high,
                        "coverage": cov, "verdict": verdict})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--combos", default=" ".join(
        f"{t}-{c}" for c in CHIPS for t in TRANSPORTS))
    ap.add_argument("--reps", type=int, default=0,
                    help="guests expected per combination (0: as found)")
    ap.add_argument("--icount", default="off",
                    help="the testbed's -icount shift, or off (real time)")
    ap.add_argument("--no-machine", action="store_true",
                    help="leave the machine line out (tests)")
    ap.add_argument("report")
    a = ap.parse_args()
    nb = netbench_report()
    base = os.path.join(a.report, "mmiobench")
    boots = sorted(d for d in os.listdir(base)
                   if os.path.isdir(os.path.join(base, d))) if os.path.isdir(base) else []
    combos = a.combos.split()
    rows, guests_out, tap = [], [], Tap()
    # (transport, irqchip, kernel) -> {repetition: trans/s}, for the
    # paired ratios: repetition r of every combination ran next to each
    # other in the same boot.
    tps_by = {}
    for kernel in boots:
        for combo in combos:
            t, chip = combo.rsplit("-", 1)
            if t not in TRANSPORTS + EXTRA_TRANSPORTS or chip not in CHIPS:
                raise ValueError(f"unknown combination {combo}")
            stem = os.path.join(base, kernel, f"mb-{combo}")
            l2 = split_guests(stem + "-l2.txt")
            srv = split_guests(stem + "-server.txt")
            gs = [guest_record(r, l2.get(r, []), srv.get(r, []))
                  for r in sorted(set(l2) | set(srv))]
            done = [g for g in gs if g["client"] and g["server"] and g["rc"] == 0]
            for g in gs:
                c, s, n = g["client"] or {}, g["server"] or {}, g["net"] or {}
                sn = s.get("n", 0)
                guests_out.append({
                    "transport": t, "irqchip": chip, "kernel": kernel,
                    "rep": g["rep"], "rc": g["rc"],
                    "trans_per_s": c.get("trans_per_s"),
                    "uexits": s.get("uexits"), "exits": s.get("exits"),
                    "mmio_exits": s.get("mmio_exits"), "io_exits": s.get("io_exits"),
                    "server_trans": sn or None,
                    "guest_trans": n.get("trans"),
                    "irq_msi": irq_sum(g, "msi"), "irq_legacy": irq_sum(g, "legacy"),
                    "unhandled": sum(int(f.get("unhandled", 0)) for f in g["irqs"]),
                    "rx": n.get("rx"), "retrans": n.get("retrans"),
                    "l1_retrans": g["l1_retrans"], "mode": g["mode"]})
            expect = a.reps or len(gs)
            tap.ok(len(done) == expect and expect > 0,
                   f"{kernel} {combo}: {len(done)} of {expect} guests connected and ran rr")
            if not done:
                rows.append({"transport": t, "irqchip": chip, "kernel": kernel})
                continue
            msi = [irq_sum(g, "msi") for g in done]
            leg = [irq_sum(g, "legacy") for g in done]
            if t == "mmio":
                tap.ok(all(x > 0 for x in leg) and not any(msi),
                       f"{kernel} {combo}: the legacy interrupt only "
                       f"(legacy {sum(leg)}, MSI {sum(msi)})")
            else:
                ext = t == "pci" or all("MSI" in g["mode"] for g in done)
                tap.ok(all(x > 0 for x in msi) and not any(leg) and ext,
                       f"{kernel} {combo}: MSI vectors only "
                       f"(MSI {sum(msi)}, legacy {sum(leg)}"
                       f"{'' if t == 'pci' else ', extension at probe' if ext else ', no extension at probe'})")
            rt = [(g["net"] or {}).get("retrans") for g in done]
            l1rt = [g["l1_retrans"] for g in done]
            short = [g["rep"] for g in done
                     if (g["net"] or {}).get("rx", 0) < (g["net"] or {}).get("trans", 1)]
            unh = sum(int(f.get("unhandled", 0)) for g in done for f in g["irqs"])
            l1sum = sum(x or 0 for x in l1rt)  # testbed retransmissions
            kinds = {k: sum(int(g["l1_kinds"].get(k, 0)) for g in done)
                     for k in ("probes", "timeouts", "synretrans")}
            l1kinds = (f" (loss probes {kinds['probes']}, timeouts {kinds['timeouts']}, "
                       f"SYN-ACK {kinds['synretrans']})"
                       if l1sum and all("probes" in g["l1_kinds"] for g in done) else "")
            # The testbed's retransmissions during the timed transactions
            # (rr server's counters), where recorded: the window the rows
            # measure.  The whole guest's (connect, warm-up, teardown) are
            # printed beside them.
            timed = [g["server"].get("retrans") for g in done]
            if all(x is not None and x >= 0 for x in timed):
                l1judged = int(sum(timed))
                l1what = (f"testbed {l1judged} in the timed transactions, "
                          f"{l1sum} around the whole guests{l1kinds}")
            else:
                l1judged = l1sum
                l1what = f"testbed {l1sum}{l1kinds}"
            tap.ok(all(x == 0 for x in rt) and l1judged == 0 and not short,
                   f"{kernel} {combo}: no lost interrupt (TCP retransmissions: "
                   f"guest {sum(x or 0 for x in rt)}, {l1what}; "
                   f"guests with fewer packets received than transactions: {len(short)}; "
                   f"handler calls without a used-ring update: {unh})")
            notty = [g["rep"] for g in done if not g["tty"]]
            tap.ok(not notty,
                   f"{kernel} {combo}: the guest's write to /dev/console arrived "
                   f"(legacy interrupts beside the NIC's; missing in "
                   f"{len(notty)} of {len(done)} guests)")
            tps = [g["client"]["trans_per_s"] for g in done]
            tps_by[(t, chip, kernel)] = {g["rep"]: g["client"]["trans_per_s"]
                                         for g in done}
            m, sp = nb.spread(tps)

            def per(key, gl=done):
                return med([g["server"][key] / g["server"]["n"] for g in gl
                            if g["server"].get(key, -1) >= 0 and g["server"].get("n")])
            gi = med([(irq_sum(g, "msi") + irq_sum(g, "legacy")) / g["net"]["trans"]
                      for g in done if g["net"] and g["net"].get("trans")])
            rows.append({"transport": t, "irqchip": chip, "kernel": kernel,
                         "trans_per_s": m, "spread_pct": sp,
                         "uexits_per_trans": per("uexits"),
                         "vmexits_per_trans": per("exits"),
                         "guest_irqs_per_trans": gi})
    by = {(r["transport"], r["irqchip"], r["kernel"]): r for r in rows}
    for r in rows:
        for ref in ("pci", "mmio"):
            o = by.get((ref, r["irqchip"], r["kernel"]), {})
            if r.get("trans_per_s") and o.get("trans_per_s"):
                r[f"ratio_to_{ref}"] = r["trans_per_s"] / o["trans_per_s"]

    def cell(v, d=2):
        return "" if v is None else f"{v:.{d}f}"
    with open(os.path.join(a.report, "mmio.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEADER)
        for r in rows:
            w.writerow([r["transport"], r["irqchip"], r["kernel"],
                        cell(r.get("trans_per_s"), 1), cell(r.get("spread_pct"), 1),
                        cell(r.get("ratio_to_pci")), cell(r.get("ratio_to_mmio")),
                        cell(r.get("uexits_per_trans")),
                        cell(r.get("vmexits_per_trans")),
                        cell(r.get("guest_irqs_per_trans"))])
    if guests_out:
        with open(os.path.join(a.report, "mmio-guests.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(guests_out[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(guests_out)

    fmt = nb.fmt
    out = []
    out.append("make mmiobench: TCP_RR, L2 Debian 6.12 guest on microvm, "
               "virtio-net + vhost-net")
    if not a.no_machine:
        out.append(f"{datetime.date.today()}, {nb.machine()}")
    if a.icount != "off":
        out.append("trans/s in emulated time: the testbed ran under -icount "
                   f"shift={a.icount},sleep=off (instructions run, not host "
                   "load; guests of one combination still differ)")
    else:
        out.append("trans/s are emulator figures (nested KVM under TCG, wall "
                   "clock); the counts per transaction are the evidence")
    out.append("")
    hdr = (f"{'transport':<18} {'irqchip':<7} {'kernel':<18} {'trans/s':>8} "
           f"{'spread%':>7} {'/pci':>5} {'/mmio':>5} {'uexit/t':>7} "
           f"{'vmexit/t':>8} {'girq/t':>6}  seed 003")
    out.append(hdr)
    out.append("-" * len(hdr))
    for r in rows:
        out.append(f"{r['transport']:<18} {r['irqchip']:<7} {r['kernel']:<18} "
                   f"{fmt(r.get('trans_per_s'), 0):>8} {fmt(r.get('spread_pct'), 1):>7} "
                   f"{fmt(r.get('ratio_to_pci')):>5} {fmt(r.get('ratio_to_mmio')):>5} "
                   f"{fmt(r.get('uexits_per_trans')):>7} "
                   f"{fmt(r.get('vmexits_per_trans')):>8} "
                   f"{fmt(r.get('guest_irqs_per_trans')):>6}  "
                   f"{SEED.get(r['transport'], SEED_NONE)}")
    pairs = paired_ratios(rows, tps_by, nb)
    if pairs:
        out.append("")
        out.append("Paired ratios: repetition r of a row over repetition r of the "
                   "reference, the same boot; median and its sign-test interval")
        out.append(f"{'transport':<18} {'irqchip':<7} {'kernel':<18} {'over':<5} "
                   f"{'pairs':>5} {'median':>6} {'interval':>11} {'cover':>5}  verdict")
        for p in pairs:
            out.append(f"{p['transport']:<18} {p['irqchip']:<7} {p['kernel']:<18} "
                       f"{p['ref']:<5} {p['n']:>5} {p['median']:>6.2f} "
                       f"{p['low']:>5.2f}..{p['high']:<5.2f} {p['coverage']:>5.2f}  "
                       f"{p['verdict']}")
        with open(os.path.join(a.report, "mmio-pairs.csv"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["transport", "irqchip", "kernel", "ref", "pairs",
                        "median", "ci_low", "ci_high", "coverage"])
            for p in pairs:
                w.writerow([p["transport"], p["irqchip"], p["kernel"], p["ref"],
                            p["n"], f"{p['median']:.3f}", f"{p['low']:.3f}",
                            f"{p['high']:.3f}", f"{p['coverage']:.3f}"])
    out.append("")
    out.append("seed 003 (2019, real hardware, netperf TCP_RR): virtio-pci 9536, "
               "virtio-mmio 6939, virtio-mmio with MSI and doorbells 9500 trans/s; "
               f"MSI / pci {9500 / 9536:.2f}, MSI / mmio {9500 / 6939:.2f}")
    out.append("")
    out.append("TAP version 13")
    out.append(f"1..{tap.n}")
    out.extend(tap.lines)
    out.append(f"mmiobench check: {tap.n - tap.bad} passed, {tap.bad} failed")
    text = "\n".join(out) + "\n"
    with open(os.path.join(a.report, "mmio.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 1 if tap.bad or not rows else 0


if __name__ == "__main__":
    # 1 is the check step's verdict; a failure of the script itself is 2.
    try:
        sys.exit(main())
    except Exception as e:  # pylint: disable=broad-except
        print(f"report.py: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(2)
