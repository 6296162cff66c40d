// SPDX-License-Identifier: GPL-2.0-only
/*
 * IRQ offload/bypass manager: the kvm-irqbypass kit's implementation.
 *
 * Interrupt producers (ex. VFIO MSI vectors) and consumers (ex. KVM irqfds)
 * find each other through a shared token (ex. the eventfd_ctx).  The manager
 * keeps one entry per token in a hash table (resized by doubling), and a
 * registered object records its entry in its private ->node field, so
 * registering, unregistering and the fast path cost O(1) however many tokens
 * exist.
 *
 * Kit extension: a consumer may attach a fast handler; while the pair is
 * connected, the producer can hand an interrupt to it from hard-irq context
 * with irq_bypass_fastpath() and fall back to its normal path when the
 * handler cannot deliver atomically.
 *
 * Locking:
 * - irqbp_lock (mutex) serialises every change: registration, unregistration,
 *   handler changes, and the producer/consumer callbacks (called with it
 *   held, as the stock manager does, so they may sleep).  It also protects
 *   the token hash table, which only process context reads.
 * - Entries are freed with kfree_rcu().  The fast path takes no lock: under
 *   rcu_read_lock() it reads the entry from prod->node and then the entry's
 *   ->prod and ->fast_cons, all with marked accesses.  A consumer is
 *   visible to the fast path (->fast_cons) only while it is connected and
 *   has a handler.  Whoever hides it clears ->fast_cons and waits for an RCU
 *   grace period before calling any del/stop callback or returning to the
 *   caller, so a handler never runs for an unpaired or unregistered
 *   consumer.
 *
 * See Documentation/irqbypass.rst.
 */

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/hash.h>
#include <linux/irqbypass.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("IRQ bypass manager utility module (kvm-irqbypass kit)");

/**
 * struct irqbp_entry - manager state of one token
 * @hnode: link in irqbp_hash (irqbp_lock)
 * @token: the key
 * @prod: registered producer or NULL.  Written under irqbp_lock, read
 *	locklessly by the fast path.
 * @cons: registered consumer or NULL (irqbp_lock)
 * @handler: @cons's fast handler or NULL.  Written under irqbp_lock only
 *	while @fast_cons is NULL and no fast path can still see the old value.
 * @fast_cons: @cons while it is connected to @prod and has a @handler, else
 *	NULL.  Published with smp_store_release() under irqbp_lock, read with
 *	smp_load_acquire() by the fast path inside an RCU read-side section.
 * @paired: @prod and @cons are connected (irqbp_lock)
 * @hits: fast-path deliveries since the pair was connected
 * @misses: fast-path calls by @prod that were not delivered
 * @rcu: for kfree_rcu()
 */
struct irqbp_entry {
	struct hlist_node hnode;
	void *token;
	struct irq_bypass_producer *prod;
	struct irq_bypass_consumer *cons;
	irq_bypass_fast_handler_t handler;
	struct irq_bypass_consumer *fast_cons;
	bool paired;
	atomic64_t hits;
	atomic64_t misses;
	struct rcu_head rcu;
};

static DEFINE_MUTEX(irqbp_lock);

/*
 * token -> entry, under irqbp_lock only.  Starts with the static buckets and
 * doubles when the number of entries exceeds the number of buckets, so
 * chains stay short; the rehash is O(n) once per doubling, O(1) amortised.
 * Never shrinks (at most 8 bytes per bucket, sized by the peak).
 */
#define IRQBP_HASH_MIN_BITS	6
static struct hlist_head irqbp_hash_min[1 << IRQBP_HASH_MIN_BITS];
static struct hlist_head *irqbp_hash = irqbp_hash_min;
static unsigned int irqbp_hash_bits = IRQBP_HASH_MIN_BITS;
static unsigned int irqbp_nr_entries;

static struct dentry *irqbp_debugfs;

/* Random per boot, see irqbp_mark().  Written once at module init. */
static unsigned long irqbp_node_key __read_mostly;

