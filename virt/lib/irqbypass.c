// SPDX-License-Identifier: GPL-2.0-only
/*
 * IRQ offload/bypass manager with a hard-irq fast path.
 *
 * Producers (VFIO vectors, vDPA virtqueues) and consumers (KVM irqfds) meet
 * through a token (the eventfd_ctx).  One entry per token holds its producer
 * and consumer, connected in the stock manager's order.  A fixed hash table
 * keeps registration O(1) into the tens of thousands of tokens with nothing
 * rehashed or allocated in bulk under a lock.
 *
 * A fast producer's ->node is the manager's: ->node.next marks how it was
 * registered and ->node.prev holds the consumer published to the fast path,
 * NULL while none is.  A registered consumer's ->node.next holds its fast
 * handler and ->node.prev a mark.  irq_bypass_fastpath() reads only those:
 * no lock, no lookup, no shared counter.
 *
 * Locking: one of IRQBP_NR_LOCKS mutexes, chosen by the token's bucket,
 * serialises a token's registration, its entry and the callbacks of both
 * sides (the stock manager's one mutex, striped): one VM's trigger swap or
 * IRTE update does not hold up another's irqfd.  Unpublishing waits for the
 * producer's hard-irq handler before the consumer may go.
 */

#include <linux/interrupt.h>
#include <linux/irqbypass.h>
#include <linux/kvm_irqbypass_version.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/hashtable.h>
#include <linux/seq_file.h>
#include <linux/debugfs.h>
#include <linux/slab.h>

#include "irqbypass_callbacks.h"

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("IRQ bypass manager utility module (kvm-irqbypass kit)");
MODULE_VERSION(KVM_IRQBYPASS_VERSION);

/**
 * struct irqbp_entry - the manager's state of one token
 * @hnode: link in irqbp_table
 * @token: the key
 * @prod: the registered producer, or NULL
 * @cons: the registered consumer, or NULL
 * @refused: consumers refused with -EBUSY that have not unregistered: each
 *	owner waits on the eventfd too (a second irqfd), and the eventfd's
 *	first waiter must get the interrupts, so the fast path stays off
 *
 * @prod and @cons are connected when both are set.  All under the token's
 * lock, irqbp_lock(@token).
 */
struct irqbp_entry {
	struct hlist_node hnode;
	void *token;
	struct irq_bypass_producer *prod;
	struct irq_bypass_consumer *cons;
	unsigned int refused;
};

#define IRQBP_HASH_BITS	12
#define IRQBP_NR_LOCKS	64

static DEFINE_HASHTABLE(irqbp_table, IRQBP_HASH_BITS);

/* Lock i covers the buckets b with b % IRQBP_NR_LOCKS == i. */
static struct mutex irqbp_locks[IRQBP_NR_LOCKS];

static struct mutex *irqbp_lock(void *token)
{
	return &irqbp_locks[hash_min((unsigned long)token, IRQBP_HASH_BITS) %
			    IRQBP_NR_LOCKS];
}

/*
 * ->node marks: how a producer was registered (->node.next), a registered or
 * refused consumer (->node.prev).  A zeroed or stock ->node matches none.
 */
enum {
	IRQBP_PROD,
	IRQBP_FAST,
	IRQBP_FAST_ONLY,
	IRQBP_CONS,
	IRQBP_REFUSED,
	IRQBP_NR_MARKS
};

static struct list_head irqbp_marks[IRQBP_NR_MARKS];

#define IRQBP_MARK(kind)	(&irqbp_marks[kind])

static bool irqbp_prod_is(struct irq_bypass_producer *prod, int kind)
{
	return prod->node.next == IRQBP_MARK(kind);
}

static bool irqbp_prod_registered(struct irq_bypass_producer *prod)
{
	return irqbp_prod_is(prod, IRQBP_PROD) ||
	       irqbp_prod_is(prod, IRQBP_FAST) ||
	       irqbp_prod_is(prod, IRQBP_FAST_ONLY);
}

static irq_bypass_fast_handler_t irqbp_handler(struct irq_bypass_consumer *cons)
{
	return (irq_bypass_fast_handler_t)(void *)cons->node.next;
}

static struct irqbp_entry *irqbp_lookup(void *token)
{
	struct irqbp_entry *e;

