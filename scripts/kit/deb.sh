#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make deb: build build/deb/kvm-irqbypass-dkms_<version>_all.deb with
# Debian's tooling (dpkg-buildpackage, debhelper, dh_dkms) from a copy of
# the files the package carries, then run lintian on it (when installed;
# the tags we keep are explained in debian/kvm-irqbypass-dkms.lintian-overrides
# and Documentation/kit.rst).  Prints the path of the .deb last.
#   deb.sh --list             the files the package must carry
#   deb.sh --check            make check's deb step: build it, and dpkg-deb -c
#                             lists exactly --list's files
#   deb.sh --check-initramfs  make check's initramfs step: after make install,
#                             Debian's mkinitramfs with vfio-pci in its module
#                             list packs the kit's irqbypass (host kernel
#                             KREL's /lib/modules, in scripts/kit/sandbox.sh)
#   deb.sh --check-install    make check-deb, in scripts/kit/sandbox.sh: apt
#                             install the .deb, dkms shows KREL built and installed and
#                             modprobe resolves the six modules to dkms's
#                             copies, and a testbed boot on this machine's
#                             modules (--modules host) loads them and runs
#                             two selftests; apt remove restores stock, and
#                             a second boot loads stock
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ver=$(sed -n 's/^#define KVM_IRQBYPASS_VERSION "\(.*\)"$/\1/p' \
	"$kit_top/include/linux/kvm_irqbypass_version.h")
[ -n "$ver" ] || die "no KVM_IRQBYPASS_VERSION in include/linux/kvm_irqbypass_version.h"
src=usr/src/kvm-irqbypass-$ver

if [ "${1:-}" = --list ]; then
	# What dkms needs to build and install: the glue, our files, the
	# patches, the build scripts, dkms.conf, the version-check override.
	for f in Makefile Kbuild dkms.conf scripts/kit/build.sh scripts/kit/lib.sh \
		 scripts/kit/prepare.sh scripts/kit/target.sh scripts/kit/install.sh; do
		echo "$src/$f"
	done
	# (Not the Bochs patches of the bochs3 testbed, the QEMU patches of
	# make qemu nor the guest patches of make guest: nothing dkms builds.)
	(cd "$kit_top" && git ls-files -- virt arch drivers include backport-include patches \
		':!patches/bochs-*' ':!patches/qemu-*' ':!patches/guest-*') |
		sed "s|^|$src/|"
	echo usr/share/dkms/modules_to_force_install/kvm-irqbypass
	echo usr/bin/kvm-irqbypass-status
	echo usr/lib/kvm-irqbypass/modprobe-guard
	echo usr/lib/modprobe.d/kvm-irqbypass.conf
	echo usr/share/initramfs-tools/hooks/kvm-irqbypass-dkms
	exit 0
fi

build_deb() {
	local dver cver work
	kit_need_pkgs dpkg-dev debhelper dh-dkms dkms
	# One version everywhere: the header (modinfo), dkms.conf, debian/changelog.
	dver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$kit_top/dkms.conf")
	cver=$(dpkg-parsechangelog -l "$kit_top/debian/changelog" -S Version)
	[ "$dver" = "$ver" ] || die "dkms.conf PACKAGE_VERSION $dver, kvm_irqbypass_version.h $ver: make them agree"
	[ "${cver%%-*}" = "$ver" ] || die "debian/changelog version $cver, kvm_irqbypass_version.h $ver: make them agree"

	out=$B/deb
	work=$out/src/kvm-irqbypass-$ver
	step "packaging kvm-irqbypass-dkms $cver"
	rm -rf "$out"
	mkdir -p "$work/scripts"
	(cd "$kit_top" && cp -r --parents Makefile Kbuild dkms.conf debian virt arch drivers \
		include backport-include patches scripts/kit "$work/")
	rm -rf "$work"/patches/bochs-* "$work"/patches/qemu-* "$work"/patches/guest-*
	# Build products of an in-tree build never go into the package.
	find "$work" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod' \
		-o -name '*.mod.c' \) -delete
	(cd "$work" && dpkg-buildpackage -b -us -uc --no-check-builddeps > "$out/build.log" 2>&1) ||
		{ tail -n 25 "$out/build.log" >&2; die "dpkg-buildpackage failed (log: ${out#"$kit_top"/}/build.log)"; }
	mv "$out/src/"*.deb "$out/"
	mv "$out/src/"*.buildinfo "$out/src/"*.changes "$out/" 2> /dev/null || true
	deb=$out/kvm-irqbypass-dkms_${cver}_all.deb
	[ -f "$deb" ] || die "dpkg-buildpackage made no ${deb##*/}"
	if command -v lintian > /dev/null; then
		step "lintian ${deb##*/}"
		lintian --info "$deb" > "$out/lintian.log" 2>&1 || true
		grep -E '^[EW]: ' "$out/lintian.log" || echo "kit: lintian: no error or warning tags (log: ${out#"$kit_top"/}/lintian.log)"
	fi
	rm -rf "$out/src"
}

