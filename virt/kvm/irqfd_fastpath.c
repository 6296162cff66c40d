// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM irqfd as an irqbypass consumer with a fast handler: a paired producer
 * (a vfio-pci MSI vector) injects from its hard-irq handler, also on
 * PREEMPT_RT.  Whenever that cannot be done without waiting the handler
 * fails and the producer signals the eventfd as stock does.
 *
 * The consumer is registered even without kvm_arch_has_irq_bypass(), then
 * as a fast-only consumer: no add/del/stop/start callbacks (pairing runs no
 * callback; stock KVM registers nothing there), so irqfd->producer stays
 * NULL and routing updates skip the arch update as in stock.
 * kvm_arch_has_irq_bypass() cannot change while an irqfd exists (the VM
 * pins the vendor module), so it is read once, at registration.
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

#include <linux/kvm_irqfd_fastpath.h>

static bool irqfd_fastpath = true;
module_param(irqfd_fastpath, bool, 0444);
MODULE_PARM_DESC(irqfd_fastpath,
		 "irqfds accept interrupts from the hard-irq handler of a paired producer (default: on; off: stock registration)");

static bool irqfd_vcpu_inject = true;
module_param(irqfd_vcpu_inject, bool, 0644);
MODULE_PARM_DESC(irqfd_vcpu_inject,
		 "A fast-path interrupt on an irqchip pin is set by the destination vCPU's thread (default: on; off: by the irqfd's work item, as stock)");

/* irqfd->fastpath_pending: the pin waits for a vCPU thread to set it. */
#define KVM_IRQFD_FP_PIN_PENDING	0
MODULE_VERSION(KVM_IRQBYPASS_VERSION);

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
 * Set irqchip pins from a vCPU thread.  Without it an INTx routed to the
 * in-kernel IOAPIC costs a work item per interrupt: on PREEMPT_RT two
 * context switches (kworker in and out) before the vCPU thread even wakes.
 * The vCPU the interrupt goes to is usually halted waiting for it and has
 * to wake anyway; it can set the pin itself, as Xen event channels are
 * delivered from the run loop (KVM_REQ_UNBLOCK and a kick).
 *
 * irqfd->fastpath_pending is the token: set by the producer's hard-irq
 * handler, cleared by whoever sets the pin, exactly once -
 *  - a vCPU thread in its run loop or when KVM_RUN returns
 *    (kvm_irqfd_fastpath_vcpu_run()), finding the irqfd on kvm->irqfds.items;
 *  - the hard-irq handler itself, which takes it back for the work item if
 *    the vCPU left KVM_RUN meanwhile (the Dekker pair below);
 *  - irqfd_shutdown(), for an irqfd deactivated while pending
 *    (kvm_irqfd_fastpath_shutdown()), through the work item it flushes.
 * A second interrupt while the token is out merges into it, as one while
 * the work item is pending does in stock.
 */

/*
 * Hard irq, in kvm->irq_srcu (which keeps the vCPUs and the IOAPIC); only
 * atomic bit operations, kvm_make_request() and kvm_vcpu_kick() (raw locks
 * on PREEMPT_RT).
 */
