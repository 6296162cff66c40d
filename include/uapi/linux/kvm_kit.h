/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * UAPI of the kvm-irqbypass kit: KVM capabilities that upstream does not
 * have.  Their numbers live in a private range (0x4b495400, "KIT\0", and
 * up) that upstream's sequential KVM_CAP_* numbers will not reach, so a
 * VMM may probe them on any kernel: a stock kernel answers 0.
 *
 * Documentation/split-irqchip-resample.rst describes the semantics.
 */
#ifndef _UAPI_LINUX_KVM_KIT_H
#define _UAPI_LINUX_KVM_KIT_H

#define KVM_CAP_KIT_BASE			0x4b495400

/*
 * KVM_IRQFD_FLAG_RESAMPLE on a split irqchip, for GSIs below the reserved
 * IOAPIC pins that are routed as MSIs.  KVM_CHECK_EXTENSION returns the
 * mask of supported args[0] flags (nonzero); KVM_ENABLE_CAP on the VM fd
 * takes those flags in args[0] (args[1..3] must be 0).
 */
#define KVM_CAP_SPLIT_IRQCHIP_RESAMPLE		(KVM_CAP_KIT_BASE + 1)

/*
 * Do not exit to userspace with KVM_EXIT_IOAPIC_EOI for an EOI whose every
 * matching GSI has an in-kernel resampler.
 */
#define KVM_SPLIT_RESAMPLE_NO_EOI_EXIT		(1ULL << 0)

#define KVM_SPLIT_RESAMPLE_VALID_FLAGS		KVM_SPLIT_RESAMPLE_NO_EOI_EXIT

#endif /* _UAPI_LINUX_KVM_KIT_H */
