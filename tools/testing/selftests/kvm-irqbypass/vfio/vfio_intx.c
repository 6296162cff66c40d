// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_intx: the edu's level INTx reaches an L2 guest through vfio-pci's
 * INTx eventfd and a resampling KVM_IRQFD on an IOAPIC pin.
 *
 * This is the full level-triggered loop a VMM builds for an assigned
 * device: vfio masks the host line and signals the trigger eventfd; KVM
 * asserts the guest's IOAPIC pin; the guest ISR acks the device itself,
 * through BAR0 mapped into guest memory, then EOIs; KVM's resampler
 * deasserts the pin and signals the resamplefd, which vfio consumes to
 * unmask the host line.  A missed unmask shows up as a lost interrupt, a
 * missed device ack as a storm of extra deliveries.
 *
 * With the kit's fast path on, vfio's INTx handler hands each interrupt to
 * the irqfd from hard irq: the vfio_fastpath tracepoints must count one hit
 * per interrupt and no miss (the IOAPIC pin through the irqfd's inject
 * work, the split irqchip's MSI route atomically).  With stock modules or
 * vfio_pci_core.fastpath=0 that check is skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fastpath_trace.h"
#include "kvm_util_lite.h"
#include "proc_util.h"
#include "tap.h"
#include "vfio_util_lite.h"

/*
 * vfio_intx_split.c builds this file with VFIO_INTX_SPLIT=1: the same loop
 * on a split irqchip with KVM_CAP_SPLIT_IRQCHIP_RESAMPLE and NO_EOI_EXIT.
 * The test plays the userspace IOAPIC: it routes GSI 5 as a level MSI.
 */
#ifndef VFIO_INTX_SPLIT
#define VFIO_INTX_SPLIT	0
#endif
/*
 * vfio_intx_shared.c builds it with VFIO_INTX_SHARED=1: a second edu on the
 * same host INTx line, its INTx signalled to an eventfd of its own, raises
 * before each of the first edu's interrupts.  The line's other handler must
 * see IRQ_NONE from ours and the guest must never see those interrupts.
 * VFIO_INTX_SHARED=2 (vfio_intx_shared_mixed.c) requests the other edu's
 * line with vfio_pci_core.fastpath=0, i.e. stock's handler, which
 * PREEMPT_RT force-threads: the two handlers must agree on IRQF_ONESHOT.
 */
#ifndef VFIO_INTX_SHARED
#define VFIO_INTX_SHARED	0
#endif
#if VFIO_INTX_SPLIT
#include "linux/kvm_kit.h"
#define TEST_IRQCHIP	IRQCHIP_SPLIT
#define GUEST_FLAGS	0
#define NR_TESTS	10
#elif VFIO_INTX_SHARED
#define TEST_IRQCHIP	IRQCHIP_KERNEL
#define GUEST_FLAGS	(GUEST_F_IOAPIC | GUEST_F_LEVEL)
#define NR_TESTS	11
#else
#define TEST_IRQCHIP	IRQCHIP_KERNEL
#define GUEST_FLAGS	(GUEST_F_IOAPIC | GUEST_F_LEVEL)
#define NR_TESTS	9
#endif

#define TEST_GSI	5
#define EDU_BAR0_GPA	0xe0000000u
#define QUIET_MS	1000

/* Split irqchip: the capability and the pin's level MSI route. */
static int setup_split(struct lite_vm *vm)
{
#if VFIO_INTX_SPLIT
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_SPLIT_IRQCHIP_RESAMPLE,
		.args[0] = KVM_SPLIT_RESAMPLE_NO_EOI_EXIT,
	};
	struct {
		struct kvm_irq_routing hdr;
		struct kvm_irq_routing_entry e;
	} t = {
		.hdr.nr = 1,
		.e = { .gsi = TEST_GSI, .type = KVM_IRQ_ROUTING_MSI,
		       .u.msi = { .address_lo = LAPIC_BASE,
				  /* level trigger, assert */
				  .data = TEST_LEVEL_VECTOR | 0xc000 } },
	};

	if (ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap) < 0 ||
	    ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, &t) < 0) {
		tap_diag("split irqchip resample setup: %s", strerror(errno));
		return -errno;
	}
