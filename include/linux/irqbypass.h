/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IRQ offload/bypass manager.  The structures and the four stock prototypes
 * are Debian's ABI of each line, which stock modules (vhost_vdpa) are built
 * against: 6.1 and 6.12 match producers and consumers by an opaque token
 * (checked by genksyms CRCs); since 6.17 by the eventfd passed at
 * registration (checked by BTF, scripts/kit/abi-guard.sh).  The kit's fast
 * path is the same on both.
 */
#ifndef IRQBYPASS_H
#define IRQBYPASS_H

#include <linux/list.h>
#include <linux/version.h>

struct eventfd_ctx;
struct irq_bypass_consumer;

#if LINUX_VERSION_MAJOR > 6 || \
	(LINUX_VERSION_MAJOR == 6 && LINUX_VERSION_PATCHLEVEL >= 17)
#define IRQ_BYPASS_EVENTFD_KEYED	1

/**
 * struct irq_bypass_producer - IRQ bypass producer definition
 * @eventfd: eventfd context used to match producers and consumers (set by
 *	registration, NULL while unregistered)
 * @consumer: the connected consumer (NULL if no connection)
 * @irq: Linux IRQ number for the producer device
 * @add_consumer: Connect the IRQ producer to an IRQ consumer (optional)
 * @del_consumer: Disconnect the IRQ producer from an IRQ consumer (optional)
 * @stop: Perform any quiesce operations necessary prior to add/del (optional)
 * @start: Perform any startup operations necessary after add/del (optional)
 */
struct irq_bypass_producer {
	struct eventfd_ctx *eventfd;
	struct irq_bypass_consumer *consumer;
	int irq;
	int (*add_consumer)(struct irq_bypass_producer *prod,
			    struct irq_bypass_consumer *cons);
	void (*del_consumer)(struct irq_bypass_producer *prod,
			     struct irq_bypass_consumer *cons);
	void (*stop)(struct irq_bypass_producer *prod);
	void (*start)(struct irq_bypass_producer *prod);
};

/**
 * struct irq_bypass_consumer - IRQ bypass consumer definition
 * @eventfd: eventfd context used to match producers and consumers (set by
 *	registration, NULL while unregistered)
 * @producer: the connected producer (NULL if no connection)
 * @add_producer: Connect the IRQ consumer to an IRQ producer
 * @del_producer: Disconnect the IRQ consumer from an IRQ producer
 * @stop: Perform any quiesce operations necessary prior to add/del (optional)
 * @start: Perform any startup operations necessary after add/del (optional)
 */
struct irq_bypass_consumer {
	struct eventfd_ctx *eventfd;
	struct irq_bypass_producer *producer;

	int (*add_producer)(struct irq_bypass_consumer *cons,
			    struct irq_bypass_producer *prod);
	void (*del_producer)(struct irq_bypass_consumer *cons,
			     struct irq_bypass_producer *prod);
	void (*stop)(struct irq_bypass_consumer *cons);
	void (*start)(struct irq_bypass_consumer *cons);
};

int irq_bypass_register_producer(struct irq_bypass_producer *producer,
				 struct eventfd_ctx *eventfd, int irq);
void irq_bypass_unregister_producer(struct irq_bypass_producer *producer);
int irq_bypass_register_consumer(struct irq_bypass_consumer *consumer,
				 struct eventfd_ctx *eventfd);
void irq_bypass_unregister_consumer(struct irq_bypass_consumer *consumer);

#else /* token-keyed: 6.1, 6.12 */

/**
 * struct irq_bypass_producer - IRQ bypass producer definition
 * @node: IRQ bypass manager private data (do not touch)
 * @token: opaque token to match between producer and consumer (non-NULL)
 * @irq: Linux IRQ number for the producer device
 * @add_consumer: Connect the IRQ producer to an IRQ consumer (optional)
 * @del_consumer: Disconnect the IRQ producer from an IRQ consumer (optional)
 * @stop: Perform any quiesce operations necessary prior to add/del (optional)
 * @start: Perform any startup operations necessary after add/del (optional)
 */
struct irq_bypass_producer {
	struct list_head node;
	void *token;
	int irq;
	int (*add_consumer)(struct irq_bypass_producer *prod,
			    struct irq_bypass_consumer *cons);
	void (*del_consumer)(struct irq_bypass_producer *prod,
			     struct irq_bypass_consumer *cons);
	void (*stop)(struct irq_bypass_producer *prod);
	void (*start)(struct irq_bypass_producer *prod);
};

/**
 * struct irq_bypass_consumer - IRQ bypass consumer definition
 * @node: IRQ bypass manager private data (do not touch)
 * @token: opaque token to match between producer and consumer (non-NULL)
 * @add_producer: Connect the IRQ consumer to an IRQ producer
 * @del_producer: Disconnect the IRQ consumer from an IRQ producer
 * @stop: Perform any quiesce operations necessary prior to add/del (optional)
 * @start: Perform any startup operations necessary after add/del (optional)
 */
struct irq_bypass_consumer {
	struct list_head node;
	void *token;
	int (*add_producer)(struct irq_bypass_consumer *cons,
			    struct irq_bypass_producer *prod);
	void (*del_producer)(struct irq_bypass_consumer *cons,
			     struct irq_bypass_producer *prod);
	void (*stop)(struct irq_bypass_consumer *cons);
	void (*start)(struct irq_bypass_consumer *cons);
};

int irq_bypass_register_producer(struct irq_bypass_producer *producer);
void irq_bypass_unregister_producer(struct irq_bypass_producer *producer);
int irq_bypass_register_consumer(struct irq_bypass_consumer *consumer);
void irq_bypass_unregister_consumer(struct irq_bypass_consumer *consumer);

#endif /* IRQ_BYPASS_EVENTFD_KEYED */

/*
 * Called by irq_bypass_fastpath() with interrupts disabled (the producer's
 * hard-irq handler, also on PREEMPT_RT): raw spinlocks only.  Returns a
 * result below, or an errno and the producer uses its normal path.
 */
typedef int (*irq_bypass_fast_handler_t)(struct irq_bypass_consumer *cons,
					 struct irq_bypass_producer *prod);

/* Taken by the target, queued for a thread, merged, or taken by none. */
enum irq_bypass_fast_result {
	IRQ_BYPASS_FAST_DELIVERED,
	IRQ_BYPASS_FAST_QUEUED,
	IRQ_BYPASS_FAST_MERGED,
	IRQ_BYPASS_FAST_NO_TARGET,
};

#define IRQ_BYPASS_FAST_ONLY	0x1

#ifdef IRQ_BYPASS_EVENTFD_KEYED
int irq_bypass_register_fast_producer(struct irq_bypass_producer *producer,
				      struct eventfd_ctx *eventfd, int irq,
				      unsigned int flags);
int irq_bypass_register_fast_consumer(struct irq_bypass_consumer *consumer,
				      struct eventfd_ctx *eventfd,
				      irq_bypass_fast_handler_t handler);
#else
int irq_bypass_register_fast_producer(struct irq_bypass_producer *producer,
				      unsigned int flags);
int irq_bypass_register_fast_consumer(struct irq_bypass_consumer *consumer,
				      irq_bypass_fast_handler_t handler);
#endif
int irq_bypass_fastpath(struct irq_bypass_producer *producer);

#endif /* IRQBYPASS_H */
