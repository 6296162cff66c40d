/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _BACKPORT_LINUX_EVENTFD_H
#define _BACKPORT_LINUX_EVENTFD_H

#include_next <linux/eventfd.h>
#include <linux/version.h>

#if LINUX_VERSION_MAJOR < 6 || \
	(LINUX_VERSION_MAJOR == 6 && LINUX_VERSION_PATCHLEVEL < 8)
#include <linux/kernel.h>

/*
 * 6.8 dropped the count argument (always 1); stock callers still pass it.
 * A macro is not re-expanded in its own expansion: both reach the function.
 */
#define __bp_eventfd_signal_1(ctx)	eventfd_signal(ctx, 1)
#define __bp_eventfd_signal_2(ctx, n)	eventfd_signal(ctx, n)
#define eventfd_signal(...) \
	CONCATENATE(__bp_eventfd_signal_, COUNT_ARGS(__VA_ARGS__))(__VA_ARGS__)
#endif

#endif /* _BACKPORT_LINUX_EVENTFD_H */
