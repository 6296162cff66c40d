/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-mmio MSI and per-queue doorbells, Dragonball's vendor extension:
 * the register encoding and the driver's programming sequences, free of
 * kernel services so that the same code builds in virtio_mmio.ko and in
 * the userspace test (tools/testing/virtio-mmio-msi/).
 * Documentation/virtio-mmio-msi.rst has the wire format.
 *
 * Nothing here sleeps or locks: the callers serialise a device's latch and
 * command sequences (the kernel under vm_msi.lock, a raw spinlock).
 */
#ifndef VIRTIO_MMIO_MSI_REGS_H
#define VIRTIO_MMIO_MSI_REGS_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#endif

/* VendorID: 0xdbfcdb00 | feature flags in the low byte. */
#define VM_MSI_VENDOR			0xdbfcdb00u
#define VM_MSI_VENDOR_MASK		0xffffff00u
#define VM_MSI_F_INTR_USED		0x1u	/* InterruptStatus always has VRING */
#define VM_MSI_F_MSI			0x2u	/* the MSI registers exist */
#define VM_MSI_F_DOORBELL		0x4u	/* QueueNotify reads the doorbell layout */

/* Registers of the extension (offsets in the device's MMIO window). */
#define VM_MSI_REG_STATUS		0x070	/* the virtio Status register */
#define VM_MSI_REG_QUEUE_NOTIFY		0x050
#define VM_MSI_REG_CSR			0x0c0	/* 16 bit */
#define VM_MSI_REG_CMD			0x0c2	/* 16 bit */
#define VM_MSI_REG_ADDR_LO		0x0c4	/* 32 bit latch */
#define VM_MSI_REG_ADDR_HI		0x0c8	/* 32 bit latch */
#define VM_MSI_REG_DATA			0x0cc	/* 32 bit latch */
#define VM_MSI_REG_CONFIG		0x100	/* device config space starts here */

#define VM_MSI_CSR_ENABLE		0x8000u	/* read: supported; write: enable */
#define VM_MSI_CMD_OP_SHIFT		12
#define VM_MSI_CMD_ARG_MASK		0x0fffu
#define VM_MSI_CMD_UPDATE		1u	/* latch address/data into a vector */
#define VM_MSI_CMD_MASK			2u
#define VM_MSI_CMD_UNMASK		3u

#define VM_MSI_STATUS_DRIVER_OK		0x04u
#define VM_MSI_STATUS_FAILED		0x80u

/* Vector 0 signals a config change, vector i + 1 queue i. */
#define VM_MSI_CONFIG_VECTOR		0u

/*
 * Register access for the sequences below: readl/writel/readw/writew on
 * the device in the kernel, the device model in the test.
 */
struct vm_msi_io {
	void *ctx;
	u32 (*rd32)(void *ctx, u32 off);
	void (*wr32)(void *ctx, u32 off, u32 val);
	u16 (*rd16)(void *ctx, u32 off);
	void (*wr16)(void *ctx, u32 off, u16 val);
};

/* One MSI message, as the parent irq domain composes it. */
struct vm_msi_msg {
	u32 addr_lo;
	u32 addr_hi;
	u32 data;
};

/* Where queue i's doorbell is: base + offset + scale * i. */
struct vm_msi_doorbell {
	u32 offset;
	u32 scale;
};

/* The extension's flags in a VendorID, 0 when the device has none. */
static inline u32 vm_msi_vendor_flags(u32 vendor)
{
	if ((vendor & VM_MSI_VENDOR_MASK) != VM_MSI_VENDOR)
		return 0;
	return vendor & ~VM_MSI_VENDOR_MASK;
}

/* A command word; -EINVAL for an unknown op or an argument over 12 bits. */
static inline int vm_msi_cmd(u32 op, u32 arg)
{
	if (op < VM_MSI_CMD_UPDATE || op > VM_MSI_CMD_UNMASK ||
	    arg > VM_MSI_CMD_ARG_MASK)
		return -EINVAL;
	return (int)(op << VM_MSI_CMD_OP_SHIFT | arg);
}

/*
 * Decode the QueueNotify read of a doorbell device: offset in bits 15:0,
 * scale in 31:16.  Refused (-EINVAL) unless every doorbell of @nq queues
 * is a naturally aligned 32-bit register past the config space and inside
 * a window of @window bytes: then the driver writes QueueNotify as usual.
 */
static inline int vm_msi_doorbell_decode(u32 val, u32 nq, u64 window,
					 struct vm_msi_doorbell *db)
{
	u32 off = val & 0xffff, scale = val >> 16;
	u64 end;

	if (!nq || off < VM_MSI_REG_CONFIG || off % 4 || scale < 4 || scale % 4)
		return -EINVAL;
	end = (u64)off + (u64)scale * (nq - 1) + 4;
	if (end > window)
		return -EINVAL;
	db->offset = off;
	db->scale = scale;
	return 0;
}

static inline u32 vm_msi_doorbell_off(const struct vm_msi_doorbell *db,
				      u32 queue)
{
	return db->offset + db->scale * queue;
}

/*
 * How many Linux irqs a device with @nq queues gets when the irq domain
 * can give at most @avail: one per device vector (nq + 1) if it can,
 * else the sharing fallback down to 2 (config alone, the queues sharing
 * the rest round robin); 0 means legacy (fewer than 2, or no queue).
 */
