/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * 32-bit flat protected-mode guest used by every test.  It is assembled
 * into the 64-bit test binary (.code32 in a data section) and copied to
 * GUEST_CODE_GPA, so it must not contain relocations: branches are
 * relative and all data lives at the constant addresses of guest_abi.h.
 * The host loads GDT, IDT and segment state before the first KVM_RUN, and
 * points %ebp at this vCPU's struct guest_params and %esp at its own stack;
 * nothing here writes %ebp, so the ISR finds the same block.
 */
#include "guest_abi.h"

	.section .rodata.kvm_irqbypass_guest, "a"
	.code32
	.balign 16
	.globl guest_code_start
guest_code_start:

	.globl guest_entry
guest_entry:
	/* Software-enable the LAPIC; 0xff doubles as the spurious vector. */
	movl	$0x1ff, LAPIC_BASE + LAPIC_SVR
	/*
	 * KVM resets the BSP's LINT0 to ExtINT (virtual wire).  Mask it so an
	 * IOAPIC GSI below 16, which KVM's default routing also feeds to the
	 * never-initialised PIC, cannot arrive a second time as ExtINT.
	 */
	movl	$LAPIC_LVT_MASKED, LAPIC_BASE + LAPIC_LVT0
	movl	$0, LAPIC_BASE + LAPIC_TPR

	testl	$GUEST_F_IOAPIC, GPARAM_FLAGS(%ebp)
	jz	1f
	/* Redirection entry: high dword first (destination APIC ID 0)... */
	movl	GPARAM_IOAPIC_PIN(%ebp), %ecx
	leal	IOAPIC_REDTBL + 1(,%ecx,2), %eax
	movl	%eax, IOAPIC_BASE + IOAPIC_IOREGSEL
	movl	$0, IOAPIC_BASE + IOAPIC_IOWIN
	/* ...then the low dword, which unmasks it: fixed, physical, high. */
	decl	%eax
	movl	%eax, IOAPIC_BASE + IOAPIC_IOREGSEL
	movl	GPARAM_VECTOR(%ebp), %eax
	testl	$GUEST_F_LEVEL, GPARAM_FLAGS(%ebp)
	jz	2f
	orl	$IOAPIC_LEVEL, %eax
2:	movl	%eax, IOAPIC_BASE + IOAPIC_IOWIN
1:
	/* Tell the host we are ready, so it never raises into a half-set-up guest. */
	movl	$GUEST_PORT_READY, %edx
	xorl	%eax, %eax
	outl	%eax, %dx
	sti
3:	hlt
	jmp	3b

/*
 * Test ISR: count, optionally ack the device, optionally exit to the host
 * before and after the EOI, and report done when the target is reached.
 */
	.balign 16
	.globl guest_isr
guest_isr:
	pushl	%eax
	pushl	%edx
	incl	GPARAM_COUNT(%ebp)
	movl	GPARAM_ACK_ADDR(%ebp), %edx
	testl	%edx, %edx
	jz	1f
	movl	GPARAM_ACK_VALUE(%ebp), %eax
	movl	%eax, (%edx)
1:	movl	GPARAM_PRE_EOI_PORT(%ebp), %edx
	testl	%edx, %edx
	jz	2f
	movl	GPARAM_COUNT(%ebp), %eax
	outl	%eax, %dx
2:	movl	$0, LAPIC_BASE + LAPIC_EOI
	movl	GPARAM_POST_EOI_PORT(%ebp), %edx
	testl	%edx, %edx
	jz	3f
	movl	GPARAM_COUNT(%ebp), %eax
	outl	%eax, %dx
3:	movl	GPARAM_COUNT(%ebp), %eax
	cmpl	GPARAM_TARGET(%ebp), %eax
	jne	4f
	movl	$GUEST_PORT_DONE, %edx
	outl	%eax, %dx
4:	popl	%edx
	popl	%eax
	iret

/*
 * Any other vector from 32 up: find the in-service vector in the LAPIC ISR
 * registers (highest set bit wins) and report it; 0 means spurious.
 */
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

/*
 * Exceptions 0-31: one 8-byte stub per vector pushes its number, so the
 * host can report which one fired; the guest then stops for good.
 */
	.balign GUEST_FAULT_STUB_SIZE
	.globl guest_fault_stubs
guest_fault_stubs:
	.set	.Lfault_vec, 0
	.rept	32
	.balign	GUEST_FAULT_STUB_SIZE
	pushl	$.Lfault_vec
	jmp	guest_fault_common
	.set	.Lfault_vec, .Lfault_vec + 1
	.endr

guest_fault_common:
	movl	(%esp), %eax
	movl	$GUEST_PORT_FAULT, %edx
	outl	%eax, %dx
	cli
1:	hlt
	jmp	1b

	.globl guest_code_end
guest_code_end:

	.section .note.GNU-stack, "", @progbits
