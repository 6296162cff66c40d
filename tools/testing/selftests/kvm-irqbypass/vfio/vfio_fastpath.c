// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_fastpath: exactly-once delivery of vfio-pci MSIs with the kit's
 * hard-irq fast path (Documentation/vfio-fastpath.rst).
 *
 * QEMU's edu behind vfio-pci raises one MSI at a time (BAR0 0x60); a vCPU
 * thread keeps the guest running, and the ISR counts in guest memory
 * without exiting.  Each MSI must show up exactly once, either as one
 * guest ISR run or as one eventfd count that userspace reads, never both
 * and never neither, in each phase:
 *
 *   paired       irqfd on an MSI route: the fast path injects every MSI
 *   no-irqfd     no KVM irqfd: userspace reads every MSI from the eventfd
 *   route-flip   a thread rewrites the GSI's MSI route (two encodings of
 *                the same destination and vector) while MSIs fly
 *   ioapic-route the GSI routed to an IOAPIC pin: not an MSI route, so the
 *                fast path leaves it to the vCPU thread or the irqfd's
 *                inject work (no eventfd)
 *   deassign     a thread deassigns and reassigns the irqfd while MSIs fly
 *   vector       the MSI vector is disabled and re-enabled, its eventfd
 *                swapped for one without an irqfd and back
 *   swap-storm   a thread swaps the vector's eventfd between the irqfd's
 *                and one without an irqfd in a loop while MSIs fly (what
 *                QEMU does on MSI-X mask toggles); the kit switches the
 *                eventfd in place, so no MSI may be lost (skipped with
 *                stock's handler, which frees and requests the irq)
 *   vm-destroy   the VM goes away; later MSIs land in the eventfd
 *
 * With the kit's fast path on, the vfio_fastpath tracepoints are counted
 * too: every MSI is exactly one hit or one miss, all hits when paired (MSI
 * or IOAPIC route), all misses without a consumer.  With stock modules (or
 * vfio_pci_core.fastpath=0) those checks are skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "fastpath_trace.h"
#include "irq_acct.h"
#include "kvm_util_lite.h"
#include "tap.h"
#include "vcpu_runner.h"
#include "vfio_util_lite.h"

#define IOAPIC_PIN	10
#define SETTLE_MS	100
#define NR_TESTS	16

struct fp_test {
	struct edu_dev edu;
	struct lite_vm *vm;
	int efd;		/* the MSI vector's eventfd */
	bool irqfd;		/* efd is bound with KVM_IRQFD */
	int irq;		/* host irq of vector 0 */
	bool fast;		/* kit fast path on, tracepoints available */
	int timeout;

	struct vcpu_runner vcpu;

	/* Serialises irqfd assignment with an MSI in flight (deassign). */
	pthread_mutex_t lock;
	int swap_fd[2];		/* swap-storm: the irqfd's eventfd, another */
	pthread_t ctl;
	bool ctl_stop;
	unsigned int ctl_ops;
	int ctl_err;
};

static void vcpu_stop(struct fp_test *t)
{
	vcpu_runner_stop(&t->vcpu);
}

/* A VM whose guest sits in HLT with the ISR on TEST_MSI_VECTOR. */
static int vm_setup(struct fp_test *t)
{
	struct guest_params params = {
		.flags = GUEST_F_IOAPIC,
		.vector = TEST_MSI_VECTOR,
		.ioapic_pin = IOAPIC_PIN,
		.target = ~0u,
	};

	t->vm = __vm_create(IRQCHIP_KERNEL);
	if (!t->vm || vm_start_guest(t->vm, &params) ||
	    guest_run_until(t->vm, GUEST_PORT_READY, NULL, t->timeout))
		return -EIO;
	if (vm_route_msi(t->vm, TEST_MSI_GSI, TEST_MSI_VECTOR))
		return -EIO;
	return vcpu_runner_start(&t->vcpu, t->vm, -1);
}

/*
 * The GSI's MSI route with the redirection hint set: the same physical
 * destination (APIC ID 0) and vector, a different routing entry.
 */
static int vm_route_msi_rh(struct lite_vm *vm, u32 gsi, u32 vector)
{
	struct kvm_irq_routing_entry e = {
		.gsi = gsi,
		.type = KVM_IRQ_ROUTING_MSI,
		.u.msi.address_lo = LAPIC_BASE | 0x8,
		.u.msi.data = vector,
	};

	return vm_set_route(vm, &e);
}

/*
 * GSI as an IOAPIC pin (the guest programs it edge).  Not flipped with the
 * MSI route under load: when the route changes between the work item's
 * kvm_set_irq(gsi, 1) and kvm_set_irq(gsi, 0), the pin's line state stays
 * high and the next edge is lost, with stock modules too.
 */
static int vm_route_ioapic(struct lite_vm *vm, u32 gsi, u32 pin)
{
	struct kvm_irq_routing_entry e = {
		.gsi = gsi,
		.type = KVM_IRQ_ROUTING_IRQCHIP,
		.u.irqchip = { .irqchip = KVM_IRQCHIP_IOAPIC, .pin = pin },
	};

	return vm_set_route(vm, &e);
}

static void phase_begin(struct fp_test *t, struct irq_acct *c)
{
	irq_acct_begin(c, &t->edu, t->fast);
}

/*
 * Raise one MSI and wait until it shows up as a guest ISR run or an eventfd
 * count.  t->lock is held meanwhile, so the irqfd is never (re)assigned
 * with a count pending in the eventfd (KVM would inject that count and
 * leave it readable: stock semantics that a test cannot account for).
 */
static int raise_one(struct fp_test *t, struct irq_acct *c, u32 *guest_seen)
{
	struct msi_sink sink = {
		.guest_count = t->vm ? &t->vm->vcpu[0].params->count : NULL,
		.guest_seen = *guest_seen,
		.efd = t->efd,
	};
	int ret;

	pthread_mutex_lock(&t->lock);
	ret = edu_raise_wait(&t->edu, &sink, c, t->timeout, &t->vcpu.err);
	pthread_mutex_unlock(&t->lock);
	*guest_seen = sink.guest_seen;
	/* Let a control thread waiting for the lock have it. */
	usleep(50);
	return ret;
}

/*
 * Let late arrivals land, then take the final counts: a doubled MSI shows
 * up here as guest + signalled > raised.
 */
static void phase_end(struct fp_test *t, struct irq_acct *c, u32 *guest_seen,
		      const char *name)
{
	struct msi_sink sink = {
		.guest_count = t->vm ? &t->vm->vcpu[0].params->count : NULL,
		.guest_seen = *guest_seen,
		.efd = t->efd,
	};
	long long host;

	usleep(SETTLE_MS * 1000);
	msi_sink_collect(&sink, c);
	*guest_seen = sink.guest_seen;
	host = proc_interrupts_count("vfio-msi[", t->edu.bdf);
	c->host = c->host >= 0 && host >= 0 ? host - c->host : -1;
	if (t->fast)
		fastpath_trace_count(t->irq, &c->hits, &c->misses);
	irq_acct_print(name, c);
}

/* Exactly once: every raise reached the host once and went one way. */
static bool exactly_once(const struct fp_test *t, const struct irq_acct *c,
			 unsigned int n)
{
	return c->raised == n && c->host == n && c->guest + c->signalled == n &&
	       (!t->fast || c->hits + c->misses == n);
}

static int run_raises(struct fp_test *t, struct irq_acct *c, unsigned int n,
		      u32 *guest_seen)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (raise_one(t, c, guest_seen)) {
			tap_diag("raise %u: no ISR run, no eventfd count in %d ms (vCPU %d)",
				 i + 1, t->timeout, t->vcpu.err);
			return -ETIMEDOUT;
		}
	return 0;
}

