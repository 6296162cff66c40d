#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs in the testbed of a line that has the kit's irqbypass manager but no
# KVM or VFIO hooks yet (7.3: the tree is marked .kit-manager-only): the
# manager is the kit's, its in-kernel tests pass, and Debian's vhost_vdpa,
# which embeds struct irq_bypass_producer, loads against it.
set -u
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fail=1; echo "not ok $n - $*"; }
mi() { modinfo -b "$MODROOT" -k "$KREL" "$@" 2>/dev/null; }

echo "TAP version 13"
echo "1..3"
want=$(sed -n 's/^#define KVM_IRQBYPASS_VERSION "\(.*\)"$/\1/p' \
	"$(dirname "$0")/../../include/linux/kvm_irqbypass_version.h")
got=$(cat /sys/module/irqbypass/version 2>/dev/null)
if [[ "$(mi -F filename irqbypass)" == */updates/* ]] && [ "$got" = "$want" ]; then
	ok "irqbypass $got loaded from updates/"
else
	nok "irqbypass loaded from updates/ (version '$got', want '$want')"
fi
if modprobe -d "$MODROOT" -S "$KREL" test_irqbypass; then
	ok "test_irqbypass: $(dmesg | sed -n 's/.*# test_irqbypass: \([0-9]* tests, [0-9]* failed\).*/\1/p' | tail -n 1)"
	modprobe -r -d "$MODROOT" -S "$KREL" test_irqbypass
else
	nok "test_irqbypass (the kernel log has its TAP)"
	dmesg | grep -E '(not ok|# .*expected)' | tail -n 20
fi
if ! mi -F filename vhost_vdpa > /dev/null; then
	ok "stock vhost_vdpa loads against irqbypass # SKIP not built in $KREL"
elif modprobe -d "$MODROOT" -S "$KREL" vhost_vdpa && [ -d /sys/module/vhost_vdpa ]; then
	ok "stock vhost_vdpa loads against irqbypass"
	modprobe -r -d "$MODROOT" -S "$KREL" vhost_vdpa
else
	nok "stock vhost_vdpa loads against irqbypass"
fi
exit $fail
