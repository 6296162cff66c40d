#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What `make check` runs inside the testbed: the module checks, bad input to
# the module parameters, the in-kernel test modules (TAP in the kernel log)
# and the userspace selftests.  Each suite's TAP is passed through under a
# "# ===== suite" header.
# $1: directory holding the built selftests; $2 (optional): --all adds the
# reliability campaign (make check-debug, KIT_CAMPAIGN=1 make check).
set -u
sel=$1
campaign=${2:-}
rc=0
here=$(dirname "$(readlink -f "$0")")

echo "# ===== module_checks"
bash "$here/module_checks.sh" || rc=1
echo "# ===== module_params"
bash "$here/module_params.sh" || rc=1

# In-kernel tests: loading runs them; they print TAP to the kernel log and
# fail their init when a test fails.
for t in $(cd "$MODROOT/lib/modules/$KREL/updates" 2>/dev/null && ls test_*.ko 2>/dev/null); do
	m=${t%.ko}
	echo "# ===== $m"
	before=$(dmesg | wc -l)
	if modprobe -d "$MODROOT" -S "$KREL" "$m"; then
		modprobe -r -d "$MODROOT" -S "$KREL" "$m"
		loaded=1
	else
		rc=1
		loaded=0
	fi
	dmesg | tail -n +$((before + 1)) | sed -n -E "s/^\[[ 0-9.]+\] ($m: )?//p" |
		grep -E '^(TAP version|[0-9]+\.\.[0-9]+|ok |not ok |#)' || true
	# A module that fails its init may have printed no TAP at all.
	[ $loaded = 1 ] || echo "not ok 1 - $m: module init failed (see the kernel log)"
done

bash "$sel/run_tests.sh" $campaign || rc=1
exit $rc