/*
 * The ->node field of both structures is documented as manager-private.  We
 * do not link it anywhere: while an object is registered, ->node.next points
 * to its entry and ->node.prev holds a check value computed from the entry,
 * the address of ->node and a random per-boot key.  A zeroed ->node, garbage
 * or a copy of a registered object (other address) does not pass the check,
 * so the entry pointer is used only when the manager wrote it; the caller
 * then checks that the entry points back at the object.  Callers must not
 * write ->node while the object is registered; if they do anyway, the
 * object is still found by its token for unregistration (its fast path
 * then just falls back).
 */

/* Context: any. */
static struct list_head *irqbp_check(struct list_head *node,
				     struct irqbp_entry *e)
{
	return (struct list_head *)((unsigned long)e ^ (unsigned long)node ^
				    irqbp_node_key);
}

/*
 * Context: process, irqbp_lock held.  The release pairs with the acquire in
 * irqbp_marked_entry(): a fast path that sees the check value sees ->next
 * and the initialised entry.
 */
static void irqbp_mark(struct list_head *node, struct irqbp_entry *e)
{
	WRITE_ONCE(node->next, (struct list_head *)e);
	/* Pairs with smp_load_acquire() in irqbp_marked_entry(). */
	smp_store_release(&node->prev, irqbp_check(node, e));
}

/*
 * Context: process, irqbp_lock held.  Clearing the check first makes a
 * concurrent fast path fail the check whichever halves it reads.
 */
static void irqbp_unmark(struct list_head *node)
{
	WRITE_ONCE(node->prev, NULL);
	WRITE_ONCE(node->next, NULL);
}

/*
 * Context: any; irqbp_lock held, or inside an RCU read-side section, which
 * keeps the returned entry allocated (it is unmarked before kfree_rcu()).
 * Returns the entry @node records, or NULL; the caller checks the entry's
 * ->prod or ->cons.
 */
static struct irqbp_entry *irqbp_marked_entry(struct list_head *node)
{
	struct list_head *check;
	struct irqbp_entry *e;

	/* Pairs with smp_store_release() in irqbp_mark(). */
	check = smp_load_acquire(&node->prev);
	e = (struct irqbp_entry *)READ_ONCE(node->next);
	if (!e || check != irqbp_check(node, e))
		return NULL;
	return e;
}

/* Context: process, irqbp_lock held. */
static struct hlist_head *irqbp_bucket(void *token)
{
	return &irqbp_hash[hash_ptr(token, irqbp_hash_bits)];
}

/* Context: process, irqbp_lock held.  Returns the entry of @token or NULL. */
static struct irqbp_entry *irqbp_lookup(void *token)
{
	struct irqbp_entry *e;

	hlist_for_each_entry(e, irqbp_bucket(token), hnode)
		if (e->token == token)
			return e;
	return NULL;
}

/* Context: process, irqbp_lock held. */
static struct irqbp_entry *irqbp_find_prod(struct irq_bypass_producer *prod)
{
	struct irqbp_entry *e = irqbp_marked_entry(&prod->node);

	if (!e && prod->token)
		e = irqbp_lookup(prod->token);
	return e && e->prod == prod ? e : NULL;
}

/* Context: process, irqbp_lock held. */
static struct irqbp_entry *irqbp_find_cons(struct irq_bypass_consumer *cons)
{
	struct irqbp_entry *e = irqbp_marked_entry(&cons->node);

	if (!e && cons->token)
		e = irqbp_lookup(cons->token);
	return e && e->cons == cons ? e : NULL;
}

/*
 * Context: process, may sleep, irqbp_lock held.  Doubles the hash table when
 * it holds more entries than buckets.  If the allocation fails the old table
 * stays (longer chains, still correct).
 */
static void irqbp_hash_grow(void)
{
	unsigned int bits = irqbp_hash_bits + 1, i;
	struct hlist_head *new;
	struct hlist_node *tmp;
	struct irqbp_entry *e;

	if (irqbp_nr_entries <= (1U << irqbp_hash_bits) || bits > 20)
		return;
	new = kvcalloc(1U << bits, sizeof(*new), GFP_KERNEL);
	if (!new)
		return;
	for (i = 0; i < (1U << irqbp_hash_bits); i++)
		hlist_for_each_entry_safe(e, tmp, &irqbp_hash[i], hnode)
			hlist_add_head(&e->hnode, &new[hash_ptr(e->token, bits)]);
	if (irqbp_hash != irqbp_hash_min)
		kvfree(irqbp_hash);
	irqbp_hash = new;
	irqbp_hash_bits = bits;
}

