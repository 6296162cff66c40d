// SPDX-License-Identifier: GPL-2.0-only
/*
 * In-kernel tests of the kit's irqbypass manager (KUnit is off in Debian
 * kernels).  Loading the module runs every test and prints TAP to the kernel
 * log; module init fails with -EINVAL if any test failed, so the testbed
 * sees the failure as an insmod error.  All tests run in process context
 * (module init) except the fake producer of the concurrency test, an
 * hrtimer in hard-irq mode.
 *
 * Parameters: concurrency_ms (how long the concurrency test runs).
 */

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/hardirq.h>
#include <linux/hrtimer.h>
#include <linux/irqbypass.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("irqbypass manager tests (kvm-irqbypass kit)");

static unsigned int concurrency_ms = 2000;
module_param(concurrency_ms, uint, 0444);
MODULE_PARM_DESC(concurrency_ms, "duration of the concurrency test");

/* Test bookkeeping; only module init touches it. */
static int tap_n, tap_failed;
static bool cur_ok;
static const char *cur_skip;

#define EXPECT(cond)							\
	do {								\
		if (!(cond)) {						\
			cur_ok = false;					\
			pr_info("# %s:%d: expected %s\n", __func__,	\
				__LINE__, #cond);			\
		}							\
	} while (0)

#define EXPECT_EQ(a, b)							\
	do {								\
		long long __a = (a), __b = (b);				\
		if (__a != __b) {					\
			cur_ok = false;					\
			pr_info("# %s:%d: %s == %lld, expected %s == %lld\n", \
				__func__, __LINE__, #a, __a, #b, __b);	\
		}							\
	} while (0)

/* Callback log: "Pstop Cstop Padd ...", compared with the stock order. */
static char evlog[256];

static void ev(const char *what)
{
	size_t len = strlen(evlog);

	snprintf(evlog + len, sizeof(evlog) - len, "%s%s", len ? " " : "", what);
}

static bool evlog_is(const char *expect)
{
	bool same = !strcmp(evlog, expect);

	if (!same)
		pr_info("# callbacks: \"%s\", expected \"%s\"\n", evlog, expect);
	evlog[0] = '\0';
	return same;
}

#define CONNECT_ORDER	"Pstop Cstop Padd Cadd Cstart Pstart"
#define DISCONNECT_ORDER "Pstop Cstop Cdel Pdel Cstart Pstart"

struct tprod {
	struct irq_bypass_producer p;
	int add_ret;
	bool log;
	bool paired;
};

struct tcons {
	struct irq_bypass_consumer c;
	int add_ret;
	bool log;
	bool paired;
	struct tprod *expect_prod;
	int handler_ret;
	atomic_t calls;
	atomic_t bad_calls;
	atomic_t hardirq_calls;
};

static int tp_add(struct irq_bypass_producer *p, struct irq_bypass_consumer *c)
{
	struct tprod *tp = container_of(p, struct tprod, p);

	if (tp->log)
		ev("Padd");
	if (!tp->add_ret)
		WRITE_ONCE(tp->paired, true);
	return tp->add_ret;
}

static void tp_del(struct irq_bypass_producer *p, struct irq_bypass_consumer *c)
{
	struct tprod *tp = container_of(p, struct tprod, p);

	if (tp->log)
		ev("Pdel");
	WRITE_ONCE(tp->paired, false);
}

static void tp_stop(struct irq_bypass_producer *p)
{
	if (container_of(p, struct tprod, p)->log)
		ev("Pstop");
}

static void tp_start(struct irq_bypass_producer *p)
{
	if (container_of(p, struct tprod, p)->log)
		ev("Pstart");
}

static int tc_add(struct irq_bypass_consumer *c, struct irq_bypass_producer *p)
{
	struct tcons *tc = container_of(c, struct tcons, c);

	if (tc->log)
		ev("Cadd");
	if (!tc->add_ret)
		WRITE_ONCE(tc->paired, true);
	return tc->add_ret;
}

static void tc_del(struct irq_bypass_consumer *c, struct irq_bypass_producer *p)
{
	struct tcons *tc = container_of(c, struct tcons, c);

	if (tc->log)
		ev("Cdel");
	WRITE_ONCE(tc->paired, false);
}

static void tc_stop(struct irq_bypass_consumer *c)
{
	if (container_of(c, struct tcons, c)->log)
		ev("Cstop");
}

static void tc_start(struct irq_bypass_consumer *c)
{
	if (container_of(c, struct tcons, c)->log)
		ev("Cstart");
}

/*
 * Fast handler.  Context: hard irq (or wherever irq_bypass_fastpath() was
 * called), RCU read side.  Counts a bad call if the consumer is not
 * connected or the producer is not the expected one.
 */
static int tc_handler(struct irq_bypass_consumer *c,
		      struct irq_bypass_producer *p)
{
	struct tcons *tc = container_of(c, struct tcons, c);
	int n = atomic_inc_return(&tc->calls);

	if (!READ_ONCE(tc->paired) ||
	    (tc->expect_prod && p != &tc->expect_prod->p))
		atomic_inc(&tc->bad_calls);
	if (in_hardirq())
		atomic_inc(&tc->hardirq_calls);
	if (tc->handler_ret > 0)	/* fail every handler_ret-th call */
		return n % tc->handler_ret ? 0 : -EWOULDBLOCK;
	return tc->handler_ret;
}

/*
 * The tests' producers call irq_bypass_fastpath() from process context and
 * from an hrtimer, not from an irq handler, so they register with their
 * own sync callback: tfast() counts the calls running, tp_sync() waits for
 * none (the full barriers on both sides: either the call sees the cleared
 * consumer or the sync sees the call).
 */
static atomic_t tfast_running;
static atomic_t tsync_calls;

static int tfast(struct tprod *tp)
{
	int ret;

	atomic_inc(&tfast_running);
	/* Pairs with smp_mb() in tp_sync(): count, then read the consumer. */
	smp_mb__after_atomic();
	ret = irq_bypass_fastpath(&tp->p);
	/* The handler's accesses complete before tp_sync() sees zero. */
	smp_mb__before_atomic();
	atomic_dec(&tfast_running);
	return ret;
}

/* Context: process, called by the manager under its mutex. */
static void tp_sync(struct irq_bypass_producer *p)
{
	/* Pairs with tfast(): the cleared consumer, then the count. */
	smp_mb();
	while (atomic_read(&tfast_running))
		cpu_relax();
	atomic_inc(&tsync_calls);
}

static int tp_register(struct tprod *tp)
{
	return irq_bypass_register_fast_producer(&tp->p, tp_sync);
}

static void tprod_init(struct tprod *tp, void *token, int irq)
{
	memset(tp, 0, sizeof(*tp));
	tp->p.token = token;
	tp->p.irq = irq;
	tp->p.add_consumer = tp_add;
	tp->p.del_consumer = tp_del;
	tp->p.stop = tp_stop;
	tp->p.start = tp_start;
	tp->log = true;
}

static void tcons_init(struct tcons *tc, void *token)
{
	memset(tc, 0, sizeof(*tc));
	tc->c.token = token;
	tc->c.add_producer = tc_add;
	tc->c.del_producer = tc_del;
	tc->c.stop = tc_stop;
	tc->c.start = tc_start;
	tc->log = true;
}

static bool token_paired(void *token)
{
	struct irq_bypass_stats st;

	return !irq_bypass_get_stats(token, &st) && st.paired;
}

static bool token_known(void *token)
{
	struct irq_bypass_stats st;

	return !irq_bypass_get_stats(token, &st);
}

/* Tokens: only their addresses matter. */
static int tok[8];

/*
 * Reads a small file (sysfs or debugfs) into @buf.  Context: process.
 * Returns the length or a negative errno.
 */
static ssize_t read_small_file(const char *path, char *buf, size_t size)
{
	struct file *f;
	loff_t pos = 0;
	ssize_t n, total = 0;

	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	while (total < size - 1) {
		n = kernel_read(f, buf + total, size - 1 - total, &pos);
		if (n <= 0)
			break;
		total += n;
	}
	filp_close(f, NULL);
	buf[total] = '\0';
	return total;
}

/* Reference count of the irqbypass module, or -1 if it is built in. */
static int irqbypass_refcnt(void)
{
	char buf[32];
	int v;

	if (read_small_file("/sys/module/irqbypass/refcnt", buf, sizeof(buf)) <= 0)
		return -1;
	if (kstrtoint(strim(buf), 10, &v))
		return -1;
	return v;
}

enum { HS_ENTRIES, HS_BUCKETS, HS_LONE, HS_LONE_BUCKETS };

/* A size of the manager's tables (debugfs irqbypass/hash, HS_*), or -1. */
static int table_stat(int which)
{
	unsigned int v[4];
	char buf[128];

	if (read_small_file("/sys/kernel/debug/irqbypass/hash", buf,
			    sizeof(buf)) <= 0)
		return -1;
	if (sscanf(buf, "entries %u buckets %u lone %u lone_buckets %u",
		   &v[0], &v[1], &v[2], &v[3]) != 4)
		return -1;
	return v[which];
}

/* Entries or buckets of the manager's hash table, or -1. */
static int hash_stat(bool buckets)
{
	return table_stat(buckets ? HS_BUCKETS : HS_ENTRIES);
}

/* ---- tests -------------------------------------------------------------- */

static void test_invalid_args(void)
{
	struct tprod p;
	struct tcons c;

	tprod_init(&p, NULL, 1);
	EXPECT_EQ(tp_register(&p), -EINVAL);
	tcons_init(&c, NULL);
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), -EINVAL);
	tcons_init(&c, &tok[0]);
	c.c.add_producer = NULL;
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), -EINVAL);
	tcons_init(&c, &tok[0]);
	c.c.del_producer = NULL;
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), -EINVAL);
	EXPECT(!token_known(&tok[0]));
	EXPECT(evlog_is(""));
}