static void kvm_irqfd_fp_set_pin(struct kvm_kernel_irqfd *irqfd,
				 const struct kvm_kernel_irq_routing_entry *entry)
{
	unsigned long *pending = &irqfd->fastpath_pending;
	struct kvm_vcpu *vcpu = NULL;

	if (READ_ONCE(irqfd_vcpu_inject))
		vcpu = kvm_arch_irqfd_pin_vcpu(irqfd->kvm, irqfd->gsi, entry);
	/*
	 * Not in KVM_RUN: nobody would set it before userspace runs the vCPU
	 * again (or saves the irqchip).  In guest mode with posted interrupts:
	 * the work item delivers the vector without an exit, the kick below
	 * would cost one.  In guest mode without: kvm_set_irq() would kick it
	 * out all the same, so the vCPU sets the pin and the kworker's two
	 * context switches are saved.
	 */
	if (!vcpu || !READ_ONCE(vcpu->wants_to_run) ||
	    (READ_ONCE(vcpu->mode) == IN_GUEST_MODE &&
	     kvm_arch_irqfd_pin_posted(vcpu)))
		goto work;
	if (test_and_set_bit(KVM_IRQFD_FP_PIN_PENDING, pending))
		return;
	kvm_make_request(KVM_REQ_IRQFD_INJECT, vcpu);
	kvm_make_request(KVM_REQ_UNBLOCK, vcpu);
	kvm_vcpu_kick(vcpu);
	/*
	 * Pairs with smp_mb() in kvm_irqfd_fastpath_vcpu_exit(): it sees our
	 * request, or we see that the vCPU left KVM_RUN and take the token
	 * back (unless it has already set the pin).
	 */
	smp_mb();
	if (READ_ONCE(vcpu->wants_to_run) ||
	    !test_and_clear_bit(KVM_IRQFD_FP_PIN_PENDING, pending))
		return;
work:
	schedule_work(&irqfd->inject);
}

/*
 * vCPU thread, preemptible: set the pins whose token it takes, as
 * irqfd_inject() does.  kvm->irq_srcu is held from taking a token to
 * setting the pin, so irqfd_resampler_shutdown(), which synchronizes it
 * before it lowers the resampler's pin, cannot overtake the raise.
 * kvm->irqfds.lock (a spinlock_t) only while walking the list.
 */
static void kvm_irqfd_fp_set_pending_pins(struct kvm *kvm)
{
	struct kvm_kernel_irqfd *irqfd;
	struct {
		int gsi;
		bool level;
	} pins[16];
	unsigned int n, i;
	bool more;
	int idx;

	idx = srcu_read_lock(&kvm->irq_srcu);
	do {
		n = 0;
		more = false;
		spin_lock_irq(&kvm->irqfds.lock);
		list_for_each_entry(irqfd, &kvm->irqfds.items, list) {
			if (!test_bit(KVM_IRQFD_FP_PIN_PENDING,
				      &irqfd->fastpath_pending))
				continue;
			if (n == ARRAY_SIZE(pins)) {
				more = true;
				break;
			}
			if (!test_and_clear_bit(KVM_IRQFD_FP_PIN_PENDING,
						&irqfd->fastpath_pending))
				continue;
			pins[n].gsi = irqfd->gsi;
			pins[n].level = irqfd->resampler;
			n++;
		}
		spin_unlock_irq(&kvm->irqfds.lock);

		for (i = 0; i < n; i++) {
			if (pins[i].level) {
				kvm_set_irq(kvm, KVM_IRQFD_RESAMPLE_IRQ_SOURCE_ID,
					    pins[i].gsi, 1, false);
			} else {
				kvm_set_irq(kvm, KVM_USERSPACE_IRQ_SOURCE_ID,
					    pins[i].gsi, 1, false);
				kvm_set_irq(kvm, KVM_USERSPACE_IRQ_SOURCE_ID,
					    pins[i].gsi, 0, false);
			}
		}
	} while (more);
	srcu_read_unlock(&kvm->irq_srcu, idx);
}

/**
 * kvm_irqfd_fastpath_vcpu_run - set pending pins from the x86 run loop
 * @vcpu: the running vCPU
 *
 * vCPU thread, preemptible, in kvm->srcu; after a vcpu_block() that the
 * request's KVM_REQ_UNBLOCK ended, or an entry the request cancelled.
 */
void kvm_irqfd_fastpath_vcpu_run(struct kvm_vcpu *vcpu)
{
	if (kvm_check_request(KVM_REQ_IRQFD_INJECT, vcpu))
		kvm_irqfd_fp_set_pending_pins(vcpu->kvm);
}

/**
 * kvm_irqfd_fastpath_vcpu_exit - set pending pins when KVM_RUN returns
 * @vcpu: the vCPU, just after vcpu->wants_to_run was cleared
 *
 * vCPU thread, preemptible.  A request made while the vCPU was leaving
 * must not wait for its next KVM_RUN.
 */