static int set_trigger(struct fp_test *t, int fd)
{
	return edu_msi_trigger(&t->edu, fd);
}

static int irqfd_assign(struct fp_test *t, bool assign)
{
	int ret = __vm_irqfd(t->vm, t->efd, TEST_MSI_GSI,
			   assign ? 0 : KVM_IRQFD_FLAG_DEASSIGN, 0);

	if (!ret)
		t->irqfd = assign;
	return ret;
}

/*
 * A control thread's loop: step(t, i) for i = 0, 1, ... with a random
 * pause below max_us, until ctl_stop is set and, if even, after an even
 * number of steps (back in the starting state), or until a step fails.
 */
static void ctl_loop(struct fp_test *t, int (*step)(struct fp_test *t, unsigned int i),
		     int max_us, bool even)
{
	unsigned int i;
	int ret;

	for (i = 0; !READ_ONCE(t->ctl_stop) || (even && (i & 1)); i++) {
		ret = step(t, i);
		if (ret) {
			WRITE_ONCE(t->ctl_err, ret);
			break;
		}
		WRITE_ONCE(t->ctl_ops, i + 1);
		usleep(rand() % max_us);
	}
}

static int route_flip_step(struct fp_test *t, unsigned int i)
{
	return i & 1 ? vm_route_msi_rh(t->vm, TEST_MSI_GSI, TEST_MSI_VECTOR) :
		       vm_route_msi(t->vm, TEST_MSI_GSI, TEST_MSI_VECTOR);
}