static void test_pair_producer_first(void)
{
	struct tprod p;
	struct tcons c;

	tprod_init(&p, &tok[0], 10);
	tcons_init(&c, &tok[0]);

	EXPECT_EQ(tp_register(&p), 0);
	EXPECT(evlog_is(""));
	EXPECT(token_known(&tok[0]) && !token_paired(&tok[0]));
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT(evlog_is(CONNECT_ORDER));
	EXPECT(token_paired(&tok[0]) && p.paired && c.paired);

	irq_bypass_unregister_consumer(&c.c);
	EXPECT(evlog_is(DISCONNECT_ORDER));
	EXPECT(token_known(&tok[0]) && !token_paired(&tok[0]));
	EXPECT(!p.paired && !c.paired);
	irq_bypass_unregister_producer(&p.p);
	EXPECT(evlog_is(""));
	EXPECT(!token_known(&tok[0]));
}

static void test_pair_consumer_first(void)
{
	struct tprod p;
	struct tcons c;

	tprod_init(&p, &tok[1], 11);
	tcons_init(&c, &tok[1]);

	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT(evlog_is(""));
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT(evlog_is(CONNECT_ORDER));
	EXPECT(token_paired(&tok[1]) && p.paired && c.paired);

	irq_bypass_unregister_producer(&p.p);
	EXPECT(evlog_is(DISCONNECT_ORDER));
	EXPECT(!p.paired && !c.paired && !token_paired(&tok[1]));

	/* The consumer pairs again with a new producer of the same token. */
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT(evlog_is(CONNECT_ORDER));
	irq_bypass_unregister_consumer(&c.c);
	EXPECT(evlog_is(DISCONNECT_ORDER));
	irq_bypass_unregister_producer(&p.p);
	EXPECT(evlog_is(""));
	EXPECT(!token_known(&tok[1]));
}

static void test_ebusy(void)
{
	struct tprod p1, p2;
	struct tcons c1, c2;

	tprod_init(&p1, &tok[2], 12);
	tprod_init(&p2, &tok[2], 13);
	tcons_init(&c1, &tok[2]);
	tcons_init(&c2, &tok[2]);

	EXPECT_EQ(tp_register(&p1), 0);
	EXPECT_EQ(irq_bypass_register_consumer(&c1.c), 0);
	EXPECT(evlog_is(CONNECT_ORDER));

	EXPECT_EQ(tp_register(&p2), -EBUSY);
	EXPECT_EQ(irq_bypass_register_consumer(&c2.c), -EBUSY);
	EXPECT_EQ(tp_register(&p1), -EBUSY);
	EXPECT_EQ(irq_bypass_register_consumer(&c1.c), -EBUSY);
	/* The same objects under another token are still the same objects. */
	p1.p.token = &tok[3];
	c1.c.token = &tok[3];
	EXPECT_EQ(tp_register(&p1), -EBUSY);
	EXPECT_EQ(irq_bypass_register_consumer(&c1.c), -EBUSY);
	EXPECT(!token_known(&tok[3]));
	p1.p.token = &tok[2];
	c1.c.token = &tok[2];
	EXPECT(evlog_is(""));
	EXPECT(token_paired(&tok[2]) && p1.paired && c1.paired);
	EXPECT(!p2.paired && !c2.paired);

	/* The rejected ones were never registered: unregistering is a no-op. */
	irq_bypass_unregister_producer(&p2.p);
	irq_bypass_unregister_consumer(&c2.c);
	EXPECT(evlog_is(""));
	EXPECT(token_paired(&tok[2]));

	irq_bypass_unregister_producer(&p1.p);
	irq_bypass_unregister_consumer(&c1.c);
	EXPECT(evlog_is(DISCONNECT_ORDER));
	EXPECT(!token_known(&tok[2]));
}

