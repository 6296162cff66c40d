// SPDX-License-Identifier: GPL-2.0-only
/*
 * IRQ offload/bypass manager with a hard-irq fast path, for kernels whose
 * producers and consumers meet by eventfd (6.17 and later): registration
 * takes the eventfd, the manager sets ->eventfd on success and fills
 * prod->consumer and cons->producer while the pair is connected, and a
 * second producer or consumer of an eventfd is refused with -EBUSY, all as
 * upstream's manager does.
 *
 * Those structures have no room for the manager, so it keeps one entry per
 * eventfd: producer, consumer, the consumer's fast handler and the consumer
 * published to the fast path.  Entries live in a fixed hash table: a
 * registration is one lookup, where upstream's two xarrays walk a tree of
 * pointer-sized indices twice.
 *
 * Locking: one of IRQBP_NR_LOCKS mutexes, chosen by the eventfd's bucket,
 * serialises the eventfd's registrations, its entry and the callbacks of
 * both sides.  irq_bypass_fastpath() reads the table in hard irq under RCU:
 * buckets change with the _rcu list primitives and entries are freed after
 * a grace period.  Unpublishing waits for the producer's hard-irq handler
 * before the consumer may go.
 */

#include <linux/debugfs.h>
#include <linux/eventfd.h>
#include <linux/hashtable.h>
#include <linux/interrupt.h>
#include <linux/irqbypass.h>
#include <linux/kvm_irqbypass_version.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "irqbypass_callbacks.h"

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("IRQ bypass manager utility module (kvm-irqbypass kit)");
MODULE_VERSION(KVM_IRQBYPASS_VERSION);

/* How a producer was registered (irqbp_entry.prod_kind). */
enum { IRQBP_PROD, IRQBP_FAST, IRQBP_FAST_ONLY };

/**
 * struct irqbp_entry - the manager's state of one eventfd
 * @hnode: link in irqbp_table
 * @rcu: frees the entry after the fast path's readers
 * @eventfd: the key
 * @prod: the registered producer, or NULL
 * @cons: the registered consumer, or NULL
 * @handler: @cons's fast handler, or NULL
 * @published: @cons while irq_bypass_fastpath() may call @handler for @prod
 * @prod_kind: how @prod was registered
 * @refused: consumers refused with -EBUSY that have not unregistered
 *	(struct irqbp_refusal): each owner waits on the eventfd too, and the
 *	eventfd's first waiter must get the interrupts, so the fast path
 *	stays off
 *
 * All under irqbp_lock(@eventfd); @published is also read under RCU.
 */
struct irqbp_entry {
	struct hlist_node hnode;
	struct rcu_head rcu;
	struct eventfd_ctx *eventfd;
	struct irq_bypass_producer *prod;
	struct irq_bypass_consumer *cons;
	irq_bypass_fast_handler_t handler;
	struct irq_bypass_consumer *published;
	int prod_kind;
	unsigned int refused;
};

/**
 * struct irqbp_refusal - a consumer refused with -EBUSY
 * @hnode: link in irqbp_refused, keyed by @cons
 * @cons: the consumer, whose ->eventfd stays NULL as after any failure
 * @eventfd: the eventfd it was refused for
 *
 * Under irqbp_refused_lock, which is taken alone or inside an eventfd's.
 */
struct irqbp_refusal {
	struct hlist_node hnode;
	struct irq_bypass_consumer *cons;
	struct eventfd_ctx *eventfd;
};

#define IRQBP_HASH_BITS	12
#define IRQBP_NR_LOCKS	64

static DEFINE_HASHTABLE(irqbp_refused, 6);
static DEFINE_MUTEX(irqbp_refused_lock);

static DEFINE_HASHTABLE(irqbp_table, IRQBP_HASH_BITS);

/* Lock i covers the buckets b with b % IRQBP_NR_LOCKS == i. */
static struct mutex irqbp_locks[IRQBP_NR_LOCKS];

static struct mutex *irqbp_lock(struct eventfd_ctx *eventfd)
{
	return &irqbp_locks[hash_min((unsigned long)eventfd, IRQBP_HASH_BITS) %
			    IRQBP_NR_LOCKS];
}

/* Under the eventfd's lock, or RCU (the fast path). */
static struct irqbp_entry *irqbp_lookup(struct eventfd_ctx *eventfd)
{
	struct irqbp_entry *e;

	hash_for_each_possible_rcu(irqbp_table, e, hnode, (unsigned long)eventfd,
				   lockdep_is_held(irqbp_lock(eventfd)))
		if (e->eventfd == eventfd)
			return e;
	return NULL;
}

