#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Host-side tests of tools/testbed/lib.sh's boot-retry rules (TAP), run by
# make check: run.sh boots a second time after a kernel panic only when
# every module of the set that the boot loaded came from the stock tree,
# stops a boot that has not reached its setup in time, and stops one whose
# emulator took no CPU time for the idle bound after its setup (idle), or
# spun while the testbed's -icount heartbeat stood still (stuck), and
# records a hung boot's CPU state before its timeout.
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

# A boot still running 60 s before its timeout: marked, its CPU state
# asked of the monitor (here a fake one that logs the commands and, on the
# NMI, stops the fake QEMU as a panic with -no-reboot would), and then a
# timeout for tb_result even though QEMU itself exited.
console "$tmp/t1" "" kernel
sleep 60 & pid=$!
echo "$pid" > "$tmp/t1.pid"
python3 -c 'import os, signal, socket, sys
path, log, pid = sys.argv[1:4]
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
srv.listen(4)
while True:
    c = srv.accept()[0]
    c.sendall(b"QEMU 7.2.0 monitor\r\n(qemu) ")
    buf = b""
    while True:
        d = c.recv(4096)
        if not d:
            break
        buf += d
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            with open(log, "a") as f:
                f.write(line.decode() + "\n")
            if line == b"nmi":
                os.kill(int(pid), signal.SIGTERM)
                sys.exit(0)
            regs = b"RIP=ffffffff81000000 RFL=00000002\r\n" if line.startswith(b"info") else b""
            c.sendall(line + b"\r\n" + regs + b"(qemu) ")
    c.close()' "$tmp/mon.sock" "$tmp/mon.log" "$pid" & mon=$!
while [ ! -S "$tmp/mon.sock" ]; do sleep 0.1; done
out=$tmp tb_monitor=$tmp/mon.sock tb_timeout_watch "$tmp/t1" "$tmp/t1.pid" 61 2> /dev/null
wait "$pid" 2>/dev/null; wait "$mon"
[ -e "$tmp/t1.timeout" ] && grep -q "^RIP=ffffffff81000000" "$tmp/cpus.txt" &&
	[ "$(tr '\n' '|' < "$tmp/mon.log")" = "info registers -a|sendkey alt-sysrq-l|nmi|" ]
ok $? "60 s before the timeout: marked, registers saved, SysRq-L, then the NMI"
cp "$tmp/t1" "$tmp/console.log"; touch "$tmp/console.log.timeout"
out=$tmp tb_result 0 61 2> /dev/null
ok $(($? != 124)) "a boot the timeout watch ended is a timeout (124), though QEMU exited 0"

# run.sh kills its watches when QEMU ends: nothing of a killed watch may
# stay behind holding the boot's output open (its callers read it through
# a pipe and would wait for that too).
sleep 60 & pid=$!
echo "$pid" > "$tmp/t2.pid"
( tb_timeout_watch "$tmp/t2" "$tmp/t2.pid" 1000 & w=$!; sleep 2; kill $w
  wait $w ) > "$tmp/t2.out" 2>&1
sleep 2
holders=0
for f in /proc/[0-9]*/fd/*; do
	[ "$(readlink "$f" 2>/dev/null)" = "$tmp/t2.out" ] && holders=$((holders + 1))
done
kill "$pid"; wait "$pid" 2>/dev/null
[ "$holders" -eq 0 ]
ok $? "a killed timeout watch leaves no process holding the output ($holders)"

echo "# $((n - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
