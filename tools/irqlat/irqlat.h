/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * irqlat: the benchmark VMM's guest ABI and shared declarations.
 *
 * The guest (guest.S) is a 32-bit flat protected-mode loop that raises one
 * device interrupt at a time by writing the assigned edu's BAR0, which is
 * mapped into guest memory, and times raise-to-ISR with its own TSC.  It
 * uses the memory layout of the selftests' guest_abi.h (GDT, IDT, stack,
 * code address) so kvm_util_lite can build the VM, and keeps its own
 * parameters and samples at the addresses below.
 *
 * This header is included from assembly: plain #defines outside the
 * __ASSEMBLER__ block.
 */
#ifndef IRQLAT_H
#define IRQLAT_H

#include "guest_abi.h"

/* Every scenario uses this vector; the control run raises it with INT. */
#define IRQLAT_VECTOR		0x50

/* struct irqlat_guest lives here; samples (u32 TSC deltas) after it. */
#define IRQLAT_GPA		0x3000
#define IRQLAT_SAMPLES_GPA	0x20000
#define IRQLAT_MAX_SAMPLES	((GUEST_RAM_SIZE - IRQLAT_SAMPLES_GPA) / 4)

/* irqlat_guest.flags */
#define IRQLAT_F_IOAPIC		0x1	/* program the in-kernel IOAPIC pin */
#define IRQLAT_F_LEVEL		0x2	/* ... level-triggered */
#define IRQLAT_F_CONTROL	0x4	/* no interrupt: INT $IRQLAT_VECTOR */

/* Byte offsets in struct irqlat_guest, for the assembly. */
#define IL_FLAGS		(IRQLAT_GPA + 0x00)
#define IL_PIN			(IRQLAT_GPA + 0x04)
#define IL_RAISE_ADDR		(IRQLAT_GPA + 0x08)
#define IL_RAISE_VALUE		(IRQLAT_GPA + 0x0c)
#define IL_ACK_ADDR		(IRQLAT_GPA + 0x10)
#define IL_ACK_VALUE		(IRQLAT_GPA + 0x14)
#define IL_TARGET		(IRQLAT_GPA + 0x18)
#define IL_RAISED		(IRQLAT_GPA + 0x1c)
#define IL_DELIVERED		(IRQLAT_GPA + 0x20)
#define IL_DOUBLED		(IRQLAT_GPA + 0x24)
#define IL_PENDING		(IRQLAT_GPA + 0x28)
#define IL_T0			(IRQLAT_GPA + 0x2c)

#ifndef __ASSEMBLER__
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>

#include "compat.h"

/*
 * Shared with the guest at IRQLAT_GPA.  The host writes the first seven
 * fields before the vCPU runs; the guest writes the rest.
 */
struct irqlat_guest {
	u32 flags;
	u32 pin;		/* IOAPIC pin (IRQLAT_F_IOAPIC) */
	u32 raise_addr;		/* GPA the guest writes to raise */
	u32 raise_value;
	u32 ack_addr;		/* GPA the ISR writes to ack the device */
	u32 ack_value;
	u32 target;		/* raises to do */
	u32 raised;		/* raise writes done */
	u32 delivered;		/* ISR runs with a raise outstanding */
	u32 doubled;		/* ISR runs with none outstanding */
	u32 pending;		/* a raise is outstanding */
	u32 t0;			/* TSC (low 32 bits) just before the raise */
};

