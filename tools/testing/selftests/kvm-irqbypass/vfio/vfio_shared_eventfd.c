// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_shared_eventfd: two VMs of one process each have a KVM_IRQFD on the
 * same eventfd E, the trigger of the edu's MSI vector 0 (vfio-pci).  Stock
 * KVM allows that (only a second irqfd on E in the same VM is refused with
 * EBUSY) and adds each irqfd to E's wait queue with add_wait_queue_priority():
 * an exclusive waiter queued after the priority waiters already there
 * (__add_wait_queue()), whose wakeup returns 1 and so ends the walk.  A
 * signal of E thus reaches the OLDEST irqfd still on E and no other; when
 * that one goes, the next oldest takes over.  The kit's fast path must
 * deliver to the same irqfd.
 *
 * Each VM's vCPU runs in a thread and its guest ISR counts without exiting.
 * MSIs are raised one at a time (BAR0 0x60) and each must show up exactly
 * once: as an ISR run in VM A, in VM B, or as a count read from E.  The
 * phases, each with N = KVM_IRQBYPASS_ITERS (default 200) MSIs:
 *
 *   a-only              irqfd A alone                        -> all to A
 *   a-then-b            irqfd B assigned after A             -> all to A
 *   newer-b-deassigned  B (not receiving) deassigned         -> all to A
 *   a-reassigned        B assigned, A deassigned and         -> all to B
 *                       assigned again: B is now the older
 *   older-b-deassigned  B (receiving) deassigned             -> all to A
 *   b-then-a            A deassigned, B then A assigned      -> all to B
 *   older-b-closed      VM B (receiving) closed, no deassign -> all to A
 *   no-irqfd            A deassigned                         -> all read from E
 *
 * a-reassigned catches a fast path that injects into whichever irqfd's
 * irqbypass consumer is registered: B's registration failed with EBUSY
 * while A's consumer existed, A's registers again when A comes back, so
 * such a fast path injects into A, the newer (the kit did, A=200 B=0,
 * until the fast path stayed off for a token while a refused consumer is
 * registered).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fastpath_trace.h"
#include "irq_acct.h"
#include "kvm_util_lite.h"
#include "tap.h"
#include "vcpu_runner.h"
#include "vfio_util_lite.h"

#define SETTLE_MS	100
#define NR_VMS		2
#define NR_PHASES	8
#define NR_TESTS	(3 + NR_PHASES)

/* Where an MSI can end up: struct irq_acct c[] and msi_sink s[] indices. */
enum { SINK_EFD, SINK_A, SINK_B, NR_SINKS };

struct side {
	char name;		/* 'A' or 'B' */
	u32 gsi;		/* its MSI route, GSI -> TEST_MSI_VECTOR */
	struct lite_vm *vm;
	bool irqfd;
	struct vcpu_runner vcpu;
};

struct shared_test {
	struct edu_dev edu;
	int efd;		/* E: the trigger of MSI vector 0 */
	int irq;		/* host irq of vector 0 */
	bool fast;		/* kit fast path on, tracepoints counted */
	int timeout;
	struct side vm[NR_VMS];
	/* s[SINK_EFD] reads E; s[SINK_A + i] counts vm[i]'s ISR runs. */
	struct msi_sink s[NR_SINKS];
};

enum op_type { OP_NONE, OP_ASSIGN, OP_DEASSIGN, OP_CLOSE };

struct op {
	enum op_type type;
	int vm;			/* 0: A, 1: B */
};

struct phase {
	const char *name;
	struct op ops[3];	/* before the MSIs, in order */
	int sink;		/* where every MSI must go */
	const char *why;
};

static const struct phase phases[NR_PHASES] = {
	{ "a-only", { { OP_ASSIGN, 0 } }, SINK_A,
	  "irqfd A alone on E" },
	{ "a-then-b", { { OP_ASSIGN, 1 } }, SINK_A,
	  "irqfd B assigned after A: the older, A, takes every MSI" },
	{ "newer-b-deassigned", { { OP_DEASSIGN, 1 } }, SINK_A,
	  "the newer irqfd B deassigned: A goes on" },
	{ "a-reassigned", { { OP_ASSIGN, 1 }, { OP_DEASSIGN, 0 }, { OP_ASSIGN, 0 } },
	  SINK_B, "B assigned, A deassigned and assigned again: the older, B, takes every MSI" },
	{ "older-b-deassigned", { { OP_DEASSIGN, 1 } }, SINK_A,
	  "the older irqfd B deassigned: A takes over" },
	{ "b-then-a", { { OP_DEASSIGN, 0 }, { OP_ASSIGN, 1 }, { OP_ASSIGN, 0 } },
	  SINK_B, "A deassigned, B then A assigned: the older, B, takes every MSI" },
	{ "older-b-closed", { { OP_CLOSE, 1 } }, SINK_A,
	  "VM B closed with the older irqfd on E: A takes over" },
	{ "no-irqfd", { { OP_DEASSIGN, 0 } }, SINK_EFD,
	  "no irqfd left: every MSI read from E" },
};

