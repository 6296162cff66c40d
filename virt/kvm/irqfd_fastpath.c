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
#include <linux/kvm_vm_table.h>
#include <linux/kvm_irqbypass_version.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/seqlock.h>
#include <linux/slab.h>
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

MODULE_VERSION(KVM_IRQBYPASS_VERSION);

/*
 * irqfd->fastpath_state: PENDING, the pin waits for a vCPU thread to set it
 * (the token); QUEUED, irqfd->fastpath_node is on its VM's pending list or
 * in a batch a drainer took from it.  PENDING implies QUEUED.  ASSIGNED,
 * kvm_irqfd_assign() is done with the irqfd (kvm_irqfd_assign_done()).
 */
#define KVM_IRQFD_FP_PENDING	BIT(0)
#define KVM_IRQFD_FP_QUEUED	BIT(1)
#define KVM_IRQFD_FP_ASSIGNED	BIT(2)

/*
 * Per VM: the irqfds whose pin waits for a vCPU thread, so that the thread
 * finds them in O(pending) rather than walking every irqfd of the VM under
 * kvm->irqfds.lock with interrupts off.  Created with the VM's first
 * fast-path irqfd, freed with the VM, when no irqfd or vCPU of it is left;
 * the hard-irq handler reaches it through irqfd->fastpath_vm, the vCPU
 * thread through the table.
 */
struct kvm_irqfd_fastpath_vm {
	struct kvm_vm_entry entry;
	struct llist_head pending;
};

static DEFINE_KVM_VM_TABLE(kvm_irqfd_fp_vms);

/* The VM's entry, which lives until the VM is destroyed; NULL: none. */
static struct kvm_irqfd_fastpath_vm *kvm_irqfd_fp_vm_find(struct kvm *kvm)
{
	struct kvm_vm_entry *e = kvm_vm_table_find(&kvm_irqfd_fp_vms, kvm);

	return e ? container_of(e, struct kvm_irqfd_fastpath_vm, entry) : NULL;
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
 * Set irqchip pins from a vCPU thread.  Without it an INTx routed to the
 * in-kernel IOAPIC costs a work item per interrupt: on PREEMPT_RT two
 * context switches (kworker in and out) before the vCPU thread even wakes.
 * The vCPU the interrupt goes to is usually halted waiting for it and has
 * to wake anyway; it can set the pin itself, as Xen event channels are
 * delivered from the run loop (KVM_REQ_UNBLOCK and a kick).
 *
 * PENDING is the token: set by the producer's hard-irq handler, which also
 * puts the irqfd on its VM's pending list unless it is QUEUED there already;
 * taken, exactly once, by
 *  - a drainer (kvm_irqfd_fp_drain()): a vCPU thread in its run loop or
 *    when KVM_RUN returns, or irqfd_shutdown() for its own irqfd; it takes
 *    the list in one exchange and clears PENDING and QUEUED of each entry
 *    in one more, its last access to that irqfd;
 *  - the hard-irq handler itself, which takes it back for the work item if
 *    the vCPU left KVM_RUN meanwhile (the Dekker pair below); the entry then
 *    stays QUEUED without PENDING until a drainer passes.
 * A second interrupt while the token is out merges into it, as one while
 * the work item is pending does in stock.
 */

/*
 * Hard irq, in kvm->irq_srcu (which keeps the vCPUs and the IOAPIC); only
 * atomic operations, a lockless llist_add(), kvm_make_request() and
 * kvm_vcpu_kick() (raw locks on PREEMPT_RT).
 */
static void kvm_irqfd_fp_set_pin(struct kvm_kernel_irqfd *irqfd,
				 const struct kvm_kernel_irq_routing_entry *entry)
{
	struct kvm_irqfd_fastpath_vm *fpvm = irqfd->fastpath_vm;
	atomic_t *state = &irqfd->fastpath_state;
	struct kvm_vcpu *vcpu = NULL;
	int old;

	if (fpvm && READ_ONCE(irqfd_vcpu_inject))
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
	old = atomic_fetch_or(KVM_IRQFD_FP_PENDING | KVM_IRQFD_FP_QUEUED, state);
	if (old & KVM_IRQFD_FP_PENDING)
		return;
	if (!(old & KVM_IRQFD_FP_QUEUED))
		llist_add(&irqfd->fastpath_node, &fpvm->pending);
	kvm_irqfd_fastpath_request(vcpu);
	kvm_make_request(KVM_REQ_UNBLOCK, vcpu);
	kvm_vcpu_kick(vcpu);
	/*
	 * Pairs with smp_mb() in kvm_irqfd_fastpath_vcpu_exit(): it sees our
	 * request, or we see that the vCPU left KVM_RUN and take the token
	 * back (unless a drainer has already taken it).
	 */
	smp_mb();
	if (READ_ONCE(vcpu->wants_to_run) ||
	    !(atomic_fetch_andnot(KVM_IRQFD_FP_PENDING, state) &
	      KVM_IRQFD_FP_PENDING))
		return;
work:
	schedule_work(&irqfd->inject);
}

/*
 * Process context, preemptible, in kvm->irq_srcu: set the pins of the
 * irqfds on @fpvm's list, as irqfd_inject() does.  irq_srcu is held from
 * taking a token to setting the pin, so irqfd_resampler_shutdown(), which
 * synchronizes it before it lowers the resampler's pin, cannot overtake the
 * raise; and an irqfd in a batch taken here stays allocated until the
 * exchange that clears its QUEUED (kvm_irqfd_fastpath_shutdown() waits for
 * irq_srcu if it sees QUEUED after its own drain).  No lock: entries added
 * after llist_del_all() come with a new request.
 */
static void kvm_irqfd_fp_drain(struct kvm *kvm,
			       struct kvm_irqfd_fastpath_vm *fpvm)
{
	struct kvm_kernel_irqfd *irqfd, *next;
	struct llist_node *batch;
	bool level;
	int gsi;

