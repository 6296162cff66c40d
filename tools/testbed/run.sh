#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Boot a Debian kernel under qemu-system-x86_64 (TCG) with our modules or the
# stock ones and run one command inside.
#
#   tools/testbed/run.sh [--modules kit|stock] [--timeout S] [--smp N]
#                        [--append "kernel args"] [--name NAME]
#                        [--icount SHIFT] -- CMD...
#
# The target is KLINE/FLAVOUR from the environment (default 6.12 generic).
# CMD runs as root in the host's root filesystem (9p, read-only) with cwd the
# repository; $KIT_OUT is a writable directory that the host sees as
# build/testbed/<name>/.  Exit code: CMD's; 124 on timeout (console tail
# printed); 125 when the kernel log holds a WARN, BUG, oops, KASAN, lockdep
# report or "scheduling while atomic"; 99 when the testbed itself failed.
#
# --icount SHIFT runs QEMU with -icount shift=SHIFT,sleep=off: the virtual
# clock (and the TSC) advances 2^SHIFT ns per guest instruction and jumps
# over idle time, so guest-timed figures become repeatable path lengths
# rather than host-load-dependent wall time (single-threaded TCG: slower).
#
# The image package is extracted with dpkg-deb under build/testbed/ (never
# installed to /boot).  Modules: "kit" installs build/<krel>/**.ko into an
# updates/ directory beside the stock tree and runs depmod, as
# `make install` does on a real host; "stock" uses the stock tree alone.
set -euo pipefail
. "$(dirname "$0")/../../scripts/kit/lib.sh"

modules=kit timeout=900 smp=2 append= name= icount=
while [ $# -gt 0 ]; do
	case "$1" in
	--modules) modules=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--name) name=$2; shift 2 ;;
	--icount) icount=$2; shift 2 ;;
	--) shift; break ;;
	*) die "run.sh: unknown option $1" ;;
	esac
done
[ $# -gt 0 ] || die "run.sh: no command (usage in the header of $0)"
case "$modules" in kit|stock) ;; *) die "--modules kit|stock" ;; esac

kit_target
kit_need_pkgs qemu-system-x86 busybox-static kmod xz-utils cpio
tb=$B/testbed/$KREL
root=$IMGROOT

# 1. The kernel image package, extracted once per version (KIT_DEBUG=1: the
#    debug kernel, built once by scripts/kit/debug-kernel.sh).
if [ "${KIT_DEBUG:-0}" = 1 ]; then
	"$kit_top/scripts/kit/debug-kernel.sh"
elif [ ! -f "$root/boot/vmlinuz-$KREL" ]; then
	step "downloading and extracting $IMGPKG"
	mkdir -p "$tb/pkgs"
	(cd "$tb/pkgs" && apt-get download -q "$IMGPKG" > /dev/null 2>&1) ||
		{ apt-get update -q > /dev/null 2>&1 || true
		  (cd "$tb/pkgs" && apt-get download -q "$IMGPKG"); } ||
		die "cannot download $IMGPKG"
	rm -rf "$root.tmp"
	dpkg-deb -x "$tb/pkgs/${IMGPKG}_"*.deb "$root.tmp"
	depmod -b "$root.tmp" "$KREL"
	rm -rf "$root"; mv "$root.tmp" "$root"
	rm -rf "$tb/pkgs"
fi

# 2. The module tree modprobe sees: stock, or stock + ours in updates/
#    (per run, so that runs of different builds do not share it).
name=${name:-$modules}
out=$B/testbed/$KREL/$name
rm -rf "$out"; mkdir -p "$out"
if [ "$modules" = kit ]; then
	modroot=$out/modules
	# What the last build produced (a stale .ko of a removed source is not).
	mapfile -t kos < <(sed -E 's/\.(o|ko)$/.ko/; s#^([^/])#'"$B/$KREL"'/\1#' "$B/$KREL/modules.order")
	[ ${#kos[@]} -ge 6 ] || die "build/$KREL has ${#kos[@]} modules: run make first"
	rm -rf "$modroot"
	mkdir -p "$modroot/lib/modules/$KREL/updates"
	for f in "$root/lib/modules/$KREL"/*; do
		ln -s "$f" "$modroot/lib/modules/$KREL/"
	done
	cp "${kos[@]}" "$modroot/lib/modules/$KREL/updates/"
	depmod -b "$modroot" "$KREL"
else
	modroot=$root
fi

# 3. The initramfs: busybox, the 9p modules in dependency order, init.
initrd=$tb/initrd.img
init=$kit_top/tools/testbed/init
if [ ! -s "$initrd" ] || [ "$init" -nt "$initrd" ]; then
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

# 4. The run directory ($out, created above) is shared read-write.
{
	echo "KREL=$KREL"
	echo "MODROOT=$modroot"
	echo "KIT_REPO=$kit_top"
	echo "KIT_MODULES=$modules"
	echo "export KIT_OUT=$out KLINE=$KLINE FLAVOUR=$FLAVOUR KREL KIT_MODULES MODROOT KIT_REPO"
} > "$out/env"
printf '%q ' "$@" > "$out/cmd.sh"; echo >> "$out/cmd.sh"

cpu=max
# The rt kvm refuses to load without an invariant TSC.
[ "$FLAVOUR" = rt ] && cpu=max,+invtsc,x-force-features=on
qemu_extra=()
if [ -n "$icount" ]; then
	[[ "$icount" =~ ^[0-9]+$ ]] || die "--icount SHIFT: a number"
	qemu_extra=(-icount "shift=$icount,sleep=off")
fi
log=$out/console.log
step "booting $KREL ($modules modules, timeout ${timeout}s): $*"
start=$SECONDS
set +e
timeout --foreground -k 10 "$timeout" qemu-system-x86_64 \
	-M q35 -accel tcg -cpu "$cpu" -smp "$smp" -m 2048 "${qemu_extra[@]}" \
	-nographic -no-reboot -monitor none -serial stdio \
	-kernel "$root/boot/vmlinuz-$KREL" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 intel_iommu=on kit.out=$out kit.repo=$kit_top $append" \
	-device intel-iommu -device edu \
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$out,mount_tag=kitout,security_model=none,multidevs=remap" \
	< /dev/null 2>&1 | tr -d '\r' | tee "$log" | sed -n '/^# testbed: setup/,/^KIT-TESTBED-RC=/p' | grep -v '^# testbed: setup'
qrc=${PIPESTATUS[0]}
set -e
step "testbed finished in $((SECONDS - start)) s (console: ${log#"$kit_top"/})"

if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	echo "kit: testbed timed out after ${timeout}s; console tail:" >&2
	tail -n 40 "$log" >&2
	exit 124
fi
rc=$(sed -n 's/^KIT-TESTBED-RC=\([0-9]*\).*/\1/p' "$log" | tail -n 1)
if [ -z "$rc" ]; then
	echo "kit: testbed ended without a result; console tail:" >&2
	tail -n 40 "$log" >&2
	exit 99
fi
# Splats fail the run whatever the command said.
splat='WARNING:|BUG:|Oops|KASAN|UBSAN|possible circular locking|possible recursive locking|inconsistent lock state|scheduling while atomic|sleeping function called from invalid context|Kernel panic|INFO: task .* blocked|kmemleak:.*new suspected'
if grep -E "$splat" "$log" "$out/dmesg.txt" > "$out/splats.txt" 2>/dev/null; then
	echo "kit: kernel splat in the testbed run:" >&2
	head -n 20 "$out/splats.txt" >&2
	exit 125
fi
exit "$rc"
