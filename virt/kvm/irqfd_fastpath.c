// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM irqfd as an irqbypass consumer with a fast handler: a paired producer
 * (a vfio-pci MSI vector) injects from its hard-irq handler, also on
 * PREEMPT_RT.  Whenever that cannot be done without waiting the handler
 * fails and the producer signals the eventfd as stock does.
 *
 * The consumer is registered even without kvm_arch_has_irq_bypass(); the
 * arch callbacks are then skipped, so irqfd->producer stays NULL and routing
 * updates skip the arch update as in stock.  kvm_arch_has_irq_bypass()
 * cannot change while an irqfd exists (the VM pins the vendor module).
 */

#include <linux/irqbypass.h>
#include <linux/kvm_host.h>
#include <linux/kvm_irqfd.h>
#include <linux/kvm_irqbypass_version.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/seqlock.h>
#include <linux/srcu.h>

#include "irqfd_fastpath.h"

static bool irqfd_fastpath = true;
module_param(irqfd_fastpath, bool, 0444);
MODULE_PARM_DESC(irqfd_fastpath,
		 "irqfds accept interrupts from the hard-irq handler of a paired producer (default: on; off: stock registration)");
MODULE_VERSION(KVM_IRQBYPASS_VERSION);

/* Consumer callbacks, called under the irqbypass manager's mutex. */
static int kvm_irqfd_fp_add_producer(struct irq_bypass_consumer *cons,
				     struct irq_bypass_producer *prod)
{
	might_sleep();
	if (!kvm_arch_has_irq_bypass())
		return 0;
	return kvm_arch_irq_bypass_add_producer(cons, prod);
}

static void kvm_irqfd_fp_del_producer(struct irq_bypass_consumer *cons,
				      struct irq_bypass_producer *prod)
{
	might_sleep();
	if (kvm_arch_has_irq_bypass())
		kvm_arch_irq_bypass_del_producer(cons, prod);
}

static void kvm_irqfd_fp_stop(struct irq_bypass_consumer *cons)
{
	if (kvm_arch_has_irq_bypass())
		kvm_arch_irq_bypass_stop(cons);
}

static void kvm_irqfd_fp_start(struct irq_bypass_consumer *cons)
{
	if (kvm_arch_has_irq_bypass())
		kvm_arch_irq_bypass_start(cons);
}

/*
 * Copy the irqfd's routing entry without waiting.  irqfd_update() writes it
 * under kvm->irqfds.lock, which on PREEMPT_RT does not disable interrupts:
 * this hard-irq reader may have interrupted the writer on its own CPU, so it
 * must neither spin on the sequence nor take the lock (the
 * seqcount_spinlock_t read API does both on PREEMPT_RT).  Read the plain
 * seqcount and give up (-EBUSY) if a write is in progress or happened.
 */
static int kvm_irqfd_fp_read_entry(struct kvm_kernel_irqfd *irqfd,
				   struct kvm_kernel_irq_routing_entry *entry)
{
	const seqcount_t *sc = &irqfd->irq_entry_sc.seqcount;
	unsigned int seq;

	seq = raw_read_seqcount(sc);
	if (seq & 1)
		return -EBUSY;
	*entry = irqfd->irq_entry;
	if (read_seqcount_retry(sc, seq))
		return -EBUSY;
	return 0;
}

/*
 * Inject as irqfd_wakeup() does: an MSI route atomically, an irqchip pin
 * through the irqfd's inject work; fail for other routes, or where we
 * cannot tell without waiting.  Runs in the vector's hard-irq handler with interrupts off on
 * every kernel, so kvm_arch_set_irq_inatomic() may take raw locks only: on
 * an MSI route it does (APIC map under RCU, IRR bits, vCPU kick); other
 * route types are never passed to it (Xen event channels take an rwlock_t).
 * The irqfd stays alive: the manager hides the consumer and waits for the
 * vector's handler (synchronize_hardirq()) before irqfd_shutdown() frees it.
 *
 * Return: 0 if injected (MSI) or queued to the irqfd's inject work (irqchip
 * pin); -EBUSY if the route is being written or the irqfd is being
 * deassigned; -EWOULDBLOCK for other route types or if the injection would
 * block; -EINVAL if KVM found no atomic destination.
 */
