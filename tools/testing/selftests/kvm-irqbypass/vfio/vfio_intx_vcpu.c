// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_intx_vcpu: which thread sets the IOAPIC pin of a fast-path INTx.
 *
 * The edu's level INTx goes to the guest through a resampling KVM_IRQFD on
 * an in-kernel IOAPIC pin, as in vfio_intx, but each interrupt is raised
 * by a second host thread while the vCPU is halted in KVM_RUN (a guest
 * waiting for its device).  With the kit, vfio's hard-irq handler hands it
 * to the irqfd, and with kvm.irqfd_vcpu_inject=Y the vCPU's own thread
 * sets the pin (virt/kvm/irqfd_fastpath.c); with =N the irqfd's work item
 * does, as in stock.  The kvm_set_irq trace event (on in make check's
 * testbed) names the thread by its pid: it is counted for each phase.
 * A third phase moves the irqfd to a second VM whose vCPU spins in the
 * guest, the vCPU thread on the last CPU and the host irq and the raiser
 * on CPU 0, so that the interrupt finds the vCPU in guest mode: without
 * APICv/AVIC (the QEMU testbed) the vCPU thread sets the pin there too,
 * since kvm_set_irq() would kick it out of guest mode anyway; with them
 * the work item posts the vector and the thread count is not checked.
 * A fourth phase moves it to a third VM, halted, whose IOAPIC entry names
 * every APIC (destination 0xff): the optimized APIC map resolves no single
 * vCPU, so the work item sets the pin, as in stock, and none of it is
 * left to a vCPU that is not the destination.
 * Every interrupt must be raised, signalled on the host line, asserted on
 * the pin and delivered to the guest exactly once in each phase.  With
 * stock modules the phases cannot be told apart and only delivery is
 * checked.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kvm_util_lite.h"
#include "proc_util.h"
#include "raiser.h"
#include "tap.h"
#include "vcpu_stats.h"
#include "vfio_util_lite.h"

#define NR_TESTS	15
#define TEST_GSI	5
#define EDU_BAR0_GPA	0xe0000000u
#define QUIET_MS	1000
/* How long the raiser waits for the vCPU to be back in HLT. */
#define RAISE_DELAY_US	3000

#define TRACEFS		"/sys/kernel/tracing"
#define VCPU_INJECT	"/sys/module/kvm/parameters/irqfd_vcpu_inject"

/*
 * kvm_set_irq events raising TEST_GSI since the buffer was cleared: by
 * the thread @tid, and by any other.  -1: the event is off or unreadable.
 */
static void count_pin_sets(int tid, long long *mine, long long *other)
{
	char line[512], want[64];
	FILE *f;

	*mine = -1;
	*other = -1;
	if (!read_text_file(TRACEFS "/events/kvm/kvm_set_irq/enable", line,
			    sizeof(line)) || line[0] != '1')
		return;
	f = fopen(TRACEFS "/trace", "re");
	if (!f)
		return;
	snprintf(want, sizeof(want), "kvm_set_irq: gsi %d level 1 ", TEST_GSI);
	*mine = 0;
	*other = 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, want), *dash;

		if (!p || line[0] == '#')
			continue;
		/* "  <comm>-<pid>  [cpu] ..." : the pid ends at the first " [". */
		*p = '\0';
		p = strstr(line, " [");
		if (!p)
			continue;
		*p = '\0';
		dash = strrchr(line, '-');
		if (dash && atoi(dash + 1) == tid)
			(*mine)++;
		else
			(*other)++;
	}
	fclose(f);
}

struct phase {
	const char *name;
	const char *vcpu_state;	/* what the vCPU does when raised: "halts" */
	unsigned int raised, delivered;
	long long signalled, by_vcpu, by_other;
};

static bool phase_once(const struct phase *ph, int iters)
{
	return ph->raised == (unsigned int)iters &&
	       ph->delivered == ph->raised &&
	       (ph->signalled < 0 || ph->signalled >= ph->raised);
}

