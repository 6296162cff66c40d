// SPDX-License-Identifier: GPL-2.0-only
/*
 * In-kernel tests of the kit's irqbypass manager (KUnit is off in Debian
 * kernels).  Loading the module runs every test and prints TAP to the kernel
 * log; module init fails with -EINVAL if any test failed, so the testbed
 * sees the failure as an insmod error.  The tests use only what users use:
 * the exported functions and debugfs irqbypass/tokens.  All run in process
 * context (module init) except the fake producer of the concurrency test,
 * an hrtimer in hard-irq mode.
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
#include <linux/kvm_irqbypass_compat.h>
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
	void *key;
	int add_ret;
	bool log;
	bool paired;
};

struct tcons {
	struct irq_bypass_consumer c;
	void *key;
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
 * The tests' producers have no irq handler: they call irq_bypass_fastpath()
 * with interrupts disabled, as the manager requires of such producers
 * (it then waits for them with a grace period).
 */
static int tfast(struct tprod *tp)
{
	unsigned long flags;
	int ret;

	local_irq_save(flags);
	ret = irq_bypass_fastpath(&tp->p);
	local_irq_restore(flags);
	return ret;
}

/* Registration with the object's key, as each line's API takes it. */
static int tp_reg_flags(struct tprod *tp, unsigned int flags)
{
	return irqbp_compat_reg_fast_prod(&tp->p, tp->key, flags);
}

static int tp_register(struct tprod *tp)
{
	return tp_reg_flags(tp, 0);
}

static int tp_reg_plain(struct tprod *tp)
{
	return irqbp_compat_reg_prod(irq_bypass_register_producer, &tp->p, tp->key);
}

static int tc_reg(struct tcons *tc)
{
	return irqbp_compat_reg_cons(irq_bypass_register_consumer, &tc->c, tc->key);
}

static int tc_reg_fast(struct tcons *tc, irq_bypass_fast_handler_t handler)
{
	return irqbp_compat_reg_fast_cons(&tc->c, tc->key, handler);
}

static void tprod_init(struct tprod *tp, void *token, int irq)
{
	memset(tp, 0, sizeof(*tp));
	tp->key = token;
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
	tc->key = token;
	tc->c.add_producer = tc_add;
	tc->c.del_producer = tc_del;
	tc->c.stop = tc_stop;
	tc->c.start = tc_start;
	tc->log = true;
}

static const char tokens_path[] = "/sys/kernel/debug/irqbypass/tokens";
static const char tokens_header[] =
	"token producer consumer paired irq handler fast refused\n";
#define TOKENS_BUF	(64 * 1024)

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

/*
 * The fields of @token's line in irqbypass/tokens after the token itself
 * into @line, or "" if the token is not listed.  %p prints the same hashed
 * value here as in the manager.  Returns false if the file cannot be read.
 */
static bool token_line(void *token, char *line, size_t size)
{
	char key[32], *buf, *l, *end;
	bool ok = false;

	line[0] = '\0';
	buf = kvmalloc(TOKENS_BUF, GFP_KERNEL);
	if (!buf)
		return false;
	if (read_small_file(tokens_path, buf, TOKENS_BUF) <= 0)
		goto out;
	ok = !strncmp(buf, tokens_header, strlen(tokens_header));
	snprintf(key, sizeof(key), "%p ", token);
	for (l = buf; l && *l; l = end ? end + 1 : NULL) {
		end = strchr(l, '\n');
		if (strncmp(l, key, strlen(key)))
			continue;
		if (end)
			*end = '\0';
		strscpy(line, l + strlen(key), size);
		break;
	}
out:
	kvfree(buf);
	return ok;
}

/* Whether the manager lists @token, and as paired. */
static bool token_known(void *token)
{
	char line[64];

	return token_line(token, line, sizeof(line)) && line[0];
}

static bool token_paired(void *token)
{
	unsigned int prod, cons, paired;
	char line[64];

	return token_line(token, line, sizeof(line)) &&
	       sscanf(line, "%u %u %u", &prod, &cons, &paired) == 3 && paired;
}

/* Tokens: only their addresses matter. */
static int tok[8];

/* ---- tests -------------------------------------------------------------- */