mods="irqbypass kvm kvm_amd kvm_intel vfio_pci_core vfio_pci"
# resolved KREL DIR: each of the six resolves, for modprobe, to a file
# under /lib/modules/KREL/DIR/ (updates/dkms, updates/kvm-irqbypass, kernel).
resolved() {
	local m f bad=0
	for m in $mods; do
		f=$(modinfo -k "$1" -F filename "$m" 2> /dev/null | head -n 1)
		case "$f" in
		/lib/modules/"$1"/"$2"/*) echo "  $m: $f" ;;
		*) echo "  $m: $f, expected under /lib/modules/$1/$2/" >&2; bad=1 ;;
		esac
	done
	return $bad
}

case "${1:-}" in
"")
	build_deb
	echo "$deb"
	;;
--check)
	build_deb
	echo "$deb"
	want=$("$0" --list | sort)
	have=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub("^[.]/", "", $6); print $6 }' |
	       grep -v '^usr/share/doc/' | sort)
	if [ "$want" != "$have" ]; then
		diff <(echo "$want") <(echo "$have") | sed 's/^</missing:/; s/^>/unexpected:/' | grep -E '^(missing|unexpected):'
		die "dpkg-deb -c ${deb##*/} does not list the expected files"
	fi
	echo "deb: ${deb##*/} carries the expected $(echo "$want" | wc -l) files"
	! grep -qE '^[EW]: ' "$B/deb/lintian.log" 2> /dev/null ||
		die "lintian reports errors or warnings (${B#"$kit_top"/}/deb/lintian.log)"
	dpkg-deb -f "$deb" Depends | grep -q 'linux-source-6.12 | linux-source-6.1' ||
		die "${deb##*/} does not depend on the linux-source of a line"
	;;
