#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make demo: the interrupt-path matrix in one command.  Installs what is
# missing, builds the kit for the default line's generic and rt flavours,
# boots the testbed with stock and with kit modules and runs tools/irqlat
# over {MSI, INTx} x {kernel irqchip, split irqchip} x {generic, rt} x
# {stock, kit} (scripts/kit/bench.sh), then prints the table and writes
# build/report/matrix.{csv,md,txt} and latency.{svg,png}.
#
# Environment:
#   DEMO=all               or a comma list narrowing the matrix, e.g.
#                          msi | intx, kernel | split, generic | rt,
#                          stock | kit (DEMO=msi,rt: MSI rows on rt only)
#   KLINE=6.12             the kernel line: 6.12, 6.1, or all (both in one
#                          table, each line with its own ref rows)
#   N=500                  interrupts per scenario
#   ICOUNT=0               -icount shift for the testbed (empty: real time)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

KIT_T0=${KIT_T0:-$(date +%s)}
export KIT_T0

irqs= chips= flavours= modsets=
for tok in $(echo "${DEMO:-all}" | tr ',' ' '); do
	case $tok in
	all) ;;
	msi | intx) irqs+="${irqs:+,}$tok" ;;
	kernel) chips+="${chips:+,}kernel" ;;
	split) chips+="${chips:+,}split-user,split-userspace-only,split-kernel,split-kernel-noexit" ;;
	generic | rt) flavours+="${flavours:+ }$tok" ;;
	stock | kit) modsets+="${modsets:+ }$tok" ;;
	*) die "DEMO=$DEMO: '$tok' is none of all msi intx kernel split generic rt stock kit" ;;
	esac
done
export BENCH_FLAVOURS=${flavours:-generic rt}
export BENCH_MODULES=${modsets:-stock kit}
export IRQLAT_ARGS="--irq ${irqs:-all} --irqchip ${chips:-all}${IRQLAT_ARGS:+ $IRQLAT_ARGS}"

current="setup"
on_exit() {
	local rc=$?
	[ "$rc" -eq 0 ] && return
	echo "kit: demo: failed in step '$current' (exit $rc) after $(($(date +%s) - KIT_T0)) s" >&2
}
trap on_exit EXIT

step "demo: Debian ${KLINE:-6.12} [$BENCH_FLAVOURS] x modules [$BENCH_MODULES], irqlat $IRQLAT_ARGS, N=${N:-500}"
current="packages"
step "packages: QEMU, busybox, python3, gnuplot (the kernel's come with the build)"
kit_need_pkgs qemu-system-x86 busybox-static kmod xz-utils cpio python3 \
	gnuplot-nox make gcc

current="benchmark (build, boots, report)"
"$kit_top/scripts/kit/bench.sh"

current="summary"
report=${B#"$kit_top"/}/report
step "demo finished in $(($(date +%s) - KIT_T0)) s: $report/matrix.csv, matrix.md, matrix.txt, latency.svg, latency.png"
