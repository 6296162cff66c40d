// SPDX-License-Identifier: GPL-2.0-only
/*
 * posted_intr: irqfd MSIs and cross-vCPU IPIs into a vCPU with APICv,
 * delivered by posted interrupts (vmx_deliver_posted_interrupt()): into a
 * halted vCPU, which the interrupt wakes (PIR synced into the virtual IRR and
 * RVI at the next VM entry), and into a running one, which gets the
 * notification IPI and processes the posted interrupt in VMX non-root
 * operation, without a VM exit.  Each interrupt must reach the guest's ISR
 * exactly once.  KVM's vCPU statistics
 * (KVM_GET_STATS_FD) give the cost per interrupt: VM exits, KVM_REQ_EVENT
 * requests handled (req_event) and interrupts injected through the VM-entry
 * interruption information (irq_injections).
 *
 * The vCPU runs on its own thread pinned to CPU 0, the host raises from CPU
 * 1, so the MSI always comes from another CPU than the vCPU's.  For the
 * IPIs, a second vCPU on CPU 1 takes the MSI instead and its ISR writes the
 * xAPIC ICR: an IPI to vCPU 0 (KVM sends it from the APIC-write exit of
 * vCPU 1, kvm_apic_send_ipi(), through the same posting).  One MSI at
 * a time, waiting for the ISR's count, so that coalescing cannot hide a
 * lost or doubled interrupt.  The ISR makes no exit: the host reads the
 * count from guest memory.  A first MSI before the measured ones maps the
 * guest's IDT, GDT and stack into the EPT, whose violations during the
 * first delivery are re-injected by KVM (irq_injections), and are not what
 * is measured.
 *
 * Needs kvm_intel with enable_apicv=Y and two CPUs (the bochs3 testbed);
 * skips on anything else.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kvm_util_lite.h"
#include "tap.h"
#include "vcpu_runner.h"
#include "vcpu_stats.h"

#define TESTS_PER_CASE	5
#define NR_CASES	4
#define QUIET_MS	1000
#define VCPU_CPU	0
#define RAISE_CPU	1
#define IPI_VECTOR	TEST_MSI_VECTOR		/* vCPU 1 -> vCPU 0 */
#define SENDER_VECTOR	(TEST_MSI_VECTOR + 1)	/* the MSI to vCPU 1 */
#define LAPIC_ICR	0x300

/*
 * The sender for the IPI cases: vCPU 1, halted, whose ISR (for the MSI)
 * writes IPI_VECTOR to its ICR, fixed, physical destination 0 (ICR high
 * is 0 since reset): one IPI to vCPU 0 per MSI.
 */
static struct lite_vcpu *add_sender(struct lite_vm *vm, int timeout)
{
	struct guest_params params = {
		.vector = SENDER_VECTOR,
		.ack_addr = LAPIC_BASE + LAPIC_ICR,
		.ack_value = IPI_VECTOR | 0x4000,	/* fixed, assert */
	};
	/* Fixed delivery, physical destination APIC ID 1. */
	struct kvm_irq_routing_entry e = {
		.gsi = TEST_MSI_GSI,
		.type = KVM_IRQ_ROUTING_MSI,
		.u.msi.address_lo = LAPIC_BASE | (1 << 12),
		.u.msi.data = SENDER_VECTOR,
	};
	struct lite_vcpu *v = vm_add_vcpu(vm, &params);

	if (!v || vcpu_run_until(v, GUEST_PORT_READY, NULL, timeout))
		return NULL;
	if (vm_set_route(vm, &e)) {
		tap_diag("KVM_SET_GSI_ROUTING (MSI to APIC ID 1) failed");
		return NULL;
	}
	return v;
}