/*
 * Context: process, may sleep, irqbp_lock held.  Returns the entry of @token,
 * creating an empty one if there is none, or an ERR_PTR.
 */
static struct irqbp_entry *irqbp_get_entry(void *token)
{
	struct irqbp_entry *e;

	e = irqbp_lookup(token);
	if (e)
		return e;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return ERR_PTR(-ENOMEM);
	e->token = token;
	hlist_add_head(&e->hnode, irqbp_bucket(token));
	irqbp_nr_entries++;
	irqbp_hash_grow();
	return e;
}

/*
 * Context: process, irqbp_lock held.  Frees @e once neither side uses it.
 * Both objects are unmarked by now, but a fast path may still hold the
 * pointer it read from prod->node: kfree_rcu() waits for it without
 * blocking us.
 */
static void irqbp_put_entry(struct irqbp_entry *e)
{
	if (e->prod || e->cons)
		return;
	hlist_del(&e->hnode);
	irqbp_nr_entries--;
	kfree_rcu(e, rcu);
}

/*
 * Context: process, irqbp_lock held.  Lets the fast path call e->handler for
 * e->cons if the pair is connected and has a handler.  The release store
 * orders e->handler (and the connect callbacks' effects) before the pointer.
 */
static void irqbp_publish(struct irqbp_entry *e)
{
	if (!e->paired || !e->handler || e->fast_cons)
		return;
	/* Pairs with smp_load_acquire() in irq_bypass_fastpath(). */
	smp_store_release(&e->fast_cons, e->cons);
}

/*
 * Context: process, may sleep, irqbp_lock held.  Hides the consumer from the
 * fast path and waits for every fast path that may have seen it: after this
 * returns no handler call for e->cons is running or will start.  Costs one
 * RCU grace period, only when the consumer was published.
 *
 * Expedited: a normal grace period (tens of ms, once per vector on teardown,
 * under irqbp_lock) would make disabling many vectors take seconds.  Where
 * expedited grace periods are disabled (rcupdate.rcu_normal, the default on
 * PREEMPT_RT after boot), this is a normal synchronize_rcu().
 */
static void irqbp_unpublish(struct irqbp_entry *e)
{
	if (!e->fast_cons)
		return;
	WRITE_ONCE(e->fast_cons, NULL);
	synchronize_rcu_expedited();
}

/*
 * Context: process, may sleep, irqbp_lock held.  Same sequence as the stock
 * manager: producer stop, consumer stop, producer add, consumer add (undoing
 * the producer's add if the consumer's fails), consumer start, producer
 * start.  Returns 0 or the failing add callback's error.
 */
static int irqbp_connect(struct irq_bypass_producer *prod,
			 struct irq_bypass_consumer *cons)
{
	int ret = 0;

	if (prod->stop)
		prod->stop(prod);
	if (cons->stop)
		cons->stop(cons);

	if (prod->add_consumer)
		ret = prod->add_consumer(prod, cons);
	if (!ret) {
		ret = cons->add_producer(cons, prod);
		if (ret && prod->del_consumer)
			prod->del_consumer(prod, cons);
	}

	if (cons->start)
		cons->start(cons);
	if (prod->start)
		prod->start(prod);

	return ret;
}

/*
 * Context: process, may sleep, irqbp_lock held, consumer already hidden from
 * the fast path.  Stock order: producer stop, consumer stop, consumer del,
 * producer del, consumer start, producer start.
 */
static void irqbp_disconnect(struct irq_bypass_producer *prod,
			     struct irq_bypass_consumer *cons)
{
	if (prod->stop)
		prod->stop(prod);
	if (cons->stop)
		cons->stop(cons);

	cons->del_producer(cons, prod);
	if (prod->del_consumer)
		prod->del_consumer(prod, cons);

	if (cons->start)
		cons->start(cons);
	if (prod->start)
		prod->start(prod);
}

/* Context: process, may sleep, irqbp_lock held.  Connects e's pair. */
static int irqbp_pair(struct irqbp_entry *e)
{
	int ret = irqbp_connect(e->prod, e->cons);

	if (ret)
		return ret;
	atomic64_set(&e->hits, 0);
	atomic64_set(&e->misses, 0);
	e->paired = true;
	irqbp_publish(e);
	return 0;
}

