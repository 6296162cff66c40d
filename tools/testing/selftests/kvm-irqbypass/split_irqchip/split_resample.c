// SPDX-License-Identifier: GPL-2.0-only
/*
 * split_resample: KVM_CAP_SPLIT_IRQCHIP_RESAMPLE (include/uapi/linux/
 * kvm_kit.h, Documentation/split-irqchip-resample.rst).
 *
 * The VM has a split irqchip, so the IOAPIC is "userspace": this test plays
 * the VMM and routes the guest's IOAPIC pins as MSIs itself, level
 * triggered with the trigger bit in the MSI data, as QEMU does once the
 * guest has programmed its redirection table.  A resampling KVM_IRQFD on
 * the pin's GSI raises it; the guest ISR exits before and after its EOI.
 * Each case runs on a fresh VM and checks the outcome the document defines.
 * Besides: a device thread that raises again at a route change's resample
 * while the vCPU's thread runs the guest, the three threads (with the one
 * in KVM_SET_GSI_ROUTING) ordered on one CPU by SCHED_FIFO; a VM reserving
 * 255 IOAPIC pins (and one asking 320, of which KVM keeps 64); and the
 * VMM's own IOAPIC raising a pin that also has a resampling irqfd
 * (KVM_IRQ_LINE).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "linux/kvm_kit.h"
#include "kvm_util_lite.h"
#include "race.h"
#include "tap.h"
#include "vthread.h"

#define GSI_A		5
#define GSI_B		7
#define GSI_C		9
#define GSI_D		10
#define VECTOR2		0x58
#define MSI_DATA_LEVEL	0xc000	/* bit 15 level trigger, bit 14 assert */
#define QUIET_MS	300
#define HIGH_PINS	255	/* IOAPIC pins reserved in cases 17-18 */
#define ASKED_PINS	320	/* case 23: what KVM keeps of it (a u8) */
#define LINE_ROUNDS	3	/* interrupts per phase in cases 19-22 */
#define NR_TESTS	23

struct route {
	u32 gsi;
	u32 vector;
	bool level;
	u32 dest;	/* physical APIC ID */
};

struct counters {
	unsigned int raised, delivered, resampled, early, missing;
};

static int set_routes(struct lite_vm *vm, const struct route *r, int n)
{
	struct {
		struct kvm_irq_routing hdr;
		struct kvm_irq_routing_entry e[8];
	} t;
	int i;

	memset(&t, 0, sizeof(t));
	t.hdr.nr = n;
	for (i = 0; i < n; i++) {
		t.e[i].gsi = r[i].gsi;
		t.e[i].type = KVM_IRQ_ROUTING_MSI;
		t.e[i].u.msi.address_lo = LAPIC_BASE | r[i].dest << 12;
		t.e[i].u.msi.data = r[i].vector |
				    (r[i].level ? MSI_DATA_LEVEL : 0);
	}
	if (ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, &t) < 0) {
		tap_diag("KVM_SET_GSI_ROUTING: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int enable_cap(struct lite_vm *vm, u64 flags)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_SPLIT_IRQCHIP_RESAMPLE,
		.args[0] = flags,
	};

	return ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap) < 0 ? -errno : 0;
}

/*
 * A split-irqchip VM reserving @pins IOAPIC pins, with the capability, the
 * guest ready and IF set.
 */
static struct lite_vm *setup_pins(u32 pins, u64 flags, const struct route *r,
				  int n, int timeout)
{
	struct guest_params params = {
		.vector = TEST_LEVEL_VECTOR,
		.pre_eoi_port = GUEST_PORT_PRE_EOI,
		.post_eoi_port = GUEST_PORT_POST_EOI,
		.target = ~0u,
	};
	struct lite_vm *vm = vm_create_split(pins);
	u64 *idt;
	int ret;

	if (!vm)
		return NULL;
	ret = enable_cap(vm, flags);
	if (ret)
		tap_diag("KVM_ENABLE_CAP(SPLIT_IRQCHIP_RESAMPLE, 0x%llx): %s",
			 (unsigned long long)flags, strerror(-ret));
	if (!ret)
		ret = set_routes(vm, r, n);
	if (!ret)
		ret = vm_start_guest(vm, &params);
	if (!ret) {
		/* VECTOR2 runs the same counting ISR (route-change case). */
		idt = (u64 *)(vm->ram + GUEST_IDT_GPA);
		idt[VECTOR2] = idt[TEST_LEVEL_VECTOR];
		ret = guest_run_until(vm, GUEST_PORT_READY, NULL, timeout);
	}
	if (ret) {
		vm_destroy(vm);
		return NULL;
	}
	return vm;
}