	lockdep_assert_held(irqbp_lock(token));
	hash_for_each_possible(irqbp_table, e, hnode, (unsigned long)token)
		if (e->token == token)
			return e;
	return NULL;
}

/* @token's entry, a new one if there is none; an ERR_PTR on failure. */
static struct irqbp_entry *irqbp_get(void *token)
{
	struct irqbp_entry *e = irqbp_lookup(token);

	if (e)
		return e;
	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		return ERR_PTR(-ENOMEM);
	e->token = token;
	hash_add(irqbp_table, &e->hnode, (unsigned long)token);
	return e;
}

/* The fast path never reads an entry: it goes at once. */
static void irqbp_put(struct irqbp_entry *e)
{
	lockdep_assert_held(irqbp_lock(e->token));
	if (e->prod || e->cons || e->refused)
		return;
	hash_del(&e->hnode);
	kfree(e);
}

/*
 * Lets irq_bypass_fastpath() call e->cons's handler for e->prod.  The
 * release orders the connect callbacks' effects before the pointer.
 */
static void irqbp_publish(struct irqbp_entry *e)
{
	struct irq_bypass_producer *prod = e->prod;

	lockdep_assert_held(irqbp_lock(e->token));
	if (!prod || !e->cons || e->refused || !irqbp_handler(e->cons) ||
	    irqbp_prod_is(prod, IRQBP_PROD))
		return;
	/* Pairs with smp_load_acquire() in irq_bypass_fastpath(). */
	smp_store_release(&prod->node.prev, &e->cons->node);
}

/*
 * Hides the consumer from the fast path, then waits for the calls that may
 * have seen it: the producer's irq handler makes them (no IPI, no grace
 * period), or, without an irq, sections with interrupts off (RCU).
 */
static void irqbp_unpublish(struct irqbp_entry *e)
{
	struct irq_bypass_producer *prod = e->prod;

	lockdep_assert_held(irqbp_lock(e->token));
	if (!prod || !prod->node.prev)
		return;
	WRITE_ONCE(prod->node.prev, NULL);
	if (prod->irq > 0)
		synchronize_hardirq(prod->irq);
	else
		synchronize_rcu();
}

/* A fast-only producer runs no callback. */
static int irqbp_connect(struct irq_bypass_producer *prod,
			 struct irq_bypass_consumer *cons)
{
	if (irqbp_prod_is(prod, IRQBP_FAST_ONLY))
		return 0;
	return irqbp_callbacks_connect(prod, cons);
}

static void irqbp_disconnect(struct irq_bypass_producer *prod,
			     struct irq_bypass_consumer *cons)
{
	if (!irqbp_prod_is(prod, IRQBP_FAST_ONLY))
		irqbp_callbacks_disconnect(prod, cons);
}

static int irqbp_register_producer(struct irq_bypass_producer *producer,
				   int kind)
{
	struct mutex *lock = irqbp_lock(producer->token);
	struct irqbp_entry *e;
	int ret = 0;

	if (!producer->token)
		return -EINVAL;
	mutex_lock(lock);
	if (irqbp_prod_registered(producer)) {
		ret = -EBUSY;
		goto out;
	}
	e = irqbp_get(producer->token);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto out;
	}
	if (e->prod) {
		ret = -EBUSY;
		goto out;
	}

	producer->node.prev = NULL;
	producer->node.next = IRQBP_MARK(kind);
	if (e->cons) {
		ret = irqbp_connect(producer, e->cons);
		if (ret) {
			producer->node.next = NULL;
			irqbp_put(e);
			goto out;
		}
	}
	e->prod = producer;
	irqbp_publish(e);
out:
	mutex_unlock(lock);
	return ret;
}

/**
 * irq_bypass_register_producer - register IRQ bypass producer
 * @producer: pointer to producer structure
 *
 * Records @producer under its token and connects it with the consumer of
 * the same token, if one is registered.
 *
 * Context: process, may sleep.  The callbacks of both sides run under the
 * token's mutex.
 *
 * Return: 0; -EINVAL without a token; -EBUSY if @producer or another
 * producer with this token is registered; -ENOMEM; or the error of a failing
 * add callback, in which case nothing is registered.
 */
int irq_bypass_register_producer(struct irq_bypass_producer *producer)
{
	return irqbp_register_producer(producer, IRQBP_PROD);
}
EXPORT_SYMBOL_GPL(irq_bypass_register_producer);

