// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-mmio MSI vectors and per-queue doorbells: Dragonball's vendor
 * extension (VendorID 0xdbfcdb00 | flags), on x86.
 * Documentation/virtio-mmio-msi.rst has the wire format and the design.
 *
 * x86 in 6.12 has no platform-device MSI: its MSI parent domain accepts
 * only PCI children and msi_create_irq_domain() is not exported.  So each
 * device gets its own small hierarchical irq domain directly under
 * x86_vector_domain: the vector domain gives every Linux irq a CPU vector
 * and composes the MSI message for it; this domain writes that message
 * into the device's vector through the latch registers and the UPDATE
 * command, and masks through the MASK/UNMASK commands.  A message in
 * compatibility format is what an interrupt-remapping IOMMU blocks, so
 * with interrupt remapping the driver keeps the legacy interrupt.
 *
 * Locking: vm_msi.lock (a raw spinlock: irq chip callbacks run under the
 * irq descriptor's raw lock with interrupts off, also on PREEMPT_RT)
 * serialises the latch + command sequences of one device.  The vector
 * array and the domain are created in find_vqs and destroyed in del_vqs,
 * both in process context under the virtio core's serialisation, with
 * every irq freed (and so its handler finished) before the domain goes.
 */
#include <linux/acpi.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/irq.h>
#include <linux/irqdomain.h>
#include <linux/module.h>
#include <linux/msi.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/virtio.h>
#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>
#include <asm/hw_irq.h>
#include <asm/irq_remapping.h>
#include <asm/irqdomain.h>

#include "virtio_mmio_msi.h"
#include "virtio_mmio_msi_regs.h"

static bool msi = true;
module_param(msi, bool, 0444);
MODULE_PARM_DESC(msi, "Use the MSI/doorbell extension when a device offers it (default: on)");

static unsigned int max_vectors;
module_param(max_vectors, uint, 0444);
MODULE_PARM_DESC(max_vectors, "At most this many MSI irqs per device, queues share the rest (0: queues + 1)");

struct vm_msi;

/* One Linux irq of a device: index 0 the config vector, then the queues. */
struct vm_msi_vec {
	struct vm_msi *m;
	u32 index;
	int virq;
	bool requested;
	char name[32];
};

struct vm_msi {
	struct device *dev;
	void __iomem *base;
	u64 window;		/* bytes of the MMIO window (doorbells fit in it) */
	u32 flags;		/* VM_MSI_F_* of the VendorID */
	u32 notify_reg;		/* QueueNotify as read at probe (the doorbell layout) */
	struct vm_msi_io io;
	raw_spinlock_t lock;	/* the latch + command sequences */
	/* Set in find_vqs before any queue exists, cleared in del_vqs. */
	bool db_on;
	struct vm_msi_doorbell db;
	struct virtio_device *vdev;
	struct fwnode_handle *fwnode;
	struct irq_domain *domain;
	u32 nq;
	u32 nirq;
	struct vm_msi_vec *vecs;
};

/* Register access for virtio_mmio_msi_regs.h: any context, never sleeps. */
static u32 vm_msi_rd32(void *ctx, u32 off)
{
	struct vm_msi *m = ctx;

	return readl(m->base + off);
}

static void vm_msi_wr32(void *ctx, u32 off, u32 val)
{
	struct vm_msi *m = ctx;

	writel(val, m->base + off);
}

static u16 vm_msi_rd16(void *ctx, u32 off)
{
	struct vm_msi *m = ctx;

	return readw(m->base + off);
}

static void vm_msi_wr16(void *ctx, u32 off, u16 val)
{
	struct vm_msi *m = ctx;

	writew(val, m->base + off);
}

/*
 * Compose @d's message from the vector domain and write it into every
 * device vector @d serves.  Hard-irq or process context with interrupts
 * off (irq activate and set_affinity run under the descriptor's raw lock);
 * takes m->lock.
 */
static int vm_msi_write_msg(struct irq_data *d)
{
	struct vm_msi *m = irq_data_get_irq_chip_data(d);
	struct irq_data *parent = d->parent_data;
	struct vm_msi_msg vmsg;
	struct msi_msg msg = {};
	unsigned long flags;
	int ret;

	if (!parent->chip->irq_compose_msi_msg)
		return -EINVAL;
	parent->chip->irq_compose_msi_msg(parent, &msg);
	vmsg.addr_lo = msg.address_lo;
	vmsg.addr_hi = msg.address_hi;
	vmsg.data = msg.data;
	raw_spin_lock_irqsave(&m->lock, flags);
	ret = vm_msi_io_program_irq(&m->io, irqd_to_hwirq(d), m->nirq, m->nq,
				    &vmsg);
	raw_spin_unlock_irqrestore(&m->lock, flags);
	return ret;
}

/* irq chip callbacks: under the descriptor's raw lock, interrupts off. */
static void vm_msi_mask_one(struct irq_data *d, bool mask)
{
	struct vm_msi *m = irq_data_get_irq_chip_data(d);
	unsigned long flags;

	raw_spin_lock_irqsave(&m->lock, flags);
	vm_msi_io_mask_irq(&m->io, irqd_to_hwirq(d), m->nirq, m->nq, mask);
	raw_spin_unlock_irqrestore(&m->lock, flags);
}

static void vm_msi_irq_mask(struct irq_data *d)
{
	vm_msi_mask_one(d, true);
}

static void vm_msi_irq_unmask(struct irq_data *d)
{
	vm_msi_mask_one(d, false);
}

/*
 * The vector domain moves the irq to a vector on the new CPUs (the old one
 * is released after the first interrupt on the new one, see
 * irq_chip_ack_parent); then the device vectors get the new message, each
 * masked while it changes (vm_msi_io_program_irq).
 */
static int vm_msi_set_affinity(struct irq_data *d, const struct cpumask *mask,
			       bool force)
{
	struct irq_data *parent = d->parent_data;
	int ret;

	ret = parent->chip->irq_set_affinity(parent, mask, force);
	if (ret < 0 || ret == IRQ_SET_MASK_OK_DONE)
		return ret;
	if (vm_msi_write_msg(d))
		dev_warn_ratelimited(((struct vm_msi *)irq_data_get_irq_chip_data(d))->dev,
				     "MSI vector of irq %u not updated\n", d->irq);
	return ret;
}

static struct irq_chip vm_msi_chip = {
	.name			= "virtio-mmio-msi",
	.irq_ack		= irq_chip_ack_parent,
	.irq_mask		= vm_msi_irq_mask,
	.irq_unmask		= vm_msi_irq_unmask,
	.irq_retrigger		= irq_chip_retrigger_hierarchy,
	.irq_set_affinity	= vm_msi_set_affinity,
	.flags			= IRQCHIP_SKIP_SET_WAKE,
};

/* Process context (__irq_domain_alloc_irqs, under the domain mutex). */
static int vm_msi_domain_alloc(struct irq_domain *domain, unsigned int virq,
			       unsigned int nr_irqs, void *arg)
{
	struct irq_alloc_info *info = arg;
	unsigned int i;
	int ret;

	ret = irq_domain_alloc_irqs_parent(domain, virq, nr_irqs, arg);
	if (ret)
		return ret;
	for (i = 0; i < nr_irqs; i++)
		irq_domain_set_info(domain, virq + i, info->hwirq + i, &vm_msi_chip,
				    domain->host_data, handle_edge_irq, NULL, "edge");
	return 0;
}

/*
 * request_irq: the vector domain has assigned a CPU vector (it activates
 * first); write the message.  Interrupts off, descriptor lock held.
 */
static int vm_msi_domain_activate(struct irq_domain *domain,
				  struct irq_data *d, bool reserve)
{
	return vm_msi_write_msg(d);
}

static const struct irq_domain_ops vm_msi_domain_ops = {
	.alloc		= vm_msi_domain_alloc,
	.free		= irq_domain_free_irqs_common,
	.activate	= vm_msi_domain_activate,
};

/*
 * Is interrupt remapping possible here?  The kernel's own flag is not
 * exported, so: an IOMMU whose ACPI table announces remapping (DMAR with
 * INTR_REMAP, or an AMD IVRS), or remapping with posting.  Conservative:
 * a kernel booted with intremap=off still gets the legacy interrupt.
 */
static bool vm_msi_remapping(void)
{
	struct acpi_table_header *hdr;
	bool ir = irq_remapping_cap(IRQ_POSTING_CAP);

	if (acpi_disabled)
		return ir;
	if (ACPI_SUCCESS(acpi_get_table(ACPI_SIG_DMAR, 0, &hdr))) {
		if (((struct acpi_table_dmar *)hdr)->flags & ACPI_DMAR_INTR_REMAP)
			ir = true;
		acpi_put_table(hdr);
	}
	if (ACPI_SUCCESS(acpi_get_table(ACPI_SIG_IVRS, 0, &hdr))) {
		ir = true;
		acpi_put_table(hdr);
	}
	return ir;
}

/* Process context. */
struct vm_msi *vm_msi_probe(struct platform_device *pdev, void __iomem *base,
			    u32 version)
{
	struct resource *res = platform_get_resource(pdev, IORESOURCE_MEM, 0);
	struct vm_msi *m;
	u32 vendor, flags;

	if (version != 2 || !res)
		return NULL;
	vendor = readl(base + VIRTIO_MMIO_VENDOR_ID);
	flags = vm_msi_vendor_flags(vendor);
	if (!(flags & (VM_MSI_F_MSI | VM_MSI_F_DOORBELL)))
		return NULL;
	if (!msi) {
		dev_info(&pdev->dev, "MSI/doorbell extension 0x%x off (msi=0)\n", flags);
		return NULL;
	}
	m = devm_kzalloc(&pdev->dev, sizeof(*m), GFP_KERNEL);
	if (!m)
		return NULL;
	m->dev = &pdev->dev;
	m->base = base;
	m->window = resource_size(res);
	m->io = (struct vm_msi_io){ m, vm_msi_rd32, vm_msi_wr32, vm_msi_rd16, vm_msi_wr16 };
	raw_spin_lock_init(&m->lock);
	/* The doorbell layout is checked against the queue count later. */
	m->flags = vm_msi_io_probe(&m->io, vendor, 1, m->window, &m->db);
	if (flags & VM_MSI_F_DOORBELL)
		m->notify_reg = readl(base + VIRTIO_MMIO_QUEUE_NOTIFY);
	dev_info(m->dev, "extension 0x%x: MSI %s, doorbells %s\n", flags,
		 m->flags & VM_MSI_F_MSI ? "offered" : "absent",
		 m->flags & VM_MSI_F_DOORBELL ? "offered" : "absent");
	return m;
}

/* Process context: frees what vm_msi_setup built, device back to legacy. */
static void vm_msi_teardown(struct vm_msi *m)
{
	u32 i;

	for (i = 0; m->vecs && i < m->nirq; i++) {
		struct vm_msi_vec *v = &m->vecs[i];

		if (v->requested)
			free_irq(v->virq, v);
		if (v->virq > 0)
			irq_dispose_mapping(v->virq);
	}
	kfree(m->vecs);
	m->vecs = NULL;
	m->nirq = 0;
	if (m->domain)
		irq_domain_remove(m->domain);
	m->domain = NULL;
	if (m->fwnode)
		irq_domain_free_fwnode(m->fwnode);
	m->fwnode = NULL;
	/* Refused on a live device, which only a reset makes legacy again. */
	vm_msi_io_enable(&m->io, false);
}

/*
 * Hard irq, force-threaded on PREEMPT_RT like the distro's vm_interrupt()
 * (virtio_config_changed() takes a spinlock_t): a config change, vector 0.
 */
static irqreturn_t vm_msi_config_irq(int irq, void *opaque)
{
	struct vm_msi_vec *v = opaque;

	virtio_config_changed(v->m->vdev);
	return IRQ_HANDLED;
}

/*
 * Hard irq (threaded on PREEMPT_RT, as above): the queues this irq
 * serves (queue i on device vector i + 1; with the sharing fallback
 * several queues per irq).
 */
static irqreturn_t vm_msi_queue_irq(int irq, void *opaque)
{
	struct vm_msi_vec *v = opaque;
	struct vm_msi *m = v->m;
	irqreturn_t ret = IRQ_NONE;
	struct virtqueue *vq;

	virtio_device_for_each_vq(m->vdev, vq) {
		u32 vec = vm_msi_vector_of_queue(vq->index);

		if (vm_msi_irq_of_vector(vec, m->nirq) == v->index)
			ret |= vring_interrupt(irq, vq);
	}
	return ret;
}

/* Process context: @nirq irqs from a new domain, requested. */
static int vm_msi_setup(struct vm_msi *m, u32 nirq)
{
	struct irq_alloc_info info = {};
	u32 i;
	int ret;

	m->nirq = nirq;
	m->vecs = kcalloc(nirq, sizeof(*m->vecs), GFP_KERNEL);
	if (!m->vecs)
		return -ENOMEM;
	m->fwnode = irq_domain_alloc_named_fwnode(dev_name(m->dev));
	if (!m->fwnode)
		return -ENOMEM;
	m->domain = irq_domain_create_hierarchy(x86_vector_domain, 0, nirq,
						m->fwnode, &vm_msi_domain_ops, m);
	if (!m->domain)
		return -ENOMEM;
	/* Before any UPDATE: the device ignores the latches in legacy mode. */
	ret = vm_msi_io_enable(&m->io, true);
	if (ret)
		return ret;
	for (i = 0; i < nirq; i++) {
		struct vm_msi_vec *v = &m->vecs[i];

		v->m = m;
		v->index = i;
		info.hwirq = i;
		v->virq = __irq_domain_alloc_irqs(m->domain, -1, 1, dev_to_node(m->dev),
						  &info, false, NULL);
		if (v->virq < 0)
			return v->virq;
		if (i == 0)
			snprintf(v->name, sizeof(v->name), "%s-config", dev_name(&m->vdev->dev));
		else
			snprintf(v->name, sizeof(v->name), "%s-msi%u", dev_name(&m->vdev->dev), i);
		ret = request_irq(v->virq, i ? vm_msi_queue_irq : vm_msi_config_irq, 0,
				  v->name, v);
		if (ret)
			return ret;
		v->requested = true;
	}
	return 0;
}

/* Process context (virtio_mmio's find_vqs). */
int vm_msi_find_vqs(struct vm_msi *m, struct virtio_device *vdev, unsigned int nq)
{
	u32 nirq, avail;
	int ret;

	if (!m)
		return -ENODEV;
	m->vdev = vdev;
	m->nq = nq;
	m->db_on = (m->flags & VM_MSI_F_DOORBELL) &&
		!vm_msi_doorbell_decode(m->notify_reg, nq, m->window, &m->db);
	if (!(m->flags & VM_MSI_F_MSI))
		return -ENODEV;
	if (vm_msi_remapping()) {
		dev_info(m->dev, "interrupt remapping: legacy interrupt\n");
		return -ENODEV;
	}
	avail = max_vectors ? max_vectors : nq + 1;
	/* All vectors, else the sharing fallback with two irqs. */
	for (;;) {
		nirq = vm_msi_plan(nq, avail);
		if (!nirq)
			break;
		ret = vm_msi_setup(m, nirq);
		if (!ret) {
			dev_info(m->dev, "%u MSI irqs for %u queues, doorbells %s\n",
				 nirq, nq, m->db_on ? "on" : "off");
			return 0;
		}
		vm_msi_teardown(m);
		dev_info(m->dev, "%u MSI irqs: %d\n", nirq, ret);
		if (nirq <= 2)
			break;
		avail = 2;
	}
	return -ENODEV;
}

/* Process context (virtio_mmio's del_vqs, after the reset). */
bool vm_msi_del_vqs(struct vm_msi *m)
{
	bool was;

	if (!m)
		return false;
	was = m->nirq;
	vm_msi_teardown(m);
	m->db_on = false;
	return was;
}

/* Process context. */
bool vm_msi_synchronize(struct vm_msi *m)
{
	u32 i;

	if (!m || !m->nirq)
		return false;
	for (i = 0; i < m->nirq; i++)
		synchronize_irq(m->vecs[i].virq);
	return true;
}

/* Any context: the queue's doorbell, or QueueNotify. */
void __iomem *vm_msi_notify_addr(struct vm_msi *m, void __iomem *base,
				 unsigned int index)
{
	if (m && m->db_on)
		return base + vm_msi_doorbell_off(&m->db, index);
	return base + VIRTIO_MMIO_QUEUE_NOTIFY;
}