static struct lite_vm *setup(u64 flags, const struct route *r, int n,
			     int timeout)
{
	return setup_pins(SPLIT_IRQCHIP_PINS, flags, r, n, timeout);
}

static int resample_irqfd(struct lite_vm *vm, u32 gsi, int *trigger,
			  int *resample)
{
	int ret;

	*trigger = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	*resample = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (*trigger < 0 || *resample < 0)
		return -errno;
	ret = __vm_irqfd(vm, *trigger, gsi, KVM_IRQFD_FLAG_RESAMPLE, *resample);
	if (ret)
		tap_diag("KVM_IRQFD(gsi %u, RESAMPLE): %s", gsi, strerror(-ret));
	return ret;
}

/* Read and reset a resamplefd: the number of signals since the last call. */
static unsigned int take(int fd)
{
	u64 v = 0;

	if (fd_readable(fd) && eventfd_drain(fd, &v))
		return 0;
	return (unsigned int)v;
}

/*
 * The guest's ISR round for an interrupt just raised: the resamplefd must
 * be quiet before the EOI and signalled once after it (when @want_resample).
 */
static int isr_round(struct lite_vm *vm, int resample, bool want_resample,
		     struct counters *c, int timeout)
{
	unsigned int n;
	int ret;

	ret = guest_run_until(vm, GUEST_PORT_PRE_EOI, NULL, timeout);
	if (ret)
		return ret;
	c->delivered = guest_count(vm);
	c->early += take(resample);
	ret = guest_run_until(vm, GUEST_PORT_POST_EOI, NULL, timeout);
	if (ret)
		return ret;
	n = take(resample);
	c->resampled += n;
	if (want_resample && n != 1)
		c->missing++;
	return 0;
}

/* One raise of @trigger and the guest's ISR round. */
static int round_trip(struct lite_vm *vm, int trigger, int resample,
		      bool want_resample, struct counters *c, int timeout)
{
	int ret;

	ret = eventfd_raise(trigger);
	if (ret)
		return ret;
	c->raised++;
	return isr_round(vm, resample, want_resample, c, timeout);
}

static void report(const char *what, const struct counters *c,
		   unsigned int eoi_exits)
{
	tap_diag("%s: raised=%u delivered=%u resampled=%u early=%u missing=%u eoi_exits=%u",
		 what, c->raised, c->delivered, c->resampled, c->early,
		 c->missing, eoi_exits);
}

/* Cases 1-2: the basic loop, with and without the EOI exit. */
static void test_basic(u64 flags, int iters, int timeout)
{
	const struct route r[] = { { GSI_A, TEST_LEVEL_VECTOR, true, 0 } };
	bool noexit = flags & KVM_SPLIT_RESAMPLE_NO_EOI_EXIT;
	struct counters c = { 0 };
	int trigger = -1, resample = -1, i, ret = -1;
	struct lite_vm *vm;

	vm = setup(flags, r, 1, timeout);
	if (vm)
		ret = resample_irqfd(vm, GSI_A, &trigger, &resample);
	for (i = 0; !ret && i < iters; i++)
		ret = round_trip(vm, trigger, resample, true, &c, timeout);
	report(noexit ? "NO_EOI_EXIT" : "EOI exit on", &c,
	       vm ? vm->vcpu[0].eoi_exits : 0);
	tap_result(!ret && c.raised == (unsigned int)iters &&
		   c.delivered == c.raised && c.resampled == c.raised &&
		   !c.early && !c.missing,
		   "%s: %d level MSIs on GSI %d delivered, resamplefd once after each EOI and never before",
		   noexit ? "NO_EOI_EXIT" : "flags 0", iters, GSI_A);
	tap_result(vm && !ret && vm->vcpu[0].eoi_exits == (noexit ? 0 : c.raised),
		   "%s: %u KVM_EXIT_IOAPIC_EOI for %u interrupts (expected %u)",
		   noexit ? "NO_EOI_EXIT" : "flags 0", vm ? vm->vcpu[0].eoi_exits : 0,
		   c.raised, noexit ? 0 : c.raised);
	if (vm)
		tap_result(!ret && guest_run_quiet(vm, QUIET_MS) == 0 &&
			   !fd_readable(resample),
			   "%s: no re-delivery and no resample in a quiet window",
			   noexit ? "NO_EOI_EXIT" : "flags 0");
	else
		tap_result(false, "no VM");
	if (trigger >= 0)
		close(trigger);
	if (resample >= 0)
		close(resample);
	vm_destroy(vm);
}

