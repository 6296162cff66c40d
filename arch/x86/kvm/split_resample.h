/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM_CAP_SPLIT_IRQCHIP_RESAMPLE, called from x86.c, irq.c, irq_comm.c and
 * lapic.c.
 */
#ifndef ARCH_X86_KVM_SPLIT_RESAMPLE_H
#define ARCH_X86_KVM_SPLIT_RESAMPLE_H

#include <linux/kvm_host.h>
#include <linux/kvm_kit.h>

int kvm_split_resample_check_extension(struct kvm *kvm);
int kvm_split_resample_enable_cap(struct kvm *kvm, struct kvm_enable_cap *cap);
void kvm_split_resample_destroy_vm(struct kvm *kvm);
bool kvm_split_resample_irqfd_allowed(struct kvm *kvm, struct kvm_irqfd *args);
void kvm_split_resample_routing_update(struct kvm *kvm);
void kvm_split_resample_post_routing_update(struct kvm *kvm);
void kvm_split_resample_irq_line(struct kvm *kvm, u32 gsi, int level);
bool kvm_split_resample_eoi(struct kvm_vcpu *vcpu, int vector);

#endif /* ARCH_X86_KVM_SPLIT_RESAMPLE_H */
