// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-pci MSI/MSI-X fast path (kvm-irqbypass kit).
 *
 * Each MSI/MSI-X vector gets a primary handler that runs in hard-irq
 * context on every kernel, PREEMPT_RT included (IRQF_NO_THREAD: with an
 * explicit thread function it only opts out of forced threading).  It
 * offers the interrupt to the consumer paired with the vector's irqbypass
 * producer (a KVM irqfd injects it into the guest atomically).  When that
 * fails it falls back to what stock vfio does, signalling the vector's
 * eventfd: right there on !PREEMPT_RT, where eventfd's wait-queue lock is
 * a spinning lock, and from the vector's irq thread on PREEMPT_RT, where
 * it sleeps.
 *
 * Exactly once: every interrupt is either delivered by the fast handler or
 * counted in ->pending / signalled, never both: the manager reports
 * delivery only when the handler injected it.  The thread drains ->pending
 * with one eventfd signal per interrupt, so interrupts that arrive while a
 * wakeup of the thread is already pending are not merged into one.
 *
 * Locking: the primary handler takes no lock of its own.  The producer is
 * registered as a fast producer: the manager unpairs it only after
 * synchronize_hardirq() on the vector, so the consumer the fast path calls
 * stays valid; the KVM consumer takes raw locks only.  ->trigger and
 * ->producer are set before the irq is requested and stay until free_irq()
 * has waited for the handler and the thread.
 *
 * See Documentation/vfio-fastpath.rst.
 */

#include <linux/atomic.h>
#include <linux/eventfd.h>
#include <linux/interrupt.h>
#include <linux/irqbypass.h>
#include <linux/module.h>

#include "vfio_pci_fastpath.h"

#define CREATE_TRACE_POINTS
#include "vfio_pci_fastpath_trace.h"

/* Read when a vector is set up; a change applies to vectors set up later. */
static bool fastpath = true;
module_param(fastpath, bool, 0644);
MODULE_PARM_DESC(fastpath,
		 "Deliver MSI/MSI-X to a paired KVM irqfd from the hard-irq handler (default: on; off: stock behaviour)");

/*
 * Stock handler, used with fastpath=0.
 * Context: hard irq, or the forced irq thread on PREEMPT_RT (as stock).
 */
static irqreturn_t vfio_pci_fastpath_stock_handler(int irq, void *arg)
{
	struct vfio_pci_fastpath *fp = arg;

	eventfd_signal(fp->trigger);
	return IRQ_HANDLED;
}

/*
 * Primary handler.
 * Context: hard irq, interrupts disabled, also on PREEMPT_RT.  Takes no
 * sleeping lock: irq_bypass_fastpath() is lockless under RCU and the KVM
 * consumer takes raw locks only; eventfd_signal() (spinlock_t) only when
 * that is a spinning lock (!PREEMPT_RT).
 */
static irqreturn_t vfio_pci_fastpath_primary(int irq, void *arg)
{
	struct vfio_pci_fastpath *fp = arg;
	int ret;

	ret = irq_bypass_fastpath(fp->producer);
	if (!ret) {
		trace_vfio_fastpath_hit(irq);
		return IRQ_HANDLED;
	}
	trace_vfio_fastpath_miss(irq, ret);

	if (!IS_ENABLED(CONFIG_PREEMPT_RT)) {
		eventfd_signal(fp->trigger);
		return IRQ_HANDLED;
	}

	atomic_inc(&fp->pending);
	/*
	 * Order the count before __irq_wake_thread()'s test of
	 * IRQTF_RUNTHREAD, which is not ordered when the bit is already set:
	 * the thread clears the bit before its atomic_xchg(), so it sees
	 * this count in the run the bit stands for.
	 */
	smp_mb__after_atomic();
	return IRQ_WAKE_THREAD;
}

/*
 * Threaded handler, woken only on PREEMPT_RT.
 * Context: the vector's irq thread (process, SCHED_FIFO), may sleep.
 * Signals once per interrupt the primary handler could not deliver.
 */
static irqreturn_t vfio_pci_fastpath_thread(int irq, void *arg)
{
	struct vfio_pci_fastpath *fp = arg;
	int n = atomic_xchg(&fp->pending, 0);

	while (n-- > 0)
		eventfd_signal(fp->trigger);
	return IRQ_HANDLED;
}

/**
 * vfio_pci_fastpath_request_irq - request an MSI/MSI-X vector's irq
 * @fp: the vector's fast-path state (embedded in its context)
 * @irq: Linux irq of the vector
 * @name: irq name, kept by the caller until vfio_pci_fastpath_free_irq()
 * @trigger: the vector's eventfd
 * @producer: the vector's irqbypass producer; it may be registered after
 *	this call or never (the fast path then falls back)
 *
 * Context: process, may sleep; the caller holds vdev->igate.
 *
 * Return: 0 or the error of request_threaded_irq().
 */
int vfio_pci_fastpath_request_irq(struct vfio_pci_fastpath *fp,
				  unsigned int irq, const char *name,
				  struct eventfd_ctx *trigger,
				  struct irq_bypass_producer *producer)
{
	fp->producer = producer;
	fp->trigger = trigger;
	atomic_set(&fp->pending, 0);
	fp->fast = READ_ONCE(fastpath);

	if (!fp->fast)
		return request_irq(irq, vfio_pci_fastpath_stock_handler, 0,
				   name, fp);

	/*
	 * The thread exists only where the primary handler can wake it: on
	 * !PREEMPT_RT the fallback signals from hard irq, as stock does.
	 */
	return request_threaded_irq(irq, vfio_pci_fastpath_primary,
				    IS_ENABLED(CONFIG_PREEMPT_RT) ?
				    vfio_pci_fastpath_thread : NULL,
				    IRQF_NO_THREAD, name, fp);
}

/**
 * vfio_pci_fastpath_register_producer - register the vector's producer
 * @fp: as passed to vfio_pci_fastpath_request_irq(), with the producer's
 *	->token and ->irq set
 *
 * With the fast-path handlers, registers the producer as one that calls
 * irq_bypass_fastpath() from the vector's hard-irq handler only, so the
 * manager publishes its pair; otherwise (fastpath=0) as stock does.
 *
 * Context: process, may sleep; the caller holds vdev->igate.
 *
 * Return: as irq_bypass_register_producer().
 */
int vfio_pci_fastpath_register_producer(struct vfio_pci_fastpath *fp)
{
	if (fp->fast)
		return irq_bypass_register_fast_producer(fp->producer, NULL);
	return irq_bypass_register_producer(fp->producer);
}

/**
 * vfio_pci_fastpath_free_irq - free a vector's irq
 * @fp: as passed to vfio_pci_fastpath_request_irq()
 * @irq: Linux irq of the vector
 *
 * free_irq() waits for a running primary handler and for the thread, which
 * runs once more if it was woken: every interrupt taken before this
 * returns has been delivered or signalled.
 *
 * Context: process, may sleep; the caller holds vdev->igate.
 */
void vfio_pci_fastpath_free_irq(struct vfio_pci_fastpath *fp,
				unsigned int irq)
{
	free_irq(irq, fp);
	WARN_ON_ONCE(atomic_read(&fp->pending));
}