/* Context: process, may sleep, irqbp_lock held.  Disconnects e's pair. */
static void irqbp_unpair(struct irqbp_entry *e)
{
	if (!e->paired)
		return;
	irqbp_unpublish(e);
	irqbp_disconnect(e->prod, e->cons);
	e->paired = false;
}

/**
 * irq_bypass_register_producer - register IRQ bypass producer
 * @producer: pointer to producer structure
 *
 * Records @producer under its token and connects it with the consumer of the
 * same token, if one is registered.
 *
 * Context: process, may sleep.  Takes irqbp_lock; the callbacks of both
 * sides run under it.
 *
 * Return: 0; -EINVAL without a token; -EBUSY if @producer or another
 * producer with this token is registered; -ENOMEM; or the error of a failing
 * add callback, in which case nothing is registered and both sides are left
 * unpaired.  On success a reference on this module is held until
 * irq_bypass_unregister_producer().
 */
int irq_bypass_register_producer(struct irq_bypass_producer *producer)
{
	struct irqbp_entry *e;
	int ret;

	if (!producer->token)
		return -EINVAL;

	might_sleep();

	if (!try_module_get(THIS_MODULE))
		return -ENODEV;

	mutex_lock(&irqbp_lock);

	/* Registered under another token?  (Same token: e->prod below.) */
	e = irqbp_marked_entry(&producer->node);
	if (e && e->prod == producer) {
		ret = -EBUSY;
		goto out_unlock;
	}
	e = irqbp_get_entry(producer->token);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto out_unlock;
	}
	if (e->prod) {
		ret = -EBUSY;
		goto out_unlock;
	}

	WRITE_ONCE(e->prod, producer);
	if (e->cons) {
		ret = irqbp_pair(e);
		if (ret) {
			WRITE_ONCE(e->prod, NULL);
			irqbp_put_entry(e);
			goto out_unlock;
		}
	}
	irqbp_mark(&producer->node, e);

	mutex_unlock(&irqbp_lock);
	return 0;

out_unlock:
	mutex_unlock(&irqbp_lock);
	module_put(THIS_MODULE);
	return ret;
}
EXPORT_SYMBOL_GPL(irq_bypass_register_producer);

/**
 * irq_bypass_unregister_producer - unregister IRQ bypass producer
 * @producer: pointer to producer structure
 *
 * Disconnects @producer from its consumer, if connected, and forgets it.
 * Harmless if @producer is not registered.  When this returns, no fast path
 * started by @producer is running in the consumer's handler.
 *
 * Context: process, may sleep (an RCU grace period if the pair was visible
 * to the fast path).  Takes irqbp_lock.
 */
void irq_bypass_unregister_producer(struct irq_bypass_producer *producer)
{
	struct irqbp_entry *e;

	might_sleep();

	mutex_lock(&irqbp_lock);

	e = irqbp_find_prod(producer);
	if (!e) {
		mutex_unlock(&irqbp_lock);
		return;
	}

	irqbp_unpair(e);
	WRITE_ONCE(e->prod, NULL);
	irqbp_unmark(&producer->node);
	irqbp_put_entry(e);

	mutex_unlock(&irqbp_lock);
	module_put(THIS_MODULE);
}
EXPORT_SYMBOL_GPL(irq_bypass_unregister_producer);

/**
 * irq_bypass_register_consumer - register IRQ bypass consumer
 * @consumer: pointer to consumer structure
 *
 * Records @consumer under its token and connects it with the producer of the
 * same token, if one is registered.
 *
 * Context: process, may sleep.  Takes irqbp_lock; the callbacks of both
 * sides run under it.
 *
 * Return: 0; -EINVAL without a token, @add_producer or @del_producer;
 * -EBUSY if @consumer or another consumer with this token is registered;
 * -ENOMEM; or the error of a failing add callback, in which case nothing is
 * registered and both sides are left unpaired.  On success a reference on
 * this module is held until irq_bypass_unregister_consumer().
 */
