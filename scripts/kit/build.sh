#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make: build our six modules (and test modules) for one target.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kit_target
kit_need_pkgs make gcc rsync patch xz-utils dwarves kmod
kit_need_target_pkgs "$SRCPKG" "$HDRPKG"
kit_check_versions
# KIT_DEBUG=1: build against the debug kernel, built first if needed.
[ "${KIT_DEBUG:-0}" = 1 ] && "$kit_top/scripts/kit/debug-kernel.sh"
start=$SECONDS
tree=$B/$KREL
[ "${KIT_STOCK:-0}" = 1 ] && tree=$B/$KREL.stock
# One build of a tree at a time (make check, make and the testbed may race).
exec 9> "$tree.lock"
flock 9
KIT_TREE_DIR=$tree "$kit_top/scripts/kit/prepare.sh"
step "building in ${tree#"$kit_top"/} against ${KDIR#"$kit_top"/}"
kit_make "$tree" modules
step "built $(find "$tree" -name '*.ko' | wc -l) modules in $((SECONDS - start)) s"
