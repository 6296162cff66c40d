#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The kit's way into the testbed: resolve the target (KLINE/FLAVOUR, or
# KREL; KIT_DEBUG=1: the debug kernel), install the testbed's packages,
# extract the kernel image, and run the testbed with its inputs in the
# environment (tools/testbed/lib.sh).
#
#   scripts/kit/testbed.sh [--bochs|--bochs3] [tools/testbed/run.sh options] -- CMD...
#
# --bochs: tools/testbed/run-bochs.sh instead of tools/testbed/run.sh (QEMU).
# --bochs3: run-bochs.sh --bochs3, on the Bochs 3.0 of make bochs (built
# first if missing or stale; VMX with APICv).
# --modules stock-oot: the distro's own KVM and VFIO sources built out of
# tree by the kit's glue with no patch and no file of ours (KIT_STOCK=1,
# built first), installed as run.sh installs the kit's: tells an effect of
# our code from one of building and loading modules out of tree.
# Exit code: the testbed's.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

runner=(run.sh)
pkgs=(qemu-system-x86)
case "${1:-}" in
--bochs)
	runner=(run-bochs.sh)
	pkgs=(bochs bochsbios vgabios isolinux syslinux-common xorriso)
	shift ;;
--bochs3)
	"$kit_top/scripts/kit/bochs.sh" >&2
	runner=(run-bochs.sh --bochs3)
	pkgs=(isolinux syslinux-common xorriso)
	shift ;;
esac
kit_target
kit_need_pkgs "${pkgs[@]}" busybox-static kmod xz-utils cpio
kit_image
TB_IMAGE=$IMGROOT TB_DIR=$B/testbed/$KREL TB_KIT_BUILD=$B/$KREL
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--) break ;;
	--modules)
		if [ "${2:-}" = stock-oot ]; then
			KIT_STOCK=1 "$kit_top/scripts/kit/build.sh" >&2
			TB_KIT_BUILD=$B/$KREL.stock
			args+=(--modules kit)
			shift 2
			continue
		fi ;;
	esac
	args+=("$1")
	shift
done
export TB_IMAGE TB_DIR TB_KIT_BUILD
exec "$kit_top/tools/testbed/${runner[0]}" "${runner[@]:1}" "${args[@]}" "$@"
