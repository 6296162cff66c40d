/* SPDX-License-Identifier: GPL-2.0-only */
/* hit, drop, miss: hard irq, also on PREEMPT_RT; swap: process context. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vfio_fastpath

#if !defined(_VFIO_PCI_FASTPATH_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _VFIO_PCI_FASTPATH_TRACE_H

#include <linux/irqbypass.h>
#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(vfio_fastpath_irq_result,
		    TP_PROTO(unsigned int irq, int result),
		    TP_ARGS(irq, result),
		    TP_STRUCT__entry(__field(unsigned int, irq)
				     __field(int, result)),
		    TP_fast_assign(__entry->irq = irq; __entry->result = result;),
		    TP_printk("irq=%u result=%s", __entry->irq,
			      __print_symbolic(__entry->result,
					       { IRQ_BYPASS_FAST_DELIVERED, "delivered" },
					       { IRQ_BYPASS_FAST_QUEUED, "queued" },
					       { IRQ_BYPASS_FAST_MERGED, "merged" },
					       { IRQ_BYPASS_FAST_NO_TARGET, "no_target" }))
);

/*
 * The paired consumer's fast handler took the interrupt: the LAPIC has it
 * (delivered), or a thread sets the irqchip pin (queued).
 */
DEFINE_EVENT(vfio_fastpath_irq_result, vfio_fastpath_hit,
	     TP_PROTO(unsigned int irq, int result),
	     TP_ARGS(irq, result)
);

/*
 * It consumed the interrupt without effect, as the eventfd path would: a
 * pin already queued (merged), or no LAPIC took it (no_target).
 */
DEFINE_EVENT(vfio_fastpath_irq_result, vfio_fastpath_drop,
	     TP_PROTO(unsigned int irq, int result),
	     TP_ARGS(irq, result)
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
 * changing, -EINVAL no atomic destination, -ENOBUFS past storm_budget.
 */
DEFINE_EVENT(vfio_fastpath_irq_err, vfio_fastpath_miss,
	     TP_PROTO(unsigned int irq, int err),
	     TP_ARGS(irq, err)
);

/*
 * PREEMPT_RT: the vector went past storm_budget (on=1) and its interrupts
 * take the irq thread, or its rate fell (on=0).  count: interrupts in the
 * window that decided it.
 */
TRACE_EVENT(vfio_fastpath_storm,
	    TP_PROTO(unsigned int irq, bool on, unsigned int count),
	    TP_ARGS(irq, on, count),
	    TP_STRUCT__entry(__field(unsigned int, irq) __field(bool, on)
			     __field(unsigned int, count)),
	    TP_fast_assign(__entry->irq = irq; __entry->on = on;
			   __entry->count = count;),
	    TP_printk("irq=%u on=%d count=%u", __entry->irq, __entry->on,
		      __entry->count)
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
