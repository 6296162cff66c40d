// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM_CAP_SPLIT_IRQCHIP_RESAMPLE: on a split irqchip, the EOI of a vector
 * that a level MSI route of an IOAPIC pin delivers runs the pin's irqfd
 * resamplers, and may skip the exit to userspace.
 *
 * Per-VM state is an entry of a table keyed by the struct kvm pointer
 * (include/linux/kvm_vm_table.h) rather than a field of struct kvm or
 * kvm_arch: changing those would change the CRCs of the symbols that stock
 * modules import from kvm.ko.  Entries are published under kvm->lock +
 * kvm->irq_lock, looked up locklessly from the VM's own ioctls and vCPUs
 * (every EOI of a split-irqchip level route), and freed when the VM is
 * destroyed.
 */
#include <linux/kvm_host.h>
#include <linux/kvm_vm_table.h>
#include <linux/kvm_kit.h>
#include <linux/overflow.h>
#include <linux/slab.h>

#include "irq.h"
#include "lapic.h"
#include "split_resample.h"

/* The level MSI route of one IOAPIC pin, as last seen by a routing update. */
struct split_resample_pin {
	u32 address_lo;
	u32 address_hi;
	u32 data;
	bool level_msi;
};

/* Field by field: the struct has tail padding, which memcmp() would read. */
static bool split_resample_pin_equal(const struct split_resample_pin *a,
				     const struct split_resample_pin *b)
{
	return a->address_lo == b->address_lo &&
	       a->address_hi == b->address_hi && a->data == b->data &&
	       a->level_msi == b->level_msi;
}

struct split_resample {
	struct kvm_vm_entry entry;
	u64 flags;		/* KVM_ENABLE_CAP args[0]; immutable */
	u32 nr_pins;		/* nr_reserved_ioapic_pins at enable; immutable */
	/* Pins whose route changed, to resample; atomic bitops. */
	unsigned long *route_changed;
	/* Pins raised by KVM_IRQ_LINE since their last EOI; atomic bitops. */
	unsigned long *user_raised;
	/* Protected by kvm->irq_lock. */
	struct split_resample_pin pin[];
};

/* One allocation: the struct, pin[nr_pins], then the two bitmaps. */
static struct split_resample *split_resample_alloc(u32 nr_pins)
{
	size_t head = struct_size_t(struct split_resample, pin, nr_pins);
	size_t map = BITS_TO_LONGS(nr_pins) * sizeof(long);
	struct split_resample *sr;

	head = ALIGN(head, sizeof(long));
	sr = kvzalloc(head + 2 * map, GFP_KERNEL_ACCOUNT);
	if (!sr)
		return NULL;
	sr->nr_pins = nr_pins;
	sr->route_changed = (unsigned long *)((char *)sr + head);
	sr->user_raised = (unsigned long *)((char *)sr + head + map);
	return sr;
}

static DEFINE_KVM_VM_TABLE(split_resample_vms);

/*
 * Every caller runs in an ioctl or a vCPU of @kvm and the entry is freed at
 * VM destroy, after both are gone: the result stays valid for the call.
 */
static struct split_resample *split_resample_get(struct kvm *kvm)
{
	struct kvm_vm_entry *e = kvm_vm_table_find(&split_resample_vms, kvm);

	return e ? container_of(e, struct split_resample, entry) : NULL;
}

/* The caller keeps @table alive (kvm->irq_srcu or kvm->irq_lock). */
static void split_resample_read_pin(struct kvm *kvm,
				    struct kvm_irq_routing_table *table,
				    u32 gsi, struct split_resample_pin *pin)
{
	struct kvm_kernel_irq_routing_entry *e;
	struct kvm_lapic_irq irq;

	memset(pin, 0, sizeof(*pin));
	if (gsi >= table->nr_rt_entries)
		return;
	hlist_for_each_entry(e, &table->map[gsi], link) {
		if (e->type != KVM_IRQ_ROUTING_MSI)
			continue;
		kvm_set_msi_irq(kvm, e, &irq);
		pin->address_lo = e->msi.address_lo;
		pin->address_hi = e->msi.address_hi;
		pin->data = e->msi.data;
		pin->level_msi = irq.trig_mode;
		return;
	}
}

/* Does @gsi have an in-kernel ack notifier (an irqfd resampler)? */
static bool split_resample_has_notifier(struct kvm *kvm, u32 gsi)
{
	struct kvm_irq_ack_notifier *kian;

	hlist_for_each_entry_srcu(kian, &kvm->irq_ack_notifier_list, link,
				  srcu_read_lock_held(&kvm->irq_srcu))
		if (kian->gsi == gsi)
			return true;
	return false;
}

