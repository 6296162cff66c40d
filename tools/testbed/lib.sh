# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Shared by the testbed backends (run.sh: QEMU, run-bochs.sh: bochs).  The
# testbed resolves nothing itself: its caller (scripts/kit/testbed.sh, or
# anyone) passes the target in the environment, checked by tb_init:
#   KREL          the kernel release to boot
#   KLINE FLAVOUR its line and flavour (FLAVOUR=rt: the CPU gets an
#                 invariant TSC; both are passed to the command)
#   TB_IMAGE      the extracted kernel image: boot/vmlinuz-$KREL and
#                 lib/modules/$KREL
#   TB_DIR        the target's testbed directory: initramfs, run directories
#   TB_KIT_BUILD  with --modules kit: the kit's build (modules.order, *.ko)
# tb_init sets tb (TB_DIR), root (TB_IMAGE) and repo (the repository this
# testbed is in: the command's working directory inside).

tb_top=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$tb_top/../.." && pwd)

die() { echo "kit: error: $*" >&2; exit 1; }
# Progress lines; with KIT_T0 (epoch seconds) also the time elapsed since it.
step() {
	local e=
	[ -n "${KIT_T0:-}" ] && e=$(($(date +%s) - KIT_T0)) &&
		e=$(printf ' +%dm%02ds' $((e / 60)) $((e % 60)))
	echo "kit: [$(date +%T)$e] $*"
}

# tb_init CMD...: check the inputs and the programs the backend runs.
tb_init() {
	local v c
	for v in KREL KLINE FLAVOUR TB_IMAGE TB_DIR; do
		[ -n "${!v:-}" ] ||
			die "$v is not set (the testbed's inputs: tools/testbed/lib.sh; scripts/kit/testbed.sh passes them)"
	done
	for c in "$@"; do
		command -v "$c" > /dev/null || die "$c is missing: install the testbed's packages"
	done
	tb=$TB_DIR
	root=$TB_IMAGE
	[ -f "$root/boot/vmlinuz-$KREL" ] || die "$root/boot/vmlinuz-$KREL missing (TB_IMAGE)"
}

# The splats that fail a run whatever the command said.
tb_splat='WARNING:|BUG:|Oops|KASAN|UBSAN|possible circular locking|possible recursive locking|inconsistent lock state|scheduling while atomic|sleeping function called from invalid context|Kernel panic|INFO: task .* blocked|kmemleak:.*new suspected'

# tb_rundir NAME MODULES: a fresh run directory $out (shared with the
# testbed) and the module tree modprobe sees there, $modroot: the stock
# tree, or with MODULES=kit stock + ours in updates/ with depmod run, as
# `make install` leaves a real host (per run, so that runs of different
# builds do not share it), or with MODULES=host this machine's own
# /lib/modules/$KREL as installed (dkms, make install or stock: the root
# the testbed mounts is this machine's).

