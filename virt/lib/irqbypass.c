// SPDX-License-Identifier: GPL-2.0-only
/*
 * IRQ offload/bypass manager with a hard-irq fast path.
 *
 * Producers (VFIO MSI vectors, vDPA virtqueues) and consumers (KVM irqfds)
 * find each other through a token (the eventfd_ctx).  One entry per token
 * lives in a hash table that grows and shrinks by doubling; a registered
 * object records its entry in its manager-private ->node, so registering,
 * unregistering and the fast path cost O(1).  A consumer alone on its
 * token (an irqfd whose eventfd no device signals: most of them) needs no
 * entry: it is chained through its own ->node in a second table, as the
 * stock manager chains every object, and gets an entry only when a
 * producer or a second consumer arrives on its token.
 *
 * A producer registered with irq_bypass_register_fast_producer() may hand
 * an interrupt to the paired consumer's fast handler from its own hard-irq
 * handler (irq_bypass_fastpath()).  Only such pairs are published in
 * ->fast_cons; other producers (vhost-vdpa) pay nothing for the fast path.
 *
 * Locking: irqbp_lock (mutex) serialises every change and the callbacks of
 * both sides, as the stock manager does, and protects the hash table.  The
 * fast path takes no lock: an RCU reader (preemption off) keeps the entry
 * it reads from prod->node allocated (entries go through kfree_rcu(),
 * nobody waits for it), and the unpair hides ->fast_cons and then waits
 * only for the producer's running handler (its sync callback, by default
 * synchronize_hardirq() on prod->irq): no grace period under irqbp_lock.
 */

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/hash.h>
#include <linux/interrupt.h>
#include <linux/irqbypass.h>
#include <linux/kvm_irqbypass_version.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("IRQ bypass manager utility module (kvm-irqbypass kit)");
MODULE_VERSION(KVM_IRQBYPASS_VERSION);

/**
 * struct irqbp_entry - manager state of one token
 * @hnode: link in irqbp_hash
 * @token: the key
 * @prod: registered producer or NULL; read locklessly by the fast path
 * @cons: registered consumer or NULL
 * @sync: waits for @prod's running fast paths; non-NULL iff @prod was
 *	registered with irq_bypass_register_fast_producer()
 * @handler: @cons's fast handler or NULL; changed only while @fast_cons is
 *	NULL and @sync has run
 * @fast_cons: @cons while it is connected to a fast @prod, has a @handler
 *	and no other consumer waits on the token, else NULL.  Published with
 *	smp_store_release(), read with smp_load_acquire() by the fast path.
 * @refused: consumers refused with -EBUSY on this token (a second irqfd on
 *	one eventfd) that have not unregistered yet; the fast path stays off
 *	while there are any, so the eventfd's first waiter gets the
 *	interrupts as without the manager
 * @paired: @prod and @cons are connected
 * @fast_only: @prod pairs for the fast path only: the connect and
 *	disconnect callbacks of both sides are not called
 * @rcu_free: a producer was attached at some point, so its hard-irq
 *	handler may still hold the entry (irq_bypass_fastpath()); without
 *	one only irqbp_lock holders ever saw it and kfree() will do
 * @hits: fast-path deliveries since the pair was connected
 * @misses: fast-path calls by @prod that were not delivered
 * @rcu: for kfree_rcu()
 *
 * Everything but @hits and @misses is written under irqbp_lock.
 */
struct irqbp_entry {
	struct hlist_node hnode;
	void *token;
	struct irq_bypass_producer *prod;
	struct irq_bypass_consumer *cons;
	irq_bypass_sync_t sync;
	irq_bypass_fast_handler_t handler;
	struct irq_bypass_consumer *fast_cons;
	unsigned int refused;
	bool paired;
	bool fast_only;
	bool rcu_free;
	atomic64_t hits;
	atomic64_t misses;
	struct rcu_head rcu;
};

static DEFINE_MUTEX(irqbp_lock);

/*
 * token -> entry.  Starts with the static buckets, doubles when there are
 * more entries than buckets and halves when there are fewer than a quarter
 * (O(1) amortised, chains stay short, memory follows the number of tokens).
 */
#define IRQBP_HASH_MIN_BITS	6
#define IRQBP_HASH_MAX_BITS	20
static struct hlist_head irqbp_hash_min[1 << IRQBP_HASH_MIN_BITS];
static struct hlist_head *irqbp_hash = irqbp_hash_min;
static unsigned int irqbp_hash_bits = IRQBP_HASH_MIN_BITS;
static unsigned int irqbp_nr_entries;

static struct dentry *irqbp_debugfs;

/* Random per boot, see irqbp_mark().  Written once at module init. */
static unsigned long irqbp_node_key __read_mostly;

/*
 * The ->node field of both structures is manager-private.  While an object
 * is registered with an entry, ->node.next points to the entry and
 * ->node.prev holds a check value computed from the entry, the address of
 * ->node, a random per-boot key and a tag, so a zeroed ->node, garbage or a
 * copy of a registered object (other address) is never taken for a mark.
 * A refused consumer carries the tag 1.  Callers must not write ->node
 * while the object is registered; if they do, an object with an entry is
 * still found by its token (its fast path then falls back).  A lone
 * consumer (tag 2, see irqbp_lone_link()) has ->node.next chaining it in
 * irqbp_lone; its ->node is then as much the caller's to keep as in the
 * stock manager, where every registered object's ->node is a list link.
 */
