// SPDX-License-Identifier: GPL-2.0-only

#include <linux/kvm_host.h>
#include <linux/kvm_irqfd_fastpath.h>

#include "ioapic.h"
#include "lapic.h"

/**
 * kvm_arch_irqfd_pin_vcpu - the vCPU to set an irqchip pin
 * @kvm: the VM
 * @gsi: the irqfd's GSI
 * @entry: its routing entry (type 0: several routes, the IOAPIC pin is @gsi)
 *
 * Hard irq, in kvm->irq_srcu; lockless, so a hint.  Only the optimized APIC
 * map is read (O(1)); without one destination the work item sets the pin.
 * Return: the vCPU (vCPU 0 for the PIC, where ExtINT goes), or NULL.
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
 * kvm_arch_irqfd_pin_posted - whether @vcpu gets IOAPIC vectors posted
 * @vcpu: kvm_arch_irqfd_pin_vcpu()'s choice; hard irq, in kvm->irq_srcu
 * Return: true with APICv or AVIC active; a hint, it may change under us.
 */
bool kvm_arch_irqfd_pin_posted(struct kvm_vcpu *vcpu)
{
	return kvm_vcpu_apicv_active(vcpu);
}
