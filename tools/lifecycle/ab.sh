#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs inside the testbed (a boot with the kit's modules): lifecycle with
# stock and kit modules alternately in the same boot, so that the two sets
# see the same memory layout, the same page cache and the same QEMU
# process.  Boot-to-boot differences (the vm rows moved by 10-15 % between
# boots of the same modules) then cancel out of each rep's kit/stock ratio.
#
#   ab.sh REPS OUTDIR -- LIFECYCLE ARGS...
#
# Rep r runs stock then kit when r is odd, kit then stock when r is even
# (ABBA, so a drift over the boot does not favour either set), each with
# --modules SET --csv-file OUTDIR/ab-r-SET.csv --other-csv-file
# OUTDIR/ab-other-r-SET.csv appended.  Needs the testbed's environment
# (MODROOT, KREL, KIT_KVM; guest-setup.sh exports them).
set -uo pipefail

reps=$1 dir=$2
shift 2
[ "${1:-}" = -- ] && shift
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "ab.sh: REPS: a number >= 1" >&2; exit 2; }
: "${MODROOT:?} ${KREL:?} ${KIT_KVM:?}"

# MODROOT is the kit's tree: stock's files linked in, ours in updates/.
# The stock tree is where those links point.
stock_root=$(readlink -f "$MODROOT/lib/modules/$KREL/modules.builtin")
stock_root=${stock_root%/lib/modules/"$KREL"/modules.builtin}
[ -n "$stock_root" ] || stock_root=/

# The modules that the kit replaces, in unload order.
ours=(vfio_pci vfio_pci_core "$KIT_KVM" kvm irqbypass)

swap_to() {	# swap_to stock|kit
	local root=$MODROOT m d
	[ "$1" = stock ] && root=$stock_root
	# The testbed's holding VM (guest-setup.sh) keeps kvm busy; under
	# -icount the vCPUs run one at a time, so the static keys it guards
	# can flip safely (see guest-setup.sh).
	pkill -f 'KVM_CREATE_VM' 2>/dev/null
	for m in "${ours[@]}"; do
		for _ in $(seq 50); do
			[ -d "/sys/module/$m" ] || break
			modprobe -r "$m" 2>/dev/null && break
			sleep 0.1
		done
		[ -d "/sys/module/$m" ] && { echo "ab.sh: cannot unload $m" >&2; return 1; }
	done
	for m in "$KIT_KVM" vfio_pci; do
		modprobe -d "$root" -S "$KREL" "$m" ||
			{ echo "ab.sh: modprobe $m ($1) failed" >&2; return 1; }
	done
	# driver_override is still vfio-pci: probe the edus again.
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")" = 0x1234 ] && [ "$(cat "$d/device")" = 0x11e8 ] || continue
		[ -e "$d/driver" ] || echo "${d##*/}" > /sys/bus/pci/drivers_probe
	done
	for m in irqbypass kvm "$KIT_KVM" vfio_pci_core vfio_pci; do
		echo "# ab: $1: $m $(modinfo -F filename -b "$root" -k "$KREL" "$m")"
	done
}

rc=0
for r in $(seq "$reps"); do
	order="stock kit"
	[ $((r % 2)) -eq 0 ] && order="kit stock"
	for m in $order; do
		echo "# ab: rep $r of $reps, $m modules"
		swap_to "$m" || exit 2
		"$@" --modules "$m" --csv-file "$dir/ab-$r-$m.csv" \
			--other-csv-file "$dir/ab-other-$r-$m.csv" || rc=$?
		[ "$rc" -eq 0 ] || exit "$rc"
	done
done
exit 0
