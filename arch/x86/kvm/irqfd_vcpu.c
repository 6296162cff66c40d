// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which vCPU thread sets an irqchip pin that a fast-path producer raised
 * from hard irq (virt/kvm/irqfd_fastpath.c): the one the interrupt goes
 * to, so that setting the pin needs no second kick.
 */

#include <linux/kvm_host.h>
#include <linux/kvm_irqfd_fastpath.h>

#include "ioapic.h"
#include "lapic.h"

/**
 * kvm_arch_irqfd_pin_vcpu - the vCPU to set an irqchip pin
 * @kvm: the VM
 * @gsi: the irqfd's GSI
 * @entry: its routing entry (type 0 for a GSI with several routes: the
 *         PIC's and the IOAPIC's below 16, where the IOAPIC pin is the GSI)
 *
 * Hard irq, in kvm->irq_srcu; takes no lock (the APIC map is read under
 * rcu_read_lock()).  The redirection entry is read without the IOAPIC's
 * lock, so the answer is a hint: a vCPU the guest just moved the pin away
 * from sets it all the same and kvm_set_irq() kicks the new destination.
 * Only the optimized APIC map is consulted, O(1) in the number of vCPUs:
 * kvm_intr_is_single_vcpu()'s fallback walks every vCPU, too long for hard
 * irq in a large VM.  The PIC's pins go to vCPU 0, where its ExtINT goes.
 * Anything else the map does not resolve to one vCPU (broadcast, several
 * destinations, a map KVM could not optimize, a masked pin) is left to the
 * work item, as in stock: a vCPU that is not the destination would only
 * pass the interrupt on, and one that stays in KVM_RUN without reaching
 * its run loop for long (a userfaultfd fault in post-copy migration)
 * would hold back interrupts meant for the others.
 *
 * Return: the vCPU, or NULL for the work item.
 */
struct kvm_vcpu *
kvm_arch_irqfd_pin_vcpu(struct kvm *kvm, int gsi,
			const struct kvm_kernel_irq_routing_entry *entry)
{
	struct kvm_ioapic *ioapic = kvm->arch.vioapic;
	union kvm_ioapic_redirect_entry e;
	struct kvm_lapic_irq irq = {};
	struct kvm_vcpu *vcpu;
	unsigned int pin = gsi;

	if (entry->type == KVM_IRQ_ROUTING_IRQCHIP) {
		if (entry->irqchip.irqchip != KVM_IRQCHIP_IOAPIC)
			return kvm_get_vcpu(kvm, 0);
		pin = entry->irqchip.pin;
	}
	if (!ioapic || pin >= IOAPIC_NUM_PINS)
		return NULL;

	e.bits = READ_ONCE(ioapic->redirtbl[pin].bits);
	if (e.fields.mask)
		return NULL;

	irq.vector = e.fields.vector;
	irq.delivery_mode = e.fields.delivery_mode << 8;
	irq.dest_mode = kvm_lapic_irq_dest_mode(!!e.fields.dest_mode);
	irq.trig_mode = e.fields.trig_mode;
	irq.shorthand = APIC_DEST_NOSHORT;
	irq.dest_id = e.fields.dest_id;
	if (kvm_intr_is_single_vcpu_fast(kvm, &irq, &vcpu))
		return vcpu;
	return NULL;
}

/**
 * kvm_arch_irqfd_pin_posted - whether a pin set elsewhere reaches @vcpu in
 *                             guest mode without a VM exit
 * @vcpu: the vCPU kvm_arch_irqfd_pin_vcpu() chose
 *
 * Hard irq, in kvm->irq_srcu; reads one flag.  With APICv or AVIC the
 * IOAPIC's vector is posted to a running vCPU, so the work item costs the
 * guest nothing; without, kvm_set_irq() kicks the vCPU out of guest mode
 * anyway, and it may as well set the pin itself.  A hint too: the flag can
 * change under us, which costs at most one exit or one work item.
 */
bool kvm_arch_irqfd_pin_posted(struct kvm_vcpu *vcpu)
{
	return kvm_vcpu_apicv_active(vcpu);
}