#define IRQBP_TAG_ENTRY		0UL
#define IRQBP_TAG_REFUSED	1UL
#define IRQBP_TAG_LONE		2UL

static struct list_head *irqbp_check(struct list_head *node, void *ptr,
				     unsigned long tag)
{
	return (struct list_head *)((unsigned long)ptr ^ (unsigned long)node ^
				    irqbp_node_key ^ tag);
}

static void irqbp_mark(struct list_head *node, struct irqbp_entry *e,
		       bool refused)
{
	lockdep_assert_held(&irqbp_lock);
	WRITE_ONCE(node->next, (struct list_head *)e);
	/* Pairs with smp_load_acquire() in irqbp_marked_entry(). */
	smp_store_release(&node->prev, irqbp_check(node, e, refused ?
						   IRQBP_TAG_REFUSED :
						   IRQBP_TAG_ENTRY));
}

/* Clearing the check first makes a concurrent fast path fail the check. */
static void irqbp_unmark(struct list_head *node)
{
	lockdep_assert_held(&irqbp_lock);
	WRITE_ONCE(node->prev, NULL);
	WRITE_ONCE(node->next, NULL);
}

/*
 * Returns the entry @node's mark (of the given kind) records, or NULL; the
 * caller checks the entry's ->prod or ->cons.  irqbp_lock or RCU keeps the
 * entry allocated (it is unmarked before kfree_rcu()).
 */
static struct irqbp_entry *irqbp_marked_entry(struct list_head *node,
					      bool refused)
{
	struct list_head *check;
	struct irqbp_entry *e;

	RCU_LOCKDEP_WARN(!rcu_read_lock_any_held() &&
			 !lockdep_is_held(&irqbp_lock),
			 "irqbypass entry read outside irqbp_lock and RCU");
	/* Pairs with smp_store_release() in irqbp_mark(). */
	check = smp_load_acquire(&node->prev);
	e = (struct irqbp_entry *)READ_ONCE(node->next);
	if (!e || check != irqbp_check(node, e, refused ? IRQBP_TAG_REFUSED :
						  IRQBP_TAG_ENTRY))
		return NULL;
	return e;
}

static struct hlist_head *irqbp_bucket(void *token)
{
	return &irqbp_hash[hash_ptr(token, irqbp_hash_bits)];
}

static struct irqbp_entry *irqbp_lookup(void *token)
{
	struct irqbp_entry *e;

	lockdep_assert_held(&irqbp_lock);
	hlist_for_each_entry(e, irqbp_bucket(token), hnode)
		if (e->token == token)
			return e;
	return NULL;
}

static struct irqbp_entry *irqbp_find_prod(struct irq_bypass_producer *prod)
{
	struct irqbp_entry *e = irqbp_marked_entry(&prod->node, false);

	if (!e && prod->token)
		e = irqbp_lookup(prod->token);
	return e && e->prod == prod ? e : NULL;
}

static struct irqbp_entry *irqbp_find_cons(struct irq_bypass_consumer *cons)
{
	struct irqbp_entry *e = irqbp_marked_entry(&cons->node, false);

	if (!e && cons->token)
		e = irqbp_lookup(cons->token);
	return e && e->cons == cons ? e : NULL;
}

/*
 * A table of 2^@bits bucket heads of @size bytes each for a rehash: the
 * static @min_table (cleared) at the minimum size, else a new array
 * charged to the memory cgroup of the task whose registration resized it.
 * NULL if the allocation fails: the old table then stays (longer or
 * sparser chains, still correct).
 */
static void *irqbp_table_alloc(unsigned int bits, void *min_table,
			       size_t size)
{
	if (bits == IRQBP_HASH_MIN_BITS)
		return memset(min_table, 0, size << IRQBP_HASH_MIN_BITS);
	return kvcalloc(1U << bits, size, GFP_KERNEL_ACCOUNT);
}