tb_rundir() {
	local f kos
	out=$tb/$1
	rm -rf "$out"; mkdir -p "$out"
	if [ "$2" = host ]; then
		[ -d "/lib/modules/$KREL/kernel" ] ||
			die "--modules host: no /lib/modules/$KREL on this machine"
		modroot=/
		return 0
	fi
	if [ "$2" != kit ]; then
		modroot=$root
		return 0
	fi
	modroot=$out/modules
	# What the last build produced (a stale .ko of a removed source is not).
	[ -n "${TB_KIT_BUILD:-}" ] || die "--modules kit: TB_KIT_BUILD is not set"
	mapfile -t kos < <(sed -E 's/\.(o|ko)$/.ko/; s#^([^/])#'"$TB_KIT_BUILD"'/\1#' "$TB_KIT_BUILD/modules.order")
	[ ${#kos[@]} -ge 6 ] || die "${TB_KIT_BUILD#"$repo"/} has ${#kos[@]} modules: run make first"
	mkdir -p "$modroot/lib/modules/$KREL/updates"
	for f in "$root/lib/modules/$KREL"/*; do
		ln -s "$f" "$modroot/lib/modules/$KREL/"
	done
	cp "${kos[@]}" "$modroot/lib/modules/$KREL/updates/"
	depmod -b "$modroot" "$KREL"
}

# tb_cmdfiles BACKEND MODULES KVM CMD...: what guest-setup.sh reads from
# $out: the environment and the command.  BACKEND is qemu or bochs, KVM the
# vendor module to load; $trace_events (--trace-events) the events to turn
# on before CMD.
tb_cmdfiles() {
	local backend=$1 modules=$2 kvm=$3; shift 3
	{
		echo "KIT_BACKEND=$backend"
		echo "KREL=$KREL"
		echo "MODROOT=$modroot"
		echo "KIT_REPO=$repo"
		echo "KIT_MODULES=$modules"
		echo "KIT_KVM=$kvm"
		echo "KIT_TRACE_EVENTS=${trace_events:-}"
		echo "KIT_HEARTBEAT=${heartbeat:-}"
		echo "export KIT_OUT=$out KLINE=$KLINE FLAVOUR=$FLAVOUR KREL KIT_MODULES MODROOT KIT_REPO KIT_KVM KIT_BACKEND"
	} > "$out/env"
	printf '%q ' "$@" > "$out/cmd.sh"; echo >> "$out/cmd.sh"
}

# tb_qemu_after SECONDS PIDFILE [LOG]: wait SECONDS and set tb_pid to
# QEMU's pid (from -pidfile) if it still runs then; false at once when
# QEMU is gone, or when LOG has the "# testbed: setup" line.  Not in a
# $(...): the watches that call it are killed when QEMU ends, and a
# subshell of theirs would outlive them, holding the boot's output open.
tb_qemu_after() {
	local left=$1 pidfile=$2 log=${3:-}
	tb_pid=
	while [ "$left" -gt 0 ]; do
		sleep 1
		left=$((left - 1))
		[ -n "$log" ] && grep -q '^# testbed: setup' "$log" 2>/dev/null && return 1
		tb_pid=$(cat "$pidfile" 2>/dev/null) || continue
		kill -0 "$tb_pid" 2>/dev/null || return 1
	done
	tb_pid=$(cat "$pidfile" 2>/dev/null) && kill -0 "$tb_pid" 2>/dev/null || return 1
	! { [ -n "$log" ] && grep -q '^# testbed: setup' "$log" 2>/dev/null; }
}

# tb_setup_watch LOG PIDFILE SECONDS: in the background of a boot, stop
# the testbed's QEMU (its pid in PIDFILE, from -pidfile) when LOG has no
# "# testbed: setup" line after SECONDS, and leave LOG.stalled: the kernel
# stalled before it ran anything of ours.  Returns at once when the line
# comes or QEMU is gone.
tb_setup_watch() {
	tb_qemu_after "$3" "$2" "$1" || return 0
	touch "$1.stalled"
	kill "$tb_pid" 2>/dev/null || true
}

# tb_idle_watch LOG PIDFILE SECONDS [STEP [HEARTBEAT]]: in the background of
# a boot, once LOG has the "# testbed: setup" line, read QEMU's CPU time
# (its pid in PIDFILE) every STEP seconds (10), and stop QEMU, leaving
# LOG.idle, when it has not grown for SECONDS: the emulated machine does
# nothing at all, not even its timer interrupts, so its own timeouts will
# not fire either.  An idle testbed takes 3-5 clock ticks of the host every
# 5 s (6.12 generic, 6 December 2026); the stalled one took none.  With
# HEARTBEAT (a file the testbed rewrites with its uptime every 5 s of its
# own clock, under -icount), QEMU is also stopped, leaving LOG.stuck, when
# the file has not changed for SECONDS while QEMU spins: under -icount the
# emulated clock is the instructions run, and QEMU 7.2 was seen spinning
# while it ran almost none (Documentation/testing.rst).
# Returns when QEMU is gone.
tb_idle_watch() {
	local log=$1 pidfile=$2 limit=$3 step=${4:-10} hb=${5:-} pid t last='' same=0
	local beat lastbeat='' still=0 mark
	while sleep "$step"; do
		pid=$(cat "$pidfile" 2>/dev/null) || continue
		t=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null) || return 0
		[ -n "$t" ] || return 0
		grep -q '^# testbed: setup' "$log" 2>/dev/null || { last=$t; continue; }
		same=$(tb_unchanged "$t" "$last" "$same" "$step") last=$t
		mark=
		if [ -n "$hb" ] && [ -e "$hb" ]; then
			beat=$(cat "$hb" 2>/dev/null)
			still=$(tb_unchanged "$beat" "$lastbeat" "$still" "$step") lastbeat=$beat
			[ "$still" -lt "$limit" ] || mark=stuck
		fi
		# A still clock with a still QEMU is an idle machine, not a spin.
		[ "$same" -lt "$limit" ] || mark=idle
		[ -n "$mark" ] || continue
		touch "$log.$mark"
		tb_stall_dump "$pid"
		kill "$pid" 2>/dev/null || true
		return 0
	done
}

# tb_timeout_watch LOG PIDFILE SECONDS: in the background of a boot, when
# QEMU still runs SECONDS - 60 s into a boot that times out after SECONDS,
# leave LOG.timeout and record where the testbed stands (tb_stall_dump), so
# that a hang is not only a console that stopped: the kernel's own report
# ends the boot before the timeout kills QEMU.  Returns when QEMU is gone.
tb_timeout_watch() {
	[ "$3" -gt 60 ] || return 0
	tb_qemu_after $(($3 - 60)) "$2" || return 0
	touch "$1.timeout"
	tb_stall_dump "$tb_pid"
}

# tb_stall_dump PID: before QEMU (PID) is stopped because its testbed made
# no progress, record where it stands, through the monitor socket run.sh
# gives it ($tb_monitor): every vCPU's registers as QEMU sees them
# ($out/cpus.txt: RIP, and IF in RFL, tell a spin with interrupts off),
# then SysRq-L (the kernel's backtrace of every CPU that takes interrupts),
# then an NMI to every vCPU, on which the kernel (booted with
# unknown_nmi_panic) panics: the first CPU's backtrace from NMI context,
# symbolized, and the KASLR offset for the addresses in cpus.txt, all on
# the console.  Then waits up to 30 s for QEMU to go.  Nothing without the
# socket (the bochs backend).
tb_stall_dump() {
	local pid=$1 sock=${tb_monitor:-} n=30
	[ -S "$sock" ] || return 0
	echo "kit: testbed made no progress: CPU state to ${out#"$repo"/}/cpus.txt, SysRq-L and an NMI to the console" >&2
	python3 "$tb_top/monitor.py" "$sock" "info registers -a" > "$out/cpus.txt" 2>&1 || return 0
	python3 "$tb_top/monitor.py" "$sock" "sendkey alt-sysrq-l" > /dev/null 2>&1 || return 0
	sleep 10
	python3 "$tb_top/monitor.py" "$sock" "nmi" > /dev/null 2>&1 || return 0
	while [ $((n -= 1)) -ge 0 ]; do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 1
	done
}

# tb_unchanged NEW OLD COUNT STEP: how long a reading has stood still,
# COUNT + STEP when NEW is OLD, else 0.
tb_unchanged() {
	if [ "$1" = "$2" ]; then echo $(($3 + $4)); else echo 0; fi
}

# tb_stock_panic LOG: true when the console LOG shows a kernel panic (a
# kernel message, not a test's output) and
# guest-setup.sh listed the loaded modules of the set, every one from the
# stock tree (kernel/, untainted): nothing of ours ran in the kernel.
tb_stock_panic() {
	local log=$1 mods
	grep -aqE '^\[ *[0-9]+\.[0-9]+\] Kernel panic' "$log" || return 1
	mods=$(grep -aE '^# testbed: (irqbypass|kvm|kvm_amd|kvm_intel|vfio_pci_core|vfio_pci) [A-Z]* */' "$log") ||
		return 1
	! grep -qvE '^# testbed: [a-z_]+  /.*/kernel/' <<< "$mods"
}

# tb_result RC TIMEOUT: turn the emulator's exit code and the console log
# ($out/console.log) into the testbed's exit code: CMD's from
# $out/testbed-rc or the marker line; 124 on timeout, 99 without either
# (console tail printed); 125 when the console or $out/dmesg.txt holds a
# splat.
tb_result() {
	local qrc=$1 timeout=$2 log=$out/console.log rc
	if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ] || [ -e "$log.timeout" ]; then
		echo "kit: testbed timed out after ${timeout}s; console tail:" >&2
		tail -n 40 "$log" >&2
		return 124
	fi
	local why=
	[ ! -e "$log.idle" ] ||
		why="the testbed's emulated CPUs did nothing for ${TB_IDLE_LIMIT:-300}s (no timer interrupt either)"
	[ ! -e "$log.stuck" ] ||
		why="the testbed's clock stood still for ${TB_IDLE_LIMIT:-300}s while its QEMU spun (-icount: the emulated CPUs all but stopped)"
	if [ -n "$why" ]; then
		echo "kit: $why: stopped; console tail:" >&2
		tail -n 40 "$log" >&2
		return 124
	fi
	# guest-setup.sh's file where the output directory is shared (QEMU),
	# else init's marker line, wherever a kernel message put it.
	rc=$(cat "$out/testbed-rc" 2>/dev/null ||
	     sed -n 's/.*KIT-TESTBED-RC=\([0-9]*\).*/\1/p' "$log" | tail -n 1)
	if [ -z "$rc" ]; then
		echo "kit: testbed ended without a result; console tail:" >&2
		tail -n 40 "$log" >&2
		return 99
	fi
	# Kernel messages only: printk's timestamp marks them on the console
	# (also where one lands in the middle of a test's line); test output
	# has none and may name KASAN or a WARNING in its own words.
	if { sed -n 's/.*\(\[ *[0-9]*\.[0-9]\{6\}\] \)/\1/p' "$log"
	     cat "$out/dmesg.txt" 2>/dev/null; } |
	   grep -E "$tb_splat" > "$out/splats.txt"; then
		echo "kit: kernel splat in the testbed run:" >&2
		head -n 20 "$out/splats.txt" >&2
		return 125
	fi
	return "$rc"
}

# What the testbed prints of its console: from guest-setup.sh's first line
# to the result marker.
tb_filter() {
	sed -un '/^# testbed: setup/,/^KIT-TESTBED-RC=/p' | grep --line-buffered -v '^# testbed: setup'
}
