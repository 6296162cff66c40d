/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The few kernel-style helpers these selftests use, so they build on their
 * own with a plain gcc (the kernel's tools/include is not part of the kit).
 */
#ifndef KVM_IRQBYPASS_COMPAT_H
#define KVM_IRQBYPASS_COMPAT_H

#include <stdint.h>
#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/*
 * Guest RAM and the kvm_run page change behind the compiler's back (the
 * vCPU writes them during KVM_RUN, a signal handler writes immediate_exit):
 * access them with single untorn loads and stores the compiler keeps.
 */
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* MMIO accessors with the semantics of the kernel's readl()/writel(). */
static inline u32 mmio_read32(const void *addr)
{
	u32 v;

	asm volatile("movl %1, %0" : "=r" (v) : "m" (*(const u32 *)addr)
		     : "memory");
	return v;
}

static inline void mmio_write32(void *addr, u32 v)
{
	asm volatile("movl %0, %1" : : "r" (v), "m" (*(u32 *)addr)
		     : "memory");
}

#endif /* KVM_IRQBYPASS_COMPAT_H */
