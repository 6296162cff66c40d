/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvm-irqbypass kit: the differences between the kernel lines the kit
 * builds for (Debian 6.1 and 6.12), in one place.  Our code calls these
 * helpers and never tests the kernel version itself.
 */
#ifndef _LINUX_KIT_COMPAT_H
#define _LINUX_KIT_COMPAT_H

#include <linux/eventfd.h>
#include <linux/version.h>

/*
 * Add 1 to an eventfd's counter and wake its waiters.  6.8 dropped the
 * count argument of eventfd_signal() (it always adds 1 now).
 * Context: any but NMI; takes ctx->wqh.lock (a spinlock_t: sleeping on
 * PREEMPT_RT, so never from hard irq there).
 */
static inline void kit_eventfd_signal(struct eventfd_ctx *ctx)
{
#if LINUX_VERSION_MAJOR > 6 || \
	(LINUX_VERSION_MAJOR == 6 && LINUX_VERSION_PATCHLEVEL >= 8)
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

#endif /* _LINUX_KIT_COMPAT_H */