/*
 * Raise @trigger (GSI @gsi, routed to TEST_LEVEL_VECTOR) and, while its
 * interrupt is in service, move the route to @to: counts the resamples at
 * the change and at the old vector's EOI into *at_change and *at_old_eoi,
 * then raises once more, as a device that still asserts would, for a round
 * trip on the new route.  Returns 0 or -errno.
 */
static int move_in_service(struct lite_vm *vm, u32 gsi,
			   const struct route *to, int trigger, int resample,
			   struct counters *c, unsigned int *at_change,
			   unsigned int *at_old_eoi, int timeout)
{
	unsigned int exits0;
	int ret;

	ret = eventfd_raise(trigger);
	if (ret)
		return ret;
	c->raised++;
	ret = guest_run_until(vm, GUEST_PORT_PRE_EOI, NULL, timeout) ?:
	      set_routes(vm, to, 1);
	*at_change = take(resample);
	exits0 = vm->vcpu[0].eoi_exits;
	if (!ret)
		ret = guest_run_until(vm, GUEST_PORT_POST_EOI, NULL, timeout);
	*at_old_eoi = take(resample);
	tap_diag("GSI %u moved in service: resamples at change %u, at old EOI %u, EOI exits %u",
		 gsi, *at_change, *at_old_eoi,
		 vm->vcpu[0].eoi_exits - exits0);
	/*
	 * The old vector's EOI matches no route any more.  Whether it exits
	 * depends on KVM's EOI exit bitmap for in-service vectors, not on the
	 * capability, so only the resample count is asserted (6.1 and 6.12
	 * generic both showed 0 exits here).
	 */
	return ret ?: round_trip(vm, trigger, resample, true, c, timeout);
}

/*
 * Case 3: the route of an in-service pin moves to another vector: the
 * resamplefd fires at KVM_SET_GSI_ROUTING, not again at the old vector's
 * EOI, and the next interrupt arrives on the new vector and resamples at
 * its EOI.  Case 4: the route goes away (how a VMM that removes a masked
 * pin's route masks it; QEMU keeps the route): resample at the
 * change, a raise is dropped, and restoring the route resamples again.
 */
static void test_route_change(int timeout)
{
	const struct route r1[] = { { GSI_A, TEST_LEVEL_VECTOR, true, 0 } };
	const struct route r2[] = { { GSI_A, VECTOR2, true, 0 } };
	const struct route none[] = { { GSI_B, VECTOR2, true, 0 } };
	struct counters c = { 0 };
	int trigger = -1, resample = -1, ret = -1;
	unsigned int at_change = 0, at_old_eoi = 0;
	struct lite_vm *vm;
	bool ok;

	vm = setup(KVM_SPLIT_RESAMPLE_NO_EOI_EXIT, r1, 1, timeout);
	if (vm)
		ret = resample_irqfd(vm, GSI_A, &trigger, &resample);
	if (!ret)
		ret = move_in_service(vm, GSI_A, r2, trigger, resample, &c,
				      &at_change, &at_old_eoi, timeout);
	ok = !ret && at_change == 1 && at_old_eoi == 0 &&
	     c.delivered == 2 && c.resampled == 1 && !c.early;
	tap_result(ok, "route moved to vector 0x%x in service: %s", VECTOR2,
		   "1 resample at the change, 0 at the old EOI, next one resampled");

	/* Case 4: no route for the pin. */
	ok = false;
	if (!ret && !set_routes(vm, none, 1)) {
		at_change = take(resample);
		eventfd_raise(trigger);
		c.raised++;
		ok = at_change == 1 && guest_run_quiet(vm, QUIET_MS) == 0 &&
		     !fd_readable(resample) && !fd_readable(trigger);
		if (!set_routes(vm, r2, 1)) {
			at_change = take(resample);
			/* A VMM whose device still asserts raises again. */
			c.resampled += at_change;
			ok = ok && at_change == 1 &&
			     !round_trip(vm, trigger, resample, true, &c,
					 timeout) &&
			     c.delivered == 3;
		} else {
			ok = false;
		}
	}
	report("route change/removal", &c, vm ? vm->vcpu[0].eoi_exits : 0);
	tap_result(ok, "pin without a route: %s",
		   "resampled when it goes and comes back, raise dropped, re-raise delivered");
	if (trigger >= 0)
		close(trigger);
	if (resample >= 0)
		close(resample);
	vm_destroy(vm);
}

