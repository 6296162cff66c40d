// SPDX-License-Identifier: GPL-2.0-only
/*
 * Build glue of the irqbypass benchmark: compiles the distro's own
 * virt/lib/irqbypass.c (the stock manager, unchanged, from the path Kbuild
 * passes in IRQBYPASS_STOCK_SRC) into irqbypass_bench.ko, with its exported
 * names renamed to stock_* and its exports and module info neutralised, so
 * the stock and the kit managers can be timed in the same run.  No stock code
 * is kept in the kit.
 */

#ifndef IRQBYPASS_STOCK_SRC
#error "IRQBYPASS_STOCK_SRC must name the distro's virt/lib/irqbypass.c"
#endif

#define irq_bypass_register_producer	stock_irq_bypass_register_producer
#define irq_bypass_unregister_producer	stock_irq_bypass_unregister_producer
#define irq_bypass_register_consumer	stock_irq_bypass_register_consumer
#define irq_bypass_unregister_consumer	stock_irq_bypass_unregister_consumer

#include <linux/build_bug.h>
#include <linux/export.h>
#include <linux/module.h>

#include "bench_irqbypass.h"

/* Still checked at compile time, but neither exported nor in modinfo. */
#undef EXPORT_SYMBOL_GPL
#define EXPORT_SYMBOL_GPL(sym) static_assert(sizeof(sym) != 0)
#undef MODULE_LICENSE
#define MODULE_LICENSE(license) static_assert(sizeof(license) > 1)
#undef MODULE_DESCRIPTION
#define MODULE_DESCRIPTION(desc) static_assert(sizeof(desc) > 1)

#include IRQBYPASS_STOCK_SRC