static void test_consumer_add_fails(void)
{
	struct tprod p;
	struct tcons c;

	tprod_init(&p, &tok[0], 14);
	tcons_init(&c, &tok[0]);
	c.add_ret = -EIO;

	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), -EIO);
	/* The producer's add is undone, both quiesced and restarted. */
	EXPECT(evlog_is("Pstop Cstop Padd Cadd Pdel Cstart Pstart"));
	EXPECT(!p.paired && !c.paired);
	EXPECT(token_known(&tok[0]) && !token_paired(&tok[0]));

	/* The failed consumer is not registered. */
	irq_bypass_unregister_consumer(&c.c);
	EXPECT(evlog_is(""));

	/* A working consumer pairs with the same producer afterwards. */
	c.add_ret = 0;
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT(evlog_is(CONNECT_ORDER));
	EXPECT(token_paired(&tok[0]));
	irq_bypass_unregister_consumer(&c.c);
	irq_bypass_unregister_producer(&p.p);
	EXPECT(evlog_is(DISCONNECT_ORDER));
	EXPECT(!token_known(&tok[0]));
}

static void test_producer_add_fails(void)
{
	struct tprod p;
	struct tcons c;

	tprod_init(&p, &tok[1], 15);
	tcons_init(&c, &tok[1]);
	p.add_ret = -ENOSPC;

	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT_EQ(tp_register(&p), -ENOSPC);
	/* The consumer's add is never called when the producer's fails. */
	EXPECT(evlog_is("Pstop Cstop Padd Cstart Pstart"));
	EXPECT(!p.paired && !c.paired);
	EXPECT(token_known(&tok[1]) && !token_paired(&tok[1]));

	irq_bypass_unregister_producer(&p.p);
	EXPECT(evlog_is(""));

	p.add_ret = 0;
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT(evlog_is(CONNECT_ORDER));
	irq_bypass_unregister_producer(&p.p);
	irq_bypass_unregister_consumer(&c.c);
	EXPECT(evlog_is(DISCONNECT_ORDER));
	EXPECT(!token_known(&tok[1]));
}

static void test_unregister_unknown(void)
{
	struct tprod p, other_p;
	struct tcons c, other_c;

	/* Never registered, no token. */
	tprod_init(&other_p, NULL, 16);
	tcons_init(&other_c, NULL);
	irq_bypass_unregister_producer(&other_p.p);
	irq_bypass_unregister_consumer(&other_c.c);

	/* Never registered, token unknown to the manager. */
	tprod_init(&other_p, &tok[4], 16);
	tcons_init(&other_c, &tok[4]);
	irq_bypass_unregister_producer(&other_p.p);
	irq_bypass_unregister_consumer(&other_c.c);
	EXPECT(!token_known(&tok[4]));

	/*
	 * Never registered, with the token of a registered pair, as a copy of
	 * the registered objects and with garbage in the private field.
	 */
	tprod_init(&p, &tok[4], 17);
	tcons_init(&c, &tok[4]);
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT(evlog_is(CONNECT_ORDER));

	irq_bypass_unregister_producer(&other_p.p);
	irq_bypass_unregister_consumer(&other_c.c);
	other_p = p;
	other_c = c;
	irq_bypass_unregister_producer(&other_p.p);
	irq_bypass_unregister_consumer(&other_c.c);
	memset(&other_p.p.node, 0x5a, sizeof(other_p.p.node));
	memset(&other_c.c.node, 0x5a, sizeof(other_c.c.node));
	irq_bypass_unregister_producer(&other_p.p);
	irq_bypass_unregister_consumer(&other_c.c);
	EXPECT(evlog_is(""));
	EXPECT(token_paired(&tok[4]) && p.paired && c.paired);

	/* Unregistering twice is harmless. */
	irq_bypass_unregister_consumer(&c.c);
	irq_bypass_unregister_consumer(&c.c);
	irq_bypass_unregister_producer(&p.p);
	irq_bypass_unregister_producer(&p.p);
	EXPECT(evlog_is(DISCONNECT_ORDER));
	EXPECT(!token_known(&tok[4]));
}

/*
 * A caller that overwrites the private ->node of registered objects: they are
 * still found by token for unregistration; the fast path falls back.
 */
static void test_node_clobbered(void)
{
	struct tprod p;
	struct tcons c;

	tprod_init(&p, &tok[5], 22);
	tcons_init(&c, &tok[5]);
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c.c, tc_handler), 0);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT(evlog_is(CONNECT_ORDER));

	INIT_LIST_HEAD(&p.p.node);
	memset(&c.c.node, 0, sizeof(c.c.node));
	EXPECT_EQ(tfast(&p), -ENOENT);
	EXPECT_EQ(atomic_read(&c.calls), 1);
	EXPECT_EQ(tp_register(&p), -EBUSY);
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), -EBUSY);
	EXPECT(token_paired(&tok[5]));

	irq_bypass_unregister_consumer(&c.c);
	EXPECT(evlog_is(DISCONNECT_ORDER));
	irq_bypass_unregister_producer(&p.p);
	EXPECT(!token_known(&tok[5]));
	EXPECT_EQ(hash_stat(false), 0);
	EXPECT_EQ(atomic_read(&c.bad_calls), 0);
}

static void test_module_refcount(void)
{
	struct tprod p, p2;
	struct tcons c, bad;
	int base = irqbypass_refcnt();

	if (base < 0) {
		cur_skip = "irqbypass is built in";
		return;
	}
	tprod_init(&p, &tok[5], 18);
	tprod_init(&p2, &tok[5], 19);
	tcons_init(&c, &tok[5]);
	tcons_init(&bad, &tok[6]);
	bad.add_ret = -EIO;

	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(irqbypass_refcnt(), base + 1);
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT_EQ(irqbypass_refcnt(), base + 2);
	/* Failed registrations keep no reference. */
	EXPECT_EQ(tp_register(&p2), -EBUSY);
	EXPECT_EQ(irqbypass_refcnt(), base + 2);
	tprod_init(&p2, &tok[6], 19);
	EXPECT_EQ(tp_register(&p2), 0);
	EXPECT_EQ(irq_bypass_register_consumer(&bad.c), -EIO);
	EXPECT_EQ(irqbypass_refcnt(), base + 3);
	/* Nor do no-op unregistrations drop one. */
	irq_bypass_unregister_consumer(&bad.c);
	EXPECT_EQ(irqbypass_refcnt(), base + 3);

	irq_bypass_unregister_producer(&p2.p);
	irq_bypass_unregister_consumer(&c.c);
	EXPECT_EQ(irqbypass_refcnt(), base + 1);
	irq_bypass_unregister_producer(&p.p);
	EXPECT_EQ(irqbypass_refcnt(), base);
	evlog[0] = '\0';
}

