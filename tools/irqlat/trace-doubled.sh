#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Diagnosis, not a benchmark: run irqlat's scenarios with KVM's, vfio's and
# the fast path's trace events on until one reports a doubled interrupt or
# an ISR run that no LAPIC delivered, and keep that run's trace.  Runs in
# the testbed, which gives it $KIT_OUT:
#
#   scripts/kit/testbed.sh --icount 0 -- tools/irqlat/trace-doubled.sh [RUNS [IRQ]]
#
# RUNS (default 80) irqlat runs of -n 500, IRQ msi|intx|msi,intx (default
# intx).  Each hit leaves $KIT_OUT/trace-doubled-<run>.txt and irqlat's
# lines on stdout.  Documentation/testing.rst reads such a trace.
set -uo pipefail
runs=${1:-80} irq=${2:-intx}
here=$(cd "$(dirname "$0")" && pwd)
irqlat=${IRQLAT:-$here/irqlat}
T=/sys/kernel/tracing
[ -n "${KIT_OUT:-}" ] || { echo "trace-doubled.sh: run it in the testbed (no \$KIT_OUT)" >&2; exit 2; }
[ -x "$irqlat" ] || { echo "trace-doubled.sh: $irqlat: build it with make irqlat" >&2; exit 2; }
mountpoint -q $T || mount -t tracefs nodev $T || exit 2

echo 32768 > $T/buffer_size_kb
# vfio's INTx signal and unmask, which have no trace events of their own.
# shellcheck disable=SC2016 # $retval is the kprobe syntax, not the shell's
printf '%s\n' 'p:vsend vfio_pci_core:vfio_send_intx_eventfd' \
	'p:vunmask vfio_pci_core:vfio_pci_intx_unmask_handler' \
	'r:vunmaskr vfio_pci_core:vfio_pci_intx_unmask_handler ret=$retval' \
	> $T/kprobe_events
for e in kprobes vfio_fastpath kvm/kvm_inj_virq kvm/kvm_msi_set_irq \
	kvm/kvm_apic_accept_irq kvm/kvm_eoi kvm/kvm_userspace_exit \
	kvm/kvm_entry kvm/kvm_exit kvm/kvm_emulate_insn kvm/kvm_mmio \
	kvm/kvm_page_fault kvm/kvm_inj_exception kvm/kvm_apic \
	irq/irq_handler_entry; do
	echo 1 > "$T/events/$e/enable" || echo "trace-doubled.sh: no event $e" >&2
done

hits=0
for i in $(seq "$runs"); do
	echo > $T/trace
	echo 1 > $T/tracing_on
	out=$("$irqlat" -n 500 --irq "$irq" 2>&1)
	echo 0 > $T/tracing_on
	if grep -q "doubled:\|no LAPIC delivered" <<< "$out"; then
		hits=$((hits + 1))
		echo "== run $i"
		grep -v "^#\|^ok" <<< "$out"
		cat $T/trace > "$KIT_OUT/trace-doubled-$i.txt"
		echo "trace: trace-doubled-$i.txt"
	fi
done
echo > $T/kprobe_events
echo "== $runs runs, $hits with a doubled or stray ISR run"
