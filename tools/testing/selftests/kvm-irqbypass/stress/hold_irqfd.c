// SPDX-License-Identifier: GPL-2.0-only
/*
 * hold_irqfd: keep every module of the interrupt path in use for
 * rmmod_order.sh: the edu open through vfio-pci with its MSI on an eventfd
 * that is a KVM irqfd of a running VM, and MSIs raised one at a time until
 * SIGTERM.  Prints "# holding" once set up, then its TAP accounting: every
 * MSI delivered exactly once while modules were being removed around it.
 */
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "rig.h"
#include "tap.h"

#define NR_TESTS	4

static int done;

static void on_term(int sig)
{
	(void)sig;
	WRITE_ONCE(done, 1);
}

int main(void)
{
	u64 seed = stress_init("hold_irqfd");
	struct msi_rig r;
	struct irq_acct c;
	struct prng p;
	int ret;

	signal(SIGTERM, on_term);
	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	prng_seed(&p, seed);
	ret = rig_setup_tap(&r, NULL);
	if (ret == -ENODEV)
		return tap_finish();
	if (ret)
		goto out;
	rig_phase_begin(&r, &c);
	printf("# holding\n");
	while (!READ_ONCE(done) && !ret) {
		ret = rig_raise(&r, &c);
		prng_usleep(&p, 5000);
	}
	rig_phase_end(&r, &c, "hold");
	rig_report(&r, "hold", &c, true);
out:
	rig_teardown(&r);
	return tap_finish();
}