static void test_fastpath(void)
{
	struct irq_bypass_stats st;
	struct tprod p, stranger;
	struct tcons c;

	tprod_init(&p, &tok[7], 20);
	tprod_init(&stranger, &tok[7], 21);
	tcons_init(&c, &tok[7]);
	c.expect_prod = &p;
	p.log = false;
	c.log = false;

	EXPECT_EQ(tfast(&p), -ENOENT);
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c.c, tc_handler), -ENOENT);

	/* Handler set before the producer appears: published on pairing. */
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c.c, tc_handler), 0);
	EXPECT_EQ(tfast(&p), -ENOENT);
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(atomic_read(&c.calls), 2);
	/* An unregistered producer with the same token gets nothing. */
	EXPECT_EQ(tfast(&stranger), -ENOENT);
	EXPECT_EQ(atomic_read(&c.calls), 2);

	/* The handler's refusal reaches the producer and counts a miss. */
	c.handler_ret = -EWOULDBLOCK;
	EXPECT_EQ(tfast(&p), -EWOULDBLOCK);
	c.handler_ret = 0;
	EXPECT(!irq_bypass_get_stats(&tok[7], &st));
	EXPECT(st.paired);
	EXPECT_EQ(st.hits, 2);
	EXPECT_EQ(st.misses, 1);

	/* Detached handler: not called, miss. */
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c.c, NULL), 0);
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT_EQ(atomic_read(&c.calls), 3);
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c.c, tc_handler), 0);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(atomic_read(&c.calls), 4);

	/* Consumer gone: never called, and its handler is dropped. */
	irq_bypass_unregister_consumer(&c.c);
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT_EQ(atomic_read(&c.calls), 4);
	EXPECT(!irq_bypass_get_stats(&tok[7], &st));
	EXPECT_EQ(st.hits, 0);		/* counters restart on pairing */
	EXPECT_EQ(st.misses, 1);

	/* Producer gone. */
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c.c, tc_handler), 0);
	irq_bypass_unregister_producer(&p.p);
	EXPECT_EQ(tfast(&p), -ENOENT);
	EXPECT_EQ(atomic_read(&c.calls), 4);
	irq_bypass_unregister_consumer(&c.c);
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c.c, tc_handler), -ENOENT);
	EXPECT_EQ(atomic_read(&c.bad_calls), 0);
	EXPECT(!token_known(&tok[7]));
}

/*
 * irq_bypass_register_fast_consumer(): registering and attaching the
 * handler in one step behaves as the two calls did, before and after the
 * producer, and a refused or failed registration attaches nothing.
 */
static void test_fast_consumer(void)
{
	struct tcons c, c2;
	struct tprod p;

	tprod_init(&p, &tok[5], 40);
	tcons_init(&c, &tok[5]);
	tcons_init(&c2, &tok[5]);
	c.expect_prod = &p;
	c2.expect_prod = &p;
	p.log = false;
	c.log = false;
	c2.log = false;

	/* Consumer first, then the producer: published on pairing. */
	EXPECT_EQ(irq_bypass_register_fast_consumer(&c.c, tc_handler), 0);
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(atomic_read(&c.calls), 1);
	/* A second consumer is refused and its handler never attached. */
	EXPECT_EQ(irq_bypass_register_fast_consumer(&c2.c, tc_handler), -EBUSY);
	irq_bypass_unregister_consumer(&c2.c);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(atomic_read(&c.calls), 2);
	EXPECT_EQ(atomic_read(&c2.calls), 0);
	irq_bypass_unregister_consumer(&c.c);
	EXPECT_EQ(tfast(&p), -ENODEV);

	/* Producer first: published at once. */
	EXPECT_EQ(irq_bypass_register_fast_consumer(&c.c, tc_handler), 0);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(atomic_read(&c.calls), 3);
	irq_bypass_unregister_consumer(&c.c);

	/* A failing add callback registers nothing, handler included. */
	c.add_ret = -EIO;
	EXPECT_EQ(irq_bypass_register_fast_consumer(&c.c, tc_handler), -EIO);
	c.add_ret = 0;
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT_EQ(atomic_read(&c.calls), 3);
	irq_bypass_unregister_consumer(&c.c);
	irq_bypass_unregister_producer(&p.p);

	/* Without a producer the token's entry goes at once (kfree()). */
	EXPECT_EQ(irq_bypass_register_fast_consumer(&c.c, tc_handler), 0);
	EXPECT(token_known(&tok[5]));
	irq_bypass_unregister_consumer(&c.c);
	EXPECT(!token_known(&tok[5]));
	EXPECT_EQ(atomic_read(&c.bad_calls), 0);
	EXPECT_EQ(atomic_read(&c2.bad_calls), 0);
}

/*
 * For a pair that no consumer callback marked as added: one fast-path
 * call is delivered, the consumer's unregistration calls the producer's
 * sync once and logs @unpair_log, and the fast path misses after it.
 */
static void fast_deliver_then_unregister(struct tprod *p, struct tcons *c,
					 const char *unpair_log)
{
	int syncs;

	/* tc_handler counts a bad call unless the consumer was added: add it. */
	WRITE_ONCE(c->paired, true);
	EXPECT_EQ(tfast(p), 0);
	EXPECT_EQ(atomic_read(&c->calls), 1);
	syncs = atomic_read(&tsync_calls);
	irq_bypass_unregister_consumer(&c->c);
	EXPECT_EQ(atomic_read(&tsync_calls), syncs + 1);
	EXPECT(evlog_is(unpair_log));
	EXPECT_EQ(tfast(p), -ENODEV);
}

/*
 * A fast-only producer (vfio's INTx) pairs for the fast path alone: no
 * add/del/stop/start callback of either side runs, the handler delivers,
 * and unpairing still waits for the producer (sync).  A consumer without a
 * handler pairs with it silently and the fast path misses.
 */
