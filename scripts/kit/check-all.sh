#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check-all: make check for 6.12 and 6.1, generic and rt, one after the
# other (never in parallel on a 2-core machine), and one total line.  The
# generic targets run the testbed on QEMU and on bochs (kvm_intel on
# emulated VMX; a few minutes more each), the rt ones on QEMU; 6.12
# generic and rt also on bochs3 (Bochs 3.0: kvm_intel with APICv, posted
# interrupts; 4 to 6 minutes more each).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tp=0 tf=0 ts=0 bad=()
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for t in 6.12:generic 6.12:rt 6.1:generic 6.1:rt; do
	testbeds=qemu
	[ "${t#*:}" = generic ] && testbeds="qemu bochs"
	[ "${t%:*}" = 6.12 ] && testbeds+=" bochs3"
	echo "===== make check KLINE=${t%:*} FLAVOUR=${t#*:} TESTBED=\"$testbeds\""
	KLINE=${t%:*} FLAVOUR=${t#*:} TESTBED=$testbeds "$top/scripts/kit/check.sh" 2>&1 | tee "$tmp"
	out=$(tail -n 1 "$tmp")
	read -r p _ f _ s _ <<< "${out//,/}"
	[[ "$p" =~ ^[0-9]+$ ]] || { p=0; f=1; }
	[[ "$s" =~ ^[0-9]+$ ]] || s=0
	tp=$((tp + p)); tf=$((tf + f)); ts=$((ts + s))
	[ "$f" -eq 0 ] || bad+=("$t")
done
[ ${#bad[@]} -gt 0 ] && echo "check-all: failing targets: ${bad[*]}"
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" -eq 0 ]