/* @eventfd's entry, a new one if there is none; an ERR_PTR on failure. */
static struct irqbp_entry *irqbp_get(struct eventfd_ctx *eventfd)
{
	struct irqbp_entry *e = irqbp_lookup(eventfd);

	if (e)
		return e;
	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		return ERR_PTR(-ENOMEM);
	e->eventfd = eventfd;
	hash_add_rcu(irqbp_table, &e->hnode, (unsigned long)eventfd);
	return e;
}

static void irqbp_put(struct irqbp_entry *e)
{
	lockdep_assert_held(irqbp_lock(e->eventfd));
	if (e->prod || e->cons || e->refused)
		return;
	hash_del_rcu(&e->hnode);
	kfree_rcu(e, rcu);
}

/*
 * Lets irq_bypass_fastpath() call e->handler for e->prod.  The release
 * orders the handler and the connect callbacks' effects before the pointer.
 */
static void irqbp_publish(struct irqbp_entry *e)
{
	lockdep_assert_held(irqbp_lock(e->eventfd));
	if (!e->prod || !e->cons || e->refused || !e->handler ||
	    e->prod_kind == IRQBP_PROD)
		return;
	/* Pairs with smp_load_acquire() in irq_bypass_fastpath(). */
	smp_store_release(&e->published, e->cons);
}

/*
 * Hides the consumer from the fast path, then waits for the calls that may
 * have seen it: the producer's irq handler makes them (no IPI, no grace
 * period), or, without an irq, sections with interrupts off (RCU).
 */
static void irqbp_unpublish(struct irqbp_entry *e)
{
	lockdep_assert_held(irqbp_lock(e->eventfd));
	if (!e->published)
		return;
	WRITE_ONCE(e->published, NULL);
	if (e->prod->irq > 0)
		synchronize_hardirq(e->prod->irq);
	else
		synchronize_rcu();
}

/* A fast-only pair runs no callback and is not connected. */
static int irqbp_connect(struct irqbp_entry *e, struct irq_bypass_producer *prod,
			 struct irq_bypass_consumer *cons)
{
	int ret;

	if (e->prod_kind == IRQBP_FAST_ONLY)
		return 0;
	ret = irqbp_callbacks_connect(prod, cons);
	if (!ret) {
		prod->consumer = cons;
		cons->producer = prod;
	}
	return ret;
}

static void irqbp_disconnect(struct irqbp_entry *e)
{
	if (e->prod_kind == IRQBP_FAST_ONLY)
		return;
	irqbp_callbacks_disconnect(e->prod, e->cons);
	e->prod->consumer = NULL;
	e->cons->producer = NULL;
}

static int irqbp_register_producer(struct irq_bypass_producer *producer,
				   struct eventfd_ctx *eventfd, int irq,
				   int kind)
{
	struct irqbp_entry *e;
	int ret = 0;

	if (WARN_ON_ONCE(producer->eventfd) || !eventfd)
		return -EINVAL;
	producer->irq = irq;
	mutex_lock(irqbp_lock(eventfd));
	e = irqbp_get(eventfd);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto out;
	}
	if (e->prod) {
		ret = -EBUSY;
		goto out;
	}
	e->prod_kind = kind;
	if (e->cons) {
		ret = irqbp_connect(e, producer, e->cons);
		if (ret) {
			irqbp_put(e);
			goto out;
		}
	}
	WRITE_ONCE(e->prod, producer);
	WRITE_ONCE(producer->eventfd, eventfd);
	irqbp_publish(e);
out:
	mutex_unlock(irqbp_lock(eventfd));
	return ret;
}

/**
 * irq_bypass_register_producer - register IRQ bypass producer
 * @producer: pointer to producer structure, ->eventfd NULL
 * @eventfd: the eventfd the producer signals
 * @irq: Linux IRQ number of the producer, stored in @producer->irq
 *
 * Records @producer under @eventfd and connects it with the consumer of the
 * same eventfd, if one is registered.
 *
 * Context: process, may sleep.  The callbacks of both sides run under the
 * eventfd's mutex.
 *
 * Return: 0; -EINVAL if @producer is registered or @eventfd is NULL; -EBUSY
 * if another producer of @eventfd is registered; -ENOMEM; or the error of a
 * failing add callback, in which case nothing is registered.
 */
int irq_bypass_register_producer(struct irq_bypass_producer *producer,
				 struct eventfd_ctx *eventfd, int irq)
{
	return irqbp_register_producer(producer, eventfd, irq, IRQBP_PROD);
}
EXPORT_SYMBOL_GPL(irq_bypass_register_producer);