/* Always produces exactly TESTS_PER_CASE results, so the plan holds. */
static void test_case(bool running, bool ipi, int iters, int timeout)
{
	char name[48];
	const char *what = ipi ? "IPI" : "MSI";
	struct guest_params params = {
		.flags = running ? GUEST_F_SPIN : 0,
		.vector = ipi ? IPI_VECTOR : TEST_MSI_VECTOR,
	};
	struct vcpu_runner runner = { 0 }, sender_runner = { 0 };
	struct vcpu_stats st = { .fd = -1 };
	u64 before[VS_NR], after[VS_NR], d[VS_NR], halts = 0;
	struct lite_vcpu *vcpu, *sender = NULL;
	struct lite_vm *vm;
	unsigned int delivered = 0, signalled = 0, raised = 0;
	int reported = 0, efd = -1, i, k;
	bool ok;

	snprintf(name, sizeof(name), "%s vCPU, %s", running ? "running" : "halted",
		 ipi ? "IPIs from vCPU 1" : "irqfd MSIs");
	vm = __vm_create(IRQCHIP_KERNEL);
	ok = vm && !vm_start_guest(vm, &params) &&
	     !guest_run_until(vm, GUEST_PORT_READY, NULL, timeout);
	vcpu = vm ? &vm->vcpu[0] : NULL;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ok = ok && efd >= 0;
	if (ok && ipi)
		ok = (sender = add_sender(vm, timeout)) != NULL;
	else if (ok)
		ok = !vm_route_msi(vm, TEST_MSI_GSI, TEST_MSI_VECTOR);
	ok = ok && !__vm_irqfd(vm, efd, TEST_MSI_GSI, 0, 0) && !vcpu_stats_open(vcpu, &st);
	if (ok && sender)
		ok = !vcpu_runner_start_vcpu(&sender_runner, sender, RAISE_CPU);
	if (ok) {
		halts = vcpu_stats_read(&st, VS_HALT_EXITS);
		ok = !vcpu_runner_start(&runner, vm, VCPU_CPU) &&
		     (running || vcpu_stats_wait_halted(&st, &halts, timeout)) &&
		     !eventfd_raise(efd) && vcpu_wait_count(vcpu, 1, timeout) &&
		     (!sender || vcpu_wait_count(sender, 1, timeout));
	}
	reported++;
	if (!tap_result(ok, "%s: guest ready, route and irqfd bound, first %s delivered",
			name, what))
		goto out;

	vcpu_stats_snap(&st, before);
	for (i = 0; i < iters; i++) {
		/* A halted vCPU: wait for its HLT exit after the last ISR. */
		if (!running && !vcpu_stats_wait_halted(&st, &halts, timeout)) {
			tap_diag("%s: MSI %d: the vCPU did not halt again", name, i + 1);
			break;
		}
		if (eventfd_raise(efd))
			break;
		raised++;
		if (!vcpu_wait_count(vcpu, i + 2, timeout)) {
			tap_diag("%s: %s %d not delivered within %d ms", name, what,
				 i + 1, timeout);
			break;
		}
		/* irqfd_wakeup() reads the eventfd counter when it injects. */
		if (!fd_readable(efd))
			signalled++;
		delivered = vcpu_count(vcpu) - 1;
		if (delivered != (unsigned int)i + 1 ||
		    (sender && vcpu_count(sender) != (u32)i + 2)) {
			tap_diag("%s: %s %d: ISR count %u, sender's %u", name, what,
				 i + 1, delivered, sender ? vcpu_count(sender) - 1 : 0);
			break;
		}
	}
	vcpu_stats_snap(&st, after);
	for (k = 0; k < VS_NR; k++)
		d[k] = after[k] - before[k];
	tap_diag("%s: raised=%u signalled=%u delivered=%u", name, raised, signalled,
		 delivered);
	if (raised) {
		tap_diag("%s: per %s: %.2f exits (%.2f external-interrupt, %.2f HLT)",
			 name, what, (double)d[VS_EXITS] / raised,
			 (double)d[VS_IRQ_EXITS] / raised,
			 (double)d[VS_HALT_EXITS] / raised);
		tap_diag("%s: per %s: %.2f KVM_REQ_EVENT, %.2f injected by VM entry",
			 name, what, (double)d[VS_REQ_EVENT] / raised,
			 (double)d[VS_IRQ_INJECTIONS] / raised);
	}
	reported++;
	ok = raised == (unsigned int)iters && signalled == raised &&
	     delivered == raised;
	tap_result(ok, "%s: %d delivered, each exactly once", name, iters);

	usleep(QUIET_MS * 1000);
	reported++;
	ok = vcpu_count(vcpu) - 1 == delivered && !READ_ONCE(runner.err) &&
	     (!sender || (vcpu_count(sender) - 1 == raised &&
			  !READ_ONCE(sender_runner.err)));
	tap_result(ok, "%s: no stray interrupt in a %d ms quiet window (count %u)",
		   name, QUIET_MS, vcpu_count(vcpu) - 1);

	/*
	 * Posted, the vector goes PIR -> virtual IRR -> RVI and the CPU
	 * delivers it: KVM injects nothing through the VM-entry interruption
	 * information, which is how it delivers without APICv (and how it
	 * re-injects an interrupted delivery).
	 */
	reported++;
	tap_result(raised && d[VS_IRQ_INJECTIONS] == 0,
		   "%s: none injected by KVM through VM entry (irq_injections +%llu)",
		   name, (unsigned long long)d[VS_IRQ_INJECTIONS]);

	reported++;
	if (running) {
		/*
		 * Fewer exits than MSIs: some, at least, reached the guest
		 * with no VM exit at all, which only posted-interrupt
		 * processing in VMX non-root operation does (a notification
		 * IPI that KVM had to handle would be an external-interrupt
		 * exit each).
		 */
		tap_result(raised && d[VS_EXITS] < raised,
			   "%s: %llu VM exits for %u: posted-interrupt processing in the guest",
			   name, (unsigned long long)d[VS_EXITS], raised);
	} else {
		/* Posted delivery needs no KVM_REQ_EVENT, even for a wakeup. */
		tap_result(raised && d[VS_REQ_EVENT] < raised,
			   "%s: %llu KVM_REQ_EVENT for %u that each woke the vCPU",
			   name, (unsigned long long)d[VS_REQ_EVENT], raised);
	}

out:
	vcpu_runner_stop(&runner);
	vcpu_runner_stop(&sender_runner);
	if (runner.err)
		tap_diag("%s: vCPU thread failed: %s", name, strerror(-runner.err));
	if (sender_runner.err)
		tap_diag("%s: vCPU 1 thread failed: %s", name,
			 strerror(-sender_runner.err));
	while (reported++ < TESTS_PER_CASE)
		tap_result(false, "%s: not reached", name);
	vcpu_stats_close(&st);
	if (efd >= 0)
		close(efd);
	if (vm)
		vm_destroy(vm);
}

int main(void)
{
	int iters = test_iterations(200);
	int timeout = test_timeout_ms();

	tap_plan(NR_CASES * TESTS_PER_CASE);
	close(kvm_open_or_bail());
	if (!kvm_intel_apicv()) {
		tap_skip_rest("no APICv: kvm_intel with enable_apicv=Y needed (TESTBED=bochs3)");
		return tap_finish();
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		tap_skip_rest("one CPU: the MSI must come from another CPU than the vCPU's");
		return tap_finish();
	}
	pin_self(RAISE_CPU);
	tap_diag("iterations=%d timeout=%d ms, vCPU on CPU %d, MSIs from CPU %d",
		 iters, timeout, VCPU_CPU, RAISE_CPU);
	test_case(false, false, iters, timeout);
	test_case(true, false, iters, timeout);
	test_case(false, true, iters, timeout);
	test_case(true, true, iters, timeout);
	return tap_finish();
}
