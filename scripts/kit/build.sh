#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make: build our six modules (and test modules) for one target.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kit_target
kit_need_pkgs "$SRCPKG" "$HDRPKG" make gcc rsync patch xz-utils dwarves kmod
kit_check_versions
start=$SECONDS
"$kit_top/scripts/kit/prepare.sh"
tree=$B/$KREL
step "building in build/$KREL against $HDRPKG"
# Overlaid headers must win over the headers package: NOSTDINC_FLAGS is the
# only flag variable placed before LINUXINCLUDE (the kernel sets it to
# -nostdinc, which we keep).
make -C "$KDIR" M="$tree" KIT_TREE="$tree" KCFLAGS=-Werror \
	NOSTDINC_FLAGS="-nostdinc -I$tree/include -I$tree/include/uapi" \
	-j"$(nproc)" ${KIT_MAKEFLAGS:-} modules
step "built $(find "$tree" -name '*.ko' | wc -l) modules in $((SECONDS - start)) s"
