// SPDX-License-Identifier: GPL-2.0-only
/*
 * stress_intx: the edu's level INTx through vfio and a resampling KVM
 * irqfd (as vfio_intx) while the test churns everything around it
 * (Documentation/reliability.rst).  Before each interrupt one operation is
 * picked at random:
 *
 *   plain     nothing: the fast path injects (IOAPIC pin, inject work:
 *             the vCPU thread is in userspace when the test raises)
 *   halted    raised by a second thread while the vCPU halts in KVM_RUN:
 *             the kit's vCPU thread sets the pin (irqfd_vcpu_inject)
 *   mask      VFIO mask, raise, VFIO unmask: vfio finds the interrupt
 *             pending at unmask and signals the trigger eventfd itself
 *   deassign  the irqfd is deassigned: vfio signals the eventfd, which the
 *             test reads, acks the device and unmasks; then reassigned
 *   route     the GSI's routing flips between the PIC+IOAPIC default and
 *             the IOAPIC pin alone
 *   teardown  the interrupt is injected into the VM, which is destroyed
 *             before its guest runs; the test acks the device, unmasks,
 *             and builds a new VM
 *
 * Every interrupt must be counted exactly once: by the guest's ISR (ISR
 * count and the device ack it does), by a read of the trigger eventfd, or
 * as absorbed by a VM destroyed with it pending; a second delivery shows
 * up as an ISR run or an eventfd count nobody raised.
 *
 * In the testbed (nested SVM under TCG) the guest now and then loses its
 * state: it is found at a host kernel address, triple faults or takes an
 * exception it has no reason for, with stock KVM as with the kit
 * (Documentation/testing.rst).  Such a guest takes no interrupt, so the
 * one it waited for is counted as crashed, not lost, and the run continues
 * with a new VM as after a teardown; CRASH_LIMIT of them at most.
 *
 * KVM_IRQBYPASS_SEED        replay a run
 * KVM_IRQBYPASS_INTX_IRQS   interrupts (default 5000)
 * KVM_IRQBYPASS_SECONDS     time bound (default 120)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kvm_util_lite.h"
#include "prng.h"
#include "raiser.h"
#include "tap.h"
#include "vfio_util_lite.h"

#define NR_TESTS	6
#define TEST_GSI	5
#define EDU_BAR0_GPA	0xe0000000u
#define SIGNAL_MS	5000
#define CRASH_LIMIT	2

enum op {
	OP_PLAIN, OP_HALTED, OP_MASK, OP_DEASSIGN, OP_ROUTE, OP_TEARDOWN,
	NR_OPS
};

static const char *const op_name[NR_OPS] = {
	"plain", "halted", "mask", "deassign", "route", "teardown",
};

/* The raiser's delay: the vCPU thread is back in KVM_RUN by then. */
#define RAISE_DELAY_US	2000

struct intx_rig {
	struct edu_dev edu;
	struct raiser raiser;
	struct lite_vm *vm;
	struct guest_params params;
	int trigger, resample;
	bool irqfd, intx;
	bool pic_route;		/* GSI routed to the PIC and the IOAPIC */
	u32 guest_seen;		/* ISR count of this VM already accounted */
	int timeout;

	enum op op;		/* the current interrupt's operation */
	unsigned int ops[NR_OPS];
	unsigned int raised, guest, signalled, absorbed, crashed;
	unsigned int lost, extra;
};

static int irqfd_set(struct intx_rig *r, bool on)
{
	int ret;

	if (r->irqfd == on)
		return 0;
	ret = __vm_irqfd(r->vm, r->trigger, TEST_GSI,
			 on ? KVM_IRQFD_FLAG_RESAMPLE : KVM_IRQFD_FLAG_DEASSIGN,
			 on ? r->resample : 0);
	if (ret)
		tap_diag("KVM_IRQFD(%s): %s", on ? "assign" : "deassign",
			 strerror(-ret));
	else
		r->irqfd = on;
	return ret;
}

