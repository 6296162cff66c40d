/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef VIRTIO_MMIO_MSI_H
#define VIRTIO_MMIO_MSI_H

#include <linux/platform_device.h>
#include <linux/virtio.h>

struct vm_msi;

/* Process context; NULL without the extension, meaning legacy to all hooks. */
struct vm_msi *vm_msi_probe(struct platform_device *pdev, void __iomem *base,
			    u32 version);
/* Process context; 0 if now on MSI vectors (no legacy irq), <0 if legacy. */
int vm_msi_find_vqs(struct vm_msi *m, struct virtio_device *vdev,
		    unsigned int nq);
/* Process context; true if the MSI vectors were in use (now freed). */
bool vm_msi_del_vqs(struct vm_msi *m);
/* Process context; waits for running vector handlers. */
bool vm_msi_synchronize(struct vm_msi *m);
/* Any context; where queue @index's notification is written. */
void __iomem *vm_msi_notify_addr(struct vm_msi *m, void __iomem *base,
				 unsigned int index);

#endif /* VIRTIO_MMIO_MSI_H */