static inline u32 vm_msi_plan(u32 nq, u32 avail)
{
	u32 want = nq + 1;

	if (!nq || nq > VM_MSI_CMD_ARG_MASK - 1 || avail < 2)
		return 0;
	return want < avail ? want : avail;
}

/* The Linux irq (index 0..nirq-1) that serves device vector @vec. */
static inline u32 vm_msi_irq_of_vector(u32 vec, u32 nirq)
{
	if (vec == VM_MSI_CONFIG_VECTOR || nirq < 2)
		return 0;
	return 1 + (vec - 1) % (nirq - 1);
}

static inline u32 vm_msi_vector_of_queue(u32 queue)
{
	return queue + 1;
}

static inline bool vm_msi_driver_ok(const struct vm_msi_io *io)
{
	return io->rd32(io->ctx, VM_MSI_REG_STATUS) & VM_MSI_STATUS_DRIVER_OK;
}

/*
 * Does the device offer what its VendorID says?  Returns the flags the
 * driver may use: MSI only when the CSR reads "supported", the doorbell
 * only when its layout decodes for @nq queues in @window bytes (written
 * to @db).
 */
static inline u32 vm_msi_io_probe(const struct vm_msi_io *io, u32 vendor,
				  u32 nq, u64 window,
				  struct vm_msi_doorbell *db)
{
	u32 flags = vm_msi_vendor_flags(vendor), ok = 0;

	if ((flags & VM_MSI_F_MSI) &&
	    (io->rd16(io->ctx, VM_MSI_REG_CSR) & VM_MSI_CSR_ENABLE))
		ok |= VM_MSI_F_MSI;
	if ((flags & VM_MSI_F_DOORBELL) &&
	    !vm_msi_doorbell_decode(io->rd32(io->ctx, VM_MSI_REG_QUEUE_NOTIFY),
				    nq, window, db))
		ok |= VM_MSI_F_DOORBELL;
	return ok;
}

/*
 * Switch the device's interrupt mode.  Dragonball fails a device whose
 * mode changes after DRIVER_OK, so that is refused here (-EBUSY).
 */
static inline int vm_msi_io_enable(const struct vm_msi_io *io, bool on)
{
	if (vm_msi_driver_ok(io))
		return -EBUSY;
	io->wr16(io->ctx, VM_MSI_REG_CSR, on ? VM_MSI_CSR_ENABLE : 0);
	return 0;
}

static inline int vm_msi_io_cmd(const struct vm_msi_io *io, u32 op, u32 vec,
				u32 nq)
{
	int cmd;

	if (vec > nq)
		return -ERANGE;
	cmd = vm_msi_cmd(op, vec);
	if (cmd < 0)
		return cmd;
	io->wr16(io->ctx, VM_MSI_REG_CMD, (u16)cmd);
	return 0;
}

/* Latch @msg and commit it to device vector @vec (0..nq). */
static inline int vm_msi_io_update(const struct vm_msi_io *io, u32 vec,
				   u32 nq, const struct vm_msi_msg *msg)
{
	if (vec > nq)
		return -ERANGE;
	io->wr32(io->ctx, VM_MSI_REG_ADDR_LO, msg->addr_lo);
	io->wr32(io->ctx, VM_MSI_REG_ADDR_HI, msg->addr_hi);
	io->wr32(io->ctx, VM_MSI_REG_DATA, msg->data);
	return vm_msi_io_cmd(io, VM_MSI_CMD_UPDATE, vec, nq);
}

/*
 * Mask or unmask every device vector Linux irq @irq serves (with the
 * sharing fallback, several).
 */
static inline int vm_msi_io_mask_irq(const struct vm_msi_io *io, u32 irq,
				     u32 nirq, u32 nq, bool mask)
{
	u32 vec;
	int ret;

	for (vec = 0; vec <= nq; vec++) {
		if (vm_msi_irq_of_vector(vec, nirq) != irq)
			continue;
		ret = vm_msi_io_cmd(io, mask ? VM_MSI_CMD_MASK : VM_MSI_CMD_UNMASK,
				    vec, nq);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Point every device vector of Linux irq @irq at @msg.  Before DRIVER_OK
 * the device only stores the message (it commits all vectors when the
 * driver sets DRIVER_OK); on a live device each vector is masked, updated
 * and unmasked, so the device never sends a half-updated message.
 */
static inline int vm_msi_io_program_irq(const struct vm_msi_io *io, u32 irq,
					u32 nirq, u32 nq,
					const struct vm_msi_msg *msg)
{
	bool live;
	u32 vec;
	int ret;

	if (irq >= nirq)
		return -ERANGE;
	live = vm_msi_driver_ok(io);
	for (vec = 0; vec <= nq; vec++) {
		if (vm_msi_irq_of_vector(vec, nirq) != irq)
			continue;
		if (live) {
			ret = vm_msi_io_cmd(io, VM_MSI_CMD_MASK, vec, nq);
			if (ret)
				return ret;
		}
		ret = vm_msi_io_update(io, vec, nq, msg);
		if (ret)
			return ret;
		if (live) {
			ret = vm_msi_io_cmd(io, VM_MSI_CMD_UNMASK, vec, nq);
			if (ret)
				return ret;
		}
	}
	return 0;
}

#endif /* VIRTIO_MMIO_MSI_REGS_H */