--check-initramfs)
	[ "${KIT_SANDBOX:-0}" = 1 ] || exec "$kit_top/scripts/kit/sandbox.sh" "$0" "$@"
	command -v mkinitramfs > /dev/null || die "mkinitramfs missing (initramfs-tools)"
	kit_target
	[ -d "/lib/modules/$KREL/kernel" ] ||
		{ echo "deb: SKIP: no kernel image $KREL on this machine (apt-get install $IMGPKG)"; exit 0; }
	# The package's own build of the kit, if the machine has it, is set
	# aside in the sandbox, so that make install's copies are the kit.
	if [ -d "/lib/modules/$KREL/updates/dkms" ]; then
		rm -rf "/lib/modules/$KREL/updates/dkms"
		depmod "$KREL"
	fi
	tmp=$(mktemp -d)
	# make install and update-initramfs write only the sandbox's overlays.
	trap 'rm -rf "$tmp"' EXIT
	"$kit_top/scripts/kit/install.sh" install
	# A passthrough host's initramfs: vfio-pci listed, only listed modules,
	# and no busybox (klibc's utilities only: the harder case, which the
	# hook must cover, whatever this machine has installed).
	cp -r /etc/initramfs-tools "$tmp/conf"
	sed -i 's/^MODULES=.*/MODULES=list/; s/^BUSYBOX=.*/BUSYBOX=n/' "$tmp/conf/initramfs.conf"
	echo vfio-pci >> "$tmp/conf/modules"
	mkinitramfs -d "$tmp/conf" -o "$tmp/initrd.img" "$KREL"
	list=$(lsinitramfs "$tmp/initrd.img")
	grep -E '/(irqbypass|vfio-pci|vfio-pci-core|kvm)\.ko' <<< "$list" | sed 's/^/  /'
	grep -qF "lib/modules/$KREL/updates/kvm-irqbypass/irqbypass.ko" <<< "$list" ||
		die "the initramfs does not carry the kit's irqbypass"
	! grep -qE '/kernel/virt/lib/irqbypass\.ko' <<< "$list" ||
		die "the initramfs carries the stock irqbypass"
	echo "deb: mkinitramfs $KREL with vfio-pci listed packs the kit's irqbypass, not the stock one"
	# The kmod hook copies the modprobe rule into every initramfs: its
	# guard must be there and run, or vfio-pci would not load at boot.
	grep -qx 'usr/lib/modprobe.d/kvm-irqbypass.conf' <<< "$list" ||
		die "the initramfs does not carry the modprobe rule (make install installs it)"
	grep -qx 'usr/lib/kvm-irqbypass/modprobe-guard' <<< "$list" ||
		die "the initramfs carries the modprobe rule but not its guard: modprobe vfio_pci would fail at boot"
	unmkinitramfs "$tmp/initrd.img" "$tmp/x"
	x=$tmp/x
	[ -d "$x/main" ] && x=$x/main
	# Every command the guard runs, resolved in the initramfs itself; its
	# modinfo (kmod's, busybox's has no -k) finds the kit's version.
	# shellcheck disable=SC2016 # expanded by the initramfs's shell
	# (The initramfs has no /dev: nothing is redirected in there.)
	cmds=$(chroot "$x" /bin/sh -c 'for c in modprobe modinfo insmod find head tr cat uname; do
		command -v $c || { echo "initramfs: no $c"; exit 1; }; done') ||
		{ echo "$cmds" | tail -n 1; die "the initramfs lacks a command the guard needs"; }
	# And they run there (their libraries came along): the guard's stock
	# lookup (load_stock), on a stock module the initramfs carries.
	# shellcheck disable=SC2016 # expanded by the initramfs's shell
	sk=$(chroot "$x" /bin/sh -c 'find -H /lib/modules/'"$KREL"'/kernel/ -name "vfio.ko*" \
		-o -name "$(echo vfio | tr _ -).ko*" | head -n 1') ||
		die "the guard's find | head | tr failed in the initramfs"
	case "$sk" in
	*/kernel/drivers/vfio/vfio.ko*) ;;
	*) die "the guard's lookup in the initramfs found '$sk', not the stock vfio" ;;
	esac
	iver=$(chroot "$x" /sbin/modinfo -k "$KREL" -F version irqbypass) ||
		die "modinfo in the initramfs failed"
	[ "$iver" = "$ver" ] || die "modinfo in the initramfs: irqbypass version '$iver', expected $ver"
	# Every module's dependencies, by the initramfs's own modules.dep.
	md=$(find "$x" -path "*/lib/modules/$KREL/modules.dep" | head -n 1)
	[ -n "$md" ] || die "the initramfs has no modules.dep for $KREL"
	miss=$(awk -F: -v d="${md%/modules.dep}" '{ n = split($2, a, " ")
		for (i = 1; i <= n; i++) if (system("test -e " d "/" a[i]) != 0) print $1 " needs " a[i] }' "$md")
	[ -z "$miss" ] || { echo "$miss" | sed 's/^/  /'; die "the initramfs lacks dependencies of its modules"; }
	grep -qF "updates/kvm-irqbypass/vfio-pci-core.ko" <<< "$(cd "$x" && find . -name '*.ko')" ||
		die "the initramfs does not carry the kit's vfio-pci-core"
	echo "deb: the initramfs carries the modprobe guard, vfio-pci's dependencies and irqbypass $iver (its own modinfo)"
	;;
