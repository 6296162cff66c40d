/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * 32-bit flat protected-mode guests: the tests' (guest_entry, guest_isr)
 * and the benchmark's (irqlat_entry, irqlat_isr), which share the stray
 * interrupt and exception handlers.  Assembled into the 64-bit binary
 * (.code32 in a data section) and copied to GUEST_CODE_GPA, so it must not
 * contain relocations: branches are relative and all data lives at the
 * constant addresses of guest_abi.h.  The host loads GDT, IDT and segment
 * state before the first KVM_RUN, and points %ebp at this vCPU's struct
 * guest_params and %esp at its own stack; nothing here writes %ebp, so the
 * test ISR finds the same block.
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
	/*
	 * Redirection entry: high dword first (destination APIC ID 0, or
	 * 0xff, every APIC, with GUEST_F_BROADCAST)...
	 */
	movl	GPARAM_IOAPIC_PIN(%ebp), %ecx
	leal	IOAPIC_REDTBL + 1(,%ecx,2), %eax
	movl	%eax, IOAPIC_BASE + IOAPIC_IOREGSEL
	xorl	%edx, %edx
	testl	$GUEST_F_BROADCAST, GPARAM_FLAGS(%ebp)
	jz	5f
	movl	$IOAPIC_DEST_BROADCAST, %edx
5:	movl	%edx, IOAPIC_BASE + IOAPIC_IOWIN
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
	/*
	 * A vCPU that stays in the guest if the host asks: no HLT exit, and
	 * no PAUSE either, which pause-loop exiting would turn into exits.
	 */
	testl	$GUEST_F_SPIN, GPARAM_FLAGS(%ebp)
	jz	3f
4:	jmp	4b
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
	/*
	 * A LAPIC delivers only with IF set: a run that interrupted code with
	 * IF clear (this ISR itself, replayed by the emulated CPU) is counted
	 * apart and touches neither the device nor the EOI.  A stack read, so
	 * no exit is added to any run.
	 */
	testl	$GUEST_EFLAGS_IF, 16(%esp)
	jz	5f
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
5:	incl	GPARAM_STRAY(%ebp)
	jmp	4b

/*
 * The benchmark guest (irqlat): raise one device interrupt, wait for it,
 * repeat; its data sits at the constant addresses IL_* of guest_abi.h.
 *
 * Per iteration: mark a raise outstanding, read the TSC, write the raise
 * register (edu BAR0 0x60, mapped into guest memory), then HLT until the
 * ISR has cleared the mark.  The ISR reads the TSC first, stores the
 * delta, acks the device, EOIs.  In the control run the write goes to a
 * register that raises nothing and INT runs the same ISR instead.
 */
	.balign 16
	.globl irqlat_entry
irqlat_entry:
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

.Lirqlat_next:
	movl	IL_RAISED, %eax
	cmpl	IL_TARGET, %eax
	jae	.Lirqlat_done
	incl	IL_RAISED
	movl	$1, IL_PENDING
	movl	IL_RAISE_ADDR, %ecx
	movl	IL_RAISE_VALUE, %ebx
	rdtsc
	movl	%eax, IL_T0
	movl	%ebx, (%ecx)
	testl	$IRQLAT_F_CONTROL, IL_FLAGS
	jz	.Lirqlat_wait
	int	$IRQLAT_VECTOR
	/*
	 * Sleep until the ISR has run; STI's shadow covers the HLT.  Or
	 * spin (interrupts on, no PAUSE): a guest busy when its interrupt
	 * comes, whose vCPU is in guest mode.
	 */
.Lirqlat_wait:
	testl	$IRQLAT_F_SPIN, IL_FLAGS
	jnz	.Lirqlat_spin
	cli
	cmpl	$0, IL_PENDING
	je	1f
	sti
	hlt
	jmp	.Lirqlat_wait
1:	sti
	jmp	.Lirqlat_next
.Lirqlat_spin:
	cmpl	$0, IL_PENDING
	jne	.Lirqlat_spin
	jmp	.Lirqlat_next

.Lirqlat_done:
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
	.globl irqlat_isr
irqlat_isr:
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
	/*
	 * None outstanding.  The LAPIC delivers a fixed interrupt only with
	 * IF set and keeps it in service until our EOI below; a run without
	 * either came from the CPU's event delivery alone (see struct
	 * irqlat_guest), not from KVM's irqchip or anything that feeds it.
	 * Only this path reads the ISR register, so the measured path keeps
	 * its exit count.
	 */
1:	movl	12(%esp), %eax
	movl	%eax, IL_LAST_EIP
	testl	$GUEST_EFLAGS_IF, 20(%esp)
	jz	4f
	movl	LAPIC_BASE + LAPIC_ISR + IRQLAT_VECTOR / 32 * 0x10, %eax
	testl	$1 << (IRQLAT_VECTOR % 32), %eax
	jnz	5f
4:	incl	IL_STRAY
	jmp	2f
5:	incl	IL_DOUBLED
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
