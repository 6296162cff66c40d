// SPDX-License-Identifier: GPL-2.0-only
/*
 * split_resample_smp: KVM_CAP_SPLIT_IRQCHIP_RESAMPLE with two vCPUs
 * (Documentation/split-irqchip-resample.rst, "Several vCPUs").
 *
 * As in split_resample, this test plays a split-irqchip VMM that routes its
 * IOAPIC pins as level MSIs, but the VM has two vCPUs (APIC IDs 0 and 1),
 * each run by its own host thread, each with its own counting ISR state.
 * The EOI of a vector resamples only the GSIs whose route delivers that
 * vector to the EOIing vCPU: checked one interrupt at a time, with both
 * vCPUs and two "devices" running concurrently, with a route retargeted
 * from vCPU 0 to vCPU 1 while its interrupt is in service, with the
 * routing table re-committed unchanged, which is what QEMU does on every
 * IOAPIC redirection-table write, masking a pin included, and with route
 * changes that race with the vCPUs' rescan of their EOI vectors: a device
 * that raises again at the route change's resample, its thread, vCPU 1's
 * and the one in KVM_SET_GSI_ROUTING ordered on one CPU by SCHED_FIFO.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
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

#define GSI_A		5	/* resampling irqfd */
#define GSI_B		7	/* resampling irqfd */
#define GSI_C		9	/* no irqfd: the VMM's IOAPIC would drive it */
#define MSI_DATA_LEVEL	0xc000	/* bit 15 level trigger, bit 14 assert */
#define QUIET_MS	300
#define NR_TESTS	14

struct route {
	u32 gsi;
	u32 dest;	/* physical APIC ID; the vector is TEST_LEVEL_VECTOR */
};

/* Two vCPUs, each run by its own host thread (struct vthread). */
struct smp_vm {
	struct lite_vm *vm;
	struct vthread vt[2];
};