static void test_fast_only(void)
{
	struct tcons c;
	struct tprod p;

	tprod_init(&p, &tok[6], 41);
	tcons_init(&c, &tok[6]);
	c.expect_prod = &p;

	EXPECT_EQ(irq_bypass_register_fast_only_producer(&p.p, tp_sync), 0);
	EXPECT_EQ(irq_bypass_register_fast_consumer(&c.c, tc_handler), 0);
	EXPECT(evlog_is(""));
	EXPECT(token_paired(&tok[6]));
	fast_deliver_then_unregister(&p, &c, "");

	/* Consumer without a handler: paired, never published. */
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT(evlog_is(""));
	EXPECT_EQ(tfast(&p), -ENODEV);
	irq_bypass_unregister_consumer(&c.c);
	irq_bypass_unregister_producer(&p.p);
	EXPECT(evlog_is(""));

	/* Without sync, a valid irq is needed as for fast producers. */
	p.p.irq = 0;
	EXPECT_EQ(irq_bypass_register_fast_only_producer(&p.p, NULL), -EINVAL);
	EXPECT(!token_known(&tok[6]));
	EXPECT_EQ(atomic_read(&c.bad_calls), 0);
}

/*
 * A fast-only consumer (KVM's irqfd without posted interrupts) has no
 * callbacks: pairing calls the producer's alone, the handler delivers, and
 * unpairing waits for the producer.  Only a fast consumer may be one, and
 * it must lack both add_producer and del_producer.
 */
static void test_fast_only_consumer(void)
{
	struct tcons c;
	struct tprod p;

	tprod_init(&p, &tok[6], 42);
	tcons_init(&c, &tok[6]);
	c.c.add_producer = NULL;
	c.c.del_producer = NULL;
	c.c.stop = NULL;
	c.c.start = NULL;
	c.expect_prod = &p;

	EXPECT_EQ(irq_bypass_register_consumer(&c.c), -EINVAL);
	c.c.del_producer = tc_del;
	EXPECT_EQ(irq_bypass_register_fast_consumer(&c.c, tc_handler), -EINVAL);
	c.c.del_producer = NULL;
	c.c.add_producer = tc_add;
	EXPECT_EQ(irq_bypass_register_fast_consumer(&c.c, tc_handler), -EINVAL);
	c.c.add_producer = NULL;
	EXPECT(!token_known(&tok[6]));

	EXPECT_EQ(irq_bypass_register_fast_consumer(&c.c, tc_handler), 0);
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT(evlog_is("Pstop Padd Pstart"));
	EXPECT(token_paired(&tok[6]));
	fast_deliver_then_unregister(&p, &c, "Pstop Pdel Pstart");
	EXPECT_EQ(atomic_read(&c.calls), 1);
	irq_bypass_unregister_producer(&p.p);
	EXPECT(!token_known(&tok[6]));
	EXPECT_EQ(atomic_read(&c.bad_calls), 0);
}

/*
 * Only fast producers are published, and their unpair calls their sync
 * callback once (no grace period); a plain producer (vhost-vdpa) pays
 * nothing for the fast path.
 */
static void test_opt_in(void)
{
	struct tprod p, f;
	struct tcons c;
	int syncs;

	tprod_init(&p, &tok[6], 30);
	tprod_init(&f, &tok[6], 0);
	tcons_init(&c, &tok[6]);
	p.log = false;
	f.log = false;
	c.log = false;

	/* The default sync needs an irq to wait for. */
	EXPECT_EQ(irq_bypass_register_fast_producer(&f.p, NULL), -EINVAL);
	f.p.irq = -1;
	EXPECT_EQ(irq_bypass_register_fast_producer(&f.p, NULL), -EINVAL);
	EXPECT(!token_known(&tok[6]));

	syncs = atomic_read(&tsync_calls);
	EXPECT_EQ(irq_bypass_register_producer(&p.p), 0);
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c.c, tc_handler), 0);
	EXPECT(token_paired(&tok[6]));
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT_EQ(atomic_read(&c.calls), 0);
	irq_bypass_unregister_producer(&p.p);

	/* A fast producer: published, one sync per unpair, none otherwise. */
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(tfast(&p), 0);
	irq_bypass_unregister_consumer(&c.c);
	EXPECT_EQ(atomic_read(&tsync_calls), syncs + 1);
	irq_bypass_unregister_producer(&p.p);
	EXPECT_EQ(atomic_read(&tsync_calls), syncs + 1);
	EXPECT_EQ(atomic_read(&c.calls), 1);
	EXPECT_EQ(atomic_read(&c.bad_calls), 0);
	EXPECT(!token_known(&tok[6]));
}

/*
 * Two consumers on one token (two VMs' irqfds on one eventfd): the second
 * gets -EBUSY as from the stock manager, and the fast path stays off until
 * it unregisters, so the eventfd's first waiter gets the interrupts.
 */
static void test_shared_token(void)
{
	struct tcons c1, c2;
	struct tprod p;
	int refs = irqbypass_refcnt();

	tprod_init(&p, &tok[5], 31);
	tcons_init(&c1, &tok[5]);
	tcons_init(&c2, &tok[5]);
	p.log = false;
	c1.log = false;
	c2.log = false;

	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(irq_bypass_register_consumer(&c1.c), 0);
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c1.c, tc_handler), 0);
	EXPECT_EQ(tfast(&p), 0);

	EXPECT_EQ(irq_bypass_register_consumer(&c2.c), -EBUSY);
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c2.c, tc_handler), -ENOENT);
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT(token_paired(&tok[5]) && c1.paired && !c2.paired);
	/* Refused twice, still one to forget. */
	EXPECT_EQ(irq_bypass_register_consumer(&c2.c), -EBUSY);
	irq_bypass_unregister_consumer(&c2.c);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(atomic_read(&c1.calls), 2);

	/* The first one leaves while the second waits: still no fast path. */
	EXPECT_EQ(irq_bypass_register_consumer(&c2.c), -EBUSY);
	irq_bypass_unregister_consumer(&c1.c);
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT_EQ(irq_bypass_register_consumer(&c1.c), 0);
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c1.c, tc_handler), 0);
	EXPECT_EQ(tfast(&p), -ENODEV);
	irq_bypass_unregister_consumer(&c2.c);
	EXPECT_EQ(tfast(&p), 0);

	/* A refused consumer that registers once the slot is free pairs. */
	EXPECT_EQ(irq_bypass_register_consumer(&c2.c), -EBUSY);
	irq_bypass_unregister_consumer(&c1.c);
	EXPECT_EQ(irq_bypass_register_consumer(&c2.c), 0);
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c2.c, tc_handler), 0);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT(c2.paired);
	irq_bypass_unregister_consumer(&c2.c);
	irq_bypass_unregister_producer(&p.p);

	EXPECT_EQ(atomic_read(&c1.calls), 3);
	EXPECT_EQ(atomic_read(&c2.calls), 1);
	EXPECT_EQ(atomic_read(&c1.bad_calls) + atomic_read(&c2.bad_calls), 0);
	EXPECT(!token_known(&tok[5]));
	/*
	 * Before hash_stat(): its file holds a module reference until the
	 * deferred fput() at the end of the init syscall.
	 */
	EXPECT_EQ(irqbypass_refcnt(), refs);
	EXPECT_EQ(hash_stat(false), 0);
}

