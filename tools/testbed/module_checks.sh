#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs in the testbed after guest-setup.sh loaded the module set: TAP checks
# that the modules an admin would get from modprobe are the ones expected
# (ours from updates/ with "kit", the distro's with "stock"; KIT_EXPECT=kit
# or stock says which for --modules host), and that stock
# modules built against the distro's exports still load against ours.
set -u
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fail=1; echo "not ok $n - $*"; }
mi() { modinfo -b "$MODROOT" -k "$KREL" "$@" 2>/dev/null; }

echo "TAP version 13"
echo "1..9"
for m in irqbypass kvm "$KIT_KVM" vfio_pci_core vfio_pci; do
	f=$(mi -F filename "$m")
	want=kernel/
	[ "${KIT_EXPECT:-$KIT_MODULES}" = kit ] && want=updates/
	# The loaded module is the file modprobe resolved iff srcversions match.
	if [ -d "/sys/module/$m" ] && [[ "$f" == *"/$want"* ]] &&
	   [ "$(cat "/sys/module/$m/srcversion" 2>/dev/null)" = "$(mi -F srcversion "$m")" ]; then
		ok "$m loaded from $want"
	else
		nok "$m loaded from $want (modprobe resolves $f)"
	fi
done
# MODULE_VERSION: every module of ours says the kit's version, stock's none.
want=$(sed -n 's/^#define KVM_IRQBYPASS_VERSION "\(.*\)"$/\1/p' \
	"$(dirname "$0")/../../include/linux/kvm_irqbypass_version.h")
[ "${KIT_EXPECT:-$KIT_MODULES}" = kit ] || want=
got=
for m in irqbypass kvm "$KIT_KVM" vfio_pci_core vfio_pci; do
	got="$got $m=$(cat "/sys/module/$m/version" 2>/dev/null)"
done
if [ "$got" = "$(for m in irqbypass kvm "$KIT_KVM" vfio_pci_core vfio_pci; do
	printf ' %s=%s' "$m" "$want"; done)" ]; then
	ok "/sys/module/*/version:$got"
else
	nok "/sys/module/*/version:$got (want '${want:-none}')"
fi
for m in vfio vfio_iommu_type1; do
	if [ -d "/sys/module/$m" ] && [[ "$(mi -F filename "$m")" == */kernel/* ]]; then
		ok "stock $m loaded against these modules"
	else
		nok "stock $m loaded against these modules"
	fi
done
# vhost_vdpa imports irqbypass's exports: a CRC mismatch refuses the load.
# Debian's 6.1 kernels do not build it (CONFIG_VHOST_VDPA is off).
if ! mi -F filename vhost_vdpa > /dev/null; then
	n=$((n + 1))
	echo "ok $n - stock vhost_vdpa loads against irqbypass # SKIP not built in $KREL"
elif modprobe -d "$MODROOT" -S "$KREL" vhost_vdpa && [ -d /sys/module/vhost_vdpa ]; then
	ok "stock vhost_vdpa loads against irqbypass"
	modprobe -r -d "$MODROOT" -S "$KREL" vhost_vdpa
else
	nok "stock vhost_vdpa loads against irqbypass"
fi
exit $fail
