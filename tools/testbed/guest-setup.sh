#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs inside the testbed, chrooted into the host's root: load the module
# set (ours from updates/ or all stock, as the admin's modprobe would), bind
# the edu devices to vfio-pci, run the requested command, save dmesg.
# $1: the run's output directory (writable, shared with the host).
out=$1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
. "$out/env"
echo "# testbed: setup"
cd "$KIT_REPO" || exit 98

# Under -icount: the testbed's uptime every 5 s of its own clock, for the
# host's watch (tools/testbed/lib.sh, tb_idle_watch), which stops a QEMU
# that spins while the testbed's clock stands still.
if [ -n "${KIT_HEARTBEAT:-}" ]; then
	(while :; do cut -d" " -f1 /proc/uptime > "$out/heartbeat"; sleep 5; done) &
fi

mp() {
	modprobe -d "$MODROOT" -S "$KREL" "$@" ||
		{ echo "# testbed: modprobe $* failed"; exit 97; }
}
# Modules the tests use: KVM (kvm_amd on QEMU, whose TCG -cpu max has SVM;
# kvm_intel on bochs, which emulates VMX), VFIO PCI (also without a device).
mp "$KIT_KVM"
mp vfio_iommu_type1 allow_unsafe_interrupts=1
mp vfio_pci

# Keep VMs for the whole run.  KVM flips static keys when the first VM is
# created and the last destroyed (preempt notifiers, in __schedule()) and
# when a vCPU's local APIC is created or software-enabled (lapic's
# apic_sw_disabled, which every guest boot flips twice); with
# multi-threaded TCG a vCPU then sometimes runs the stale text and dies on
# the patching int3 ("Oops: int3" in __schedule(), and in
# apic_has_pending_timer() when make netbench booted its L2 guests on
# rt).  A VM, and a vCPU with an in-kernel APIC that is never enabled,
# held from here on keep those keys from ever returning to zero.  bochs
# emulates one CPU: nothing runs stale text there.
if [ "$KIT_BACKEND" = qemu ]; then
	mkfifo /tmp/kvm-hold
	python3 -c 'import fcntl, os, time
kvm = os.open("/dev/kvm", os.O_RDWR)
vm = fcntl.ioctl(kvm, 0xAE01, 0)  # KVM_CREATE_VM
fcntl.ioctl(vm, 0xAE60, 0)        # KVM_CREATE_IRQCHIP
fcntl.ioctl(vm, 0xAE41, 0)        # KVM_CREATE_VCPU 0: its APIC stays off
open("/tmp/kvm-hold", "w").write("%d\n" % vm)
while True:
    time.sleep(3600)' &
	read -r _ < /tmp/kvm-hold || { echo "# testbed: cannot create the holding VM"; exit 97; }
fi

# Trace events that the run asked for (run.sh --trace-events; tests only:
# benchmarks measure the modules as users load them, with no event on).
# Enabling an event patches kernel text (its static key, and
# sched_wakeup's when comms are recorded), which under multi-threaded TCG
# can kill a vCPU running the stale text ("Oops: int3").  Patch once here,
# before any test runs; the tests then only clear the buffer
# (stress_util.c).  An event that does not exist (stock modules have no
# vfio_fastpath) is left out.
t=/sys/kernel/tracing
if [ -n "${KIT_TRACE_EVENTS:-}" ]; then
	echo 0 > $t/options/record-cmd
	echo 0 > $t/options/record-tgid
	for e in ${KIT_TRACE_EVENTS//,/ }; do
		[ -d "$t/events/$e" ] || continue
		echo 1 > "$t/events/$e/enable"
		echo "# testbed: trace events $e on"
	done
fi

# The other CPUs come up now (run.sh boots with maxcpus=1): the static
# keys that the module loads, the held VM and the trace events flip were
# patched while no other vCPU could run their stale text.
for c in /sys/devices/system/cpu/cpu[0-9]*; do
	[ -f "$c/online" ] && [ "$(cat "$c/online")" = 0 ] || continue
	echo 1 > "$c/online" || { echo "# testbed: cannot online ${c##*/}"; exit 97; }
done

# edu (1234:11e8) goes to vfio-pci: there is no host driver for it.
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x1234 ] && [ "$(cat "$d/device")" = 0x11e8 ] || continue
	echo vfio-pci > "$d/driver_override"
	echo "${d##*/}" > /sys/bus/pci/drivers_probe
done

echo "# testbed: kernel $(uname -r), modules: $KIT_MODULES"
for m in irqbypass kvm "$KIT_KVM" vfio_pci_core vfio_pci; do
	[ -d "/sys/module/$m" ] || continue
	echo "# testbed: $m $(cat /sys/module/$m/taint 2>/dev/null) $(modinfo -F filename -b "$MODROOT" -k "$KREL" "$m")"
done
# What of the vendor module's hardware support the emulated CPU enables.
p=/sys/module/$KIT_KVM/parameters
params=
for x in enable_apicv ept vpid unrestricted_guest nested enable_ipiv \
	 flexpriority avic npt; do
	[ -r "$p/$x" ] && params+=" $x=$(cat "$p/$x")"
done
echo "# testbed: $KIT_KVM$params"

bash "$out/cmd.sh"
rc=$?
# A kmemleak kernel (make check-debug): scan now, so that leaks of this run
# reach the kernel log ("kmemleak: N new suspected memory leaks"), which
# the host scans like any splat.
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak > "$out/kmemleak.txt"
fi
dmesg > "$out/dmesg.txt"
# The exit code also as a file: on the serial console a kernel message can
# land in the middle of the marker line that init prints.
echo "$rc" > "$out/testbed-rc"
exit $rc