static void test_invalid_args(void)
{
	struct tprod p;
	struct tcons c;

	tprod_init(&p, NULL, 1);
	EXPECT_EQ(tp_register(&p), -EINVAL);
	EXPECT_EQ(tp_reg_plain(&p), -EINVAL);
	tprod_init(&p, &tok[0], 1);
	EXPECT_EQ(tp_reg_flags(&p, 2), -EINVAL);
	tcons_init(&c, NULL);
	EXPECT_EQ(tc_reg(&c), -EINVAL);
	tcons_init(&c, &tok[0]);
	c.c.add_producer = NULL;
	EXPECT_EQ(tc_reg(&c), -EINVAL);
	tcons_init(&c, &tok[0]);
	c.c.del_producer = NULL;
	EXPECT_EQ(tc_reg(&c), -EINVAL);
	EXPECT(!token_known(&tok[0]));
	EXPECT(evlog_is(""));
}

static void test_pair_producer_first(void)
{
	struct tprod p;
	struct tcons c;

	tprod_init(&p, &tok[0], 0);
	tcons_init(&c, &tok[0]);

	EXPECT_EQ(tp_register(&p), 0);
	EXPECT(evlog_is(""));
	EXPECT(token_known(&tok[0]) && !token_paired(&tok[0]));
	EXPECT_EQ(tc_reg(&c), 0);
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

	tprod_init(&p, &tok[1], 0);
	tcons_init(&c, &tok[1]);

	EXPECT_EQ(tc_reg(&c), 0);
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

	tprod_init(&p1, &tok[2], 0);
	tprod_init(&p2, &tok[2], 0);
	tcons_init(&c1, &tok[2]);
	tcons_init(&c2, &tok[2]);

	EXPECT_EQ(tp_register(&p1), 0);
	EXPECT_EQ(tc_reg(&c1), 0);
	EXPECT(evlog_is(CONNECT_ORDER));

	EXPECT_EQ(tp_register(&p2), -EBUSY);
	EXPECT_EQ(tp_reg_plain(&p2), -EBUSY);
	if (IRQBP_REREGISTER_EBUSY) {
		EXPECT_EQ(tp_register(&p1), -EBUSY);
		EXPECT_EQ(tc_reg(&c1), -EBUSY);
		/* The same objects under another token are the same objects. */
		p1.key = &tok[3];
		c1.key = &tok[3];
		EXPECT_EQ(tp_register(&p1), -EBUSY);
		EXPECT_EQ(tc_reg(&c1), -EBUSY);
		EXPECT(!token_known(&tok[3]));
		p1.key = &tok[2];
		c1.key = &tok[2];
		irqbp_compat_set_key(&p1.p, p1.key);
		irqbp_compat_set_key(&c1.c, c1.key);
	}
	EXPECT(evlog_is(""));
	EXPECT(token_paired(&tok[2]) && p1.paired && c1.paired);
	EXPECT(!p2.paired);

	/* The rejected producer was never registered: a no-op. */
	irq_bypass_unregister_producer(&p2.p);
	EXPECT(evlog_is(""));
	EXPECT(token_paired(&tok[2]));
	/* A second consumer is refused (test_shared_token), then forgotten. */
	EXPECT_EQ(tc_reg(&c2), -EBUSY);
	EXPECT(!c2.paired);
	irq_bypass_unregister_consumer(&c2.c);
	EXPECT(evlog_is(""));

	irq_bypass_unregister_producer(&p1.p);
	irq_bypass_unregister_consumer(&c1.c);
	EXPECT(evlog_is(DISCONNECT_ORDER));
	EXPECT(!token_known(&tok[2]));
}

