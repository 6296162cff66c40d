#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make deb: build build/deb/kvm-irqbypass-dkms_<version>_all.deb with
# Debian's tooling (dpkg-buildpackage, debhelper, dh_dkms) from a copy of
# the files the package carries, then run lintian on it (when installed;
# the tags we keep are explained in debian/kvm-irqbypass-dkms.lintian-overrides
# and Documentation/kit.rst).  Prints the path of the .deb last.
#   deb.sh --list   the files the package must carry (for make check)
set -euo pipefail
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
	(cd "$kit_top" && git ls-files -- virt arch drivers include backport-include patches) |
		sed "s|^|$src/|"
	echo usr/share/dkms/modules_to_force_install/kvm-irqbypass
	exit 0
fi

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
# shellcheck disable=SC2046 # word splitting wanted
(cd "$kit_top" && cp -r --parents Makefile Kbuild dkms.conf debian virt arch drivers \
	include backport-include patches scripts/kit "$work/")
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
echo "$deb"
