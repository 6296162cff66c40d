// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-pci MSI/MSI-X and INTx handlers that offer each interrupt, in hard
 * irq also on PREEMPT_RT, to the vector's paired consumer; a miss signals
 * the eventfd as stock does.  The helpers below run under vdev->igate.
 */

#include <linux/atomic.h>
#include <linux/eventfd.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irqbypass.h>
#include <linux/kvm_irqbypass_version.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/msi.h>
#include <linux/pci.h>
#include <linux/sched/clock.h>

#include "vfio_pci_priv.h"
#include "vfio_pci_fastpath.h"

#define CREATE_TRACE_POINTS
#include "vfio_pci_fastpath_trace.h"

/* Read when a vector is set up; a change applies to vectors set up later. */
static bool fastpath = true;
module_param(fastpath, bool, 0644);
MODULE_PARM_DESC(fastpath,
		 "Deliver MSI/MSI-X and INTx to a paired KVM irqfd from the hard-irq handler (default: on; off: stock behaviour)");
MODULE_VERSION(KVM_IRQBYPASS_VERSION);

/*
 * On PREEMPT_RT the fast path's work in hard irq preempts every RT task on
 * the CPU; a vector past this rate gets stock's irq thread, whose priority
 * the admin sets.  The generic kernel signals from hard irq either way.
 */
static unsigned int storm_budget = 256;
module_param(storm_budget, uint, 0644);
MODULE_PARM_DESC(storm_budget,
		 "PREEMPT_RT: interrupts per ms one vector may inject from hard irq; past it the vector uses the irq thread until a ms with at most half (default: 256; 0: no bound)");

/* Hard irq, or force-threaded on PREEMPT_RT: stock's, for fastpath=0. */
static irqreturn_t vfio_pci_fastpath_stock_handler(int irq, void *arg)
{
	struct vfio_pci_fastpath *fp = arg;

	eventfd_signal(fp->trigger);
	return IRQ_HANDLED;
}

/* Hard irq (!PREEMPT_RT) or irq thread: stock's signal of a miss. */
static void vfio_pci_fastpath_signal(struct vfio_pci_fastpath *fp)
{
	if (fp->signal)
		fp->signal(fp->opaque, fp->data);
	else
		eventfd_signal(READ_ONCE(fp->trigger));
}

/*
 * Hard irq, PREEMPT_RT.  The irq core never runs one vector's handler on
 * two CPUs at once, so the window's fields need no lock.  A gap of two
 * windows means the last full one was empty.
 */
static bool vfio_pci_fastpath_storm(struct vfio_pci_fastpath *fp, int irq)
{
	unsigned int budget = READ_ONCE(storm_budget);
	u64 now = local_clock(), age = now - fp->window_start;

	if (age >= NSEC_PER_MSEC) {
		if (fp->throttled && (fp->window_count <= budget / 2 ||
				      !budget || age >= 2 * NSEC_PER_MSEC)) {
			fp->throttled = false;
			trace_vfio_fastpath_storm(irq, false, fp->window_count);
		}
		fp->window_start = now;
		fp->window_count = 0;
	}
	if (++fp->window_count > budget && budget && !fp->throttled) {
		fp->throttled = true;
		trace_vfio_fastpath_storm(irq, true, fp->window_count);
	}
	return fp->throttled;
}

/*
 * Hard irq; lockless (the KVM consumer takes raw locks only).  A miss is
 * signalled now where eventfd's lock spins, else counted for the thread.
 */
static irqreturn_t vfio_pci_fastpath_deliver(struct vfio_pci_fastpath *fp,
					     int irq)
{
	int ret;

	if (IS_ENABLED(CONFIG_PREEMPT_RT) && vfio_pci_fastpath_storm(fp, irq))
		ret = -ENOBUFS;
	else
		ret = irq_bypass_fastpath(fp->producer);
	if (ret == IRQ_BYPASS_FAST_DELIVERED || ret == IRQ_BYPASS_FAST_QUEUED) {
		trace_vfio_fastpath_hit(irq, ret);
		return IRQ_HANDLED;
	}
	if (ret >= 0) {
		trace_vfio_fastpath_drop(irq, ret);
		return IRQ_HANDLED;
	}
	trace_vfio_fastpath_miss(irq, ret);

	if (!IS_ENABLED(CONFIG_PREEMPT_RT)) {
		vfio_pci_fastpath_signal(fp);
		return IRQ_HANDLED;
	}

	atomic_inc(&fp->pending);
	/*
	 * Order the count before __irq_wake_thread()'s unordered test of a set
	 * IRQTF_RUNTHREAD, which the thread clears before its atomic_xchg().
	 */
	smp_mb__after_atomic();
	return IRQ_WAKE_THREAD;
}

