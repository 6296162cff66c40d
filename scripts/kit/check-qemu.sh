#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check-qemu: the kit's QEMU (make qemu) as a real VMM on the kit's
# KVM.  Two testbed boots of the default kernel line (generic): kit modules
# and stock modules.  In each, Debian's kernel runs as an L2 guest on
# kernel-irqchip=split with the testbed's edu assigned (vfio-pci) and
# pci=nomsi; inside it, uio_pci_generic and tools/qemu-check/edu-intx raise
# QC_N level INTx interrupts one at a time and count them
# (tools/qemu-check/l1-run.sh).  VMM variants:
#   kit      the kit's QEMU
#   kit-off  the kit's QEMU, -device vfio-pci,...,x-kvm-split-resample=off
#   debian   Debian's QEMU (/usr/bin/qemu-system-x86_64)
# kit modules: all three; stock modules: kit and debian.
#
# Checks (TAP), per boot and variant: the guest ran to its end; every
# interrupt arrived exactly once in the guest (edu-intx's count, uio's
# event count); the testbed's vfio INTx handler ran exactly once per
# interrupt; KVM_EXIT_IOAPIC_EOI returns to the VMM: fewer than one per 20
# interrupts for the kit's QEMU on the kit's modules (the EOI is resampled
# in the kernel and does not exit), at least one per interrupt otherwise
# (QEMU resamples on the EOI exit, as stock).  Ends with "N passed, N failed".
#
# Not part of make check: building QEMU takes minutes (Documentation/qemu.rst).
#
# Environment: QC_N=300 (interrupts per guest), KLINE=6.12.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

KIT_T0=${KIT_T0:-$(date +%s)}
export KIT_T0
QC_N=${QC_N:-300}
if ! [[ "$QC_N" =~ ^[0-9]+$ ]] || [ "$QC_N" -lt 20 ] || [ "$QC_N" -gt 100000 ]; then
	die "QC_N=$QC_N: a number from 20 to 100000"
fi
start=$SECONDS

"$kit_top/scripts/kit/qemu.sh"
kitq=$B/qemu/qemu-system-x86_64
[ -x "$kitq" ] || die "$kitq missing after make qemu"

kit_need_pkgs qemu-system-x86 busybox-static kmod xz-utils cpio make gcc libc6-dev
report=$B/report/qemu-check
qc=$B/qemu-check
rm -rf "$report"
mkdir -p "$report" "$qc"

step "building edu-intx (tools/qemu-check)"
make -s -C "$kit_top/tools/qemu-check" OUTPUT="$qc" > "$qc/build.log" 2>&1 ||
	{ tail -n 20 "$qc/build.log" >&2; die "building edu-intx failed"; }

# The L2 guest: Debian's generic kernel of the line, uio and
# uio_pci_generic from its modules, edu-intx.
l2i=$qc/l2-initrd.img
kit_l2_guest "$l2i" "$kit_top/tools/qemu-check/l2-init" uio uio_pci_generic -- "$qc/edu-intx"

boot_lines=$(kit_lines | cut -d' ' -f1)
boot_flavours=generic
boot_modsets="kit stock"
boot_what=check-qemu
boot_logdir=$report
boot_desc="$QC_N edu INTx interrupts into an L2 guest per VMM variant"
boot_opts=(--timeout 2400)
boot_cmd() {
	local variants=(kit debian)
	# shellcheck disable=SC2154 # m: kit_boots' module set
	[ "$m" = kit ] && variants=(kit kit-off debian)
	boot_argv=(bash "$kit_top/tools/qemu-check/l1-run.sh" "$l2k" "$l2i" "$QC_N" "$kitq"
		"${variants[@]}")
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
# shellcheck disable=SC2016 # the conditions are evaluated by ok
for l in $boot_lines; do
	for m in $boot_modsets; do
		f=$report/$l-generic-$m/qc-results.txt
		vs="kit debian"
		[ "$m" = kit ] && vs="kit kit-off debian"
		for v in $vs; do
			line=$(grep "^qc: $v " "$f" 2>/dev/null || true)
			what="$l $m modules, $v QEMU"
			if [ -z "$line" ]; then
				ok false "$what: no result (console: ${f%/*}/console.log)"
				continue
			fi
			echo "# $line"
			qemu=0 l2=x raised=0 arrived=0 extra=0 timeouts=0 hirqs=0 eoi=0
			for kv in ${line#qc: "$v" }; do
				case ${kv%%=*} in
				qemu | l2 | raised | arrived | extra | timeouts | hirqs | eoi)
					printf -v "${kv%%=*}" '%s' "${kv#*=}" ;;
				esac
			done
			ok '[ "$qemu" = 0 ] && [ "$l2" = 0 ]' \
				"$what: the L2 guest ran to its end (qemu $qemu, guest $l2)"
			ok '[ "$raised" = "$QC_N" ] && [ "$arrived" = "$QC_N" ] && [ "$extra" = 0 ] && [ "$timeouts" = 0 ]' \
				"$what: $arrived of $raised interrupts arrived, each once ($extra extra, $timeouts lost)"
			ok '[ "$hirqs" = "$QC_N" ]' \
				"$what: the testbed's vfio INTx handler ran $hirqs times for $QC_N interrupts"
			if [ "$m" = kit ] && [ "$v" = kit ]; then
				ok '[ $((eoi * 20)) -lt "$QC_N" ]' \
					"$what: $eoi EOI exits to the VMM for $QC_N interrupts (resampled in the kernel)"
			else
				ok '[ "$eoi" -ge "$QC_N" ]' \
					"$what: $eoi EOI exits to the VMM for $QC_N interrupts (resampled by QEMU)"
			fi
		done
	done
done
echo "1..$n"
echo "# check-qemu: $((n - bad)) passed, $bad failed, $((SECONDS - start)) s"
echo "$((n - bad)) passed, $bad failed"
[ ${#boots_failed[@]} -eq 0 ] || echo "kit: check-qemu: boots failed: ${boots_failed[*]}" >&2
[ $bad -eq 0 ]
