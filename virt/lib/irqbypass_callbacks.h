/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The callbacks that connect and disconnect a producer and a consumer, in
 * the stock manager's order; shared by the token-keyed manager
 * (irqbypass.c, 6.1 and 6.12) and the eventfd-keyed one
 * (irqbypass_eventfd.c, 6.17 and later).  Context: process, under the
 * manager's lock of the pair's key.
 */
#ifndef __IRQBYPASS_CALLBACKS_H
#define __IRQBYPASS_CALLBACKS_H

#include <linux/irqbypass.h>

/*
 * Producer stop, consumer stop, producer add, consumer add (undoing the
 * producer's add if the consumer's fails), consumer start, producer start.
 */
static inline int irqbp_callbacks_connect(struct irq_bypass_producer *prod,
					  struct irq_bypass_consumer *cons)
{
	int ret = 0;

	if (prod->stop)
		prod->stop(prod);
	if (cons->stop)
		cons->stop(cons);

	if (prod->add_consumer)
		ret = prod->add_consumer(prod, cons);
	if (!ret && cons->add_producer) {
		ret = cons->add_producer(cons, prod);
		if (ret && prod->del_consumer)
			prod->del_consumer(prod, cons);
	}

	if (cons->start)
		cons->start(cons);
	if (prod->start)
		prod->start(prod);
	return ret;
}

/* Stop both, consumer del, producer del, start both. */
static inline void irqbp_callbacks_disconnect(struct irq_bypass_producer *prod,
					      struct irq_bypass_consumer *cons)
{
	if (prod->stop)
		prod->stop(prod);
	if (cons->stop)
		cons->stop(cons);

	if (cons->del_producer)
		cons->del_producer(cons, prod);
	if (prod->del_consumer)
		prod->del_consumer(prod, cons);

	if (cons->start)
		cons->start(cons);
	if (prod->start)
		prod->start(prod);
}

#endif /* __IRQBYPASS_CALLBACKS_H */
