#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check-qemu: the kit's QEMU (make qemu) as a real VMM on the kit's
# KVM.  Two testbed boots per kernel line and flavour: kit modules and
# stock modules.  In each, Debian's kernel runs as an L2 guest on
# kernel-irqchip=split with the testbed's edu assigned (vfio-pci) and
# pci=nomsi; inside it, uio_pci_generic and tools/qemu-check/edu-intx raise
# QC_N level INTx interrupts one at a time and count them
# (tools/qemu-check/l1-run.sh).  VMM variants:
#   kit      the kit's QEMU
#   kit-off  the kit's QEMU, -device vfio-pci,...,x-kvm-split-resample=off
#   debian   Debian's QEMU (/usr/bin/qemu-system-x86_64)
# and QEMU's own INTx transitions with the kit's QEMU, QC_TN interrupts per
# device and round (tools/qemu-check/l2-init's modes):
#   reboot   the guest reboots once, QC_TN interrupts in each boot
#   msi      QC_TN by MSI (edu_msi.ko), then MSI off and QC_TN by INTx
#   affinity the guest moves the IRQ to its CPU 1 after QC_TN/2 (its
#            IOAPIC pin reprogrammed, QEMU re-routes)
#   reset    a bus reset of the edu after QC_TN/2
#   mixed    the edus at 00:03.0 and 00:07.0 on one pin, the second with
#            x-kvm-split-resample=off: QC_TN each
# kit modules: all; stock modules: kit and debian.
#
# Checks (TAP), per boot and variant: the guest ran to its end (each boot
# of it); every interrupt arrived exactly once in the guest (edu-intx's
# count, uio's event count; edu_msi's); the testbed's vfio INTx handler ran
# exactly once per INTx interrupt; KVM_EXIT_IOAPIC_EOI returns to the VMM:
# fewer than one per 20 interrupts for the kit's QEMU on the kit's modules
# (the EOI is resampled in the kernel and does not exit), at least one per
# interrupt otherwise (QEMU resamples on the EOI exit, as stock); msi: QC_TN
# arrived by MSI; affinity: some, not all, on CPU 1; mixed: QEMU warned
# that the pin's resamplers would mix.  Ends with "N passed, N failed".
#
# Not part of make check: building QEMU takes minutes (Documentation/qemu.rst).
#
# Environment: QC_N=300 (interrupts per guest), QC_TN=40 (per device and
# round of a transition variant), KLINE=6.12 (or 6.1, all),
# CHECKQEMU_FLAVOURS=generic (generic, rt or "generic rt"),
# CHECKQEMU_MODULES="kit stock" (or one of them: one boot, e.g. to repeat
# a boot that failed).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

KIT_T0=${KIT_T0:-$(date +%s)}
export KIT_T0
QC_N=${QC_N:-300} QC_TN=${QC_TN:-40}
for v in QC_N QC_TN; do
	if ! [[ "${!v}" =~ ^[0-9]+$ ]] || [ "${!v}" -lt 20 ] || [ "${!v}" -gt 100000 ]; then
		die "$v=${!v}: a number from 20 to 100000"
	fi
done
start=$SECONDS

"$kit_top/scripts/kit/qemu.sh"
kitq=$B/qemu/qemu-system-x86_64
[ -x "$kitq" ] || die "$kitq missing after make qemu"

kit_need_pkgs qemu-system-x86 busybox-static kmod xz-utils cpio make gcc libc6-dev
report=$B/report/qemu-check
qc=$B/qemu-check
rm -rf "$report"
mkdir -p "$report" "$qc"

step "building edu-intx and qc-cmos (tools/qemu-check)"
make -s -C "$kit_top/tools/qemu-check" OUTPUT="$qc" > "$qc/build.log" 2>&1 ||
	{ tail -n 20 "$qc/build.log" >&2; die "building edu-intx failed"; }

# l2_guest: the L2 guest of KLINE: Debian's generic kernel of the line
# (l2k), uio and uio_pci_generic from its modules, edu_msi built against
# its headers, edu-intx and qc-cmos, in the initramfs l2i.
l2_guest() {
	local l2krel l2kdir em
	# shellcheck disable=SC2031 # kit_target's variables stay in the subshell
	read -r l2krel l2kdir < <(FLAVOUR=generic; unset KREL; kit_target; echo "$KREL $KDIR")
	em=$qc/edu-msi-$l2krel
	mkdir -p "$em"
	cp -p "$kit_top"/tools/qemu-check/edu-msi/{Kbuild,edu_msi.c} "$em/"
	make -C "$l2kdir" M="$em" KCFLAGS=-Werror modules > "$em/build.log" 2>&1 ||
		{ tail -n 20 "$em/build.log" >&2; die "building edu_msi for $l2krel failed"; }
	l2i=$qc/l2-initrd-$l2krel.img
	kit_l2_guest "$l2i" "$kit_top/tools/qemu-check/l2-init" uio uio_pci_generic -- \
		"$qc/edu-intx" "$qc/qc-cmos" "$em/edu_msi.ko"
}
transitions="reboot msi affinity reset mixed"

