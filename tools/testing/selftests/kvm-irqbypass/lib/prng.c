// SPDX-License-Identifier: GPL-2.0-only
/*
 * A seeded PRNG and the campaign's seed; see prng.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prng.h"
#include "tap.h"

void prng_seed(struct prng *p, u64 seed)
{
	/* Any seed, 0 included, gives a nonzero state. */
	p->state = seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
	if (!p->state)
		p->state = 1;
}

u64 prng_next(struct prng *p)
{
	u64 x = p->state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	p->state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

u32 prng_below(struct prng *p, u32 n)
{
	return n ? (u32)((prng_next(p) >> 32) % n) : 0;
}

void prng_usleep(struct prng *p, u32 max_us)
{
	u32 us = prng_below(p, max_us);

	if (us)
		usleep(us);
}

u64 stress_seed(void)
{
	const char *s = getenv("KVM_IRQBYPASS_SEED");

	if (s && *s)
		return strtoull(s, NULL, 0);
	return (u64)now_us() ^ ((u64)getpid() << 32);
}

u64 stress_init(const char *name)
{
	u64 seed;

	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = stress_seed();
	printf("# seed %llu\n", (unsigned long long)seed);
	printf("# replay: KVM_IRQBYPASS_SEED=%llu %s\n",
	       (unsigned long long)seed, name);
	return seed;
}
