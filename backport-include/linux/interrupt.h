/* SPDX-License-Identifier: GPL-2.0-only */
/* IRQF_COND_ONESHOT (6.8): 0 before, as request_irq() passes none either. */
#ifndef _BACKPORT_LINUX_INTERRUPT_H
#define _BACKPORT_LINUX_INTERRUPT_H

#include_next <linux/interrupt.h>

#ifndef IRQF_COND_ONESHOT
#define IRQF_COND_ONESHOT	0
#endif

#endif /* _BACKPORT_LINUX_INTERRUPT_H */
