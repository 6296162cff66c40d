# SPDX-License-Identifier: GPL-2.0-only
#
# TAP for the kit's host-side shell tests, sourced by them: "ok RC
# DESCRIPTION" counts one check, passed when RC is 0, and prints its line;
# $n is the number of checks so far and $bad the failed ones.
# shellcheck shell=bash

n=0 bad=0

ok() {	# ok COND-RC DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		bad=$((bad + 1))
	fi
}
