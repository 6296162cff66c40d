// SPDX-License-Identifier: GPL-2.0-only
/*
 * stress_irqfd_churn: assign and deassign the same irqfd over and over
 * (default 10,000 times, Documentation/reliability.rst) while the edu
 * raises MSIs into it continuously, one at a time.  Every MSI must end up
 * exactly once as a guest ISR run (irqfd assigned) or an eventfd count
 * (deassigned): deassign races with MSIs in flight; assign waits for a
 * quiet point (see struct msi_rig).
 *
 * KVM_IRQBYPASS_SEED        replay a run
 * KVM_IRQBYPASS_CHURN       assign/deassign cycles (default 10000)
 * KVM_IRQBYPASS_SECONDS     time bound of the churn (default 180)
 */
#include <pthread.h>

#include "rig.h"
#include "tap.h"

#define NR_TESTS	6

static void *churn_thread(void *arg)
{
	struct rig_control *ch = arg;
	struct msi_rig *r = &ch->r;
	long i;
	int ret;

	for (i = 0; rig_ctl_go(r, i, ch->ops, ch->deadline); i++) {
		ret = rig_irqfd(r, false);
		prng_usleep(&ch->prng, 200);
		if (!ret) {
			pthread_mutex_lock(&r->lock);
			ret = rig_irqfd(r, true);
			pthread_mutex_unlock(&r->lock);
		}
		if (ret) {
			tap_diag("cycle %ld: KVM_IRQFD: %d", i, ret);
			WRITE_ONCE(r->ctl_err, ret);
			break;
		}
		WRITE_ONCE(r->ctl_ops, i + 1);
		prng_usleep(&ch->prng, 200);
	}
	return NULL;
}

int main(void)
{
	return rig_control_main("stress_irqfd_churn", "churn", NR_TESTS,
				"KVM_IRQBYPASS_CHURN", 10000, 180, churn_thread,
				NULL);
}
