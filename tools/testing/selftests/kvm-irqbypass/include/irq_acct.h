/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef KVM_IRQBYPASS_IRQ_ACCT_H
#define KVM_IRQBYPASS_IRQ_ACCT_H

#include <stdbool.h>

#include "kvm_util_lite.h"
#include "vfio_util_lite.h"

/*
 * Delivery accounting of one-at-a-time MSIs: each raise ends up as one
 * guest ISR run or one eventfd count.  absorbed: raises that went neither
 * way because the VM (or vector, or device) was being torn down at that
 * very moment; a teardown test allows at most one per teardown.
 */
struct irq_acct {
	unsigned long long raised;
	unsigned long long guest;	/* ISR runs */
	unsigned long long signalled;	/* eventfd counts read */
	unsigned long long absorbed;
	unsigned long long doubled;	/* a raise seen both ways */
	long long host;			/* vfio-msi host irqs, -1: unknown */
	long long hits, misses;		/* tracepoints, -1: not available */
};

void irq_acct_add(struct irq_acct *sum, const struct irq_acct *c);
/* Zero c, note dev's host irq count, start the tracepoints if fast. */
void irq_acct_begin(struct irq_acct *c, const struct edu_dev *dev, bool fast);
/* raised == guest + signalled + absorbed, nothing doubled. */
bool irq_acct_exact(const struct irq_acct *c);
void irq_acct_print(const char *name, const struct irq_acct *c);

/*
 * What edu_raise_wait() watches: the guest's ISR count (NULL when there is
 * no guest) and the vector's eventfd.
 */
struct msi_sink {
	const u32 *guest_count;
	u32 guest_seen;
	int efd;
};

static inline const u32 *guest_count_ptr(u8 *ram)
{
	return &((struct guest_params *)(ram + GUEST_PARAMS_GPA))->count;
}

/* Fold what the sink saw since the last call into c; returns the delta. */
unsigned int msi_sink_collect(struct msi_sink *s, struct irq_acct *c);

/*
 * Raise one MSI (dev_msi_raise()) and wait until it shows up in the sink,
 * at most timeout_ms or until *abort is set.  Acked after (dev_msi_ack()).
 * Returns 0, or -ETIMEDOUT (nothing seen: the caller decides whether that
 * raise was absorbed by a teardown or lost).
 */
int edu_raise_wait(struct edu_dev *edu, struct msi_sink *s,
		   struct irq_acct *c, int timeout_ms, const int *abort);
/*
 * The same with nr sinks (e.g. the guests of several VMs whose irqfds share
 * the vector's eventfd): c[i] gets what s[i] saw; the raise, and a doubling
 * (more than one arrival over all sinks), count in c[0].
 */
int edu_raise_wait_sinks(struct edu_dev *edu, struct msi_sink *s,
			 struct irq_acct *c, unsigned int nr, int timeout_ms,
			 const int *abort);

/* The vector's eventfd: nonblocking, close-on-exec. */
int msi_eventfd(void);
/* MSI vector 0 of the edu (MSI-X vector 0 of an e1000e) triggers fd (-1: disable). */
int edu_msi_trigger(struct edu_dev *edu, int fd);

#endif /* KVM_IRQBYPASS_IRQ_ACCT_H */