/* Hard irq, MSI/MSI-X. */
static irqreturn_t vfio_pci_fastpath_primary(int irq, void *arg)
{
	lockdep_assert_irqs_disabled();
	return vfio_pci_fastpath_deliver(arg, irq);
}

/* Irq thread, PREEMPT_RT only: one signal per interrupt not delivered. */
static irqreturn_t vfio_pci_fastpath_thread(int irq, void *arg)
{
	struct vfio_pci_fastpath *fp = arg;
	int n;

	might_sleep();
	n = atomic_xchg(&fp->pending, 0);
	while (n-- > 0)
		vfio_pci_fastpath_signal(fp);
	return IRQ_HANDLED;
}

/**
 * vfio_pci_fastpath_request_irq - request an MSI/MSI-X vector's irq
 * @fp: the vector's fast-path state (embedded in its context)
 * @irq: Linux irq of the vector
 * @name: irq name, kept by the caller until vfio_pci_fastpath_free_irq()
 * @trigger: the vector's eventfd
 * @producer: the vector's producer, registered after this call or never
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
	fp->signal = NULL;
	atomic_set(&fp->pending, 0);
	fp->throttled = false;
	fp->window_count = 0;
	fp->fast = READ_ONCE(fastpath);

	if (!fp->fast)
		return request_irq(irq, vfio_pci_fastpath_stock_handler, 0,
				   name, fp);

	/* With a thread, IRQF_NO_THREAD just opts out of forced threading. */
	return request_threaded_irq(irq, vfio_pci_fastpath_primary,
				    IS_ENABLED(CONFIG_PREEMPT_RT) ?
				    vfio_pci_fastpath_thread : NULL,
				    IRQF_NO_THREAD, name, fp);
}

/**
 * vfio_pci_fastpath_register_producer - register the vector's producer
 * @fp: as passed to vfio_pci_fastpath_request_irq(), ->token and ->irq set
 * Return: as irq_bypass_register_producer().
 */
int vfio_pci_fastpath_register_producer(struct vfio_pci_fastpath *fp)
{
	if (fp->fast)
		return irq_bypass_register_fast_producer(fp->producer, 0);
	return irq_bypass_register_producer(fp->producer);
}

/*
 * Process context, under vdev->igate and vdev->memory_lock, decode on.
 * Stock rewrites the message on each request of a vector free_irq() shut
 * down; on a live vector a write could race with an affinity change under
 * the irq descriptor's lock, so only compare with the irq core's cache.
 */
static bool vfio_pci_fastpath_msix_intact(unsigned int irq)
{
	struct msi_desc *desc = irq_get_msi_desc(irq);
	struct msi_msg cached, msg;
	void __iomem *base;

	if (!desc)
		return false;
	if (desc->pci.msi_attrib.is_virtual)
		return true;
	if (msi_desc_to_pci_dev(desc)->current_state != PCI_D0)
		return false;
	get_cached_msi_msg(irq, &cached);
	base = desc->pci.mask_base + desc->msi_index * PCI_MSIX_ENTRY_SIZE;
	msg.address_lo = readl(base + PCI_MSIX_ENTRY_LOWER_ADDR);
	msg.address_hi = readl(base + PCI_MSIX_ENTRY_UPPER_ADDR);
	msg.data = readl(base + PCI_MSIX_ENTRY_DATA);
	return msg.address_lo == cached.address_lo &&
	       msg.address_hi == cached.address_hi && msg.data == cached.data;
}

/**
 * vfio_pci_fastpath_swap_trigger - move a requested vector to another eventfd
 * @vdev: the device
 * @fp: the vector's state, as passed to vfio_pci_fastpath_request_irq()
 * @irq: Linux irq of the vector
 * @fd: the new eventfd's file descriptor
 * @msix: the vector is MSI-X: its table entry must hold its message
 *
 * Process context, under vdev->igate.  Rather than free and request the
 * vector as stock does (QEMU's MSI-X mask and unmask), switch in place.
 *
 * Return: true if the vector now signals @fd's eventfd; false if nothing
 * changed, and the caller frees and requests the vector as stock does.
 */