/*
 * Run a phase and report its delivery.  True when the threads that set
 * the pin can be checked next (kit modules, kvm_set_irq event on); if not,
 * that check is reported skipped here.
 */
static bool run_phase(struct lite_vm *vm, struct edu_dev *edu,
		      struct raiser *r, int iters, int timeout, bool kit,
		      struct phase *ph)
{
	unsigned int start = guest_count(vm), raised0 = raiser_raised(r);
	long long irqs0 = proc_interrupts_count("vfio-intx(", edu->bdf);
	u32 value;
	int i, ret = 0;

	write_text_file(TRACEFS "/trace", "");
	for (i = 1; i <= iters; i++) {
		raiser_post(r);
		ret = guest_run_until(vm, GUEST_PORT_POST_EOI, &value, timeout);
		if (ret) {
			tap_diag("%s: raise %d: no interrupt within %d ms",
				 ph->name, i, timeout);
			break;
		}
		if (value != start + i) {
			tap_diag("%s: raise %d: ISR reported %u, expected %u",
				 ph->name, i, value, start + i);
			ret = -EIO;
			break;
		}
	}
	ph->raised = raiser_raised(r) - raised0;
	ph->delivered = guest_count(vm) - start;
	ph->signalled = irqs0 < 0 ? -1 :
			proc_interrupts_count("vfio-intx(", edu->bdf) - irqs0;
	count_pin_sets(gettid(), &ph->by_vcpu, &ph->by_other);
	tap_diag("%s: raised=%u signalled=%lld delivered=%u pin set by vCPU %lld, others %lld",
		 ph->name, ph->raised, ph->signalled, ph->delivered,
		 ph->by_vcpu, ph->by_other);
	tap_result(!ret && phase_once(ph, iters),
		   "%s: %d interrupts raised while the vCPU %s, each delivered once",
		   ph->name, iters, ph->vcpu_state);
	if (kit && ph->by_vcpu >= 0)
		return true;
	tap_skip("stock modules or kvm_set_irq event off: threads not counted");
	return false;
}

/* The guest's posted-interrupt hardware is on: kvm_intel APICv or kvm_amd AVIC. */
static bool apicv_on(void)
{
	char buf[8];

	return kvm_intel_apicv() ||
	       (read_text_file("/sys/module/kvm_amd/parameters/avic", buf,
			       sizeof(buf)) && (buf[0] == 'Y' || buf[0] == '1'));
}

/*
 * The vCPU thread (the caller) on the last CPU, the raiser and the edu's
 * host irq on CPU 0.  False with one CPU or when an affinity cannot be set.
 */
