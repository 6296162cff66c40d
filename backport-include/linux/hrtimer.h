/* SPDX-License-Identifier: GPL-2.0-only */
/* hrtimer_setup() (6.13), which 7.x keeps alone: hrtimer_init() is gone. */
#ifndef _BACKPORT_LINUX_HRTIMER_H
#define _BACKPORT_LINUX_HRTIMER_H

#include_next <linux/hrtimer.h>
#include <linux/version.h>

#if LINUX_VERSION_MAJOR < 6 || \
	(LINUX_VERSION_MAJOR == 6 && LINUX_VERSION_PATCHLEVEL < 13)
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

#endif /* _BACKPORT_LINUX_HRTIMER_H */