/**
 * irq_bypass_register_fast_producer - register a producer using the fast path
 * @producer: pointer to producer structure, ->node zeroed before its first
 *	registration
 * @flags: IRQ_BYPASS_FAST_ONLY: the pair carries the fast path only, and no
 *	add, del, stop or start callback of either side runs (a level INTx
 *	line, which the consumer must not hand to an IOMMU)
 *
 * As irq_bypass_register_producer(); in addition, while @producer is
 * connected to a consumer registered with a handler, irq_bypass_fastpath()
 * calls that handler.  With @producer->irq > 0 it may be called only from
 * that irq's hard-irq handler; without an irq, with interrupts disabled
 * (unpairing then waits for an RCU grace period).
 *
 * Context: process, may sleep.
 *
 * Return: as irq_bypass_register_producer(); -EINVAL for unknown @flags.
 */
int irq_bypass_register_fast_producer(struct irq_bypass_producer *producer,
				      unsigned int flags)
{
	if (flags & ~IRQ_BYPASS_FAST_ONLY)
		return -EINVAL;
	return irqbp_register_producer(producer, flags & IRQ_BYPASS_FAST_ONLY ?
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
	struct mutex *lock = irqbp_lock(producer->token);
	struct irqbp_entry *e;

	mutex_lock(lock);
	if (!irqbp_prod_registered(producer))
		goto out;
	e = irqbp_lookup(producer->token);
	if (!e || e->prod != producer)
		goto out;	/* a copy of a registered producer */

	irqbp_unpublish(e);
	if (e->cons)
		irqbp_disconnect(producer, e->cons);
	e->prod = NULL;
	producer->node.next = NULL;
	irqbp_put(e);
out:
	mutex_unlock(lock);
}
EXPORT_SYMBOL_GPL(irq_bypass_unregister_producer);

/* Drops @consumer's refusal; the fast path may come back on its token. */
static void irqbp_forget_refused(struct irq_bypass_consumer *consumer)
{
	struct irqbp_entry *e = irqbp_lookup(consumer->token);

	consumer->node.prev = NULL;
	if (!e || !e->refused)
		return;		/* a copy of a refused consumer */
	e->refused--;
	irqbp_publish(e);
	irqbp_put(e);
}

static int irqbp_register_consumer(struct irq_bypass_consumer *consumer,
				   irq_bypass_fast_handler_t handler)
{
	struct mutex *lock = irqbp_lock(consumer->token);
	struct irqbp_entry *e;
	int ret = 0;

	if (!consumer->token ||
	    !consumer->add_producer != !consumer->del_producer ||
	    (!handler && !consumer->add_producer))
		return -EINVAL;
	mutex_lock(lock);
	if (consumer->node.prev == IRQBP_MARK(IRQBP_CONS)) {
		ret = -EBUSY;
		goto out;
	}
	/* Refused before and registering again: start afresh. */
	if (consumer->node.prev == IRQBP_MARK(IRQBP_REFUSED))
		irqbp_forget_refused(consumer);
	e = irqbp_get(consumer->token);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto out;
	}
	if (e->cons) {
		/* Remembered until it unregisters, as its owner must. */
		irqbp_unpublish(e);
		e->refused++;
		consumer->node.prev = IRQBP_MARK(IRQBP_REFUSED);
		ret = -EBUSY;
		goto out;
	}

	if (e->prod) {
		ret = irqbp_connect(e->prod, consumer);
		if (ret) {
			irqbp_put(e);
			goto out;
		}
	}
	consumer->node.next = (struct list_head *)(void *)handler;
	consumer->node.prev = IRQBP_MARK(IRQBP_CONS);
	e->cons = consumer;
	irqbp_publish(e);
out:
	mutex_unlock(lock);
	return ret;
}

/**
 * irq_bypass_register_consumer - register IRQ bypass consumer
 * @consumer: pointer to consumer structure
 *
 * Records @consumer under its token and connects it with the producer of the
 * same token, if one is registered.
 *
 * Context: process, may sleep.  The callbacks of both sides run under the
 * token's mutex.
 *
 * Return: 0; -EINVAL without a token, @add_producer or @del_producer;
 * -EBUSY if @consumer or another consumer with this token is registered
 * (in the latter case @consumer must still be passed to
 * irq_bypass_unregister_consumer(), as KVM does; until then the token's fast
 * path is off); -ENOMEM; or the error of a failing add callback, in which
 * case nothing is registered.
 */
