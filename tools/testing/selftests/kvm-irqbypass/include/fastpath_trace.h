/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef KVM_IRQBYPASS_FASTPATH_TRACE_H
#define KVM_IRQBYPASS_FASTPATH_TRACE_H

#include <stdbool.h>

/* Kit fast path on: both parameters Y and the tracepoints exist. */
bool fastpath_enabled(void);
bool fastpath_trace_start(void);
/* Forget the events so far (after fastpath_trace_start()). */
bool fastpath_trace_clear(void);
void fastpath_trace_stop(void);
/*
 * This irq's (irq < 0: any irq's) events since the start: hits counts the
 * interrupts the fast path consumed (hit and drop), misses the others.
 */
void fastpath_trace_count(int irq, long long *hits, long long *misses);

/* The same by result; delivered is -1 if the trace is unreadable. */
struct fastpath_results {
	long long delivered, queued, merged, no_target, misses;
};

void fastpath_trace_results(int irq, struct fastpath_results *res);

/*
 * PREEMPT_RT storm bound (vfio_fastpath_storm): this irq's switches to the
 * irq thread and back, and its misses past the budget (-ENOBUFS); -1 each
 * if the trace is unreadable.
 */
void fastpath_trace_storm(int irq, long long *on, long long *off,
			  long long *throttled);
/*
 * Trigger swaps since the start (vfio_fastpath_swap): switched in place,
 * and left to stock's free and request; -1 each if the trace is unreadable.
 */
void fastpath_trace_swaps(long long *in_place, long long *stock);

#endif /* KVM_IRQBYPASS_FASTPATH_TRACE_H */