#else
	(void)vm;
#endif
	return 0;
}

#define FASTPATH_PARAM	"/sys/module/vfio_pci_core/parameters/fastpath"

/* The second edu of the shared-line variant. */
struct other_edu {
	struct edu_dev edu;
	bool open;
	bool intx;
	bool stock;	/* requested with fastpath=0 (VFIO_INTX_SHARED=2) */
	int efd;
	unsigned int raised;
	unsigned int signalled;	/* exactly one eventfd count per raise */
	unsigned int bad;	/* raises not signalled exactly once */
};

static int host_irq_of(const char *bdf)
{
	char path[256];
	long irq = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/irq", bdf);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &irq) != 1)
		irq = -1;
	fclose(f);
	return (int)irq;
}

/* 0, -ENODEV (no second edu on the line: skip), or -errno. */
static int other_open(struct other_edu *o, struct edu_dev *edu)
{
	int ret;

	o->efd = -1;
	ret = edu_open_nth(&o->edu, 1);
	if (ret)
		return ret;
	o->open = true;
	if (host_irq_of(o->edu.bdf) != host_irq_of(edu->bdf) ||
	    host_irq_of(edu->bdf) <= 0) {
		tap_diag("edu %s on host irq %d, edu %s on %d: not shared",
			 edu->bdf, host_irq_of(edu->bdf), o->edu.bdf,
			 host_irq_of(o->edu.bdf));
		return -ENODEV;
	}
	o->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (o->efd < 0 || edu_check_alive(&o->edu))
		return -EIO;
	if (VFIO_INTX_SHARED == 2 && fastpath_enabled()) {
		o->stock = write_text_file(FASTPATH_PARAM, "N");
		if (!o->stock)
			return -EIO;
	}
	ret = vfio_set_irqs(o->edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &o->efd);
	if (o->stock && !write_text_file(FASTPATH_PARAM, "Y"))
		ret = ret ?: -EIO;
	o->intx = !ret;
	return ret;
}

/*
 * One interrupt of the other edu: signalled once on its eventfd, then
 * acked at the device and unmasked through vfio, as a VMM would.
 */
static void other_raise(struct other_edu *o, int timeout_ms)
{
	u64 cnt = 0;
	int waited;

	o->raised++;
	edu_write(&o->edu, EDU_REG_IRQ_RAISE, 1);
	for (waited = 0; waited < timeout_ms; waited++) {
		if (read(o->efd, &cnt, sizeof(cnt)) == sizeof(cnt))
			break;
		usleep(1000);
	}
	edu_write(&o->edu, EDU_REG_IRQ_ACK, ~0u);
	vfio_set_irqs(o->edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX,
		      VFIO_IRQ_SET_ACTION_UNMASK, 0, 1, NULL);
	if (cnt == 1)
		o->signalled++;
	else if (!o->bad++)
		tap_diag("other edu, raise %u: eventfd count %llu",
			 o->raised, (unsigned long long)cnt);
}

