/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef KVM_IRQBYPASS_RIG_H
#define KVM_IRQBYPASS_RIG_H

#include <pthread.h>
#include <stdbool.h>

#include "irq_acct.h"
#include "prng.h"
#include "vcpu_runner.h"

/*
 * The campaign's rig: the edu's MSI vector 0 -> eventfd -> KVM_IRQFD on an
 * MSI route (GSI TEST_MSI_GSI -> TEST_MSI_VECTOR) of an in-kernel-irqchip
 * VM whose vCPU runs in a thread; the guest ISR counts without exiting.
 * Raises are serialised with irqfd assignment by lock: KVM injects a count
 * that is pending in the eventfd at assign time and leaves it readable,
 * which no test could account for.
 */
struct msi_rig {
	struct edu_dev edu;
	struct lite_vm *vm;
	u8 *ram;		/* caller-owned guest RAM, NULL: the VM's own */
	int efd;
	bool irqfd;
	int irq;		/* host irq of the vector, -1: not known */
	bool fast;		/* kit fast path on, tracepoints counted */
	int timeout;		/* ms to wait for one MSI */
	struct vcpu_runner vcpu;
	struct msi_sink sink;
	pthread_mutex_t lock;
	int kmsg;
	/* A control thread (rig_run_control()). */
	pthread_t ctl;
	int ctl_stop;
	unsigned long ctl_ops;
	int ctl_err;
};

/*
 * Open the edu, create the eventfd and bring up the VM with the irqfd.
 * -ENODEV: no edu (skip); another -errno after a diagnostic.
 */
int rig_setup(struct msi_rig *r, u8 *ram);
/* The same with the e1000e's MSI-X vector 0 for the edu's MSI (msix). */
int rig_setup_dev(struct msi_rig *r, u8 *ram, bool msix);
/* A VM with the irqfd assigned and its vCPU running (after rig_vm_down). */
int rig_vm_up(struct msi_rig *r);
/* Stop the vCPU, destroy the VM (the eventfd and the edu stay). */
void rig_vm_down(struct msi_rig *r);
void rig_teardown(struct msi_rig *r);
int rig_irqfd(struct msi_rig *r, bool assign);
/* One raise under the lock; see edu_raise_wait(). */
int rig_raise(struct msi_rig *r, struct irq_acct *c);
/* Let late arrivals land for ms, then fold them into c. */
void rig_settle(struct msi_rig *r, struct irq_acct *c, int ms);
/* Host irq count and tracepoints: start and end of a measured phase. */
void rig_phase_begin(struct msi_rig *r, struct irq_acct *c);
void rig_phase_end(struct msi_rig *r, struct irq_acct *c, const char *name);

/*
 * Raise MSIs one at a time (random gaps below gap_us) while fn runs in a
 * control thread, until fn returns; fn stops early when r->ctl_stop is
 * set (after a failed raise).  Returns 0 or the first raise's error.
 */
int rig_run_control(struct msi_rig *r, void *(*fn)(void *), void *arg,
		    struct irq_acct *c, struct prng *p, u32 gap_us);

/* A test of MSIs while a control thread operates on the rig. */
struct rig_control {
	struct msi_rig r;
	struct prng prng;	/* the control thread's */
	long ops;		/* operations to do */
	long long deadline;
	unsigned long items;	/* what the thread counts besides operations */
};

/*
 * main() of such a test (prog: its name): TAP plan nr_tests, that is the
 * setup line, rig_control_phase()'s four, after()'s and the descriptor
 * check; ops from ops_env (default ops_def), time bound from
 * KVM_IRQBYPASS_SECONDS (default secs_def).  fn(ctl) is the thread.
 * Returns the exit code.
 */
int rig_control_main(const char *prog, const char *name,
		     unsigned int nr_tests, const char *ops_env, long ops_def,
		     long secs_def, void *(*fn)(void *),
		     void (*after)(struct rig_control *ctl,
				   const struct irq_acct *c));

/* A control thread goes on: operation i of n, before the deadline. */
static inline bool rig_ctl_go(struct msi_rig *r, long i, long n,
			      long long deadline)
{
	return i < n && !READ_ONCE(r->ctl_stop) && !deadline_passed(deadline);
}

/*
 * The TAP lines every campaign test ends with: exact accounting, the fast
 * path's hit + miss count, no kernel splat.  Three results.
 */
void rig_report(struct msi_rig *r, const char *name, const struct irq_acct *c,
		bool host_exact);

/*
 * rig_setup() and its TAP line: 0, -ENODEV after skipping the whole plan,
 * or -EIO after a "not ok".
 */
int rig_setup_tap(struct msi_rig *r, u8 *ram);

/*
 * One measured phase: MSIs while fn performs ops operations (or until the
 * deadline), then the operation count line and rig_report(): four results.
 */
int rig_control_phase(struct msi_rig *r, const char *name,
		      void *(*fn)(void *), void *arg, struct prng *p,
		      long ops, long long deadline, struct irq_acct *c);

#endif /* KVM_IRQBYPASS_RIG_H */