static void test_debugfs(void)
{
	static const char tokens_header[] =
		"token producer consumer paired irq handler hits misses fast refused\n";
	static const char path[] = "/sys/kernel/debug/irqbypass/tokens";
	struct tprod p;
	struct tcons c;
	char *buf;
	ssize_t n;

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf) {
		cur_ok = false;
		return;
	}
	tprod_init(&p, &tok[3], 4242);
	tcons_init(&c, &tok[3]);
	p.log = false;
	c.log = false;
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c.c, tc_handler), 0);
	EXPECT_EQ(tfast(&p), 0);

	n = read_small_file(path, buf, PAGE_SIZE);
	if (n == -ENOENT) {
		cur_skip = "debugfs not mounted";
	} else {
		EXPECT(n > 0);
		if (n > 0) {
			EXPECT(strstr(buf, tokens_header));
			EXPECT(strstr(buf, " 1 1 1 4242 1 1 0 1 0\n"));
			if (!cur_ok)
				pr_info("# debugfs: %s", buf);
		}
	}
	irq_bypass_unregister_consumer(&c.c);
	irq_bypass_unregister_producer(&p.p);
	kfree(buf);
}

/* Handlers that count per index, to tell lone consumers' handlers apart. */
#define NR_DISTINCT 10
static atomic_t distinct_calls[NR_DISTINCT];

#define DISTINCT_HANDLER(i)						\
static int distinct_handler_##i(struct irq_bypass_consumer *c,		\
				struct irq_bypass_producer *p)		\
{									\
	atomic_inc(&distinct_calls[i]);					\
	return tc_handler(c, p);					\
}

DISTINCT_HANDLER(0)
DISTINCT_HANDLER(1)
DISTINCT_HANDLER(2)
DISTINCT_HANDLER(3)
DISTINCT_HANDLER(4)
DISTINCT_HANDLER(5)
DISTINCT_HANDLER(6)
DISTINCT_HANDLER(7)
DISTINCT_HANDLER(8)
DISTINCT_HANDLER(9)

static const irq_bypass_fast_handler_t distinct_handlers[NR_DISTINCT] = {
	distinct_handler_0, distinct_handler_1, distinct_handler_2,
	distinct_handler_3, distinct_handler_4, distinct_handler_5,
	distinct_handler_6, distinct_handler_7, distinct_handler_8,
	distinct_handler_9,
};

/*
 * A consumer alone on its token takes no entry (a link in the lone table),
 * and behaves as one with an entry: a producer, a second consumer, a new
 * handler, copies and garbage, re-registration, more distinct handlers
 * than the manager keeps for lone consumers, and many of them.
 */
static void test_lone_consumers(void)
{
	const int n = 1024;
	struct tprod p, dp[NR_DISTINCT];
	struct tcons c, c2, copy, *many = NULL;
	void **tokens = NULL;
	int i, lone0 = table_stat(HS_LONE), ent0 = hash_stat(false);

	tprod_init(&p, &tok[6], 60);
	tcons_init(&c, &tok[6]);
	tcons_init(&c2, &tok[6]);
	p.log = false;
	c.log = false;
	c2.log = false;
	c.expect_prod = &p;

	/* Alone: a link, no entry; known, not paired; no double registration. */
	EXPECT_EQ(irq_bypass_register_fast_consumer(&c.c, tc_handler), 0);
	EXPECT_EQ(table_stat(HS_LONE), lone0 + 1);
	EXPECT_EQ(hash_stat(false), ent0);
	EXPECT(token_known(&tok[6]) && !token_paired(&tok[6]));
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), -EBUSY);
	c.c.token = &tok[7];
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), -EBUSY);
	EXPECT(!token_known(&tok[7]));
	c.c.token = &tok[6];

	/* A copy and garbage are not it; unregistering them changes nothing. */
	copy = c;
	irq_bypass_unregister_consumer(&copy.c);
	memset(&copy.c.node, 0x5a, sizeof(copy.c.node));
	irq_bypass_unregister_consumer(&copy.c);
	EXPECT_EQ(irq_bypass_set_consumer_handler(&copy.c, NULL), -ENOENT);
	EXPECT_EQ(table_stat(HS_LONE), lone0 + 1);

	/* A producer adopts it with its handler: paired, delivered. */
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(table_stat(HS_LONE), lone0);
	EXPECT_EQ(hash_stat(false), ent0 + 1);
	EXPECT(token_paired(&tok[6]) && c.paired);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(atomic_read(&c.calls), 1);
	irq_bypass_unregister_producer(&p.p);
	irq_bypass_unregister_consumer(&c.c);
	EXPECT(!token_known(&tok[6]));

	/* A second consumer: refused, and the fast path stays off till it goes. */
	EXPECT_EQ(irq_bypass_register_fast_consumer(&c.c, tc_handler), 0);
	EXPECT_EQ(irq_bypass_register_fast_consumer(&c2.c, tc_handler), -EBUSY);
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT(c.paired && !c2.paired);
	EXPECT_EQ(tfast(&p), -ENODEV);
	irq_bypass_unregister_consumer(&c2.c);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(atomic_read(&c.calls), 2);
	irq_bypass_unregister_consumer(&c.c);
	irq_bypass_unregister_producer(&p.p);
	EXPECT(!token_known(&tok[6]));

	/* No handler while alone, one attached later, then the producer. */
	EXPECT_EQ(irq_bypass_register_consumer(&c.c), 0);
	EXPECT_EQ(irq_bypass_set_consumer_handler(&c.c, tc_handler), 0);
	EXPECT_EQ(table_stat(HS_LONE), lone0 + 1);
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(atomic_read(&c.calls), 3);
	irq_bypass_unregister_producer(&p.p);
	irq_bypass_unregister_consumer(&c.c);
	EXPECT_EQ(table_stat(HS_LONE), lone0);
	EXPECT_EQ(hash_stat(false), ent0);

	/*
	 * More distinct handlers than slots: the rest get entries.  Each
	 * producer then reaches its own consumer's handler.
	 */
	many = kvcalloc(n, sizeof(*many), GFP_KERNEL);
	tokens = kcalloc(n, sizeof(*tokens), GFP_KERNEL);
	if (!many || !tokens) {
		cur_ok = false;
		goto out;
	}
	for (i = 0; i < NR_DISTINCT; i++) {
		tcons_init(&many[i], &distinct_calls[i]);
		many[i].log = false;
		tprod_init(&dp[i], &distinct_calls[i], 100 + i);
		dp[i].log = false;
		EXPECT_EQ(irq_bypass_register_fast_consumer(&many[i].c,
							    distinct_handlers[i]), 0);
	}
	EXPECT(hash_stat(false) > ent0);
	EXPECT_EQ(hash_stat(false) - ent0 + table_stat(HS_LONE) - lone0,
		  NR_DISTINCT);
	for (i = 0; i < NR_DISTINCT; i++) {
		atomic_set(&distinct_calls[i], 0);
		EXPECT_EQ(tp_register(&dp[i]), 0);
		EXPECT_EQ(tfast(&dp[i]), 0);
	}
	for (i = 0; i < NR_DISTINCT; i++) {
		EXPECT_EQ(atomic_read(&distinct_calls[i]), 1);
		EXPECT_EQ(atomic_read(&many[i].calls), 1);
		irq_bypass_unregister_consumer(&many[i].c);
		irq_bypass_unregister_producer(&dp[i].p);
	}
	EXPECT_EQ(hash_stat(false), ent0);
	EXPECT_EQ(table_stat(HS_LONE), lone0);

	/* Many at once: the lone table grows, and shrinks back when they go. */
	for (i = 0; i < n; i++) {
		tokens[i] = kmalloc(48, GFP_KERNEL);
		if (!tokens[i]) {
			cur_ok = false;
			goto out;
		}
		tcons_init(&many[i], tokens[i]);
		many[i].log = false;
		EXPECT_EQ(irq_bypass_register_fast_consumer(&many[i].c,
							    tc_handler), 0);
	}
	EXPECT_EQ(table_stat(HS_LONE), lone0 + n);
	EXPECT(table_stat(HS_LONE_BUCKETS) >= n);
	EXPECT_EQ(hash_stat(false), ent0);
	for (i = 1; i < n; i += 2)
		irq_bypass_unregister_consumer(&many[i].c);
	for (i = 0; i < n; i += 2) {
		EXPECT(token_known(tokens[i]));
		EXPECT(!token_known(tokens[i + 1]));
		irq_bypass_unregister_consumer(&many[i].c);
	}
	EXPECT_EQ(table_stat(HS_LONE), lone0);
	if (!lone0)
		EXPECT_EQ(table_stat(HS_LONE_BUCKETS), 64);
