// SPDX-License-Identifier: GPL-2.0-only
/*
 * Compiles the distro's unchanged virt/lib/irqbypass.c (IRQBYPASS_STOCK_SRC,
 * from Kbuild) into irqbypass_bench.ko under stock_* names, without exports
 * or modinfo, so the stock and kit managers are timed in the same run.
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

#include <linux/kvm_irqbypass_compat.h>

#include "bench_irqbypass.h"

/* Still checked at compile time, but neither exported nor in modinfo. */
#undef EXPORT_SYMBOL_GPL
#define EXPORT_SYMBOL_GPL(sym) static_assert(sizeof(sym) != 0)
#undef MODULE_LICENSE
#define MODULE_LICENSE(license) static_assert(sizeof(license) > 1)
#undef MODULE_DESCRIPTION
#define MODULE_DESCRIPTION(desc) static_assert(sizeof(desc) > 1)

#include IRQBYPASS_STOCK_SRC

int bench_stock_reg_prod(struct irq_bypass_producer *prod, void *key)
{
	return irqbp_compat_reg_prod(stock_irq_bypass_register_producer, prod, key);
}

int bench_stock_reg_cons(struct irq_bypass_consumer *cons, void *key)
{
	return irqbp_compat_reg_cons(stock_irq_bypass_register_consumer, cons, key);
}