static void test_consumer_add_fails(void)
{
	struct tprod p;
	struct tcons c;

	tprod_init(&p, &tok[0], 0);
	tcons_init(&c, &tok[0]);
	c.add_ret = -EIO;

	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(tc_reg(&c), -EIO);
	/* The producer's add is undone, both quiesced and restarted. */
	EXPECT(evlog_is("Pstop Cstop Padd Cadd Pdel Cstart Pstart"));
	EXPECT(!p.paired && !c.paired);
	EXPECT(token_known(&tok[0]) && !token_paired(&tok[0]));

	/* The failed consumer is not registered. */
	irq_bypass_unregister_consumer(&c.c);
	EXPECT(evlog_is(""));

	/* A working consumer pairs with the same producer afterwards. */
	c.add_ret = 0;
	EXPECT_EQ(tc_reg(&c), 0);
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

	tprod_init(&p, &tok[1], 0);
	tcons_init(&c, &tok[1]);
	p.add_ret = -ENOSPC;

	EXPECT_EQ(tc_reg(&c), 0);
	EXPECT_EQ(tp_register(&p), -ENOSPC);
	/* The consumer's add is never called when the producer's fails. */
	EXPECT(evlog_is("Pstop Cstop Padd Cstart Pstart"));
	EXPECT(!p.paired && !c.paired);
	EXPECT(token_known(&tok[1]) && !token_paired(&tok[1]));
	EXPECT_EQ(tfast(&p), -ENODEV);

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
	tprod_init(&other_p, NULL, 0);
	tcons_init(&other_c, NULL);
	irq_bypass_unregister_producer(&other_p.p);
	irq_bypass_unregister_consumer(&other_c.c);

	/* Never registered, token unknown to the manager. */
	tprod_init(&other_p, &tok[4], 0);
	tcons_init(&other_c, &tok[4]);
	irq_bypass_unregister_producer(&other_p.p);
	irq_bypass_unregister_consumer(&other_c.c);
	EXPECT(!token_known(&tok[4]));

	/*
	 * Never registered, with the token of a registered pair, zeroed, as a
	 * copy of the registered objects and with garbage in the fields the
	 * manager owns.
	 */
	tprod_init(&p, &tok[4], 0);
	tcons_init(&c, &tok[4]);
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(tc_reg_fast(&c, tc_handler), 0);
	EXPECT(evlog_is(CONNECT_ORDER));

	irq_bypass_unregister_producer(&other_p.p);
	irq_bypass_unregister_consumer(&other_c.c);
	other_p = p;
	other_c = c;
	irq_bypass_unregister_producer(&other_p.p);
	irq_bypass_unregister_consumer(&other_c.c);
	memset(&irqbp_prod_private(&other_p.p), 0x5a,
	       sizeof(irqbp_prod_private(&other_p.p)));
	memset(&irqbp_cons_private(&other_c.c), 0x5a,
	       sizeof(irqbp_cons_private(&other_c.c)));
	irq_bypass_unregister_producer(&other_p.p);
	irq_bypass_unregister_consumer(&other_c.c);
	EXPECT(evlog_is(""));
	EXPECT(token_paired(&tok[4]) && p.paired && c.paired);
	EXPECT_EQ(tfast(&p), 0);

	/* Unregistering twice is harmless. */
	irq_bypass_unregister_consumer(&c.c);
	irq_bypass_unregister_consumer(&c.c);
	irq_bypass_unregister_producer(&p.p);
	irq_bypass_unregister_producer(&p.p);
	EXPECT(evlog_is(DISCONNECT_ORDER));
	EXPECT(!token_known(&tok[4]));
	EXPECT_EQ(atomic_read(&c.bad_calls), 0);
}

/*
 * The fast path: the handler of a consumer registered with one, called for
 * the fast producer it is connected to and for nothing else.
 */