static const char *const sink_names[NR_SINKS] = { "E", "A", "B" };

/* A VM whose guest is ready, with the MSI route; its vCPU not yet running. */
static int vm_up(struct shared_test *t, int i)
{
	struct guest_params params = {
		.vector = TEST_MSI_VECTOR,
		.target = ~0u,
	};
	struct side *v = &t->vm[i];

	v->vm = __vm_create(IRQCHIP_KERNEL);
	if (!v->vm || vm_start_guest(v->vm, &params) ||
	    guest_run_until(v->vm, GUEST_PORT_READY, NULL, t->timeout) ||
	    vm_route_msi(v->vm, v->gsi, TEST_MSI_VECTOR))
		return -EIO;
	t->s[SINK_A + i].guest_count = &v->vm->vcpu[0].params->count;
	t->s[SINK_A + i].guest_seen = guest_count(v->vm);
	return 0;
}

/* Stop the vCPU and close the VM, its irqfd (if any) with it. */
static void vm_down(struct shared_test *t, int i)
{
	struct side *v = &t->vm[i];

	vcpu_runner_stop(&v->vcpu);
	t->s[SINK_A + i].guest_count = NULL;
	vm_destroy(v->vm);
	v->vm = NULL;
	v->irqfd = false;
}

static int irqfd_assign(struct shared_test *t, int i, bool assign)
{
	struct side *v = &t->vm[i];
	int ret = __vm_irqfd(v->vm, t->efd, v->gsi,
			   assign ? 0 : KVM_IRQFD_FLAG_DEASSIGN, 0);

	if (ret)
		tap_diag("KVM_IRQFD %s (VM %c, GSI %u): %s",
			 assign ? "assign" : "deassign", v->name, v->gsi,
			 strerror(-ret));
	else
		v->irqfd = assign;
	return ret;
}

static int do_op(struct shared_test *t, const struct op *op)
{
	switch (op->type) {
	case OP_ASSIGN:
		return irqfd_assign(t, op->vm, true);
	case OP_DEASSIGN:
		return irqfd_assign(t, op->vm, false);
	case OP_CLOSE:
		vm_down(t, op->vm);
		return 0;
	default:
		return 0;
	}
}

static void phase_begin(struct shared_test *t, struct irq_acct *c)
{
	int i;

	irq_acct_begin(&c[0], &t->edu, t->fast);
	for (i = 1; i < NR_SINKS; i++)
		memset(&c[i], 0, sizeof(c[i]));
}

/*
 * Let late arrivals land, then take the final counts: an MSI that went two
 * ways shows up as A + B + E > raised.
 */
static void phase_end(struct shared_test *t, struct irq_acct *c,
		      const char *name)
{
	long long host;
	int i;

	usleep(SETTLE_MS * 1000);
	for (i = 0; i < NR_SINKS; i++)
		msi_sink_collect(&t->s[i], &c[i]);
	host = proc_interrupts_count("vfio-msi[", t->edu.bdf);
	c[0].host = c[0].host >= 0 && host >= 0 ? host - c[0].host : -1;
	if (t->fast)
		fastpath_trace_count(t->irq, &c[0].hits, &c[0].misses);
	tap_diag("%s: raised=%llu A=%llu B=%llu E=%llu doubled=%llu host=%lld",
		 name, c[0].raised, c[SINK_A].guest, c[SINK_B].guest,
		 c[SINK_EFD].signalled, c[0].doubled, c[0].host);
	if (t->fast)
		tap_diag("%s: fast path hits=%lld misses=%lld", name,
			 c[0].hits, c[0].misses);
}

static int run_raises(struct shared_test *t, struct irq_acct *c,
		      unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (edu_raise_wait_sinks(&t->edu, t->s, c, NR_SINKS,
					 t->timeout, NULL)) {
			tap_diag("raise %u: not in A, B or E in %d ms (vCPU A %d, B %d)",
				 i + 1, t->timeout, t->vm[0].vcpu.err,
				 t->vm[1].vcpu.err);
			return -ETIMEDOUT;
		}
	return 0;
}

