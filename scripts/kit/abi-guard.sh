#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# abi-guard.sh: the layout of every struct in scripts/kit/abi-structs, as
# the BTF of the kit's module and of Debian's own module describe it, must
# be the same: member, offset, size and type.  A stock module built against
# Debian's headers (vhost_vdpa, a vfio-pci variant driver) then sees the
# layout it was compiled for.  On 6.x the CRCs say the same (make symvers);
# Debian's 7.x kernels have CONFIG_MODVERSIONS off and every CRC is 0, so
# the module loader no longer refuses a module of another layout: this is
# the check there.  Run by make symvers on every line.
#
#   abi-guard.sh              the kit's modules of the target
#   abi-guard.sh --self-test  builds irqbypass.ko with a member added to
#                             struct irq_bypass_producer: the guard must
#                             fail and name the member
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

kit_target
kit_image
kernel=$IMGROOT/boot/vmlinuz-$KREL
stock_mods=$IMGROOT/lib/modules/$KREL/kernel
layout=$kit_top/scripts/kit/btf-layout.py

modversions=0
grep -q '^CONFIG_MODVERSIONS=y' "${KIT_ROOT:-}$KDIR/.config" && modversions=1

# has_btf KO: whether the module carries BTF.  Debian's 6.1 headers ship no
# vmlinux, so kbuild gives external modules none; CRCs guard that line.
has_btf() {
	readelf -S -W "$1" 2>/dev/null | grep -q ' \.BTF '
}

# compare TREE: 0 when every listed struct matches; names each difference.
compare() {
	local tree=$1 path structs stock kit bad=0 n=0 out
	while read -r path structs; do
		case "$path" in '#'* | '') continue ;; esac
		stock=$(ls "$stock_mods/$path".ko* 2>/dev/null | head -n 1)
		kit=$tree/$path.ko
		[ -n "$stock" ] || die "Debian's $path.ko is missing from $IMGROOT"
		[ -f "$kit" ] || die "$kit missing: run make first"
		if ! has_btf "$kit"; then
			[ "$modversions" = 1 ] ||
				die "our ${path##*/}.ko has no BTF and $KREL has no CRCs: nothing checks its layouts"
			echo "abi: SKIP ${path##*/}.ko: no BTF in external modules for $KREL (CONFIG_MODVERSIONS is on: the CRCs are the check)"
			continue
		fi
		# shellcheck disable=SC2086 # one argument per struct
		if ! out=$(diff <(python3 "$layout" "$kernel" "$stock" $structs) \
				<(python3 "$layout" "$kernel" "$kit" $structs)); then
			echo "abi: ${path##*/}.ko: layout differs from Debian's (member: offset in bits, size, type):"
			grep '^[<>]' <<< "$out" | awk '
				{ k = $2; v = $3 " " $4; for (i = 5; i <= NF; i++) v = v " " $i
				  if ($1 == "<") d[k] = v; else { c[k] = v; if (!(k in d)) order[++n] = k }
				  if ($1 == "<" && !(k in seen)) { order[++n] = k; seen[k] = 1 } }
				# Members on one side first: they are the cause.
				END { for (p = 1; p <= 2; p++) for (i = 1; i <= n && shown < 8; i++) {
					k = order[i]; one = !(k in c) || !(k in d)
					if (k in done || (p == 1) != one) continue; done[k] = 1; shown++
					if (!(k in c)) print "abi:   " k ": Debian " d[k] ", kit has no such member"
					else if (!(k in d)) print "abi:   " k ": kit " c[k] ", Debian has no such member"
					else print "abi:   " k ": Debian " d[k] ", kit " c[k] } }'
			bad=$((bad + 1))
		fi
		# shellcheck disable=SC2086
		n=$((n + $(wc -w <<< $structs)))
	done < "$kit_top/scripts/kit/abi-structs"
	echo "abi: $n structs compared with Debian's $KREL modules (BTF); modules that differ: $bad"
	[ "$bad" -eq 0 ]
}

if [ "${1:-}" != --self-test ]; then
	compare "$B/$KREL"
	exit
fi

# The self-test: irqbypass.ko alone, from the prepared tree, with one
# member more in the producer; the other modules are the kit's build.
t=$B/$KREL.abi-test
[ -d "$B/$KREL/virt/lib" ] || die "$B/$KREL missing: run make first"
rm -rf "$t"
mkdir -p "$t/virt/lib" "$t/arch/x86/kvm" "$t/drivers/vfio/pci"
cp -r "$B/$KREL/include" "$t/include"
cp "$B/$KREL"/virt/lib/*.[ch] "$t/virt/lib/"
grep -v 'tests/' "$B/$KREL/virt/lib/Kbuild" > "$t/virt/lib/Kbuild"
sed -i '/^struct irq_bypass_producer {/a\	int kit_abi_test;' "$t/include/linux/irqbypass.h"
grep -q kit_abi_test "$t/include/linux/irqbypass.h" || die "self-test: no producer to change"
ln -s "$B/$KREL/arch/x86/kvm/kvm.ko" "$t/arch/x86/kvm/kvm.ko"
ln -s "$B/$KREL/drivers/vfio/pci/vfio-pci-core.ko" "$t/drivers/vfio/pci/vfio-pci-core.ko"
kit_in_root make -C "$KDIR" M="$t/virt/lib" KCFLAGS=-Werror \
	NOSTDINC_FLAGS="-nostdinc -I$t/include -I$B/$KREL/include/uapi" modules > "$t/build.log" 2>&1 ||
	{ tail -n 20 "$t/build.log" >&2; die "self-test: building the changed irqbypass.ko failed"; }
if ! has_btf "$t/virt/lib/irqbypass.ko" && [ "$modversions" = 1 ]; then
	echo "abi: self-test SKIP: no BTF in external modules for $KREL (its CRCs are checked)"
	rm -rf "$t"
	exit 0
fi
if out=$(compare "$t"); then
	echo "$out"
	die "self-test: the guard passed a producer with a member added"
fi
echo "$out"
grep -q 'irq_bypass_producer.kit_abi_test' <<< "$out" ||
	die "self-test: the guard failed without naming the added member"
echo "abi: self-test passed: the guard refuses a changed producer and names the member"
rm -rf "$t"