/* On /dev/kvm (@kvm is NULL) or a VM: the supported flags, nonzero. */
int kvm_split_resample_check_extension(struct kvm *kvm)
{
	return KVM_SPLIT_RESAMPLE_VALID_FLAGS;
}

/*
 * kvm->lock serialises this with KVM_CAP_SPLIT_IRQCHIP; kvm->irq_lock inside
 * it makes the pin snapshot and the publication atomic with respect to
 * KVM_SET_GSI_ROUTING.  -EEXIST if already enabled, as
 * KVM_CAP_SPLIT_IRQCHIP answers.
 */
int kvm_split_resample_enable_cap(struct kvm *kvm, struct kvm_enable_cap *cap)
{
	struct kvm_irq_routing_table *table;
	struct split_resample *sr;
	u32 i, nr_pins;
	int r;

	if (cap->args[0] & ~KVM_SPLIT_RESAMPLE_VALID_FLAGS ||
	    cap->args[1] || cap->args[2] || cap->args[3])
		return -EINVAL;

	mutex_lock(&kvm->lock);
	r = -EINVAL;
	if (!irqchip_split(kvm))
		goto out_unlock;
	r = -EEXIST;
	if (split_resample_get(kvm))
		goto out_unlock;

	nr_pins = kvm->arch.nr_reserved_ioapic_pins;
	r = -ENOMEM;
	sr = split_resample_alloc(nr_pins);
	if (!sr)
		goto out_unlock;
	sr->flags = cap->args[0];

	mutex_lock(&kvm->irq_lock);
	table = srcu_dereference_check(kvm->irq_routing, &kvm->irq_srcu,
				       lockdep_is_held(&kvm->irq_lock));
	for (i = 0; i < nr_pins; i++)
		split_resample_read_pin(kvm, table, i, &sr->pin[i]);
	/* kvm->lock and the check above: there is no entry to collide with. */
	WARN_ON_ONCE(kvm_vm_table_insert(&split_resample_vms, kvm, &sr->entry));
	mutex_unlock(&kvm->irq_lock);
	r = 0;

out_unlock:
	mutex_unlock(&kvm->lock);
	return r;
}

/* After the vCPUs are gone: no EOI, ioctl or routing update can run. */
void kvm_split_resample_destroy_vm(struct kvm *kvm)
{
	struct kvm_vm_entry *e = kvm_vm_table_remove(&split_resample_vms, kvm);

	/* Other VMs' lookups may be walking its bucket. */
	if (e)
		kvfree_rcu(container_of(e, struct split_resample, entry),
			   entry.rcu);
}

/*
 * KVM_IRQFD_FLAG_RESAMPLE on a split irqchip: only with the capability, for
 * a reserved IOAPIC pin whose current route is an MSI route.  The route may
 * change later; the EOI path always looks at the current one.
 */
bool kvm_split_resample_irqfd_allowed(struct kvm *kvm, struct kvm_irqfd *args)
{
	struct kvm_kernel_irq_routing_entry *e;
	struct kvm_irq_routing_table *table;
	struct split_resample *sr = split_resample_get(kvm);
	bool msi = false;
	int idx;

	if (!sr || args->gsi >= sr->nr_pins)
		return false;

	idx = srcu_read_lock(&kvm->irq_srcu);
	table = srcu_dereference(kvm->irq_routing, &kvm->irq_srcu);
	if (args->gsi < table->nr_rt_entries)
		hlist_for_each_entry(e, &table->map[args->gsi], link)
			if (e->type == KVM_IRQ_ROUTING_MSI)
				msi = true;
	srcu_read_unlock(&kvm->irq_srcu, idx);
	return msi;
}

/*
 * A new routing table was just published.  Mark the pins whose level MSI
 * route appeared, changed or went away for one resample: an EOI of the old
 * vector can no longer be matched to them, and a line asserted while the
 * pin had no level route must be looked at again.  The resample itself
 * waits for kvm_split_resample_post_routing_update().
 */
void kvm_split_resample_routing_update(struct kvm *kvm)
{
	struct kvm_irq_routing_table *table;
	struct split_resample_pin now;
	struct split_resample *sr;
	u32 i;

	/* Also protects sr->pin[]. */
	lockdep_assert_held(&kvm->irq_lock);
	sr = split_resample_get(kvm);
	if (!sr)
		return;

	table = srcu_dereference_check(kvm->irq_routing, &kvm->irq_srcu,
				       lockdep_is_held(&kvm->irq_lock));
	for (i = 0; i < sr->nr_pins; i++) {
		split_resample_read_pin(kvm, table, i, &now);
		if ((sr->pin[i].level_msi || now.level_msi) &&
		    !split_resample_pin_equal(&now, &sr->pin[i]))
			set_bit(i, sr->route_changed);
		sr->pin[i] = now;
	}
}

