#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Boot a Debian kernel under qemu-system-x86_64 (TCG) with our modules or the
# stock ones and run one command inside.
#
#   tools/testbed/run.sh [--modules kit|stock|host] [--timeout S] [--smp N]
#                        [--mem MIB]
#                        [--append "kernel args"] [--name NAME]
#                        [--icount SHIFT] [--qemu-arg ARG]...
#                        [--trace-events SYS[/EVENT],...] -- CMD...
#
# The target comes from the environment (KREL, KLINE, FLAVOUR, TB_IMAGE,
# TB_DIR, TB_KIT_BUILD: tools/testbed/lib.sh); make testbed and the kit's
# scripts resolve it with scripts/kit/testbed.sh.  CMD runs as root in the
# host's root filesystem (9p, read-only) with cwd the repository; $KIT_OUT
# is a writable directory that the host sees as $TB_DIR/<name>/.  Exit
# code: CMD's; 124 on timeout (console tail printed); 125 when the kernel
# log holds a WARN, BUG, oops, KASAN, lockdep report or "scheduling while
# atomic"; 99 when the testbed itself failed.
#
# --icount SHIFT runs QEMU with -icount shift=SHIFT,sleep=off: the virtual
# clock (and the TSC) advances 2^SHIFT ns per guest instruction and jumps
# over idle time, so guest-timed figures become repeatable path lengths
# rather than host-load-dependent wall time (single-threaded TCG: slower).
# Devices: an emulated Intel IOMMU and two edu devices, 00:03.0 (the one the
# tests drive) and 00:07.0, which q35 routes to the same PIRQ: the host INTx
# line is shared (vfio_intx_shared).
# --mem MIB sets the testbed's memory (2048 by default; make conformance
# gives kvm-unit-tests' svm tests, which ask for -m 4g, more).
#
# --qemu-arg ARG is passed to QEMU as one more argument (make netbench adds
# its NICs this way); repeat it for each.
# TB_QEMU names the emulator, Debian's qemu-system-x86_64 by default: for
# trying another build of QEMU (it needs 9p, virtfs) under the testbed.
# --trace-events turns those trace events on once, before CMD (tests that
# read them); without it no event is on, as on a user's host: benchmarks
# never pass it.
#
# A boot whose kernel has not reached the setup (guest-setup.sh's first
# line) after TB_SETUP_TIMEOUT seconds (300) is stopped and, as a boot that
# died before it, booted once more: nothing of ours ran in it.  After the
# setup, a testbed whose QEMU took no CPU time for TB_IDLE_LIMIT seconds
# (300; 0 turns the watch off) is stopped and fails as a timeout: its
# emulated clock had stopped (6 December 2026, during make mmiobench).
# Under --icount, so is one whose own clock (guest-setup.sh's heartbeat
# file) stood still that long while its QEMU spun.  Such a boot, and one
# still running 60 s before its timeout, leaves its vCPUs' registers in
# $out/cpus.txt and the kernel's backtraces on the console before it is
# stopped (tb_stall_dump, through QEMU's monitor socket).
#
# Modules: "kit" installs $TB_KIT_BUILD/**.ko into an updates/ directory
# beside the stock tree and runs depmod, as `make install` does on a real
# host; "stock" uses the stock tree alone.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

modules=kit timeout=900 smp=2 mem=2048 append= name= icount= trace_events=
setup_timeout=${TB_SETUP_TIMEOUT:-300}
[[ "$setup_timeout" =~ ^[1-9][0-9]*$ ]] || die "TB_SETUP_TIMEOUT=$setup_timeout: seconds"
TB_IDLE_LIMIT=${TB_IDLE_LIMIT:-300}
[[ "$TB_IDLE_LIMIT" =~ ^[0-9]+$ ]] || die "TB_IDLE_LIMIT=$TB_IDLE_LIMIT: seconds (0: no watch)"
qemu_extra=()
while [ $# -gt 0 ]; do
	case "$1" in
	--modules) modules=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--name) name=$2; shift 2 ;;
	--icount) icount=$2; shift 2 ;;
	--qemu-arg) qemu_extra+=("$2"); shift 2 ;;
	--trace-events) trace_events=$2; shift 2 ;;
	--) shift; break ;;
	*) die "run.sh: unknown option $1" ;;
	esac
