#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Lay out the M= build tree for one target:
#   1. extract the needed subtrees of Debian's linux-source once per source
#      version into build/src/ (the xz must be decompressed whole: 10-20 s);
#   2. assemble a stage: pristine files + our files + our hook patches;
#   3. copy into build/<krel>/ only the files whose content changed, so an
#      incremental build recompiles only what an edit touched.
#
# Usage: prepare.sh   (target variables in the environment, see target.sh)
set -euo pipefail

: "${KREL:?}" "${SRCPKG:?}" "${SRCVER:?}" "${KLINE:?}"
. "$(dirname "$0")/lib.sh"
top=$kit_top

# What we take from the distro source.  Headers are listed one by one: only
# those we overlay or patch; everything else comes from the headers package.
extract_paths="virt arch/x86/kvm drivers/vfio
include/linux/irqbypass.h include/linux/kvm_host.h include/linux/kvm_types.h
include/linux/kvm_irqfd.h include/uapi/linux/kvm.h include/linux/vfio.h
include/linux/vfio_pci_core.h include/uapi/linux/vfio.h arch/x86/include/asm/kvm_host.h
scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch"

pristine=$B/src/$SRCPKG-$SRCVER
kit_extract_source "$pristine" "$extract_paths"

tree=${KIT_TREE_DIR:-$B/$KREL}
stage=$tree.stage
rm -rf "$stage"
cp -a "$pristine" "$stage"
rm -f "$stage/.kit-extracted"

# Our files.  Kbuild files in a directory take precedence over the distro's
# Makefile there, so glue needs no change to stock Makefiles.
# KIT_TRACKED_ONLY=1 builds exactly what git tracks (as CI sees it).
# KIT_STOCK=1 lays out the distro's code with the build glue alone and no
# patches (build/<krel>.stock/: the reference for sparse and symvers).
kit_files() {
	if [ "${KIT_STOCK:-0}" = 1 ]; then
		(cd "$top" && find Kbuild arch drivers -name Kbuild)
	elif [ "${KIT_TRACKED_ONLY:-0}" = 1 ]; then
		git -C "$top" ls-files -- Kbuild virt arch drivers include backport-include
	else
		# Only the directories that exist: find fails on a missing one,
		# which pipefail would turn into a silent stop of the build.
		# shellcheck disable=SC2046 # word splitting wanted
		(cd "$top" && find $(ls -d Kbuild virt arch drivers include backport-include 2>/dev/null) \
			-type f \! -name '*.o' \! -name '*.ko' \! -name '.*')
	fi
}
kit_files |
	while read -r f; do
		mkdir -p "$stage/$(dirname "$f")"
		cp "$top/$f" "$stage/$f"
	done

# Our hook patches, in series order.  A patch that does not apply stops the
# build and names itself.
# A line without a hook series yet (7.3) gets the kit's irqbypass manager
# and Debian's KVM and VFIO code, marked so that the glue leaves the kit's
# KVM and VFIO objects out.
if [ "${KIT_STOCK:-0}" != 1 ] && [ ! -f "$top/patches/$KLINE/series" ]; then
	step "no patches/$KLINE yet: the kit's irqbypass, Debian's KVM and VFIO"
	touch "$stage/.kit-manager-only"
elif [ "${KIT_STOCK:-0}" != 1 ]; then
	kit_apply_series "$top/patches/$KLINE" "$stage"
else
	touch "$stage/.kit-stock"	# the glue leaves our objects out
fi

# Copy changed content only; keep build products.
mkdir -p "$tree"
rsync -rlc --delete \
	--filter='P *.o' --filter='P *.ko' --filter='P .*.cmd' --filter='P *.mod' \
	--filter='P *.mod.c' --filter='P *.order' --filter='P Module.symvers' \
	--filter='P *.s' --filter='P *.a' --filter='P kvm-asm-offsets.h' \
	--filter='P .tmp*' --filter='P *.dwo' --filter='P .*.d' --filter='P *.ko.*' \
	--filter='P .kit-*' \
	"$stage/" "$tree/"
# The filter keeps .kit-* markers: drop the one that no longer holds.
[ -f "$stage/.kit-manager-only" ] || rm -f "$tree/.kit-manager-only"
rm -rf "$stage"
