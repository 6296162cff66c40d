// SPDX-License-Identifier: GPL-2.0-only
/*
 * A test producer for the irqbypass fast path, for testbeds without a
 * device whose MSI could reach a KVM irqfd through vfio-pci (bochs: no PCI
 * device and no IOMMU; Debian builds vfio without the no-IOMMU mode).  It
 * stands in for vfio-pci's MSI handler (drivers/vfio/pci/vfio_pci_fastpath.c):
 * an hrtimer in HRTIMER_MODE_HARD, which expires in hard-irq context also on
 * PREEMPT_RT, calls irq_bypass_fastpath() for a producer whose token is an
 * eventfd that userspace also passed to KVM_IRQFD.  A miss (no consumer,
 * no fast handler, or the handler declined) signals the eventfd once, as
 * vfio's MSI handler does: in hard irq on !PREEMPT_RT; on PREEMPT_RT, where
 * eventfd_signal() takes a spinlock_t (a sleeping lock there), the miss is
 * counted and an irq_work without IRQ_WORK_HARD_IRQ, which PREEMPT_RT runs
 * in its irq_work thread, signals it.
 *
 * /dev/kit_fastpath_producer: one producer per open file, ioctls in
 * fastpath_producer.h (pair with an eventfd, fire N times at a period, read
 * the counters, unpair).  The producer registers with
 * IRQ_BYPASS_FAST_ONLY: it has no Linux irq that the consumer's own bypass
 * (IOMMU posting) could take over, so only the fast path is paired and no
 * add/del/stop/start callback runs.  Without an irq, the manager waits for
 * the timer's fast paths with an RCU grace period (the callback runs with
 * interrupts disabled).
 *
 * Locking: fp->lock (a mutex) serialises the ioctls and the release of one
 * file.  ->remaining is written by the timer callback while the timer runs
 * and under fp->lock while it is stopped.  The counters are atomic.
 */

#include <linux/atomic.h>
#include <linux/eventfd.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/irqbypass.h>
#include <linux/kvm_irqbypass_compat.h>
#include <linux/lockdep.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "fastpath_producer.h"

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("irqbypass fast-path test producer (kvm-irqbypass kit)");

#define KIT_FP_MIN_PERIOD_NS	10000
#define KIT_FP_MAX_COUNT	1000000

struct kit_fp {
	struct mutex lock;		/* ioctls and release of this file */
	struct irq_bypass_producer prod;
	struct eventfd_ctx *trigger;	/* the token; set while paired */
	struct hrtimer timer;
	ktime_t period;
	unsigned int remaining;		/* fires left */
	struct irq_work signal_work;	/* PREEMPT_RT: signals the misses */
	atomic_t pending;		/* misses not signalled yet */
	atomic64_t fired;
	atomic64_t hits;
	atomic64_t misses;
	atomic64_t signalled;
};

/*
 * PREEMPT_RT only.  The irq_work thread (process context): may take the
 * eventfd's spinlock_t.  Signals once per miss counted in ->pending.
 */
static void kit_fp_signal_work(struct irq_work *work)
{
	struct kit_fp *fp = container_of(work, struct kit_fp, signal_work);
	int n = atomic_xchg(&fp->pending, 0);

	while (n-- > 0) {
		eventfd_signal(fp->trigger);
		atomic64_inc(&fp->signalled);
	}
}

/*
 * Hard irq, interrupts disabled: a miss is signalled exactly once, now
 * where eventfd's lock spins, else from the irq_work thread.  The
 * increment of ->pending precedes irq_work_queue(), which either queues the
 * work or finds it queued and not yet run: the run sees the count.
 */
static void kit_fp_miss(struct kit_fp *fp)
{
	if (!IS_ENABLED(CONFIG_PREEMPT_RT)) {
		eventfd_signal(fp->trigger);
		atomic64_inc(&fp->signalled);
		return;
	}
	atomic_inc(&fp->pending);
	irq_work_queue(&fp->signal_work);
}

/*
 * Hard irq (HRTIMER_MODE_HARD, also on PREEMPT_RT), interrupts disabled:
 * the producer's "interrupt handler".  irq_bypass_fastpath() takes no lock,
 * the KVM consumer's handler raw locks only.  ->fired is counted last, so a
 * reader that sees it has the hit or miss of that fire counted too.
 */
static enum hrtimer_restart kit_fp_timer(struct hrtimer *timer)
{
	struct kit_fp *fp = container_of(timer, struct kit_fp, timer);

	lockdep_assert_irqs_disabled();
	if (irq_bypass_fastpath(&fp->prod) >= 0) {
		atomic64_inc(&fp->hits);
	} else {
		atomic64_inc(&fp->misses);
		kit_fp_miss(fp);
	}
	/* Orders the hit/miss before ->fired; pairs with the ioctl's smp_rmb(). */
	smp_mb__before_atomic();
	atomic64_inc(&fp->fired);
	if (--fp->remaining == 0)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(timer, fp->period);
	return HRTIMER_RESTART;
}

