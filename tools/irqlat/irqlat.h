/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * irqlat: the benchmark VMM's scenarios and results.  Its guest (raise one
 * device interrupt, time raise-to-ISR) is irqlat_entry/irqlat_isr in the
 * library's guest_code.S, its ABI in guest_abi.h.
 */
#ifndef IRQLAT_H
#define IRQLAT_H

#include <stdbool.h>
#include <stddef.h>

#include "compat.h"
#include "guest_abi.h"

/*
 * The kit's split-irqchip resample capability, from the kit's UAPI header.
 * KVM_CHECK_EXTENSION on it returns 0 on stock KVM, and the split-kernel
 * scenarios then report "not available" instead of running.
 */
#include "linux/kvm_kit.h"
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
	bool spin;		/* the guest spins for its ISR instead of HLT */
	unsigned int extra_irqfds;	/* idle irqfds added to each VM */
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
	u32 stray, stray_eip;	/* see struct irqlat_guest */
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

#endif /* IRQLAT_H */
