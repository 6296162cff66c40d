/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef VFIO_PCI_FASTPATH_H
#define VFIO_PCI_FASTPATH_H

#include <linux/atomic.h>
#include <linux/interrupt.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct eventfd_ctx;
struct irq_bypass_producer;
struct pci_dev;
struct vfio_pci_core_device;

typedef void (*vfio_pci_fastpath_signal_t)(void *opaque, void *data);

/**
 * struct vfio_pci_fastpath - per-vector state of the fast-path handlers
 * @producer: the vector's irqbypass producer (may never be registered)
 * @trigger: the MSI vector's eventfd; swapped under the running handlers
 * @pending: interrupts the irq thread still has to signal (PREEMPT_RT)
 * @fast: the vector was requested with the fast-path handlers
 * @throttled: PREEMPT_RT: past storm_budget, interrupts go to the thread
 * @window_count: PREEMPT_RT: interrupts since @window_start
 * @window_start: PREEMPT_RT: local_clock() at the start of the window
 * @lock: INTx: protects *@masked and DisINTx against the hard-irq handler,
 *	inside vdev->irqlock (a spinlock_t, which sleeps on PREEMPT_RT)
 * @pdev: INTx: the device
 * @masked: INTx: vfio's ctx->masked
 * @virq_disabled: INTx: vfio's vdev->virq_disabled
 * @signal: INTx: vfio's signal function, called with @opaque and @data
 * @opaque: INTx: first argument of @signal
 * @data: INTx: second argument of @signal
 * @dev_id: INTx: the cookie stock's handler was requested with
 * @pci_2_3: INTx: the device masks with DisINTx (else at the irqchip)
 *
 * Constant from request_irq() to free_irq(), except @pending (atomic),
 * *@masked (@lock), @trigger (WRITE_ONCE() under vdev->igate) and the
 * storm window (the vector's hard-irq handler only).
 */
struct vfio_pci_fastpath {
	struct irq_bypass_producer *producer;
	struct eventfd_ctx *trigger;
	atomic_t pending;
	bool fast;
	bool throttled;
	unsigned int window_count;
	u64 window_start;
	raw_spinlock_t lock;
	struct pci_dev *pdev;
	bool *masked;
	const bool *virq_disabled;
	vfio_pci_fastpath_signal_t signal;
	void *opaque;
	void *data;
	void *dev_id;
	bool pci_2_3;
};

int vfio_pci_fastpath_request_irq(struct vfio_pci_fastpath *fp,
				  unsigned int irq, const char *name,
				  struct eventfd_ctx *trigger,
				  struct irq_bypass_producer *producer);
int vfio_pci_fastpath_register_producer(struct vfio_pci_fastpath *fp);
bool vfio_pci_fastpath_swap_trigger(struct vfio_pci_core_device *vdev,
				    struct vfio_pci_fastpath *fp,
				    unsigned int irq, int fd, bool msix);
void vfio_pci_fastpath_free_irq(struct vfio_pci_fastpath *fp,
				unsigned int irq);

void vfio_pci_fastpath_intx_init(struct vfio_pci_fastpath *fp,
				 struct pci_dev *pdev, bool pci_2_3,
				 bool *masked, const bool *virq_disabled,
				 struct irq_bypass_producer *producer,
				 vfio_pci_fastpath_signal_t signal,
				 void *opaque, void *data);
int vfio_pci_fastpath_intx_request_irq(struct vfio_pci_fastpath *fp,
				       unsigned long irqflags,
				       const char *name, irq_handler_t handler,
				       void *dev_id);
void vfio_pci_fastpath_intx_set_trigger(struct vfio_pci_fastpath *fp,
					struct eventfd_ctx *trigger);
void vfio_pci_fastpath_intx_free_irq(struct vfio_pci_fastpath *fp);

#endif /* VFIO_PCI_FASTPATH_H */
