#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# host-state.sh FILE: write what make check promises not to change on the
# machine it runs on: the installed packages with their versions and
# states (dpkg), every file under /lib/modules/*/updates with its hash,
# the initramfs images' hashes, the kit's modprobe.d rule, its guard and
# its initramfs hook, and dkms's view of the kit.
#   host-state.sh --compare BEFORE AFTER  write AFTER, then exit 1 and
#                                         print the differences if any
set -euo pipefail

if [ "${1:-}" = --compare ]; then
	"$0" "$3"
	if diff -u "$2" "$3" > "$3.diff"; then
		echo "host-state: packages, /lib/modules/*/updates, initramfs images and the kit's files unchanged ($(wc -l < "$2") lines compared)"
		exit 0
	fi
	echo "host-state: the machine changed during the run:"
	grep -E '^[-+][^-+]' "$3.diff" | head -n 40
	exit 1
fi

out=${1:?usage: host-state.sh FILE | --compare BEFORE AFTER}
{
	echo "# dpkg"
	dpkg-query -W -f '${Package}:${Architecture} ${Version} ${db:Status-Abbrev}\n' | sort
	echo "# /lib/modules/*/updates"
	find /lib/modules/*/updates -xdev \( -type f -o -type l \) -print0 2> /dev/null |
		sort -z | xargs -0 -r sha256sum 2> /dev/null || true
	echo "# initramfs images"
	find /boot -maxdepth 1 -name 'initrd.img-*' -print0 2> /dev/null |
		sort -z | xargs -0 -r sha256sum || true
	echo "# the kit's files"
	for f in /usr/lib/modprobe.d/kvm-irqbypass.conf /usr/lib/kvm-irqbypass/modprobe-guard \
		 /usr/share/initramfs-tools/hooks/kvm-irqbypass-dkms; do
		if [ -e "$f" ]; then sha256sum "$f"; else echo "absent $f"; fi
	done
	echo "# dkms"
	if command -v dkms > /dev/null; then dkms status kvm-irqbypass 2> /dev/null || true; fi
} > "$out"
