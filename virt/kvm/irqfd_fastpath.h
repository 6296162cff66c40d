/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The irqfd fast-path consumer, called from kvm_irqfd_assign() in
 * eventfd.c.
 */
#ifndef KVM_IRQFD_FASTPATH_H
#define KVM_IRQFD_FASTPATH_H

struct kvm_kernel_irqfd;

void kvm_irqfd_fastpath_register(struct kvm_kernel_irqfd *irqfd);

#endif /* KVM_IRQFD_FASTPATH_H */