bool vfio_pci_fastpath_swap_trigger(struct vfio_pci_core_device *vdev,
				    struct vfio_pci_fastpath *fp,
				    unsigned int irq, int fd, bool msix)
{
	struct eventfd_ctx *old = fp->trigger, *trigger;
	bool intact;
	int ret;
	u16 cmd;

	if (!fp->fast || !READ_ONCE(fastpath))
		return false;
	if (msix) {
		cmd = vfio_pci_memory_lock_and_enable(vdev);
		intact = vfio_pci_fastpath_msix_intact(irq);
		vfio_pci_memory_unlock_and_restore(vdev, cmd);
		if (!intact) {
			trace_vfio_fastpath_swap(irq, -ESTALE);
			return false;
		}
	}
	trigger = eventfd_ctx_fdget(fd);
	if (IS_ERR(trigger)) {
		trace_vfio_fastpath_swap(irq, PTR_ERR(trigger));
		return false;
	}

	/* Unpairs, after any handler that saw the pair has returned. */
	irq_bypass_unregister_producer(fp->producer);
	WRITE_ONCE(fp->trigger, trigger);
	/* Handlers that read the old eventfd, and the RT thread, are done. */
	synchronize_irq(irq);

	fp->producer->token = trigger;
	ret = irq_bypass_register_fast_producer(fp->producer, 0);
	if (unlikely(ret)) {
		pci_info(vdev->pdev, "irq bypass producer (token %p) registration fails: %d\n",
			 trigger, ret);
		fp->producer->token = NULL;
	}
	eventfd_ctx_put(old);
	trace_vfio_fastpath_swap(irq, 0);
	return true;
}

/**
 * vfio_pci_fastpath_free_irq - free a vector's irq
 * @fp: as passed to vfio_pci_fastpath_request_irq()
 * @irq: Linux irq of the vector
 *
 * Every interrupt taken before this returns is delivered or signalled.
 */
void vfio_pci_fastpath_free_irq(struct vfio_pci_fastpath *fp,
				unsigned int irq)
{
	might_sleep();
	free_irq(irq, fp);
	WARN_ON_ONCE(atomic_read(&fp->pending));
}

/*
 * Hard irq, INTx: stock's vfio_intx_handler() with the raw ->lock in place
 * of vdev->irqlock, then the fast path.  A virtually disabled INTx stays
 * masked and unsignalled, as vfio_send_intx_eventfd() leaves it.
 */
static irqreturn_t vfio_pci_fastpath_intx_primary(int irq, void *arg)
{
	struct vfio_pci_fastpath *fp = arg;
	bool ours = true;

	lockdep_assert_irqs_disabled();
	raw_spin_lock(&fp->lock);
	if (!fp->pci_2_3)
		disable_irq_nosync(irq);
	else if (*fp->masked || !pci_check_and_mask_intx(fp->pdev))
		ours = false;
	if (ours)
		*fp->masked = true;
	raw_spin_unlock(&fp->lock);

	if (!ours)
		return IRQ_NONE;
	if (READ_ONCE(*fp->virq_disabled))
		return IRQ_HANDLED;
	return vfio_pci_fastpath_deliver(fp, irq);
}

/**
 * vfio_pci_fastpath_intx_init - prepare the INTx context's fast-path state
 * @fp: the INTx context's state, before its irq is requested or masked
 * @pdev: the device
 * @pci_2_3: the device masks INTx with DisINTx
 * @masked: vfio's masked flag of the INTx context
 * @virq_disabled: vfio's virq_disabled flag of the device
 * @producer: the INTx context's irqbypass producer
 * @signal: vfio's INTx signal function
 * @opaque: its first argument
 * @data: its second argument
 */
