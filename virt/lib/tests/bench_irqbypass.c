// SPDX-License-Identifier: GPL-2.0-only
/*
 * irqbypass benchmark (not a test): registers then unregisters N producer/
 * consumer pairs in random order with the stock manager (the distro's
 * virt/lib/irqbypass.c compiled into this module by bench_irqbypass_stock.c)
 * and with the kit's manager (irqbypass.ko), in the same run, and prints the
 * time per operation.  Runs at module load, in process context.
 *
 * Output, one line per N after a header, parseable as CSV once the
 * "irqbypass_bench: csv: " prefix is removed:
 *   irqbypass_bench: csv: n,stock_ns_per_op,kit_ns_per_op,ratio
 *   irqbypass_bench: csv: 1024,3900.12,80.50,48.44
 * An operation is one register or unregister call: a round of N pairs is 4N
 * operations.  ratio = stock / kit.  Other lines ("irqbypass_bench: # ...")
 * are comments.
 *
 * Parameters: sizes (list of N); min_ops (small N repeat rounds until this
 * many operations were timed); samples (the fastest of this many timed
 * samples is reported); verbose (print every sample); settle (wait for
 * pending kfree_rcu() before each sample); skip_stock; fast_pairs (also time
 * the kit's manager with fast producers, as vfio-pci registers them, and a
 * fast handler on every consumer, where unpairing waits with
 * synchronize_hardirq() on the producer's irq; a comment line).
 */

#include <linux/irqbypass.h>
#include <linux/kvm_irqbypass_compat.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "bench_irqbypass.h"

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("irqbypass manager benchmark, stock vs kit (kvm-irqbypass kit)");

static unsigned int sizes[16] = { 1, 64, 1024, 4096, 16384 };
static int nr_sizes = 5;
module_param_array(sizes, uint, &nr_sizes, 0444);
MODULE_PARM_DESC(sizes, "numbers of pairs to time (default 1,64,1024,4096,16384)");

static unsigned int min_ops = 65536;
module_param(min_ops, uint, 0444);
MODULE_PARM_DESC(min_ops, "repeat rounds until this many operations were timed");

static unsigned int samples = 3;
module_param(samples, uint, 0444);
MODULE_PARM_DESC(samples, "timed samples per N and manager, the fastest is reported");

static bool skip_stock;
module_param(skip_stock, bool, 0444);
MODULE_PARM_DESC(skip_stock, "time only the kit's manager");

static bool verbose;
module_param(verbose, bool, 0444);
MODULE_PARM_DESC(verbose, "print every sample");

static bool settle;
module_param(settle, bool, 0444);
MODULE_PARM_DESC(settle, "wait for pending RCU frees before each sample (untimed)");

static unsigned int fast_pairs = 16;
module_param(fast_pairs, uint, 0444);
MODULE_PARM_DESC(fast_pairs, "pairs for the kit-with-fast-handlers figure (0: skip)");

struct bench_mgr {
	const char *name;
	int (*reg_prod)(struct irq_bypass_producer *prod, void *key);
	void (*unreg_prod)(struct irq_bypass_producer *prod);
	int (*reg_cons)(struct irq_bypass_consumer *cons, void *key);
	void (*unreg_cons)(struct irq_bypass_consumer *cons);
};

static const struct bench_mgr stock_mgr = {
	.name = "stock",
	.reg_prod = bench_stock_reg_prod,
	.unreg_prod = stock_irq_bypass_unregister_producer,
	.reg_cons = bench_stock_reg_cons,
	.unreg_cons = stock_irq_bypass_unregister_consumer,
};

static int kit_reg_prod(struct irq_bypass_producer *prod, void *key)
{
	return irqbp_compat_reg_prod(irq_bypass_register_producer, prod, key);
}

static int kit_reg_cons(struct irq_bypass_consumer *cons, void *key)
{
	return irqbp_compat_reg_cons(irq_bypass_register_consumer, cons, key);
}

static const struct bench_mgr kit_mgr = {
	.name = "kit",
	.reg_prod = kit_reg_prod,
	.unreg_prod = irq_bypass_unregister_producer,
	.reg_cons = kit_reg_cons,
	.unreg_cons = irq_bypass_unregister_consumer,
};

/*
 * "Manager" that does nothing: times the harness itself (random order,
 * touching the objects), printed with verbose=1.
 */
static int null_reg_prod(struct irq_bypass_producer *prod, void *key)
{
	WRITE_ONCE(prod->stop, NULL);
	return 0;
}

