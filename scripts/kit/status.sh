#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make status: per installed kernel, which of the six modules modprobe
# loads, the kit's (dkms or make install, with its version) or stock; for
# the running kernel also what is loaded now; and whether the kernel's
# initramfs carries any of them, and whose.  Reads only; any user.
#   KIT_INSTALL_ROOT=/dir  look at a staging root instead of /
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

root=${KIT_INSTALL_ROOT:-}
mods="irqbypass kvm kvm_amd kvm_intel vfio_pci_core vfio_pci"
running=$(uname -r)

# whose PATH: kit (dkms), kit (make install) or stock, from where it lies.
whose() {
	case "$1" in
	*/updates/dkms/*) echo "kit (dkms)" ;;
	*/updates/kvm-irqbypass/*) echo "kit (make install)" ;;
	*/kernel/*) echo stock ;;
	*) echo "other ($1)" ;;
	esac
}

if command -v dkms > /dev/null && [ -z "$root" ]; then
	st=$(dkms status kvm-irqbypass 2> /dev/null | tr '\n' ';' | sed 's/;$//; s/;/; /g')
	echo "dkms: ${st:-kvm-irqbypass not added (no kvm-irqbypass-dkms package)}"
fi
found=0
for d in "$root"/lib/modules/*/; do
	k=$(basename "$d")
	if [ ! -f "$d/modules.dep" ]; then
		[ -e "$d/build" ] && echo "$k: headers only, no kernel image installed"
		continue
	fi
	found=1
	echo "$k${root:+ (in $root)}$([ "$k" = "$running" ] && echo ", running"):"
	for m in $mods; do
		f=$(modinfo ${root:+-b "$root"} -k "$k" -F filename "$m" 2> /dev/null | head -n 1)
		if [ -z "$f" ]; then
			printf '  %-14s %s\n' "$m" "not found"
			continue
		fi
		v=$(modinfo -F version "$f" 2> /dev/null | head -n 1)
		line=$(printf '  %-14s %-20s %s' "$m" "$(whose "$f")${v:+ $v}" "${f#"$root"}")
		if [ "$k" = "$running" ] && [ -z "$root" ] && [ -d "/sys/module/$m" ]; then
			if [ "$(cat "/sys/module/$m/srcversion" 2> /dev/null)" = \
			     "$(modinfo -F srcversion "$f" 2> /dev/null)" ]; then
				line="$line [loaded: this one]"
			else
				line="$line [loaded: another build$(v=$(cat "/sys/module/$m/version" 2> /dev/null) && echo ", version $v")]"
			fi
		fi
		echo "$line"
	done
	img=$root/boot/initrd.img-$k
	if [ -f "$img" ] && command -v lsinitramfs > /dev/null; then
		in=$(lsinitramfs "$img" 2> /dev/null |
		     grep -E '/(irqbypass|kvm|kvm-amd|kvm-intel|vfio-pci-core|vfio-pci)\.ko(\.[a-z]+)?$' |
		     while read -r p; do echo "$(basename "${p%%.ko*}"):$(whose "/$p" | cut -d' ' -f1)"; done |
		     tr '\n' ' ')
		echo "  initramfs      ${in:-none of the six}"
	fi
done
[ "$found" = 1 ] || echo "kit: no kernel in ${root:-}/lib/modules"
exit 0
