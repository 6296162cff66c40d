/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What differs between the kernel lines for the kit's own code, in one
 * place.  Stock code that needs an older or newer API compiles through the
 * headers of backport-include/ instead.
 */
#ifndef __KVM_IRQBYPASS_COMPAT_H
#define __KVM_IRQBYPASS_COMPAT_H

#include <linux/irqbypass.h>

/*
 * irqbypass keys: since 6.17 the eventfd is passed to registration, which
 * sets ->eventfd; before, the caller sets ->token.  The reg argument is the
 * registration function: the kit's, or the stock one that the benchmark
 * compiles a second time.
 *
 * IRQBP_REREGISTER_EBUSY: registering a registered object again is refused
 * with -EBUSY (token-keyed); since 6.17 it is a caller bug (WARN, -EINVAL).
 * irqbp_compat_set_key(): the key a registered object is found by (the
 * token; the eventfd is the manager's).  irqbp_prod_private() and
 * irqbp_cons_private(): the fields the manager owns.
 */
#ifdef IRQ_BYPASS_EVENTFD_KEYED
#define IRQBP_REREGISTER_EBUSY		0
#define irqbp_prod_private(prod)	((prod)->consumer)
#define irqbp_cons_private(cons)	((cons)->producer)

typedef int (*irqbp_reg_prod_t)(struct irq_bypass_producer *prod,
				struct eventfd_ctx *eventfd, int irq);
typedef int (*irqbp_reg_cons_t)(struct irq_bypass_consumer *cons,
				struct eventfd_ctx *eventfd);

static inline void irqbp_compat_set_key(void *obj, void *key)
{
}

static inline int irqbp_compat_reg_prod(irqbp_reg_prod_t reg,
					struct irq_bypass_producer *prod, void *key)
{
	return reg(prod, key, prod->irq);
}

static inline int irqbp_compat_reg_cons(irqbp_reg_cons_t reg,
					struct irq_bypass_consumer *cons, void *key)
{
	return reg(cons, key);
}

static inline int irqbp_compat_reg_fast_prod(struct irq_bypass_producer *prod,
					     void *key, unsigned int flags)
{
	return irq_bypass_register_fast_producer(prod, key, prod->irq, flags);
}

static inline int irqbp_compat_reg_fast_cons(struct irq_bypass_consumer *cons,
					     void *key,
					     irq_bypass_fast_handler_t handler)
{
	return irq_bypass_register_fast_consumer(cons, key, handler);
}
#else
#define IRQBP_REREGISTER_EBUSY		1
#define irqbp_compat_set_key(obj, key)	((obj)->token = (key))
#define irqbp_prod_private(prod)	((prod)->node)
#define irqbp_cons_private(cons)	((cons)->node)

typedef int (*irqbp_reg_prod_t)(struct irq_bypass_producer *prod);
typedef int (*irqbp_reg_cons_t)(struct irq_bypass_consumer *cons);

static inline int irqbp_compat_reg_prod(irqbp_reg_prod_t reg,
					struct irq_bypass_producer *prod, void *key)
{
	prod->token = key;
	return reg(prod);
}

static inline int irqbp_compat_reg_cons(irqbp_reg_cons_t reg,
					struct irq_bypass_consumer *cons, void *key)
{
	cons->token = key;
	return reg(cons);
}

static inline int irqbp_compat_reg_fast_prod(struct irq_bypass_producer *prod,
					     void *key, unsigned int flags)
{
	prod->token = key;
	return irq_bypass_register_fast_producer(prod, flags);
}

static inline int irqbp_compat_reg_fast_cons(struct irq_bypass_consumer *cons,
					     void *key,
					     irq_bypass_fast_handler_t handler)
{
	cons->token = key;
	return irq_bypass_register_fast_consumer(cons, handler);
}
#endif

#endif /* __KVM_IRQBYPASS_COMPAT_H */
