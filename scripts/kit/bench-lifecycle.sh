#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench-lifecycle: the cost of setting up and tearing down interrupt
# pairings (KVM irqfd <-> VFIO MSI), stock against kit modules, and the
# MSI latency of a second VM while the first one churns.  For each kernel,
# a testbed boot with stock modules, then one with the kit's, each running
# tools/lifecycle/lifecycle with the same arguments; the rows go to
# build/report/lifecycle.csv:
#
#   case,vectors,kernel,modules,ops,ns_per_op,ipis_per_op,other_vm_p99_ns
#
# and tools/lifecycle/report.py prints them with the kit/stock ratio per
# row (build/report/lifecycle.txt).  The testbed gets a second edu for the
# other VM.  See Documentation/benchmarks.rst, "Lifecycle".
#
# Environment:
#   KLINE=6.12             the kernel line; KLINE=all: 6.12 and 6.1
#   LIFECYCLE_FLAVOURS="generic rt"  LIFECYCLE_MODULES="stock kit"
#   ICOUNT=0               -icount shift=ICOUNT,sleep=off (ICOUNT= for real time)
#   LIFECYCLE_ARGS=...     extra lifecycle options (e.g. "--cases irqfd
#                          --vectors 1,64" or "--min-ops 4096")
#
# A benchmark, not a test: no figure is judged.  The exit code is non-zero
# when a boot failed (lifecycle exits 2 on any failed ioctl); the rows of
# the boots that finished are written all the same.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ICOUNT=${ICOUNT-0}
lines=${KLINE:-6.12}
[ "$lines" = all ] && lines="6.12 6.1"
for l in $lines; do
	case $l in 6.12 | 6.1) ;; *) die "KLINE=$KLINE: 6.12, 6.1 or all" ;; esac
done
export KLINE
flavours=${LIFECYCLE_FLAVOURS:-generic rt}
modsets=${LIFECYCLE_MODULES:-stock kit}
report=$B/report
header=case,vectors,kernel,modules,ops,ns_per_op,ipis_per_op,other_vm_p99_ns
oheader=kernel,modules,quiet_p99_ns,quiet_med_ns,churn_p99_ns,churn_med_ns,churn_swaps

start=$SECONDS
mkdir -p "$report"
rm -f "$report"/lifecycle*

commit=$(git -C "$kit_top" log -1 --format='%h %s' 2>/dev/null || echo unknown)
dirty=$(git -C "$kit_top" status --porcelain -- virt arch drivers include backport-include patches 2>/dev/null |
	awk '{print $2}' | tr '\n' ' ')
[ -n "$dirty" ] && commit="$commit, with uncommitted changes in ${dirty% }"

step "building lifecycle"
make -s -C "$kit_top/tools/lifecycle" OUTPUT="$B/lifecycle" \
	> "$report/lifecycle-build.log" 2>&1 ||
	{ tail -n 20 "$report/lifecycle-build.log" >&2; die "building lifecycle failed"; }

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
			name=lifecycle-$m
			dir=$B/testbed/$krel/$name
			label=$KLINE-$f
			step "boot $label, $m modules: lifecycle${ICOUNT:+ (icount shift=$ICOUNT)}"
			rc=0
			# shellcheck disable=SC2086 # LIFECYCLE_ARGS is a list
			FLAVOUR=$f "$kit_top/tools/testbed/run.sh" --modules "$m" \
				--name "$name" --timeout 1200 ${ICOUNT:+--icount "$ICOUNT"} \
				--qemu-arg -device --qemu-arg edu -- \
				"$B/lifecycle/lifecycle" --kernel "$label" --modules "$m" \
				--csv-file "$dir/lifecycle.csv" \
				--other-csv-file "$dir/other.csv" ${LIFECYCLE_ARGS:-} || rc=$?
			if [ -s "$dir/lifecycle.csv" ]; then
				tail -n +2 "$dir/lifecycle.csv" > "$report/lifecycle-boot-$label-$m.csv"
			fi
			if [ -s "$dir/other.csv" ]; then
				tail -n +2 "$dir/other.csv" > "$report/lifecycle-other-$label-$m.csv"
			fi
			if [ "$rc" -ne 0 ]; then
				echo "kit: bench-lifecycle: $label/$m exited $rc (console: ${dir#"$kit_top"/}/console.log)" >&2
				failed+=("$label/$m")
			fi
		done
	done
done

merge() {
	local hdr=$1 prefix=$2 l f m
	echo "$hdr"
	for l in $lines; do
		for f in $flavours; do
			for m in $modsets; do
				cat "$report/$prefix-$l-$f-$m.csv" 2>/dev/null || true
			done
		done
	done
}
merge "$header" lifecycle-boot > "$report/lifecycle.csv.tmp"
merge "$oheader" lifecycle-other > "$report/lifecycle-other.csv"
rm -f "$report"/lifecycle-boot-*.csv "$report"/lifecycle-other-*-*.csv
mv "$report/lifecycle.csv.tmp" "$report/lifecycle.csv"

if [ "$(wc -l < "$report/lifecycle.csv")" -gt 1 ]; then
	python3 "$kit_top/tools/lifecycle/report.py" --icount "${ICOUNT:-off}" \
		--commit "$commit" "$report" || die "report.py failed"
fi

step "bench-lifecycle finished in $((SECONDS - start)) s: ${report#"$kit_top"/}/lifecycle.csv"
if [ ${#failed[@]} -gt 0 ]; then
	echo "kit: bench-lifecycle: failed: ${failed[*]}" >&2
	exit 1
fi
