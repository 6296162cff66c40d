/* SPDX-License-Identifier: GPL-2.0-only */
/* The distro's irqbypass.c, renamed stock_* by bench_irqbypass_stock.c. */
#ifndef BENCH_IRQBYPASS_H
#define BENCH_IRQBYPASS_H

struct irq_bypass_producer;
struct irq_bypass_consumer;

/* Registration of the line's API with the key passed, as the kit's. */
int bench_stock_reg_prod(struct irq_bypass_producer *prod, void *key);
int bench_stock_reg_cons(struct irq_bypass_consumer *cons, void *key);
void stock_irq_bypass_unregister_producer(struct irq_bypass_producer *prod);
void stock_irq_bypass_unregister_consumer(struct irq_bypass_consumer *cons);

#endif /* BENCH_IRQBYPASS_H */
