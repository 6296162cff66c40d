#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make install / make uninstall: put our modules in
# /lib/modules/<krel>/updates/kvm-irqbypass/ and run depmod, so that
# `modprobe kvm_amd` (or kvm_intel, vfio_pci) loads ours in place of the
# stock ones; uninstall removes that directory and runs depmod again, which
# restores the stock modules.  KIT_INSTALL_ROOT=/some/dir installs into a
# staging root instead (depmod -b), for packaging and tests.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

action=${1:?install|uninstall}
root=${KIT_INSTALL_ROOT:-}
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
	echo "kit: installed into $dir; modprobe now loads them (rmmod the stock ones first, or reboot)"
	;;
uninstall)
	rm -rf "$dir"
	[ -d "$root/lib/modules/$KREL" ] && depmod ${root:+-b "$root"} "$KREL"
	echo "kit: removed $dir; modprobe loads the stock modules again"
	;;
*) die "unknown action $action" ;;
esac