/* Case 5: an edge MSI route: delivered, never resampled, no EOI exit. */
static void test_edge(int timeout)
{
	const struct route r[] = { { GSI_A, TEST_LEVEL_VECTOR, false, 0 } };
	struct counters c = { 0 };
	int trigger = -1, resample = -1, i, ret = -1;
	struct lite_vm *vm;

	vm = setup(0, r, 1, timeout);
	if (vm)
		ret = resample_irqfd(vm, GSI_A, &trigger, &resample);
	for (i = 0; !ret && i < 10; i++)
		ret = round_trip(vm, trigger, resample, false, &c, timeout);
	report("edge route", &c, vm ? vm->vcpu[0].eoi_exits : 0);
	tap_result(!ret && c.delivered == 10 && c.resampled == 0 &&
		   !c.early && vm->vcpu[0].eoi_exits == 0,
		   "edge MSI route: 10 delivered, resamplefd never signalled, no EOI exit");
	if (trigger >= 0)
		close(trigger);
	if (resample >= 0)
		close(resample);
	vm_destroy(vm);
}

/*
 * Case 6: GSIs A and B (resampling irqfds) and C (no irqfd: the VMM's own
 * IOAPIC drives it) share one vector.  An EOI resamples both A and B; since
 * C has no kernel resampler the EOI still exits despite NO_EOI_EXIT.  Once
 * C's route is gone, the exit stops.  Case 7: GSI D has a resampling
 * irqfd on the same vector but targets APIC ID 1: vCPU 0's EOI does not
 * resample it.
 */