--check-install)
	[ "$(id -u)" -eq 0 ] || die "make check-deb installs a package in a sandbox: run as root"
	[ "${KIT_SANDBOX:-0}" = 1 ] || exec "$kit_top/scripts/kit/sandbox.sh" "$0" "$@"
	kit_target
	[ -d "/lib/modules/$KREL/kernel" ] || die "no kernel image $KREL on this machine (apt-get install $IMGPKG)"
	build_deb
	# A machine with the package installed: removed in the sandbox first,
	# so that the install below starts from stock as on a new host.
	if dpkg-query -W -f='${db:Status-Status}' kvm-irqbypass-dkms 2> /dev/null | grep -qx installed; then
		step "sandbox: apt-get remove the machine's kvm-irqbypass-dkms first"
		DEBIAN_FRONTEND=noninteractive apt-get remove -y -q kvm-irqbypass-dkms > "$B/deb/preremove.log" 2>&1 ||
			{ tail -n 30 "$B/deb/preremove.log" >&2; die "apt-get remove in the sandbox failed"; }
	fi
	step "apt-get install ./${deb##*/} (dkms builds for each installed kernel with headers)"
	start=$SECONDS
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$deb" > "$B/deb/install.log" 2>&1 ||
		{ tail -n 30 "$B/deb/install.log" >&2; die "apt-get install failed (log: ${B#"$kit_top"/}/deb/install.log)"; }
	grep -E '^(kvm-irqbypass|kit):|BUILD_EXCLUSIVE|Building for|initramfs' "$B/deb/install.log" | sed 's/^/  /'
	step "installed in $((SECONDS - start)) s; dkms status:"
	dkms status kvm-irqbypass 2> /dev/null | sed 's/^/  /'
	rc=0
	dkms status -m kvm-irqbypass -k "$KREL" 2> /dev/null | grep ': installed' > /dev/null ||
		{ echo "deb: dkms does not show kvm-irqbypass installed for $KREL" >&2; rc=1; }
	resolved "$KREL" updates/dkms || rc=1
	for m in irqbypass kvm vfio_pci_core; do
		[ "$(modinfo -k "$KREL" -F version "$m")" = "$ver" ] ||
			{ echo "deb: $m has no version $ver" >&2; rc=1; }
	done
	"$kit_top/scripts/kit/status.sh" | sed 's/^/  /'
	# A new kernel: take KREL back to "no build", as a kernel installed
	# after the package would be, then run the hook every Debian kernel
	# package's postinst runs (/etc/kernel/postinst.d/dkms, dkms
	# autoinstall): it must build and install the kit for KREL again.
	step "a new kernel: dkms unbuild for $KREL, then /etc/kernel/postinst.d/dkms $KREL"
	dkms unbuild "kvm-irqbypass/$ver" -k "$KREL" > "$B/deb/autoinstall.log" 2>&1 ||
		{ tail -n 20 "$B/deb/autoinstall.log" >&2; rc=1; }
	resolved "$KREL" kernel > /dev/null ||
		{ echo "deb: after dkms unbuild -k $KREL, modprobe does not resolve to stock" >&2; rc=1; }
	start=$SECONDS
	/etc/kernel/postinst.d/dkms "$KREL" >> "$B/deb/autoinstall.log" 2>&1 ||
		{ tail -n 20 "$B/deb/autoinstall.log" >&2; rc=1; }
	dkms status -m kvm-irqbypass -k "$KREL" 2> /dev/null | grep ': installed' > /dev/null ||
		{ echo "deb: autoinstall did not install kvm-irqbypass for $KREL (${B#"$kit_top"/}/deb/autoinstall.log)" >&2; rc=1; }
	if resolved "$KREL" updates/dkms > /dev/null; then
		echo "deb: autoinstall rebuilt and installed the kit for $KREL in $((SECONDS - start)) s"
	else
		rc=1
	fi
	# The testbed boots this machine's kernel image on this machine's root
	# (--modules host): what modprobe loads is what dkms installed.
	make -s -C "$kit_top/tools/testing/selftests/kvm-irqbypass" OUTPUT="$B/selftests" \
		> "$B/deb/selftests-build.log" 2>&1 ||
		{ tail -n 20 "$B/deb/selftests-build.log" >&2; die "building the selftests failed"; }
	step "testbed on this machine's modules, as dkms installed them"
	"$kit_top/scripts/kit/testbed.sh" --modules host --name deb-installed -- \
		env KIT_EXPECT=kit bash -c "bash $kit_top/tools/testbed/module_checks.sh &&
			$B/selftests/run_tests.sh irqfd_msi vfio_msi" ||
		{ echo "deb: the testbed on the dkms-installed modules failed" >&2; rc=1; }
	step "apt-get remove kvm-irqbypass-dkms"
	DEBIAN_FRONTEND=noninteractive apt-get remove -y -q kvm-irqbypass-dkms > "$B/deb/remove.log" 2>&1 ||
		{ tail -n 30 "$B/deb/remove.log" >&2; die "apt-get remove failed"; }
	resolved "$KREL" kernel || rc=1
	[ -z "$(dkms status kvm-irqbypass 2> /dev/null)" ] || { echo "deb: dkms still lists kvm-irqbypass" >&2; rc=1; }
	step "testbed on this machine's modules after the removal"
	"$kit_top/scripts/kit/testbed.sh" --modules host --name deb-removed -- \
		env KIT_EXPECT=stock bash "$kit_top/tools/testbed/module_checks.sh" ||
		{ echo "deb: the testbed after apt remove did not load stock" >&2; rc=1; }
	[ "$rc" -eq 0 ] || die "make check-deb failed"
	echo "deb: apt install built and installed the kit for $KREL; apt remove restored stock"
	;;
--list) ;;
*) die "usage: deb.sh [--list|--check|--check-initramfs|--check-install]" ;;
esac