/* All n went to sink, each once, and the host saw each once. */
static bool delivered_to(const struct irq_acct *c, int sink, unsigned int n)
{
	unsigned long long got[NR_SINKS] = {
		[SINK_EFD] = c[SINK_EFD].signalled,
		[SINK_A] = c[SINK_A].guest,
		[SINK_B] = c[SINK_B].guest,
	};
	int i;

	for (i = 0; i < NR_SINKS; i++)
		if (got[i] != (i == sink ? n : 0))
			return false;
	return c[0].raised == n && !c[0].doubled &&
	       (c[0].host < 0 || c[0].host == n);
}

static bool run_phase(struct shared_test *t, const struct phase *p,
		      unsigned int n)
{
	struct irq_acct c[NR_SINKS];
	bool ok = true;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < ARRAY_SIZE(p->ops) && p->ops[i].type != OP_NONE; i++)
		ok = ok && !do_op(t, &p->ops[i]);
	phase_begin(t, c);
	if (ok)
		ret = run_raises(t, c, n);
	phase_end(t, c, p->name);
	return tap_result(ok && !ret && delivered_to(c, p->sink, n),
			  "%s: %s (%u MSIs, all to %s)", p->name, p->why, n,
			  sink_names[p->sink]);
}

int main(void)
{
	int iters = test_iterations(200);
	struct shared_test t = {
		.efd = -1,
		.irq = -1,
		.vm = { { .name = 'A', .gsi = TEST_MSI_GSI },
			{ .name = 'B', .gsi = TEST_MSI_GSI + 1 } },
		.s = { { .efd = -1 }, { .efd = -1 }, { .efd = -1 } },
	};
	unsigned int n = iters;
	bool ok;
	int i, ret;

	t.timeout = test_timeout_ms();
	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());

	ret = edu_open(&t.edu);
	if (ret == -ENODEV) {
		tap_skip_rest("no edu device (1234:11e8) on this machine");
		return tap_finish();
	}
	t.efd = msi_eventfd();
	t.s[SINK_EFD].efd = t.efd;
	ok = !ret && !edu_check_alive(&t.edu) &&
	     !edu_enable_bus_master(&t.edu) && t.efd >= 0;
	/* Both guests ready before either vCPU thread runs. */
	ok = ok && !vm_up(&t, 0) && !vm_up(&t, 1) &&
	     !vcpu_runner_start(&t.vm[0].vcpu, t.vm[0].vm, -1) &&
	     !vcpu_runner_start(&t.vm[1].vcpu, t.vm[1].vm, -1) &&
	     !edu_msi_trigger(&t.edu, t.efd);
	t.irq = proc_interrupts_irq("vfio-msi[0]", t.edu.bdf);
	t.fast = fastpath_enabled();
	tap_diag("iterations=%u irq=%d fast path %s", n, t.irq,
		 t.fast ? "on (tracepoints counted)" : "off or stock modules");
	if (!tap_result(ok && t.irq > 0,
			"setup: edu MSI -> E; VMs A (GSI %u) and B (GSI %u) running",
			t.vm[0].gsi, t.vm[1].gsi))
		goto out;

	for (i = 0; i < NR_PHASES; i++) {
		run_phase(&t, &phases[i], n);
		if (i)
			continue;
		/* The same VM may not have two irqfds on one eventfd. */
		ret = __vm_irqfd(t.vm[0].vm, t.efd, t.vm[0].gsi + 2, 0, 0);
		if (!ret)
			__vm_irqfd(t.vm[0].vm, t.efd, t.vm[0].gsi + 2,
				   KVM_IRQFD_FLAG_DEASSIGN, 0);
		tap_result(ret == -EBUSY,
			   "a second irqfd on E in VM A is refused with EBUSY (got %s)",
			   ret ? strerror(-ret) : "success");
	}

	ret = edu_msi_trigger(&t.edu, -1);
	tap_result(!ret, "MSI disabled cleanly");

out:
	for (i = 0; i < NR_VMS; i++)
		vcpu_runner_stop(&t.vm[i].vcpu);
	if (t.fast)
		fastpath_trace_stop();
	for (i = 0; i < NR_VMS; i++) {
		if (t.vm[i].vm && t.vm[i].irqfd)
			irqfd_assign(&t, i, false);
		vm_down(&t, i);
	}
	if (t.efd >= 0)
		close(t.efd);
	edu_close(&t.edu);
	return tap_finish();
}
