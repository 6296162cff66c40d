#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench-rt's part inside the testbed: cyclictest as a SCHED_FIFO
# thread on the CPU that takes the edu's vector, once with no guest
# interrupt (quiet) and once while irqlat's guest raises MSIs one after
# the other as fast as it takes them (storm).  Writes one rt.csv row per
# load to OUT/rt.csv (no header) and the raw outputs next to it.
#
#   run.sh IRQLAT KERNEL MODULES OUT [SECONDS [BUDGET]]
#
# BUDGET: with the kit, one more storm row with storm_budget=BUDGET
# (modules "kit-budgetBUDGET").
#
# SECONDS (default 5) is cyclictest's duration in the testbed's clock,
# which -icount makes instructions.  cyclictest's priority (90) is above
# the irq threads' (50): stock's injection runs below it, the kit's hard
# irq above.  The vCPU thread spins on the same CPU (irqlat --guest spin),
# below cyclictest; irqlat's I/O thread and this script run on CPU 0.
set -u
irqlat=$1 kernel=$2 modules=$3 out=$4 secs=${5:-5} budget=${6:-}
cpu=$(($(nproc) - 1))
prio=90
mkdir -p "$out"
: > "$out/rt.csv"
taskset -pc 0 $$ > /dev/null

# cyclictest_row LOAD HIST IRQS_PER_S LOST DOUBLED: a CSV row from the
# histogram (-h, one line per microsecond bucket, then the summary).
cyclictest_row() {
	awk -F'[ \t:]+' -v k="$kernel" -v m="${modules}" -v load="$1" \
		-v ips="$3" -v lost="$4" -v dbl="$5" '
		/^[0-9]+[ \t]+[0-9]+/ { n[$1 + 0] = $2 + 0; total += $2; next }
		/^# Histogram Overflows/ { over = $4 + 0 }
		/^# Max Latencies/ { max = $4 + 0 }
		END {
			if (!total) { print "rtbench: no cyclictest samples" > "/dev/stderr"; exit 1 }
			if (over) printf "rtbench: %d samples above the histogram\n", over > "/dev/stderr"
			want = 0.99 * (total + over); c = 0; p99 = -1
			for (us = 0; us in n || c < want; us++) {
				c += n[us]
				if (c >= want) { p99 = us; break }
				if (us > 10000000) break
			}
			if (p99 < 0) p99 = max
			printf "%s,%s,%s,%d,%d,%s,%s,%s\n", k, m, load,
				max * 1000, p99 * 1000, ips, lost, dbl
		}' "$2"
}

run_cyclictest() {	# run_cyclictest FILE
	cyclictest -q -m -p "$prio" -a "$cpu" -t 1 -i 200 -D "$secs" \
		-h 100000 > "$1" 2> "$1.err"
}

echo "rtbench: $kernel $modules: cyclictest -p $prio on CPU $cpu for $secs s"

run_cyclictest "$out/cyclictest-quiet.txt" ||
	{ cat "$out/cyclictest-quiet.txt.err"; exit 2; }
cyclictest_row quiet "$out/cyclictest-quiet.txt" 0 0 0 >> "$out/rt.csv" || exit 2

# storm MODULES: irqlat runs back to back until cyclictest is done, each
# run a new VM with 20,000 MSIs, and counts every one (lost, doubled).
storm() {
	local tag=$1 ct rc runs=0 delivered=0 lost=0 doubled=0 wall=0 d l x w ips

	run_cyclictest "$out/cyclictest-storm-$tag.txt" &
	ct=$!
	while kill -0 "$ct" 2> /dev/null; do
		"$irqlat" --irq msi --irqchip kernel -n 20000 --guest spin \
			--cpu "$cpu" --irq-cpu "$cpu" --io-cpu 0 --no-control --csv \
			--no-header --kernel "$kernel" --modules "$tag" \
			> "$out/irqlat-$tag-$runs.csv" 2> "$out/irqlat-$tag-$runs.err"
		rc=$?
		[ "$rc" -le 1 ] || { cat "$out/irqlat-$tag-$runs.err"; kill "$ct"; return 2; }
		# n (column 5), irqs_per_s (8), lost (12), doubled (13); no
		# process substitution: the testbed has no /dev/fd.
		read -r d l x w <<< "$(awk -F, '{ printf "%d %d %d %.6f\n", $5 - $12, $12, $13, ($8 > 0 ? ($5 - $12) / $8 : 0) }' \
			"$out/irqlat-$tag-$runs.csv")"
		delivered=$((delivered + d)) lost=$((lost + l)) doubled=$((doubled + x))
		wall=$(awk -v a="$wall" -v b="$w" 'BEGIN { printf "%.6f", a + b }')
		runs=$((runs + 1))
	done
	wait "$ct" || { cat "$out/cyclictest-storm-$tag.txt.err"; return 2; }
	ips=$(awk -v d="$delivered" -v w="$wall" 'BEGIN { printf "%.1f", (w > 0 ? d / w : 0) }')
	echo "rtbench: storm ($tag): $runs irqlat runs, $delivered MSIs delivered, $lost lost, $doubled doubled"
	modules=$tag cyclictest_row storm "$out/cyclictest-storm-$tag.txt" "$ips" \
		"$lost" "$doubled" >> "$out/rt.csv" || return 2
	[ "$lost" -eq 0 ] && [ "$doubled" -eq 0 ]
}

rc=0
storm "$modules" || rc=$?
# With the kit, once more with a budget below the storm's rate: the bound
# at work (vfio_pci_core.storm_budget is read at each interrupt).
param=/sys/module/vfio_pci_core/parameters/storm_budget
if [ "$rc" -eq 0 ] && [ -w "$param" ] && [ -n "$budget" ]; then
	def=$(cat "$param")
	echo "$budget" > "$param" && storm "$modules-budget$budget" || rc=$?
	echo "$def" > "$param"
fi
cat "$out/rt.csv"
exit "$rc"