static void test_fastpath(void)
{
	struct tprod p, stranger;
	struct tcons c;

	tprod_init(&p, &tok[7], 0);
	tprod_init(&stranger, &tok[7], 0);
	tcons_init(&c, &tok[7]);
	c.expect_prod = &p;
	p.log = false;
	c.log = false;

	/* Never registered. */
	EXPECT_EQ(tfast(&p), -ENODEV);

	/* Consumer first: published on pairing. */
	EXPECT_EQ(tc_reg_fast(&c, tc_handler), 0);
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(atomic_read(&c.calls), 2);
	EXPECT_EQ(atomic_read(&c.hardirq_calls), 0);
	/* An unregistered producer with the same token gets nothing. */
	EXPECT_EQ(tfast(&stranger), -ENODEV);
	EXPECT_EQ(atomic_read(&c.calls), 2);

	/* The handler's refusal reaches the producer. */
	c.handler_ret = -EWOULDBLOCK;
	EXPECT_EQ(tfast(&p), -EWOULDBLOCK);
	c.handler_ret = 0;
	EXPECT_EQ(atomic_read(&c.calls), 3);

	/* Consumer gone: never called; back without a handler: not either. */
	irq_bypass_unregister_consumer(&c.c);
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT_EQ(tc_reg(&c), 0);
	EXPECT(token_paired(&tok[7]));
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT_EQ(atomic_read(&c.calls), 3);
	irq_bypass_unregister_consumer(&c.c);

	/* Producer first: published at once; producer gone: not called. */
	EXPECT_EQ(tc_reg_fast(&c, tc_handler), 0);
	EXPECT_EQ(tfast(&p), 0);
	irq_bypass_unregister_producer(&p.p);
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT_EQ(atomic_read(&c.calls), 4);

	/* A failing add callback registers nothing, handler included. */
	EXPECT_EQ(tp_register(&p), 0);
	irq_bypass_unregister_consumer(&c.c);
	c.add_ret = -EIO;
	EXPECT_EQ(tc_reg_fast(&c, tc_handler), -EIO);
	c.add_ret = 0;
	EXPECT_EQ(tfast(&p), -ENODEV);
	irq_bypass_unregister_producer(&p.p);
	EXPECT_EQ(atomic_read(&c.calls), 4);
	EXPECT_EQ(atomic_read(&c.bad_calls), 0);
	EXPECT(!token_known(&tok[7]));
}

/*
 * A fast-only producer (vfio's INTx) pairs for the fast path alone: no
 * add/del/stop/start callback of either side runs and the handler
 * delivers.  A consumer without a handler pairs with it silently and the
 * fast path misses.
 */
static void test_fast_only(void)
{
	struct tcons c;
	struct tprod p;

	tprod_init(&p, &tok[6], 0);
	tcons_init(&c, &tok[6]);
	c.expect_prod = &p;

	EXPECT_EQ(tp_reg_flags(&p, IRQ_BYPASS_FAST_ONLY), 0);
	EXPECT_EQ(tc_reg_fast(&c, tc_handler), 0);
	EXPECT(evlog_is(""));
	EXPECT(token_paired(&tok[6]));
	/* tc_handler counts a bad call unless the consumer was added. */
	WRITE_ONCE(c.paired, true);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(atomic_read(&c.calls), 1);
	irq_bypass_unregister_consumer(&c.c);
	EXPECT(evlog_is(""));
	EXPECT_EQ(tfast(&p), -ENODEV);

	/* Consumer without a handler: paired, never published. */
	EXPECT_EQ(tc_reg(&c), 0);
	EXPECT(evlog_is(""));
	EXPECT_EQ(tfast(&p), -ENODEV);
	irq_bypass_unregister_consumer(&c.c);
	irq_bypass_unregister_producer(&p.p);
	EXPECT(evlog_is(""));
	EXPECT(!token_known(&tok[6]));
	EXPECT_EQ(atomic_read(&c.bad_calls), 0);
}

/*
 * A fast-only consumer (KVM's irqfd without posted interrupts) has no
 * callbacks: pairing calls the producer's alone and the handler delivers.
 * Only a fast consumer may be one, and it must lack both add_producer and
 * del_producer.
 */
static void test_fast_only_consumer(void)
{
	struct tcons c;
	struct tprod p;

	tprod_init(&p, &tok[6], 0);
	tcons_init(&c, &tok[6]);
	c.c.add_producer = NULL;
	c.c.del_producer = NULL;
	c.c.stop = NULL;
	c.c.start = NULL;
	c.expect_prod = &p;

	EXPECT_EQ(tc_reg(&c), -EINVAL);
	c.c.del_producer = tc_del;
	EXPECT_EQ(tc_reg_fast(&c, tc_handler), -EINVAL);
	c.c.del_producer = NULL;
	c.c.add_producer = tc_add;
	EXPECT_EQ(tc_reg_fast(&c, tc_handler), -EINVAL);
	c.c.add_producer = NULL;
	EXPECT(!token_known(&tok[6]));

	EXPECT_EQ(tc_reg_fast(&c, tc_handler), 0);
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT(evlog_is("Pstop Padd Pstart"));
	EXPECT(token_paired(&tok[6]));
	WRITE_ONCE(c.paired, true);
	EXPECT_EQ(tfast(&p), 0);
	irq_bypass_unregister_consumer(&c.c);
	EXPECT(evlog_is("Pstop Pdel Pstart"));
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT_EQ(atomic_read(&c.calls), 1);
	irq_bypass_unregister_producer(&p.p);
	EXPECT(!token_known(&tok[6]));
	EXPECT_EQ(atomic_read(&c.bad_calls), 0);
}

