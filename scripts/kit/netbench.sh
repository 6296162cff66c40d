#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make netbench: the seeds' TCP_RR matrix with real parts.  For the default
# kernel line, generic and rt, stock and kit modules (four testbed boots),
# the outer QEMU gives the testbed an e1000e and a virtio-net NIC joined on
# one hub; inside, the e1000e goes to vfio-pci and Debian's QEMU (-accel
# kvm) boots Debian's kernel as an L2 guest with it assigned, once per
# {msi, nomsi} x {kernel-irqchip on, split}.  The guest's rr client runs
# request/response transactions against the rr server on the testbed's
# virtio-net (tools/netbench/l1-run.sh).  tools/netbench/report.py then
# prints the table and writes build/report/tcprr.{csv,md,txt}.  The boots
# are lib.sh's kit_boots.
#
# The stock-modules boots are the anchor: one guest per combination runs
# NB_REPS repetitions.  The kit-modules boots measure both paths in one
# boot (same-boot A/B): per combination NB_REPS pairs of guests, one
# repetition each, alternating A (vfio_pci_core.fastpath=0, and with
# QEMU=kit the vfio-pci property x-kvm-split-resample=off: the stock
# paths) and B (the kit's paths); report.py gives each kit row the median
# of the paired ratios B/A and its 95 % interval.
#
# Environment:
#   NB_WARMUP=200 NB_COUNT=1000 NB_REPS=6   transactions per repetition
#   ICOUNT=                real time (default); ICOUNT=N boots the testbed
#                          with -icount shift=N,sleep=off, under which the
#                          nomsi guests never connected (QEMU 7.2, measured)
#   NETBENCH_FLAVOURS="generic rt"  NETBENCH_MODULES="stock kit"
#   NETBENCH_COMBOS="msi-on nomsi-on msi-split nomsi-split"
#   NETBENCH_EVENTS=1      also count returns to QEMU and the kit's fast-path
#                          hits with hist triggers (trace events on: the
#                          times then include tracing; off by default)
#   QEMU=stock             the L2 guest's VMM: stock, Debian's qemu-system-x86_64;
#                          kit, the kit's QEMU of make qemu (built if needed),
#                          which takes KVM_CAP_SPLIT_IRQCHIP_RESAMPLE where the
#                          modules offer it (Documentation/qemu.rst).  The
#                          same VMM for every boot: stock and kit rows differ
#                          only in the modules
#   KLINE=6.12
#
# A benchmark, not a test: no figure is judged.  The exit code is non-zero
# when a boot or a combination failed; the rows that were measured are
# written all the same.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

KIT_T0=${KIT_T0:-$(date +%s)}
export KIT_T0
NB_WARMUP=${NB_WARMUP:-200}
NB_COUNT=${NB_COUNT:-1000}
NB_REPS=${NB_REPS:-6}
ICOUNT=${ICOUNT-}
boot_lines=${KLINE:-6.12}
boot_flavours=${NETBENCH_FLAVOURS:-generic rt}
boot_modsets=${NETBENCH_MODULES:-stock kit}
combos=${NETBENCH_COMBOS:-msi-on nomsi-on msi-split nomsi-split}
QEMU=${QEMU:-stock}
case $QEMU in
stock) qemu_bin=qemu-system-x86_64 ;;
kit) qemu_bin=$B/qemu/qemu-system-x86_64 ;;
*) die "QEMU=$QEMU: stock (Debian's) or kit (make qemu's)" ;;
esac
for v in NB_WARMUP NB_COUNT NB_REPS; do
	[[ "${!v}" =~ ^[0-9]+$ ]] && [ "${!v}" -le 1000000 ] ||
		die "$v=${!v}: a number up to 1000000"
done
[ "$NB_COUNT" -gt 0 ] && [ "$NB_REPS" -gt 0 ] || die "NB_COUNT and NB_REPS must be positive"
for c in $combos; do
	case $c in msi-on | msi-split | nomsi-on | nomsi-split) ;;
	*) die "NETBENCH_COMBOS: '$c' is none of msi-on msi-split nomsi-on nomsi-split" ;;
	esac
done

kit_need_pkgs qemu-system-x86 busybox-static kmod xz-utils cpio python3 \
	make gcc libc6-dev
report=$B/report
nb=$B/netbench
mkdir -p "$report" "$nb"
rm -rf "$report/netbench" "$report"/tcprr.*
mkdir -p "$report/netbench"
start=$SECONDS

if [ "$QEMU" = kit ]; then
	"$kit_top/scripts/kit/qemu.sh"
	[ -x "$qemu_bin" ] || die "make qemu left no $qemu_bin"
fi

step "building rr (tools/netbench)"
make -s -C "$kit_top/tools/netbench" OUTPUT="$nb" > "$nb/build.log" 2>&1 ||
	{ tail -n 20 "$nb/build.log" >&2; die "building rr failed"; }

# The L2 guest: Debian's generic kernel of the line, e1000e and rr.
l2i=$nb/l2-initrd.img
kit_l2_guest "$l2i" "$kit_top/tools/netbench/l2-init" e1000e -- "$nb/rr"

# The testbed's NICs: the e1000e to assign and a virtio-net for the server,
# on one hub of the outer QEMU (which also means no default user-mode NIC).
boot_opts=(--timeout 3600
	--qemu-arg -netdev --qemu-arg hubport,id=nbe,hubid=0
	--qemu-arg -device --qemu-arg e1000e,netdev=nbe
	--qemu-arg -netdev --qemu-arg hubport,id=nbv,hubid=0
	--qemu-arg -device --qemu-arg virtio-net-pci,netdev=nbv)
rrargs=-w,$NB_WARMUP,-n,$NB_COUNT,-r,$NB_REPS,-t,120
boot_what=netbench
boot_logdir=$report/netbench
boot_desc="$combos (${NB_REPS} x $NB_COUNT transactions, kit modules: $NB_REPS A/B pairs of guests; $QEMU QEMU${ICOUNT:+, icount shift=$ICOUNT})"
boot_cmd() {
	# shellcheck disable=SC2206 # a list of combinations
	boot_argv=(env NETBENCH_EVENTS="${NETBENCH_EVENTS:-0}" NETBENCH_QEMU="$qemu_bin"
		NETBENCH_AB="$([ "$m" = kit ] && echo 1 || echo 0)"
		NETBENCH_QEMU_KIT="$([ "$QEMU" = kit ] && echo 1 || echo 0)"
		bash "$kit_top/tools/netbench/l1-run.sh"
		"$l2k" "$l2i" "$nb/rr" "$rrargs" $combos)
}
# shellcheck disable=SC2031 # kit_boots sets FLAVOUR
boot_collect() {
	mkdir -p "$report/netbench/$FLAVOUR-$m"
	cp "$dir"/nb-*.txt "$dir/console.log" "$report/netbench/$FLAVOUR-$m/" 2>/dev/null || true
	echo "$label $m $1" >> "$report/netbench/boots.txt"
}
kit_boots

python3 "$kit_top/tools/netbench/report.py" --icount "${ICOUNT:-off}" \
	--kline "${KLINE:-6.12}" --qemu "$QEMU" "$report" || die "report.py failed"

step "netbench finished in $((SECONDS - start)) s: ${report#"$kit_top"/}/tcprr.csv, tcprr.md, tcprr.txt"
kit_boots_report netbench || exit 1
