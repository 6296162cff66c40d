// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-pci MSI/MSI-X and INTx handlers that offer each interrupt from hard
 * irq, also on PREEMPT_RT, to the irqbypass consumer paired with the
 * vector's producer.  A miss signals the eventfd as stock does: in hard irq
 * on !PREEMPT_RT, from the vector's irq thread on PREEMPT_RT, where
 * eventfd's wait-queue lock sleeps.  The thread signals once per interrupt
 * counted in ->pending, so no interrupt is merged with another or signalled
 * twice.
 *
 * INTx masks the device in the handler as stock does (DisINTx, or the line
 * for devices without it) under ->lock, a raw lock vfio's mask and unmask
 * paths take inside vdev->irqlock; the unmask stays with the resample path.
 *
 * The manager unpairs a fast producer only after synchronize_hardirq() on
 * the vector, so the consumer stays valid while the primary handler runs;
 * ->producer stays set until free_irq() has waited for both handlers, and
 * ->trigger too, or until a trigger change has waited for them
 * (synchronize_irq()).  The request, register, swap and free helpers run
 * under vdev->igate.
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

/* fastpath=0: stock's handler, force-threaded on PREEMPT_RT as stock. */
static irqreturn_t vfio_pci_fastpath_stock_handler(int irq, void *arg)
{
	struct vfio_pci_fastpath *fp = arg;

	eventfd_signal(fp->trigger);
	return IRQ_HANDLED;
}

/* The stock path: MSI signals its eventfd, INTx calls vfio's function. */
static void vfio_pci_fastpath_signal(struct vfio_pci_fastpath *fp)
{
	if (fp->signal)
		fp->signal(fp->opaque, fp->data);
	else
		eventfd_signal(READ_ONCE(fp->trigger));
}

/*
 * Hard irq.  Offers the interrupt to the paired consumer; on a miss signals
 * now (!PREEMPT_RT) or counts it for the irq thread.  No sleeping lock:
 * irq_bypass_fastpath() is lockless and the KVM consumer takes raw locks
 * only; eventfd_signal() only where its lock spins.
 */
static irqreturn_t vfio_pci_fastpath_deliver(struct vfio_pci_fastpath *fp,
					     int irq)
{
	int ret;

	ret = irq_bypass_fastpath(fp->producer);
	if (!ret) {
		trace_vfio_fastpath_hit(irq);
		return IRQ_HANDLED;
	}
	trace_vfio_fastpath_miss(irq, ret);

	if (!IS_ENABLED(CONFIG_PREEMPT_RT)) {
		vfio_pci_fastpath_signal(fp);
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

/* Hard irq, MSI/MSI-X. */
static irqreturn_t vfio_pci_fastpath_primary(int irq, void *arg)
{
	lockdep_assert_irqs_disabled();
	return vfio_pci_fastpath_deliver(arg, irq);
}

/* Woken on PREEMPT_RT only: one signal per interrupt not delivered. */
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
	fp->signal = NULL;
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

/*
 * Whether @irq's MSI-X table entry still holds the message the irq core
 * cached for it.  Stock writes the cached message back before each request
 * of a vector, because a reset behind vfio's back may have cleared the
 * table, and does so on a vector that free_irq() has shut down.  A swap
 * keeps the vector live, and a write then could race with the irq core's
 * own: an affinity change writes the entry and the cache under the irq
 * descriptor's lock, which a module cannot take, and the write could
 * restore a stale message or mask bit.  So only read, cache first: an entry
 * that differs (also halfway through such a change) is left to stock's free
 * and request.  A virtual entry has no table slot; stock writes none.
 *
 * Process context, under vdev->igate and vdev->memory_lock with memory
 * decode on.
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
 * Process context, under vdev->igate.  What stock does on a trigger change
 * (QEMU's on every MSI-X mask and unmask of the guest) is free_irq() and
 * request_irq() of the same vector: /proc entries, interrupt-remapping and
 * vector-table updates, a disable and an enable.  With the fast handlers
 * the eventfd is only a pointer that the handlers read: switch it in
 * place and move the producer to the new token.  An interrupt that races
 * with the switch is signalled once, on the old or on the new eventfd.
 *
 * Return: true if the vector now signals @fd's eventfd.  false if nothing
 * was changed: the vector has stock's handler (fastpath=0 when it was
 * requested, or now), @fd is no eventfd, or the MSI-X entry lost its
 * message; the caller then frees and requests the vector as stock does
 * (which writes the message back), and fails as stock does.
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

	/* Unpairs; a handler that saw the pair has returned (manager's sync). */
	irq_bypass_unregister_producer(fp->producer);
	WRITE_ONCE(fp->trigger, trigger);
	/*
	 * A handler that read the old eventfd has returned, and on PREEMPT_RT
	 * the thread has signalled the interrupts it counted (on either one).
	 */
	synchronize_irq(irq);

	fp->producer->token = trigger;
	ret = irq_bypass_register_fast_producer(fp->producer, NULL);
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

/*
 * Hard irq, INTx: stock's vfio_intx_handler() with ->lock for irqlock, then
 * the fast path.  A shared line's interrupt that is not the device's
 * (masked already, or no INTx status) is IRQ_NONE and never reaches the
 * guest.  A virtually disabled INTx stays masked and unsignalled, as
 * vfio_send_intx_eventfd() leaves it.
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
 * @fp: the INTx context's fast-path state
 * @pdev: the device
 * @pci_2_3: the device masks INTx with DisINTx
 * @masked: vfio's masked flag of the INTx context
 * @virq_disabled: vfio's virq_disabled flag of the device
 * @producer: the INTx context's irqbypass producer
 * @signal: vfio's INTx signal function
 * @opaque: its first argument
 * @data: its second argument
 *
 * Called before the INTx irq is requested and before vfio's mask and unmask
 * paths can run (they take @fp->lock from then on).
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
 * With fastpath=1 the handler stays in hard irq (IRQF_NO_THREAD).  On
 * PREEMPT_RT the line's other handlers are force-threaded, which makes them
 * IRQF_ONESHOT, and shared handlers must agree on it: on a shared line
 * (DisINTx) ours asks for it too, so that a sharer that comes later can
 * join, and adopts it where the line has it (IRQF_COND_ONESHOT).  It costs
 * a mask and an unmask of the line per interrupt (161 of the 177 ns that
 * rt adds to an interrupt under -icount; Documentation/vfio-fastpath.rst),
 * and the handler does not need it: DisINTx, or disable_irq_nosync() on a
 * line that is not shared, keeps the device quiet until the unmask.  So an
 * exclusive line, where no other handler can come, goes without.  If the
 * line's handlers still disagree (-EBUSY), stock's handler is requested
 * instead.
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
 * Unregisters the producer of the old eventfd (the manager waits for a
 * running handler) and registers one for @trigger as a fast-only producer:
 * an INTx line is never handed to KVM's posted-interrupt setup.  Without
 * the fast handler nothing is registered, as in stock.
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
	ret = irq_bypass_register_fast_only_producer(fp->producer, NULL);
	if (ret)
		pci_info(fp->pdev, "INTx irq bypass producer (token %p) registration fails: %d\n",
			 trigger, ret);
}

/**
 * vfio_pci_fastpath_intx_free_irq - free the INTx line
 * @fp: as passed to vfio_pci_fastpath_intx_request_irq(), after success
 *
 * As vfio_pci_fastpath_free_irq(); unregisters the producer first.
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
