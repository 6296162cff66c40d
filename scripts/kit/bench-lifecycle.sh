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
# other VM.  See Documentation/bench-lifecycle.rst.
#
# By default each kernel gets ONE boot that runs both module sets
# alternately (tools/lifecycle/ab.sh: LIFECYCLE_REPS reps, stock-kit then
# kit-stock), since the same modules moved by 10-15 % between boots; every
# rep's rows go to build/report/lifecycle-ab.csv (rep,<the columns above>,
# busy_ns_per_op: CPU time tasks ran per op, lifecycle --busy) and
# lifecycle.csv holds the median over the reps.  LIFECYCLE_REPS=0: a
# boot per module set instead (also when ICOUNT= : swapping modules under
# multi-threaded TCG risks the static-key race guest-setup.sh describes).
#
# Environment:
#   KLINE=6.12             the kernel line; KLINE=all: 6.12 and 6.1
#   LIFECYCLE_FLAVOURS="generic rt"  LIFECYCLE_MODULES="stock kit"
#   ICOUNT=0               -icount shift=ICOUNT,sleep=off (ICOUNT= for real time)
#   LIFECYCLE_REPS=8       same-boot stock/kit reps (0: a boot per set;
#                          a verdict needs 6 or more, see report.py)
#   LIFECYCLE_ARGS=...     extra lifecycle options (e.g. "--cases irqfd
#                          --vectors 1,64" or "--min-ops 4096")
#
# A benchmark, not a test: no figure is judged.  The exit code is non-zero
# when a boot failed (lifecycle exits 2 on any failed ioctl); the rows of
# the boots that finished are written all the same.  The boots are lib.sh's
# kit_boots.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ICOUNT=${ICOUNT-0}
boot_lines=$(kit_lines)
export KLINE
boot_flavours=${LIFECYCLE_FLAVOURS:-generic rt}
boot_modsets=${LIFECYCLE_MODULES:-stock kit}
reps=${LIFECYCLE_REPS-8}
[[ "$reps" =~ ^[0-9]+$ ]] || die "LIFECYCLE_REPS=$reps: a number"
[ -n "$ICOUNT" ] || reps=0
[ "$boot_modsets" = "stock kit" ] || reps=0
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

boot_what=bench-lifecycle
boot_logdir=$report
boot_opts=(--qemu-arg -device --qemu-arg edu)
if [ "$reps" -gt 0 ]; then
	# One boot per kernel, with the kit's modules installed; ab.sh loads
	# stock and kit alternately.
	boot_modsets=kit
	boot_name=lifecycle-ab
	boot_desc="lifecycle, stock and kit modules alternately, $reps reps${ICOUNT:+ (icount shift=$ICOUNT)}"
	boot_opts+=(--timeout $((600 + 900 * reps)))
	echo "rep,$header,busy_ns_per_op" > "$report/lifecycle-ab.csv"
	echo "rep,$oheader" > "$report/lifecycle-ab-other.csv"
	boot_cmd() {
		# shellcheck disable=SC2206 # LIFECYCLE_ARGS is a list
		boot_argv=(bash "$kit_top/tools/lifecycle/ab.sh" "$reps" "$dir" --
			"$B/lifecycle/lifecycle" --kernel "$label" --busy ${LIFECYCLE_ARGS:-})
	}
	boot_collect() {
		local r s
		for r in $(seq "$reps"); do
			for s in stock kit; do
				if [ -s "$dir/ab-$r-$s.csv" ]; then
					tail -n +2 "$dir/ab-$r-$s.csv" | sed "s/^/$r,/" \
						>> "$report/lifecycle-ab.csv"
				fi
				if [ -s "$dir/ab-other-$r-$s.csv" ]; then
					tail -n +2 "$dir/ab-other-$r-$s.csv" | sed "s/^/$r,/" \
						>> "$report/lifecycle-ab-other.csv"
				fi
			done
		done
	}
else
	boot_name=lifecycle
	boot_desc="lifecycle${ICOUNT:+ (icount shift=$ICOUNT)}"
	boot_opts+=(--timeout 1200)
	boot_cmd() {
		# shellcheck disable=SC2206 # LIFECYCLE_ARGS is a list
		boot_argv=("$B/lifecycle/lifecycle" --kernel "$label" --modules "$m"
			--csv-file "$dir/lifecycle.csv" --other-csv-file "$dir/other.csv"
			${LIFECYCLE_ARGS:-})
	}
	boot_collect() {
		if [ -s "$dir/lifecycle.csv" ]; then
			tail -n +2 "$dir/lifecycle.csv" > "$report/lifecycle-boot-$label-$m.csv"
		fi
		if [ -s "$dir/other.csv" ]; then
			tail -n +2 "$dir/other.csv" > "$report/lifecycle-other-$label-$m.csv"
		fi
	}
fi
kit_boots

if [ "$reps" -gt 0 ]; then
	# lifecycle.csv: per row the median of the reps.
	python3 "$kit_top/tools/lifecycle/report.py" --merge-ab "$report" ||
		die "report.py --merge-ab failed"
else
	kit_merge "$header" "$report/lifecycle-boot-" > "$report/lifecycle.csv"
	kit_merge "$oheader" "$report/lifecycle-other-" > "$report/lifecycle-other.csv"
	rm -f "$report"/lifecycle-boot-*.csv "$report"/lifecycle-other-*-*.csv
fi

if [ "$(wc -l < "$report/lifecycle.csv")" -gt 1 ]; then
	python3 "$kit_top/tools/lifecycle/report.py" --icount "${ICOUNT:-off}" \
		--commit "$commit" "$report" || die "report.py failed"
fi

step "bench-lifecycle finished in $((SECONDS - start)) s: ${report#"$kit_top"/}/lifecycle.csv"
kit_boots_report bench-lifecycle || exit 1