/* GSI 5 to IOAPIC pin 5, with or without PIC pin 5 (the default). */
static int route_set(struct intx_rig *r, bool pic)
{
	struct {
		struct kvm_irq_routing hdr;
		struct kvm_irq_routing_entry e[2];
	} t = { .hdr.nr = pic ? 2 : 1 };
	int ret;

	t.e[0] = (struct kvm_irq_routing_entry) {
		.gsi = TEST_GSI, .type = KVM_IRQ_ROUTING_IRQCHIP,
		.u.irqchip = { .irqchip = KVM_IRQCHIP_IOAPIC, .pin = TEST_GSI },
	};
	t.e[1] = (struct kvm_irq_routing_entry) {
		.gsi = TEST_GSI, .type = KVM_IRQ_ROUTING_IRQCHIP,
		.u.irqchip = { .irqchip = KVM_IRQCHIP_PIC_MASTER, .pin = TEST_GSI },
	};
	ret = ioctl(r->vm->vm_fd, KVM_SET_GSI_ROUTING, &t) < 0 ? -errno : 0;
	if (ret)
		tap_diag("KVM_SET_GSI_ROUTING: %s", strerror(-ret));
	else
		r->pic_route = pic;
	return ret;
}

static int vm_up(struct intx_rig *r)
{
	r->vm = __vm_create(IRQCHIP_KERNEL);
	r->guest_seen = 0;
	r->irqfd = false;
	r->pic_route = true;
	if (!r->vm || vm_add_memory(r->vm, EDU_BAR0_GPA, r->edu.bar0,
				    r->edu.bar0_size) ||
	    vm_start_guest(r->vm, &r->params) ||
	    guest_run_until(r->vm, GUEST_PORT_READY, NULL, r->timeout))
		return -EIO;
	return irqfd_set(r, true);
}

static void vm_down(struct intx_rig *r)
{
	if (r->irqfd)
		irqfd_set(r, false);
	vm_destroy(r->vm);
	r->vm = NULL;
}

static int vfio_intx(struct intx_rig *r, u32 action, const s32 *fd)
{
	int ret = vfio_set_irqs(r->edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX,
				action, 0, 1, fd);

	if (ret)
		tap_diag("VFIO_DEVICE_SET_IRQS(INTx, action 0x%x): %s", action,
			 strerror(-ret));
	return ret;
}

/* Wait for the trigger eventfd; its count, 0 on timeout. */
static u64 wait_signal(struct intx_rig *r, int ms)
{
	u64 cnt = 0;

	while (read(r->trigger, &cnt, sizeof(cnt)) != sizeof(cnt) && ms-- > 0)
		usleep(1000);
	return cnt;
}

/* The host masked the line and signalled: ack the device, then unmask. */
static int ack_and_unmask(struct intx_rig *r)
{
	edu_write(&r->edu, EDU_REG_IRQ_ACK, ~0u);
	return vfio_intx(r, VFIO_IRQ_SET_ACTION_UNMASK, NULL);
}

/*
 * The VM is gone with the current interrupt pending in it or raised into a
 * guest that could not take it: a second delivery would show up on the
 * eventfd now.  Ack the device, unmask, build a new VM.
 */
static int vm_replace(struct intx_rig *r)
{
	vm_destroy(r->vm);
	r->vm = NULL;
	r->irqfd = false;
	if (wait_signal(r, 0)) {
		if (!r->extra++)
			tap_diag("interrupt %u: signalled after injection",
				 r->raised);
	}
	return ack_and_unmask(r) ?: vm_up(r);
}

/*
 * One interrupt through the guest: its ISR runs once, nothing else.  A
 * guest that lost its state (vcpu->crashed) counts it as crashed and is
 * replaced; one that is where it should be and saw nothing lost it.
 */