/*
 * Resample the pins marked above, after kvm->irq_lock was dropped.  A
 * resample may make the device raise its line again with the new route's
 * vector, which a vCPU EOIs in the kernel only if its
 * ioapic_handled_vectors contain it.  So the scan request is made first,
 * after the marks were taken: it is then later than every table whose
 * changes are resampled (a concurrent update's marks may be taken here),
 * and a vCPU processes it before it next enters the guest.
 */
void kvm_split_resample_post_routing_update(struct kvm *kvm)
{
	struct split_resample *sr = split_resample_get(kvm);
	unsigned long *pending;
	u32 i;
	int idx;

	might_sleep();
	if (!sr || bitmap_empty(sr->route_changed, sr->nr_pins))
		return;
	pending = bitmap_zalloc(sr->nr_pins, GFP_KERNEL_ACCOUNT);
	if (!pending)
		return;	/* marks stay for the next update */
	for_each_set_bit(i, sr->route_changed, sr->nr_pins)
		if (test_and_clear_bit(i, sr->route_changed))
			__set_bit(i, pending);

	kvm_make_scan_ioapic_request(kvm);

	idx = srcu_read_lock(&kvm->irq_srcu);
	for_each_set_bit(i, pending, sr->nr_pins)
		kvm_notify_acked_gsi(kvm, i);
	srcu_read_unlock(&kvm->irq_srcu, idx);
	bitmap_free(pending);
}

/*
 * KVM_IRQ_LINE: the VMM's IOAPIC raised a pin itself (QEMU's does for
 * emulated level devices) and needs the EOI exit to clear Remote IRR.  The
 * next EOI of a vector routed from @gsi then exits even with
 * KVM_SPLIT_RESAMPLE_NO_EOI_EXIT.
 */
void kvm_split_resample_irq_line(struct kvm *kvm, u32 gsi, int level)
{
	struct split_resample *sr;

	/* A full in-kernel irqchip's lines pay no lookup. */
	if (!level || !irqchip_split(kvm))
		return;
	sr = split_resample_get(kvm);
	if (sr && gsi < sr->nr_pins &&
	    !test_bit(gsi, sr->user_raised))
		set_bit(gsi, sr->user_raised);
}

/*
 * The guest EOId @vector, which kvm_ioapic_handles_vector() says a split
 * irqchip route owns; vCPU thread, does not sleep.  Runs the ack notifiers
 * of every reserved pin whose level MSI route delivers @vector to @vcpu.
 * Returns true if the exit to userspace can be skipped: NO_EOI_EXIT was
 * requested, a pin matched, and every matching pin has an in-kernel
 * notifier and was not raised by userspace since its last EOI.
 */
bool kvm_split_resample_eoi(struct kvm_vcpu *vcpu, int vector)
{
	struct kvm_kernel_irq_routing_entry *e;
	struct kvm_irq_routing_table *table;
	struct kvm *kvm = vcpu->kvm;
	struct split_resample *sr = split_resample_get(kvm);
	bool matched = false, all_kernel = true;
	u32 gsi, nr_pins;
	int idx;

	if (!sr)
		return false;

	idx = srcu_read_lock(&kvm->irq_srcu);
	table = srcu_dereference(kvm->irq_routing, &kvm->irq_srcu);
	nr_pins = min(sr->nr_pins, table->nr_rt_entries);
	for (gsi = 0; gsi < nr_pins; gsi++) {
		hlist_for_each_entry(e, &table->map[gsi], link) {
			struct kvm_lapic_irq irq;

			if (e->type != KVM_IRQ_ROUTING_MSI)
				continue;
			kvm_set_msi_irq(kvm, e, &irq);
			if (!irq.trig_mode || irq.vector != vector ||
			    !kvm_apic_match_dest(vcpu, NULL, APIC_DEST_NOSHORT,
						 irq.dest_id, irq.dest_mode))
				continue;
			matched = true;
			if (test_and_clear_bit(gsi, sr->user_raised))
				all_kernel = false;
			if (split_resample_has_notifier(kvm, gsi))
				kvm_notify_acked_gsi(kvm, gsi);
			else
				all_kernel = false;
		}
	}
	srcu_read_unlock(&kvm->irq_srcu, idx);

	return (sr->flags & KVM_SPLIT_RESAMPLE_NO_EOI_EXIT) && matched &&
	       all_kernel;
}
