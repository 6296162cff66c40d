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

/*
 * QEMU's e1000e (82574L), the q35 machine's default NIC: five MSI-X vectors
 * in BAR 3, each fired by a cause bit written to ICS (BAR0 registers;
 * 82574L datasheet, QEMU hw/net/e1000_regs.h).
 */
#define E1000E_VENDOR		0x8086
#define E1000E_DEVICE		0x10d3
#define E1000E_MSIX_BAR		3
#define E1000E_NR_VEC		5
#define E1000_CTRL_EXT		0x18
#define E1000_CTRL_EXT_INT_TIMERS_CLEAR_ENA	0x20000000
#define E1000_ICR		0xc0	/* cause read; write 1 to clear */
#define E1000_ICS		0xc8	/* cause set */
#define E1000_IMS		0xd0	/* mask set (enable) */
#define E1000_IMC		0xd8	/* mask clear */
#define E1000_IVAR		0xe4	/* cause -> vector, 4 bits each */
/* RXQ0, RXQ1, TXQ0, TXQ1, OTHER: valid, to vectors 0-4. */
#define E1000_IVAR_ALL		0x000cba98
/* Every cause IMS takes (e1000e_set_ims()): see e1000e_unthrottle(). */
#define E1000_IMS_ALL		0x01f782d7

/* A device opened here: the edu, or (msix) an e1000e. */
struct edu_dev {
	char bdf[32];		/* e.g. 0000:00:03.0 */
	int container_fd;
	int group_fd;
	int device_fd;
	void *bar0;
	size_t bar0_size;
	u64 config_offset;	/* of the config space region in device_fd */
	/*
	 * An e1000e (e1000e_open()): the tests' "MSI" is its MSI-X vector 0,
	 * raised and acknowledged by dev_msi_raise() and dev_msi_ack().
	 */
	bool msix;
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
/* Leaves the edu idle for the next test: status cleared, MSI off. */
void edu_msi_release(struct edu_dev *edu);

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

/*
 * The n-th e1000e, opened as above, every interrupt cause masked and
 * cleared, each queue cause (and OTHER) on its own MSI-X vector; bus
 * mastering is the caller's (edu_enable_bus_master()), as for the edu.
 * -ENODEV when there is none.
 */
int e1000e_open(struct edu_dev *dev, unsigned int n);
/*
 * QEMU 7.2's e1000e throttles each vector (EITR: at least 128 us, not to
 * be turned off), and once it has held an interrupt back it sends every
 * later one on that vector twice (nothing clears the held flag).  An IMS
 * write of every cause with CTRL_EXT.INT_TIMERS_CLEAR_ENA runs all its
 * timers in the write itself, so the next interrupt is sent at once and
 * none is held.  Also: a timer that expires with MSI-X disabled aborts
 * QEMU (an assertion), so call this before disabling MSI-X less than
 * 128 us after an interrupt (edu_msi_trigger(dev, -1) does).
 */
void e1000e_unthrottle(struct edu_dev *dev);
/* Fire vector v (e1000e_unthrottle() first); dev_msi_ack() clears it. */
void e1000e_fire(struct edu_dev *dev, unsigned int v);
void e1000e_clear(struct edu_dev *dev, unsigned int v);

/* Raise the device's interrupt: edu MSI, or e1000e MSI-X vector 0. */
void dev_msi_raise(struct edu_dev *dev);
/* Clear its cause, so that the next raise fires again. */
void dev_msi_ack(struct edu_dev *dev);
/* VFIO irq index of that interrupt. */
static inline u32 dev_msi_index(const struct edu_dev *dev)
{
	return dev->msix ? VFIO_PCI_MSIX_IRQ_INDEX : VFIO_PCI_MSI_IRQ_INDEX;
}

/* Its /proc/interrupts name up to the vector number: "vfio-msi[". */
static inline const char *dev_msi_name(const struct edu_dev *dev)
{
	return dev->msix ? "vfio-msix[" : "vfio-msi[";
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