done
[ $# -gt 0 ] || die "run.sh: no command (usage in the header of $0)"
[[ "$mem" =~ ^[0-9]+$ ]] && [ "$mem" -ge 512 ] || die "--mem $mem: MiB, at least 512"
case "$modules" in kit|stock|host) ;; *) die "--modules kit|stock|host" ;; esac

qemu=${TB_QEMU:-qemu-system-x86_64}
tb_init "$qemu" busybox modinfo depmod xz cpio
tb_rundir "${name:-$modules}" "$modules"

# 3. The initramfs: busybox, the 9p modules in dependency order, init.
initrd=$tb/initrd.img
init=$tb_top/init
if [ ! -s "$initrd" ] || [ "$init" -nt "$initrd" ] ||
   [ "$root/lib/modules/$KREL/modules.dep" -nt "$initrd" ]; then
	step "building the testbed initramfs"
	ir=$tb/initramfs
	rm -rf "$ir"; mkdir -p "$ir"/{bin,proc,sys,dev,host,lib/modules}
	cp /bin/busybox "$ir/bin/busybox"
	cp "$init" "$ir/init"
	order=()
	add_mod() {
		local path dep
		path=$(modinfo -b "$root" -k "$KREL" -F filename "$1" 2>/dev/null) || return 0
		case "$path" in /*) ;; *) return 0 ;; esac	# built in
		for dep in $(modinfo -F depends "$path" | tr , ' '); do add_mod "$dep"; done
		local n; n=$(basename "${path%.xz}")
		[[ " ${order[*]} " == *" $n "* ]] && return 0
		xz -dc "$path" > "$ir/lib/modules/$n" 2>/dev/null || cp "$path" "$ir/lib/modules/$n"
		order+=("$n")
	}
	for m in virtio_pci 9pnet_virtio 9p; do add_mod "$m"; done
	printf '%s\n' "${order[@]}" > "$ir/modules.order"
	(cd "$ir" && find . | cpio -o -H newc --quiet) | gzip -1 > "$initrd"
	rm -rf "$ir"
fi

# 4. The run directory ($out) is shared read-write.
# Under -icount guest-setup.sh keeps a heartbeat for tb_idle_watch's
# stuck clock.
heartbeat=${icount:+1}
tb_cmdfiles qemu "$modules" kvm_amd "$@"

cpu=max
# The rt kvm refuses to load without an invariant TSC.
[ "$FLAVOUR" = rt ] && cpu=max,+invtsc,x-force-features=on
if [ -n "$icount" ]; then
	[[ "$icount" =~ ^[0-9]+$ ]] || die "--icount SHIFT: a number"
	qemu_extra+=(-icount "shift=$icount,sleep=off")
fi
# The kernel boots with one CPU and guest-setup.sh brings the others up
# once it has loaded the modules, created the VM it holds and turned the
# trace events on: those flip static keys (KVM's preempt notifiers in
# __schedule(), the events' own), and multi-threaded TCG sometimes runs a
# patched site's stale text on another vCPU and dies on the patching int3
# (in CI on 6 December 2026 at 6 s, as the held VM was created: RIP one
# byte past preempt_notifier_key's site in __schedule()).  With one CPU online there is no other vCPU to
# run it.  Under -icount it is also needed: QEMU 7.2 runs the vCPUs
# round-robin and gives the CPU that runs first the whole budget up to
# the next timer, so a CPU that busy-waits without PAUSE or HLT starves
# the others (QEMU 8.1 splits the budget, commit 83ecdb18eb); 6.1 brings
# its second CPU up at boot that way (do_boot_cpu() calls schedule() in a
# loop), and the boot never got past "x86: Booting SMP configuration".
# Onlining a CPU later takes 0.12 s on 6.1 (measured).
[ "$smp" -eq 1 ] || append="maxcpus=1${append:+ $append}"
log=$out/console.log
# The monitor, for tb_stall_dump (a socket path must be short: not $out).
mondir=$(mktemp -d /tmp/kit-tb.XXXXXX)
trap 'rm -rf "$mondir"' EXIT
tb_monitor=$mondir/monitor.sock
# One more boot when the kernel died before the init ran guest-setup.sh
# (no "# testbed: setup" line, so no module of ours was loaded and no
# command ran): multi-threaded TCG sometimes executes kernel text that a
# static-key flip is patching ("Oops: int3" in sched_clock_cpu() at 2 s
# of boot, seen once in about 40 boots of 3 December 2026).  And one more
# boot when the kernel panicked in a boot whose modules were all stock
# (tb_stock_panic): the same stale text, a jump into the middle of an
# instruction, killed a 6.12 stock boot at 8 s in CI on 5 December 2026.
# And one more boot when the kernel stalled before the setup (a lost
# timer wakeup of an idle vCPU: RCU stall reports from 22 s on, once on
# 6 December 2026, 6.12 rt); tb_setup_watch stops it.
# A kit boot never boots twice: its panics are ours to fail on.
for attempt in 1 2; do
	step "booting $KREL ($modules modules, timeout ${timeout}s): $*"
	start=$SECONDS
	rm -f "$out/qemu.pid" "$out/heartbeat" "$out/cpus.txt" "$tb_monitor" \
		"$log.stalled" "$log.idle" "$log.stuck" "$log.timeout"
	tb_setup_watch "$log" "$out/qemu.pid" "$setup_timeout" &
	watch=$!
	tb_timeout_watch "$log" "$out/qemu.pid" "$timeout" &
	twatch=$!
	iwatch=
	if [ "$TB_IDLE_LIMIT" -gt 0 ]; then
		tb_idle_watch "$log" "$out/qemu.pid" "$TB_IDLE_LIMIT" 10 \
			${heartbeat:+"$out/heartbeat"} &
		iwatch=$!
	fi
	set +e
	timeout --foreground -k 10 "$timeout" "$qemu" \
		-M q35 -accel tcg -cpu "$cpu" -smp "$smp" -m "$mem" "${qemu_extra[@]}" \
		-nographic -no-reboot -serial stdio -pidfile "$out/qemu.pid" \
		-monitor "unix:$tb_monitor,server=on,wait=off" \
		-kernel "$root/boot/vmlinuz-$KREL" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 unknown_nmi_panic sysrq_always_enabled intel_iommu=on kit.out=$out kit.repo=$repo $append" \
		-device intel-iommu -device edu -device edu,addr=07.0 \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$out,mount_tag=kitout,security_model=none,multidevs=remap" \
		< /dev/null 2>&1 | sed -u 's/\r//g' | tee "$log" | tb_filter
	qrc=${PIPESTATUS[0]}
	kill "$watch" "$twatch" $iwatch 2>/dev/null
	wait "$watch" "$twatch" $iwatch 2>/dev/null
	set -e
	step "testbed finished in $((SECONDS - start)) s (console: ${log#"$repo"/})"
	# why: the console's name, what the log says, why booting again is safe
	why=
	if [ $attempt -eq 2 ]; then
		:
	elif [ -e "$log.timeout" ] || [ -e "$log.idle" ] || [ -e "$log.stuck" ]; then
		:	# stopped by a watch: a result, as before the NMI that
		# tb_stall_dump sends made the kernel panic
	elif [ -e "$log.stalled" ]; then
		why="stall|the testbed kernel stalled before its setup (${setup_timeout}s)|the first boot ran nothing of ours"
	elif [ "$qrc" -ne 124 ] && [ "$qrc" -ne 137 ] &&
	     ! grep -q '^# testbed: setup' "$log"; then
		why="boot|the testbed kernel died before its setup|the first boot ran nothing of ours"
	elif tb_stock_panic "$log"; then
		why="panic|the kernel panicked with stock modules only|no module of ours was loaded"
	fi
	if [ -n "$why" ]; then
		IFS="|" read -r cname what safe <<< "$why"
		echo "kit: $what; console tail:" >&2
		tail -n 12 "$log" >&2
		cp "$log" "$out/console-$cname$attempt.log"
		step "booting once more ($safe; first console: console-$cname$attempt.log)"
		continue
	fi
	break
done

tb_result "$qrc" "$timeout"
