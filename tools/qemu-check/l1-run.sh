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
# (hist triggers on kvm:kvm_userspace_exit and irq:irq_handler_entry, set
# once before any guest runs).  One line per variant on stdout and in
# $KIT_OUT/qc-results.txt:
#   qc: VARIANT qemu=RC l2=RC raised=R arrived=A extra=E timeouts=T hirqs=H eoi=X uexits=U secs=S
#
#   l1-run.sh L2_KERNEL L2_INITRD N KIT_QEMU VARIANT...
#   VARIANT: kit (the kit's QEMU), kit-off (the same with the vfio-pci
#            property x-kvm-split-resample=off), debian (Debian's QEMU)
# Exit code: the number of variants whose guest did not run to its end.
set -u
l2k=$1 l2i=$2 n=$3 kitq=$4
shift 4
out=$KIT_OUT
bdf=0000:00:03.0
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
	case $v in
	kit) q=$kitq dev=vfio-pci,host=$bdf,rombar=0 ;;
	kit-off) q=$kitq dev=vfio-pci,host=$bdf,rombar=0,x-kvm-split-resample=off ;;
	debian) q=/usr/bin/qemu-system-x86_64 dev=vfio-pci,host=$bdf,rombar=0 ;;
	*) echo "# qemu-check: unknown variant $v"; exit 96 ;;
	esac
	l2log=$out/qc-$v-l2.txt
	counters 0
	start=$SECONDS
	timeout -k 5 600 "$q" -accel kvm -M q35,kernel-irqchip=split \
		-cpu host -smp 1 -m 512 -nodefaults -display none -no-reboot \
		-serial "file:$l2log" -kernel "$l2k" -initrd "$l2i" \
		-append "console=ttyS0 panic=-1 quiet pci=nomsi qc.n=$n" \
		-device "$dev" > "$out/qc-$v-qemu.txt" 2>&1
	qrc=$?
	secs=$((SECONDS - start))
	counters 1
	l2rc=$(sed -n 's/^QC-L2-RC=\([0-9]*\).*/\1/p' "$l2log" 2>/dev/null | tail -n 1)
	r=$(sed -n 's/^edu-intx: raised \([0-9]*\) arrived \([0-9]*\) extra \([0-9]*\) timeouts \([0-9]*\).*/raised=\1 arrived=\2 extra=\3 timeouts=\4/p' \
		"$l2log" 2>/dev/null | tail -n 1)
	line="qc: $v qemu=$qrc l2=${l2rc:-none} ${r:-raised=0 arrived=0 extra=0 timeouts=0} hirqs=$((hirq1 - hirq0)) eoi=$((eoi1 - eoi0)) uexits=$((uex1 - uex0)) secs=$secs"
	echo "$line" | tee -a "$res"
	if [ "$qrc" -ne 0 ] || [ "${l2rc:-x}" != 0 ]; then
		failed=$((failed + 1))
		tail -n 20 "$l2log" "$out/qc-$v-qemu.txt" 2>/dev/null | sed 's/^/#   /'
	fi
done
# The triggers stay: removing them would patch kernel text again.
exit $failed
