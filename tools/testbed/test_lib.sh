#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Host-side tests of tools/testbed/lib.sh's boot-retry rules (TAP), run by
# make check: run.sh boots a second time after a kernel panic only when
# every module of the set that the boot loaded came from the stock tree,
# stops a boot that has not reached its setup in time, and stops one whose
# emulator took no CPU time for the idle bound after its setup (idle), or
# spun while the testbed's -icount heartbeat stood still (stuck).
#
#   test_lib.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source-path=SCRIPTDIR source=../lib/shell/tap.sh
. "$here/../lib/shell/tap.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

# console FILE TAINT DIR [PANIC]: a console as guest-setup.sh prints it,
# modules from DIR (kernel or updates) with TAINT, a panic at the end if
# PANIC is given.
console() {
	local f=$1 taint=$2 dir=$3 m
	{
		echo "[    2.4] Run /init as init process"
		echo "# testbed: setup"
		echo "# testbed: kernel 6.12.118+deb12-amd64, modules: x"
		for m in irqbypass kvm kvm_amd vfio_pci_core vfio_pci; do
			echo "# testbed: $m $taint /lib/modules/6.12.118+deb12-amd64/$dir/$m.ko"
		done
		echo "# testbed: kvm_amd nested=1 avic=N npt=Y"
		[ -z "${4:-}" ] || echo "[    8.3] Kernel panic - not syncing: Fatal exception in interrupt"
	} > "$f"
}

console "$tmp/a" "" kernel panic
tb_stock_panic "$tmp/a"
ok $? "stock modules, kernel panic: boot again"

console "$tmp/b" OE updates panic
! tb_stock_panic "$tmp/b"
ok $? "kit modules, kernel panic: no second boot"

console "$tmp/c" "" kernel
! tb_stock_panic "$tmp/c"
ok $? "stock modules, no panic: no second boot"

console "$tmp/d" "" kernel panic
sed -i 's|^# testbed: kvm  /lib/modules/\([^/]*\)/kernel/|# testbed: kvm OE /lib/modules/\1/updates/|' "$tmp/d"
! tb_stock_panic "$tmp/d"
ok $? "one module of ours among stock ones, kernel panic: no second boot"

console "$tmp/f" "" kernel
echo "# the test printed: Kernel panic - not syncing" >> "$tmp/f"
! tb_stock_panic "$tmp/f"
ok $? "a test's own output naming a panic: no second boot"

console "$tmp/e" "" kernel panic
sed -i '/^# testbed: [a-z_]*  \//d' "$tmp/e"
! tb_stock_panic "$tmp/e"
ok $? "a panic before the module list: no second boot by this rule"

# tb_setup_watch: a stand-in for QEMU (sleep) with its pid in a pidfile.
echo "[    3.2] 9p: Installing v9fs 9p2000 file system support" > "$tmp/s1"
sleep 60 & pid=$!
echo "$pid" > "$tmp/s1.pid"
tb_setup_watch "$tmp/s1" "$tmp/s1.pid" 2
wait "$pid" 2>/dev/null
[ $? -eq 143 ] && [ -e "$tmp/s1.stalled" ]
ok $? "no setup line within the bound: QEMU stopped (SIGTERM), the boot marked stalled"

console "$tmp/s2" "" kernel
sleep 60 & pid=$!
echo "$pid" > "$tmp/s2.pid"
tb_setup_watch "$tmp/s2" "$tmp/s2.pid" 2
kill -0 "$pid" 2>/dev/null && [ ! -e "$tmp/s2.stalled" ]
ok $? "setup line there: QEMU left running, not marked"
kill "$pid"; wait "$pid" 2>/dev/null

echo "[    3.2] 9p: Installing v9fs 9p2000 file system support" > "$tmp/s3"
sleep 0.1 & pid=$!
wait "$pid"
echo "$pid" > "$tmp/s3.pid"
start=$SECONDS
tb_setup_watch "$tmp/s3" "$tmp/s3.pid" 30
[ $((SECONDS - start)) -lt 10 ] && [ ! -e "$tmp/s3.stalled" ]
ok $? "QEMU already gone: the watch returns, nothing marked"

