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
#include <errno.h>
#include <unistd.h>

#include "stress_util.h"
#include "tap.h"

#define NR_TESTS	6

struct churn {
	struct msi_rig *r;
	struct prng prng;
	long cycles;
	long long deadline;
};

static void *churn_thread(void *arg)
{
	struct churn *ch = arg;
	struct msi_rig *r = ch->r;
	long i;
	int ret;

	for (i = 0; rig_ctl_go(r, i, ch->cycles, ch->deadline); i++) {
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
	u64 seed = stress_init("stress_irqfd_churn");
	struct churn ch = { 0 };
	int fds = count_open_fds();
	struct msi_rig r;
	struct irq_acct c;
	struct prng p;
	int ret;

	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	ch.cycles = env_long("KVM_IRQBYPASS_CHURN", 10000, 1);
	ch.deadline = now_us() + env_long("KVM_IRQBYPASS_SECONDS", 180, 1) * 1000000;
	ch.r = &r;
	prng_seed(&p, seed);
	prng_seed(&ch.prng, seed + 1);

	ret = rig_setup_tap(&r, NULL);
	if (ret == -ENODEV)
		return tap_finish();
	if (ret)
		goto out;

	rig_control_phase(&r, "churn", churn_thread, &ch, &p, ch.cycles,
			  ch.deadline, &c);

out:
	rig_teardown(&r);
	ret = count_open_fds();
	tap_result(ret == fds, "no descriptor left open (%d before, %d after)",
		   fds, ret);
	return tap_finish();
}
