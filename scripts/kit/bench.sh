#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench: every irqlat scenario on the default kernel line, generic and
# rt, with stock and with kit modules (four testbed boots), into
# build/report/matrix.csv; tools/irqlat/report.py then prints the table
# with each row's ratios to its reference row and writes matrix.md and the
# latency plot.  make demo (scripts/kit/demo.sh) runs this script too.
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
# rows of every boot that produced them are written all the same.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

N=${N:-500}
ICOUNT=${ICOUNT-0}
lines=${KLINE:-6.12}
[ "$lines" = all ] && lines="6.12 6.1"
for l in $lines; do
	case $l in 6.12 | 6.1) ;; *) die "KLINE=$KLINE: 6.12, 6.1 or all" ;; esac
done
export KLINE
flavours=${BENCH_FLAVOURS:-generic rt}
modsets=${BENCH_MODULES:-stock kit}
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

# The kit for each line and flavour (incremental: seconds when nothing
# changed).
if [[ " $modsets " == *" kit "* ]]; then
	for KLINE in $lines; do
		# shellcheck disable=SC2086 # a list of flavours
		kit_build_flavours "$report" $flavours
	done
fi

failed=()
for KLINE in $lines; do
	for f in $flavours; do
		for m in $modsets; do
			krel=$(FLAVOUR=$f; kit_target; echo "$KREL")
			name=bench-$m
			dir=$B/testbed/$krel/$name
			label=$KLINE-$f
			step "boot $label, $m modules: irqlat -n $N${ICOUNT:+ (icount shift=$ICOUNT)}"
			rc=0
			FLAVOUR=$f "$kit_top/tools/testbed/run.sh" --modules "$m" \
				--name "$name" --timeout 1500 ${ICOUNT:+--icount "$ICOUNT"} -- \
				"$B/irqlat/irqlat" -n "$N" --kernel "$label" --modules "$m" \
				--csv-file "$dir/irqlat.csv" --json-file "$dir/irqlat.json" \
				--samples-file "$dir/samples.csv" ${IRQLAT_ARGS:-} || rc=$?
			if [ -s "$dir/irqlat.csv" ]; then
				tail -n +2 "$dir/irqlat.csv" > "$report/boot-$label-$m.csv"
				cp "$dir/irqlat.json" "$report/irqlat-$label-$m.json"
				cp "$dir/samples.csv" "$report/samples-$label-$m.csv"
			fi
			if [ "$rc" -ne 0 ]; then
				echo "kit: bench: $label/$m exited $rc (1: lost or doubled interrupts; console: ${dir#"$kit_top"/}/console.log)" >&2
				failed+=("$label/$m")
			fi
		done
	done
done

{
	echo "$header"
	for l in $lines; do
		for f in $flavours; do
			for m in $modsets; do
				cat "$report/boot-$l-$f-$m.csv" 2>/dev/null || true
			done
		done
	done
} > "$report/matrix.csv"
rm -f "$report"/boot-*.csv

# The table, matrix.md and the latency plot.
python3 "$kit_top/tools/irqlat/report.py" --icount "${ICOUNT:-off}" "$report" ||
	die "report.py failed"

step "bench finished in $((SECONDS - start)) s: ${report#"$kit_top"/}/matrix.csv"
if [ ${#failed[@]} -gt 0 ]; then
	echo "kit: bench: failed: ${failed[*]}" >&2
	exit 1
fi
