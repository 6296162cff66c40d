#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The bochs testbed: boot a Debian kernel under Debian's bochs, whose CPU
# model emulates VMX (EPT, VPID, unrestricted guest; no posted-interrupt
# processing), so that kvm_intel runs; run one command inside.
#
#   tools/testbed/run-bochs.sh [--bochs3] [--smp N] [--modules kit|stock]
#                              [--timeout S] [--append "kernel args"]
#                              [--name NAME] [--trace-events SYS[/EVENT],...]
#                              -- CMD...
#
# --bochs3: the Bochs 3.0 that make bochs builds (TB_BOCHS, default
# build/bochs/bin/bochs, with the BIOS images installed beside it), on a CPU
# model with VMX APIC virtualization (virtual-interrupt delivery, posted-
# interrupt processing), so that kvm_intel loads with enable_apicv=Y; --smp
# N CPUs (default 2 there: a posted-interrupt notification IPI needs a
# sender CPU besides the vCPU's).  Without it: TB_BOCHS (default Debian's
# /usr/bin/bochs 2.7) on the generic VMX CPU below, one CPU.
#
# The contract is run.sh's: target from the environment, CMD runs as root with
# cwd the repository, the same exit codes, console.log, dmesg.txt and
# splats.txt in build/testbed/<krel>/<name>/.  The differences: bochs has no
# 9p and no virtio, so the initramfs carries everything at its host path
# (busybox, bash, kmod, coreutils' timeout, util-linux's dmesg with their
# libraries; the testbed scripts; the module tree, cut down to the closure
# of what the tests load; every argument of CMD that is a host path, a
# directory whole but for .o files).  $KIT_OUT is a directory in the
# initramfs: the host gets the kernel log from the console.  No edu device,
# no IOMMU, one CPU.  Boot to the command takes minutes, not seconds.
#
# The kernel and initramfs boot from an isolinux ISO; the serial console
# goes to a file; bochs has no display-less GUI in Debian's build, so it
# runs its VNC server (rfb) without waiting for a client, in a network
# namespace of its own, and an rc file answers the debugger's start prompt
# with "continue".
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

modules=kit timeout=1800 append= name= trace_events= bochs3=0 smp=
while [ $# -gt 0 ]; do
	case "$1" in
	--bochs3) bochs3=1; shift ;;
	--smp) smp=$2; shift 2 ;;
	--modules) modules=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--name) name=$2; shift 2 ;;
	--trace-events) trace_events=$2; shift 2 ;;
	--) shift; break ;;
	*) die "run-bochs.sh: unknown option $1" ;;
	esac
done
[ $# -gt 0 ] || die "run-bochs.sh: no command (usage in the header of $0)"
case "$modules" in kit|stock) ;; *) die "--modules kit|stock" ;; esac

backend=bochs
if [ $bochs3 = 1 ]; then
	backend=bochs3
	bochs=${TB_BOCHS:-build/bochs/bin/bochs}
	smp=${smp:-2}
else
	bochs=${TB_BOCHS:-/usr/bin/bochs}
	smp=${smp:-1}
	[ "$smp" = 1 ] || die "--smp: only with --bochs3 (the generic CPU below is one CPU)"
