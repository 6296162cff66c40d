/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Just enough VFIO to drive QEMU's edu device (vendor 0x1234, device
 * 0x11e8; docs/specs/edu.txt in QEMU) from the kvm-irqbypass selftests:
 * find it, bind it to vfio-pci, open it through the legacy group/container
 * interface, map BAR0 and wire its interrupts to eventfds.  The same for
 * other devices a test drives through BAR registers (vfio_pci_open_id()).
 */
#ifndef KVM_IRQBYPASS_VFIO_UTIL_LITE_H
#define KVM_IRQBYPASS_VFIO_UTIL_LITE_H

#include <stddef.h>
#include <linux/vfio.h>

#include "compat.h"

#define EDU_VENDOR		0x1234
#define EDU_DEVICE		0x11e8

/* BAR0 registers (QEMU docs/specs/edu.txt); 32-bit accesses only. */
#define EDU_REG_ID		0x00	/* 0xRRrr00ed */
#define EDU_REG_LIVENESS	0x04	/* reads back ~written value */
#define EDU_REG_IRQ_STATUS	0x24
#define EDU_REG_IRQ_RAISE	0x60
#define EDU_REG_IRQ_ACK		0x64

struct edu_dev {
	char bdf[32];		/* e.g. 0000:00:03.0 */
	int container_fd;
	int group_fd;
	int device_fd;
	void *bar0;
	size_t bar0_size;
	u64 config_offset;	/* of the config space region in device_fd */
};

/*
 * Find the edu (EDU_BDF in the environment overrides the scan), bind it to
 * vfio-pci if needed, open it and map BAR0.  Returns 0, -ENODEV when there
 * is no edu device (a test may skip), or another -errno after a diagnostic.
 * The device starts with its interrupt status cleared.
 */
int edu_open(struct edu_dev *edu);
/* The same for the n-th edu in BDF order (0: the one edu_open() takes). */
int edu_open_nth(struct edu_dev *edu, unsigned int n);
/* Closes any device opened here. */
void edu_close(struct edu_dev *edu);

/*
 * The n-th vendor:device in BDF order, bound to vfio-pci and opened as the
 * edu is, BAR0 mapped (it must be mmap-able).  Returns 0, -ENODEV when there
 * is none, or another -errno after a diagnostic.
 */
int vfio_pci_open_id(struct edu_dev *dev, u16 vendor, u16 device,
		     unsigned int n);
/*
 * mmap() BAR index of an open device; its address, or NULL after a
 * diagnostic.  *size: the BAR's size.  The caller munmap()s it.
 */
void *vfio_pci_map_bar(struct edu_dev *dev, unsigned int index,
		       size_t *size);

static inline u32 edu_read(struct edu_dev *edu, unsigned int reg)
{
	return mmio_read32((u8 *)edu->bar0 + reg);
}

static inline void edu_write(struct edu_dev *edu, unsigned int reg,
			     u32 value)
{
	mmio_write32((u8 *)edu->bar0 + reg, value);
}

/* Sanity check that BAR0 really is an edu: ID and liveness registers. */
int edu_check_alive(struct edu_dev *edu);

/* Set PCI_COMMAND bus master: QEMU drops MSI writes without it. */
int edu_enable_bus_master(struct edu_dev *edu);

/* VFIO_DEVICE_GET_IRQ_INFO count for index, or -errno. */
int vfio_irq_count(int device_fd, u32 index);

/*
 * VFIO_DEVICE_SET_IRQS with DATA_EVENTFD (fds != NULL) or DATA_NONE
 * (fds == NULL); returns 0 or -errno.
 */
int vfio_set_irqs(int device_fd, u32 index, u32 action,
		  u32 start, u32 count, const s32 *fds);

/* Raw VFIO_DEVICE_SET_IRQS; returns 0 or -errno. */
int vfio_set_irqs_raw(int device_fd, struct vfio_irq_set *set);

/*
 * Sum over all CPUs of the /proc/interrupts lines whose name contains both
 * name and bdf, e.g. "vfio-msi[" and the edu's BDF.  -1 if unreadable.
 */
long long proc_interrupts_count(const char *name, const char *bdf);
/*
 * Linux irq number of the first /proc/interrupts line whose name contains
 * both name and bdf, e.g. "vfio-msi[0]" and the edu's BDF.  -1 if none.
 */
int proc_interrupts_irq(const char *name, const char *bdf);

#endif /* KVM_IRQBYPASS_VFIO_UTIL_LITE_H */
