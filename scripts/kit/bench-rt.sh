#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench-rt: what a guest's interrupt storm costs an RT task on the
# PREEMPT_RT kernel, stock against kit (Documentation/rt-storm.rst).  One
# testbed boot per module set runs tools/rtbench/run.sh: cyclictest at
# SCHED_FIFO 90 on the vector's CPU, quiet and while irqlat's guest raises
# MSIs as fast as it takes them.  Writes build/report/rt.csv; prints the
# table with the kit/stock ratios (tools/rtbench/report.py).
#
# Environment:
#   RT_SECONDS=5       cyclictest's duration per load (testbed clock)
#   RT_BUDGET=32       with the kit, one more storm row with
#                      vfio_pci_core.storm_budget at this value (modules
#                      kit-budget32); RT_BUDGET= for none
#   ICOUNT=0           -icount shift=ICOUNT,sleep=off (ICOUNT= real time)
#   KLINE=6.12         the kernel line (6.12, 6.1 or all)
#   BENCH_MODULES="stock kit"
#
# A benchmark, not a test: no figure is judged.  Non-zero when a boot
# failed or an interrupt was lost or doubled.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

RT_SECONDS=${RT_SECONDS:-5}
RT_BUDGET=${RT_BUDGET-32}
ICOUNT=${ICOUNT-0}
[[ "$RT_SECONDS" =~ ^[0-9]+$ ]] && [ "$RT_SECONDS" -gt 0 ] ||
	die "RT_SECONDS=$RT_SECONDS: a positive number of seconds"
boot_lines=$(kit_lines)
boot_flavours=rt
boot_modsets=${BENCH_MODULES:-stock kit}
report=$B/report
header=kernel,modules,load,cyclictest_max_ns,cyclictest_p99_ns,guest_irqs_per_s,lost,doubled

start=$SECONDS
kit_need_pkgs rt-tests
mkdir -p "$report"
rm -f "$report"/rt.csv "$report"/rt-*.csv
step "building irqlat"
make -s -C "$kit_top/tools/irqlat" OUTPUT="$B/irqlat" > "$report/irqlat-build.log" 2>&1 ||
	{ tail -n 20 "$report/irqlat-build.log" >&2; die "building irqlat failed"; }

boot_what=bench-rt
boot_logdir=$report
boot_desc="cyclictest ${RT_SECONDS} s quiet and under an MSI storm${ICOUNT:+ (icount shift=$ICOUNT)}"
boot_hint="1: lost or doubled interrupts, 2: a run failed"
boot_opts=(--timeout 900)
boot_retry=1
boot_cmd() {
	boot_argv=("$kit_top/tools/rtbench/run.sh" "$B/irqlat/irqlat" "$label"
		"$m" "$dir/rtbench" "$RT_SECONDS" "$RT_BUDGET")
}
boot_collect() {
	rm -f "$report/rt-$label-$m.csv"
	[ -s "$dir/rtbench/rt.csv" ] || return 0
	cp "$dir/rtbench/rt.csv" "$report/rt-$label-$m.csv"
}
kit_boots
kit_merge "$header" "$report/rt-" > "$report/rt.csv"
rm -f "$report"/rt-*.csv

python3 "$kit_top/tools/rtbench/report.py" "$report/rt.csv" ||
	{ kit_boots_report bench-rt; die "report.py failed"; }
step "bench-rt finished in $((SECONDS - start)) s: ${report#"$kit_top"/}/rt.csv"
kit_boots_report bench-rt
