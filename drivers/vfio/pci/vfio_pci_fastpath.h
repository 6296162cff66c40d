/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfio-pci MSI/MSI-X fast path, called from vfio_pci_intrs.c.
 */
#ifndef VFIO_PCI_FASTPATH_H
#define VFIO_PCI_FASTPATH_H

#include <linux/atomic.h>
#include <linux/types.h>

struct eventfd_ctx;
struct irq_bypass_producer;

/**
 * struct vfio_pci_fastpath - per-vector state of the MSI/MSI-X handler
 * @producer: the vector's irqbypass producer (may never be registered)
 * @trigger: the vector's eventfd, referenced by the vector's context
 * @pending: interrupts the irq thread still has to signal (PREEMPT_RT)
 * @fast: the vector was requested with the fast-path handlers
 *
 * Embedded in the vector's context; all fields are written before
 * request_threaded_irq() and stay constant until free_irq() returns, except
 * @pending (atomic, primary handler and irq thread).
 */
struct vfio_pci_fastpath {
	struct irq_bypass_producer *producer;
	struct eventfd_ctx *trigger;
	atomic_t pending;
	bool fast;
};

int vfio_pci_fastpath_request_irq(struct vfio_pci_fastpath *fp,
				  unsigned int irq, const char *name,
				  struct eventfd_ctx *trigger,
				  struct irq_bypass_producer *producer);
int vfio_pci_fastpath_register_producer(struct vfio_pci_fastpath *fp);
void vfio_pci_fastpath_free_irq(struct vfio_pci_fastpath *fp,
				unsigned int irq);

#endif /* VFIO_PCI_FASTPATH_H */
