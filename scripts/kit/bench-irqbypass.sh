#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench-irqbypass: register then unregister N pairs in random order with
# the stock manager (the distro's irqbypass.c compiled into the benchmark
# module under other names) and with ours, in one testbed boot, and write
# build/report/irqbypass.csv: n,stock_ns_per_op,kit_ns_per_op,ratio
# (ratio = stock/kit).  A benchmark, not a test: nothing is asserted.
#   BENCH_ARGS="samples=5"   extra irqbypass_bench module parameters
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

kit_target
"$kit_top/scripts/kit/build.sh"
[ -f "$B/$KREL/virt/lib/tests/irqbypass_bench.ko" ] || die "irqbypass_bench.ko was not built"
mkdir -p "$B/report"
csv=$B/report/irqbypass.csv
# shellcheck disable=SC2016 # expanded inside the testbed
"$kit_top/scripts/kit/testbed.sh" --modules kit --name bench-irqbypass -- bash -c '
	modprobe -d "$MODROOT" -S "$KREL" irqbypass_bench '"${BENCH_ARGS:-}"' || exit 1
	dmesg | sed -n "s/.*irqbypass_bench: csv: //p" > "$KIT_OUT/irqbypass.csv"
	dmesg | sed -n "s/.*irqbypass_bench: # //p"'
cp "$B/testbed/$KREL/bench-irqbypass/irqbypass.csv" "$csv"
echo "irqbypass register+unregister, ns per operation ($KREL, TCG testbed, $(date -u +%F)):"
column -t -s, "$csv"
echo "written: ${csv#"$kit_top"/}"