static void *route_flip_thread(void *arg)
{
	ctl_loop(arg, route_flip_step, 300, false);
	return NULL;
}

static int deassign_step(struct fp_test *t, unsigned int i)
{
	int ret;

	(void)i;
	/* Deassign races with MSIs; assign waits for a quiet point. */
	if (t->irqfd)
		return irqfd_assign(t, false);
	pthread_mutex_lock(&t->lock);
	ret = irqfd_assign(t, true);
	pthread_mutex_unlock(&t->lock);
	return ret;
}

static void *deassign_thread(void *arg)
{
	ctl_loop(arg, deassign_step, 2000, false);
	return NULL;
}

/* Swaps the vector's eventfd back and forth; ends on the irqfd's. */
static int swap_step(struct fp_test *t, unsigned int i)
{
	return set_trigger(t, t->swap_fd[!(i & 1)]);
}

static void *swap_thread(void *arg)
{
	ctl_loop(arg, swap_step, 300, true);
	return NULL;
}

static int ctl_start(struct fp_test *t, void *(*fn)(void *))
{
	t->ctl_stop = false;
	t->ctl_ops = 0;
	t->ctl_err = 0;
	return pthread_create(&t->ctl, NULL, fn, t) ? -EAGAIN : 0;
}

static void ctl_stop(struct fp_test *t)
{
	WRITE_ONCE(t->ctl_stop, true);
	pthread_join(t->ctl, NULL);
}