/*
 * Only fast producers are published: a plain producer (vhost-vdpa) paired
 * with a fast consumer never reaches its handler.
 */
static void test_opt_in(void)
{
	struct tprod p;
	struct tcons c;

	tprod_init(&p, &tok[6], 0);
	tcons_init(&c, &tok[6]);
	p.log = false;
	c.log = false;

	EXPECT_EQ(tp_reg_plain(&p), 0);
	EXPECT_EQ(tc_reg_fast(&c, tc_handler), 0);
	EXPECT(token_paired(&tok[6]));
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT_EQ(atomic_read(&c.calls), 0);
	irq_bypass_unregister_producer(&p.p);

	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(tfast(&p), 0);
	irq_bypass_unregister_consumer(&c.c);
	irq_bypass_unregister_producer(&p.p);
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

	tprod_init(&p, &tok[5], 0);
	tcons_init(&c1, &tok[5]);
	tcons_init(&c2, &tok[5]);
	p.log = false;
	c1.log = false;
	c2.log = false;

	EXPECT_EQ(tp_register(&p), 0);
	EXPECT_EQ(tc_reg_fast(&c1, tc_handler), 0);
	EXPECT_EQ(tfast(&p), 0);

	EXPECT_EQ(tc_reg_fast(&c2, tc_handler), -EBUSY);
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT(token_paired(&tok[5]) && c1.paired && !c2.paired);
	/* Refused twice, still one to forget. */
	EXPECT_EQ(tc_reg_fast(&c2, tc_handler), -EBUSY);
	irq_bypass_unregister_consumer(&c2.c);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT_EQ(atomic_read(&c1.calls), 2);

	/* The first one leaves while the second waits: still no fast path. */
	EXPECT_EQ(tc_reg_fast(&c2, tc_handler), -EBUSY);
	irq_bypass_unregister_consumer(&c1.c);
	EXPECT_EQ(tfast(&p), -ENODEV);
	EXPECT_EQ(tc_reg_fast(&c1, tc_handler), 0);
	EXPECT_EQ(tfast(&p), -ENODEV);
	irq_bypass_unregister_consumer(&c2.c);
	EXPECT_EQ(tfast(&p), 0);

	/* A refused consumer that registers once the slot is free pairs. */
	EXPECT_EQ(tc_reg_fast(&c2, tc_handler), -EBUSY);
	irq_bypass_unregister_consumer(&c1.c);
	EXPECT_EQ(tc_reg_fast(&c2, tc_handler), 0);
	EXPECT_EQ(tfast(&p), 0);
	EXPECT(c2.paired);
	irq_bypass_unregister_consumer(&c2.c);
	irq_bypass_unregister_producer(&p.p);

	EXPECT_EQ(atomic_read(&c1.calls), 3);
	EXPECT_EQ(atomic_read(&c2.calls), 1);
	EXPECT_EQ(atomic_read(&c1.bad_calls) + atomic_read(&c2.bad_calls), 0);
	EXPECT(!token_known(&tok[5]));
}

static void test_debugfs(void)
{
	struct tprod p;
	struct tcons c;
	char line[64];

	tprod_init(&p, &tok[3], 4242);
	tcons_init(&c, &tok[3]);
	p.log = false;
	c.log = false;
	EXPECT_EQ(tp_register(&p), 0);
	EXPECT(token_line(&tok[3], line, sizeof(line)) &&
	       !strcmp(line, "1 0 0 4242 0 0 0"));
	EXPECT_EQ(tc_reg_fast(&c, tc_handler), 0);
	if (!token_line(&tok[3], line, sizeof(line))) {
		cur_skip = "debugfs not mounted";
	} else {
		EXPECT(!strcmp(line, "1 1 1 4242 1 1 0"));
		if (!cur_ok)
			pr_info("# debugfs: \"%s\"\n", line);
	}
	irq_bypass_unregister_consumer(&c.c);
	irq_bypass_unregister_producer(&p.p);
	EXPECT(!token_known(&tok[3]));
}

