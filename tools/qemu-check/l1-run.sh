#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs inside the testbed (tools/testbed/run.sh; the module set is loaded
# and the edu devices are bound to vfio-pci): for each VMM variant boot
# Debian's kernel as an L2 guest on kernel-irqchip=split with the edu at
# 00:03.0 assigned, booted with pci=nomsi, while the guest raises N INTx
# interrupts (tools/qemu-check/l2-init, edu-intx).  Around each guest, the
# host's counters:
#   eoi     returns of KVM_RUN to the VMM with KVM_EXIT_IOAPIC_EOI (26)
#   uexits  returns of KVM_RUN to the VMM, all reasons
#   hirqs   host interrupts handled by vfio's INTx handler for the edu
#           at 00:03.0 (with both edus assigned, once per firing of
#           their shared host line)
# (hist triggers on kvm:kvm_userspace_exit and irq:irq_handler_entry, set
# once before any guest runs).  One line per variant on stdout and in
# $KIT_OUT/qc-results.txt:
#   qc: VARIANT qemu=RC l2=RC[,RC] boots=B raised=R arrived=A extra=E
#       timeouts=T msi=M cpu1=C warn=W hirqs=H eoi=X uexits=U secs=S
# raised/arrived/extra/timeouts are the sums of every result line of the
# guest (each boot, each device, MSI and INTx), msi the interrupts that
# arrived by MSI, cpu1 those on the L2 guest's CPU 1 (affinity), warn the
# kit QEMU's warnings about a pin's resamplers of both kinds.
#
#   l1-run.sh L2_KERNEL L2_INITRD N TN KIT_QEMU VARIANT...
#   VARIANT: kit (the kit's QEMU), kit-off (the same with the vfio-pci
#            property x-kvm-split-resample=off), debian (Debian's QEMU),
#            N interrupts each; and QEMU's INTx transitions with the kit's
#            QEMU, TN interrupts per device and round (l2-init's qc.mode):
#            reboot (the guest reboots once: QEMU resets the device and
#            enables INTx again), msi (MSI enabled, then disabled and
#            INTx again; no pci=nomsi), affinity (-smp 2, the guest moves
#            the IRQ to CPU 1: its IOAPIC pin is reprogrammed), reset (a
#            bus reset of the edu behind a PCIe root port), mixed (the
#            edus at 00:03.0 and 00:07.0, on one pin, the second with
#            x-kvm-split-resample=off)
# Exit code: the number of variants whose guest did not run to its end.
set -u
l2k=$1 l2i=$2 qn=$3 tn=$4 kitq=$5
shift 5
out=$KIT_OUT
bdf=0000:00:03.0 bdf2=0000:00:07.0
res=$out/qc-results.txt
: > "$res"

echo "# qemu-check: kernel $(uname -r), modules $KIT_MODULES"
[ "$(basename "$(readlink -f "/sys/bus/pci/devices/$bdf/driver")")" = vfio-pci ] ||
	{ echo "# qemu-check: $bdf is not on vfio-pci"; exit 90; }

ev=/sys/kernel/tracing/events
echo 'hist:keys=reason' > "$ev/kvm/kvm_userspace_exit/trigger" ||
	{ echo "# qemu-check: cannot set a hist trigger on kvm_userspace_exit"; exit 91; }
echo "hist:keys=irq if name == \"vfio-intx($bdf)\"" > "$ev/irq/irq_handler_entry/trigger" ||
	{ echo "# qemu-check: cannot set a hist trigger on irq_handler_entry"; exit 91; }
# counters SUFFIX: the counts so far into eoiSUFFIX, uexSUFFIX, hirqSUFFIX
# (no process substitution: the testbed's chroot has no /dev/fd)
counters() {
	local eoi uex hirq
	eoi=$(sed -n 's/^{ reason: *26 *} hitcount: *\([0-9]*\).*/\1/p' \
		"$ev/kvm/kvm_userspace_exit/hist")
	uex=$(sed -n 's/^ *Hits: *\([0-9]*\).*/\1/p' "$ev/kvm/kvm_userspace_exit/hist")
	hirq=$(sed -n 's/^ *Hits: *\([0-9]*\).*/\1/p' "$ev/irq/irq_handler_entry/hist")
	printf -v "eoi$1" '%s' "${eoi:-0}"
	printf -v "uex$1" '%s' "${uex:-0}"
	printf -v "hirq$1" '%s' "${hirq:-0}"
}

