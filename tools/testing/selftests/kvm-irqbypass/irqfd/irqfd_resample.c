// SPDX-License-Identifier: GPL-2.0-only
/*
 * irqfd_resample: level-triggered irqfd emulation with
 * KVM_IRQFD_FLAG_RESAMPLE on an IOAPIC pin of the in-kernel irqchip.
 *
 * The resamplefd must fire on the guest's EOI and at no other time: the
 * guest ISR exits to the host once before its EOI (the resamplefd must not
 * be readable yet: the line is still asserted) and once after it (it must
 * be readable exactly once).  Only then does the host re-raise, as a VMM
 * with a still-pending device would.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kvm_util_lite.h"
#include "tap.h"

#define TEST_GSI	5	/* an IOAPIC pin with KVM's default routing */
#define QUIET_MS	1000
#define NR_TESTS	8

struct counters {
	unsigned int raised;	/* trigger eventfd writes by the host */
	unsigned int signalled;	/* of those, consumed by KVM's irqfd */
	unsigned int delivered;	/* guest ISR invocations */
	unsigned int resampled;	/* resamplefd notifications after an EOI */
	unsigned int early;	/* resamplefd readable before the EOI */
	unsigned int missing;	/* resamplefd not readable after the EOI */
};

/* One raise/ISR/EOI round; returns 0 or a negative errno. */
static int one_round(struct lite_vm *vm, int trigger, int resample,
		     unsigned int round, struct counters *c, int timeout)
{
	u64 value;
	u32 count;
	int ret;

	ret = eventfd_raise(trigger);
	if (ret)
		return ret;
	c->raised++;

	ret = guest_run_until(vm, GUEST_PORT_PRE_EOI, &count, timeout);
	if (ret)
		return ret;
	c->delivered = guest_count(vm);
	/* Injection went through a work item: by now it has run. */
	if (!fd_readable(trigger))
		c->signalled++;
	if (fd_readable(resample)) {
		if (!c->early++)
			tap_diag("round %u: resamplefd readable before the EOI",
				 round);
		eventfd_drain(resample, NULL);
	}

	ret = guest_run_until(vm, GUEST_PORT_POST_EOI, &count, timeout);
	if (ret)
		return ret;
	if (fd_readable(resample) && !eventfd_drain(resample, &value)) {
		c->resampled += value;
		if (value != 1)
			tap_diag("round %u: resamplefd count %llu", round,
				 (unsigned long long)value);
	} else if (!c->missing++) {
		tap_diag("round %u: resamplefd not readable after the EOI",
			 round);
	}
	if (count != round || c->delivered != round) {
		tap_diag("round %u: ISR reported count %u, guest count %u",
			 round, count, c->delivered);
		return -EPROTO;
	}
	return 0;
}

int main(void)
{
	int iters = test_iterations(500);
	int timeout = test_timeout_ms();
	struct guest_params params = {
		.flags = GUEST_F_IOAPIC | GUEST_F_LEVEL,
		.vector = TEST_LEVEL_VECTOR,
		.ioapic_pin = TEST_GSI,
		.pre_eoi_port = GUEST_PORT_PRE_EOI,
		.post_eoi_port = GUEST_PORT_POST_EOI,
		.target = iters,
	};
	struct counters c = { 0 };
	int trigger = -1, resample = -1;
	struct lite_vm *vm;
	u32 value;
	int i, ret;
	bool ok;

	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	tap_diag("iterations=%d timeout=%d ms gsi=%d vector=0x%x", iters,
		 timeout, TEST_GSI, TEST_LEVEL_VECTOR);

	vm = __vm_create(IRQCHIP_KERNEL);
	ok = vm && !vm_start_guest(vm, &params) &&
	     !guest_run_until(vm, GUEST_PORT_READY, NULL, timeout);
	if (!tap_result(ok, "guest programmed IOAPIC pin %d level-triggered and is ready",
			TEST_GSI))
		goto out;

	trigger = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	resample = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ret = trigger < 0 || resample < 0 ? -errno :
	      __vm_irqfd(vm, trigger, TEST_GSI, KVM_IRQFD_FLAG_RESAMPLE, resample);
	if (ret)
		tap_diag("KVM_IRQFD(RESAMPLE): %s", strerror(-ret));
	if (!tap_result(!ret, "KVM_IRQFD with KVM_IRQFD_FLAG_RESAMPLE on GSI %d",
			TEST_GSI))
		goto out;

	for (i = 1; i <= iters; i++)
		if (one_round(vm, trigger, resample, i, &c, timeout))
			break;
	c.delivered = guest_count(vm);
	tap_diag("raised=%u signalled=%u delivered=%u resampled=%u early=%u missing=%u",
		 c.raised, c.signalled, c.delivered, c.resampled, c.early,
		 c.missing);

	tap_result(c.raised == (unsigned int)iters && c.delivered == c.raised &&
		   c.signalled == c.raised,
		   "%d level interrupts delivered, one per raise", iters);
	tap_result(c.raised == (unsigned int)iters && !c.early,
		   "resamplefd quiet between ISR entry and EOI");
	tap_result(c.raised == (unsigned int)iters && !c.missing &&
		   c.resampled == c.raised,
		   "resamplefd signalled once after every EOI");

	ret = guest_run_until(vm, GUEST_PORT_DONE, &value, timeout);
	if (!tap_result(!ret && value == (u32)iters,
			"guest reported done at count %d", iters))
		goto out;

	/* The resampler deasserted the line: no re-delivery after the EOI. */
	ret = guest_run_quiet(vm, QUIET_MS);
	tap_result(ret == 0 && !fd_readable(resample),
		   "no re-delivery and no resample in a %d ms quiet window",
		   QUIET_MS);

	ret = __vm_irqfd(vm, trigger, TEST_GSI, KVM_IRQFD_FLAG_DEASSIGN, 0);
	if (ret)
		tap_diag("KVM_IRQFD deassign: %s", strerror(-ret));
	ok = !ret && !eventfd_raise(trigger) &&
	     guest_run_quiet(vm, QUIET_MS) == 0 && fd_readable(trigger);
	tap_result(ok, "deassigned resample irqfd no longer injects");

out:
	if (trigger >= 0)
		close(trigger);
	if (resample >= 0)
		close(resample);
	vm_destroy(vm);
	return tap_finish();
}
