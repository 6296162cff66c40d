// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM irqfd as an irqbypass consumer with a fast handler, which a paired
 * producer calls in hard irq, also on PREEMPT_RT.  Without
 * kvm_arch_has_irq_bypass() the consumer is fast-only (no callbacks).
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
#include <linux/timer.h>
#include <linux/workqueue.h>

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
 * PENDING: the token (see kvm_irqfd_fp_set_pin()); QUEUED: on the VM's
 * pending list or in a drained batch; ASSIGNED: kvm_irqfd_assign_done().
 */
#define KVM_IRQFD_FP_PENDING	BIT(0)
#define KVM_IRQFD_FP_QUEUED	BIT(1)
#define KVM_IRQFD_FP_ASSIGNED	BIT(2)

/* Read at each queued pin. */
static unsigned int irqfd_pin_wait_ms = 4;
module_param(irqfd_pin_wait_ms, uint, 0644);
MODULE_PARM_DESC(irqfd_pin_wait_ms,
		 "Longest wait in ms (to the next tick) of a fast-path irqchip pin for its vCPU thread; then the irqfd's work item sets it (default: 4)");

/* Per VM: the irqfds whose pin waits for a vCPU thread to set it. */
struct kvm_irqfd_fastpath_vm {
	struct kvm_vm_entry entry;
	struct llist_head pending;
};

static DEFINE_KVM_VM_TABLE(kvm_irqfd_fp_vms);

static struct kvm_irqfd_fastpath_vm *kvm_irqfd_fp_vm_find(struct kvm *kvm)
{
	struct kvm_vm_entry *e = kvm_vm_table_find(&kvm_irqfd_fp_vms, kvm);

	return e ? container_of(e, struct kvm_irqfd_fastpath_vm, entry) : NULL;
}

/*
 * Hard irq, lockless.  irqfd_update() writes under kvm->irqfds.lock, which
 * on PREEMPT_RT leaves irqs on, so we may have interrupted the writer: do
 * not spin on the sequence or take the lock, give up instead.
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
 * Hard irq, in kvm->irq_srcu (which keeps the vCPUs and the IOAPIC); raw
 * locks only.  The destination vCPU's thread sets the pin, saving the work
 * item's two context switches on PREEMPT_RT.  PENDING is the token: set
 * here, taken exactly once, by a drainer (a vCPU thread or irqfd_shutdown())
 * or back here for the work item if the vCPU left KVM_RUN meanwhile; more
 * interrupts while it is out merge into it.
 */
static int kvm_irqfd_fp_set_pin(struct kvm_kernel_irqfd *irqfd,
				const struct kvm_kernel_irq_routing_entry *entry)
{
	struct kvm_irqfd_fastpath_vm *fpvm = irqfd->fastpath_vm;
	atomic_t *state = &irqfd->fastpath_state;
	struct kvm_vcpu *vcpu = NULL;
	int old;

	if (fpvm && READ_ONCE(irqfd_vcpu_inject))
		vcpu = kvm_arch_irqfd_pin_vcpu(irqfd->kvm, irqfd->gsi, entry);
	/* Nobody drains outside KVM_RUN; posted, a kick would cost an exit. */
	if (!vcpu || !READ_ONCE(vcpu->wants_to_run) ||
	    (READ_ONCE(vcpu->mode) == IN_GUEST_MODE &&
	     kvm_arch_irqfd_pin_posted(vcpu)))
		goto work;
	old = atomic_fetch_or(KVM_IRQFD_FP_PENDING | KVM_IRQFD_FP_QUEUED, state);
	if (old & KVM_IRQFD_FP_PENDING)
		return IRQ_BYPASS_FAST_MERGED;
	if (!(old & KVM_IRQFD_FP_QUEUED))
		llist_add(&irqfd->fastpath_node, &fpvm->pending);
	/* A vCPU thread can stay in KVM_RUN short of its run loop (uffd). */
	mod_timer(&irqfd->fastpath_timer, jiffies + 1 +
		  msecs_to_jiffies(READ_ONCE(irqfd_pin_wait_ms)));
	kvm_irqfd_fastpath_request(vcpu);
	kvm_make_request(KVM_REQ_UNBLOCK, vcpu);
	kvm_vcpu_kick(vcpu);
	/*
	 * Pairs with smp_mb() in kvm_irqfd_fastpath_vcpu_exit(): it sees our
	 * request, or we see that it left KVM_RUN and take the token back.
	 */
	smp_mb();
	if (READ_ONCE(vcpu->wants_to_run) ||
	    !(atomic_fetch_andnot(KVM_IRQFD_FP_PENDING, state) &
	      KVM_IRQFD_FP_PENDING))
		return IRQ_BYPASS_FAST_QUEUED;
work:
	/* Stock's irqfd_wakeup() merges the same way. */
	return schedule_work(&irqfd->inject) ? IRQ_BYPASS_FAST_QUEUED :
					       IRQ_BYPASS_FAST_MERGED;
}

/*
 * Timer (softirq, or its thread on PREEMPT_RT): the vCPU has not taken the
 * token in time; stock's work item sets the pin.  irqfd_shutdown() stops
 * the timer before it flushes the work.
 */