failed=0
eoi0=0 uex0=0 hirq0=0 eoi1=0 uex1=0 hirq1=0
for v in "$@"; do
	q=$kitq dev=(-device "vfio-pci,host=$bdf,rombar=0") smp=1 n=$tn
	reboot=-no-reboot append="pci=nomsi qc.mode=$v"
	case $v in
	kit) n=$qn append=pci=nomsi ;;
	kit-off) n=$qn append=pci=nomsi dev=(-device "vfio-pci,host=$bdf,rombar=0,x-kvm-split-resample=off") ;;
	debian) n=$qn append=pci=nomsi q=/usr/bin/qemu-system-x86_64 ;;
	reboot) reboot= ;;
	msi) append="qc.mode=$v" ;;
	affinity) smp=2 ;;
	reset) dev=(-device "pcie-root-port,id=qcrp,chassis=1"
		    -device "vfio-pci,host=$bdf,rombar=0,bus=qcrp") ;;
	mixed) dev=(-device "vfio-pci,host=$bdf,rombar=0,addr=03.0"
		    -device "vfio-pci,host=$bdf2,rombar=0,addr=07.0,x-kvm-split-resample=off") ;;
	*) echo "# qemu-check: unknown variant $v"; exit 96 ;;
	esac
	l2log=$out/qc-$v-l2.txt
	qlog=$out/qc-$v-qemu.txt
	counters 0
	start=$SECONDS
	# shellcheck disable=SC2086 # reboot: one option or none
	timeout -k 5 300 "$q" -accel kvm -M q35,kernel-irqchip=split \
		-cpu host -smp "$smp" -m 512 -nodefaults -display none $reboot \
		-serial "file:$l2log" -kernel "$l2k" -initrd "$l2i" \
		-append "console=ttyS0 panic=-1 quiet $append qc.n=$n" \
		"${dev[@]}" > "$qlog" 2>&1
	qrc=$?
	secs=$((SECONDS - start))
	counters 1
	l2rc=$(sed -n 's/^QC-L2-RC=\([0-9]*\).*/\1/p' "$l2log" 2>/dev/null | paste -sd,)
	boots=$(grep -c '^QC-L2-BOOT=' "$l2log" 2>/dev/null)
	r=$(sed -n 's/^edu-\(intx\|msi\): raised \([0-9]*\) arrived \([0-9]*\) extra \([0-9]*\) timeouts \([0-9]*\).*/\1 \2 \3 \4 \5/p' \
		"$l2log" 2>/dev/null | awk '{ r += $2; a += $3; e += $4; t += $5; if ($1 == "msi") m += $3 }
		END { printf "raised=%d arrived=%d extra=%d timeouts=%d msi=%d", r, a, e, t, m }')
	cpu1=$(sed -n 's/^QC-L2-CPU1=\([0-9]*\).*/\1/p' "$l2log" 2>/dev/null | tail -n 1)
	warn=$(grep -c 'already has .* resampled irqfds' "$qlog")
	line="qc: $v qemu=$qrc l2=${l2rc:-none} boots=$boots $r cpu1=${cpu1:-0} warn=$warn hirqs=$((hirq1 - hirq0)) eoi=$((eoi1 - eoi0)) uexits=$((uex1 - uex0)) secs=$secs"
	echo "$line" | tee -a "$res"
	case $qrc/${l2rc:-x} in
	0/0 | 0/0,0) ;;
	*)	failed=$((failed + 1))
		tail -n 20 "$l2log" "$qlog" 2>/dev/null | sed 's/^/#   /' ;;
	esac
done
# The triggers stay: removing them would patch kernel text again.
exit $failed
