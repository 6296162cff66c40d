/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The campaign's randomness and bounds: a seeded PRNG, the run's seed
 * (replayable) and a time bound.
 */
#ifndef KVM_IRQBYPASS_PRNG_H
#define KVM_IRQBYPASS_PRNG_H

#include <stdbool.h>

#include "kvm_util_lite.h"

/* xorshift64*: small, fast and the same sequence on every machine. */
struct prng {
	u64 state;
};

void prng_seed(struct prng *p, u64 seed);
u64 prng_next(struct prng *p);
/* Uniform in [0, n); 0 when n is 0. */
u32 prng_below(struct prng *p, u32 n);

/*
 * The run's seed: KVM_IRQBYPASS_SEED if set, else from the clock.  Printed
 * as "# seed N" so a failing run can be replayed with KVM_IRQBYPASS_SEED=N.
 */
u64 stress_seed(void);

/*
 * Line-buffer stdout (TAP must survive a kill by run_tests.sh's timeout),
 * print the seed and return it.
 */
u64 stress_init(const char *name);

/* Time bound: true once the deadline (in µs, 0: none) has passed. */
static inline bool deadline_passed(long long deadline_us)
{
	return deadline_us && now_us() >= deadline_us;
}

/* Sleep a random number of µs below max_us (nothing for 0). */
void prng_usleep(struct prng *p, u32 max_us);

#endif /* KVM_IRQBYPASS_PRNG_H */
