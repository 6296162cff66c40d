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
#define GUEST_EFLAGS_IF		0x200	/* IF in a saved EFLAGS image */
#define LAPIC_LVT0		0x350
#define LAPIC_LVT_MASKED	0x10000
#define IOAPIC_BASE		0xfec00000
#define IOAPIC_IOREGSEL		0x00
#define IOAPIC_IOWIN		0x10
#define IOAPIC_REDTBL		0x10
#define IOAPIC_LEVEL		0x8000
#define IOAPIC_DEST_BROADCAST	0xff000000	/* physical destination 0xff */

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
#define GUEST_F_SPIN		0x4	/* after sti, spin instead of hlt */
#define GUEST_F_BROADCAST	0x8	/* IOAPIC pin to every APIC (ID 0xff) */

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
#define GPARAM_STRAY		0x24

/*
 * The benchmark guest (irqlat_entry, irqlat_isr): a loop that raises one
 * device interrupt at a time by writing the assigned edu's BAR0, mapped
 * into guest memory, and times raise-to-ISR with its own TSC.  It shares
 * GDT, IDT, stack and code with the test guest; its parameters and samples
 * live at the addresses below instead of struct guest_params.
 */

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
#define IRQLAT_F_SPIN		0x8	/* wait for the ISR spinning, not in HLT */

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
#define IL_STRAY		(IRQLAT_GPA + 0x30)
#define IL_LAST_EIP		(IRQLAT_GPA + 0x34)

#ifndef __ASSEMBLER__
#include <assert.h>
#include <stddef.h>

#include "compat.h"

/*
 * Shared between host and guest, one per vCPU (see GUEST_PARAMS_STRIDE).
 * The host fills in everything but count and stray before the vCPU runs;
 * the guest only writes those two.
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
	/*
	 * ISR runs whose interrupted code had IF clear, not in count: no
	 * LAPIC delivers a maskable interrupt then.  The testbed's emulated
	 * CPU replays an ISR now and then (Documentation/testing.rst).
	 */
	u32 stray;
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
GPARAM_CHECK(stray, GPARAM_STRAY);
#undef GPARAM_CHECK
static_assert(sizeof(struct guest_params) <= GUEST_PARAMS_STRIDE,
	      "guest ABI: params stride");

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
	u32 doubled;		/* ISR runs with none outstanding, from the LAPIC */
	u32 pending;		/* a raise is outstanding */
	u32 t0;			/* TSC (low 32 bits) just before the raise */
	/*
	 * ISR runs with none outstanding that no LAPIC delivered: the code
	 * they interrupted had IF clear, or the vector was not in service.
	 * Seen under nested TCG, where the emulated CPU ran the ISR again in
	 * a VMRUN in which KVM injected nothing (Documentation/testing.rst).
	 */
	u32 stray;
	u32 last_eip;		/* where the last run with none outstanding came */
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
IL_CHECK(stray, IL_STRAY);
IL_CHECK(last_eip, IL_LAST_EIP);
#undef IL_CHECK

/* Symbols from guest_code.S; the blob is copied to GUEST_CODE_GPA. */
extern const char guest_code_start[], guest_code_end[];
extern const char guest_entry[], guest_isr[], guest_unexpected_irq[];
extern const char guest_fault_stubs[];
extern const char irqlat_entry[], irqlat_isr[];

#endif /* __ASSEMBLER__ */
#endif /* KVM_IRQBYPASS_GUEST_ABI_H */
