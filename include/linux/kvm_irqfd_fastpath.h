/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The irqfd fast-path consumer (virt/kvm/irqfd_fastpath.c): registered from
 * kvm_irqfd_assign() and torn down from irqfd_shutdown() in eventfd.c; an
 * irqchip pin that a producer raised from hard irq is set by a vCPU thread,
 * from the x86 run loop and when KVM_RUN returns (kvm_main.c).  The x86
 * part is in arch/x86/kvm/irqfd_vcpu.c.
 */
#ifndef __LINUX_KVM_IRQFD_FASTPATH_H
#define __LINUX_KVM_IRQFD_FASTPATH_H

#include <linux/kvm_host.h>

struct kvm_kernel_irqfd;

void kvm_irqfd_fastpath_register(struct kvm_kernel_irqfd *irqfd);
void kvm_irqfd_fastpath_shutdown(struct kvm_kernel_irqfd *irqfd);
void kvm_irqfd_assign_done(struct kvm_kernel_irqfd *irqfd);
bool kvm_irqfd_shutdown_needs_sync(struct kvm_kernel_irqfd *irqfd);
void kvm_irqfd_fastpath_vcpu_run(struct kvm_vcpu *vcpu);
void kvm_irqfd_fastpath_vcpu_exit(struct kvm_vcpu *vcpu);
void kvm_irqfd_fastpath_destroy_vm(struct kvm *kvm);

/*
 * An architecture whose vCPU threads set fast-path pins defines
 * KVM_REQ_IRQFD_INJECT and these hooks (x86: arch/x86/kvm/irqfd_vcpu.c);
 * elsewhere every pin goes through the irqfd's work item, as in stock.
 */
#ifdef KVM_REQ_IRQFD_INJECT
struct kvm_vcpu *
kvm_arch_irqfd_pin_vcpu(struct kvm *kvm, int gsi,
			const struct kvm_kernel_irq_routing_entry *entry);
bool kvm_arch_irqfd_pin_posted(struct kvm_vcpu *vcpu);

static inline void kvm_irqfd_fastpath_request(struct kvm_vcpu *vcpu)
{
	kvm_make_request(KVM_REQ_IRQFD_INJECT, vcpu);
}

static inline bool kvm_irqfd_fastpath_check_request(struct kvm_vcpu *vcpu)
{
	return kvm_check_request(KVM_REQ_IRQFD_INJECT, vcpu);
}
#else
static inline struct kvm_vcpu *
kvm_arch_irqfd_pin_vcpu(struct kvm *kvm, int gsi,
			const struct kvm_kernel_irq_routing_entry *entry)
{
	return NULL;
}

static inline bool kvm_arch_irqfd_pin_posted(struct kvm_vcpu *vcpu)
{
	return false;
}

static inline void kvm_irqfd_fastpath_request(struct kvm_vcpu *vcpu)
{
}

static inline bool kvm_irqfd_fastpath_check_request(struct kvm_vcpu *vcpu)
{
	return false;
}
#endif

#endif /* __LINUX_KVM_IRQFD_FASTPATH_H */