# tb_idle_watch: a stand-in QEMU that takes no CPU (sleep), one that does
# (a busy loop), both after the setup line.
console "$tmp/i1" "" kernel
sleep 60 & pid=$!
echo "$pid" > "$tmp/i1.pid"
tb_idle_watch "$tmp/i1" "$tmp/i1.pid" 2 1
wait "$pid" 2>/dev/null
[ $? -eq 143 ] && [ -e "$tmp/i1.idle" ]
ok $? "no CPU time for the bound after the setup: QEMU stopped, marked idle"

console "$tmp/i2" "" kernel
( while :; do :; done ) & pid=$!
echo "$pid" > "$tmp/i2.pid"
( sleep 5; kill "$pid" ) & killer=$!
start=$SECONDS
tb_idle_watch "$tmp/i2" "$tmp/i2.pid" 2 1
wait "$pid" 2>/dev/null; wait "$killer"
[ $((SECONDS - start)) -ge 4 ] && [ ! -e "$tmp/i2.idle" ]
ok $? "CPU time growing: QEMU left running until it ends, not marked"

echo "[    3.2] 9p: Installing v9fs 9p2000 file system support" > "$tmp/i3"
sleep 60 & pid=$!
echo "$pid" > "$tmp/i3.pid"
( sleep 4; kill "$pid" ) & killer=$!
tb_idle_watch "$tmp/i3" "$tmp/i3.pid" 2 1
wait "$pid" 2>/dev/null; wait "$killer"
[ ! -e "$tmp/i3.idle" ]
ok $? "before the setup line: the idle watch leaves QEMU to tb_setup_watch"

# With a heartbeat file (-icount): a spinning QEMU whose heartbeat stands
# still is stopped and marked stuck; one whose heartbeat moves is not.
console "$tmp/i4" "" kernel
echo 12.5 > "$tmp/i4.hb"
( while :; do :; done ) & pid=$!
echo "$pid" > "$tmp/i4.pid"
( sleep 20; kill "$pid" 2>/dev/null ) & killer=$!
tb_idle_watch "$tmp/i4" "$tmp/i4.pid" 2 1 "$tmp/i4.hb"
wait "$pid" 2>/dev/null; rc=$?
pkill -P "$killer" sleep 2>/dev/null; wait "$killer" 2>/dev/null
[ "$rc" -eq 143 ] && [ -e "$tmp/i4.stuck" ] && [ ! -e "$tmp/i4.idle" ]
ok $? "CPU time growing, heartbeat still: QEMU stopped, marked stuck"

console "$tmp/i5" "" kernel
( while :; do :; done ) & pid=$!
echo "$pid" > "$tmp/i5.pid"
( i=0; while sleep 0.5; do i=$((i + 1)); echo "$i" > "$tmp/i5.hb"; done ) & beat=$!
( sleep 5; kill "$pid" ) & killer=$!
tb_idle_watch "$tmp/i5" "$tmp/i5.pid" 2 1 "$tmp/i5.hb"
wait "$pid" 2>/dev/null; wait "$killer"; kill "$beat"; wait "$beat" 2>/dev/null
[ ! -e "$tmp/i5.stuck" ] && [ ! -e "$tmp/i5.idle" ]
ok $? "CPU time growing, heartbeat moving: QEMU left running, not marked"

# A heartbeat that stands still beside a QEMU that takes no CPU either:
# the machine is idle, not spinning, and is marked so.
console "$tmp/i6" "" kernel
echo 7.5 > "$tmp/i6.hb"
sleep 60 & pid=$!
echo "$pid" > "$tmp/i6.pid"
tb_idle_watch "$tmp/i6" "$tmp/i6.pid" 2 1 "$tmp/i6.hb"
wait "$pid" 2>/dev/null; rc=$?
[ "$rc" -eq 143 ] && [ -e "$tmp/i6.idle" ] && [ ! -e "$tmp/i6.stuck" ]
ok $? "no CPU time, heartbeat still: QEMU stopped, marked idle, not stuck"

echo "# $((n - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