static void kvm_irqfd_fp_pin_timeout(struct timer_list *t)
{
	struct kvm_kernel_irqfd *irqfd = timer_container_of(irqfd, t, fastpath_timer);

	if (atomic_fetch_andnot(KVM_IRQFD_FP_PENDING, &irqfd->fastpath_state) &
	    KVM_IRQFD_FP_PENDING)
		schedule_work(&irqfd->inject);
}

/*
 * Process context, in kvm->irq_srcu from taking a token to setting the pin:
 * irqfd_resampler_shutdown() cannot overtake the raise, and a batched irqfd
 * stays allocated until its QUEUED is cleared.  Lockless: a later add
 * brings a new request.
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
		/* Last access: from here it may be queued again or freed. */
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
 * vCPU thread, preemptible, in kvm->srcu.  The VM's entry exists: an
 * irqfd that queued the request has one, until the VM is destroyed.
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
 * vCPU thread, preemptible.
 */
void kvm_irqfd_fastpath_vcpu_exit(struct kvm_vcpu *vcpu)
{
	/* Pairs with smp_mb() in kvm_irqfd_fp_set_pin(). */
	smp_mb();
	kvm_irqfd_fastpath_vcpu_run(vcpu);
}

/*
 * Hard irq, interrupts off on every kernel, in kvm->irq_srcu; raw locks
 * only.  The manager waits for it (synchronize_hardirq()) before
 * irqfd_shutdown() frees the irqfd.
 *
 * Return: an enum irq_bypass_fast_result, or an errno and the producer
 * signals the eventfd.
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

	/* Being deassigned: leave it to irqfd_wakeup() (a benign race). */
	if (list_empty(&irqfd->list)) {
		ret = -EBUSY;
		goto out;
	}

	ret = kvm_irqfd_fp_read_entry(irqfd, &entry);
	if (ret)
		goto out;

	/*
	 * IOAPIC/PIC pins take a spinlock_t, not in hard irq on PREEMPT_RT.
	 * Type 0: several routes (PIC and IOAPIC below 16) or none.
	 */
	if (entry.type == KVM_IRQ_ROUTING_IRQCHIP || !entry.type) {
		ret = kvm_irqfd_fp_set_pin(irqfd, &entry);
		goto out;
	}

	if (entry.type != KVM_IRQ_ROUTING_MSI) {
		ret = -EWOULDBLOCK;
		goto out;
	}

	/* The number of LAPICs that took it: 0 if none (as stock, dropped). */
	ret = kvm_arch_set_irq_inatomic(&entry, kvm,
					KVM_USERSPACE_IRQ_SOURCE_ID, 1, false);
	if (ret > 0)
		ret = IRQ_BYPASS_FAST_DELIVERED;
	else if (!ret)
		ret = IRQ_BYPASS_FAST_NO_TARGET;
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
 * A pin still pending is set here, or by the drainer whose batch holds it,
 * whose irq_srcu section is then waited for (rare).
 */
void kvm_irqfd_fastpath_shutdown(struct kvm_kernel_irqfd *irqfd)
{
	struct kvm *kvm = irqfd->kvm;
	int idx;

	irq_bypass_unregister_consumer(&irqfd->consumer);
	/* No handler arms it any more. */
	if (irqfd->fastpath_vm)
		timer_delete_sync(&irqfd->fastpath_timer);
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
 * @irqfd: the irqfd, from kvm_irqfd_assign() before it leaves kvm->irq_srcu
 *
 * Process context.  irqfd_shutdown()'s irq_srcu grace period only protects
 * an irqfd deactivated while kvm_irqfd_assign() sets it up.  The release
 * pairs with the acquire in kvm_irqfd_shutdown_needs_sync(): once it sees
 * the flag, every store of the assign path is visible and the wait can go.
 */
void kvm_irqfd_assign_done(struct kvm_kernel_irqfd *irqfd)
{
	atomic_fetch_or_release(KVM_IRQFD_FP_ASSIGNED, &irqfd->fastpath_state);
}

/**
 * kvm_irqfd_shutdown_needs_sync - whether irqfd_shutdown() must wait
 * @irqfd: the irqfd, from irqfd_shutdown() (process context)
 *
 * Return: true while kvm_irqfd_assign() may still be setting up @irqfd.
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
 * Process context, no irqfd or vCPU of the VM left.
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

/* Process context; NULL sends the irqfd's pins through its work item. */
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
 * Process context, in kvm->irq_srcu (the manager's mutex does not wait for
 * it): stock's registration in kvm_irqfd_assign(), fast unless
 * irqfd_fastpath=0.  A failure leaves the irqfd without bypass, as stock.
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
	/* Pins are queued for a vCPU only with a VM entry. */
	if (irqfd->fastpath_vm)
		timer_setup(&irqfd->fastpath_timer, kvm_irqfd_fp_pin_timeout, 0);

	if (irqfd_fastpath)
		ret = irq_bypass_register_fast_consumer(cons, kvm_irqfd_fp_handler);
	else
		ret = irq_bypass_register_consumer(cons);
	/* As stock, log only where it registers at all (posted interrupts). */
	if (ret && kvm_arch_has_irq_bypass())
		pr_info("irq bypass consumer (token %p) registration fails: %d\n",
			cons->token, ret);
}