int irq_bypass_register_consumer(struct irq_bypass_consumer *consumer)
{
	struct irqbp_entry *e;
	int ret;

	if (!consumer->token ||
	    !consumer->add_producer || !consumer->del_producer)
		return -EINVAL;

	might_sleep();

	if (!try_module_get(THIS_MODULE))
		return -ENODEV;

	mutex_lock(&irqbp_lock);

	/* Registered under another token?  (Same token: e->cons below.) */
	e = irqbp_marked_entry(&consumer->node);
	if (e && e->cons == consumer) {
		ret = -EBUSY;
		goto out_unlock;
	}
	e = irqbp_get_entry(consumer->token);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto out_unlock;
	}
	if (e->cons) {
		ret = -EBUSY;
		goto out_unlock;
	}

	e->cons = consumer;
	if (e->prod) {
		ret = irqbp_pair(e);
		if (ret) {
			e->cons = NULL;
			irqbp_put_entry(e);
			goto out_unlock;
		}
	}
	irqbp_mark(&consumer->node, e);

	mutex_unlock(&irqbp_lock);
	return 0;

out_unlock:
	mutex_unlock(&irqbp_lock);
	module_put(THIS_MODULE);
	return ret;
}
EXPORT_SYMBOL_GPL(irq_bypass_register_consumer);

/**
 * irq_bypass_unregister_consumer - unregister IRQ bypass consumer
 * @consumer: pointer to consumer structure
 *
 * Disconnects @consumer from its producer, if connected, drops its fast
 * handler and forgets it.  Harmless if @consumer is not registered.  When
 * this returns, the handler is not running for @consumer and will not be
 * called again.
 *
 * Context: process, may sleep (an RCU grace period if the pair was visible
 * to the fast path).  Takes irqbp_lock.
 */
void irq_bypass_unregister_consumer(struct irq_bypass_consumer *consumer)
{
	struct irqbp_entry *e;

	might_sleep();

	mutex_lock(&irqbp_lock);

	e = irqbp_find_cons(consumer);
	if (!e) {
		mutex_unlock(&irqbp_lock);
		return;
	}

	irqbp_unpair(e);
	e->handler = NULL;
	e->cons = NULL;
	irqbp_unmark(&consumer->node);
	irqbp_put_entry(e);

	mutex_unlock(&irqbp_lock);
	module_put(THIS_MODULE);
}
EXPORT_SYMBOL_GPL(irq_bypass_unregister_consumer);

/**
 * irq_bypass_set_consumer_handler - attach or detach a fast handler
 * @cons: a registered consumer
 * @handler: called by irq_bypass_fastpath() while @cons is connected, or
 *	NULL to detach
 *
 * The handler is part of the manager's state for @cons's token and is
 * dropped when @cons unregisters.  When this returns, a previous handler is
 * no longer running and will not be called again.
 *
 * Context: process, may sleep (an RCU grace period when replacing a handler
 * the fast path could see).  Takes irqbp_lock.
 *
 * Return: 0, or -ENOENT if @cons is not registered.
 */