int irq_bypass_register_consumer(struct irq_bypass_consumer *consumer)
{
	return irqbp_register_consumer(consumer, NULL);
}
EXPORT_SYMBOL_GPL(irq_bypass_register_consumer);

/**
 * irq_bypass_register_fast_consumer - register a consumer with a fast handler
 * @consumer: pointer to consumer structure
 * @handler: called by irq_bypass_fastpath() while @consumer is connected to
 *	a fast producer
 *
 * As irq_bypass_register_consumer(), but @add_producer and @del_producer may
 * both be NULL: the consumer is then paired for @handler alone (KVM's irqfd
 * without posted interrupts, where stock KVM registers no consumer).
 *
 * Context: process, may sleep.
 *
 * Return: as irq_bypass_register_consumer(); -EINVAL also if exactly one of
 * @add_producer and @del_producer is NULL.
 */
int irq_bypass_register_fast_consumer(struct irq_bypass_consumer *consumer,
				      irq_bypass_fast_handler_t handler)
{
	return irqbp_register_consumer(consumer, handler);
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
	struct mutex *lock = irqbp_lock(consumer->token);
	struct irqbp_entry *e;

	mutex_lock(lock);
	if (consumer->node.prev != IRQBP_MARK(IRQBP_CONS) &&
	    consumer->node.prev != IRQBP_MARK(IRQBP_REFUSED))
		goto out;
	if (consumer->node.prev == IRQBP_MARK(IRQBP_REFUSED)) {
		irqbp_forget_refused(consumer);
		goto out;
	}
	e = irqbp_lookup(consumer->token);
	if (!e || e->cons != consumer)
		goto out;	/* a copy of a registered consumer */
	irqbp_unpublish(e);
	if (e->prod)
		irqbp_disconnect(e->prod, consumer);
	e->cons = NULL;
	consumer->node.next = NULL;
	consumer->node.prev = NULL;
	irqbp_put(e);
out:
	mutex_unlock(lock);
}
EXPORT_SYMBOL_GPL(irq_bypass_unregister_consumer);

/**
 * irq_bypass_fastpath - hand an interrupt to the paired consumer
 * @prod: a producer registered with irq_bypass_register_fast_producer()
 *
 * Calls the fast handler of the consumer published for @prod.  Takes no
 * lock and writes nothing shared.
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
	struct irq_bypass_consumer *cons;
	struct list_head *node;

	/* Pairs with smp_store_release() in irqbp_publish(). */
	node = smp_load_acquire(&prod->node.prev);
	if (!node)
		return -ENODEV;
	cons = container_of(node, struct irq_bypass_consumer, node);
	return irqbp_handler(cons)(cons, prod);
}
EXPORT_SYMBOL_GPL(irq_bypass_fastpath);

/*
 * debugfs irqbypass/tokens: one line per token.  The bucket's lock keeps the
 * producer (and its ->irq) from going away while printed.
 */
static int irqbp_tokens_show(struct seq_file *m, void *unused)
{
	struct irqbp_entry *e;
	int bkt;

	seq_puts(m, "token producer consumer paired irq handler fast refused\n");
	for (bkt = 0; bkt < HASH_SIZE(irqbp_table); bkt++) {
		mutex_lock(&irqbp_locks[bkt % IRQBP_NR_LOCKS]);
		hlist_for_each_entry(e, &irqbp_table[bkt], hnode)
			seq_printf(m, "%p %d %d %d %d %d %d %u\n", e->token,
				   !!e->prod, !!e->cons, e->prod && e->cons,
				   e->prod ? e->prod->irq : -1,
				   e->cons && irqbp_handler(e->cons),
				   e->prod && e->prod->node.prev, e->refused);
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

/*
 * The users' symbol references keep the module loaded while they are, so
 * only entries of refused consumers that were never unregistered are left.
 */
static void __exit irqbp_exit(void)
{
	struct hlist_node *tmp;
	struct irqbp_entry *e;
	int bkt;

	debugfs_remove_recursive(irqbp_debugfs);
	hash_for_each_safe(irqbp_table, bkt, tmp, e, hnode) {
		WARN_ON(e->prod || e->cons);
		hash_del(&e->hnode);
		kfree(e);
	}
}
module_exit(irqbp_exit);