	batch = llist_reverse_order(llist_del_all(&fpvm->pending));
	llist_for_each_entry_safe(irqfd, next, batch, fastpath_node) {
		gsi = irqfd->gsi;
		level = irqfd->resampler;
		/*
		 * Last access to the irqfd: from here the handler may queue
		 * it again (QUEUED is clear), and irqfd_shutdown() free it.
		 */
		if (!(atomic_fetch_andnot(KVM_IRQFD_FP_PENDING |
					  KVM_IRQFD_FP_QUEUED,
					  &irqfd->fastpath_state) &
		      KVM_IRQFD_FP_PENDING))
			continue;
		if (level) {
			kvm_set_irq(kvm, KVM_IRQFD_RESAMPLE_IRQ_SOURCE_ID, gsi,
				    1, false);
		} else {
			kvm_set_irq(kvm, KVM_USERSPACE_IRQ_SOURCE_ID, gsi, 1,
				    false);
			kvm_set_irq(kvm, KVM_USERSPACE_IRQ_SOURCE_ID, gsi, 0,
				    false);
		}
	}
}

/**
 * kvm_irqfd_fastpath_vcpu_run - set pending pins from the x86 run loop
 * @vcpu: the running vCPU
 *
 * vCPU thread, preemptible, in kvm->srcu; after a vcpu_block() that the
 * request's KVM_REQ_UNBLOCK ended, or an entry the request cancelled.  The
 * VM's entry exists: an irqfd that queued the request has one, and it goes
 * only with the VM.
 */
void kvm_irqfd_fastpath_vcpu_run(struct kvm_vcpu *vcpu)
{
	struct kvm *kvm = vcpu->kvm;
	struct kvm_irqfd_fastpath_vm *fpvm;
	int idx;

	if (!kvm_irqfd_fastpath_check_request(vcpu))
		return;
	fpvm = kvm_irqfd_fp_vm_find(kvm);
	if (WARN_ON_ONCE(!fpvm))
		return;
	idx = srcu_read_lock(&kvm->irq_srcu);
	kvm_irqfd_fp_drain(kvm, fpvm);
	srcu_read_unlock(&kvm->irq_srcu, idx);
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
 * a pin for this irqfd or queues it.  A pin still pending is set here (by
 * draining the VM's list, as a vCPU would have), or by the drainer whose
 * batch holds it: irq_srcu is synchronized only then, which is rare (the
 * irqfd raised an interrupt that a vCPU is setting right now).  Then
 * nothing refers to the irqfd any more, and the caller may free it.
 */
void kvm_irqfd_fastpath_shutdown(struct kvm_kernel_irqfd *irqfd)
{
	struct kvm *kvm = irqfd->kvm;
	int idx;

	irq_bypass_unregister_consumer(&irqfd->consumer);
	if (!(atomic_read_acquire(&irqfd->fastpath_state) &
	      KVM_IRQFD_FP_QUEUED))
		return;
	idx = srcu_read_lock(&kvm->irq_srcu);
	kvm_irqfd_fp_drain(kvm, irqfd->fastpath_vm);
	srcu_read_unlock(&kvm->irq_srcu, idx);
	if (atomic_read_acquire(&irqfd->fastpath_state) & KVM_IRQFD_FP_QUEUED)
		synchronize_srcu(&kvm->irq_srcu);
}

/**
 * kvm_irqfd_assign_done - the assign path's last access to the irqfd
 * @irqfd: the irqfd, from kvm_irqfd_assign() just before it leaves its
 *	   kvm->irq_srcu read-side section
 *
 * Process context.  irqfd_shutdown() waits for an irq_srcu grace period
 * only so that an irqfd deactivated while kvm_irqfd_assign() still sets
 * it up (it is on kvm->irqfds.items before vfs_poll() and the consumer's
 * registration) is not torn down under it.  The release pairs with the
 * acquire in kvm_irqfd_shutdown_needs_sync(): once it sees the flag,
 * every store of the assign path to the irqfd is visible and none is left
 * to come, so the wait can be skipped.  Nothing else in irqfd_shutdown()
 * relies on that grace period: irqfd_wakeup() runs under the eventfd's
 * wait-queue lock (eventfd_ctx_remove_wait_queue() waits for it), the
 * inject work is flushed, the resampler and the fast path synchronize on
 * their own.
 */
void kvm_irqfd_assign_done(struct kvm_kernel_irqfd *irqfd)
{
	atomic_fetch_or_release(KVM_IRQFD_FP_ASSIGNED, &irqfd->fastpath_state);
}

/**
 * kvm_irqfd_shutdown_needs_sync - whether irqfd_shutdown() must wait
 * @irqfd: the irqfd, from irqfd_shutdown() (process context)
 *
 * Return: true while kvm_irqfd_assign() may still be setting up @irqfd,
 * i.e. irqfd_shutdown() must synchronize kvm->irq_srcu as stock does.
 */
bool kvm_irqfd_shutdown_needs_sync(struct kvm_kernel_irqfd *irqfd)
{
	return !(atomic_read_acquire(&irqfd->fastpath_state) &
		 KVM_IRQFD_FP_ASSIGNED);
}

/**
 * kvm_irqfd_fastpath_destroy_vm - free the VM's pending list
 * @kvm: the VM, from kvm_destroy_vm() after kvm_arch_destroy_vm()
 *
 * Process context.  The irqfds are gone (kvm_irqfd_release() flushed their
 * shutdown, which left each off the list) and so are the vCPUs.
 */
void kvm_irqfd_fastpath_destroy_vm(struct kvm *kvm)
{
	struct kvm_irqfd_fastpath_vm *fpvm;
	struct kvm_vm_entry *e;

	e = kvm_vm_table_remove(&kvm_irqfd_fp_vms, kvm);
	if (!e)
		return;
	fpvm = container_of(e, struct kvm_irqfd_fastpath_vm, entry);
	WARN_ON_ONCE(!llist_empty(&fpvm->pending));
	/* Other VMs' vCPUs may be walking its bucket. */
	kfree_rcu(fpvm, entry.rcu);
}

/*
 * Process context: the VM's pending list, created with its first fast-path
 * irqfd and charged to the caller's memory cgroup.  NULL if it cannot be
 * allocated: the irqfd's pins then go through its work item, as in stock.
 */
static struct kvm_irqfd_fastpath_vm *kvm_irqfd_fp_vm_get(struct kvm *kvm)
{
	struct kvm_irqfd_fastpath_vm *fpvm;
	struct kvm_vm_entry *cur;

	fpvm = kvm_irqfd_fp_vm_find(kvm);
	if (fpvm)
		return fpvm;
	fpvm = kzalloc(sizeof(*fpvm), GFP_KERNEL_ACCOUNT);
	if (!fpvm)
		return NULL;
	init_llist_head(&fpvm->pending);
	cur = kvm_vm_table_insert(&kvm_irqfd_fp_vms, kvm, &fpvm->entry);
	if (!cur)
		return fpvm;
	kfree(fpvm);
	return container_of(cur, struct kvm_irqfd_fastpath_vm, entry);
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
		irqfd->fastpath_vm = kvm_irqfd_fp_vm_get(irqfd->kvm);

	if (irqfd_fastpath)
		ret = irq_bypass_register_fast_consumer(cons, kvm_irqfd_fp_handler);
	else
		ret = irq_bypass_register_consumer(cons);
	/*
	 * Stock KVM logs a refusal (-EBUSY: another irqfd's consumer is still
	 * on the eventfd, e.g. one whose deassign from another thread has not
	 * finished) only where it registers at all, with posted interrupts.
	 * A fast-only consumer refused that way just goes without the fast
	 * path (Documentation/irqbypass.rst, "Two irqfds on one eventfd"):
	 * no log line that stock would not print.
	 */
	if (ret && kvm_arch_has_irq_bypass())
		pr_info("irq bypass consumer (token %p) registration fails: %d\n",
			cons->token, ret);
}
