/* SPDX-License-Identifier: GPL-2.0-only */
/* hit and miss: hard irq, also on PREEMPT_RT; swap: process context. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vfio_fastpath

#if !defined(_VFIO_PCI_FASTPATH_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _VFIO_PCI_FASTPATH_TRACE_H

#include <linux/tracepoint.h>

/* The paired consumer's fast handler delivered the interrupt. */
TRACE_EVENT(vfio_fastpath_hit,
	    TP_PROTO(unsigned int irq),
	    TP_ARGS(irq),
	    TP_STRUCT__entry(__field(unsigned int, irq)),
	    TP_fast_assign(__entry->irq = irq;),
	    TP_printk("irq=%u", __entry->irq)
);

DECLARE_EVENT_CLASS(vfio_fastpath_irq_err,
		    TP_PROTO(unsigned int irq, int err),
		    TP_ARGS(irq, err),
		    TP_STRUCT__entry(__field(unsigned int, irq) __field(int, err)),
		    TP_fast_assign(__entry->irq = irq; __entry->err = err;),
		    TP_printk("irq=%u err=%d", __entry->irq, __entry->err)
);

/*
 * The eventfd is signalled instead.  err: -ENODEV no fast consumer
 * published, -EWOULDBLOCK not MSI or would block, -EBUSY route or irqfd
 * changing, -EINVAL no atomic destination.
 */
DEFINE_EVENT(vfio_fastpath_irq_err, vfio_fastpath_miss,
	     TP_PROTO(unsigned int irq, int err),
	     TP_ARGS(irq, err)
);

/*
 * A trigger change with fastpath=1.  err: 0 in place; else stock's free and
 * request follow (-ESTALE: stale MSI-X entry, or eventfd_ctx_fdget()'s).
 */
DEFINE_EVENT(vfio_fastpath_irq_err, vfio_fastpath_swap,
	     TP_PROTO(unsigned int irq, int err),
	     TP_ARGS(irq, err)
);

#endif /* _VFIO_PCI_FASTPATH_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE vfio_pci_fastpath_trace
#include <trace/define_trace.h>