/* Many tokens at once (sparse kmalloc addresses, both orders). */
static void test_many_tokens(void)
{
	const int n = 2048;
	int i, paired = 0, lines = -1;
	struct tprod *p;
	struct tcons *c;
	void **tokens;
	char *buf;

	p = kvcalloc(n, sizeof(*p), GFP_KERNEL);
	c = kvcalloc(n, sizeof(*c), GFP_KERNEL);
	tokens = kcalloc(n, sizeof(*tokens), GFP_KERNEL);
	buf = kvmalloc(TOKENS_BUF * 2, GFP_KERNEL);
	if (!p || !c || !tokens || !buf) {
		cur_ok = false;
		goto out;
	}
	for (i = 0; i < n; i++) {
		tokens[i] = kmalloc(48, GFP_KERNEL);
		if (!tokens[i]) {
			cur_ok = false;
			goto out;
		}
		/* Irqs nobody has: unpairing waits for no handler. */
		tprod_init(&p[i], tokens[i], 100000 + i);
		tcons_init(&c[i], tokens[i]);
		p[i].log = false;
		c[i].log = false;
	}
	for (i = 0; i < n; i++) {
		if (i & 1)
			EXPECT_EQ(tp_register(&p[i]), 0);
		else
			EXPECT_EQ(tc_reg_fast(&c[i], tc_handler), 0);
	}
	for (i = n - 1; i >= 0; i--) {
		if (i & 1)
			EXPECT_EQ(tc_reg_fast(&c[i], tc_handler), 0);
		else
			EXPECT_EQ(tp_register(&p[i]), 0);
	}
	for (i = 0; i < n; i++) {
		c[i].expect_prod = &p[i];
		paired += p[i].paired && c[i].paired && !tfast(&p[i]);
	}
	EXPECT_EQ(paired, n);
	/* One line per token, after the header. */
	if (read_small_file(tokens_path, buf, TOKENS_BUF * 2) > 0)
		for (lines = -1, i = 0; buf[i]; i++)
			lines += buf[i] == '\n';
	EXPECT_EQ(lines, n);
	for (i = 0; i < n; i++) {
		irq_bypass_unregister_producer(&p[i].p);
		irq_bypass_unregister_consumer(&c[i].c);
		EXPECT_EQ(atomic_read(&c[i].bad_calls), 0);
	}
	EXPECT(!token_known(tokens[0]) && !token_known(tokens[n - 1]));
out:
	if (tokens)
		for (i = 0; i < n; i++)
			kfree(tokens[i]);
	kfree(tokens);
	kvfree(buf);
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
 * Consumer side: register/unregister random pairs, with or without a
 * handler.  Context: kthread.
 */
static int ct_consumer_thread(void *unused)
{
	while (!kthread_should_stop()) {
		struct ct_pair *pr = &ct[get_random_u32() % CT_PAIRS];
		int ret;

		if (pr->c_reg) {
			irq_bypass_unregister_consumer(&pr->c.c);
			pr->c_reg = false;
		} else {
			if (get_random_u32() % 4)
				ret = tc_reg_fast(&pr->c, tc_handler);
			else
				ret = tc_reg(&pr->c);
			if (ret)
				atomic_inc(&pr->c.bad_calls);
			else
				pr->c_reg = true;
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
		tprod_init(&ct[i].p, &ct[i].raised, 0);
		tcons_init(&ct[i].c, &ct[i].raised);
		ct[i].p.log = false;
		ct[i].c.log = false;
		ct[i].c.expect_prod = &ct[i].p;
		ct[i].c.handler_ret = 5;	/* refuse every 5th interrupt */
	}

	hrtimer_setup(&ct_timer, ct_timer_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
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
		EXPECT(!token_known(pr->p.key));

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
#define NR_TESTS 15

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
	RUN(test_fastpath);
	RUN(test_fast_only);
	RUN(test_fast_only_consumer);
	RUN(test_opt_in);
	RUN(test_shared_token);
	RUN(test_debugfs);
	RUN(test_many_tokens);
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