static int expect_guest(struct intx_rig *r)
{
	u32 value;

	if (!guest_run_until(r->vm, GUEST_PORT_POST_EOI, &value, r->timeout) &&
	    value == r->guest_seen + 1) {
		r->guest_seen = value;
		r->guest++;
		return 0;
	}
	if (r->vm->vcpu[0].crashed && r->crashed < CRASH_LIMIT) {
		r->crashed++;
		tap_diag("interrupt %u (%s): the guest crashed (%s); a new VM",
			 r->raised, op_name[r->op],
			 "the testbed's, not delivery: Documentation/testing.rst");
		return vm_replace(r);
	}
	if (!r->lost++)
		tap_diag("interrupt %u (%s): no ISR run (count %u)",
			 r->raised, op_name[r->op], guest_count(r->vm));
	return 0;
}

/* One interrupt through the eventfd: one count, the guest untouched. */
static void expect_signal(struct intx_rig *r)
{
	u64 cnt = wait_signal(r, SIGNAL_MS);

	if (cnt == 1)
		r->signalled++;
	else if (!cnt && !r->lost++)
		tap_diag("interrupt %u (%s): no eventfd count", r->raised,
			 op_name[r->op]);
	else if (cnt > 1)
		r->extra += cnt - 1;
	ack_and_unmask(r);
}

static int one_interrupt(struct intx_rig *r, enum op op)
{
	long long host;
	int ret = 0;
	int ms;

	r->op = op;
	r->ops[op]++;
	switch (op) {
	case OP_PLAIN:
		r->raised++;
		edu_write(&r->edu, EDU_REG_IRQ_RAISE, 1);
		ret = expect_guest(r);
		break;
	case OP_HALTED:
		r->raised++;
		raiser_post(&r->raiser);
		ret = expect_guest(r);
		break;
	case OP_MASK:
		ret = vfio_intx(r, VFIO_IRQ_SET_ACTION_MASK, NULL);
		r->raised++;
		edu_write(&r->edu, EDU_REG_IRQ_RAISE, 1);
		ret = ret ?: vfio_intx(r, VFIO_IRQ_SET_ACTION_UNMASK, NULL);
		ret = expect_guest(r) ?: ret;
		break;
	case OP_DEASSIGN:
		ret = irqfd_set(r, false);
		r->raised++;
		edu_write(&r->edu, EDU_REG_IRQ_RAISE, 1);
		expect_signal(r);
		ret = ret ?: irqfd_set(r, true);
		break;
	case OP_ROUTE:
		ret = route_set(r, !r->pic_route);
		r->raised++;
		edu_write(&r->edu, EDU_REG_IRQ_RAISE, 1);
		ret = expect_guest(r) ?: ret;
		break;
	case OP_TEARDOWN:
		host = proc_interrupts_count("vfio-intx(", r->edu.bdf);
		r->raised++;
		edu_write(&r->edu, EDU_REG_IRQ_RAISE, 1);
		/*
		 * The host handled it (masked): pending in the VM's IOAPIC.
		 * Wait for the host's count rather than a fixed time: under
		 * TCG the interrupt can take longer than a millisecond to
		 * arrive, and one that finds the irqfd gone is signalled
		 * instead (once, but not what this step counts).  The count
		 * goes up as the handler starts: give it 1 ms to finish.
		 */
		for (ms = r->timeout; ms > 0 &&
		     proc_interrupts_count("vfio-intx(", r->edu.bdf) <= host; ms--)
			usleep(1000);
		usleep(1000);
		r->absorbed++;
		ret = vm_replace(r);
		break;
	default:
		break;
	}
	return ret;
}

