#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make install / make uninstall: put our modules in
# /lib/modules/<krel>/updates/kvm-irqbypass/ and run depmod, so that
# `modprobe kvm_amd` (or kvm_intel, vfio_pci) loads ours in place of the
# stock ones; uninstall removes that directory and runs depmod again, which
# restores the stock modules.  KIT_INSTALL_ROOT=/some/dir installs into a
# staging root instead (depmod -b), for packaging and tests.
#
# Both also install or remove the modprobe guard (debian/modprobe-guard,
# its rule and its initramfs hook) unless the dkms package owns them.
#
# Both keep the initramfs consistent with what modprobe loads: when
# /boot/initrd.img-<krel> carries any of the six modules (a passthrough host
# lists vfio-pci in /etc/initramfs-tools/modules), it is rebuilt with
# update-initramfs, otherwise left alone; either way one line says so.
# dkms runs the same step after installing or removing the package's
# modules for a kernel (dkms.conf POST_INSTALL/POST_REMOVE):
#   install.sh dkms-post KREL
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

action=${1:?install|uninstall|dkms-post KREL}
root=${KIT_INSTALL_ROOT:-}

# initramfs_sync KREL: rebuild the kernel's initramfs when it carries any
# of the six modules, so that the set it loads at boot is the set modprobe
# picks later (a stock irqbypass in the initramfs and the kit's kvm in
# updates/ would leave the host without KVM).
initramfs_sync() {
	local k=$1 img=/boot/initrd.img-$1
	[ -z "$root" ] || return 0	# a staging root boots nothing
	if [ ! -f "$img" ]; then
		echo "kit: $k has no initramfs ($img): nothing to update"
		return 0
	fi
	if ! command -v lsinitramfs > /dev/null || ! command -v update-initramfs > /dev/null; then
		echo "kit: initramfs-tools missing: $img left as is (rebuild it with your initramfs tool)"
		return 0
	fi
	# No grep -q on a pipe: with pipefail its early exit reads as a failure.
	if lsinitramfs "$img" 2> /dev/null |
		grep -E '/(irqbypass|kvm|kvm-amd|kvm-intel|vfio-pci-core|vfio-pci)\.ko(\.xz|\.zst|\.gz)?$' > /dev/null; then
		echo "kit: $img carries KVM/VFIO modules: update-initramfs -u -k $k"
		update-initramfs -u -k "$k" > /dev/null ||
			die "update-initramfs -u -k $k failed: the initramfs may load a different set than modprobe"
	else
		echo "kit: $img carries none of the six modules: left as is"
	fi
}

# The package's modprobe guard, its rule and its initramfs hook
# (debian/rules installs the same three): make install puts them in place
# unless the dkms package owns them already; make uninstall removes them
# once no kernel has the kit under updates/kvm-irqbypass.
guard_files=(
	"debian/modprobe-guard:/usr/lib/kvm-irqbypass/modprobe-guard:0755"
	"debian/modprobe.conf:/usr/lib/modprobe.d/kvm-irqbypass.conf:0644"
	"debian/initramfs-hook:/usr/share/initramfs-tools/hooks/kvm-irqbypass-dkms:0755"
)
guard() {
	local e src dst mode
	for e in "${guard_files[@]}"; do
		IFS=: read -r src dst mode <<< "$e"
		if [ -z "$root" ] && dpkg-query -S "$dst" > /dev/null 2>&1; then
			continue	# the package's copy
		fi
		if [ "$1" = install ]; then
			install -D -m "$mode" "$kit_top/$src" "$root$dst"
		else
			rm -f "$root$dst"
		fi
	done
	[ "$1" = install ] || rmdir "$root/usr/lib/kvm-irqbypass" 2> /dev/null || true
}

if [ "$action" = dkms-post ]; then
	k=${2:?dkms-post KREL}
	# dkms runs this before its own depmod: the initramfs needs it now.
	depmod "$k"
	initramfs_sync "$k"
	exit 0
fi

[ -n "$root" ] || [ "$(id -u)" -eq 0 ] ||
	die "make $action must run as root (it writes /lib/modules and runs depmod)"
kit_target
dir=$root/lib/modules/$KREL/updates/kvm-irqbypass
[ -n "$root" ] || [ -d "$KDIR" ] ||
	die "headers for $KREL are not installed ($HDRPKG): nothing to install against"

case $action in
install)
	[ -f "$B/$KREL/arch/x86/kvm/kvm.ko" ] || "$kit_top/scripts/kit/build.sh"
	mkdir -p "$dir"
	for m in virt/lib/irqbypass arch/x86/kvm/kvm arch/x86/kvm/kvm-intel \
		 arch/x86/kvm/kvm-amd drivers/vfio/pci/vfio-pci-core \
		 drivers/vfio/pci/vfio-pci; do
		[ -f "$B/$KREL/$m.ko" ] || die "build/$KREL/$m.ko missing: run make"
		install -m 0644 "$B/$KREL/$m.ko" "$dir/"
	done
	depmod ${root:+-b "$root"} "$KREL"
	guard install
	echo "kit: installed into $dir; modprobe now loads them (rmmod the stock ones first, or reboot)"
	echo "kit: modprobe guard in /usr/lib/modprobe.d/kvm-irqbypass.conf (stock modules if a stock irqbypass is loaded)"
	initramfs_sync "$KREL"
	;;
uninstall)
	rm -rf "$dir"
	rmdir --ignore-fail-on-non-empty "${dir%/*}" 2> /dev/null || true
	[ -d "$root/lib/modules/$KREL" ] && depmod ${root:+-b "$root"} "$KREL"
	echo "kit: removed $dir; modprobe loads the stock modules again"
	if ! compgen -G "$root/lib/modules/*/updates/kvm-irqbypass" > /dev/null; then
		guard uninstall
	fi
	if [ -d "$root/lib/modules/$KREL" ]; then initramfs_sync "$KREL"; fi
	;;
*) die "unknown action $action" ;;
esac
