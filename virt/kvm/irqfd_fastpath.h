/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM irqfd as an irqbypass fast-path consumer (kvm-irqbypass kit): the
 * interface between the hook in eventfd.c and irqfd_fastpath.c.
 */
#ifndef KVM_IRQFD_FASTPATH_H
#define KVM_IRQFD_FASTPATH_H

struct kvm_kernel_irqfd;

void kvm_irqfd_fastpath_register(struct kvm_kernel_irqfd *irqfd);

#endif /* KVM_IRQFD_FASTPATH_H */
