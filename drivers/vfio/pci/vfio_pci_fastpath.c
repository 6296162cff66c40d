// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-pci MSI/MSI-X handlers that offer each interrupt from hard irq, also
 * on PREEMPT_RT, to the irqbypass consumer paired with the vector's
 * producer.  A miss signals the eventfd as stock does: in hard irq on
 * !PREEMPT_RT, from the vector's irq thread on PREEMPT_RT, where eventfd's
 * wait-queue lock sleeps.  The thread signals once per interrupt counted in
 * ->pending, so no interrupt is merged with another or signalled twice.
 *
 * The manager unpairs a fast producer only after synchronize_hardirq() on
 * the vector, so the consumer stays valid while the primary handler runs;
 * ->trigger and ->producer stay set until free_irq() has waited for both
 * handlers.  The request, register and free helpers run under vdev->igate.
 */

#include <linux/atomic.h>
#include <linux/eventfd.h>
#include <linux/interrupt.h>
#include <linux/irqbypass.h>
#include <linux/kvm_irqbypass_version.h>
#include <linux/lockdep.h>
#include <linux/module.h>

#include "vfio_pci_fastpath.h"

#define CREATE_TRACE_POINTS
#include "vfio_pci_fastpath_trace.h"

/* Read when a vector is set up; a change applies to vectors set up later. */
static bool fastpath = true;
module_param(fastpath, bool, 0644);
MODULE_PARM_DESC(fastpath,
		 "Deliver MSI/MSI-X to a paired KVM irqfd from the hard-irq handler (default: on; off: stock behaviour)");
MODULE_VERSION(KVM_IRQBYPASS_VERSION);

/* fastpath=0: stock's handler, force-threaded on PREEMPT_RT as stock. */
static irqreturn_t vfio_pci_fastpath_stock_handler(int irq, void *arg)
{
	struct vfio_pci_fastpath *fp = arg;

	eventfd_signal(fp->trigger);
	return IRQ_HANDLED;
}

/*
 * No sleeping lock: irq_bypass_fastpath() is lockless and the KVM consumer
 * takes raw locks only; eventfd_signal() only where its lock spins.
 */
static irqreturn_t vfio_pci_fastpath_primary(int irq, void *arg)
{
	struct vfio_pci_fastpath *fp = arg;
	int ret;

	lockdep_assert_irqs_disabled();
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

/* Woken on PREEMPT_RT only: one signal per interrupt not delivered. */
static irqreturn_t vfio_pci_fastpath_thread(int irq, void *arg)
{
	struct vfio_pci_fastpath *fp = arg;
	int n;

	might_sleep();
	n = atomic_xchg(&fp->pending, 0);
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
 * Return: 0 or the error of request_threaded_irq().
 */
int vfio_pci_fastpath_request_irq(struct vfio_pci_fastpath *fp,
				  unsigned int irq, const char *name,
				  struct eventfd_ctx *trigger,
				  struct irq_bypass_producer *producer)
{
	might_sleep();
	fp->producer = producer;
	fp->trigger = trigger;
	atomic_set(&fp->pending, 0);
	fp->fast = READ_ONCE(fastpath);

	if (!fp->fast)
		return request_irq(irq, vfio_pci_fastpath_stock_handler, 0,
				   name, fp);

	/*
	 * IRQF_NO_THREAD: with a thread function it only opts out of forced
	 * threading.  A thread only where the primary handler wakes one.
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
 */
void vfio_pci_fastpath_free_irq(struct vfio_pci_fastpath *fp,
				unsigned int irq)
{
	might_sleep();
	free_irq(irq, fp);
	WARN_ON_ONCE(atomic_read(&fp->pending));
}
