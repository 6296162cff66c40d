/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hooks virtio_mmio.c calls (patches/guest-6.12/): MSI vectors and
 * per-queue doorbells of Dragonball's virtio-mmio extension.  Each takes
 * the device's struct vm_msi, NULL when the device lacks the extension or
 * the module parameter turned it off; NULL always means "legacy".
 */
#ifndef VIRTIO_MMIO_MSI_H
#define VIRTIO_MMIO_MSI_H

#include <linux/platform_device.h>
#include <linux/virtio.h>

struct vm_msi;

/* Process context (probe): NULL unless the VendorID has the extension. */
struct vm_msi *vm_msi_probe(struct platform_device *pdev, void __iomem *base,
			    u32 version);
/*
 * Process context (find_vqs, before the queues are set up): 0 when the
 * device now runs on MSI vectors (the legacy irq must not be requested),
 * <0 for the legacy interrupt.  Also decides the doorbells.
 */
int vm_msi_find_vqs(struct vm_msi *m, struct virtio_device *vdev,
		    unsigned int nq);
/* Process context (del_vqs): true if the MSI vectors were in use (freed). */
bool vm_msi_del_vqs(struct vm_msi *m);
/* Process context: wait for running vector handlers. */
bool vm_msi_synchronize(struct vm_msi *m);
/* Any context (notify): where queue @index's notification is written. */
void __iomem *vm_msi_notify_addr(struct vm_msi *m, void __iomem *base,
				 unsigned int index);

#endif /* VIRTIO_MMIO_MSI_H */