static int kvm_irqfd_fp_handler(struct irq_bypass_consumer *cons,
				struct irq_bypass_producer *prod)
{
	struct kvm_kernel_irqfd *irqfd =
		container_of(cons, struct kvm_kernel_irqfd, consumer);
	struct kvm_kernel_irq_routing_entry entry;
	struct kvm *kvm = irqfd->kvm;
	int idx, ret;

	lockdep_assert_irqs_disabled();
	idx = srcu_read_lock(&kvm->irq_srcu);

	/*
	 * Deactivated (being deassigned): irqfd_wakeup() handles it through
	 * the work item with the current routing, let it.  A racy read: an
	 * irqfd deactivated right after this check is injected on the route
	 * it had, as irqfd_wakeup() would have done a moment earlier.
	 */
	if (list_empty(&irqfd->list)) {
		ret = -EBUSY;
		goto out;
	}

	ret = kvm_irqfd_fp_read_entry(irqfd, &entry);
	if (ret)
		goto out;

	/*
	 * An irqchip pin (IOAPIC/PIC) is set under the irqchip's spinlock_t:
	 * inject from the irqfd's work item as irqfd_wakeup() does, without
	 * the eventfd round trip (on PREEMPT_RT the producer's irq thread).
	 * queue_work() only takes raw locks.  Like irqfd_wakeup(), an
	 * interrupt while the work is pending is merged into it: a level pin
	 * (resampler) is asserted once until its EOI anyway.  irqfd_shutdown()
	 * unregisters the consumer before it flushes the work.  Type 0: the
	 * GSI has several routes (the PIC's and the IOAPIC's below 16) or
	 * none, which irqfd_update() does not copy; kvm_set_irq() takes them.
	 */
	if (entry.type == KVM_IRQ_ROUTING_IRQCHIP || !entry.type) {
		schedule_work(&irqfd->inject);
		ret = 0;
		goto out;
	}

	if (entry.type != KVM_IRQ_ROUTING_MSI) {
		ret = -EWOULDBLOCK;
		goto out;
	}

	ret = kvm_arch_set_irq_inatomic(&entry, kvm,
					KVM_USERSPACE_IRQ_SOURCE_ID, 1, false);
	if (ret >= 0)
		ret = 0;
	else if (ret != -EWOULDBLOCK)
		ret = -EINVAL;
out:
	srcu_read_unlock(&kvm->irq_srcu, idx);
	return ret;
}

/*
 * Replaces stock KVM's registration in kvm_irqfd_assign() for a new irqfd on
 * kvm->irqfds.items; with irqfd_fastpath=0 it does exactly what stock does.
 * A failure leaves the irqfd working without bypass, as in stock, and
 * irqfd_shutdown() unregisters unconditionally (a no-op then).  The caller
 * holds kvm->irq_srcu, which the manager's mutex does not wait for.
 */
void kvm_irqfd_fastpath_register(struct kvm_kernel_irqfd *irqfd)
{
	struct irq_bypass_consumer *cons = &irqfd->consumer;
	int ret;

	might_sleep();
	RCU_LOCKDEP_WARN(!srcu_read_lock_held(&irqfd->kvm->irq_srcu),
			 "irqfd consumer registered outside kvm->irq_srcu");
	if (!irqfd_fastpath) {
		if (!kvm_arch_has_irq_bypass())
			return;
		cons->add_producer = kvm_arch_irq_bypass_add_producer;
		cons->del_producer = kvm_arch_irq_bypass_del_producer;
		cons->stop = kvm_arch_irq_bypass_stop;
		cons->start = kvm_arch_irq_bypass_start;
	} else {
		cons->add_producer = kvm_irqfd_fp_add_producer;
		cons->del_producer = kvm_irqfd_fp_del_producer;
		cons->stop = kvm_irqfd_fp_stop;
		cons->start = kvm_irqfd_fp_start;
	}
	cons->token = irqfd->eventfd;

	if (irqfd_fastpath)
		ret = irq_bypass_register_fast_consumer(cons, kvm_irqfd_fp_handler);
	else
		ret = irq_bypass_register_consumer(cons);
	if (ret)
		pr_info("irq bypass consumer (token %p) registration fails: %d\n",
			cons->token, ret);
}
