// SPDX-License-Identifier: GPL-2.0-only
/*
 * edu_msi: the MSI half of make check-qemu's msi variant, loaded in the L2
 * guest (Debian's generic kernel; no other in-tree driver takes an
 * arbitrary device with MSI there: vfio's no-IOMMU mode is not built).
 * Bound to QEMU's edu through driver_override, its probe enables MSI,
 * raises the edu's interrupt n times one after the other, waits for each
 * and checks that each arrived exactly once, prints
 * "edu-msi: raised R arrived A extra E timeouts T" and keeps the device.
 * Unbinding frees the vector and disables MSI, so the edu goes back to
 * INTx (the guest then binds uio_pci_generic): QEMU's MSI enable and
 * disable transitions of an assigned device.
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/pci.h>

#define EDU_IRQ_STATUS	0x24
#define EDU_IRQ_RAISE	0x60
#define EDU_IRQ_ACK	0x64

static unsigned int n = 20;
module_param(n, uint, 0444);
MODULE_PARM_DESC(n, "interrupts to raise at probe");

struct edu_msi {
	void __iomem *bar;
	atomic_t count;		/* interrupts handled, written by the handler */
	struct completion done;	/* completed by the handler per interrupt */
};

/*
 * Hard-irq context (the MSI's handler): acknowledge the edu, count.  No
 * lock: count is atomic, done is a completion (its own raw spinlock).
 */
static irqreturn_t edu_msi_irq(int irq, void *data)
{
	struct edu_msi *e = data;
	u32 status = readl(e->bar + EDU_IRQ_STATUS);

	if (!status)
		return IRQ_NONE;
	writel(status, e->bar + EDU_IRQ_ACK);
	atomic_inc(&e->count);
	complete(&e->done);
	return IRQ_HANDLED;
}

/* Process context (the driver core's probe): may sleep. */
static int edu_msi_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	unsigned int i, arrived = 0, extra = 0, timeouts = 0, c;
	struct edu_msi *e;
	int ret;

	e = devm_kzalloc(&pdev->dev, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	e->bar = pcim_iomap(pdev, 0, 0);
	if (!e->bar)
		return -ENOMEM;
	/* An MSI is a memory write of the device's: no bus master, no MSI. */
	pci_set_master(pdev);
	init_completion(&e->done);
	writel(readl(e->bar + EDU_IRQ_STATUS), e->bar + EDU_IRQ_ACK);
	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI);
	if (ret < 0)
		return ret;
	ret = request_irq(pci_irq_vector(pdev, 0), edu_msi_irq, 0, "edu_msi", e);
	if (ret) {
		pci_free_irq_vectors(pdev);
		return ret;
	}
	pci_set_drvdata(pdev, e);
	for (i = 0; i < n; i++) {
		reinit_completion(&e->done);
		writel(1, e->bar + EDU_IRQ_RAISE);
		if (!wait_for_completion_timeout(&e->done, 5 * HZ)) {
			timeouts++;
			writel(readl(e->bar + EDU_IRQ_STATUS), e->bar + EDU_IRQ_ACK);
			continue;
		}
		arrived++;
	}
	/* An interrupt after the last one would be one too many. */
	msleep(200);
	c = atomic_read(&e->count);
	if (c > arrived)
		extra = c - arrived;
	pr_info("edu-msi: raised %u arrived %u extra %u timeouts %u\n",
		n, arrived, extra, timeouts);
	return 0;
}

/* Process context (unbind): MSI off, the edu back to INTx. */
static void edu_msi_remove(struct pci_dev *pdev)
{
	struct edu_msi *e = pci_get_drvdata(pdev);

	free_irq(pci_irq_vector(pdev, 0), e);
	pci_free_irq_vectors(pdev);
}

/* No ID table: bound only through driver_override. */
static struct pci_driver edu_msi_driver = {
	.name = "edu_msi",
	.probe = edu_msi_probe,
	.remove = edu_msi_remove,
};
module_pci_driver(edu_msi_driver);

MODULE_DESCRIPTION("make check-qemu: MSI of QEMU's edu device, counted");
MODULE_LICENSE("GPL");
