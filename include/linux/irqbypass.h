/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IRQ offload/bypass manager
 *
 * The structures and the four register/unregister prototypes below are the
 * ABI of Debian's 6.1 and 6.12 kernels: their layout and their declarations
 * must not change, or genksyms CRCs stop matching the distro Module.symvers
 * and stock users (kvm, vfio-pci-core, vhost_vdpa) refuse to load.  New API
 * is only appended after them: added declarations do not change the CRCs of
 * the existing symbols.
 */
#ifndef IRQBYPASS_H
#define IRQBYPASS_H

#include <linux/list.h>

struct irq_bypass_consumer;

/*
 * Theory of operation
 *
 * Producers (ex. a VFIO MSI vector) and consumers (ex. a KVM irqfd) register
 * independently with a shared token (ex. the eventfd_ctx).  The manager keeps
 * one entry per token, so finding the partner is O(1).  When both sides of a
 * token are present, the optional @stop callbacks run (producer, then
 * consumer), the pair is connected with @add_consumer and @add_producer, and
 * the optional @start callbacks run (consumer, then producer).  When either
 * side unregisters, the same sequence runs with @del_producer and
 * @del_consumer.  Tokens are unique per side: 1:N pairings are not supported.
 *
 * Fast path: a consumer may attach a handler with
 * irq_bypass_set_consumer_handler(); while the pair is connected, the
 * producer can call irq_bypass_fastpath() from hard-irq context to hand an
 * interrupt straight to that handler.  See Documentation/irqbypass.rst.
 */

/**
 * struct irq_bypass_producer - IRQ bypass producer definition
 * @node: IRQ bypass manager private data (do not touch)
 * @token: opaque token to match between producer and consumer (non-NULL)
 * @irq: Linux IRQ number for the producer device
 * @add_consumer: Connect the IRQ producer to an IRQ consumer (optional)
 * @del_consumer: Disconnect the IRQ producer from an IRQ consumer (optional)
 * @stop: Perform any quiesce operations necessary prior to add/del (optional)
 * @start: Perform any startup operations necessary after add/del (optional)
 *
 * The IRQ bypass producer structure represents an interrupt source for
 * participation in possible host bypass, for instance an interrupt vector
 * for a physical device assigned to a VM.
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
 *
 * The IRQ bypass consumer structure represents an interrupt sink for
 * participation in possible host bypass, for instance a hypervisor may
 * support offloads to allow bypassing the host entirely or offload
 * portions of the interrupt handling to the VM.
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

/*
 * Kit extension: hard-irq fast path.  Everything below is new API; none of
 * it changes the structures above.
 */

/**
 * typedef irq_bypass_fast_handler_t - consumer's hard-irq delivery hook
 * @cons: the consumer the handler was attached to
 * @prod: the producer raising the interrupt (paired with @cons)
 *
 * Context: where the producer calls irq_bypass_fastpath(): its hard-irq
 * handler (also on PREEMPT_RT), interrupts disabled; must not sleep and
 * must not take sleeping locks (raw spinlocks only).  Called only while
 * @cons is registered and connected to a producer registered with
 * irq_bypass_register_fast_producer().
 *
 * Return: 0 if the interrupt was delivered, a negative errno (typically
 * -EWOULDBLOCK) if the producer must use its normal path instead.
 */
typedef int (*irq_bypass_fast_handler_t)(struct irq_bypass_consumer *cons,
					 struct irq_bypass_producer *prod);

/**
 * struct irq_bypass_stats - fast-path counters of one token
 * @hits: interrupts delivered by the consumer's fast handler
 * @misses: irq_bypass_fastpath() calls by the registered producer that were
 *	not delivered (no partner, no handler, or the handler refused)
 * @paired: producer and consumer are connected
 *
 * Counters restart from zero each time the pair is connected.
 */
struct irq_bypass_stats {
	u64 hits;
	u64 misses;
	bool paired;
};

/**
 * typedef irq_bypass_sync_t - wait for a fast producer's running calls
 * @prod: the producer
 *
 * Returns once no irq_bypass_fastpath() call by @prod that started before
 * is still running.  Context: process, may sleep; called with the
 * manager's mutex held, so it must not wait for a grace period.
 */
typedef void (*irq_bypass_sync_t)(struct irq_bypass_producer *prod);

int irq_bypass_register_fast_producer(struct irq_bypass_producer *producer,
				      irq_bypass_sync_t sync);
int irq_bypass_register_fast_only_producer(struct irq_bypass_producer *producer,
					   irq_bypass_sync_t sync);
int irq_bypass_register_fast_consumer(struct irq_bypass_consumer *consumer,
				      irq_bypass_fast_handler_t handler);
int irq_bypass_set_consumer_handler(struct irq_bypass_consumer *cons,
				    irq_bypass_fast_handler_t handler);
int irq_bypass_fastpath(struct irq_bypass_producer *prod);
int irq_bypass_get_stats(void *token, struct irq_bypass_stats *stats);

#endif /* IRQBYPASS_H */
