#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make list: what apt offers for each target, and what is installed/built.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

printf '%-13s %-22s %-40s %-9s %s\n' TARGET SOURCE HEADERS INSTALLED BUILT
for t in 6.12:generic 6.12:rt 6.1:generic 6.1:rt; do
	(
		KLINE=${t%:*} FLAVOUR=${t#*:}
		unset KREL
		kit_target > /dev/null 2>&1 || { printf '%-13s (not offered by apt)\n' "$t"; exit 0; }
		inst=no
		[ -d "$KDIR" ] && inst=yes
		built=no
		[ -f "$B/$KREL/arch/x86/kvm/kvm.ko" ] && built=yes
		printf '%-13s %-22s %-40s %-9s %s\n' "$KLINE $FLAVOUR" "$SRCVER" "$HDRPKG" "$inst" "$built"
	)
done
echo
echo "Installed kernels' headers (make KREL=<release> builds for one of them):"
ls -d /lib/modules/*/build 2>/dev/null | sed 's#/lib/modules/##; s#/build##; s/^/  /'
