/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef KVM_IRQBYPASS_RACE_H
#define KVM_IRQBYPASS_RACE_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

/*
 * Races made deterministic on one CPU: the threads involved run on the
 * same CPU under SCHED_FIFO, so the kernel always runs the highest-priority
 * runnable one, and on a fully preemptible kernel the wakeup of a
 * higher-priority thread preempts a lower one at once, even inside an
 * ioctl: a window between two steps of that ioctl is then always taken.
 * Their priorities, lowest first:
 */
#define RACE_PRIO_IOCTL		10	/* the thread in the racing ioctl */
#define RACE_PRIO_DEVICE	20	/* a struct reraiser */
#define RACE_PRIO_VCPU		30	/* a struct vthread */

struct race_cpu {
	int cpu;		/* the CPU they all run on */
	cpu_set_t saved_cpus;	/* the calling thread's, for race_cpu_leave() */
	int saved_policy;
	struct sched_param saved_param;
};

/*
 * Pin the calling thread to the CPU it is on, SCHED_FIFO RACE_PRIO_IOCTL.
 * Returns 0, or -errno (-EPERM: SCHED_FIFO not allowed) with nothing
 * changed.
 */
int race_cpu_enter(struct race_cpu *rc);
/* Pin thread @t to that CPU, SCHED_FIFO @prio, until it exits: 0 or -errno. */
int race_cpu_add(const struct race_cpu *rc, pthread_t t, int prio);
/* Back to the calling thread's own affinity and policy. */
void race_cpu_leave(const struct race_cpu *rc);

/*
 * Print the kernel's preemption model as a TAP diagnostic; true if a wakeup
 * preempts kernel code at once (PREEMPT_RT, full or lazy preemption), which
 * a race inside ioctl @what needs: otherwise the woken thread waits until
 * the ioctl sleeps or returns, and the diagnostic says so.
 */
bool race_preempt_diag(const char *what);

/*
 * A level device behind a resampling irqfd whose line stays asserted, as
 * vfio INTx is: masked until a resample, it then raises its irqfd again.
 * One shot, on its own thread: wait (at most wait_ms) for a resample,
 * raise @trigger, call after_raise(arg) if set, then wait (at most
 * quiet_ms) for the resample of that raise.
 */
struct reraiser {
	int trigger, resample;
	int wait_ms, quiet_ms;
	void (*after_raise)(void *arg);
	void *arg;
	/* Results, valid after reraiser_join(). */
	unsigned int raised, resampled;
	unsigned int doubled;	/* reads that found more than one resample */
	int ret;		/* 0, or the -errno that ended it */
	pthread_t thread;
};

/* Start it on @cpu as SCHED_FIFO @prio (@cpu < 0: the caller's policy). */
int reraiser_start(struct reraiser *d, int cpu, int prio);
void reraiser_join(struct reraiser *d);

#endif /* KVM_IRQBYPASS_RACE_H */
