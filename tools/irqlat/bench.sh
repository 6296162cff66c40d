#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench: every irqlat scenario on the default kernel line, generic and
# rt, with stock and with kit modules (four testbed boots), into
# build/report/matrix.csv, and a table with kit/stock ratios on stdout.
#
# Environment:
#   N=500                  interrupts per scenario
#   ICOUNT=0               boot the testbed with -icount shift=ICOUNT,sleep=off
#                          (repeatable emulated time; ICOUNT= for real time)
#   BENCH_FLAVOURS="generic rt"  BENCH_MODULES="stock kit"
#   IRQLAT_ARGS=...        extra irqlat options (e.g. "--irq msi")
#   KLINE=6.12             the kernel line (see the top-level Makefile)
#
# A benchmark, not a test: no timing is judged.  The exit code is non-zero
# when a boot failed or irqlat reported a lost or doubled interrupt; the
# rows of every boot that produced them are written all the same.
set -euo pipefail
. "$(dirname "$0")/../../scripts/kit/lib.sh"

N=${N:-500}
ICOUNT=${ICOUNT-0}
flavours=${BENCH_FLAVOURS:-generic rt}
modsets=${BENCH_MODULES:-stock kit}
report=$B/report
header=irq,irqchip,kernel,modules,n,lat_med_ns,lat_p99_ns,irqs_per_s,vmexits_per_irq,uexits_per_irq,ctxsw_per_irq,lost,doubled
[[ "$N" =~ ^[0-9]+$ ]] && [ "$N" -gt 0 ] || die "N=$N: a positive number"

start=$SECONDS
mkdir -p "$report"
rm -f "$report/matrix.csv" "$report/matrix.txt" "$report"/boot-*.csv

step "building irqlat"
make -s -C "$kit_top/tools/irqlat" OUTPUT="$B/irqlat" > "$report/irqlat-build.log" 2>&1 ||
	{ tail -n 20 "$report/irqlat-build.log" >&2; die "building irqlat failed"; }

# The kit for each flavour (incremental: seconds when nothing changed).
if [[ " $modsets " == *" kit "* ]]; then
	for f in $flavours; do
		step "building the kit ($KLINE $f)"
		FLAVOUR=$f "$kit_top/scripts/kit/build.sh" > "$report/build-$f.log" 2>&1 ||
			{ tail -n 20 "$report/build-$f.log" >&2; die "kit build ($f) failed"; }
	done
fi

failed=()
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
			${IRQLAT_ARGS:-} || rc=$?
		if [ -s "$dir/irqlat.csv" ]; then
			tail -n +2 "$dir/irqlat.csv" > "$report/boot-$f-$m.csv"
			cp "$dir/irqlat.json" "$report/irqlat-$f-$m.json"
		fi
		if [ "$rc" -ne 0 ]; then
			echo "kit: bench: $label/$m exited $rc (1: lost or doubled interrupts; console: ${dir#"$kit_top"/}/console.log)" >&2
			failed+=("$label/$m")
		fi
	done
done

{
	echo "$header"
	for f in $flavours; do
		for m in $modsets; do
			cat "$report/boot-$f-$m.csv" 2>/dev/null || true
		done
	done
} > "$report/matrix.csv"
rm -f "$report"/boot-*.csv

# The table: every row, and on kit rows the ratio to the stock row of the
# same scenario and kernel ("-" where stock is 0 or missing).
awk -F, -v icount="${ICOUNT:-off}" '
function ratio(k, s) { return (s + 0 == 0 || s == "") ? "-" : sprintf("%.2f", k / s) }
NR == 1 { next }
{
	key = $1 "," $2 "," $3
	row[NR] = $0
	if ($4 == "stock") stock[key] = $0
}
END {
	printf "%-4s %-20s %-12s %-5s %5s %10s %10s %8s %7s %7s %7s %4s %4s | %s\n",
	       "irq", "irqchip", "kernel", "mods", "n", "lat_med_ns", "lat_p99_ns",
	       "irqs/s", "vmexit", "uexit", "ctxsw", "lost", "dbl",
	       "kit/stock: lat_med lat_p99 irqs/s vmexit uexit ctxsw"
	for (i = 2; i <= NR; i++) {
		if (!(i in row)) continue
		split(row[i], a, ",")
		line = sprintf("%-4s %-20s %-12s %-5s %5s %10s %10s %8s %7s %7s %7s %4s %4s |",
			       a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
			       a[10], a[11], a[12], a[13])
		key = a[1] "," a[2] "," a[3]
		if (a[4] == "kit" && (key in stock)) {
			split(stock[key], s, ",")
			line = line sprintf(" %18s %7s %6s %6s %5s %5s", ratio(a[6], s[6]),
					    ratio(a[7], s[7]), ratio(a[8], s[8]),
					    ratio(a[9], s[9]), ratio(a[10], s[10]),
					    ratio(a[11], s[11]))
		}
		print line
	}
	print ""
	print "counts (machine-independent): vmexit, uexit = VM exits and exits to userspace per"
	print "interrupt; ctxsw = host context switches per interrupt minus a control run; lost, dbl."
	print "time (emulated, compare within one table only): lat_med_ns, lat_p99_ns (guest TSC),"
	print "irqs/s (wall).  icount: " icount
}' "$report/matrix.csv" | tee "$report/matrix.txt"

step "bench finished in $((SECONDS - start)) s: ${report#"$kit_top"/}/matrix.csv"
if [ ${#failed[@]} -gt 0 ]; then
	echo "kit: bench: failed: ${failed[*]}" >&2
	exit 1
fi
