#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench: every irqlat scenario on the default kernel line, generic and
# rt, with stock and with kit modules (four testbed boots), into
# build/report/matrix.csv; tools/irqlat/report.py then prints the table
# with each row's ratios to its reference row and writes matrix.md and the
# latency plot.  make demo (scripts/kit/demo.sh) runs this script too; the
# boots are lib.sh's kit_boots.
#
# Environment:
#   N=500                  interrupts per scenario
#   ICOUNT=0               boot the testbed with -icount shift=ICOUNT,sleep=off
#                          (repeatable emulated time; ICOUNT= for real time)
#   BENCH_FLAVOURS="generic rt"  BENCH_MODULES="stock kit"
#   IRQLAT_ARGS=...        extra irqlat options (e.g. "--irq msi")
#   KLINE=6.12             the kernel line (see the top-level Makefile);
#                          KLINE=all: 6.12 and 6.1 in one table, each line
#                          with its own ref rows
#
# A benchmark, not a test: no timing is judged.  The exit code is non-zero
# when a boot failed or irqlat reported a lost or doubled interrupt; the
# rows of every boot that produced them are written all the same.  A
# failed stock boot, or a kit boot that gave no result, gets one more try
# (lib.sh's kit_boot_retriable); the last lines of the output name every
# retried or failed boot with its evidence.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

N=${N:-500}
ICOUNT=${ICOUNT-0}
boot_lines=$(kit_lines)
export KLINE
boot_flavours=${BENCH_FLAVOURS:-generic rt}
boot_modsets=${BENCH_MODULES:-stock kit}
report=$B/report
header=irq,irqchip,kernel,modules,n,lat_med_ns,lat_p99_ns,irqs_per_s,vmexits_per_irq,uexits_per_irq,ctxsw_per_irq,lost,doubled
[[ "$N" =~ ^[0-9]+$ ]] && [ "$N" -gt 0 ] || die "N=$N: a positive number"

start=$SECONDS
mkdir -p "$report"
rm -f "$report"/matrix.* "$report"/boot-*.csv "$report"/samples-*.csv \
	"$report"/irqlat-*.json "$report"/latency.*

step "building irqlat"
make -s -C "$kit_top/tools/irqlat" OUTPUT="$B/irqlat" > "$report/irqlat-build.log" 2>&1 ||
	{ tail -n 20 "$report/irqlat-build.log" >&2; die "building irqlat failed"; }

boot_what=bench
boot_logdir=$report
boot_desc="irqlat -n $N${ICOUNT:+ (icount shift=$ICOUNT)}"
boot_hint="1: lost or doubled interrupts, 2: a scenario failed"
# A boot takes 20-90 s; a hung one must not hold CI for long.
boot_opts=(--timeout 600)
# The demo's figures, not a test: a stock boot that failed (or a kit boot
# that gave no result) runs once more, and the end of the output says so.
boot_retry=1
boot_cmd() {
	# shellcheck disable=SC2206 # IRQLAT_ARGS is a list
	boot_argv=("$B/irqlat/irqlat" -n "$N" --kernel "$label" --modules "$m"
		--csv-file "$dir/irqlat.csv" --json-file "$dir/irqlat.json"
		--samples-file "$dir/samples.csv" ${IRQLAT_ARGS:-})
}
boot_collect() {
	# A retried boot's rows replace the first try's, or none are left.
	rm -f "$report/boot-$label-$m.csv" "$report/irqlat-$label-$m.json" \
		"$report/samples-$label-$m.csv"
	[ -s "$dir/irqlat.csv" ] || return 0
	tail -n +2 "$dir/irqlat.csv" > "$report/boot-$label-$m.csv"
	cp "$dir/irqlat.json" "$report/irqlat-$label-$m.json"
	cp "$dir/samples.csv" "$report/samples-$label-$m.csv"
}
kit_boots
kit_merge "$header" "$report/boot-" > "$report/matrix.csv"
rm -f "$report"/boot-*.csv

# The table, matrix.md and the latency plot.
python3 "$kit_top/tools/irqlat/report.py" --icount "${ICOUNT:-off}" "$report" ||
	{ kit_boots_report bench; die "report.py failed"; }

step "bench finished in $((SECONDS - start)) s: ${report#"$kit_top"/}/matrix.csv"
kit_boots_report bench || exit 1
