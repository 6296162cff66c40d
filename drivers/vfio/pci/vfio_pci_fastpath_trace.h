/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tracepoints of the vfio-pci MSI/MSI-X fast path.  hit and miss fire
 * from the vector's primary handler (hard irq, also on PREEMPT_RT), swap
 * from VFIO_DEVICE_SET_IRQS (process context).
 */
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

/* An irq and an errno: the miss and swap events below. */
DECLARE_EVENT_CLASS(vfio_fastpath_irq_err,
		    TP_PROTO(unsigned int irq, int err),
		    TP_ARGS(irq, err),
		    TP_STRUCT__entry(__field(unsigned int, irq) __field(int, err)),
		    TP_fast_assign(__entry->irq = irq; __entry->err = err;),
		    TP_printk("irq=%u err=%d", __entry->irq, __entry->err)
);

/*
 * Not delivered by the fast path: the eventfd is signalled instead (from
 * hard irq, or from the irq thread on PREEMPT_RT).  err: -ENOENT producer
 * not registered, -ENODEV no paired consumer with a fast handler,
 * -EWOULDBLOCK not an MSI route or injection would block, -EBUSY route
 * being changed or irqfd being deassigned, -EINVAL no atomic destination.
 */
DEFINE_EVENT(vfio_fastpath_irq_err, vfio_fastpath_miss,
	     TP_PROTO(unsigned int irq, int err),
	     TP_ARGS(irq, err)
);

/*
 * A trigger change of a requested vector with the fast handlers, while
 * fastpath=1 (with 0 stock's way runs and nothing is traced).  err: 0
 * switched in place; -ESTALE the MSI-X entry does not hold the irq core's
 * message; else eventfd_ctx_fdget()'s error.  Non-zero: the caller frees
 * and requests the vector as stock does.
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
