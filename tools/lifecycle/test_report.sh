#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Known-answer test of tools/lifecycle/report.py (TAP), run by make check:
# same-boot reps (lifecycle-ab.csv) whose paired kit/stock ratios, medians
# and verdicts are known.  No testbed, no timing.
#
#   test_report.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source-path=SCRIPTDIR source=../lib/shell/tap.sh
. "$here/../lib/shell/tap.sh"
echo "1..4"

# rows CASE STOCK KIT...: one rep per KIT value, stock at STOCK ns/op.
rows() {
	local c=$1 s=$2 r=0 k
	shift 2
	for k in "$@"; do
		r=$((r + 1))
		echo "$r,$c,1,6.12-generic,stock,16,$s,7.000,-,1000"
		echo "$r,$c,1,6.12-generic,kit,16,$k,7.000,-,900"
	done
}
r=$tmp/report
mkdir -p "$r"
{
	echo "rep,case,vectors,kernel,modules,ops,ns_per_op,ipis_per_op,other_vm_p99_ns,busy_ns_per_op"
	# 6 reps at 0.5: below; 6 from 0.8 to 1.3: neither; 5 reps: no verdict.
	rows irqfd 100 50 50 50 50 50 50
	rows vm 100 80 90 100 110 120 130
	rows trigger-swap 100 150 150 150 150 150
} > "$r/lifecycle-ab.csv"
python3 "$here/report.py" --merge-ab "$r" > "$tmp/merge.out" 2>&1
ok $? "report.py --merge-ab writes lifecycle.csv from the reps"
grep -q '^vm,1,6.12-generic,kit,96,105.0,7.000,-$' "$r/lifecycle.csv"
rc=$?; [ "$rc" -eq 0 ] || sed 's/^/# /' "$r/lifecycle.csv"
ok $rc "lifecycle.csv: the median of the reps, ops summed"
python3 "$here/report.py" --icount 0 "$r" > "$tmp/report.out" 2>&1 &&
	grep -q 'vm *1 *6.12-generic *kit .* 1.05 \[0.80-1.30\] n=6 ' "$r/lifecycle.txt"
rc=$?; [ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/report.out"
ok $rc "the per-rep column: median of the paired ratios and their range"
grep -q '^below stock (the whole interval below 1): irqfd/1 6.12-generic kit/stock ns/op 0.50, interval 0.50..0.50 (6 reps, coverage 96.9 %)$' "$r/lifecycle.txt" &&
	grep -q '^neither (the interval contains 1): vm/1 6.12-generic kit/stock ns/op 1.05, interval 0.80..1.30 (6 reps, coverage 96.9 %)$' "$r/lifecycle.txt" &&
	grep -q '^no verdict, the interval covers less than 95 %: trigger-swap/1 6.12-generic kit/stock ns/op 1.50, interval 1.50..1.50 (5 reps, coverage 93.8 %)$' "$r/lifecycle.txt" &&
	[ "$(grep -c 'ABOVE STOCK' "$r/lifecycle.txt")" = 0 ]
rc=$?; [ "$rc" -eq 0 ] || sed 's/^/# /' "$r/lifecycle.txt"
ok $rc "verdicts only from the sign test's interval, none under 6 reps"

echo "# $((n - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
