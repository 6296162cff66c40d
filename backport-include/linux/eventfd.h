/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * eventfd_signal() as of 6.8 on older kernels.  This directory precedes the
 * kernel's include/ on the include path of every object we build, so our
 * code calls the newest API by its own name and stock callers still build.
 */
#ifndef _BACKPORT_LINUX_EVENTFD_H
#define _BACKPORT_LINUX_EVENTFD_H

#include_next <linux/eventfd.h>
#include <linux/version.h>

#if LINUX_VERSION_MAJOR < 6 || \
	(LINUX_VERSION_MAJOR == 6 && LINUX_VERSION_PATCHLEVEL < 8)
#include <linux/kernel.h>

/*
 * 6.8 dropped the count argument (it always added 1).  Take one argument or
 * two: stock callers still pass the count.  The macro's own name in its
 * expansion is not expanded again, so both forms call the function.
 */
#define __bp_eventfd_signal_1(ctx)	eventfd_signal(ctx, 1)
#define __bp_eventfd_signal_2(ctx, n)	eventfd_signal(ctx, n)
#define eventfd_signal(...) \
	CONCATENATE(__bp_eventfd_signal_, COUNT_ARGS(__VA_ARGS__))(__VA_ARGS__)
#endif

#endif /* _BACKPORT_LINUX_EVENTFD_H */