out:
	if (tokens)
		for (i = 0; i < n; i++)
			kfree(tokens[i]);
	kfree(tokens);
	kvfree(many);
	EXPECT_EQ(atomic_read(&c.bad_calls), 0);
}

/* Many tokens at once (sparse kmalloc addresses, both orders). */
static void test_many_tokens(void)
{
	const int n = 2048;
	struct tprod *p;
	struct tcons *c;
	void **tokens;
	int i, paired = 0;

	p = kvcalloc(n, sizeof(*p), GFP_KERNEL);
	c = kvcalloc(n, sizeof(*c), GFP_KERNEL);
	tokens = kcalloc(n, sizeof(*tokens), GFP_KERNEL);
	if (!p || !c || !tokens) {
		cur_ok = false;
		goto out;
	}
	for (i = 0; i < n; i++) {
		tokens[i] = kmalloc(48, GFP_KERNEL);
		if (!tokens[i]) {
			cur_ok = false;
			goto out;
		}
		tprod_init(&p[i], tokens[i], i);
		tcons_init(&c[i], tokens[i]);
		p[i].log = false;
		c[i].log = false;
	}
	for (i = 0; i < n; i++) {
		if (i & 1)
			EXPECT_EQ(tp_register(&p[i]), 0);
		else
			EXPECT_EQ(irq_bypass_register_consumer(&c[i].c), 0);
	}
	for (i = n - 1; i >= 0; i--) {
		if (i & 1)
			EXPECT_EQ(irq_bypass_register_consumer(&c[i].c), 0);
		else
			EXPECT_EQ(tp_register(&p[i]), 0);
	}
	for (i = 0; i < n; i++)
		paired += token_paired(tokens[i]) && p[i].paired && c[i].paired;
	EXPECT_EQ(paired, n);
	/* The table grew with the tokens (not a fixed 64 buckets)... */
	EXPECT(hash_stat(true) >= n);
	for (i = 0; i < n; i++) {
		irq_bypass_unregister_producer(&p[i].p);
		irq_bypass_unregister_consumer(&c[i].c);
		EXPECT(!token_known(tokens[i]));
	}
	/* ...and shrinks back when they go (other tests left none). */
	EXPECT_EQ(hash_stat(true), 64);
	EXPECT_EQ(hash_stat(false), 0);
out:
	if (tokens)
		for (i = 0; i < n; i++)
			kfree(tokens[i]);
	kfree(tokens);
	kvfree(c);
	kvfree(p);
}

/* ---- concurrency -------------------------------------------------------- */

#define CT_PAIRS	4
#define CT_PERIOD_NS	(100 * NSEC_PER_USEC)

struct ct_pair {
	struct tprod p;
	struct tcons c;
	bool p_reg, c_reg;	/* owned by the thread of that side */
	atomic_long_t raised, fast, fallback;
};

static struct ct_pair ct[CT_PAIRS];
static struct hrtimer ct_timer;
static atomic_long_t ct_ops;

/*
 * Fake producer: every period, raise one interrupt on every pair through the
 * fast path, falling back when it is refused.  Context: hard irq
 * (HRTIMER_MODE_REL_HARD, also on PREEMPT_RT).
 */
static enum hrtimer_restart ct_timer_fn(struct hrtimer *t)
{
	int i;

	for (i = 0; i < CT_PAIRS; i++) {
		atomic_long_inc(&ct[i].raised);
		if (!tfast(&ct[i].p))
			atomic_long_inc(&ct[i].fast);
		else
			atomic_long_inc(&ct[i].fallback);
	}
	hrtimer_forward_now(t, ns_to_ktime(CT_PERIOD_NS));
	return HRTIMER_RESTART;
}