fi
case "$bochs" in /*) ;; *) bochs=$repo/$bochs ;; esac
if [ ! -x "$bochs" ]; then
	[ $bochs3 = 1 ] && die "no bochs at $bochs (make bochs builds Bochs 3.0)"
	die "no bochs at $bochs: install the testbed's packages (bochs, bochsbios, vgabios)"
fi
tb_init xorriso busybox modprobe depmod xz cpio
tb_rundir "${name:-$backend-$modules}" "$modules"
tb_cmdfiles "$backend" "$modules" kvm_intel "$@"

step "building the bochs initramfs and ISO"
ir=$out/initramfs
mkdir -p "$ir"/{bin,proc,sys,dev,tmp,run}
cp /bin/busybox "$ir/bin/busybox"
cp "$tb_top/init" "$ir/init"
: > "$ir/modules.order"		# no 9p modules to load

# put SRC...: copy host files to the same path in the initramfs.
put() { cp -L --parents "$@" "$ir/"; }
put /usr/bin/bash /usr/bin/kmod /usr/bin/timeout /usr/bin/dmesg
ln -s /usr/bin/bash "$ir/bin/bash"
mkdir -p "$ir/usr/sbin"
for t in modprobe modinfo insmod rmmod lsmod depmod; do
	ln -s /usr/bin/kmod "$ir/usr/sbin/$t"
done
put "$tb_top"/*.sh "$out/env" "$out/cmd.sh"
# module_checks.sh reads the kit's version from the repository's header.
put "$repo/include/linux/kvm_irqbypass_version.h"

# The arguments of CMD that name host files (relative ones from the
# repository, as cmd.sh runs there).
for a in "$@"; do
	p=$(cd "$repo" && readlink -f -- "$a" 2>/dev/null) || continue
	if [ -d "$p" ]; then
		(cd / && find "${p#/}" -type f ! -name '*.o' -print0) |
			(cd / && xargs -0 -r cp -L --parents -t "$ir/")
	elif [ -f "$p" ]; then
		put "$p"
	fi
done

# The module tree: every module in updates/ (ours, with the in-kernel
# tests), the KVM vendor module, the stock VFIO modules the checks load,
# and what they depend on; then depmod over the copy.
mtree=$modroot/lib/modules/$KREL
want=(kvm_intel vfio_pci vfio_iommu_type1 vhost_vdpa)
if [ -d "$mtree/updates" ]; then
	for f in "$mtree"/updates/*.ko; do want+=("$(basename "${f%.ko}")"); done
fi
for m in "${want[@]}"; do
	modprobe -d "$modroot" -S "$KREL" --show-depends "$m" 2>/dev/null ||
		[ "$m" = vhost_vdpa ] || die "no module $m in $mtree"
done | sed -n 's/^insmod \([^ ]*\).*/\1/p' | sort -u | while read -r f; do
	put "$f"
	case "$f" in *.ko) strip --strip-debug "$ir$f" ;; esac
done
for f in modules.builtin modules.builtin.modinfo modules.order; do
	[ -f "$mtree/$f" ] && put "$mtree/$f"
done
depmod -b "$ir$modroot" "$KREL"

# The libraries of every dynamic executable in the initramfs (ldd fails on
# the others: static busybox, scripts).
find "$ir" -type f -perm -u+x -print0 | { xargs -0 -r -n 1 ldd 2>/dev/null || true; } |
	grep -o '/[^ ]*' | sort -u | while read -r l; do put "$l"; done

iso=$out/iso
mkdir -p "$iso/isolinux"
cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 \
	"$iso/isolinux/"
cp "$root/boot/vmlinuz-$KREL" "$iso/vmlinuz"
(cd "$ir" && find . | cpio -o -H newc --quiet) | gzip -1 > "$iso/initrd.img"
cat > "$iso/isolinux/isolinux.cfg" <<EOF
DEFAULT kit
PROMPT 0
TIMEOUT 0
LABEL kit
  KERNEL /vmlinuz
  APPEND initrd=/initrd.img console=ttyS0,115200 earlyprintk=serial,ttyS0,115200 panic=-1 kit.backend=bochs kit.out=$out kit.repo=$repo $append
EOF
xorriso -as mkisofs -quiet -o "$out/boot.iso" -b isolinux/isolinux.bin \
	-c isolinux/boot.cat -no-emul-boot -boot-load-size 4 -boot-info-table \
	"$iso" 2> "$out/xorriso.log" || { cat "$out/xorriso.log" >&2; die "xorriso failed"; }
step "initramfs $(du -m "$iso/initrd.img" | cut -f1) MB, $(find "$ir" -name '*.ko*' | wc -l) modules"
rm -rf "$ir" "$iso"

if [ $bochs3 = 0 ]; then
	# A generic CPU with VMX level 2 (EPT, VPID, unrestricted guest, ...;
	# bochs 2.7 implements no posted-interrupt processing, so kvm_intel
	# loads with enable_apicv=N).  Not one of the named models
	# (corei7_skylake_x, ...): with one CPU their CPUID leaf 4 still
	# reports 8 cores, and 6.12 WARNs in parse_legacy() at boot.  Family 6
	# model 0x2a (Sandy Bridge): for a Skylake model number 6.12 prints
	# "RETBleed: WARNING: ..." (retpolines, no IBRS), which the splat scan
	# rightly counts.
	share=/usr/share/bochs
	cpu="cpu: model=bx_generic, count=1, ips=100000000, reset_on_triple_fault=0