void vfio_pci_fastpath_intx_init(struct vfio_pci_fastpath *fp,
				 struct pci_dev *pdev, bool pci_2_3,
				 bool *masked, const bool *virq_disabled,
				 struct irq_bypass_producer *producer,
				 vfio_pci_fastpath_signal_t signal,
				 void *opaque, void *data)
{
	raw_spin_lock_init(&fp->lock);
	fp->pdev = pdev;
	fp->pci_2_3 = pci_2_3;
	fp->masked = masked;
	fp->virq_disabled = virq_disabled;
	fp->producer = producer;
	fp->signal = signal;
	fp->opaque = opaque;
	fp->data = data;
	fp->trigger = NULL;
	atomic_set(&fp->pending, 0);
	fp->throttled = false;
	fp->window_count = 0;
	fp->fast = false;
}

/**
 * vfio_pci_fastpath_intx_request_irq - request the INTx line
 * @fp: as passed to vfio_pci_fastpath_intx_init()
 * @irqflags: stock's flags (IRQF_SHARED with DisINTx, else exclusive)
 * @name: irq name, kept by the caller until vfio_pci_fastpath_intx_free_irq()
 * @handler: stock's handler, used with fastpath=0
 * @dev_id: stock's cookie for @handler
 *
 * The handler stays in hard irq (IRQF_NO_THREAD) and keeps the device quiet
 * until the unmask, so needs no IRQF_ONESHOT; on PREEMPT_RT, where
 * force-threaded sharers have it, it asks for it on a shared line and
 * adopts it (IRQF_COND_ONESHOT).  If sharers disagree, stock's is used.
 *
 * Return: 0 or the error of request_irq().
 */
int vfio_pci_fastpath_intx_request_irq(struct vfio_pci_fastpath *fp,
				       unsigned long irqflags,
				       const char *name, irq_handler_t handler,
				       void *dev_id)
{
	unsigned int irq = fp->pdev->irq;
	unsigned long flags;
	int ret;

	might_sleep();
	fp->dev_id = dev_id;
	if (READ_ONCE(fastpath)) {
		flags = irqflags | IRQF_NO_THREAD | IRQF_COND_ONESHOT;
		if (IS_ENABLED(CONFIG_PREEMPT_RT) && (irqflags & IRQF_SHARED))
			flags |= IRQF_ONESHOT;
		ret = request_threaded_irq(irq, vfio_pci_fastpath_intx_primary,
					   IS_ENABLED(CONFIG_PREEMPT_RT) ?
					   vfio_pci_fastpath_thread : NULL,
					   flags, name, fp);
		if (ret != -EBUSY || !(irqflags & IRQF_SHARED)) {
			fp->fast = !ret;
			return ret;
		}
		pci_info(fp->pdev, "INTx line shared with handlers that disagree on IRQF_ONESHOT: stock handler\n");
	}
	fp->fast = false;
	return request_irq(irq, handler, irqflags, name, dev_id);
}

/**
 * vfio_pci_fastpath_intx_set_trigger - pair the INTx line with a new eventfd
 * @fp: as passed to vfio_pci_fastpath_intx_request_irq(), after success
 * @trigger: the eventfd vfio signals from now on, or NULL
 *
 * Fast-only: INTx is never handed to KVM's posted-interrupt setup.
 */
void vfio_pci_fastpath_intx_set_trigger(struct vfio_pci_fastpath *fp,
					struct eventfd_ctx *trigger)
{
	int ret;

	might_sleep();
	if (!fp->fast)
		return;
	irq_bypass_unregister_producer(fp->producer);
	if (!trigger)
		return;
	fp->producer->token = trigger;
	fp->producer->irq = fp->pdev->irq;
	ret = irq_bypass_register_fast_producer(fp->producer,
						IRQ_BYPASS_FAST_ONLY);
	if (ret)
		pci_info(fp->pdev, "INTx irq bypass producer (token %p) registration fails: %d\n",
			 trigger, ret);
}

/**
 * vfio_pci_fastpath_intx_free_irq - free the INTx line and its producer
 * @fp: as passed to vfio_pci_fastpath_intx_request_irq(), after success
 */
void vfio_pci_fastpath_intx_free_irq(struct vfio_pci_fastpath *fp)
{
	might_sleep();
	if (!fp->fast) {
		free_irq(fp->pdev->irq, fp->dev_id);
		return;
	}
	irq_bypass_unregister_producer(fp->producer);
	free_irq(fp->pdev->irq, fp);
	WARN_ON_ONCE(atomic_read(&fp->pending));
}