int main(void)
{
	u64 seed = stress_init("stress_intx");
	long n = env_long("KVM_IRQBYPASS_INTX_IRQS", 5000, 1);
	long long deadline = now_us() +
		env_long("KVM_IRQBYPASS_SECONDS", 120, 1) * 1000000LL;
	struct intx_rig r = {
		.params = raiser_intx_guest(TEST_GSI, EDU_BAR0_GPA, 0),
		.trigger = -1, .resample = -1,
		.timeout = test_timeout_ms(),
	};
	struct prng p;
	u64 cnt;
	int ret, i;
	bool ok;

	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	prng_seed(&p, seed);

	ret = edu_open(&r.edu);
	if (ret == -ENODEV) {
		tap_skip_rest("no edu device (1234:11e8) on this machine");
		return tap_finish();
	}
	ok = !ret && !edu_check_alive(&r.edu) &&
	     vfio_irq_count(r.edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX) == 1;
	r.trigger = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r.resample = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ok = ok && r.trigger >= 0 && r.resample >= 0 && !vm_up(&r) &&
	     !raiser_start(&r.raiser, &r.edu, RAISE_DELAY_US);
	r.intx = ok && !vfio_intx(&r, VFIO_IRQ_SET_ACTION_TRIGGER, &r.trigger);
	ok = r.intx && !vfio_intx(&r, VFIO_IRQ_SET_ACTION_UNMASK, &r.resample);
	if (!tap_result(ok, "edu INTx -> resampling KVM_IRQFD on GSI %d, VM and guest ready",
			TEST_GSI))
		goto out;

	for (i = 0; i < n && !deadline_passed(deadline); i++) {
		/* Teardown 1 in 40: a new VM takes a while under TCG. */
		u32 pick = prng_below(&p, 40);
		enum op op = pick < 8 ? OP_PLAIN : pick < 16 ? OP_HALTED :
			     pick < 24 ? OP_MASK :
			     pick < 31 ? OP_DEASSIGN : pick < 39 ? OP_ROUTE :
			     OP_TEARDOWN;

		if (one_interrupt(&r, op) || r.lost)
			break;
	}
	tap_diag("ops: plain=%u halted=%u mask=%u deassign=%u route=%u teardown=%u",
		 r.ops[OP_PLAIN], r.ops[OP_HALTED], r.ops[OP_MASK], r.ops[OP_DEASSIGN],
		 r.ops[OP_ROUTE], r.ops[OP_TEARDOWN]);
	tap_diag("raised=%u guest=%u signalled=%u absorbed=%u crashed=%u lost=%u extra=%u",
		 r.raised, r.guest, r.signalled, r.absorbed, r.crashed, r.lost,
		 r.extra);
	tap_result(r.raised == (unsigned int)i && i > 0 && !r.lost,
		   "%u interrupts under churn, none lost", r.raised);
	tap_result(r.guest + r.signalled + r.absorbed + r.crashed == r.raised,
		   "each counted once: %u by the guest, %u from the eventfd, %u absorbed by a destroyed VM, %u in a crashed guest",
		   r.guest, r.signalled, r.absorbed, r.crashed);
	tap_result(r.ops[OP_HALTED] && r.ops[OP_MASK] && r.ops[OP_DEASSIGN] &&
		   r.ops[OP_ROUTE],
		   "halted, mask, deassign and route operations all ran");

	/* Nothing late: no ISR run, no eventfd count in a quiet window. */
	ret = r.vm ? guest_run_quiet(r.vm, 500) : -EIO;
	cnt = wait_signal(&r, 0);
	tap_result(!ret && !cnt && !r.extra,
		   "no late or second delivery (guest quiet, eventfd %llu, extra %u)",
		   (unsigned long long)cnt, r.extra);

	edu_write(&r.edu, EDU_REG_IRQ_ACK, ~0u);
	ret = vfio_set_irqs(r.edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	r.intx = false;
	ret = ret ?: irqfd_set(&r, false);
	tap_result(!ret, "INTx disabled and irqfd deassigned cleanly");

out:
	raiser_stop(&r.raiser);
	if (r.intx)
		vfio_set_irqs(r.edu.device_fd, VFIO_PCI_INTX_IRQ_INDEX,
			      VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	if (r.vm)
		vm_down(&r);
	if (r.trigger >= 0)
		close(r.trigger);
	if (r.resample >= 0)
		close(r.resample);
	edu_close(&r.edu);
	return tap_finish();
}
