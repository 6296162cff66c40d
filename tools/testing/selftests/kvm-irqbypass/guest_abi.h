/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Contract between the host side of the tests and the 32-bit guest in
 * guest_code.S.  Everything here is a fixed guest-physical address or an
 * I/O port, so the guest code needs no relocations: it is copied verbatim
 * into guest memory and only uses relative branches and constant addresses.
 *
 * This header is included from assembly, so keep it to plain #defines
 * outside the __ASSEMBLER__ block.
 */
#ifndef KVM_IRQBYPASS_GUEST_ABI_H
#define KVM_IRQBYPASS_GUEST_ABI_H

/*
 * Guest physical layout of the single RAM slot that starts at GPA 0.  GDT,
 * IDT and code are shared by all vCPUs; vCPU n (APIC ID n) has its own
 * struct guest_params at GUEST_PARAMS_GPA + n * GUEST_PARAMS_STRIDE and its
 * own stack below GUEST_STACK_TOP - n * GUEST_STACK_SIZE.
 */
#define GUEST_GDT_GPA		0x0000
#define GUEST_IDT_GPA		0x1000
#define GUEST_PARAMS_GPA	0x2000
#define GUEST_PARAMS_STRIDE	0x100
#define GUEST_STACK_TOP		0x8000
#define GUEST_STACK_SIZE	0x1000
#define GUEST_CODE_GPA		0x10000
#define GUEST_RAM_SIZE		0x100000
#define GUEST_MAX_VCPUS		2

/* Flat 32-bit segments in the GDT. */
#define GUEST_CS_SEL		0x08
#define GUEST_DS_SEL		0x10

/* Local APIC and IOAPIC, reachable because paging stays off. */
#define LAPIC_BASE		0xfee00000
#define LAPIC_ID		0x020
#define LAPIC_TPR		0x080
#define LAPIC_EOI		0x0b0
#define LAPIC_SVR		0x0f0
#define LAPIC_ISR		0x100
#define LAPIC_LVT0		0x350
#define LAPIC_LVT_MASKED	0x10000
#define IOAPIC_BASE		0xfec00000
#define IOAPIC_IOREGSEL		0x00
#define IOAPIC_IOWIN		0x10
#define IOAPIC_REDTBL		0x10
#define IOAPIC_LEVEL		0x8000

/*
 * Ports the guest writes to; the host sees each as KVM_EXIT_IO.  They sit
 * outside every device that KVM emulates in the kernel (PIC, PIT, ...), so
 * they always reach userspace.
 */
#define GUEST_PORT_READY	0x500	/* setup done, about to sti */
#define GUEST_PORT_PRE_EOI	0x501	/* in the ISR, before the EOI */
#define GUEST_PORT_POST_EOI	0x502	/* in the ISR, after the EOI */
#define GUEST_PORT_DONE		0x503	/* count reached target */
#define GUEST_PORT_FAULT	0x504	/* exception; value = vector */
#define GUEST_PORT_UNEXPECTED	0x505	/* stray interrupt; value = vector */

/* guest_params.flags */
#define GUEST_F_IOAPIC		0x1	/* program IOAPIC pin ioapic_pin */
#define GUEST_F_LEVEL		0x2	/* ... level-triggered */

/* Exception stubs in guest_code.S are this far apart. */
#define GUEST_FAULT_STUB_SIZE	8

/*
 * Byte offsets in struct guest_params, used by the assembly.  The guest
 * addresses its own block through %ebp, which the host sets to the block's
 * GPA at vCPU setup and the guest never writes.
 */
#define GPARAM_FLAGS		0x00
#define GPARAM_VECTOR		0x04
#define GPARAM_IOAPIC_PIN	0x08
#define GPARAM_ACK_ADDR		0x0c
#define GPARAM_ACK_VALUE	0x10
#define GPARAM_PRE_EOI_PORT	0x14
#define GPARAM_POST_EOI_PORT	0x18
#define GPARAM_TARGET		0x1c
#define GPARAM_COUNT		0x20

#ifndef __ASSEMBLER__
#include <assert.h>
#include <stddef.h>

#include "compat.h"

/*
 * Shared between host and guest, one per vCPU (see GUEST_PARAMS_STRIDE).
 * The host fills in everything but count before the vCPU runs; the guest
 * only writes count.
 */
struct guest_params {
	u32 flags;
	u32 vector;	/* vector whose IDT gate is the test ISR */
	u32 ioapic_pin;
	u32 ack_addr;	/* 0: none; else ISR writes ack_value here */
	u32 ack_value;
	u32 pre_eoi_port;	/* 0: no exit before the EOI */
	u32 post_eoi_port;	/* 0: no exit after the EOI */
	u32 target;	/* ISR count at which the guest reports done */
	u32 count;		/* ISR invocations, written by the guest */
};

#define GPARAM_CHECK(field, gp) \
	static_assert(offsetof(struct guest_params, field) == (gp), \
		      "guest ABI: " #field)
GPARAM_CHECK(flags, GPARAM_FLAGS);
GPARAM_CHECK(vector, GPARAM_VECTOR);
GPARAM_CHECK(ioapic_pin, GPARAM_IOAPIC_PIN);
GPARAM_CHECK(ack_addr, GPARAM_ACK_ADDR);
GPARAM_CHECK(ack_value, GPARAM_ACK_VALUE);
GPARAM_CHECK(pre_eoi_port, GPARAM_PRE_EOI_PORT);
GPARAM_CHECK(post_eoi_port, GPARAM_POST_EOI_PORT);
GPARAM_CHECK(target, GPARAM_TARGET);
GPARAM_CHECK(count, GPARAM_COUNT);
#undef GPARAM_CHECK
static_assert(sizeof(struct guest_params) <= GUEST_PARAMS_STRIDE,
	      "guest ABI: params stride");

/* Symbols from guest_code.S; the blob is copied to GUEST_CODE_GPA. */
extern const char guest_code_start[], guest_code_end[];
extern const char guest_entry[], guest_isr[], guest_unexpected_irq[];
extern const char guest_fault_stubs[];

#endif /* __ASSEMBLER__ */
#endif /* KVM_IRQBYPASS_GUEST_ABI_H */