/**
 * irq_bypass_register_fast_producer - register a producer using the fast path
 * @producer: pointer to producer structure, ->eventfd NULL
 * @eventfd: the eventfd the producer signals
 * @irq: Linux IRQ number of the producer, stored in @producer->irq
 * @flags: IRQ_BYPASS_FAST_ONLY: the pair carries the fast path only, no
 *	callback of either side runs and ->consumer and ->producer stay NULL
 *	(a level INTx line, which the consumer must not hand to an IOMMU)
 *
 * As irq_bypass_register_producer(); in addition, while @producer is paired
 * with a consumer registered with a handler, irq_bypass_fastpath() calls
 * that handler.  With @irq > 0 it may be called only from that irq's
 * hard-irq handler; without an irq, with interrupts disabled (unpairing then
 * waits for an RCU grace period).
 *
 * Context: process, may sleep.
 *
 * Return: as irq_bypass_register_producer(); -EINVAL for unknown @flags.
 */
int irq_bypass_register_fast_producer(struct irq_bypass_producer *producer,
				      struct eventfd_ctx *eventfd, int irq,
				      unsigned int flags)
{
	if (flags & ~IRQ_BYPASS_FAST_ONLY)
		return -EINVAL;
	return irqbp_register_producer(producer, eventfd, irq,
				       flags & IRQ_BYPASS_FAST_ONLY ?
				       IRQBP_FAST_ONLY : IRQBP_FAST);
}
EXPORT_SYMBOL_GPL(irq_bypass_register_fast_producer);

/**
 * irq_bypass_unregister_producer - unregister IRQ bypass producer
 * @producer: pointer to producer structure
 *
 * Disconnects @producer from its consumer, if connected, and forgets it.
 * Harmless if @producer is not registered.  When this returns, no fast path
 * started by @producer is running in the consumer's handler.
 *
 * Context: process, may sleep.
 */
void irq_bypass_unregister_producer(struct irq_bypass_producer *producer)
{
	struct eventfd_ctx *eventfd = producer->eventfd;
	struct irqbp_entry *e;

	if (!eventfd)
		return;
	mutex_lock(irqbp_lock(eventfd));
	e = irqbp_lookup(eventfd);
	if (!e || e->prod != producer)
		goto out;	/* a copy of a registered producer */
	irqbp_unpublish(e);
	if (e->cons)
		irqbp_disconnect(e);
	WRITE_ONCE(e->prod, NULL);
	WRITE_ONCE(producer->eventfd, NULL);
	irqbp_put(e);
out:
	mutex_unlock(irqbp_lock(eventfd));
}
EXPORT_SYMBOL_GPL(irq_bypass_unregister_producer);

/* Takes @consumer's refusal out of irqbp_refused: its eventfd, or NULL. */
static struct eventfd_ctx *irqbp_take_refusal(struct irq_bypass_consumer *consumer)
{
	struct eventfd_ctx *eventfd = NULL;
	struct irqbp_refusal *r;

	mutex_lock(&irqbp_refused_lock);
	hash_for_each_possible(irqbp_refused, r, hnode, (unsigned long)consumer)
		if (r->cons == consumer) {
			eventfd = r->eventfd;
			hash_del(&r->hnode);
			kfree(r);
			break;
		}
	mutex_unlock(&irqbp_refused_lock);
	return eventfd;
}

/* Drops a refusal of @eventfd; its fast path may come back. */
static void irqbp_forget_refusal(struct eventfd_ctx *eventfd)
{
	struct irqbp_entry *e;

	mutex_lock(irqbp_lock(eventfd));
	e = irqbp_lookup(eventfd);
	if (!WARN_ON_ONCE(!e || !e->refused)) {
		e->refused--;
		irqbp_publish(e);
		irqbp_put(e);
	}
	mutex_unlock(irqbp_lock(eventfd));
}

/* Records that @consumer was refused for @e's eventfd: -EBUSY or -ENOMEM. */
static int irqbp_refuse(struct irqbp_entry *e, struct irq_bypass_consumer *consumer)
{
	struct irqbp_refusal *r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);

	lockdep_assert_held(irqbp_lock(e->eventfd));
	if (!r)
		return -ENOMEM;
	r->cons = consumer;
	r->eventfd = e->eventfd;
	irqbp_unpublish(e);
	e->refused++;
	mutex_lock(&irqbp_refused_lock);
	hash_add(irqbp_refused, &r->hnode, (unsigned long)consumer);
	mutex_unlock(&irqbp_refused_lock);
	return -EBUSY;
}