void kvm_irqfd_fastpath_vcpu_exit(struct kvm_vcpu *vcpu)
{
	/* Pairs with smp_mb() in kvm_irqfd_fp_set_pin(). */
	smp_mb();
	kvm_irqfd_fastpath_vcpu_run(vcpu);
}

/*
 * Inject as irqfd_wakeup() does: an MSI route atomically, an irqchip pin
 * through a vCPU thread or the irqfd's inject work; fail for other routes,
 * or where we cannot tell without waiting.  Runs in the vector's hard-irq
 * handler with interrupts off on every kernel, so
 * kvm_arch_set_irq_inatomic() may take raw locks only: on
 * an MSI route it does (APIC map under RCU, IRR bits, vCPU kick); other
 * route types are never passed to it (Xen event channels take an rwlock_t).
 * The irqfd stays alive: the manager hides the consumer and waits for the
 * vector's handler (synchronize_hardirq()) before irqfd_shutdown() frees it.
 *
 * Return: 0 if injected (MSI) or handed to a vCPU thread or the inject work
 * (irqchip pin); -EBUSY if the route is being written or the irqfd is being
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
	 * An irqchip pin (IOAPIC/PIC) is set under the irqchip's spinlock_t,
	 * which hard irq cannot take on PREEMPT_RT: a vCPU thread or the
	 * irqfd's work item sets it (kvm_irqfd_fp_set_pin()), without the
	 * eventfd round trip.  Type 0: the GSI has several routes (the PIC's
	 * and the IOAPIC's below 16) or none, which irqfd_update() does not
	 * copy; kvm_set_irq() takes them.
	 */
	if (entry.type == KVM_IRQ_ROUTING_IRQCHIP || !entry.type) {
		kvm_irqfd_fp_set_pin(irqfd, &entry);
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

/**
 * kvm_irqfd_fastpath_shutdown - unregister an irqfd's consumer
 * @irqfd: a deactivated irqfd (off kvm->irqfds.items and its wait queue)
 *
 * Process context, from irqfd_shutdown() before it flushes irqfd->inject.
 * Once the manager has waited for the producer's handler, nothing raises
 * a pin for this irqfd; one still pending is set by the work item that the
 * caller flushes, as one irqfd_wakeup() queued just before deactivation.
 */
void kvm_irqfd_fastpath_shutdown(struct kvm_kernel_irqfd *irqfd)
{
	irq_bypass_unregister_consumer(&irqfd->consumer);
	if (test_and_clear_bit(KVM_IRQFD_FP_PIN_PENDING,
			       &irqfd->fastpath_pending))
		schedule_work(&irqfd->inject);
}

/*
 * Replaces stock KVM's registration in kvm_irqfd_assign() for a new irqfd on
 * kvm->irqfds.items; with irqfd_fastpath=0 it does exactly what stock does.
 * The irqfd is zeroed: without kvm_arch_has_irq_bypass() the callbacks stay
 * NULL (a fast-only consumer).
 * A failure leaves the irqfd working without bypass, as in stock, and
 * irqfd_shutdown() unregisters unconditionally (a no-op then).  The caller
 * holds kvm->irq_srcu, which the manager's mutex does not wait for.
 */
void kvm_irqfd_fastpath_register(struct kvm_kernel_irqfd *irqfd)
{
	struct irq_bypass_consumer *cons = &irqfd->consumer;
	int ret;

	RCU_LOCKDEP_WARN(!srcu_read_lock_held(&irqfd->kvm->irq_srcu),
			 "irqfd consumer registered outside kvm->irq_srcu");
	if (kvm_arch_has_irq_bypass()) {
		cons->add_producer = kvm_arch_irq_bypass_add_producer;
		cons->del_producer = kvm_arch_irq_bypass_del_producer;
		cons->stop = kvm_arch_irq_bypass_stop;
		cons->start = kvm_arch_irq_bypass_start;
	} else if (!irqfd_fastpath) {
		return;
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