static void null_unreg_prod(struct irq_bypass_producer *prod)
{
	WRITE_ONCE(prod->stop, NULL);
}

static int null_reg_cons(struct irq_bypass_consumer *cons, void *key)
{
	WRITE_ONCE(cons->stop, NULL);
	return 0;
}

static void null_unreg_cons(struct irq_bypass_consumer *cons)
{
	WRITE_ONCE(cons->stop, NULL);
}

static const struct bench_mgr null_mgr = {
	.name = "harness",
	.reg_prod = null_reg_prod,
	.unreg_prod = null_unreg_prod,
	.reg_cons = null_reg_cons,
	.unreg_cons = null_unreg_cons,
};

/* Trivial callbacks, like a pair whose connect work is negligible. */
static int bench_add_producer(struct irq_bypass_consumer *cons,
			      struct irq_bypass_producer *prod)
{
	return 0;
}

static void bench_del_producer(struct irq_bypass_consumer *cons,
			       struct irq_bypass_producer *prod)
{
}

/* Never called: no producer calls the fast path here. */
static int bench_fast_handler(struct irq_bypass_consumer *cons,
			      struct irq_bypass_producer *prod)
{
	return -EWOULDBLOCK;
}

struct bench_set {
	unsigned int n;
	struct irq_bypass_producer *prod;
	struct irq_bypass_consumer *cons;
	void **tokens;
	u32 *reg_order;		/* 2n entries: pair index << 1 | consumer */
	u32 *unreg_order;
};

static void bench_shuffle(u32 *a, u32 n)
{
	u32 i, j, t;

	for (i = n - 1; i > 0; i--) {
		j = get_random_u32() % (i + 1);
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

static void bench_free(struct bench_set *s)
{
	unsigned int i;

	if (s->tokens)
		for (i = 0; i < s->n; i++)
			kfree(s->tokens[i]);
	kvfree(s->tokens);
	kvfree(s->prod);
	kvfree(s->cons);
	kvfree(s->reg_order);
	kvfree(s->unreg_order);
}

/*
 * Tokens are separate small allocations, like eventfd contexts, so their
 * addresses are as sparse as in real use.  Context: process, may sleep.
 */
static int bench_alloc(struct bench_set *s, unsigned int n)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->tokens = kvcalloc(n, sizeof(*s->tokens), GFP_KERNEL);
	s->prod = kvcalloc(n, sizeof(*s->prod), GFP_KERNEL);
	s->cons = kvcalloc(n, sizeof(*s->cons), GFP_KERNEL);
	s->reg_order = kvcalloc(2 * n, sizeof(u32), GFP_KERNEL);
	s->unreg_order = kvcalloc(2 * n, sizeof(u32), GFP_KERNEL);
	if (!s->tokens || !s->prod || !s->cons || !s->reg_order ||
	    !s->unreg_order)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		s->tokens[i] = kmalloc(48, GFP_KERNEL);
		if (!s->tokens[i])
			return -ENOMEM;
		s->prod[i].irq = i;
		s->cons[i].add_producer = bench_add_producer;
		s->cons[i].del_producer = bench_del_producer;
	}
	for (i = 0; i < 2 * n; i++) {
		s->reg_order[i] = i;
		s->unreg_order[i] = i;
	}
	return 0;
}

/*
 * One round: register all 2n objects in reg_order, then unregister them in
 * unreg_order.  Returns the elapsed ns, or a negative errno if a registration
 * failed.  Context: process, may sleep.
 */
static s64 bench_round(const struct bench_mgr *m, struct bench_set *s)
{
	u32 i, k;
	u64 t0;
	int ret;

	bench_shuffle(s->reg_order, 2 * s->n);
	bench_shuffle(s->unreg_order, 2 * s->n);

	t0 = ktime_get_ns();
	for (i = 0; i < 2 * s->n; i++) {
		k = s->reg_order[i];
		if (k & 1)
			ret = m->reg_cons(&s->cons[k >> 1], s->tokens[k >> 1]);
		else
			ret = m->reg_prod(&s->prod[k >> 1], s->tokens[k >> 1]);
		if (ret) {
			pr_err("irqbypass_bench: %s: register failed: %d\n",
			       m->name, ret);
			return ret;
		}
		cond_resched();
	}
	for (i = 0; i < 2 * s->n; i++) {
		k = s->unreg_order[i];
		if (k & 1)
			m->unreg_cons(&s->cons[k >> 1]);
		else
			m->unreg_prod(&s->prod[k >> 1]);
		cond_resched();
	}
	return ktime_get_ns() - t0;
}