boot_lines=$(kit_lines)
boot_flavours=${CHECKQEMU_FLAVOURS:-generic}
boot_modsets=${CHECKQEMU_MODULES:-kit stock}
for m in $boot_modsets; do
	case $m in kit | stock) ;; *) die "CHECKQEMU_MODULES=$boot_modsets: kit, stock or both" ;; esac
done
boot_what=check-qemu
boot_logdir=$report
boot_desc="$QC_N edu INTx interrupts into an L2 guest per VMM variant"
boot_opts=(--timeout 2400)
boot_cmd() {
	local variants=(kit debian)
	# shellcheck disable=SC2154 # m: kit_boots' module set
	# shellcheck disable=SC2206 # a word list
	[ "$m" = kit ] && variants=(kit kit-off debian $transitions)
	l2_guest
	boot_argv=(bash "$kit_top/tools/qemu-check/l1-run.sh" "$l2k" "$l2i" "$QC_N" "$QC_TN"
		"$kitq" "${variants[@]}")
}
boot_collect() {
	# shellcheck disable=SC2154 # dir, label: kit_boots'
	mkdir -p "$report/$label-$m"
	cp "$dir"/qc-*.txt "$dir/console.log" "$report/$label-$m/" 2>/dev/null || true
	echo "$label $m $1" >> "$report/boots.txt"
}
kit_boots

# The checks, from each boot's qc-results.txt.
n=0 bad=0
ok() {	# ok COND DESCRIPTION
	n=$((n + 1))
	if eval "$1"; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		bad=$((bad + 1))
	fi
}
echo "TAP version 13"
# shellcheck disable=SC2016,SC2034 # the conditions (and rcs) are evaluated by ok
for l in $boot_lines; do
	for f in $boot_flavours; do
		for m in $boot_modsets; do
			r=$report/$l-$f-$m/qc-results.txt
			vs="kit debian"
			[ "$m" = kit ] && vs="kit kit-off debian $transitions"
			for v in $vs; do
				line=$(grep "^qc: $v " "$r" 2>/dev/null || true)
				what="$l $f $m modules, $v"
				if [ -z "$line" ]; then
					ok false "$what: no result (console: ${r%/*}/console.log)"
					continue
				fi
				echo "# $line"
				qemu=0 l2=x boots=0 raised=0 arrived=0 extra=0 timeouts=0 msi=0 cpu1=0 warn=0
				hirqs=0 eoi=0
				for kv in ${line#qc: "$v" }; do
					case ${kv%%=*} in
					qemu | l2 | boots | raised | arrived | extra | timeouts | msi | cpu1 | warn | hirqs | eoi)
						printf -v "${kv%%=*}" '%s' "${kv#*=}" ;;
					esac
				done
				# What the variant must show: interrupts in all (each
				# boot, device, MSI and INTx), INTx ones (host handler
				# runs), the guest's boots.
				total=$QC_TN intx=$QC_TN nboots=1
				case $v in
				kit | kit-off | debian) total=$QC_N intx=$QC_N ;;
				reboot) total=$((2 * QC_TN)) intx=$total nboots=2 ;;
				msi) total=$((2 * QC_TN)) ;;
				mixed) total=$((2 * QC_TN)) intx=$total ;;
				esac
				rcs=0
				[ "$nboots" = 2 ] && rcs=0,0
				ok '[ "$qemu" = 0 ] && [ "$l2" = "$rcs" ] && [ "$boots" = "$nboots" ]' \
					"$what: the L2 guest ran to its end (qemu $qemu, guest $l2, $boots of $nboots boots)"
				ok '[ "$raised" = "$total" ] && [ "$arrived" = "$total" ] && [ "$extra" = 0 ] && [ "$timeouts" = 0 ]' \
					"$what: $arrived of $total interrupts arrived ($raised raised), each once ($extra extra, $timeouts lost)"
				ok '[ "$hirqs" = "$intx" ]' \
					"$what: the testbed's vfio INTx handler ran $hirqs times for $intx INTx interrupts"
				if [ "$m" = kit ] && [ "$v" != kit-off ] && [ "$v" != debian ]; then
					ok '[ $((eoi * 20)) -lt "$total" ]' \
						"$what: $eoi EOI exits to the VMM for $total interrupts (resampled in the kernel)"
				else
					ok '[ "$eoi" -ge "$total" ]' \
						"$what: $eoi EOI exits to the VMM for $total interrupts (resampled by QEMU)"
				fi
				case $v in
				msi) ok '[ "$msi" = "$QC_TN" ]' \
					"$what: $msi of $QC_TN interrupts arrived by MSI before INTx" ;;
				affinity) ok '[ "$cpu1" -gt 0 ] && [ "$cpu1" -lt "$QC_TN" ]' \
					"$what: $cpu1 of $QC_TN interrupts on the L2 guest's CPU 1 (moved mid-run)" ;;
				mixed) ok '[ "$warn" -ge 1 ]' \
					"$what: QEMU warned $warn times that the pin's resamplers would mix" ;;
				esac
			done
		done
done
done
echo "1..$n"
echo "# check-qemu: $((n - bad)) passed, $bad failed, $((SECONDS - start)) s"
echo "$((n - bad)) passed, $bad failed"
kit_boots_report check-qemu || true
[ $bad -eq 0 ]