#define IL_CHECK(field, gpa) \
	static_assert(offsetof(struct irqlat_guest, field) == \
		      (gpa) - IRQLAT_GPA, "irqlat guest ABI: " #field)
IL_CHECK(flags, IL_FLAGS);
IL_CHECK(pin, IL_PIN);
IL_CHECK(raise_addr, IL_RAISE_ADDR);
IL_CHECK(raise_value, IL_RAISE_VALUE);
IL_CHECK(ack_addr, IL_ACK_ADDR);
IL_CHECK(ack_value, IL_ACK_VALUE);
IL_CHECK(target, IL_TARGET);
IL_CHECK(raised, IL_RAISED);
IL_CHECK(delivered, IL_DELIVERED);
IL_CHECK(doubled, IL_DOUBLED);
IL_CHECK(pending, IL_PENDING);
IL_CHECK(t0, IL_T0);
#undef IL_CHECK

/*
 * The kit's split-irqchip resample capability, from the kit's UAPI header.
 * KVM_CHECK_EXTENSION on it returns 0 on stock KVM, and the split-kernel
 * scenarios then report "not available" instead of running.
 */
#include "../../include/uapi/linux/kvm_kit.h"
#define IRQLAT_CAP_SPLIT_RESAMPLE		KVM_CAP_SPLIT_IRQCHIP_RESAMPLE
#define IRQLAT_SPLIT_RESAMPLE_NO_EOI_EXIT	KVM_SPLIT_RESAMPLE_NO_EOI_EXIT

enum irqlat_irq { IRQ_MSI, IRQ_INTX, NR_IRQ };

enum irqlat_chip {
	CHIP_KERNEL,			/* KVM_CREATE_IRQCHIP */
	CHIP_SPLIT_USER,		/* split; irqfd; VMM unmasks on EOI exit */
	CHIP_SPLIT_USERSPACE_ONLY,	/* split; VMM reads, injects, unmasks */
	CHIP_SPLIT_KERNEL,		/* split + kit resample, EOI exit on */
	CHIP_SPLIT_KERNEL_NOEXIT,	/* split + kit resample, EOI exit off */
	NR_CHIP
};

struct irqlat_opts {
	unsigned int n;
	unsigned int stall_ms;	/* no progress this long: stop, count lost */
	unsigned int quiet_ms;	/* after the last ISR, watch for extras */
	bool control;		/* run the control loop as well */
	bool verbose;
	/* Host CPUs: -1 leaves the scheduler (or the kernel) to choose. */
	int vcpu_cpu;		/* the vCPU thread */
	int irq_cpu;		/* the device's host IRQ(s) */
	int io_cpu;		/* the I/O thread of the userspace scenarios */
};

/* One scenario's measured and derived figures. */
struct irqlat_result {
	enum irqlat_irq irq;
	enum irqlat_chip chip;
	unsigned int n;
	/* counts from the guest and the host */
	u32 raised, delivered, doubled;
	long long signalled;	/* host IRQs or eventfd reads; -1 unknown */
	unsigned int lost;
	/* latency */
	u32 tsc_khz;
	u64 lat_med_cyc, lat_p99_cyc, lat_min_cyc, lat_max_cyc;
	double lat_med_ns, lat_p99_ns;
	/* every latency sample in TSC cycles, sorted; the caller frees it */
	u32 *samples;
	u32 nr_samples;
	/* measured window, and the control run's */
	double wall_s, ctl_wall_s;
	long long vmexits, ctl_vmexits;		/* -1: no stats */
	long long halt_exits, irq_exits;
	long long uexits, ctl_uexits;
	long long eoi_exits;
	long long ctxt, ctl_ctxt;		/* /proc/stat ctxt deltas */
	long long vcpu_ctxsw, ctl_vcpu_ctxsw;	/* the vCPU thread's own */
	bool has_control;
};

const char *irq_name(enum irqlat_irq irq);
const char *chip_name(enum irqlat_chip chip);

/*
 * Run one scenario.  Returns 0 with *res filled in, -EOPNOTSUPP when the
 * scenario needs something these modules lack (message in why), or
 * another -errno after a diagnostic.
 */
int irqlat_run(enum irqlat_irq irq, enum irqlat_chip chip,
	       const struct irqlat_opts *opts, struct irqlat_result *res,
	       char *why, size_t why_len);

#endif /* __ASSEMBLER__ */
#endif /* IRQLAT_H */