/* Process context, fp->lock held. */
static int kit_fp_pair(struct kit_fp *fp, int eventfd)
{
	struct eventfd_ctx *ctx;
	int ret;

	lockdep_assert_held(&fp->lock);
	if (fp->trigger)
		return -EBUSY;
	ctx = eventfd_ctx_fdget(eventfd);
	if (IS_ERR(ctx))
		return PTR_ERR(ctx);
	atomic64_set(&fp->fired, 0);
	atomic64_set(&fp->hits, 0);
	atomic64_set(&fp->misses, 0);
	atomic64_set(&fp->signalled, 0);
	fp->trigger = ctx;
	fp->prod.irq = 0;
	ret = irqbp_compat_reg_fast_prod(&fp->prod, ctx, IRQ_BYPASS_FAST_ONLY);
	if (ret) {
		fp->trigger = NULL;
		eventfd_ctx_put(ctx);
	}
	return ret;
}

/*
 * Process context, fp->lock held: the timer stopped (the lock keeps it
 * so), the producer unregistered, the signals of the misses delivered,
 * then the eventfd released.
 */
static void kit_fp_unpair(struct kit_fp *fp)
{
	lockdep_assert_held(&fp->lock);
	if (!fp->trigger)
		return;
	hrtimer_cancel(&fp->timer);
	irq_bypass_unregister_producer(&fp->prod);
	irq_work_sync(&fp->signal_work);
	eventfd_ctx_put(fp->trigger);
	fp->trigger = NULL;
}

/*
 * Process context, fp->lock held.  Pinned: the interrupts come from the
 * CPU of the caller, as an MSI comes from the CPU its vector targets.
 */
static int kit_fp_fire(struct kit_fp *fp, const struct kit_fp_fire *f)
{
	lockdep_assert_held(&fp->lock);
	if (!fp->trigger)
		return -ENOTCONN;
	if (!f->count || f->count > KIT_FP_MAX_COUNT ||
	    f->period_ns < KIT_FP_MIN_PERIOD_NS)
		return -EINVAL;
	if (hrtimer_active(&fp->timer))
		return -EBUSY;
	fp->remaining = f->count;
	fp->period = ns_to_ktime(f->period_ns);
	hrtimer_start(&fp->timer, fp->period, HRTIMER_MODE_REL_PINNED_HARD);
	return 0;
}

/* Process context. */
static long kit_fp_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	struct kit_fp *fp = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct kit_fp_counters c = { 0 };
	struct kit_fp_pair p;
	struct kit_fp_fire f;
	long ret;

	mutex_lock(&fp->lock);
	switch (cmd) {
	case KIT_FP_PAIR:
		ret = -EFAULT;
		if (!copy_from_user(&p, uarg, sizeof(p)))
			ret = kit_fp_pair(fp, p.eventfd);
		break;
	case KIT_FP_UNPAIR:
		kit_fp_unpair(fp);
		ret = 0;
		break;
	case KIT_FP_FIRE:
		ret = -EFAULT;
		if (!copy_from_user(&f, uarg, sizeof(f)))
			ret = kit_fp_fire(fp, &f);
		break;
	case KIT_FP_COUNTERS:
		c.active = hrtimer_active(&fp->timer);
		c.fired = atomic64_read(&fp->fired);
		smp_rmb();	/* pairs with kit_fp_timer()'s barrier */
		c.hits = atomic64_read(&fp->hits);
		c.misses = atomic64_read(&fp->misses);
		c.signalled = atomic64_read(&fp->signalled);
		ret = copy_to_user(uarg, &c, sizeof(c)) ? -EFAULT : 0;
		break;
	default:
		ret = -ENOTTY;
	}
	mutex_unlock(&fp->lock);
	return ret;
}

/* Process context. */
static int kit_fp_open(struct inode *inode, struct file *file)
{
	struct kit_fp *fp = kzalloc(sizeof(*fp), GFP_KERNEL);

	if (!fp)
		return -ENOMEM;
	mutex_init(&fp->lock);
	hrtimer_setup(&fp->timer, kit_fp_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	init_irq_work(&fp->signal_work, kit_fp_signal_work);
	file->private_data = fp;
	return 0;
}

/* Process context: the last reference to the file is gone. */
static int kit_fp_release(struct inode *inode, struct file *file)
{
	struct kit_fp *fp = file->private_data;

	mutex_lock(&fp->lock);
	kit_fp_unpair(fp);
	mutex_unlock(&fp->lock);
	mutex_destroy(&fp->lock);
	kfree(fp);
	return 0;
}

static const struct file_operations kit_fp_fops = {
	.owner = THIS_MODULE,
	.open = kit_fp_open,
	.release = kit_fp_release,
	.unlocked_ioctl = kit_fp_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice kit_fp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kit_fastpath_producer",
	.fops = &kit_fp_fops,
	.mode = 0600,
};

module_misc_device(kit_fp_misc);