int main(void)
{
	int iters = test_iterations(500);
	unsigned int n = iters, small = iters / 5 ? iters / 5 : 1;
	struct fp_test t = { .efd = -1, .irq = -1 };
	struct irq_acct c;
	u32 seen = 0;
	int efd2 = -1;
	bool ok;
	int ret;

	t.timeout = test_timeout_ms();
	pthread_mutex_init(&t.lock, NULL);
	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	srand(1);

	ret = edu_open(&t.edu);
	if (ret == -ENODEV) {
		tap_skip_rest("no edu device (1234:11e8) on this machine");
		return tap_finish();
	}
	t.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ok = !ret && !edu_check_alive(&t.edu) &&
	     !edu_enable_bus_master(&t.edu) && t.efd >= 0;
	ok = ok && !vm_setup(&t) && !irqfd_assign(&t, true) &&
	     !set_trigger(&t, t.efd);
	t.irq = proc_interrupts_irq("vfio-msi[0]", t.edu.bdf);
	t.fast = fastpath_enabled();
	tap_diag("iterations=%u irq=%d fast path %s", n, t.irq,
		 t.fast ? "on (tracepoints counted)" : "off or stock modules");
	if (!tap_result(ok && t.irq > 0,
			"setup: edu MSI -> eventfd -> KVM_IRQFD on MSI route GSI %u",
			TEST_MSI_GSI))
		goto out;

	/* paired */
	phase_begin(&t, &c);
	ret = run_raises(&t, &c, n, &seen);
	phase_end(&t, &c, &seen, "paired");
	tap_result(!ret && exactly_once(&t, &c, n) && c.guest == n,
		   "paired: %u MSIs, each injected into the guest once", n);
	if (t.fast)
		tap_result(c.hits == n && c.misses == 0,
			   "paired: every MSI injected by the fast path");
	else
		tap_skip("paired: fast path off, no hit count");

	/* no-irqfd */
	ok = !irqfd_assign(&t, false);
	phase_begin(&t, &c);
	ret = ok ? run_raises(&t, &c, small, &seen) : -EIO;
	phase_end(&t, &c, &seen, "no-irqfd");
	tap_result(!ret && exactly_once(&t, &c, small) && c.signalled == small,
		   "no-irqfd: %u MSIs, each read from the eventfd once", small);
	if (t.fast)
		tap_result(c.misses == small,
			   "no-irqfd: every MSI missed the fast path");
	else
		tap_skip("no-irqfd: fast path off, no miss count");

	/* route-flip */
	ok = !irqfd_assign(&t, true) && !ctl_start(&t, route_flip_thread);
	phase_begin(&t, &c);
	ret = ok ? run_raises(&t, &c, n, &seen) : -EIO;
	if (ok)
		ctl_stop(&t);
	ok = ok && !t.ctl_err && !vm_route_msi(t.vm, TEST_MSI_GSI, TEST_MSI_VECTOR);
	phase_end(&t, &c, &seen, "route-flip");
	tap_diag("route-flip: %u routing updates", t.ctl_ops);
	tap_result(ok && !ret && exactly_once(&t, &c, n) && c.guest == n,
		   "route-flip: %u MSIs while the GSI's MSI route is rewritten, each injected once",
		   n);

	/* ioapic-route */
	ok = !vm_route_ioapic(t.vm, TEST_MSI_GSI, IOAPIC_PIN);
	phase_begin(&t, &c);
	ret = ok ? run_raises(&t, &c, small, &seen) : -EIO;
	ok = ok && !vm_route_msi(t.vm, TEST_MSI_GSI, TEST_MSI_VECTOR);
	phase_end(&t, &c, &seen, "ioapic-route");
	tap_result(ok && !ret && exactly_once(&t, &c, small) && c.guest == small &&
		   (!t.fast || c.hits == small),
		   "ioapic-route: %u MSIs on an IOAPIC pin route, each injected once by KVM's work item",
		   small);

	/* deassign */
	ok = !ctl_start(&t, deassign_thread);
	phase_begin(&t, &c);
	ret = ok ? run_raises(&t, &c, n, &seen) : -EIO;
	if (ok)
		ctl_stop(&t);
	ok = ok && !t.ctl_err && (t.irqfd || !irqfd_assign(&t, true));
	phase_end(&t, &c, &seen, "deassign");
	tap_diag("deassign: %u assign/deassign operations", t.ctl_ops);
	tap_result(ok && !ret && exactly_once(&t, &c, n) && t.ctl_ops > 1,
		   "deassign: %u MSIs while the irqfd comes and goes, each delivered once",
		   n);

	/* vector: disable, re-enable; swap the eventfd and back */
	ok = !vfio_set_irqs(t.edu.device_fd, VFIO_PCI_MSI_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL) &&
	     !set_trigger(&t, t.efd);
	t.irq = proc_interrupts_irq("vfio-msi[0]", t.edu.bdf);
	phase_begin(&t, &c);
	ret = ok ? run_raises(&t, &c, small, &seen) : -EIO;
	phase_end(&t, &c, &seen, "vector re-enabled");
	tap_result(!ret && exactly_once(&t, &c, small) && c.guest == small &&
		   (!t.fast || c.hits == small),
		   "vector: disabled and re-enabled, %u MSIs injected once (fast path when on)",
		   small);

	efd2 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ok = efd2 >= 0 && !set_trigger(&t, efd2);
	if (ok) {
		int keep = t.efd;

		t.efd = efd2;	/* raise_one() reads the vector's eventfd */
		phase_begin(&t, &c);
		ret = run_raises(&t, &c, small, &seen);
		phase_end(&t, &c, &seen, "vector swapped");
		t.efd = keep;
	}
	tap_result(ok && !ret && exactly_once(&t, &c, small) &&
		   c.signalled == small,
		   "vector: eventfd swapped for one without irqfd, %u MSIs read from it once",
		   small);

	ok = !set_trigger(&t, t.efd);
	phase_begin(&t, &c);
	ret = ok ? run_raises(&t, &c, small, &seen) : -EIO;
	phase_end(&t, &c, &seen, "vector swapped back");
	tap_result(!ret && exactly_once(&t, &c, small) && c.guest == small &&
		   (!t.fast || c.hits == small),
		   "vector: swapped back to the irqfd's eventfd, %u MSIs injected once",
		   small);

	/* swap-storm: MSIs land in the guest (irqfd) or in efd2 (read here) */
	if (t.fast && efd2 >= 0) {
		int keep = t.efd;

		t.swap_fd[0] = keep;
		t.swap_fd[1] = efd2;
		t.efd = efd2;	/* raise_one() reads the eventfd without irqfd */
		ok = !ctl_start(&t, swap_thread);
		phase_begin(&t, &c);
		ret = ok ? run_raises(&t, &c, n, &seen) : -EIO;
		if (ok)
			ctl_stop(&t);
		ok = ok && !t.ctl_err;
		phase_end(&t, &c, &seen, "swap-storm");
		t.efd = keep;
		tap_diag("swap-storm: %u swaps, %llu MSIs to the guest, %llu read",
			 t.ctl_ops, c.guest, c.signalled);
		tap_result(ok && !ret && exactly_once(&t, &c, n) &&
			   t.ctl_ops > 1 && c.guest && c.signalled,
			   "swap-storm: %u MSIs while the eventfd is swapped in a loop, each delivered once",
			   n);
	} else {
		tap_skip("swap-storm: stock's handler frees and requests the irq per swap");
	}

	/* vm-destroy */
	vcpu_stop(&t);
	ret = guest_run_quiet(t.vm, 200);
	tap_result(ret == 0, "no stray interrupt before the VM is destroyed");
	vm_destroy(t.vm);
	t.vm = NULL;
	t.irqfd = false;
	phase_begin(&t, &c);
	ret = run_raises(&t, &c, small, &seen);
	phase_end(&t, &c, &seen, "vm-destroy");
	tap_result(!ret && exactly_once(&t, &c, small) && c.signalled == small,
		   "vm-destroy: %u MSIs after the VM is gone, each read from the eventfd once",
		   small);
	if (t.fast)
		tap_result(c.misses == small,
			   "vm-destroy: the fast path missed every one (no consumer)");
	else
		tap_skip("vm-destroy: fast path off, no miss count");

	ret = vfio_set_irqs(t.edu.device_fd, VFIO_PCI_MSI_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	tap_result(!ret, "MSI disabled cleanly");

out:
	vcpu_stop(&t);
	if (t.fast)
		fastpath_trace_stop();
	if (t.vm && t.irqfd)
		irqfd_assign(&t, false);
	if (efd2 >= 0)
		close(efd2);
	if (t.efd >= 0)
		close(t.efd);
	vm_destroy(t.vm);
	edu_close(&t.edu);
	return tap_finish();
}