static int set_routes(struct lite_vm *vm, const struct route *r, int n)
{
	struct {
		struct kvm_irq_routing hdr;
		struct kvm_irq_routing_entry e[4];
	} t;
	int i;

	memset(&t, 0, sizeof(t));
	t.hdr.nr = n;
	for (i = 0; i < n; i++) {
		t.e[i].gsi = r[i].gsi;
		t.e[i].type = KVM_IRQ_ROUTING_MSI;
		t.e[i].u.msi.address_lo = LAPIC_BASE | r[i].dest << 12;
		t.e[i].u.msi.data = TEST_LEVEL_VECTOR | MSI_DATA_LEVEL;
	}
	if (ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, &t) < 0) {
		tap_diag("KVM_SET_GSI_ROUTING: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static void smp_destroy(struct smp_vm *s)
{
	vt_stop(&s->vt[0]);
	vt_stop(&s->vt[1]);
	vm_destroy(s->vm);
	s->vm = NULL;
}

/*
 * A split-irqchip VM, with the capability (NO_EOI_EXIT) if @cap_on, the
 * routes, and two vCPUs whose ISRs exit before and after the EOI, both
 * ready with IF set.
 */
static int smp_setup(struct smp_vm *s, const struct route *r, int n,
		     bool cap_on, int timeout)
{
	struct guest_params params = {
		.vector = TEST_LEVEL_VECTOR,
		.pre_eoi_port = GUEST_PORT_PRE_EOI,
		.post_eoi_port = GUEST_PORT_POST_EOI,
		.target = ~0u,
	};
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_SPLIT_IRQCHIP_RESAMPLE,
		.args[0] = KVM_SPLIT_RESAMPLE_NO_EOI_EXIT,
	};
	struct lite_vcpu *vcpu1;
	int ret, i;

	memset(s, 0, sizeof(*s));
	s->vm = __vm_create(IRQCHIP_SPLIT);
	if (!s->vm)
		return -ENOMEM;
	if (cap_on && ioctl(s->vm->vm_fd, KVM_ENABLE_CAP, &cap) < 0) {
		ret = -errno;
		tap_diag("KVM_ENABLE_CAP(SPLIT_IRQCHIP_RESAMPLE): %s",
			 strerror(errno));
		goto fail;
	}
	ret = set_routes(s->vm, r, n) ?: vm_start_guest(s->vm, &params);
	if (ret)
		goto fail;
	vcpu1 = vm_add_vcpu(s->vm, &params);
	if (!vcpu1) {
		ret = -EIO;
		goto fail;
	}
	ret = vt_start(&s->vt[0], &s->vm->vcpu[0]) ?: vt_start(&s->vt[1], vcpu1);
	if (ret)
		goto fail;
	/* Both vCPUs set up their LAPIC at once, each on its thread. */
	for (i = 0; i < 2; i++)
		vt_post(&s->vt[i], VT_RUN_UNTIL, GUEST_PORT_READY, timeout);
	ret = vt_wait(&s->vt[0]);
	ret = vt_wait(&s->vt[1]) ?: ret;
	if (ret)
		goto fail;
	return 0;
fail:
	smp_destroy(s);
	return ret;
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

static void close_fds(int *fds, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

/* Read and reset a resamplefd: the number of signals since the last call. */
static unsigned int take(int fd)
{
	u64 v = 0;

	if (fd_readable(fd) && eventfd_drain(fd, &v))
		return 0;
	return (unsigned int)v;
}

struct tally {
	unsigned int raised, resampled, early, missing, other;
};

/*
 * One raise of @trigger, handled by @vt's vCPU: @resample must be quiet
 * before the EOI and signalled once after it; @other (a GSI routed to the
 * other vCPU on the same vector) must stay quiet throughout.
 */
static int round_trip(struct vthread *vt, int trigger, int resample,
		      int other, struct tally *t, int timeout)
{
	unsigned int n;
	int ret;

	ret = eventfd_raise(trigger);
	if (ret)
		return ret;
	t->raised++;
	ret = vt_until(vt, GUEST_PORT_PRE_EOI, timeout);
	if (ret)
		return ret;
	t->early += take(resample);
	ret = vt_until(vt, GUEST_PORT_POST_EOI, timeout);
	if (ret)
		return ret;
	n = take(resample);
	t->resampled += n;
	if (n != 1)
		t->missing++;
	t->other += take(other);
	return 0;
}

/* Both vCPUs sit idle for QUIET_MS at the same time: nothing arrives. */
static bool quiet_both(struct smp_vm *s, int *fds, unsigned int nfds)
{
	unsigned int i, sig = 0;
	int r0, r1;

	vt_post(&s->vt[0], VT_QUIET, 0, QUIET_MS);
	vt_post(&s->vt[1], VT_QUIET, 0, QUIET_MS);
	r0 = vt_wait(&s->vt[0]);
	r1 = vt_wait(&s->vt[1]);
	for (i = 0; i < nfds; i++)
		sig += take(fds[i]);
	if (r0 || r1 || sig)
		tap_diag("quiet window: vCPU 0 %d, vCPU 1 %d, resamples %u",
			 r0, r1, sig);
	return !r0 && !r1 && !sig;
}

/*
 * A "device" on its own thread: raise, wait for the resample, raise again,
 * as a level device that vfio masks until the EOI would.
 */
struct device {
	pthread_t thread;
	int trigger, resample;
	int stop;	/* readable: the vCPUs are done, stop waiting */
	unsigned int n, raised, resampled, doubled;
	int timeout, ret;
};

static void *device_main(void *arg)
{
	struct device *d = arg;
	struct pollfd pfd[2] = {
		{ .fd = d->resample, .events = POLLIN },
		{ .fd = d->stop, .events = POLLIN },
	};
	u64 v;
	int r;

	while (d->raised < d->n) {
		d->ret = eventfd_raise(d->trigger);
		if (d->ret)
			break;
		d->raised++;
		r = poll(pfd, 2, d->timeout);
		if (r <= 0) {
			d->ret = r ? -errno : -ETIMEDOUT;
			break;
		}
		if (!(pfd[0].revents & POLLIN)) {
			d->ret = -ECANCELED;
			break;
		}
		d->ret = eventfd_drain(d->resample, &v);
		if (d->ret)
			break;
		d->resampled += v;
		if (v != 1)
			d->doubled++;
	}
	return NULL;
}

/*
 * Both vCPUs and both devices at once, no pacing exits: vCPU 1 takes GSI A
 * (@fds[0], resampled on @fds[1]), vCPU 0 GSI B (@fds[2], @fds[3]), @iters
 * each.  *@ok: every raise was delivered once and resampled once.  Returns
 * 0, or the error of a vCPU (its thread stopped; the VM is not usable).
 */
static int both_at_once(struct smp_vm *s, int *fds, int iters, int timeout,
			bool *ok)
{
	struct device dev[2] = { 0 };
	unsigned int c[2], i;
	int ret, stop;

	*ok = false;
	stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (stop < 0)
		return -errno;
	for (i = 0; i < 2; i++) {
		struct guest_params *p = s->vm->vcpu[i].params;

		c[i] = vcpu_count(&s->vm->vcpu[i]);
		p->pre_eoi_port = 0;
		p->post_eoi_port = 0;
		p->target = c[i] + iters;
		dev[i].trigger = fds[i ? 0 : 2];
		dev[i].resample = fds[i ? 1 : 3];
		dev[i].stop = stop;
		dev[i].n = iters;
		dev[i].timeout = timeout;
		vt_post(&s->vt[i], VT_RUN_UNTIL, GUEST_PORT_DONE, timeout);
	}
	for (i = 0; i < 2; i++)
		if (pthread_create(&dev[i].thread, NULL, device_main, &dev[i]))
			dev[i].ret = -EAGAIN;
	/* A vCPU that gave up (or crashed) would leave its device waiting. */
	ret = vt_wait(&s->vt[0]);
	ret = vt_wait(&s->vt[1]) ?: ret;
	eventfd_raise(stop);
	for (i = 0; i < 2; i++)
		if (dev[i].ret != -EAGAIN)
			pthread_join(dev[i].thread, NULL);
	close(stop);
	for (i = 0; i < 2; i++) {
		c[i] = vcpu_count(&s->vm->vcpu[i]) - c[i];
		tap_diag("vCPU %u: raised=%u delivered=%u resampled=%u doubled=%u (%d)",
			 i, dev[i].raised, c[i], dev[i].resampled,
			 dev[i].doubled, dev[i].ret);
	}
	*ok = !ret;
	for (i = 0; i < 2; i++)
		if (dev[i].ret || dev[i].raised != (unsigned int)iters ||
		    c[i] != dev[i].raised || dev[i].resampled != dev[i].raised ||
		    dev[i].doubled)
			*ok = false;
	return ret;
}

/*
 * The VM of cases 6 and 14: GSI A's level route to APIC ID 1 and GSI B's to
 * APIC ID 0, raised by @fds[0] and @fds[2].  With the capability their
 * resampling irqfds signal @fds[1] and @fds[3]; without it plain irqfds
 * raise them and each vCPU's EOI exit signals its GSI's resample fd, as a
 * VMM's userspace IOAPIC does.  On failure @fds are closed.
 */
static int two_device_vm(struct smp_vm *s, int *fds, bool cap_on, int timeout)
{
	const struct route r[] = { { GSI_A, 1 }, { GSI_B, 0 } };
	int ret, i;

	for (i = 0; i < 4; i++)
		fds[i] = -1;
	ret = smp_setup(s, r, 2, cap_on, timeout);
	if (ret)
		return ret;
	if (cap_on) {
		ret = resample_irqfd(s->vm, GSI_A, &fds[0], &fds[1]) ?:
		      resample_irqfd(s->vm, GSI_B, &fds[2], &fds[3]);
	} else {
		for (i = 0; i < 4; i++) {
			fds[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
			if (fds[i] < 0)
				ret = -errno;
		}
		ret = ret ?: __vm_irqfd(s->vm, fds[0], GSI_A, 0, -1) ?:
			     __vm_irqfd(s->vm, fds[2], GSI_B, 0, -1);
		s->vm->vcpu[1].eoi_eventfd = fds[1];
		s->vm->vcpu[0].eoi_eventfd = fds[3];
	}
	if (ret) {
		close_fds(fds, 4);
		smp_destroy(s);
	}
	return ret;
}

/*
 * both_at_once(), again on a new VM when a guest crashed.  In the testbed
 * (nested SVM under TCG, two vCPUs) the test guest now and then triple
 * faults, takes #UD at an address it never jumps to, or is found running
 * at a host kernel address, about once in 250 runs of these 400
 * interrupts, with stock KVM as with the kit.  A crash delivers nothing,
 * so it says nothing about resampling; two new attempts at most.  A lost
 * or doubled interrupt with the guest where it should be fails at once.
 */
#define CRASH_RETRIES	2

static int both_at_once_retry(struct smp_vm *s, int *fds, bool cap_on,
			      int iters, int timeout, bool *ok)
{
	int ret, attempt;

	for (attempt = 0;; attempt++) {
		ret = both_at_once(s, fds, iters, timeout, ok);
		if (*ok || attempt == CRASH_RETRIES ||
		    !(s->vm->vcpu[0].crashed || s->vm->vcpu[1].crashed))
			return ret;
		tap_diag("a guest crashed (the testbed's, not delivery: %s); again on a new VM",
			 "Documentation/testing.rst");
		close_fds(fds, 4);
		smp_destroy(s);
		ret = two_device_vm(s, fds, cap_on, timeout);
		if (ret)
			return ret;
	}
}

/*
 * Cases 2-7: GSI A (resampling irqfd) delivers the vector to APIC ID 1,
 * GSI B (resampling irqfd) the same vector to APIC ID 0.
 */
static void test_per_vcpu(int iters, int timeout)
{
	struct tally t1 = { 0 }, t0 = { 0 };
	int fds[4] = { -1, -1, -1, -1 };	/* ta, ra, tb, rb */
	struct kvm_lapic_state lapic;
	unsigned int id = ~0u, i, c0, c1, e0, e1;
	struct smp_vm s;
	int ret, i0;
	bool ok;

	ret = two_device_vm(&s, fds, true, timeout);
	if (!ret && ioctl(s.vm->vcpu[1].fd, KVM_GET_LAPIC, &lapic) == 0)
		memcpy(&id, lapic.regs + LAPIC_ID, sizeof(id));
	tap_result(!ret && id >> 24 == 1,
		   "second vCPU on its own thread: ready, LAPIC ID register 0x%08x (APIC ID 1)",
		   id);

	/* Case 3: GSI A, one at a time, on vCPU 1. */
	for (i = 0; !ret && i < (unsigned int)iters; i++)
		ret = round_trip(&s.vt[1], fds[0], fds[1], fds[3], &t1,
				 timeout);
	c1 = ret ? 0 : vcpu_count(&s.vm->vcpu[1]);
	c0 = ret ? 0 : vcpu_count(&s.vm->vcpu[0]);
	/* Anything misrouted to vCPU 0 would be pending there: let it in. */
	i0 = -1;
	if (!ret) {
		vt_post(&s.vt[0], VT_QUIET, 0, QUIET_MS);
		i0 = vt_wait(&s.vt[0]);
	}
	tap_diag("GSI A -> APIC 1: raised=%u delivered=%u/%u (vCPU 1/0) resampled=%u",
		 t1.raised, c1, c0, t1.resampled);
	tap_diag("  early=%u missing=%u, GSI B resampled=%u", t1.early,
		 t1.missing, t1.other);
	tap_result(!ret && c1 == t1.raised && c0 == 0 && i0 == 0 &&
		   t1.resampled == t1.raised && !t1.early && !t1.missing &&
		   !t1.other,
		   "route to APIC ID 1: %d interrupts on vCPU 1 only, its EOIs resample GSI A once each, not GSI B (APIC ID 0, same vector)",
		   iters);

	/* Case 4: GSI B, one at a time, on vCPU 0. */
	for (i = 0; !ret && i < (unsigned int)iters; i++)
		ret = round_trip(&s.vt[0], fds[2], fds[3], fds[1], &t0,
				 timeout);
	c0 = ret ? 0 : vcpu_count(&s.vm->vcpu[0]);
	tap_diag("GSI B -> APIC 0: raised=%u delivered=%u resampled=%u early=%u missing=%u",
		 t0.raised, c0, t0.resampled, t0.early, t0.missing);
	tap_diag("  GSI A resampled=%u", t0.other);
	tap_result(!ret && c0 == t0.raised &&
		   vcpu_count(&s.vm->vcpu[1]) == c1 &&
		   t0.resampled == t0.raised && !t0.early && !t0.missing &&
		   !t0.other,
		   "vCPU 0's EOIs of the same vector resample GSI B once each and never GSI A");

	e0 = s.vm ? s.vm->vcpu[0].eoi_exits : 0;
	e1 = s.vm ? s.vm->vcpu[1].eoi_exits : 0;
	tap_result(!ret && e0 == 0 && e1 == 0,
		   "NO_EOI_EXIT: KVM_EXIT_IOAPIC_EOI vCPU 0: %u, vCPU 1: %u (expected 0)",
		   e0, e1);

	/* Case 6: both vCPUs and both devices at once, no pacing exits. */
	ok = false;
	if (!ret)
		ret = both_at_once_retry(&s, fds, true, iters, timeout, &ok);
	tap_result(ok, "both vCPUs at once, %d each: raised == delivered == resampled, 0 doubled",
		   iters);
	{
		int rfds[] = { fds[1], fds[3] };

		tap_result(!ret && quiet_both(&s, rfds, 2),
			   "both vCPUs idle: no re-delivery, no resample");
	}
	close_fds(fds, 4);
	smp_destroy(&s);
}

/*
 * Case 8: GSI C, with no irqfd (the VMM's own IOAPIC would serve it), also
 * delivers the vector to APIC ID 1.  vCPU 1's EOIs of it still exit to
 * userspace despite NO_EOI_EXIT; vCPU 0's EOIs of the same vector do not.
 */
static void test_exit_per_vcpu(int timeout)
{
	const struct route r[] = { { GSI_A, 1 }, { GSI_B, 0 }, { GSI_C, 1 } };
	int fds[4] = { -1, -1, -1, -1 };
	struct tally t0 = { 0 }, t1 = { 0 };
	struct smp_vm s;
	unsigned int i, e0 = 0, e1 = 0;
	int ret;

	ret = smp_setup(&s, r, 3, true, timeout);
	if (!ret)
		ret = resample_irqfd(s.vm, GSI_A, &fds[0], &fds[1]) ?:
		      resample_irqfd(s.vm, GSI_B, &fds[2], &fds[3]);
	for (i = 0; !ret && i < 5; i++)
		ret = round_trip(&s.vt[1], fds[0], fds[1], fds[3], &t1,
				 timeout) ?:
		      round_trip(&s.vt[0], fds[2], fds[3], fds[1], &t0,
				 timeout);
	if (!ret) {
		e0 = s.vm->vcpu[0].eoi_exits;
		e1 = s.vm->vcpu[1].eoi_exits;
	}
	tap_diag("GSI C on APIC 1: EOI exits vCPU 0 %u, vCPU 1 %u; resampled A %u, B %u",
		 e0, e1, t1.resampled, t0.resampled);
	tap_result(!ret && e1 == 5 && e0 == 0 && t1.resampled == 5 &&
		   t0.resampled == 5 && !t0.other && !t1.other,
		   "a GSI without kernel resampler keeps the EOI exit on its vCPU only (vCPU 1: %u of 5, vCPU 0: %u of 5)",
		   e1, e0);
	close_fds(fds, 4);
	smp_destroy(&s);
}

/*
 * Case 9: GSI A's route moves from APIC ID 0 to APIC ID 1 (same vector)
 * while vCPU 0 has its interrupt in service: one resample at the change,
 * none at vCPU 0's EOI, which matches no route any more; the device's next
 * interrupt goes to vCPU 1 and is resampled at vCPU 1's EOI.  Case 10:
 * whether vCPU 0's EOI still exits to userspace is stock KVM's business:
 * 6.12's kvm_scan_ioapic_routes() keeps a vector pending EOI in the EOI
 * exit bitmap, so the EOI exits once (no route matched, so NO_EOI_EXIT
 * does not apply); 6.1's does not, so the EOI never reaches the split
 * irqchip EOI path.  At most one exit, then, and never on vCPU 1.
 *
 * Case 11: QEMU re-commits its whole routing table on every
 * redirection-table write and leaves a masked pin's route as it was, so
 * the table it commits while the guest masks the pin is the same one: no
 * resample then, the EOI resamples, and an interrupt raised meanwhile is
 * still delivered.
 */
static void test_retarget(int timeout)
{
	const struct route r0[] = { { GSI_A, 0 } };
	const struct route r1[] = { { GSI_A, 1 } };
	int fds[2] = { -1, -1 };
	unsigned int at_change = 9, at_old_eoi = 9, e0 = 0, c0 = 0;
	struct tally t1 = { 0 };
	struct smp_vm s;
	int ret, none = -1;
	bool ok;

	ret = smp_setup(&s, r0, 1, true, timeout);
	if (!ret)
		ret = resample_irqfd(s.vm, GSI_A, &fds[0], &fds[1]);
	if (!ret)
		ret = eventfd_raise(fds[0]) ?:
		      vt_until(&s.vt[0], GUEST_PORT_PRE_EOI, timeout) ?:
		      set_routes(s.vm, r1, 1);
	if (!ret) {
		at_change = take(fds[1]);
		ret = vt_until(&s.vt[0], GUEST_PORT_POST_EOI, timeout);
		at_old_eoi = take(fds[1]);
		e0 = s.vm->vcpu[0].eoi_exits;
	}
	/* The device still asserts: the VMM's resample handler raises again. */
	if (!ret) {
		none = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ret = round_trip(&s.vt[1], fds[0], fds[1], none, &t1, timeout);
		c0 = vcpu_count(&s.vm->vcpu[0]);
	}
	tap_diag("retarget in service: resamples at change %u, at vCPU 0's EOI %u",
		 at_change, at_old_eoi);
	tap_diag("  vCPU 0 EOI exits %u; vCPU 1 delivered %u resampled %u; vCPU 0 count %u",
		 e0, ret ? 0 : vcpu_count(&s.vm->vcpu[1]), t1.resampled, c0);
	tap_result(!ret && at_change == 1 && at_old_eoi == 0 && c0 == 1 &&
		   vcpu_count(&s.vm->vcpu[1]) == 1 && t1.resampled == 1 &&
		   !t1.early,
		   "route moved to APIC ID 1 in service: 1 resample at the change, 0 at vCPU 0's EOI, next interrupt on vCPU 1 resampled");
	tap_result(!ret && e0 <= 1 && (!e0 || s.vm->vcpu[0].last_eoi_vector ==
					 TEST_LEVEL_VECTOR) &&
		   s.vm->vcpu[1].eoi_exits == 0,
		   "vCPU 0's EOI after the move: %u KVM_EXIT_IOAPIC_EOI (6.12: 1, 6.1: 0), vCPU 1: 0",
		   e0);

	ok = false;
	if (!ret) {
		ret = eventfd_raise(fds[0]) ?:
		      vt_until(&s.vt[1], GUEST_PORT_PRE_EOI, timeout) ?:
		      set_routes(s.vm, r1, 1);
		at_change = take(fds[1]);
		if (!ret)
			ret = vt_until(&s.vt[1], GUEST_PORT_POST_EOI, timeout);
		at_old_eoi = take(fds[1]);
		/* The "masked" pin's route is still there: a raise arrives. */
		if (!ret)
			ret = round_trip(&s.vt[1], fds[0], fds[1], none, &t1,
					 timeout);
		tap_diag("same table re-committed in service: resamples at commit %u, at EOI %u",
			 at_change, at_old_eoi);
		tap_diag("  then a raise: vCPU 1 count %u, resampled %u",
			 ret ? 0 : vcpu_count(&s.vm->vcpu[1]), t1.resampled);
		ok = !ret && at_change == 0 && at_old_eoi == 1 &&
		     vcpu_count(&s.vm->vcpu[1]) == 3 && t1.resampled == 2 &&
		     !t1.early && !t1.missing &&
		     vcpu_count(&s.vm->vcpu[0]) == 1;
	}
	tap_result(ok, "same table re-committed (QEMU masking a pin): %s",
		   "no resample then, 1 at the EOI, a raise still delivered");
	if (none >= 0)
		close(none);
	close_fds(fds, 2);
	smp_destroy(&s);
}

/*
 * Cases 12-13: a route change that races with the vCPUs' rescan of their
 * EOI vectors.  KVM EOIs a vector in the kernel (and resamples it) only if
 * the vCPU's ioapic_handled_vectors contain it, and a vCPU recomputes those
 * only on the KVM_REQ_SCAN_IOAPIC that KVM_SET_GSI_ROUTING makes.  The
 * route change resamples the pin; a device whose line still asserts
 * raises its irqfd again at once, now to vCPU 1.  A resample signalled
 * before the scan request lets vCPU 1 take and EOI that interrupt with its
 * old vectors, unseen: the device stays masked for good.
 *
 * vCPU 1's thread (halted in the guest), the device and this thread (in
 * KVM_SET_GSI_ROUTING) run on one CPU in that order of priority
 * (race_cpu_enter()), so on a fully preemptible kernel the device runs at
 * the resample and vCPU 1 at the raise, inside the ioctl: vCPU 1's EOI
 * must still be resampled, once.
 */
struct race {
	struct race_cpu rc;
	struct reraiser dev;
};

/*
 * Put the device and vCPU 1 in place on one CPU, vCPU 1 running until its
 * EOI is done, and commit @r: 0, -EPERM (no SCHED_FIFO: skip) or -errno.
 * vCPU 1's ISR makes no exit before its EOI, where its thread would stop
 * and let the ioctl go on.
 */
static int race_commit(struct smp_vm *s, struct race *rc, int *fds,
		       const struct route *r, int n, int timeout)
{
	struct guest_params *p = s->vm->vcpu[1].params;
	int ret, vret;

	rc->dev.trigger = fds[0];
	rc->dev.resample = fds[1];
	rc->dev.wait_ms = timeout;
	rc->dev.quiet_ms = QUIET_MS;
	ret = race_cpu_enter(&rc->rc);
	if (ret)
		return ret;
	p->pre_eoi_port = 0;
	/* Each runs at once and sleeps: in poll(), and in KVM_RUN (HLT). */
	ret = race_cpu_add(&rc->rc, s->vt[1].thread, RACE_PRIO_VCPU) ?:
	      reraiser_start(&rc->dev, rc->rc.cpu, RACE_PRIO_DEVICE);
	if (ret)
		goto out;
	vt_post(&s->vt[1], VT_RUN_UNTIL, GUEST_PORT_POST_EOI, timeout);
	ret = set_routes(s->vm, r, n);
	reraiser_join(&rc->dev);
	/* With nothing raised vCPU 1 would only time out: not worth a wait. */
	vret = rc->dev.raised ? vt_wait(&s->vt[1]) : -ENOENT;
	ret = ret ?: vret;
out:
	race_cpu_leave(&rc->rc);
	p->pre_eoi_port = GUEST_PORT_PRE_EOI;
	return ret;
}

/*
 * Case 12: GSI A's level route to APIC ID 1 goes away, a raise meanwhile is
 * dropped (the device stays asserted and masked), and the route comes back
 * while vCPU 0 and vCPU 1 both run: the route's return resamples, the
 * device raises again, vCPU 1 takes it and its EOI resamples once; vCPU 0
 * sees nothing.
 */
static void test_race_appear(int timeout)
{
	const struct route r[] = { { GSI_A, 1 } };
	int fds[2] = { -1, -1 };
	unsigned int at_gone = 0, raised = 0, c0 = 0, c1 = 0;
	struct race rc = { 0 };
	struct smp_vm s;
	int ret, q0 = -1;
	bool ok = false;

	ret = smp_setup(&s, r, 1, true, timeout);
	if (!ret)
		ret = resample_irqfd(s.vm, GSI_A, &fds[0], &fds[1]) ?:
		      set_routes(s.vm, NULL, 0);
	if (!ret) {
		at_gone = take(fds[1]);
		ret = eventfd_raise(fds[0]);
	}
	/* Dropped; the quiet window also lets both vCPUs rescan. */
	if (!ret) {
		raised++;
		ret = quiet_both(&s, &fds[1], 1) ? 0 : -EPROTO;
	}
	if (!ret) {
		/* vCPU 0 runs (halted in the guest) through the race. */
		vt_post(&s.vt[0], VT_QUIET, 0, QUIET_MS);
		ret = race_commit(&s, &rc, fds, r, 1, timeout);
		q0 = vt_wait(&s.vt[0]);
	}
	if (ret == -EPERM && !rc.dev.raised) {
		tap_skip("SCHED_FIFO not allowed: cannot order the threads of the race");
		goto out;
	}
	if (!ret) {
		raised += rc.dev.raised;
		c0 = vcpu_count(&s.vm->vcpu[0]);
		c1 = vcpu_count(&s.vm->vcpu[1]);
	}
	race_preempt_diag("KVM_SET_GSI_ROUTING");
	tap_diag("route to APIC 1 back: raised=%u delivered=%u/%u (vCPU 1/0) resampled=%u",
		 raised, c1, c0, at_gone + rc.dev.resampled);
	tap_diag("  %u at the removal, %u doubled; device: %d, vCPU 0 quiet window: %d",
		 at_gone, rc.dev.doubled, rc.dev.ret, q0);
	ok = !ret && at_gone == 1 && raised == 2 && rc.dev.raised == 1 &&
	     !rc.dev.ret && rc.dev.resampled == 2 && !rc.dev.doubled &&
	     c1 == 1 && c0 == 0 && q0 == 0 && quiet_both(&s, &fds[1], 1);
	tap_result(ok,
		   "route to APIC ID 1 back while both vCPUs run, the device re-raises at the resample: %s",
		   "on vCPU 1 once, its EOI resampled once");
out:
	close_fds(fds, 2);
	smp_destroy(&s);
}

/*
 * Case 13: GSI A's route moves from APIC ID 0 to APIC ID 1 while vCPU 0
 * has its interrupt in service (case 9, but the device re-raises at once):
 * the re-raised interrupt lands on vCPU 1 and is resampled at vCPU 1's EOI,
 * vCPU 0's EOI resamples nothing, and the next interrupt goes to vCPU 1
 * and is resampled there too: no interrupt lost or doubled.
 */
static void test_race_retarget(int timeout)
{
	const struct route r0[] = { { GSI_A, 0 } };
	const struct route r1[] = { { GSI_A, 1 } };
	int fds[2] = { -1, -1 };
	unsigned int at_old_eoi = 0, raised = 0, resampled, c0 = 0, c1 = 0;
	struct tally t1 = { 0 };
	struct race rc = { 0 };
	struct smp_vm s;
	int ret, none = -1;
	bool ok = false;

	ret = smp_setup(&s, r0, 1, true, timeout);
	if (!ret)
		ret = resample_irqfd(s.vm, GSI_A, &fds[0], &fds[1]) ?:
		      eventfd_raise(fds[0]);
	if (!ret) {
		raised++;
		ret = vt_until(&s.vt[0], GUEST_PORT_PRE_EOI, timeout) ?:
		      race_commit(&s, &rc, fds, r1, 1, timeout);
	}
	if (ret == -EPERM && !rc.dev.raised) {
		tap_skip("SCHED_FIFO not allowed: cannot order the threads of the race");
		goto out;
	}
	raised += rc.dev.raised;
	if (!ret) {
		ret = vt_until(&s.vt[0], GUEST_PORT_POST_EOI, timeout);
		at_old_eoi = take(fds[1]);
	}
	/* The device still asserts: it raises again at the resample. */
	if (!ret) {
		none = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ret = round_trip(&s.vt[1], fds[0], fds[1], none, &t1, timeout);
		raised += t1.raised;
	}
	if (!ret) {
		c0 = vcpu_count(&s.vm->vcpu[0]);
		c1 = vcpu_count(&s.vm->vcpu[1]);
	}
	resampled = rc.dev.resampled + at_old_eoi + t1.resampled;
	race_preempt_diag("KVM_SET_GSI_ROUTING");
	tap_diag("retarget race: raised=%u delivered=%u/%u (vCPU 0/1) resampled=%u",
		 raised, c0, c1, resampled);
	tap_diag("  device: %d, resampled %u (change + vCPU 1's EOI), %u doubled",
		 rc.dev.ret, rc.dev.resampled, rc.dev.doubled);
	tap_diag("  resampled at vCPU 0's EOI %u, at the next one's on vCPU 1 %u",
		 at_old_eoi, t1.resampled);
	ok = !ret && raised == 3 && rc.dev.raised == 1 && !rc.dev.ret &&
	     rc.dev.resampled == 2 && !rc.dev.doubled && at_old_eoi == 0 &&
	     c0 == 1 && c1 == 2 && t1.resampled == 1 && !t1.early &&
	     !t1.missing && quiet_both(&s, &fds[1], 1);
	tap_result(ok,
		   "route moved to APIC ID 1 in service, the device re-raises at the resample: %s",
		   "vCPU 1's EOIs resampled once each, none at vCPU 0's");
out:
	if (none >= 0)
		close(none);
	close_fds(fds, 2);
	smp_destroy(&s);
}

/*
 * Case 14, also on stock KVM: the same two vCPUs and devices as case 6, the
 * way a VMM resamples without the capability.  Plain irqfds raise the level
 * MSI routes; each EOI exits (KVM_EXIT_IOAPIC_EOI), and the VMM's IOAPIC
 * signals the device there (vcpu->eoi_eventfd).  Case 6's counts, on a path
 * with no kit code, tell the capability's losses from the testbed's.
 */
static void test_userspace_resample(int iters, int timeout)
{
	int fds[4] = { -1, -1, -1, -1 };	/* ta, ra, tb, rb */
	unsigned int e0 = 0, e1 = 0;
	struct smp_vm s;
	bool ok = false;
	int ret;

	ret = two_device_vm(&s, fds, false, timeout);
	if (!ret)
		ret = both_at_once_retry(&s, fds, false, iters, timeout, &ok);
	if (s.vm) {
		e0 = s.vm->vcpu[0].eoi_exits;
		e1 = s.vm->vcpu[1].eoi_exits;
	}
	tap_diag("userspace resample: KVM_EXIT_IOAPIC_EOI vCPU 0 %u, vCPU 1 %u (%d)",
		 e0, e1, ret);
	tap_result(ok && e0 == (unsigned int)iters && e1 == (unsigned int)iters,
		   "no capability, the VMM resamples at the EOI exit: both vCPUs at once, %d each, %s",
		   iters, "raised == delivered == resampled, one exit per EOI");
	close_fds(fds, 4);
	smp_destroy(&s);
}

int main(void)
{
	int iters = test_iterations(200);
	int timeout = test_timeout_ms();
	int r, i;

	tap_plan(NR_TESTS);
	tap_diag("iterations=%d timeout=%d ms vector=0x%x, 2 vCPUs", iters,
		 timeout, TEST_LEVEL_VECTOR);
	r = __kvm_check_cap(KVM_CAP_SPLIT_IRQCHIP_RESAMPLE);
	if (r <= 0) {
		for (i = 0; i < NR_TESTS - 1; i++)
			tap_skip("KVM_CAP_SPLIT_IRQCHIP_RESAMPLE not supported (stock KVM)");
	} else {
		tap_result(r == KVM_SPLIT_RESAMPLE_VALID_FLAGS,
			   "KVM_CHECK_EXTENSION(KVM_CAP_SPLIT_IRQCHIP_RESAMPLE) = 0x%x",
			   r);
		test_per_vcpu(iters, timeout);
		test_exit_per_vcpu(timeout);
		test_retarget(timeout);
		test_race_appear(timeout);
		test_race_retarget(timeout);
	}
	test_userspace_resample(iters, timeout);
	return tap_finish();
}
