#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make mmiobench: TCP_RR (tools/netbench/rr) between the testbed and an L2
# Debian 6.12 guest on QEMU's microvm machine with virtio-net and
# vhost-net, per virtio transport: pci (virtio-net-pci, MSI-X, microvm
# pcie=on), mmio (virtio-mmio, legacy interrupt), mmio-msi and
# mmio-msi-doorbell (the Dragonball MSI/doorbell extension of the kit's
# QEMU, make qemu, and the kit's guest virtio_mmio.ko, make guest), each
# with kernel-irqchip=on and split.  One testbed boot (6.12 generic, the
# kit's modules) runs every combination; repetitions alternate the
# combinations within the boot, one L2 guest per repetition
# (tools/mmiobench/l1-run.sh, l2-init).  tools/mmiobench/report.py then
# prints the table with the 2019 seed's figures beside it, runs the check
# step and writes build/report/mmio.{csv,txt}.  The boots are lib.sh's
# kit_boots.
#
# Environment:
#   MMIOBENCH_REPS=5       repetitions (L2 guests) per combination
#   MMIOBENCH_WARMUP=200 MMIOBENCH_COUNT=2000   transactions per guest
#   MMIOBENCH_COMBOS="pci-on mmio-on ..."   the combinations (default: all
#                          eight, {pci,mmio,mmio-msi,mmio-msi-doorbell}-{on,split});
#                          mmio-msi-shared-{on,split} (the guest driver's
#                          max_vectors=2: one vector for all queues) on request
#   MMIOBENCH_FLAVOURS=generic  MMIOBENCH_MODULES=kit   the testbed boots
#   MMIOBENCH_NAPI_TX=1    the L2 guest's virtio_net napi_tx (1, the
#                          driver's default: transmit completions raise
#                          the transmit queue's interrupt; 0: they are
#                          reaped on the next transmit)
#   ICOUNT=                real time (default); ICOUNT=N boots the testbed
#                          with -icount shift=N,sleep=off: trans/s become
#                          emulated time; the testbed's QEMU 7.2 hung in
#                          about one L2 guest in three under it
#                          (Documentation/mmiobench.rst)
#   KLINE=6.12             the testbed's kernel line (the L2 guest is
#                          always Debian's 6.12 generic: the guest module's)
#
# Exit code: non-zero when a boot failed or the check step found a
# problem; the rows that were measured are written all the same.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

KIT_T0=${KIT_T0:-$(date +%s)}
export KIT_T0
MMIOBENCH_WARMUP=${MMIOBENCH_WARMUP:-200}
MMIOBENCH_COUNT=${MMIOBENCH_COUNT:-2000}
MMIOBENCH_REPS=${MMIOBENCH_REPS:-5}
MMIOBENCH_NAPI_TX=${MMIOBENCH_NAPI_TX:-1}
all_combos="pci-on mmio-on mmio-msi-on mmio-msi-doorbell-on pci-split mmio-split mmio-msi-split mmio-msi-doorbell-split"
# Only when named: mmio-msi with the guest driver's max_vectors=2.
extra_combos="mmio-msi-shared-on mmio-msi-shared-split"
combos=${MMIOBENCH_COMBOS:-$all_combos}
boot_lines=${KLINE:-6.12}
boot_flavours=${MMIOBENCH_FLAVOURS:-generic}
boot_modsets=${MMIOBENCH_MODULES:-kit}
for v in MMIOBENCH_WARMUP MMIOBENCH_COUNT MMIOBENCH_REPS; do
	[[ "${!v}" =~ ^[0-9]+$ ]] && [ "${!v}" -le 1000000 ] ||
		die "$v=${!v}: a number up to 1000000"
done
[ "$MMIOBENCH_COUNT" -gt 0 ] && [ "$MMIOBENCH_REPS" -gt 0 ] ||
	die "MMIOBENCH_COUNT and MMIOBENCH_REPS must be positive"
[[ "$MMIOBENCH_NAPI_TX" =~ ^[01]$ ]] ||
	die "MMIOBENCH_NAPI_TX=$MMIOBENCH_NAPI_TX: 0 or 1"
for c in $combos; do
	[[ " $all_combos $extra_combos " == *" $c "* ]] ||
		die "MMIOBENCH_COMBOS: '$c' is none of $all_combos $extra_combos"
done

kit_need_pkgs qemu-system-x86 busybox-static kmod xz-utils cpio python3 \
	make gcc libc6-dev
report=$B/report
mb=$B/mmiobench
mkdir -p "$report" "$mb"
rm -rf "$report/mmiobench" "$report"/mmio.*
mkdir -p "$report/mmiobench"
start=$SECONDS

"$kit_top/scripts/kit/qemu.sh"
qemu_bin=$B/qemu/qemu-system-x86_64
[ -x "$qemu_bin" ] || die "make qemu left no $qemu_bin"
"$kit_top/scripts/kit/guest.sh"
ko=$B/guest/drivers/virtio/virtio_mmio.ko

step "building rr (tools/netbench)"
make -s -C "$kit_top/tools/netbench" OUTPUT="$mb" > "$mb/build.log" 2>&1 ||
	{ tail -n 20 "$mb/build.log" >&2; die "building rr failed"; }

# The L2 guest: Debian's 6.12 generic kernel, virtio_net and the kit's
# virtio_mmio.ko (virtio_pci is built into Debian's kernel).
l2i=$mb/l2-initrd.img
KLINE=6.12 kit_l2_guest "$l2i" "$kit_top/tools/mmiobench/l2-init" \
	failover net_failover virtio_net -- "$mb/rr" "$ko"

rrargs=-w,$MMIOBENCH_WARMUP,-n,$MMIOBENCH_COUNT,-r,1,-t,120
boot_opts=(--timeout 3600)
boot_what=mmiobench
boot_logdir=$report/mmiobench
ICOUNT=${ICOUNT-}
boot_desc="$MMIOBENCH_REPS x ($combos), $MMIOBENCH_COUNT transactions per guest, napi_tx=$MMIOBENCH_NAPI_TX${ICOUNT:+, icount shift=$ICOUNT}"
boot_cmd() {
	# shellcheck disable=SC2206 # a list of combinations
	boot_argv=(bash "$kit_top/tools/mmiobench/l1-run.sh" "$qemu_bin" "$l2k" "$l2i"
		"$mb/rr" "$rrargs" "$MMIOBENCH_REPS" "$MMIOBENCH_NAPI_TX" $combos)
}
# shellcheck disable=SC2031 # kit_boots sets FLAVOUR
boot_collect() {
	mkdir -p "$report/mmiobench/$KLINE-$FLAVOUR-$m"
	cp "$dir"/mb-*.txt "$dir/console.log" "$report/mmiobench/$KLINE-$FLAVOUR-$m/" 2>/dev/null || true
	echo "$KLINE-$FLAVOUR-$m $1" >> "$report/mmiobench/boots.txt"
}
kit_boots

check=0
python3 "$kit_top/tools/mmiobench/report.py" --combos "$combos" \
	--reps "$MMIOBENCH_REPS" --icount "${ICOUNT:-off}" "$report" || check=$?
[ "$check" -le 1 ] || die "report.py failed"

step "mmiobench finished in $((SECONDS - start)) s: ${report#"$kit_top"/}/mmio.csv, mmio.txt"
kit_boots_report mmiobench || exit 1
[ "$check" -eq 0 ] || die "mmiobench: the check step found a problem (above)"
