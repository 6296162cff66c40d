/* SPDX-License-Identifier: GPL-2.0-only */
/* timer_container_of() (6.16), which replaced from_timer() in 7.x. */
#ifndef _BACKPORT_LINUX_TIMER_H
#define _BACKPORT_LINUX_TIMER_H

#include_next <linux/timer.h>

#ifndef timer_container_of
#define timer_container_of(var, callback_timer, timer_fieldname) \
	from_timer(var, callback_timer, timer_fieldname)
#endif

#endif /* _BACKPORT_LINUX_TIMER_H */
