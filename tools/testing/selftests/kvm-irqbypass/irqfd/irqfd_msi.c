// SPDX-License-Identifier: GPL-2.0-only
/*
 * irqfd_msi: an eventfd bound with KVM_IRQFD to an MSI route must reach the
 * guest once per signal, with the in-kernel and with the split irqchip.
 *
 * The host raises one interrupt at a time and waits for the guest ISR to
 * report it, so coalescing can never hide a lost or duplicated interrupt:
 * at the end raised == signalled == delivered == N exactly.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kvm_util_lite.h"
#include "tap.h"

#define TESTS_PER_MODE	6
#define QUIET_MS	1000

static const enum irqchip_mode modes[] = { IRQCHIP_KERNEL, IRQCHIP_SPLIT };

struct counters {
	unsigned int raised;	/* eventfd writes by the host */
	unsigned int signalled;	/* of those, consumed by KVM's irqfd */
	unsigned int delivered;	/* guest ISR invocations */
};

/* Always produces exactly TESTS_PER_MODE results, so the plan holds. */
static void test_mode(enum irqchip_mode mode, int iters, int timeout)
{
	const char *name = irqchip_name(mode);
	struct guest_params params = {
		.vector = TEST_MSI_VECTOR,
		.post_eoi_port = GUEST_PORT_POST_EOI,
		.target = iters,
	};
	struct counters c = { 0 };
	struct lite_vm *vm;
	int reported = 0;
	int efd = -1;
	u32 value;
	bool ok;
	int i, ret;

	vm = __vm_create(mode);
	ok = vm && !vm_start_guest(vm, &params) &&
	     !guest_run_until(vm, GUEST_PORT_READY, NULL, timeout);
	reported++;
	if (!tap_result(ok, "%s: guest set up and ready", name))
		goto out;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ok = efd >= 0 && !vm_route_msi(vm, TEST_MSI_GSI, TEST_MSI_VECTOR);
	if (ok) {
		ret = __vm_irqfd(vm, efd, TEST_MSI_GSI, 0, 0);
		if (ret)
			tap_diag("KVM_IRQFD: %s", strerror(-ret));
		ok = !ret;
	}
	reported++;
	if (!tap_result(ok, "%s: MSI route GSI %u -> vector 0x%x bound with KVM_IRQFD",
			name, TEST_MSI_GSI, TEST_MSI_VECTOR))
		goto out;

	for (i = 0; i < iters; i++) {
		if (eventfd_raise(efd))
			break;
		c.raised++;
		if (guest_run_until(vm, GUEST_PORT_POST_EOI, &value, timeout))
			break;
		/* irqfd_wakeup() reads the eventfd counter when it injects. */
		if (!fd_readable(efd))
			c.signalled++;
		c.delivered = guest_count(vm);
		if (value != (u32)i + 1 || c.delivered != (u32)i + 1) {
			tap_diag("raise %d: ISR reported count %u, guest count %u",
				 i + 1, value, c.delivered);
			break;
		}
	}
	c.delivered = guest_count(vm);
	tap_diag("%s: raised=%u signalled=%u delivered=%u", name, c.raised,
		 c.signalled, c.delivered);
	reported++;
	ok = c.raised == (unsigned int)iters && c.signalled == c.raised &&
	     c.delivered == c.raised;
	if (!tap_result(ok, "%s: %d irqfd signals delivered one by one", name,
			iters))
		goto out;

	ret = guest_run_until(vm, GUEST_PORT_DONE, &value, timeout);
	reported++;
	if (!tap_result(!ret && value == (u32)iters,
			"%s: guest reported done at count %d", name, iters))
		goto out;

	ret = guest_run_quiet(vm, QUIET_MS);
	reported++;
	tap_result(ret == 0, "%s: no stray interrupt in a %d ms quiet window", name,
		   QUIET_MS);

	/* After deassign the eventfd is just an eventfd again. */
	ret = __vm_irqfd(vm, efd, TEST_MSI_GSI, KVM_IRQFD_FLAG_DEASSIGN, 0);
	if (ret)
		tap_diag("KVM_IRQFD deassign: %s", strerror(-ret));
	ok = !ret && !eventfd_raise(efd) && guest_run_quiet(vm, QUIET_MS) == 0 &&
	     fd_readable(efd);
	reported++;
	tap_result(ok, "%s: deassigned irqfd no longer injects", name);

out:
	while (reported++ < TESTS_PER_MODE)
		tap_result(false, "%s: not reached", name);
	if (efd >= 0)
		close(efd);
	vm_destroy(vm);
}

int main(void)
{
	int iters = test_iterations(500);
	int timeout = test_timeout_ms();
	unsigned int m;

	tap_plan(TESTS_PER_MODE * ARRAY_SIZE(modes));
	close(kvm_open_or_bail());
	tap_diag("iterations=%d timeout=%d ms", iters, timeout);
	for (m = 0; m < ARRAY_SIZE(modes); m++)
		test_mode(modes[m], iters, timeout);
	return tap_finish();
}