static int irqbp_register_consumer(struct irq_bypass_consumer *consumer,
				   struct eventfd_ctx *eventfd,
				   irq_bypass_fast_handler_t handler)
{
	struct irqbp_entry *e;
	int ret = 0;

	struct eventfd_ctx *refused;

	if (WARN_ON_ONCE(consumer->eventfd) || !eventfd ||
	    !consumer->add_producer != !consumer->del_producer ||
	    (!handler && !consumer->add_producer))
		return -EINVAL;
	/* Refused before and registering again: start afresh. */
	refused = irqbp_take_refusal(consumer);
	if (refused)
		irqbp_forget_refusal(refused);
	mutex_lock(irqbp_lock(eventfd));
	e = irqbp_get(eventfd);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto out;
	}
	if (e->cons) {
		/* Remembered until it unregisters, as its owner must. */
		ret = irqbp_refuse(e, consumer);
		irqbp_put(e);
		goto out;
	}
	if (e->prod) {
		ret = irqbp_connect(e, e->prod, consumer);
		if (ret) {
			irqbp_put(e);
			goto out;
		}
	}
	e->cons = consumer;
	WRITE_ONCE(e->handler, handler);
	consumer->eventfd = eventfd;
	irqbp_publish(e);
out:
	mutex_unlock(irqbp_lock(eventfd));
	return ret;
}

/**
 * irq_bypass_register_consumer - register IRQ bypass consumer
 * @consumer: pointer to consumer structure, ->eventfd NULL
 * @eventfd: the eventfd the consumer waits on
 *
 * Records @consumer under @eventfd and connects it with the producer of the
 * same eventfd, if one is registered.
 *
 * Context: process, may sleep.  The callbacks of both sides run under the
 * eventfd's mutex.
 *
 * Return: 0; -EINVAL if @consumer is registered, @eventfd is NULL or
 * @add_producer or @del_producer is missing; -EBUSY if another consumer of
 * @eventfd is registered (@consumer is not registered, but must still be
 * passed to irq_bypass_unregister_consumer(), as KVM does, or registered
 * again: until then the eventfd's fast path is off, since the refused
 * owner waits on the eventfd too); -ENOMEM; or the error of a failing add
 * callback, in which case nothing is registered.
 */
int irq_bypass_register_consumer(struct irq_bypass_consumer *consumer,
				 struct eventfd_ctx *eventfd)
{
	return irqbp_register_consumer(consumer, eventfd, NULL);
}
EXPORT_SYMBOL_GPL(irq_bypass_register_consumer);

/**
 * irq_bypass_register_fast_consumer - register a consumer with a fast handler
 * @consumer: pointer to consumer structure, ->eventfd NULL
 * @eventfd: the eventfd the consumer waits on
 * @handler: called by irq_bypass_fastpath() while @consumer is paired with
 *	a fast producer
 *
 * As irq_bypass_register_consumer(), but @add_producer and @del_producer may
 * both be NULL: the consumer is then paired for @handler alone.
 *
 * Context: process, may sleep.
 *
 * Return: as irq_bypass_register_consumer(); -EINVAL also if exactly one of
 * @add_producer and @del_producer is NULL.
 */
int irq_bypass_register_fast_consumer(struct irq_bypass_consumer *consumer,
				      struct eventfd_ctx *eventfd,
				      irq_bypass_fast_handler_t handler)
{
	return irqbp_register_consumer(consumer, eventfd, handler);
}
EXPORT_SYMBOL_GPL(irq_bypass_register_fast_consumer);

/**
 * irq_bypass_unregister_consumer - unregister IRQ bypass consumer
 * @consumer: pointer to consumer structure
 *
 * Disconnects @consumer from its producer, if connected, and forgets it;
 * also forgets a consumer refused with -EBUSY.  Harmless if @consumer is
 * not registered.  When this returns, its handler is not running for it and
 * will not be called again.
 *
 * Context: process, may sleep.
 */
void irq_bypass_unregister_consumer(struct irq_bypass_consumer *consumer)
{
	struct eventfd_ctx *eventfd = consumer->eventfd;
	struct irqbp_entry *e;

	if (!eventfd) {
		eventfd = irqbp_take_refusal(consumer);
		if (eventfd)
			irqbp_forget_refusal(eventfd);
		return;
	}
	mutex_lock(irqbp_lock(eventfd));
	e = irqbp_lookup(eventfd);
	if (e && e->cons == consumer) {
		irqbp_unpublish(e);
		if (e->prod)
			irqbp_disconnect(e);
		e->cons = NULL;
		WRITE_ONCE(e->handler, NULL);
		consumer->eventfd = NULL;
		irqbp_put(e);
	}
	mutex_unlock(irqbp_lock(eventfd));
}
EXPORT_SYMBOL_GPL(irq_bypass_unregister_consumer);