static void test_shared(int timeout)
{
	const struct route r3[] = {
		{ GSI_A, TEST_LEVEL_VECTOR, true, 0 },
		{ GSI_B, TEST_LEVEL_VECTOR, true, 0 },
		{ GSI_C, TEST_LEVEL_VECTOR, true, 0 },
		{ GSI_D, TEST_LEVEL_VECTOR, true, 1 },
	};
	int ta = -1, ra = -1, tb = -1, rb = -1, td = -1, rd = -1, ret = -1;
	struct counters c = { 0 };
	unsigned int b = 0, d = 0, exits0 = 0, i;
	struct lite_vm *vm;

	vm = setup(KVM_SPLIT_RESAMPLE_NO_EOI_EXIT, r3, 4, timeout);
	if (vm)
		ret = resample_irqfd(vm, GSI_A, &ta, &ra) ?:
		      resample_irqfd(vm, GSI_B, &tb, &rb) ?:
		      resample_irqfd(vm, GSI_D, &td, &rd);
	for (i = 0; !ret && i < 10; i++) {
		ret = round_trip(vm, i & 1 ? tb : ta, i & 1 ? rb : ra, true,
				 &c, timeout);
		/* The other shared GSI is resampled by the same EOI. */
		b += take(i & 1 ? ra : rb);
		d += take(rd);
	}
	report("shared vector, GSI C without kernel resampler", &c,
	       vm ? vm->vcpu[0].eoi_exits : 0);
	tap_diag("other shared GSI resampled %u times, other-vCPU GSI %u times",
		 b, d);
	tap_result(!ret && c.delivered == 10 && c.resampled == 10 &&
		   !c.missing && b == 10,
		   "two resampling GSIs on one vector: each EOI resamples both");
	tap_result(!ret && vm->vcpu[0].eoi_exits == 10,
		   "a third GSI on the vector without a kernel resampler keeps the EOI exit (%u for 10)",
		   vm ? vm->vcpu[0].eoi_exits : 0);
	tap_result(!ret && d == 0,
		   "GSI routed to APIC ID 1 on the same vector not resampled by vCPU 0's EOI");

	if (!ret)
		ret = set_routes(vm, r3, 2);
	/* The removed level routes of C and D resample (D has an irqfd). */
	d = take(rd);
	exits0 = vm ? vm->vcpu[0].eoi_exits : 0;
	for (i = 0; !ret && i < 10; i++) {
		ret = round_trip(vm, ta, ra, true, &c, timeout);
		take(rb);
	}
	tap_result(!ret && vm->vcpu[0].eoi_exits == exits0 && c.resampled == 20 &&
		   d == 1,
		   "without GSI C's route: no EOI exit (%u), D resampled once when its route went",
		   vm ? vm->vcpu[0].eoi_exits - exits0 : 0);
	{
		int fds[] = { ta, ra, tb, rb, td, rd };

		for (i = 0; i < ARRAY_SIZE(fds); i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	vm_destroy(vm);
}

/*
 * Case 8: deassign while asserted.  KVM_IRQFD deassign succeeds, nothing is
 * signalled then or at the EOI, and since the GSI has no kernel resampler
 * any more the EOI exits to userspace despite NO_EOI_EXIT: the VMM's
 * IOAPIC gets the EOI as without the capability.
 */
static void test_deassign(int timeout)
{
	const struct route r[] = { { GSI_A, TEST_LEVEL_VECTOR, true, 0 } };
	int trigger = -1, resample = -1, ret = -1, dret = -1;
	unsigned int sig;
	struct lite_vm *vm;

	vm = setup(KVM_SPLIT_RESAMPLE_NO_EOI_EXIT, r, 1, timeout);
	if (vm)
		ret = resample_irqfd(vm, GSI_A, &trigger, &resample);
	if (!ret)
		ret = eventfd_raise(trigger) ?:
		      guest_run_until(vm, GUEST_PORT_PRE_EOI, NULL, timeout);
	if (!ret)
		dret = __vm_irqfd(vm, trigger, GSI_A, KVM_IRQFD_FLAG_DEASSIGN, 0);
	sig = take(resample);
	if (!ret)
		ret = guest_run_until(vm, GUEST_PORT_POST_EOI, NULL, timeout);
	sig += take(resample);
	tap_diag("deassign in service: KVM_IRQFD deassign %d, resamples %u, EOI exits %u",
		 dret, sig, vm ? vm->vcpu[0].eoi_exits : 0);
	tap_result(!ret && !dret && sig == 0 && vm->vcpu[0].eoi_exits == 1 &&
		   vm->vcpu[0].last_eoi_vector == TEST_LEVEL_VECTOR,
		   "deassign while asserted: no resample, the EOI exits to userspace once");
	if (trigger >= 0)
		close(trigger);
	if (resample >= 0)
		close(resample);
	vm_destroy(vm);
}

/* The device's raise lets the vCPU thread go on, to the guest's DONE. */
static void run_to_done(void *arg)
{
	vt_post(arg, VT_RUN_UNTIL, GUEST_PORT_DONE, test_timeout_ms());
}

/*
 * Case 16: a route change that races with the vCPU's rescan of its EOI
 * vectors.  KVM EOIs a vector in the kernel (and resamples it) only if the
 * vCPU's ioapic_handled_vectors contain it, and a vCPU recomputes those
 * only on the KVM_REQ_SCAN_IOAPIC that KVM_SET_GSI_ROUTING makes.  GSI A
 * moves from TEST_LEVEL_VECTOR to VECTOR2 while its interrupt is in
 * service; the change resamples it and the device, whose line still
 * asserts (vfio INTx), raises its irqfd again at once, now for VECTOR2.  A
 * resample signalled before the scan request lets the vCPU take and EOI
 * VECTOR2 with its old vectors, unseen: the device stays masked for good.
 *
 * The vCPU's thread, the device and this thread (in KVM_SET_GSI_ROUTING)
 * run on one CPU in that order of priority (race_cpu_enter()), so on a
 * fully preemptible kernel the device runs at the resample and the vCPU
 * right after the raise, inside the ioctl: VECTOR2's EOI must still be
 * resampled, once.
 */
static void test_route_race(int timeout)
{
	const struct route r1[] = { { GSI_A, TEST_LEVEL_VECTOR, true, 0 } };
	const struct route r2[] = { { GSI_A, VECTOR2, true, 0 } };
	struct reraiser dev = { .wait_ms = timeout, .quiet_ms = QUIET_MS };
	int trigger = -1, resample = -1, ret = -1, vret = -1;
	struct guest_params *p = NULL;
	struct counters c = { 0 };
	struct vthread vt = { 0 };
	struct race_cpu rc;
	struct lite_vm *vm;
	bool ok;

	vm = setup(KVM_SPLIT_RESAMPLE_NO_EOI_EXIT, r1, 1, timeout);
	if (vm)
		ret = resample_irqfd(vm, GSI_A, &trigger, &resample) ?:
		      vt_start(&vt, &vm->vcpu[0]) ?: eventfd_raise(trigger);
	/* In service, on the thread that will race (its first KVM_RUN). */
	if (!ret) {
		c.raised++;
		ret = vt_until(&vt, GUEST_PORT_PRE_EOI, timeout);
		c.early = take(resample);
	}
	if (!ret) {
		ret = race_cpu_enter(&rc);
		if (ret == -EPERM) {
			tap_skip("SCHED_FIFO not allowed: cannot order the threads of the race");
			goto out;
		}
	}
	if (!ret) {
		/* From here no exit but DONE, after VECTOR2's EOI (count 2). */
		p = vm->vcpu[0].params;
		p->pre_eoi_port = 0;
		p->post_eoi_port = 0;
		p->target = 2;
		dev.trigger = trigger;
		dev.resample = resample;
		dev.after_raise = run_to_done;
		dev.arg = &vt;
		/* Each runs at once and sleeps: in poll(), in a condvar. */
		ret = race_cpu_add(&rc, vt.thread, RACE_PRIO_VCPU) ?:
		      reraiser_start(&dev, rc.cpu, RACE_PRIO_DEVICE);
		if (!ret) {
			ret = set_routes(vm, r2, 1);
			reraiser_join(&dev);
			vret = dev.raised ? vt_wait(&vt) : -ENOENT;
		}
		race_cpu_leave(&rc);
	}
	c.raised += dev.raised;
	c.resampled += dev.resampled;
	c.delivered = vm ? guest_count(vm) : 0;
	race_preempt_diag("KVM_SET_GSI_ROUTING");
	tap_diag("  device: %d, resampled %u (change + VECTOR2's EOI), %u doubled; vCPU: %d",
		 dev.ret, dev.resampled, dev.doubled, vret);
	ok = !ret && !vret && !dev.ret && dev.raised == 1 &&
	     dev.resampled == 2 && !dev.doubled && c.delivered == 2 &&
	     !c.early;
	/* The next one, on this thread and with the ISR's exits back. */
	if (p) {
		p->pre_eoi_port = GUEST_PORT_PRE_EOI;
		p->post_eoi_port = GUEST_PORT_POST_EOI;
		p->target = ~0u;
	}
	if (ok) {
		ret = round_trip(vm, trigger, resample, true, &c, timeout);
		ok = !ret && c.delivered == 3 && c.resampled == 3 &&
		     !c.missing && !c.early &&
		     guest_run_quiet(vm, QUIET_MS) == 0 &&
		     !fd_readable(resample);
	}
	report("route change racing the EOI vector scan", &c,
	       vm ? vm->vcpu[0].eoi_exits : 0);
	tap_result(ok,
		   "route moved to vector 0x%x in service, the device re-raises at the resample: %s",
		   VECTOR2, "the new vector's EOI resampled once, then the next one");
out:
	vt_stop(&vt);
	if (trigger >= 0)
		close(trigger);
	if (resample >= 0)
		close(resample);
	vm_destroy(vm);
}

/*
 * Cases 17-18: case 3 on a VM whose split irqchip reserves HIGH_PINS IOAPIC
 * pins, the most KVM can hold (kvm_arch.nr_reserved_ioapic_pins is a u8),
 * for its last pin and, as a control, GSI 5: one resample at the change
 * for either.  The kernel's map of changed pins is sized to the pins.
 */
/*
 * Case 23: KVM_CAP_SPLIT_IRQCHIP accepts up to KVM_MAX_IRQ_ROUTES pins but
 * keeps the count in a u8, so asking for 320 reserves 64: GSI 300 is no
 * IOAPIC pin, and a resampling irqfd on it is EINVAL, as documented for a
 * GSI at or above the reserved pins.  GSI 63 is one.
 */
static void test_asked_pins(int timeout)
{
	const struct route r[] = { { 300, TEST_LEVEL_VECTOR, true, 0 },
				   { 63, VECTOR2, true, 0 } };
	int trigger = -1, resample = -1, r300 = -1, r63 = -1;
	struct lite_vm *vm;

	vm = setup_pins(ASKED_PINS, KVM_SPLIT_RESAMPLE_NO_EOI_EXIT, r, 2,
			timeout);
	if (vm) {
		r300 = resample_irqfd(vm, 300, &trigger, &resample);
		if (trigger >= 0)
			close(trigger);
		if (resample >= 0)
			close(resample);
		trigger = -1;
		resample = -1;
		r63 = resample_irqfd(vm, 63, &trigger, &resample);
	}
	tap_result(vm && r300 == -EINVAL && r63 == 0,
		   "%u pins asked, %u kept: resample irqfd on GSI 300 %s, on GSI 63 %s",
		   ASKED_PINS, ASKED_PINS & 0xff, strerror(-r300),
		   r63 ? strerror(-r63) : "accepted");
	if (trigger >= 0)
		close(trigger);
	if (resample >= 0)
		close(resample);
	vm_destroy(vm);
}

static void test_high_pin(u32 gsi, int timeout)
{
	const struct route r1[] = { { gsi, TEST_LEVEL_VECTOR, true, 0 } };
	const struct route r2[] = { { gsi, VECTOR2, true, 0 } };
	int trigger = -1, resample = -1, ret = -1;
	unsigned int at_change = 0, at_old_eoi = 0;
	struct counters c = { 0 };
	struct lite_vm *vm;

	vm = setup_pins(HIGH_PINS, KVM_SPLIT_RESAMPLE_NO_EOI_EXIT, r1, 1,
			timeout);
	if (vm)
		ret = resample_irqfd(vm, gsi, &trigger, &resample);
	if (!ret)
		ret = move_in_service(vm, gsi, r2, trigger, resample, &c,
				      &at_change, &at_old_eoi, timeout);
	c.resampled += at_change + at_old_eoi;
	report(gsi == HIGH_PINS - 1 ? "last pin of 255" : "pin 5 of 255", &c,
	       vm ? vm->vcpu[0].eoi_exits : 0);
	tap_result(!ret && at_change == 1 && at_old_eoi == 0 &&
		   c.raised == 2 && c.delivered == 2 && c.resampled == 2 &&
		   !c.early && !c.missing,
		   "GSI %u of %u pins moved to vector 0x%x in service: %s", gsi,
		   HIGH_PINS, VECTOR2,
		   "1 resample at the change, 0 at the old EOI, next one resampled");
	if (trigger >= 0)
		close(trigger);
	if (resample >= 0)
		close(resample);
	vm_destroy(vm);
}

/* How GSI A is raised: its irqfd, and/or the VMM's own IOAPIC. */
#define BY_IRQFD	0x1
#define BY_LINE		0x2	/* KVM_IRQ_LINE(gsi, 1) */
#define BY_LINE_STATUS	0x4	/* KVM_IRQ_LINE_STATUS(gsi, 1) */

/*
 * Level 1 only: QEMU's split IOAPIC calls KVM_IRQ_LINE(pin, 1) for a level
 * pin and never lowers it in KVM; Remote IRR holds off the next one until
 * the EOI exit.
 */
static int raise_by(struct lite_vm *vm, unsigned int by, int trigger)
{
	struct kvm_irq_level line = { .irq = GSI_A, .level = 1 };
	int ret = 0;

	if ((by & BY_LINE) && ioctl(vm->vm_fd, KVM_IRQ_LINE, &line) < 0)
		ret = -errno;
	if (!ret && (by & BY_LINE_STATUS) &&
	    ioctl(vm->vm_fd, KVM_IRQ_LINE_STATUS, &line) < 0)
		ret = -errno;
	if (ret)
		tap_diag("KVM_IRQ_LINE%s(%d, 1): %s",
			 by & BY_LINE_STATUS ? "_STATUS" : "", GSI_A,
			 strerror(-ret));
	if (!ret && (by & BY_IRQFD))
		ret = eventfd_raise(trigger);
	return ret;
}

/*
 * Cases 19-22: GSI A has a level route and a resampling irqfd, and the
 * VMM's own IOAPIC drives the same pin too, as QEMU's split IOAPIC does for
 * an emulated level device.  With NO_EOI_EXIT, an EOI of an interrupt that
 * userspace raised (KVM_IRQ_LINE or _STATUS, level 1) must still exit with
 * KVM_EXIT_IOAPIC_EOI, or the VMM keeps Remote IRR set and its device
 * hangs; the in-kernel resampler runs all the same.  An irqfd-only one
 * must not exit, before and after: each exit consumes the raise.  Each
 * phase is LINE_ROUNDS interrupts, one at a time, and a quiet window.
 */
static void test_user_line(int timeout)
{
	static const struct {
		unsigned int by;
		unsigned int exits;	/* per EOI */
		const char *what;
	} phase[] = {
		{ BY_IRQFD, 0, "irqfd only" },
		{ BY_LINE, 1, "KVM_IRQ_LINE only (the VMM's IOAPIC)" },
		{ BY_LINE_STATUS | BY_IRQFD, 1,
		  "KVM_IRQ_LINE_STATUS and the irqfd together" },
		{ BY_IRQFD, 0, "irqfd only again" },
	};
	const struct route r[] = { { GSI_A, TEST_LEVEL_VECTOR, true, 0 } };
	int trigger = -1, resample = -1, ret = -1, quiet;
	unsigned int i, j, exits, wrong, n;
	struct lite_vcpu *vcpu = NULL;
	struct lite_vm *vm;
	u32 count, count0;

	vm = setup(KVM_SPLIT_RESAMPLE_NO_EOI_EXIT, r, 1, timeout);
	if (vm) {
		vcpu = &vm->vcpu[0];
		ret = resample_irqfd(vm, GSI_A, &trigger, &resample);
	}
	for (i = 0; i < ARRAY_SIZE(phase); i++) {
		struct counters c = { 0 };

		exits = 0;
		wrong = 0;
		quiet = -1;
		count0 = vm ? guest_count(vm) : 0;
		for (j = 0; !ret && j < LINE_ROUNDS; j++) {
			n = vcpu->eoi_exits;
			count = guest_count(vm);
			ret = raise_by(vm, phase[i].by, trigger);
			if (ret)
				break;
			c.raised++;
			ret = isr_round(vm, resample, true, &c, timeout);
			n = vcpu->eoi_exits - n;
			exits += n;
			/* Both sources at once are one interrupt (IRR bit). */
			if (n != phase[i].exits ||
			    guest_count(vm) != count + 1 ||
			    (n && vcpu->last_eoi_vector != TEST_LEVEL_VECTOR))
				wrong++;
		}
		if (!ret)
			quiet = guest_run_quiet(vm, QUIET_MS);
		c.delivered = vm ? guest_count(vm) - count0 : 0;
		report(phase[i].what, &c, exits);
		tap_result(!ret && !wrong && !quiet &&
			   c.raised == LINE_ROUNDS && c.delivered == c.raised &&
			   c.resampled == c.raised && !c.early && !c.missing &&
			   !fd_readable(resample),
			   "NO_EOI_EXIT, %s: %u KVM_EXIT_IOAPIC_EOI (vector 0x%x) for %d, expected %u; each resampled once",
			   phase[i].what, exits, TEST_LEVEL_VECTOR, LINE_ROUNDS,
			   phase[i].exits * LINE_ROUNDS);
	}
	if (trigger >= 0)
		close(trigger);
	if (resample >= 0)
		close(resample);
	vm_destroy(vm);
}

int main(void)
{
	int iters = test_iterations(200);
	int timeout = test_timeout_ms();
	int r;

	tap_plan(NR_TESTS);
	r = __kvm_check_cap(KVM_CAP_SPLIT_IRQCHIP_RESAMPLE);
	if (r <= 0) {
		tap_skip_rest("KVM_CAP_SPLIT_IRQCHIP_RESAMPLE not supported (stock KVM)");
		return tap_finish();
	}
	tap_result(r == KVM_SPLIT_RESAMPLE_VALID_FLAGS,
		   "KVM_CHECK_EXTENSION(KVM_CAP_SPLIT_IRQCHIP_RESAMPLE) = 0x%x (supported flags)",
		   r);
	tap_diag("iterations=%d timeout=%d ms vector=0x%x", iters, timeout,
		 TEST_LEVEL_VECTOR);

	test_basic(KVM_SPLIT_RESAMPLE_NO_EOI_EXIT, iters, timeout);
	test_basic(0, iters, timeout);
	test_route_change(timeout);
	test_edge(timeout);
	test_shared(timeout);
	test_deassign(timeout);
	test_route_race(timeout);
	test_high_pin(HIGH_PINS - 1, timeout);
	test_high_pin(GSI_A, timeout);
	test_asked_pins(timeout);
	test_user_line(timeout);
	return tap_finish();
}
