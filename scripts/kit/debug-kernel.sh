#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the debug testbed kernel once: Debian's linux-source-<line> with
# Debian's config of the flavour, cut by `make localmodconfig` to the
# modules the testbed loads, with lockdep, KASAN, DEBUG_ATOMIC_SLEEP,
# KMEMLEAK and DEBUG_OBJECTS on (scripts/kit/debug-kernel.config).
#
# The result lives outside the git tree, in $KIT_CACHE (default
# /var/cache/kvm-irqbypass) under debug/<krel>/:
#   src/     the built tree, which is also KDIR for the kit's M= build
#   image/   boot/vmlinuz-<krel> and lib/modules/<krel>, as the testbed
#            expects of an extracted Debian image package
# It is rebuilt only when an input changes: the source version, Debian's
# config, the fragment or this script (their hash is in .kit-inputs).
#
# Usage: KIT_DEBUG=1 [KLINE=..] [FLAVOUR=..] debug-kernel.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

export KIT_DEBUG=1
kit_target
kit_need_pkgs "$SRCPKG" "$HDRPKG" make gcc bc bison flex libelf-dev libssl-dev \
	xz-utils kmod cpio
kit_check_versions

frag=$kit_top/scripts/kit/debug-kernel.config
base_config=$KDIR_BASE/.config
[ -f "$base_config" ] || die "$base_config missing ($HDRPKG broken?)"
# PREEMPT_RT is in mainline from 6.12 only; Debian carries 6.1's as a
# featureset patch that linux-source does not include.
[ "$FLAVOUR" = rt ] && [ "$KLINE" = 6.1 ] &&
	die "the debug kernel's rt variant needs PREEMPT_RT in the source: 6.12 only"

inputs=$( { echo "$SRCVER $FLAVOUR $KREL"; cat "$base_config" "$frag" "$0"; } |
	  sha256sum | cut -c1-16)
dir=$DEBUG_DIR
if [ "$(cat "$dir/.kit-inputs" 2>/dev/null)" = "$inputs" ] &&
   [ -f "$IMGROOT/boot/vmlinuz-$KREL" ]; then
	exit 0
fi

start=$SECONDS
step "debug kernel $KREL: inputs changed or first build (in ${dir})"
rm -rf "$IMGROOT" "$dir/.kit-inputs"
# The source is extracted once per version; the tree then builds
# incrementally when only the config changed.
if [ "$(cat "$dir/src/.kit-extracted" 2>/dev/null)" != "$SRCVER" ]; then
	step "debug kernel: extracting the whole $SRCPKG $SRCVER"
	rm -rf "$dir/src"
	mkdir -p "$dir/src"
	tar -xJf "/usr/src/$SRCPKG.tar.xz" -C "$dir/src" --strip-components=1 ||
		die "extracting /usr/src/$SRCPKG.tar.xz failed"
	echo "$SRCVER" > "$dir/src/.kit-extracted"
fi
mkdir -p "$IMGROOT/boot"

cd "$dir/src"
cp "$base_config" .config
# Modules the testbed loads (guest-setup.sh, module_checks.sh, the 9p root),
# in lsmod's format for localmodconfig; names unknown to a line are ignored.
{
	echo "Module Size Used by"
	for m in 9p 9pnet 9pnet_virtio netfs fscache virtio_pci \
		 virtio_pci_legacy_dev virtio_pci_modern_dev kvm kvm_amd \
		 kvm_intel ccp irqbypass vfio vfio_pci vfio_pci_core \
		 vfio_iommu_type1 vfio_virqfd vhost vhost_vdpa vhost_iotlb vdpa; do
		echo "$m 16384 0"
	done
} > "$dir/lsmod.txt"
step "debug kernel: configuring (localmodconfig + scripts/kit/debug-kernel.config)"
{
	yes '' | make LSMOD="$dir/lsmod.txt" localmodconfig
	scripts/kconfig/merge_config.sh -m .config "$frag"
	scripts/config --set-str LOCALVERSION "$DEBUG_LOCALVERSION"
	make olddefconfig
} > "$dir/config.log" 2>&1 || { tail -n 20 "$dir/config.log" >&2; die "configuring failed"; }
# merge_config.sh warns about every value it could not set; the ones the
# issue asks for must have stuck.
for opt in PROVE_LOCKING KASAN DEBUG_ATOMIC_SLEEP DEBUG_KMEMLEAK DEBUG_OBJECTS KVM_AMD VFIO_PCI; do
	grep -q "^CONFIG_$opt=[ym]" .config || die "CONFIG_$opt did not stick (see $dir/config.log)"
done
# The testbed's initramfs copies modules as they are: no compression.
! grep -q '^CONFIG_MODULE_COMPRESS=y' .config ||
	die "CONFIG_MODULE_COMPRESS is still on (see $dir/config.log)"
grep -qx "CONFIG_LOCALVERSION=\"$DEBUG_LOCALVERSION\"" .config ||
	die "CONFIG_LOCALVERSION did not stick (see $dir/config.log)"

step "debug kernel: building bzImage and modules (log: $dir/build.log)"
nice make -j"$(nproc)" bzImage modules > "$dir/build.log" 2>&1 ||
	{ tail -n 30 "$dir/build.log" >&2; die "building the debug kernel failed"; }
make modules_install INSTALL_MOD_PATH="$IMGROOT" INSTALL_MOD_STRIP=1 \
	DEPMOD=/bin/true > "$dir/install.log" 2>&1 ||
	{ tail -n 20 "$dir/install.log" >&2; die "modules_install failed"; }
[ "$(cat include/config/kernel.release)" = "$KREL" ] ||
	die "built $(cat include/config/kernel.release), expected $KREL"
cp arch/x86/boot/bzImage "$IMGROOT/boot/vmlinuz-$KREL"
depmod -b "$IMGROOT" "$KREL"
echo "$inputs" > "$dir/.kit-inputs"
step "debug kernel $KREL built in $((SECONDS - start)) s"