/*
 * Times @samples samples of at least min_ops / samples operations each (at
 * least one round), after an untimed warm-up round when rounds are short,
 * and returns the fastest sample's ns per operation * 100, or < 0.  Load on
 * the host only ever adds time: the fastest sample is the best estimate of
 * the cost, for both managers alike.  Context: process, may sleep.
 */
static s64 bench_mgr(const struct bench_mgr *m, struct bench_set *s)
{
	u64 ops = 4ULL * s->n, total;
	s64 best = S64_MAX, ns;
	unsigned int rounds, r, i;

	rounds = max_t(u64, 1, div64_u64(min_ops / samples, ops));
	if (ops < min_ops) {
		ns = bench_round(m, s);
		if (ns < 0)
			return ns;
	}
	for (i = 0; i < samples; i++) {
		if (settle)
			rcu_barrier();
		total = 0;
		for (r = 0; r < rounds; r++) {
			ns = bench_round(m, s);
			if (ns < 0)
				return ns;
			total += ns;
		}
		ns = div64_u64(total * 100, ops * rounds);
		if (verbose)
			pr_info("irqbypass_bench: # %s n=%u sample %u: %lld ns per op\n",
				m->name, s->n, i, ns / 100);
		best = min(best, ns);
	}
	return best;
}

/*
 * Kit manager, fast producers and consumers with a fast handler: register
 * (consumer, producer) then unregister n pairs.  Returns ns per register/unregister
 * operation * 100, or < 0.  Context: process, may sleep.
 */
static s64 bench_fast(unsigned int n)
{
	struct bench_set s;
	unsigned int i;
	s64 ret;
	u64 t0;

	ret = bench_alloc(&s, n);
	if (ret)
		goto out;
	t0 = ktime_get_ns();
	for (i = 0; i < n && !ret; i++) {
		ret = irqbp_compat_reg_fast_cons(&s.cons[i], s.tokens[i],
						 bench_fast_handler);
		/* As vfio-pci does: unpairing waits with synchronize_hardirq(). */
		s.prod[i].irq = i + 1;
		if (!ret)
			ret = irqbp_compat_reg_fast_prod(&s.prod[i], s.tokens[i], 0);
	}
	for (i = 0; i < n; i++) {
		irq_bypass_unregister_producer(&s.prod[i]);
		irq_bypass_unregister_consumer(&s.cons[i]);
	}
	if (!ret)
		ret = div64_u64((ktime_get_ns() - t0) * 100, 4ULL * n);
out:
	bench_free(&s);
	return ret;
}

static int __init bench_irqbypass_init(void)
{
	struct bench_set s;
	s64 stock, kit;
	int i, ret = 0;

	samples = max(samples, 1U);
	pr_info("irqbypass_bench: csv: n,stock_ns_per_op,kit_ns_per_op,ratio\n");
	for (i = 0; i < nr_sizes && !ret; i++) {
		ret = bench_alloc(&s, sizes[i]);
		if (!ret) {
			stock = skip_stock ? 0 : bench_mgr(&stock_mgr, &s);
			kit = bench_mgr(&kit_mgr, &s);
			if (verbose)
				bench_mgr(&null_mgr, &s);
			if (stock < 0 || kit < 0)
				ret = -EIO;
		}
		bench_free(&s);
		if (ret)
			break;
		if (kit <= 0)
			kit = 1;
		pr_info("irqbypass_bench: csv: %u,%lld.%02lld,%lld.%02lld,%lld.%02lld\n",
			sizes[i], stock / 100, stock % 100, kit / 100, kit % 100,
			div64_s64(stock, kit), div64_s64(stock * 100, kit) % 100);
	}
	if (!ret && fast_pairs) {
		kit = bench_fast(fast_pairs);
		if (kit < 0)
			ret = kit;
		else
			pr_info("irqbypass_bench: # kit with fast handlers: n=%u, %lld ns per register/unregister\n",
				fast_pairs, kit / 100);
	}
	if (ret)
		pr_err("irqbypass_bench: failed: %d\n", ret);
	return ret;
}
module_init(bench_irqbypass_init);

static void __exit bench_irqbypass_exit(void)
{
}
module_exit(bench_irqbypass_exit);
