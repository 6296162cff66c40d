#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make symvers: every symbol we export that the distro kernel also exports
# must carry the distro's CRC, or stock modules built against the distro
# (vfio, vfio_iommu_type1, vhost_vdpa, ...) refuse to load against ours.
# Deliberate changes are listed, with the reason, in
# scripts/kit/symvers-changes.txt ("symbol reason...").  Then the layout of
# the structs stock modules share with ours, from both modules' BTF
# (scripts/kit/abi-guard.sh): the check where CONFIG_MODVERSIONS is off.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kit_target
ours=$B/$KREL/Module.symvers
[ -f "$ours" ] || die "$ours missing: run make first"
allowed=$kit_top/scripts/kit/symvers-changes.txt

# Module.symvers: crc symbol module export-type namespace
awk 'NR == FNR { crc[$2] = $1; next }
     ($2 in crc) { print $2, crc[$2], $1 }' "${KIT_ROOT:-}$KDIR/Module.symvers" "$ours" |
	sort > "$B/symvers-$KREL.txt"
kept=$(wc -l < "$B/symvers-$KREL.txt")
new=$(awk 'NR == FNR { seen[$2] = 1; next } !($2 in seen)' "${KIT_ROOT:-}$KDIR/Module.symvers" "$ours" | wc -l)
bad=0
while read -r sym stock kit; do
	[ "$stock" = "$kit" ] && continue
	if grep -q "^$sym " "$allowed" 2>/dev/null; then
		echo "symvers: $sym CRC changed deliberately ($stock -> $kit)"
	else
		echo "symvers: $sym CRC differs from the distro's: $stock -> $kit"
		bad=$((bad + 1))
	fi
done < "$B/symvers-$KREL.txt"
echo "symvers: $kept exported symbols kept, $bad with a changed CRC, $new new"
grep -q '^CONFIG_MODVERSIONS=y' "${KIT_ROOT:-}$KDIR/.config" ||
	echo "symvers: $KREL has CONFIG_MODVERSIONS off: every CRC is 0 and the loader checks none"
abi=0
"$kit_top/scripts/kit/abi-guard.sh" || abi=1
[ $bad -eq 0 ] && [ $abi -eq 0 ]