static void other_close(struct other_edu *o)
{
	if (o->intx)
		vfio_set_irqs(o->edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX,
			      VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	if (o->efd >= 0)
		close(o->efd);
	if (o->open)
		edu_close(&o->edu);
}

int main(void)
{
	int iters = test_iterations(500);
	int timeout = test_timeout_ms();
	struct guest_params params = {
		.flags = GUEST_FLAGS,
		.vector = TEST_LEVEL_VECTOR,
		.ioapic_pin = TEST_GSI,
		.ack_addr = EDU_BAR0_GPA + EDU_REG_IRQ_ACK,
		.ack_value = 1,
		.post_eoi_port = GUEST_PORT_POST_EOI,
		.target = iters,
	};
	unsigned int raised = 0, delivered = 0, unacked = 0;
	long long irqs_before, signalled = -1, hits = 0, misses = 0;
	bool fast = false;
	int host_irq = -1;
	s32 trigger = -1, resample = -1;
	struct lite_vm *vm = NULL;
	bool irqfd = false, intx = false;
	struct other_edu other = { .efd = -1 };
	struct edu_dev edu;
	u32 value;
	int i, ret;
	bool ok;

	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	tap_diag("iterations=%d timeout=%d ms gsi=%d", iters, timeout,
		 TEST_GSI);

	ret = edu_open(&edu);
	if (ret == -ENODEV) {
		tap_skip_rest("no edu device (1234:11e8) on this machine");
		return tap_finish();
	}
	ok = !ret && !edu_check_alive(&edu) && !edu_enable_bus_master(&edu);
	if (ok && vfio_irq_count(edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX) != 1) {
		tap_diag("edu reports no INTx");
		ok = false;
	}
	if (!tap_result(ok, "edu opened through vfio-pci, BAR0 mapped and alive"))
		goto out;

	vm = __vm_create(TEST_IRQCHIP);
	ok = vm && !setup_split(vm) && !vm_add_memory(vm, EDU_BAR0_GPA, edu.bar0,
				  edu.bar0_size) &&
	     !vm_start_guest(vm, &params) &&
	     !guest_run_until(vm, GUEST_PORT_READY, NULL, timeout);
	if (!tap_result(ok, "guest ready, edu BAR0 mapped at GPA 0x%x",
			EDU_BAR0_GPA))
		goto out;

	trigger = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	resample = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ret = trigger < 0 || resample < 0 ? -errno :
	      __vm_irqfd(vm, trigger, TEST_GSI, KVM_IRQFD_FLAG_RESAMPLE, resample);
	if (ret)
		tap_diag("KVM_IRQFD(RESAMPLE): %s", strerror(-ret));
	irqfd = !ret;
	/* vfio only accepts the unmask eventfd once INTx is enabled. */
	if (irqfd) {
		ret = vfio_set_irqs(edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX,
				    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &trigger);
		if (ret)
			tap_diag("VFIO_DEVICE_SET_IRQS(INTx trigger): %s",
				 strerror(-ret));
		intx = !ret;
	}
	if (intx) {
		ret = vfio_set_irqs(edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX,
				    VFIO_IRQ_SET_ACTION_UNMASK, 0, 1, &resample);
		if (ret)
			tap_diag("VFIO_DEVICE_SET_IRQS(INTx unmask): %s",
				 strerror(-ret));
	}
	if (!tap_result(irqfd && intx && !ret,
			"edu INTx -> eventfd -> resampling KVM_IRQFD on GSI %d, unmask via resamplefd",
			TEST_GSI))
		goto out;

	if (VFIO_INTX_SHARED) {
		ret = other_open(&other, &edu);
		if (ret == -ENODEV) {
			tap_skip_rest("needs a second edu on the same host INTx line");
			goto out;
		}
		if (!tap_result(!ret, "second edu %s on host irq %d, own eventfd (%s handler)",
				other.edu.bdf, host_irq_of(edu.bdf),
				other.stock ? "stock" : "the same"))
			goto out;
	}

	irqs_before = proc_interrupts_count("vfio-intx(", edu.bdf);
	host_irq = proc_interrupts_irq("vfio-intx(", edu.bdf);
	fast = fastpath_enabled() && host_irq > 0 && fastpath_trace_start();
	tap_diag("host irq %d, fast path %s", host_irq,
		 fast ? "on (tracepoints counted)" : "off or stock modules");
	for (i = 1; i <= iters; i++) {
		if (VFIO_INTX_SHARED)
			other_raise(&other, timeout);
		edu_write(&edu, EDU_REG_IRQ_RAISE, 1);
		raised++;
		if (guest_run_until(vm, GUEST_PORT_POST_EOI, &value, timeout))
			break;
		delivered = guest_count(vm);
		/* The guest's ack went straight to the device. */
		if (edu_read(&edu, EDU_REG_IRQ_STATUS) && !unacked++)
			tap_diag("raise %d: edu status still set after the ISR",
				 i);
		if (value != (u32)i || delivered != (u32)i) {
			tap_diag("raise %d: ISR reported %u, guest count %u", i,
				 value, delivered);
			break;
		}
	}
	delivered = guest_count(vm);
	if (irqs_before >= 0)
		signalled = proc_interrupts_count("vfio-intx(", edu.bdf) -
			    irqs_before;
	tap_diag("%s: raised=%u signalled=%lld delivered=%u unacked=%u eoi_exits=%u",
		 irqchip_name(TEST_IRQCHIP), raised, signalled, delivered,
		 unacked, vm->vcpu[0].eoi_exits);
	tap_result(raised == (unsigned int)iters && delivered == raised &&
		   !unacked,
		   "%d edu INTx interrupts delivered and acked by the guest",
		   iters);
	/*
	 * The host line may be shared with other devices, so the count can
	 * only be a lower bound; each raise must have fired it at least once.
	 */
	tap_result(signalled >= raised,
		   "host saw a vfio-intx interrupt for every raise");
	if (fast) {
		fastpath_trace_count(host_irq, &hits, &misses);
		fastpath_trace_stop();
		/* The other edu's trigger has no irqfd: all misses. */
		tap_result(hits == (long long)raised &&
			   misses == (long long)(other.stock ? 0 : other.raised),
			   "fast path: %lld hits, %lld misses for %u interrupts (%u of the other edu)",
			   hits, misses, raised, other.raised);
	} else {
		tap_skip("fast path off or stock modules: no hit count");
	}
#if VFIO_INTX_SPLIT
	tap_result(raised && vm->vcpu[0].eoi_exits == 0,
		   "no KVM_EXIT_IOAPIC_EOI to userspace (%u for %u interrupts)",
		   vm->vcpu[0].eoi_exits, raised);
#endif

	if (VFIO_INTX_SHARED)
		tap_result(other.raised == (unsigned int)iters &&
			   other.signalled == other.raised,
			   "other edu on the line: %u of %u interrupts signalled once on its own eventfd, none to the guest",
			   other.signalled, other.raised);

	ret = guest_run_until(vm, GUEST_PORT_DONE, &value, timeout);
	tap_result(!ret && value == (u32)iters,
		   "guest reported done at count %d", iters);

	ret = guest_run_quiet(vm, QUIET_MS);
	tap_result(ret == 0, "no extra delivery in a %d ms quiet window", QUIET_MS);

	/* Lower the line before disabling, so the host IRQ stays quiet. */
	edu_write(&edu, EDU_REG_IRQ_ACK, ~0u);
	ret = vfio_set_irqs(edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	if (ret)
		tap_diag("VFIO_DEVICE_SET_IRQS(INTx, count 0): %s",
			 strerror(-ret));
	intx = false;
	ok = !ret;
	ret = __vm_irqfd(vm, trigger, TEST_GSI, KVM_IRQFD_FLAG_DEASSIGN, 0);
	if (ret)
		tap_diag("KVM_IRQFD deassign: %s", strerror(-ret));
	irqfd = false;
	tap_result(ok && !ret, "INTx disabled and irqfd deassigned cleanly");

out:
	if (intx)
		vfio_set_irqs(edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX,
			      VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	if (irqfd)
		__vm_irqfd(vm, trigger, TEST_GSI, KVM_IRQFD_FLAG_DEASSIGN, 0);
	if (trigger >= 0)
		close(trigger);
	if (resample >= 0)
		close(resample);
	other_close(&other);
	/* Drop the memslot that points at the BAR before unmapping the BAR. */
	vm_destroy(vm);
	edu_close(&edu);
	return tap_finish();
}
