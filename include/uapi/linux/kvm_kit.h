/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/* KVM caps of the kit; see Documentation/split-irqchip-resample.rst. */
#ifndef _UAPI_LINUX_KVM_KIT_H
#define _UAPI_LINUX_KVM_KIT_H

/* "KIT\0": above upstream's KVM_CAP_*, so stock kernels answer 0. */
#define KVM_CAP_KIT_BASE			0x4b495400

#define KVM_CAP_SPLIT_IRQCHIP_RESAMPLE		(KVM_CAP_KIT_BASE + 1)

#define KVM_SPLIT_RESAMPLE_NO_EOI_EXIT		(1ULL << 0)

#define KVM_SPLIT_RESAMPLE_VALID_FLAGS		KVM_SPLIT_RESAMPLE_NO_EOI_EXIT

#endif /* _UAPI_LINUX_KVM_KIT_H */