int irq_bypass_set_consumer_handler(struct irq_bypass_consumer *cons,
				    irq_bypass_fast_handler_t handler)
{
	struct irqbp_entry *e;
	int ret = 0;

	might_sleep();

	mutex_lock(&irqbp_lock);
	e = irqbp_find_cons(cons);
	if (!e) {
		ret = -ENOENT;
	} else if (e->handler != handler) {
		irqbp_unpublish(e);
		e->handler = handler;
		irqbp_publish(e);
	}
	mutex_unlock(&irqbp_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(irq_bypass_set_consumer_handler);

/**
 * irq_bypass_fastpath - hand an interrupt to the paired consumer
 * @prod: the registered producer raising the interrupt
 *
 * Calls the fast handler of the consumer connected to @prod.  Never sleeps
 * and takes no lock: the entry is read from @prod->node under
 * rcu_read_lock(), which keeps it from being freed; the
 * consumer is read from ->fast_cons, which the manager clears and then waits
 * for an RCU grace period before disconnecting or unregistering it.
 *
 * Context: any, including hard irq and the threaded handlers of
 * PREEMPT_RT.  Per-token hit/miss counters are atomic.
 *
 * Return: 0 if the handler delivered the interrupt; -ENOENT if @prod is not
 * registered; -ENODEV if it is not connected to a consumer with a handler;
 * otherwise the handler's error.  On any error the producer must deliver
 * through its normal path.
 */
int irq_bypass_fastpath(struct irq_bypass_producer *prod)
{
	irq_bypass_fast_handler_t handler;
	struct irq_bypass_consumer *cons;
	struct irqbp_entry *e;
	int ret;

	rcu_read_lock();
	e = irqbp_marked_entry(&prod->node);
	if (!e || READ_ONCE(e->prod) != prod) {
		ret = -ENOENT;
		goto out;
	}

	/*
	 * Pairs with smp_store_release() in irqbp_publish(): seeing the
	 * consumer implies seeing its handler.  e->handler only changes while
	 * ->fast_cons is NULL and after a grace period.
	 */
	cons = smp_load_acquire(&e->fast_cons);
	if (cons) {
		handler = READ_ONCE(e->handler);
		ret = handler(cons, prod);
	} else {
		ret = -ENODEV;
	}

	if (!ret)
		atomic64_inc(&e->hits);
	else
		atomic64_inc(&e->misses);
out:
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(irq_bypass_fastpath);

/**
 * irq_bypass_get_stats - read the state and counters of a token
 * @token: the token
 * @stats: filled in on success
 *
 * Context: process, may sleep (takes irqbp_lock).  The counters keep
 * moving while the fast path runs.
 *
 * Return: 0, or -ENOENT if nothing is registered with @token.
 */
int irq_bypass_get_stats(void *token, struct irq_bypass_stats *stats)
{
	struct irqbp_entry *e;
	int ret = -ENOENT;

	mutex_lock(&irqbp_lock);
	e = irqbp_lookup(token);
	if (e) {
		stats->hits = atomic64_read(&e->hits);
		stats->misses = atomic64_read(&e->misses);
		stats->paired = e->paired;
		ret = 0;
	}
	mutex_unlock(&irqbp_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(irq_bypass_get_stats);

/*
 * debugfs: irqbypass/tokens, one line per token.  Context: process; holds
 * irqbp_lock so the producer (and its ->irq) cannot go away while printed.
 */
static int irqbp_tokens_show(struct seq_file *m, void *unused)
{
	struct irqbp_entry *e;
	unsigned int i;

	seq_puts(m, "token producer consumer paired irq handler hits misses\n");
	mutex_lock(&irqbp_lock);
	for (i = 0; i < (1U << irqbp_hash_bits); i++)
		hlist_for_each_entry(e, &irqbp_hash[i], hnode)
			seq_printf(m, "%p %d %d %d %d %d %llu %llu\n",
				   e->token, !!e->prod, !!e->cons, e->paired,
				   e->prod ? e->prod->irq : -1, !!e->handler,
				   (u64)atomic64_read(&e->hits),
				   (u64)atomic64_read(&e->misses));
	mutex_unlock(&irqbp_lock);
	return 0;
}

static int irqbp_tokens_open(struct inode *inode, struct file *file)
{
	return single_open(file, irqbp_tokens_show, NULL);
}

/*
 * read_iter rather than read, so kernel_read() works too (the in-kernel
 * test reads the file).  The file has no private data and .owner keeps the
 * module loaded while it is open, so it needs no debugfs proxy.
 */
static const struct file_operations irqbp_tokens_fops = {
	.owner		= THIS_MODULE,
	.open		= irqbp_tokens_open,
	.read_iter	= seq_read_iter,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* Context: process (module load). */
static int __init irqbp_init(void)
{
	irqbp_node_key = get_random_long();
	irqbp_debugfs = debugfs_create_dir("irqbypass", NULL);
	debugfs_create_file_unsafe("tokens", 0400, irqbp_debugfs, NULL,
				   &irqbp_tokens_fops);
	return 0;
}
module_init(irqbp_init);

/*
 * Context: process (module unload).  Every registration holds a module
 * reference, so the hash table is empty here; entries still waiting for
 * kfree_rcu() need nothing from this module.
 */
static void __exit irqbp_exit(void)
{
	debugfs_remove_recursive(irqbp_debugfs);
	WARN_ON(irqbp_nr_entries);
	if (irqbp_hash != irqbp_hash_min)
		kvfree(irqbp_hash);
}
module_exit(irqbp_exit);
