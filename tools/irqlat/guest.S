/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * irqlat's guest: raise one device interrupt, wait for it, repeat.
 *
 * 32-bit flat protected mode, paging off, loaded at GUEST_CODE_GPA by
 * kvm_util_lite (which also builds the GDT and IDT from the symbols below,
 * so they keep the selftests' names).  No relocations: branches are
 * relative and data sits at the constant addresses of irqlat.h.
 *
 * Per iteration: mark a raise outstanding, read the TSC, write the raise
 * register (edu BAR0 0x60, mapped into guest memory), then HLT until the
 * ISR has cleared the mark.  The ISR reads the TSC first, stores the
 * delta, acks the device, EOIs.  In the control run the write goes to a
 * register that raises nothing and INT runs the same ISR instead.
 */
#include "irqlat.h"

	.section .rodata.irqlat_guest, "a"
	.code32
	.balign 16
	.globl guest_code_start
guest_code_start:

	.globl guest_entry
guest_entry:
	/* LAPIC on, spurious vector 0xff; LINT0 (ExtINT) masked; TPR 0. */
	movl	$0x1ff, LAPIC_BASE + LAPIC_SVR
	movl	$LAPIC_LVT_MASKED, LAPIC_BASE + LAPIC_LVT0
	movl	$0, LAPIC_BASE + LAPIC_TPR

	testl	$IRQLAT_F_IOAPIC, IL_FLAGS
	jz	1f
	/* Redirection entry: destination APIC ID 0 (high dword) first... */
	movl	IL_PIN, %ecx
	leal	IOAPIC_REDTBL + 1(,%ecx,2), %eax
	movl	%eax, IOAPIC_BASE + IOAPIC_IOREGSEL
	movl	$0, IOAPIC_BASE + IOAPIC_IOWIN
	/* ...then the low dword, unmasked: fixed, physical, active high. */
	decl	%eax
	movl	%eax, IOAPIC_BASE + IOAPIC_IOREGSEL
	movl	$IRQLAT_VECTOR, %eax
	testl	$IRQLAT_F_LEVEL, IL_FLAGS
	jz	2f
	orl	$IOAPIC_LEVEL, %eax
2:	movl	%eax, IOAPIC_BASE + IOAPIC_IOWIN
1:
	movl	$GUEST_PORT_READY, %edx
	xorl	%eax, %eax
	outl	%eax, %dx
	sti

.Lnext:
	movl	IL_RAISED, %eax
	cmpl	IL_TARGET, %eax
	jae	.Ldone
	incl	IL_RAISED
	movl	$1, IL_PENDING
	movl	IL_RAISE_ADDR, %ecx
	movl	IL_RAISE_VALUE, %ebx
	rdtsc
	movl	%eax, IL_T0
	movl	%ebx, (%ecx)
	testl	$IRQLAT_F_CONTROL, IL_FLAGS
	jz	.Lwait
	int	$IRQLAT_VECTOR
	/* Sleep until the ISR has run; STI's shadow covers the HLT. */
.Lwait:
	cli
	cmpl	$0, IL_PENDING
	je	1f
	sti
	hlt
	jmp	.Lwait
1:	sti
	jmp	.Lnext

.Ldone:
	movl	IL_DELIVERED, %eax
	movl	$GUEST_PORT_DONE, %edx
	outl	%eax, %dx
	/* Idle with interrupts on: a late extra one is still counted. */
1:	hlt
	jmp	1b

/*
 * The measured ISR.  The TSC read comes first; everything after it is
 * bookkeeping outside the measured path.
 */
	.balign 16
	.globl guest_isr
guest_isr:
	pushl	%eax
	pushl	%ecx
	pushl	%edx
	rdtsc
	subl	IL_T0, %eax
	cmpl	$0, IL_PENDING
	je	1f
	movl	IL_DELIVERED, %ecx
	movl	%eax, IRQLAT_SAMPLES_GPA(,%ecx,4)
	incl	IL_DELIVERED
	movl	$0, IL_PENDING
	jmp	2f
1:	incl	IL_DOUBLED
2:	movl	IL_ACK_ADDR, %edx
	testl	%edx, %edx
	jz	3f
	movl	IL_ACK_VALUE, %eax
	movl	%eax, (%edx)
3:	movl	$0, LAPIC_BASE + LAPIC_EOI
	popl	%edx
	popl	%ecx
	popl	%eax
	iret

/* Any other vector: report it (the in-service vector, 0 if none). */
	.balign 16
	.globl guest_unexpected_irq
guest_unexpected_irq:
	pushl	%eax
	pushl	%ecx
	pushl	%edx
	movl	$7, %ecx
1:	movl	%ecx, %edx
	shll	$4, %edx
	movl	LAPIC_BASE + LAPIC_ISR(%edx), %eax
	testl	%eax, %eax
	jnz	2f
	decl	%ecx
	jns	1b
	xorl	%eax, %eax
	jmp	3f
2:	bsrl	%eax, %eax
	shll	$5, %ecx
	addl	%ecx, %eax
3:	movl	$GUEST_PORT_UNEXPECTED, %edx
	outl	%eax, %dx
	movl	$0, LAPIC_BASE + LAPIC_EOI
	popl	%edx
	popl	%ecx
	popl	%eax
	iret

/* Exceptions 0-31: report the vector and stop. */
	.balign GUEST_FAULT_STUB_SIZE
	.globl guest_fault_stubs
guest_fault_stubs:
	.set	.Lvec, 0
	.rept	32
	.balign	GUEST_FAULT_STUB_SIZE
	pushl	$.Lvec
	jmp	.Lfault
	.set	.Lvec, .Lvec + 1
	.endr

.Lfault:
	movl	(%esp), %eax
	movl	$GUEST_PORT_FAULT, %edx
	outl	%eax, %dx
	cli
1:	hlt
	jmp	1b

	.globl guest_code_end
guest_code_end:

	.section .note.GNU-stack, "", @progbits
