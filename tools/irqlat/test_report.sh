#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Host-side tests of tools/irqlat/report.py (TAP), run by make check: it
# prints the matrix from boots measured with tracing off, and refuses one
# whose irqlat JSON says an event, probe or tracer was on, or says nothing.
#
#   test_report.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source-path=SCRIPTDIR source=../lib/shell/tap.sh
. "$here/../lib/shell/tap.sh"

# report DIR TRACING...: a report directory as scripts/kit/bench.sh leaves it, one boot
# per TRACING value (the JSON's "tracing" member; "-" leaves it out).
report() {
	local dir=$1 i=0 t m; shift
	mkdir -p "$dir"
	echo "irq,irqchip,kernel,modules,n,lat_med_ns,lat_p99_ns,irqs_per_s,vmexits_per_irq,uexits_per_irq,ctxsw_per_irq,lost,doubled" > "$dir/matrix.csv"
	for t in "$@"; do
		m=stock; [ $i -gt 0 ] && m=kit
		echo "msi,kernel,6.12-generic,$m,500,$((3000 + i)),3200,140000.0,2.01,0.00,0.00,0,0" >> "$dir/matrix.csv"
		echo "irq,irqchip,kernel,modules,lat_ns" > "$dir/samples-6.12-generic-$m.csv"
		echo "msi,kernel,6.12-generic,$m,3000" >> "$dir/samples-6.12-generic-$m.csv"
		if [ "$t" = - ]; then
			echo "[{\"irq\": \"msi\", \"n\": 500}]"
		else
			echo "[{\"irq\": \"msi\", \"tracing\": \"$t\", \"n\": 500}]"
		fi > "$dir/irqlat-6.12-generic-$m.json"
		i=$((i + 1))
	done
}

echo "TAP version 13"
echo "1..5"

report "$tmp/off" off off
python3 "$here/report.py" "$tmp/off" > "$tmp/off.out" 2>&1 &&
	grep -q '^msi  *kernel  *6.12-generic  *kit .* 1\.00 ' "$tmp/off/matrix.txt"
ok $? "tracing off in every boot: the table, kit against its ref row"

report "$tmp/on" off "events=vfio_fastpath:vfio_fastpath_hit"
python3 "$here/report.py" "$tmp/on" > "$tmp/on.out" 2>&1
[ $? -ne 0 ] && grep -q 'irqlat-6.12-generic-kit.json: tracing events=vfio_fastpath' "$tmp/on.out" &&
	[ ! -e "$tmp/on/matrix.txt" ]
ok $? "an enabled event in one boot: refused, naming the boot, no table"

report "$tmp/old" off -
python3 "$here/report.py" "$tmp/old" > /dev/null 2>&1
[ $? -ne 0 ]
ok $? "a boot whose JSON does not say: refused (tracing unknown)"

report "$tmp/none" off
rm "$tmp/none"/irqlat-*.json
python3 "$here/report.py" "$tmp/none" > /dev/null 2>&1
[ $? -ne 0 ]
ok $? "no irqlat JSON at all: refused"

report "$tmp/stray" off off
echo '[{"irq": "msi", "irqchip": "kernel", "kernel": "6.12-generic", "modules": "kit", "tracing": "off", "n": 500, "stray": 1}]' \
	> "$tmp/stray/irqlat-6.12-generic-kit.json"
python3 "$here/report.py" "$tmp/stray" > "$tmp/stray.out" 2>&1 &&
	grep -q 'no LAPIC delivered .*: 1 msi/kernel 6.12-generic/kit\.$' "$tmp/stray/matrix.txt" &&
	grep -q 'no LAPIC delivered .*: none\.$' "$tmp/off/matrix.txt"
ok $? "stray ISR runs: named under the table (none: says so)"

echo "# $((n - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