/* Producer side: register/unregister random pairs.  Context: kthread. */
static int ct_producer_thread(void *unused)
{
	while (!kthread_should_stop()) {
		struct ct_pair *pr = &ct[get_random_u32() % CT_PAIRS];

		if (pr->p_reg) {
			irq_bypass_unregister_producer(&pr->p.p);
			pr->p_reg = false;
		} else {
			if (tp_register(&pr->p))
				atomic_inc(&pr->c.bad_calls);
			else
				pr->p_reg = true;
		}
		atomic_long_inc(&ct_ops);
		usleep_range(20, 200);
	}
	return 0;
}

/*
 * Consumer side: register/unregister random pairs, attach or detach the
 * handler.  Context: kthread.
 */
static int ct_consumer_thread(void *unused)
{
	while (!kthread_should_stop()) {
		struct ct_pair *pr = &ct[get_random_u32() % CT_PAIRS];
		u32 r = get_random_u32() % 8;

		if (pr->c_reg && r == 0) {
			irq_bypass_set_consumer_handler(&pr->c.c, NULL);
		} else if (pr->c_reg && r == 1) {
			irq_bypass_set_consumer_handler(&pr->c.c, tc_handler);
		} else if (pr->c_reg) {
			irq_bypass_unregister_consumer(&pr->c.c);
			pr->c_reg = false;
		} else {
			if (irq_bypass_register_consumer(&pr->c.c)) {
				atomic_inc(&pr->c.bad_calls);
			} else {
				pr->c_reg = true;
				if (r & 4)
					irq_bypass_set_consumer_handler(&pr->c.c,
									tc_handler);
			}
		}
		atomic_long_inc(&ct_ops);
		usleep_range(20, 200);
	}
	return 0;
}

static void test_concurrency(void)
{
	struct task_struct *tp, *tc;
	bool warned = test_taint(TAINT_WARN);
	long total_fast = 0, total_calls = 0, total_hardirq = 0;
	int i;

	memset(ct, 0, sizeof(ct));
	atomic_long_set(&ct_ops, 0);
	for (i = 0; i < CT_PAIRS; i++) {
		/* Distinct from the other tests' tokens. */
		tprod_init(&ct[i].p, &ct[i].raised, 100 + i);
		tcons_init(&ct[i].c, &ct[i].raised);
		ct[i].p.log = false;
		ct[i].c.log = false;
		ct[i].c.expect_prod = &ct[i].p;
		ct[i].c.handler_ret = 5;	/* refuse every 5th interrupt */
	}

	hrtimer_init(&ct_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	ct_timer.function = ct_timer_fn;
	hrtimer_start(&ct_timer, ns_to_ktime(CT_PERIOD_NS), HRTIMER_MODE_REL_HARD);

	tp = kthread_run(ct_producer_thread, NULL, "irqbp_test_prod");
	tc = kthread_run(ct_consumer_thread, NULL, "irqbp_test_cons");
	if (IS_ERR(tp) || IS_ERR(tc))
		cur_ok = false;
	msleep(concurrency_ms);
	if (!IS_ERR(tp))
		kthread_stop(tp);
	if (!IS_ERR(tc))
		kthread_stop(tc);
	hrtimer_cancel(&ct_timer);

	for (i = 0; i < CT_PAIRS; i++) {
		struct ct_pair *pr = &ct[i];
		long raised = atomic_long_read(&pr->raised);
		long fast = atomic_long_read(&pr->fast);
		long fallback = atomic_long_read(&pr->fallback);
		long calls = atomic_read(&pr->c.calls);
		long refused = calls / pr->c.handler_ret;

		if (pr->p_reg)
			irq_bypass_unregister_producer(&pr->p.p);
		if (pr->c_reg)
			irq_bypass_unregister_consumer(&pr->c.c);
		EXPECT(!token_known(pr->p.p.token));

		/* Every interrupt delivered exactly once: fast or fallback. */
		EXPECT_EQ(fast + fallback, raised);
		/* Each accepted handler call is one fast delivery. */
		EXPECT_EQ(calls - refused, fast);
		EXPECT_EQ(atomic_read(&pr->c.bad_calls), 0);
		pr_info("# pair %d: raised %ld fast %ld fallback %ld handler calls %ld\n",
			i, raised, fast, fallback, calls);
		total_fast += fast;
		total_calls += calls;
		total_hardirq += atomic_read(&pr->c.hardirq_calls);
	}
	pr_info("# %ld register/unregister/handler operations\n",
		atomic_long_read(&ct_ops));
	EXPECT(total_fast > 0);
	EXPECT_EQ(total_hardirq, total_calls);
	EXPECT(warned || !test_taint(TAINT_WARN));
}

/* ---- runner ------------------------------------------------------------- */

static void run(const char *name, void (*fn)(void))
{
	cur_ok = true;
	cur_skip = NULL;
	evlog[0] = '\0';
	fn();
	tap_n++;
	if (cur_skip)
		pr_info("ok %d - %s # SKIP %s\n", tap_n, name, cur_skip);
	else if (cur_ok)
		pr_info("ok %d - %s\n", tap_n, name);
	else
		pr_info("not ok %d - %s\n", tap_n, name);
	if (!cur_ok)
		tap_failed++;
}

#define RUN(t) run(#t, t)
#define NR_TESTS 19

static int __init test_irqbypass_init(void)
{
	pr_info("TAP version 13\n");
	pr_info("# test_irqbypass: kvm-irqbypass kit manager\n");
	pr_info("1..%d\n", NR_TESTS);
	RUN(test_invalid_args);
	RUN(test_pair_producer_first);
	RUN(test_pair_consumer_first);
	RUN(test_ebusy);
	RUN(test_consumer_add_fails);
	RUN(test_producer_add_fails);
	RUN(test_unregister_unknown);
	RUN(test_node_clobbered);
	RUN(test_module_refcount);
	RUN(test_fastpath);
	RUN(test_fast_consumer);
	RUN(test_fast_only);
	RUN(test_fast_only_consumer);
	RUN(test_opt_in);
	RUN(test_shared_token);
	RUN(test_debugfs);
	RUN(test_many_tokens);
	RUN(test_lone_consumers);
	RUN(test_concurrency);
	WARN_ON(tap_n != NR_TESTS);
	pr_info("# test_irqbypass: %d tests, %d failed\n", tap_n, tap_failed);
	return tap_failed ? -EINVAL : 0;
}
module_init(test_irqbypass_init);

static void __exit test_irqbypass_exit(void)
{
}
module_exit(test_irqbypass_exit);