/* Rehashes the entries into 2^@bits buckets. */
static void irqbp_hash_resize(unsigned int bits)
{
	struct hlist_head *new;
	struct hlist_node *tmp;
	struct irqbp_entry *e;
	unsigned int i;

	lockdep_assert_held(&irqbp_lock);
	new = irqbp_table_alloc(bits, irqbp_hash_min, sizeof(*new));
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
 * Fast handlers of lone consumers.  A lone consumer has no entry to hold
 * its handler, so its ->node tag holds an index into this table; KVM
 * registers every irqfd with the same handler, so a few slots serve a
 * host.  Slot 0 is "no handler".  With every slot taken by other handlers
 * a consumer gets an entry as before.  Protected by irqbp_lock.
 */
#define IRQBP_HANDLER_SLOTS	8
static struct {
	irq_bypass_fast_handler_t fn;
	unsigned int refs;
} irqbp_handlers[IRQBP_HANDLER_SLOTS];

/* Takes a slot for @fn; returns its index, or -1 if none is free. */
static int irqbp_handler_get(irq_bypass_fast_handler_t fn)
{
	int i, free = -1;

	lockdep_assert_held(&irqbp_lock);
	if (!fn)
		return 0;
	for (i = 1; i < IRQBP_HANDLER_SLOTS; i++) {
		if (irqbp_handlers[i].refs && irqbp_handlers[i].fn == fn) {
			irqbp_handlers[i].refs++;
			return i;
		}
		if (!irqbp_handlers[i].refs && free < 0)
			free = i;
	}
	if (free > 0) {
		irqbp_handlers[free].fn = fn;
		irqbp_handlers[free].refs = 1;
	}
	return free;
}

static void irqbp_handler_put(int slot)
{
	lockdep_assert_held(&irqbp_lock);
	if (slot > 0 && !WARN_ON_ONCE(!irqbp_handlers[slot].refs))
		irqbp_handlers[slot].refs--;
}

/*
 * token -> lone consumer.  Each bucket is a NULL-terminated chain through
 * the consumers' ->node.next; ->node.prev is the check value of the tag
 * IRQBP_TAG_LONE | slot << 2 over ->node.next, so a lone consumer is told
 * from a copy or garbage without following a pointer, and a chain walk
 * stops at a link that fails its check.  At most one lone consumer per
 * token, and never one on a token that has an entry.  Same growth and
 * shrink rule as irqbp_hash.  Only irqbp_lock holders read it.
 */
static struct list_head *irqbp_lone_min[1 << IRQBP_HASH_MIN_BITS];
static struct list_head **irqbp_lone = irqbp_lone_min;
static unsigned int irqbp_lone_bits = IRQBP_HASH_MIN_BITS;
static unsigned int irqbp_nr_lone;

static struct irq_bypass_consumer *irqbp_lone_cons(struct list_head *node)
{
	return container_of(node, struct irq_bypass_consumer, node);
}

/* The handler slot of a lone consumer's @node, or -1 if it is not one. */
static int irqbp_lone_slot(struct list_head *node)
{
	unsigned long tag;

	lockdep_assert_held(&irqbp_lock);
	tag = (unsigned long)irqbp_check(node, node->next, 0) ^
	      (unsigned long)node->prev;
	if ((tag & 3) != IRQBP_TAG_LONE || (tag >> 2) >= IRQBP_HANDLER_SLOTS)
		return -1;
	if ((tag >> 2) && !irqbp_handlers[tag >> 2].refs)
		return -1;
	return tag >> 2;
}

static void irqbp_lone_set_next(struct list_head *node,
				struct list_head *next, int slot)
{
	node->next = next;
	node->prev = irqbp_check(node, next,
				 IRQBP_TAG_LONE | (unsigned long)slot << 2);
}

static struct list_head **irqbp_lone_bucket(void *token)
{
	return &irqbp_lone[hash_ptr(token, irqbp_lone_bits)];
}

static void irqbp_lone_resize(unsigned int bits)
{
	struct list_head **new, *n, *next;
	unsigned int i;
	int slot;

	lockdep_assert_held(&irqbp_lock);
	new = irqbp_table_alloc(bits, irqbp_lone_min, sizeof(*new));
	if (!new)
		return;
	for (i = 0; i < (1U << irqbp_lone_bits); i++)
		for (n = irqbp_lone[i]; n; n = next) {
			struct list_head **b;

			slot = irqbp_lone_slot(n);
			if (WARN_ON_ONCE(slot < 0))
				break;
			b = &new[hash_ptr(irqbp_lone_cons(n)->token, bits)];
			next = n->next;
			irqbp_lone_set_next(n, *b, slot);
			*b = n;
		}
	if (irqbp_lone != irqbp_lone_min)
		kvfree(irqbp_lone);
	irqbp_lone = new;
	irqbp_lone_bits = bits;
}

/* The lone consumer of @token, or NULL. */
static struct irq_bypass_consumer *irqbp_lone_find(void *token)
{
	struct list_head *n;

	for (n = *irqbp_lone_bucket(token); n; n = n->next) {
		if (WARN_ONCE(irqbp_lone_slot(n) < 0,
			      "irqbypass: a lone consumer's ->node was overwritten\n"))
			return NULL;
		if (irqbp_lone_cons(n)->token == token)
			return irqbp_lone_cons(n);
	}
	return NULL;
}

/* Chains @cons, which must be alone on its token, with handler @slot. */
static void irqbp_lone_link(struct irq_bypass_consumer *cons, int slot)
{
	struct list_head **b = irqbp_lone_bucket(cons->token);

	lockdep_assert_held(&irqbp_lock);
	irqbp_lone_set_next(&cons->node, *b, slot);
	*b = &cons->node;
	irqbp_nr_lone++;
	if (irqbp_nr_lone > (1U << irqbp_lone_bits) &&
	    irqbp_lone_bits < IRQBP_HASH_MAX_BITS)
		irqbp_lone_resize(irqbp_lone_bits + 1);
}

/* Takes @node out of bucket @b; returns false if it is not there. */
static bool irqbp_lone_unchain(struct list_head **b, struct list_head *node)
{
	struct list_head *n, *prev = NULL;
	int slot;

	for (n = *b; n != node; n = n->next) {
		if (!n || irqbp_lone_slot(n) < 0)
			return false;
		prev = n;
	}
	if (prev) {
		slot = irqbp_lone_slot(prev);
		irqbp_lone_set_next(prev, node->next, slot);
	} else {
		*b = node->next;
	}
	return true;
}

/*
 * Unchains lone @cons and drops its handler slot; returns false if @cons
 * is not a lone consumer.  Its own bucket first; a caller that changed
 * ->token while registered costs a scan of every bucket.
 */
static bool irqbp_lone_unlink(struct irq_bypass_consumer *cons)
{
	int slot = irqbp_lone_slot(&cons->node);
	unsigned int i;
	bool found;

	lockdep_assert_held(&irqbp_lock);
	if (slot < 0)
		return false;
	found = irqbp_lone_unchain(irqbp_lone_bucket(cons->token), &cons->node);
	for (i = 0; !found && i < (1U << irqbp_lone_bits); i++)
		found = irqbp_lone_unchain(&irqbp_lone[i], &cons->node);
	if (WARN_ON_ONCE(!found))
		return false;
	irqbp_unmark(&cons->node);
	irqbp_handler_put(slot);
	irqbp_nr_lone--;
	if (irqbp_lone_bits > IRQBP_HASH_MIN_BITS &&
	    irqbp_nr_lone < (1U << irqbp_lone_bits) / 4)
		irqbp_lone_resize(irqbp_lone_bits - 1);
	return true;
}

/* Moves lone @cons into @e, the new entry of its token. */
static void irqbp_lone_adopt(struct irqbp_entry *e,
			     struct irq_bypass_consumer *cons)
{
	int slot = irqbp_lone_slot(&cons->node);

	e->handler = irqbp_handlers[slot].fn;
	irqbp_lone_unlink(cons);
	e->cons = cons;
	irqbp_mark(&cons->node, e, false);
}

/*
 * Returns @token's entry, or an ERR_PTR.  A new one, allocated with @gfp,
 * takes in the token's lone consumer, if there is one.
 */
static struct irqbp_entry *irqbp_get_entry(void *token, gfp_t gfp)
{
	struct irq_bypass_consumer *lone;
	struct irqbp_entry *e;

	lockdep_assert_held(&irqbp_lock);
	e = irqbp_lookup(token);
	if (e)
		return e;

	e = kzalloc(sizeof(*e), gfp);
	if (!e)
		return ERR_PTR(-ENOMEM);
	e->token = token;
	hlist_add_head(&e->hnode, irqbp_bucket(token));
	irqbp_nr_entries++;
	if (irqbp_nr_entries > (1U << irqbp_hash_bits) &&
	    irqbp_hash_bits < IRQBP_HASH_MAX_BITS)
		irqbp_hash_resize(irqbp_hash_bits + 1);
	lone = irqbp_lone_find(token);
	if (lone)
		irqbp_lone_adopt(e, lone);
	return e;
}

/*
 * Frees @e once nothing uses it.  Both objects are unmarked by now, but a
 * fast path may still hold the pointer it read from prod->node:
 * kfree_rcu() waits for it without blocking us.  An entry that never had
 * a producer (an irqfd whose eventfd no device signals, the common case)
 * was never visible outside irqbp_lock and is freed at once, which spares
 * every such KVM_IRQFD deassign an RCU callback.
 */
static void irqbp_put_entry(struct irqbp_entry *e)
{
	lockdep_assert_held(&irqbp_lock);
	if (e->prod || e->cons || e->refused)
		return;
	hlist_del(&e->hnode);
	irqbp_nr_entries--;
	if (e->rcu_free)
		kfree_rcu(e, rcu);
	else
		kfree(e);
	if (irqbp_hash_bits > IRQBP_HASH_MIN_BITS &&
	    irqbp_nr_entries < (1U << irqbp_hash_bits) / 4)
		irqbp_hash_resize(irqbp_hash_bits - 1);
}

/*
 * Lets the fast path call e->handler for e->cons.  The release store
 * orders e->handler and the connect callbacks' effects before the pointer.
 */
static void irqbp_publish(struct irqbp_entry *e)
{
	lockdep_assert_held(&irqbp_lock);
	if (!e->paired || !e->sync || !e->handler || e->refused ||
	    e->fast_cons)
		return;
	/* Pairs with smp_load_acquire() in irq_bypass_fastpath(). */
	smp_store_release(&e->fast_cons, e->cons);
}

/*
 * Hides the consumer from the fast path and waits for the fast paths that
 * may have seen it: only the producer's own handler can be running one, so
 * its sync callback is enough (no IPI, no grace period, bounded by one
 * handler run).  After this no handler call for e->cons runs or starts.
 */
static void irqbp_unpublish(struct irqbp_entry *e)
{
	lockdep_assert_held(&irqbp_lock);
	if (!e->fast_cons)
		return;
	WRITE_ONCE(e->fast_cons, NULL);
	e->sync(e->prod);
}

/*
 * Same sequence as the stock manager: producer stop, consumer stop,
 * producer add, consumer add (undoing the producer's add if the consumer's
 * fails), consumer start, producer start.  Returns 0 or the failing add
 * callback's error.
 */
static int irqbp_connect(struct irq_bypass_producer *prod,
			 struct irq_bypass_consumer *cons)
{
	int ret = 0;

	lockdep_assert_held(&irqbp_lock);
	if (prod->stop)
		prod->stop(prod);
	if (cons->stop)
		cons->stop(cons);

	if (prod->add_consumer)
		ret = prod->add_consumer(prod, cons);
	if (!ret && cons->add_producer) {
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
 * Stock order: producer stop, consumer stop, consumer del, producer del,
 * consumer start, producer start.  The consumer is already hidden from
 * the fast path.
 */
static void irqbp_disconnect(struct irq_bypass_producer *prod,
			     struct irq_bypass_consumer *cons)
{
	lockdep_assert_held(&irqbp_lock);
	if (prod->stop)
		prod->stop(prod);
	if (cons->stop)
		cons->stop(cons);

	if (cons->del_producer)
		cons->del_producer(cons, prod);
	if (prod->del_consumer)
		prod->del_consumer(prod, cons);

	if (cons->start)
		cons->start(cons);
	if (prod->start)
		prod->start(prod);
}

static int irqbp_pair(struct irqbp_entry *e)
{
	int ret = e->fast_only ? 0 : irqbp_connect(e->prod, e->cons);

	if (ret)
		return ret;
	atomic64_set(&e->hits, 0);
	atomic64_set(&e->misses, 0);
	e->paired = true;
	irqbp_publish(e);
	return 0;
}

static void irqbp_unpair(struct irqbp_entry *e)
{
	if (!e->paired)
		return;
	irqbp_unpublish(e);
	if (!e->fast_only)
		irqbp_disconnect(e->prod, e->cons);
	e->paired = false;
}

/* The default sync callback of a fast producer. */
static void irqbp_sync_hardirq(struct irq_bypass_producer *prod)
{
	synchronize_hardirq(prod->irq);
}

static int irqbp_register_producer(struct irq_bypass_producer *producer,
				   irq_bypass_sync_t sync, bool fast_only)
{
	struct irqbp_entry *e;
	int ret;

	if (!producer->token)
		return -EINVAL;

	if (!try_module_get(THIS_MODULE))
		return -ENODEV;

	mutex_lock(&irqbp_lock);

	/* Registered under another token?  (Same token: e->prod below.) */
	e = irqbp_marked_entry(&producer->node, false);
	if (e && e->prod == producer) {
		ret = -EBUSY;
		goto out_unlock;
	}
	e = irqbp_get_entry(producer->token, GFP_KERNEL_ACCOUNT);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto out_unlock;
	}
	if (e->prod) {
		ret = -EBUSY;
		goto out_unlock;
	}

	e->sync = sync;
	e->fast_only = fast_only;
	e->rcu_free = true;
	WRITE_ONCE(e->prod, producer);
	if (e->cons) {
		ret = irqbp_pair(e);
		if (ret) {
			WRITE_ONCE(e->prod, NULL);
			e->sync = NULL;
			e->fast_only = false;
			irqbp_put_entry(e);
			goto out_unlock;
		}
	}
	irqbp_mark(&producer->node, e, false);

	mutex_unlock(&irqbp_lock);
	return 0;

out_unlock:
	mutex_unlock(&irqbp_lock);
	module_put(THIS_MODULE);
	return ret;
}

/**
 * irq_bypass_register_producer - register IRQ bypass producer
 * @producer: pointer to producer structure
 *
 * Records @producer under its token and connects it with the consumer of the
 * same token, if one is registered.  The pair is never offered to the fast
 * path (see irq_bypass_register_fast_producer()).
 *
 * Context: process, may sleep.  The callbacks of both sides run under the
 * manager's mutex.
 *
 * Return: 0; -EINVAL without a token; -EBUSY if @producer or another
 * producer with this token is registered; -ENOMEM; or the error of a failing
 * add callback, in which case nothing is registered and both sides are left
 * unpaired.  On success a reference on this module is held until
 * irq_bypass_unregister_producer().
 */
int irq_bypass_register_producer(struct irq_bypass_producer *producer)
{
	return irqbp_register_producer(producer, NULL, false);
}
EXPORT_SYMBOL_GPL(irq_bypass_register_producer);

/**
 * irq_bypass_register_fast_producer - register a producer using the fast path
 * @producer: pointer to producer structure
 * @sync: waits for @producer's running irq_bypass_fastpath() calls, or NULL
 *	if @producer calls it only from the hard-irq handler of
 *	@producer->irq (the manager then uses synchronize_hardirq())
 *
 * As irq_bypass_register_producer(); in addition, while @producer is
 * connected to a consumer that has a fast handler, irq_bypass_fastpath()
 * delivers through that handler.  Unpairing calls @sync once, under the
 * manager's mutex, after hiding the consumer from the fast path.
 *
 * Context: process, may sleep.
 *
 * Return: as irq_bypass_register_producer(); also -EINVAL if @sync is NULL
 * and @producer->irq is not a valid irq number.
 */
int irq_bypass_register_fast_producer(struct irq_bypass_producer *producer,
				      irq_bypass_sync_t sync)
{
	if (!sync) {
		if (producer->irq <= 0)
			return -EINVAL;
		sync = irqbp_sync_hardirq;
	}
	return irqbp_register_producer(producer, sync, false);
}
EXPORT_SYMBOL_GPL(irq_bypass_register_fast_producer);

/**
 * irq_bypass_register_fast_only_producer - register a fast-path-only producer
 * @producer: pointer to producer structure
 * @sync: as for irq_bypass_register_fast_producer()
 *
 * As irq_bypass_register_fast_producer(), but pairing with the consumer of
 * the token calls none of the add, del, stop and start callbacks of either
 * side: the pair only carries irq_bypass_fastpath().  For a producer whose
 * interrupt must not be handed to the consumer's own bypass (a level INTx
 * line, which an IOMMU cannot post): KVM would otherwise set up posting for
 * @producer->irq when the irqfd's route is an MSI.
 *
 * Context: process, may sleep.
 *
 * Return: as irq_bypass_register_fast_producer().
 */
int irq_bypass_register_fast_only_producer(struct irq_bypass_producer *producer,
					   irq_bypass_sync_t sync)
{
	if (!sync) {
		if (producer->irq <= 0)
			return -EINVAL;
		sync = irqbp_sync_hardirq;
	}
	return irqbp_register_producer(producer, sync, true);
}
EXPORT_SYMBOL_GPL(irq_bypass_register_fast_only_producer);

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
	struct irqbp_entry *e;

	mutex_lock(&irqbp_lock);

	e = irqbp_find_prod(producer);
	if (!e) {
		mutex_unlock(&irqbp_lock);
		return;
	}

	irqbp_unpair(e);
	WRITE_ONCE(e->prod, NULL);
	e->sync = NULL;
	e->fast_only = false;
	irqbp_unmark(&producer->node);
	irqbp_put_entry(e);

	mutex_unlock(&irqbp_lock);
	module_put(THIS_MODULE);
}
EXPORT_SYMBOL_GPL(irq_bypass_unregister_producer);

/*
 * A second consumer on a token gets -EBUSY, as from the stock manager, but
 * is remembered until it unregisters: its owner (a second KVM irqfd on the
 * same eventfd) waits on the eventfd too, and without the manager the
 * eventfd's first priority waiter takes the interrupts, which need not be
 * the registered consumer (deassign the first irqfd and assign it again:
 * the refused one is first now).  So the fast path is turned off for the
 * token until every refused consumer has unregistered.
 */
static void irqbp_refuse(struct irqbp_entry *e,
			 struct irq_bypass_consumer *consumer)
{
	lockdep_assert_held(&irqbp_lock);
	irqbp_unpublish(e);
	e->refused++;
	irqbp_mark(&consumer->node, e, true);
}

/* Forgets a refused consumer; returns false if @consumer is not one. */
static bool irqbp_forget_refused(struct irq_bypass_consumer *consumer)
{
	struct irqbp_entry *e = irqbp_marked_entry(&consumer->node, true);

	lockdep_assert_held(&irqbp_lock);
	if (!e)
		return false;
	irqbp_unmark(&consumer->node);
	if (!WARN_ON_ONCE(!e->refused))
		e->refused--;
	irqbp_publish(e);
	irqbp_put_entry(e);
	return true;
}

static int irqbp_register_consumer(struct irq_bypass_consumer *consumer,
				   irq_bypass_fast_handler_t handler)
{
	struct irqbp_entry *e;
	int ret, slot;
	gfp_t gfp;

	if (!consumer->token ||
	    !consumer->add_producer != !consumer->del_producer ||
	    (!handler && !consumer->add_producer))
		return -EINVAL;

	if (!try_module_get(THIS_MODULE))
		return -ENODEV;

	mutex_lock(&irqbp_lock);

	/* Registered under another token?  (Same token: e->cons below.) */
	e = irqbp_marked_entry(&consumer->node, false);
	if ((e && e->cons == consumer) || irqbp_lone_slot(&consumer->node) >= 0) {
		ret = -EBUSY;
		goto out_unlock;
	}
	/* Refused before and registering again: start afresh. */
	irqbp_forget_refused(consumer);

	/*
	 * Nothing else on the token: no entry, just a link (an irqfd costs
	 * no allocation until a producer or a second irqfd comes).
	 */
	if (!irqbp_lookup(consumer->token) &&
	    !irqbp_lone_find(consumer->token)) {
		slot = irqbp_handler_get(handler);
		if (slot >= 0) {
			irqbp_lone_link(consumer, slot);
			mutex_unlock(&irqbp_lock);
			return 0;
		}
	}

	/*
	 * A second consumer on a token that has a lone one: the entry is
	 * where its refusal is recorded, and an unrecorded refusal would let
	 * the fast path deliver to the first irqfd while the eventfd's waiter
	 * is this one (irqbp_refuse()).  KVM ignores the error, so -ENOMEM
	 * would go unnoticed: this small allocation may not fail.
	 */
	gfp = GFP_KERNEL_ACCOUNT;
	if (irqbp_lone_find(consumer->token))
		gfp |= __GFP_NOFAIL;
	e = irqbp_get_entry(consumer->token, gfp);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto out_unlock;
	}
	if (e->cons) {
		/* Not when it is @consumer itself, with a clobbered ->node. */
		if (e->cons != consumer)
			irqbp_refuse(e, consumer);
		ret = -EBUSY;
		goto out_unlock;
	}

	e->cons = consumer;
	e->handler = handler;
	if (e->prod) {
		ret = irqbp_pair(e);
		if (ret) {
			e->handler = NULL;
			e->cons = NULL;
			irqbp_put_entry(e);
			goto out_unlock;
		}
	}
	irqbp_mark(&consumer->node, e, false);

	mutex_unlock(&irqbp_lock);
	return 0;

out_unlock:
	mutex_unlock(&irqbp_lock);
	module_put(THIS_MODULE);
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
 * manager's mutex.
 *
 * Return: 0; -EINVAL without a token, @add_producer or @del_producer;
 * -EBUSY if @consumer or another consumer with this token is registered
 * (in the latter case @consumer must still be passed to
 * irq_bypass_unregister_consumer() before it is freed, as KVM does; until
 * then the token's fast path is off; this case never fails with -ENOMEM);
 * -ENOMEM; or the error of a failing add callback, in which case nothing
 * is registered and both sides are left unpaired.  On success a reference
 * on this module is held until irq_bypass_unregister_consumer().
 */
int irq_bypass_register_consumer(struct irq_bypass_consumer *consumer)
{
	return irqbp_register_consumer(consumer, NULL);
}
EXPORT_SYMBOL_GPL(irq_bypass_register_consumer);

/**
 * irq_bypass_register_fast_consumer - register a consumer with a fast handler
 * @consumer: pointer to consumer structure
 * @handler: its fast handler, as irq_bypass_set_consumer_handler() sets it
 *
 * irq_bypass_register_consumer() and irq_bypass_set_consumer_handler() in
 * one step under one lock (KVM registers every irqfd this way).  Unlike
 * there, @add_producer and @del_producer may both be NULL: a fast-only
 * consumer, paired for @handler alone, so that pairing and unpairing call
 * none of its callbacks (KVM's irqfd without posted interrupts, where stock
 * KVM registers no consumer at all).
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
 * Disconnects @consumer from its producer, if connected, drops its fast
 * handler and forgets it; also forgets a consumer refused with -EBUSY.
 * Harmless if @consumer is not registered.  When this returns, the handler
 * is not running for @consumer and will not be called again.
 *
 * Context: process, may sleep.
 */
void irq_bypass_unregister_consumer(struct irq_bypass_consumer *consumer)
{
	struct irqbp_entry *e;

	mutex_lock(&irqbp_lock);

	e = irqbp_find_cons(consumer);
	if (!e) {
		if (irqbp_lone_unlink(consumer)) {
			mutex_unlock(&irqbp_lock);
			module_put(THIS_MODULE);
			return;
		}
		irqbp_forget_refused(consumer);
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
 * @handler: called by irq_bypass_fastpath() while @cons is connected to a
 *	fast producer, or NULL to detach
 *
 * The handler is part of the manager's state for @cons's token and is
 * dropped when @cons unregisters.  When this returns, a previous handler is
 * no longer running and will not be called again.
 *
 * Context: process, may sleep.
 *
 * Return: 0; -ENOENT if @cons is not registered; -ENOMEM if @cons was
 * registered alone on its token and needs an entry now (more distinct
 * handlers than the manager keeps for lone consumers), in which case the
 * old handler stays.
 */
int irq_bypass_set_consumer_handler(struct irq_bypass_consumer *cons,
				    irq_bypass_fast_handler_t handler)
{
	int ret = 0, slot, new_slot;
	struct irqbp_entry *e;

	mutex_lock(&irqbp_lock);
	e = irqbp_find_cons(cons);
	slot = e ? -1 : irqbp_lone_slot(&cons->node);
	if (slot >= 0) {
		/* Lone: another slot, or an entry if none is free. */
		new_slot = irqbp_handler_get(handler);
		if (new_slot >= 0) {
			irqbp_handler_put(slot);
			irqbp_lone_set_next(&cons->node, cons->node.next,
					    new_slot);
		} else {
			e = irqbp_get_entry(cons->token, GFP_KERNEL_ACCOUNT);
			if (IS_ERR(e)) {
				ret = PTR_ERR(e);
				e = NULL;
			}
		}
	} else if (!e) {
		ret = -ENOENT;
	}
	if (e && e->handler != handler) {
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
 * and takes no lock.  Per-token hit/miss counters are atomic.
 *
 * Context: where @prod's sync callback can wait for it: by default the
 * hard-irq handler of @prod->irq (interrupts disabled, also on
 * PREEMPT_RT).
 *
 * Return: 0 if the handler delivered the interrupt; -ENOENT if @prod is not
 * registered; -ENODEV if it is not connected to a consumer with a handler
 * (or was not registered as a fast producer); otherwise the handler's
 * error.  On any error the producer must deliver through its normal path.
 */
int irq_bypass_fastpath(struct irq_bypass_producer *prod)
{
	irq_bypass_fast_handler_t handler;
	struct irq_bypass_consumer *cons;
	struct irqbp_entry *e;
	int ret;

	/*
	 * Keeps the entry allocated (kfree_rcu()); nobody waits for it.  A
	 * preempt-disabled section has been an RCU reader since the flavours
	 * were consolidated (4.20) and costs a count in hard irq, where
	 * rcu_read_lock() is two out-of-line calls on PREEMPT_RCU kernels
	 * (Debian's generic and rt).  Not the _notrace variant: without
	 * lockdep both compile to the same preempt count, with it this one
	 * records the reader for RCU_LOCKDEP_WARN().
	 */
	rcu_read_lock_sched();
	e = irqbp_marked_entry(&prod->node, false);
	if (!e) {
		ret = -ENOENT;
		goto out;
	}

	/*
	 * Pairs with smp_store_release() in irqbp_publish(): seeing the
	 * consumer implies seeing its handler and the e->prod it was
	 * published for.  irqbp_unpublish() clears the pointer and then waits
	 * for this call through e->sync, which waits for the current producer
	 * only.  So e->prod is checked after the acquire, not before: had
	 * @prod unregistered (nothing published then, so nothing waited) and
	 * another producer registered on the token and published it, the
	 * consumer seen here would be that producer's, and its unpublish
	 * would not wait for us.  Such a call counts no miss: the entry is
	 * not @prod's.
	 */
	cons = smp_load_acquire(&e->fast_cons);
	if (READ_ONCE(e->prod) != prod) {
		ret = -ENOENT;
		goto out;
	}
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
	rcu_read_unlock_sched();
	return ret;
}
EXPORT_SYMBOL_GPL(irq_bypass_fastpath);

/**
 * irq_bypass_get_stats - read the state and counters of a token
 * @token: the token
 * @stats: filled in on success
 *
 * Context: process, may sleep.  The counters keep moving while the fast
 * path runs.
 *
 * Return: 0, or -ENOENT if nothing is registered with @token.
 */
int irq_bypass_get_stats(void *token, struct irq_bypass_stats *stats)
{
	struct irqbp_entry *e;
	int ret = -ENOENT;

	mutex_lock(&irqbp_lock);
	e = irqbp_lookup(token);
	if (e && (e->prod || e->cons)) {
		stats->hits = atomic64_read(&e->hits);
		stats->misses = atomic64_read(&e->misses);
		stats->paired = e->paired;
		ret = 0;
	} else if (!e && irqbp_lone_find(token)) {
		memset(stats, 0, sizeof(*stats));
		ret = 0;
	}
	mutex_unlock(&irqbp_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(irq_bypass_get_stats);

/*
 * debugfs: irqbypass/tokens, one line per token.  Holds irqbp_lock so the
 * producer (and its ->irq) cannot go away while printed.
 */
static int irqbp_tokens_show(struct seq_file *m, void *unused)
{
	struct irqbp_entry *e;
	struct list_head *n;
	unsigned int i;

	seq_puts(m, "token producer consumer paired irq handler hits misses fast refused\n");
	mutex_lock(&irqbp_lock);
	for (i = 0; i < (1U << irqbp_hash_bits); i++)
		hlist_for_each_entry(e, &irqbp_hash[i], hnode)
			seq_printf(m, "%p %d %d %d %d %d %llu %llu %d %u\n",
				   e->token, !!e->prod, !!e->cons, e->paired,
				   e->prod ? e->prod->irq : -1, !!e->handler,
				   (u64)atomic64_read(&e->hits),
				   (u64)atomic64_read(&e->misses),
				   !!e->fast_cons, e->refused);
	for (i = 0; i < (1U << irqbp_lone_bits); i++)
		for (n = irqbp_lone[i]; n && irqbp_lone_slot(n) >= 0; n = n->next)
			seq_printf(m, "%p 0 1 0 -1 %d 0 0 0 0\n",
				   irqbp_lone_cons(n)->token,
				   irqbp_lone_slot(n) > 0);
	mutex_unlock(&irqbp_lock);
	return 0;
}

static int irqbp_tokens_open(struct inode *inode, struct file *file)
{
	return single_open(file, irqbp_tokens_show, NULL);
}

/*
 * debugfs: irqbypass/hash, the tables' sizes (they follow the tokens): the
 * entries, and the lone consumers that need none.
 */
static int irqbp_hash_show(struct seq_file *m, void *unused)
{
	mutex_lock(&irqbp_lock);
	seq_printf(m, "entries %u buckets %u lone %u lone_buckets %u\n",
		   irqbp_nr_entries, 1U << irqbp_hash_bits, irqbp_nr_lone,
		   1U << irqbp_lone_bits);
	mutex_unlock(&irqbp_lock);
	return 0;
}

static int irqbp_hash_open(struct inode *inode, struct file *file)
{
	return single_open(file, irqbp_hash_show, NULL);
}

/*
 * read_iter rather than read, so kernel_read() works too (the in-kernel
 * test reads the file).  .owner keeps the module loaded while it is open.
 */
static const struct file_operations irqbp_tokens_fops = {
	.owner		= THIS_MODULE,
	.open		= irqbp_tokens_open,
	.read_iter	= seq_read_iter,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static const struct file_operations irqbp_hash_fops = {
	.owner		= THIS_MODULE,
	.open		= irqbp_hash_open,
	.read_iter	= seq_read_iter,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static int __init irqbp_init(void)
{
	irqbp_node_key = get_random_long();
	irqbp_debugfs = debugfs_create_dir("irqbypass", NULL);
	debugfs_create_file_unsafe("tokens", 0400, irqbp_debugfs, NULL,
				   &irqbp_tokens_fops);
	debugfs_create_file_unsafe("hash", 0400, irqbp_debugfs, NULL,
				   &irqbp_hash_fops);
	return 0;
}
module_init(irqbp_init);

/*
 * Every registration holds a module reference, so only entries of refused
 * consumers whose owner never unregistered them can be left; entries still
 * waiting for kfree_rcu() need nothing from this module.
 */
static void __exit irqbp_exit(void)
{
	struct hlist_node *tmp;
	struct irqbp_entry *e;
	unsigned int i;

	debugfs_remove_recursive(irqbp_debugfs);
	for (i = 0; i < (1U << irqbp_hash_bits); i++)
		hlist_for_each_entry_safe(e, tmp, &irqbp_hash[i], hnode) {
			WARN_ON(e->prod || e->cons);
			hlist_del(&e->hnode);
			kfree(e);
		}
	if (irqbp_hash != irqbp_hash_min)
		kvfree(irqbp_hash);
	/* Every lone consumer holds a module reference: none is left. */
	WARN_ON(irqbp_nr_lone);
	if (irqbp_lone != irqbp_lone_min)
		kvfree(irqbp_lone);
}
module_exit(irqbp_exit);