/**
 * irq_bypass_fastpath - hand an interrupt to the paired consumer
 * @prod: a producer registered with irq_bypass_register_fast_producer()
 *
 * Calls the fast handler of the consumer published for @prod.  Takes no
 * lock and writes nothing shared: an RCU reader of the table.
 *
 * Context: the hard-irq handler of @prod->irq, or with interrupts disabled
 * for a producer without an irq; also on PREEMPT_RT.
 *
 * Return: the handler's enum irq_bypass_fast_result if it consumed the
 * interrupt; -ENODEV if no consumer with a handler is published for @prod;
 * otherwise the handler's error.  On any error the producer must deliver
 * through its normal path.
 */
int irq_bypass_fastpath(struct irq_bypass_producer *prod)
{
	struct eventfd_ctx *eventfd = READ_ONCE(prod->eventfd);
	struct irq_bypass_consumer *cons = NULL;
	irq_bypass_fast_handler_t handler = NULL;
	struct irqbp_entry *e;

	int ret = -ENODEV;

	if (!eventfd)
		return -ENODEV;
	/* Unpublishing waits for this section: @cons stays until it ends. */
	rcu_read_lock();
	e = irqbp_lookup(eventfd);
	if (e && READ_ONCE(e->prod) == prod) {
		/* Pairs with smp_store_release() in irqbp_publish(). */
		cons = smp_load_acquire(&e->published);
		handler = READ_ONCE(e->handler);
	}
	if (cons && handler)
		ret = handler(cons, prod);
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(irq_bypass_fastpath);

/*
 * debugfs irqbypass/tokens: one line per eventfd, as on the token-keyed
 * lines.  The bucket's lock keeps the producer (and its ->irq) while printed.
 */
static int irqbp_tokens_show(struct seq_file *m, void *unused)
{
	struct irqbp_entry *e;
	int bkt;

	seq_puts(m, "token producer consumer paired irq handler fast refused\n");
	for (bkt = 0; bkt < HASH_SIZE(irqbp_table); bkt++) {
		mutex_lock(&irqbp_locks[bkt % IRQBP_NR_LOCKS]);
		hlist_for_each_entry(e, &irqbp_table[bkt], hnode)
			seq_printf(m, "%p %d %d %d %d %d %d %u\n", e->eventfd,
				   !!e->prod, !!e->cons, e->prod && e->cons,
				   e->prod ? e->prod->irq : -1, !!e->handler,
				   !!e->published, e->refused);
		mutex_unlock(&irqbp_locks[bkt % IRQBP_NR_LOCKS]);
	}
	return 0;
}

static int irqbp_tokens_open(struct inode *inode, struct file *file)
{
	return single_open(file, irqbp_tokens_show, NULL);
}

/*
 * .owner keeps the module loaded while the file is open.  Not
 * DEFINE_SHOW_ATTRIBUTE(): kernel_read(), which test_irqbypass uses, needs
 * .read_iter.
 */
static const struct file_operations irqbp_tokens_fops = {
	.owner		= THIS_MODULE,
	.open		= irqbp_tokens_open,
	.read_iter	= seq_read_iter,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static struct dentry *irqbp_debugfs;

static int __init irqbp_init(void)
{
	int i;

	for (i = 0; i < IRQBP_NR_LOCKS; i++)
		mutex_init(&irqbp_locks[i]);
	irqbp_debugfs = debugfs_create_dir("irqbypass", NULL);
	debugfs_create_file_unsafe("tokens", 0400, irqbp_debugfs, NULL,
				   &irqbp_tokens_fops);
	return 0;
}
module_init(irqbp_init);

/* Only refusals never unregistered, and their entries, can be left. */
static void __exit irqbp_exit(void)
{
	struct irqbp_refusal *r;
	struct hlist_node *tmp;
	struct irqbp_entry *e;
	int bkt;

	debugfs_remove_recursive(irqbp_debugfs);
	hash_for_each_safe(irqbp_refused, bkt, tmp, r, hnode) {
		hash_del(&r->hnode);
		kfree(r);
	}
	hash_for_each_safe(irqbp_table, bkt, tmp, e, hnode) {
		WARN_ON(e->prod || e->cons);
		hash_del(&e->hnode);
		kfree(e);
	}
}
module_exit(irqbp_exit);
