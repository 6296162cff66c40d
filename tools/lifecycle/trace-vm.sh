#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Diagnosis, not a benchmark: where the time of a lifecycle `vm` op goes.
# Runs lifecycle's vm case with stock and kit modules alternately
# (tools/lifecycle/ab.sh) under the function_graph tracer, filtered to the
# calls of VM creation and teardown that can wait (grace periods, barriers,
# workqueue flushes), and prints per module set how long they took and
# which functions sent the IPIs (the ipi_send_cpu/_cpumask events).  Runs
# in the testbed, which gives it $KIT_OUT; lifecycle must be built
# (make bench-lifecycle builds it into build/lifecycle):
#
#   scripts/kit/testbed.sh --icount 0 --qemu-arg -device --qemu-arg edu -- \
#       tools/lifecycle/trace-vm.sh [REPS [VECTORS [VMS]]]
#
# REPS (default 2) ab.sh reps, VECTORS (default 1) paired vectors per VM,
# VMS (default 32) VMs per run.  The traces stay in
# $KIT_OUT/trace-vm-<set>-<rep>.txt.  The tracer's own cost is in every
# traced call, so its times are not the benchmark's (make bench-lifecycle
# runs without it); what it shows is which wait makes up an op.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
lifecycle=${LIFECYCLE:-$top/build/lifecycle/lifecycle}
T=/sys/kernel/tracing
[ -n "${KIT_OUT:-}" ] || { echo "trace-vm.sh: run it in the testbed (no \$KIT_OUT)" >&2; exit 2; }

# The calls traced: each shows with its duration, nested in the others.
funcs=(kvm_dev_ioctl kvm_vm_ioctl kvm_vcpu_release kvm_vm_release
	kvm_destroy_vm kvm_irqfd_release irqfd_shutdown mmu_notifier_unregister
	kvm_arch_destroy_vm kvm_mmu_uninit_vm kvm_set_irq_routing
	cleanup_srcu_struct synchronize_srcu synchronize_srcu_expedited
	synchronize_rcu synchronize_rcu_expedited rcu_barrier __flush_workqueue
	synchronize_hardirq synchronize_irq irq_bypass_register_consumer
	irq_bypass_unregister_consumer)

if [ "${1:-}" = --wrap ]; then
	# ab.sh's command: trace one lifecycle run (the set's modules loaded).
	shift
	set=unknown rep=0 args=("$@")
	for ((i = 0; i < ${#args[@]}; i++)); do
		[ "${args[i]}" = --modules ] && set=${args[i + 1]}
		[ "${args[i]}" = --csv-file ] && rep=${args[i + 1]##*/ab-} rep=${rep%%-*}
	done
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	echo > $T/trace
	: > $T/set_ftrace_filter
	for f in "${funcs[@]}"; do
		echo "$f" >> $T/set_ftrace_filter 2>/dev/null
	done
	echo function_graph > $T/current_tracer
	echo 1 > $T/options/funcgraph-tail
	# IPIs, with the function that sent each (6.6+).
	for e in ipi/ipi_send_cpu ipi/ipi_send_cpumask; do
		[ -e "$T/events/$e/enable" ] && echo 1 > "$T/events/$e/enable"
	done
	echo 1 > $T/tracing_on
	"${args[@]}"
	rc=$?
	echo 0 > $T/tracing_on
	out=$KIT_OUT/trace-vm-$set-$rep.txt
	cat $T/trace > "$out"
	echo nop > $T/current_tracer
	# Per traced call: count, total and median duration in ms.
	awk -v set="$set" -v rep="$rep" '
		/ us +\|/ {
			for (i = 1; i <= NF; i++)
				if ($i ~ /^[0-9.]+$/ && $(i + 1) == "us") { d = $i / 1000; break }
			fn = $0
			sub(/^[^|]*\| */, "", fn)
			if (fn ~ /^}/) { sub(/^} \/\* */, "", fn); sub(/ *\*\/.*/, "", fn) }
			else sub(/\(.*/, "", fn)
			sub(/ .*/, "", fn)
			if (fn == "" || fn == "}") next
			n[fn]++; s[fn] += d; v[fn, n[fn]] = d
		}
		END {
			for (f in n) {
				m = n[f]
				for (a = 1; a <= m; a++) w[a] = v[f, a]
				for (a = 2; a <= m; a++)
					for (b = a; b > 1 && w[b - 1] > w[b]; b--) { t = w[b]; w[b] = w[b - 1]; w[b - 1] = t }
				printf "# trace-vm: %s rep %s: %-30s %6d calls %10.2f ms, median %8.3f ms, max %8.3f ms\n",
					set, rep, f, m, s[f], w[int((m + 1) / 2)], w[m]
			}
		}' "$out" | sort -k9,9 -g -r
	# IPIs sent during the run, by the function that sent them.
	# (callback 0x0: a reschedule IPI, which lifecycle does not count)
	grep -o 'ipi_send_cpu[a-z]*: .*callsite=[^ ]* callback=[^ ]*' "$out" |
		sed 's/.*callsite=\([^+]*\)[^ ]* callback=\([^+]*\).*/\1 \2/' |
		sort | uniq -c | sort -rn |
		awk -v set="$set" -v rep="$rep" '{
			printf "# trace-vm: %s rep %s: IPIs from %s (%s) %d\n", set, rep, $2, $3, $1 }'
	for e in ipi/ipi_send_cpu ipi/ipi_send_cpumask; do
		[ -e "$T/events/$e/enable" ] && echo 0 > "$T/events/$e/enable"
	done
	exit $rc
fi

reps=${1:-2} vectors=${2:-1} vms=${3:-32}
[ -x "$lifecycle" ] || { echo "trace-vm.sh: $lifecycle: build it (make bench-lifecycle)" >&2; exit 2; }
mountpoint -q $T || mount -t tracefs nodev $T || exit 2
echo 32768 > $T/buffer_size_kb
bash "$here/ab.sh" "$reps" "$KIT_OUT" -- "$here/trace-vm.sh" --wrap "$lifecycle" \
	--kernel "$(uname -r)" --cases vm --vectors "$vectors" --vm-min-ops "$vms" --busy
