// SPDX-License-Identifier: GPL-2.0-only
/*
 * The edu raiser thread; see raiser.h.
 */
#include <errno.h>
#include <time.h>

#include "raiser.h"

static void *raiser_main(void *arg)
{
	struct raiser *r = arg;
	struct timespec ts = { .tv_nsec = r->delay_us * 1000L };

	for (;;) {
		while (sem_wait(&r->go) && errno == EINTR)
			;
		if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
			return NULL;
		nanosleep(&ts, NULL);
		/* Counted first: whoever sees the interrupt sees the count. */
		__atomic_add_fetch(&r->raised, 1, __ATOMIC_RELEASE);
		edu_write(r->edu, EDU_REG_IRQ_RAISE, 1);
	}
}

int raiser_start(struct raiser *r, struct edu_dev *edu, unsigned int delay_us)
{
	r->edu = edu;
	r->delay_us = delay_us;
	r->stop = false;
	r->raised = 0;
	if (sem_init(&r->go, 0, 0))
		return -errno;
	r->started = !pthread_create(&r->thread, NULL, raiser_main, r);
	return r->started ? 0 : -EAGAIN;
}

void raiser_post(struct raiser *r)
{
	sem_post(&r->go);
}

unsigned int raiser_raised(struct raiser *r)
{
	return __atomic_load_n(&r->raised, __ATOMIC_ACQUIRE);
}

void raiser_stop(struct raiser *r)
{
	if (!r->started)
		return;
	__atomic_store_n(&r->stop, true, __ATOMIC_RELEASE);
	sem_post(&r->go);
	pthread_join(r->thread, NULL);
	r->started = false;
}

struct guest_params raiser_intx_guest(u32 pin, u32 bar0_gpa, u32 extra_flags)
{
	struct guest_params params = {
		.flags = GUEST_F_IOAPIC | GUEST_F_LEVEL | extra_flags,
		.vector = TEST_LEVEL_VECTOR,
		.ioapic_pin = pin,
		.ack_addr = bar0_gpa + EDU_REG_IRQ_ACK,
		.ack_value = 1,
		.post_eoi_port = GUEST_PORT_POST_EOI,
		.target = ~0u,
	};

	return params;
}