cpuid: vendor_string=\"GenuineIntel\", brand_string=\"bochs VMX\", level=6, family=6, model=0x2a, stepping=7, x86_64=1, 1g_pages=1, pcid=1, fsgsbase=1, smep=1, smap=1, mwait=1, vmx=2, apic=x2apic, simd=avx2, xsave=1, xsaveopt=1, aes=1, movbe=1, avx_f16c=1, avx_fma=1, bmi=2"
	vgarom=/usr/share/vgabios/vgabios.bin
	display='display_library: rfb, options="timeout=0"'
	sound='sound: driver=dummy'
else
	# Bochs 3.0 has no cpuid: options any more, only named models.  Ice
	# Lake (corei7_icelake_u): VMX with virtual-interrupt delivery and
	# posted-interrupt processing (as Skylake-X and later have), on a model
	# number that 6.12's RETBleed check does not flag (it does Skylake's).
	# $smp CPUs of one core and one thread each.  No GUI (nogui): nothing
	# listens, so no network namespace is needed either.
	share=$(dirname "$(dirname "$bochs")")/share/bochs
	cpu="cpu: model=corei7_icelake_u, count=$smp:1:1, ips=100000000, reset_on_triple_fault=0"
	vgarom=$share/VGABIOS-lgpl-latest.bin
	display='display_library: nogui'
	sound=		# built without sound
fi
[ -f "$share/BIOS-bochs-latest" ] || die "no $share/BIOS-bochs-latest"
# Guest time follows the instruction count (ips), as does the TSC (100
# MHz).  Speaker and sound off: with the defaults bochs 2.7 aborted
# ("buffer overflow detected") right after ALSA found no sound card (make
# bochs builds no sound at all).
cat > "$out/bochsrc" <<EOF
$cpu
memory: guest=2048, host=2048
romimage: file=$share/BIOS-bochs-latest, options=fastboot
vgaromimage: file=$vgarom
clock: sync=none, time0=local
pci: enabled=1, chipset=i440fx
ata0-master: type=cdrom, path="boot.iso", status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev="serial.raw"
$display
speaker: enabled=0
$sound
log: bochs.log
panic: action=fatal
error: action=report
info: action=report
debug: action=ignore
EOF
# bochs 2.7 (Debian's build, with its debugger) stops at a prompt first;
# Bochs 3.0 of make bochs has no debugger and no -rc option.
rc=(-rc bochs.rc)
echo continue > "$out/bochs.rc"
[ $bochs3 = 0 ] || rc=()

log=$out/console.log
: > "$out/serial.raw"
step "booting $KREL under $backend ($smp CPU, $modules modules, timeout ${timeout}s): $*"
start=$SECONDS
set +e
# bochs 2.7's VNC server listens on every address without authentication
# and has no bind option: give it a network namespace of its own, where
# nothing but its loopback exists.
netns=(unshare --net)
if [ $bochs3 = 1 ]; then
	netns=()
else
	"${netns[@]}" true 2> /dev/null || netns=(unshare --user --map-root-user --net)
	"${netns[@]}" true 2> /dev/null ||
		die "cannot create a network namespace for bochs (its VNC server has no bind option)"
fi
(cd "$out" && exec timeout -k 10 "$timeout" "${netns[@]}" "$bochs" -q -f bochsrc "${rc[@]}" \
	< /dev/null > bochs.out 2>&1) &
bpid=$!
# Boot times (wall): to the kernel's first line (BIOS and isolinux loading
# the kernel and initramfs; earlyprintk makes the line early) and to
# guest-setup.sh's first line.
t0=$(date +%s)
tail -n +1 -F --pid=$bpid "$out/serial.raw" 2>/dev/null |
	while IFS= read -r l; do
		l=${l%$'\r'}
		[ -s "$out/kernel-seconds" ] || echo "$(($(date +%s) - t0))" > "$out/kernel-seconds"
		[[ "$l" == "# testbed: setup"* ]] &&
			echo "$(($(date +%s) - t0))" > "$out/boot-seconds"
		printf '%s\n' "$l"
	done | tb_filter
wait $bpid
qrc=$?
set -e
tr -d '\r' < "$out/serial.raw" > "$log"
sed -n '/^KIT-DMESG-BEGIN$/,/^KIT-DMESG-END$/p' "$log" | sed '1d;$d' > "$out/dmesg.txt"
step "testbed finished in $((SECONDS - start)) s; kernel started at $(cat "$out/kernel-seconds" 2>/dev/null || echo -) s, setup at $(cat "$out/boot-seconds" 2>/dev/null || echo -) s (console: ${log#"$repo"/})"

tb_result "$qrc" "$timeout"