static bool vcpu_apart(struct raiser *r, const char *bdf)
{
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (ncpus < 2)
		return false;
	CPU_ZERO(&set);
	CPU_SET(ncpus - 1, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return false;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (pthread_setaffinity_np(r->thread, sizeof(set), &set))
		return false;
	return proc_irq_pin("vfio-intx(", bdf, 0) > 0;
}

/* A guest waiting for the edu's INTx on TEST_GSI, halted or spinning. */
static struct lite_vm *intx_guest(struct edu_dev *edu, u32 extra_flags,
				  int timeout)
{
	struct guest_params params = raiser_intx_guest(TEST_GSI, EDU_BAR0_GPA,
						       extra_flags);
	struct lite_vm *vm = __vm_create(IRQCHIP_KERNEL);

	if (vm && !vm_add_memory(vm, EDU_BAR0_GPA, edu->bar0, edu->bar0_size) &&
	    !vm_start_guest(vm, &params) &&
	    !guest_run_until(vm, GUEST_PORT_READY, NULL, timeout))
		return vm;
	vm_destroy(vm);
	return NULL;
}

/*
 * Deassigns the irqfd from @from and assigns it to a new guest with @flags
 * (GUEST_F_*).  Returns that guest, or NULL; *@irqfd_vm is the guest that
 * holds the irqfd afterwards (NULL if none).
 */
static struct lite_vm *move_irqfd(struct lite_vm *from, struct edu_dev *edu,
				  u32 flags, s32 trigger, s32 resample,
				  int timeout, struct lite_vm **irqfd_vm)
{
	struct lite_vm *to;
	int ret;

	__vm_irqfd(from, trigger, TEST_GSI, KVM_IRQFD_FLAG_DEASSIGN, 0);
	*irqfd_vm = NULL;
	to = intx_guest(edu, flags, timeout);
	ret = to ? __vm_irqfd(to, trigger, TEST_GSI, KVM_IRQFD_FLAG_RESAMPLE,
			      resample) : -ENOMEM;
	if (ret)
		tap_diag("new VM or its KVM_IRQFD: %s", strerror(-ret));
	else
		*irqfd_vm = to;
	return to;
}

/* Thread counts of a phase the work item must serve alone. */
static void check_work_sets(const struct phase *ph)
{
	tap_result(ph->by_vcpu == 0 && ph->by_other == ph->raised,
		   "%s: pin asserted for %u interrupts %lld times by other threads, %lld by the vCPU thread (want %u, 0)",
		   ph->name, ph->raised, ph->by_other, ph->by_vcpu, ph->raised);
}

/* Thread counts of a phase: most by the vCPU thread with the kit's path. */
static void check_vcpu_sets(const struct phase *ph)
{
	/*
	 * Each interrupt asserts the pin once; a raise that found the vCPU
	 * outside KVM_RUN (or in guest mode with posted interrupts) falls
	 * back to the work item, so only most (not all) are the vCPU's.
	 */
	tap_result(ph->by_vcpu + ph->by_other == ph->raised &&
		   ph->by_vcpu * 2 > ph->raised,
		   "%s: pin asserted %lld times for %u interrupts, %lld by the vCPU thread",
		   ph->name, ph->by_vcpu + ph->by_other, ph->raised, ph->by_vcpu);
}

int main(void)
{
	int iters = test_iterations(200);
	int timeout = test_timeout_ms();
	struct phase vcpu_ph = { .name = "irqfd_vcpu_inject=Y",
				 .vcpu_state = "halts" };
	struct phase work_ph = { .name = "irqfd_vcpu_inject=N",
				 .vcpu_state = "halts" };
	struct phase spin_ph = { .name = "irqfd_vcpu_inject=Y, spinning vCPU",
				 .vcpu_state = "runs" };
	struct phase bcast_ph = { .name = "irqfd_vcpu_inject=Y, broadcast pin",
				  .vcpu_state = "halts" };
	struct raiser r = { .started = false };
	s32 trigger = -1, resample = -1;
	bool intx = false, opened = false;
	bool kit, apart, pinned = false;
	struct lite_vm *vm = NULL, *spin_vm = NULL, *bcast_vm = NULL;
	struct lite_vm *irqfd_vm = NULL;
	struct edu_dev edu;
	char buf[8];
	int ret;
	bool ok;

	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	kit = read_text_file(VCPU_INJECT, buf, sizeof(buf));
	tap_diag("iterations=%d timeout=%d ms gsi=%d, %s", iters, timeout,
		 TEST_GSI, kit ? "kit modules" : "no kvm.irqfd_vcpu_inject (stock)");

	ret = edu_open(&edu);
	if (ret == -ENODEV) {
		tap_skip_rest("no edu device (1234:11e8) on this machine");
		return tap_finish();
	}
	opened = !ret;
	ok = opened && !edu_check_alive(&edu) && !edu_enable_bus_master(&edu);
	if (!tap_result(ok, "edu opened through vfio-pci, BAR0 mapped and alive"))
		goto out;

	vm = intx_guest(&edu, 0, timeout);
	if (!tap_result(!!vm, "guest ready, IOAPIC pin %d level-triggered", TEST_GSI))
		goto out;

	trigger = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	resample = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ret = trigger < 0 || resample < 0 ? -errno :
	      __vm_irqfd(vm, trigger, TEST_GSI, KVM_IRQFD_FLAG_RESAMPLE, resample);
	irqfd_vm = ret ? NULL : vm;
	if (irqfd_vm)
		ret = vfio_set_irqs(edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX,
				    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &trigger);
	intx = irqfd_vm && !ret;
	if (intx)
		ret = vfio_set_irqs(edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX,
				    VFIO_IRQ_SET_ACTION_UNMASK, 0, 1, &resample);
	if (ret)
		tap_diag("KVM_IRQFD / VFIO_DEVICE_SET_IRQS: %s", strerror(-ret));
	if (!tap_result(intx && !ret,
			"edu INTx -> resampling KVM_IRQFD on GSI %d", TEST_GSI))
		goto out;

	if (!tap_result(!raiser_start(&r, &edu, RAISE_DELAY_US),
			"raiser thread started"))
		goto out;

	/* Phase 1: the default (Y with the kit). */
	if (run_phase(vm, &edu, &r, iters, timeout, kit, &vcpu_ph))
		check_vcpu_sets(&vcpu_ph);

	/* Phase 2: the work item, as stock. */
	if (kit && !write_text_file(VCPU_INJECT, "N"))
		tap_diag("cannot write %s", VCPU_INJECT);
	if (run_phase(vm, &edu, &r, iters, timeout, kit, &work_ph))
		check_work_sets(&work_ph);
	if (kit)
		write_text_file(VCPU_INJECT, "Y");

	ret = guest_run_quiet(vm, QUIET_MS);
	tap_result(ret == 0, "no extra delivery in a %d ms quiet window",
		   QUIET_MS);

	/* Phase 3: the same line into a second VM whose vCPU spins. */
	spin_vm = move_irqfd(vm, &edu, GUEST_F_SPIN, trigger, resample,
			     timeout, &irqfd_vm);
	if (!tap_result(!!irqfd_vm, "second VM, vCPU spinning in the guest, irqfd moved to it"))
		goto out;
	apart = vcpu_apart(&r, edu.bdf);
	pinned = true;
	if (!run_phase(spin_vm, &edu, &r, iters, timeout, kit, &spin_ph))
		;	/* reported skipped */
	else if (!apart)
		tap_skip("one CPU, or affinity not settable: the vCPU may not be in guest mode");
	else if (apicv_on())
		tap_skip("APICv/AVIC on: the work item posts the vector, threads not counted");
	else
		check_vcpu_sets(&spin_ph);

	/* Phase 4: a third VM, halted, its pin sent to every APIC. */
	bcast_vm = move_irqfd(spin_vm, &edu, GUEST_F_BROADCAST, trigger,
			      resample, timeout, &irqfd_vm);
	if (!tap_result(!!irqfd_vm, "third VM, IOAPIC pin to destination 0xff, irqfd moved to it"))
		goto out;
	if (run_phase(bcast_vm, &edu, &r, iters, timeout, kit, &bcast_ph))
		check_work_sets(&bcast_ph);

out:
	raiser_stop(&r);
	/* While the line is requested: its name is in /proc/interrupts. */
	if (pinned)
		proc_irq_unpin("vfio-intx(", edu.bdf);
	if (opened)
		edu_write(&edu, EDU_REG_IRQ_ACK, ~0u);
	if (intx)
		vfio_set_irqs(edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX,
			      VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	if (irqfd_vm)
		__vm_irqfd(irqfd_vm, trigger, TEST_GSI,
			   KVM_IRQFD_FLAG_DEASSIGN, 0);
	if (trigger >= 0)
		close(trigger);
	if (resample >= 0)
		close(resample);
	vm_destroy(bcast_vm);
	vm_destroy(spin_vm);
	vm_destroy(vm);
	edu_close(&edu);
	return tap_finish();
}
