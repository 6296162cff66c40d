// SPDX-License-Identifier: GPL-2.0-only
/*
 * stress_routing: KVM_SET_GSI_ROUTING churn while edu MSIs flow through
 * the irqfd (Documentation/reliability.rst).  A thread installs random
 * routing tables: up to 64 entries in random order (IOAPIC and PIC pins,
 * MSI routes on other GSIs), among them always the test GSI's MSI route to
 * the same destination and vector, encoded with or without the
 * redirection hint.  Every MSI must reach the guest exactly once.
 *
 * KVM_IRQBYPASS_SEED        replay a run
 * KVM_IRQBYPASS_ROUTING     routing updates (default 10000)
 * KVM_IRQBYPASS_SECONDS     time bound of the churn (default 120)
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rig.h"
#include "tap.h"

#define NR_TESTS	7
#define MAX_ENTRIES	64

/* A random table that keeps TEST_MSI_GSI -> TEST_MSI_VECTOR. */
static void random_table(struct prng *p, struct kvm_irq_routing *t)
{
	/* Per GSI: which chips (1 PIC, 2 IOAPIC) or an MSI (4) has it. */
	u8 used[1024] = { 0 };
	unsigned int n = 1 + prng_below(p, MAX_ENTRIES), i, j;
	struct kvm_irq_routing_entry *e = t->entries, tmp;

	e[0] = (struct kvm_irq_routing_entry) {
		.gsi = TEST_MSI_GSI,
		.type = KVM_IRQ_ROUTING_MSI,
		.u.msi.address_lo = LAPIC_BASE | (prng_below(p, 2) ? 0x8 : 0),
		.u.msi.data = TEST_MSI_VECTOR,
	};
	used[TEST_MSI_GSI] = 4;
	for (i = 1; i < n; i++) {
		u32 gsi = prng_below(p, 1024);
		/* PIC and IOAPIC entries may share a GSI below 16. */
		u8 kind = gsi < 16 && prng_below(p, 2) ? 1 :
			  gsi < SPLIT_IRQCHIP_PINS ? 2 : 4;

		if (used[gsi] & kind || (used[gsi] && kind == 4)) {
			n--;
			i--;
			continue;
		}
		used[gsi] |= kind;
		e[i] = (struct kvm_irq_routing_entry) { .gsi = gsi };
		if (kind == 1) {
			e[i].type = KVM_IRQ_ROUTING_IRQCHIP;
			e[i].u.irqchip.irqchip = gsi < 8 ? KVM_IRQCHIP_PIC_MASTER :
							   KVM_IRQCHIP_PIC_SLAVE;
			e[i].u.irqchip.pin = gsi % 8;
		} else if (kind == 2) {
			e[i].type = KVM_IRQ_ROUTING_IRQCHIP;
			e[i].u.irqchip.irqchip = KVM_IRQCHIP_IOAPIC;
			e[i].u.irqchip.pin = gsi;
		} else {
			/* One MSI entry per GSI; never raised. */
			e[i].type = KVM_IRQ_ROUTING_MSI;
			e[i].u.msi.address_lo = LAPIC_BASE;
			e[i].u.msi.data = 0x60 + prng_below(p, 0x80);
		}
	}
	for (i = n - 1; i > 0; i--) {
		j = prng_below(p, i + 1);
		tmp = e[i];
		e[i] = e[j];
		e[j] = tmp;
	}
	t->nr = n;
	t->flags = 0;
}

static void *routing_thread(void *arg)
{
	struct rig_control *ch = arg;
	struct msi_rig *r = &ch->r;
	struct kvm_irq_routing *t;
	long i;

	t = calloc(1, sizeof(*t) + MAX_ENTRIES * sizeof(t->entries[0]));
	if (!t) {
		WRITE_ONCE(r->ctl_err, -ENOMEM);
		return NULL;
	}
	for (i = 0; rig_ctl_go(r, i, ch->ops, ch->deadline); i++) {
		random_table(&ch->prng, t);
		if (ioctl(r->vm->vm_fd, KVM_SET_GSI_ROUTING, t) < 0) {
			tap_diag("update %ld (%u entries): KVM_SET_GSI_ROUTING: %d",
				 i, t->nr, errno);
			WRITE_ONCE(r->ctl_err, -errno);
			break;
		}
		ch->items += t->nr;
		WRITE_ONCE(r->ctl_ops, i + 1);
		prng_usleep(&ch->prng, 300);
	}
	free(t);
	return NULL;
}

/* The route is always an MSI route: every MSI goes to the guest. */
static void routing_after(struct rig_control *ctl, const struct irq_acct *c)
{
	tap_diag("routing: %lu entries in %lu tables", ctl->items,
		 ctl->r.ctl_ops);
	tap_result(c->guest == c->raised,
		   "routing: all %llu MSIs reached the guest", c->guest);
}

int main(void)
{
	return rig_control_main("stress_routing", "routing", NR_TESTS,
				"KVM_IRQBYPASS_ROUTING", 10000, 120,
				routing_thread, routing_after);
}
