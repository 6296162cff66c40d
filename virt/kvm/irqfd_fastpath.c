// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM irqfd as an irqbypass fast-path consumer (kvm-irqbypass kit).
 *
 * Every irqfd registers its irqbypass consumer (token: its eventfd) and a
 * fast handler.  A producer paired with it (a vfio-pci MSI/MSI-X vector)
 * calls the handler from its hard-irq handler, also on PREEMPT_RT; the
 * handler injects the interrupt the way irqfd_wakeup() does for an MSI
 * route, without the eventfd round trip.  When it cannot (not an MSI route,
 * the route is being written, the irqfd is being deassigned, the injection
 * would block) it fails and the producer signals the eventfd as stock does:
 * irqfd_wakeup() then handles the interrupt exactly as without the kit.
 *
 * Stock KVM registers the consumer only when kvm_arch_has_irq_bypass()
 * (APICv and IRQ posting), for the arch callbacks that program posted
 * interrupts.  We register it always (unless irqfd_fastpath=0) and call
 * those callbacks only when kvm_arch_has_irq_bypass(): otherwise they are
 * no-ops, irqfd->producer stays NULL and kvm_irq_routing_update() skips the
 * arch update, as in stock.  kvm_arch_has_irq_bypass() depends on the
 * vendor module's setup (enable_apicv) and the IOMMU, which cannot change
 * while an irqfd exists (the VM pins the vendor module).
 *
 * See Documentation/vfio-fastpath.rst.
 */

#include <linux/irqbypass.h>
#include <linux/kvm_host.h>
#include <linux/kvm_irqfd.h>
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

/*
 * Consumer callbacks.  Context: process, may sleep; called by the irqbypass
 * manager under its mutex.  The arch callbacks take kvm->irqfds.lock
 * themselves.
 */
static int kvm_irqfd_fp_add_producer(struct irq_bypass_consumer *cons,
				     struct irq_bypass_producer *prod)
{
	if (!kvm_arch_has_irq_bypass())
		return 0;
	return kvm_arch_irq_bypass_add_producer(cons, prod);
}

static void kvm_irqfd_fp_del_producer(struct irq_bypass_consumer *cons,
				      struct irq_bypass_producer *prod)
{
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
 * Take a copy of the irqfd's routing entry without waiting.  irqfd_update()
 * writes it inside irq_entry_sc under kvm->irqfds.lock (spin_lock_irq).  On
 * PREEMPT_RT that lock does not disable interrupts, so this hard-irq
 * reader may have interrupted the writer on its own CPU: it must neither
 * spin on the sequence nor take the lock, which the seqcount_spinlock_t
 * read API does on PREEMPT_RT when a write is in progress.  So read the
 * plain seqcount underneath and give up when a write is in progress or
 * happened meanwhile.
 *
 * Context: hard irq (or any atomic context).  Returns 0 or -EBUSY.
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
 * Fast handler: inject the interrupt like irqfd_wakeup() does for an MSI
 * route, and report failure in every case where irqfd_wakeup() would
 * defer to its work item or where we cannot tell without waiting.
 *
 * Context: hard irq, interrupts disabled, also on PREEMPT_RT: the handler
 * of the paired vfio vector.  The irqfd stays alive while this runs: the
 * manager hides the consumer and then waits for the vector's handler
 * (synchronize_hardirq()) before irqfd_shutdown() can unregister and free
 * it.  kvm->irq_srcu is read-held like irqfd_wakeup() does.
 * kvm_arch_set_irq_inatomic() on an MSI route reads the APIC map under
 * RCU and sets IRR bits, kicks or wakes the vCPU:
 * atomic operations and raw locks (scheduler) only.  Other route types are
 * never passed to it (the Xen event channel path takes an rwlock_t).
 * Upstream calls it only from irqfd_wakeup(), under the eventfd's
 * wait-queue lock (interrupts off on !PREEMPT_RT only); here interrupts
 * are off on every kernel, which is asserted, so all it may take is raw
 * locks (PROVE_RAW_LOCK_NESTING checks that in the rt debug campaign).
 *
 * Return: 0 if injected; -EBUSY if the route is being written or the
 * irqfd is being deassigned; -EWOULDBLOCK if not an MSI route or the
 * injection would block; -EINVAL if KVM found no atomic destination.
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

/**
 * kvm_irqfd_fastpath_register - register an irqfd's irqbypass consumer
 * @irqfd: a new irqfd, on kvm->irqfds.items, its eventfd hooked
 *
 * Replaces stock KVM's registration in kvm_irqfd_assign().  With
 * irqfd_fastpath=0 it does exactly what stock does.  A registration
 * failure is logged and leaves the irqfd working without bypass, as in
 * stock; irqfd_shutdown() unregisters unconditionally (a no-op for a
 * consumer that is not registered).
 *
 * Context: process, may sleep; the caller holds kvm->irq_srcu for read
 * (the manager's mutex and grace periods do not wait for it).
 */
void kvm_irqfd_fastpath_register(struct kvm_kernel_irqfd *irqfd)
{
	struct irq_bypass_consumer *cons = &irqfd->consumer;
	int ret;

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
