/* SPDX-License-Identifier: GPL-2.0-only */
/* The distro's irqbypass.c, renamed stock_* by bench_irqbypass_stock.c. */
#ifndef BENCH_IRQBYPASS_H
#define BENCH_IRQBYPASS_H

struct irq_bypass_producer;
struct irq_bypass_consumer;

int stock_irq_bypass_register_producer(struct irq_bypass_producer *prod);
void stock_irq_bypass_unregister_producer(struct irq_bypass_producer *prod);
int stock_irq_bypass_register_consumer(struct irq_bypass_consumer *cons);
void stock_irq_bypass_unregister_consumer(struct irq_bypass_consumer *cons);

#endif /* BENCH_IRQBYPASS_H */
