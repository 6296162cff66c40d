/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared code of the reliability campaign (Documentation/reliability.rst)
 * and of vfio_fastpath: a seeded PRNG, count and time bounds from the
 * environment, a vCPU thread, one-at-a-time edu MSIs with exact delivery
 * accounting, the kit's fast-path tracepoints and a kernel-log watch.
 */
#ifndef KVM_IRQBYPASS_STRESS_UTIL_H
#define KVM_IRQBYPASS_STRESS_UTIL_H

#include <pthread.h>
#include <stdbool.h>

#include "kvm_util_lite.h"
#include "vfio_util_lite.h"

/* xorshift64*: small, fast and the same sequence on every machine. */
struct prng {
	u64 state;
};

void prng_seed(struct prng *p, u64 seed);
u64 prng_next(struct prng *p);
/* Uniform in [0, n); 0 when n is 0. */
u32 prng_below(struct prng *p, u32 n);

/*
 * The run's seed: KVM_IRQBYPASS_SEED if set, else from the clock.  Printed
 * as "# seed N" so a failing run can be replayed with KVM_IRQBYPASS_SEED=N.
 */
u64 stress_seed(void);

/*
 * Line-buffer stdout (TAP must survive a kill by run_tests.sh's timeout),
 * print the seed and return it.
 */
u64 stress_init(const char *name);

/* Time bound: true once the deadline (in µs, 0: none) has passed. */
static inline bool deadline_passed(long long deadline_us)
{
	return deadline_us && now_us() >= deadline_us;
}

/* Sleep a random number of µs below max_us (nothing for 0). */
void prng_usleep(struct prng *p, u32 max_us);

/* A vCPU that keeps the guest running in a thread; err set on a failure. */
struct vcpu_runner {
	struct lite_vm *vm;
	pthread_t thread;
	int cpu;		/* pin the thread to this CPU, -1: no pinning */
	bool running;
	bool stop;
	int err;
};

int vcpu_runner_start(struct vcpu_runner *r, struct lite_vm *vm, int cpu);
void vcpu_runner_stop(struct vcpu_runner *r);

/*
 * Delivery accounting of one-at-a-time MSIs: each raise ends up as one
 * guest ISR run or one eventfd count.  absorbed: raises that went neither
 * way because the VM (or vector, or device) was being torn down at that
 * very moment; a teardown test allows at most one per teardown.
 */
struct irq_acct {
	unsigned long long raised;
	unsigned long long guest;	/* ISR runs */
	unsigned long long signalled;	/* eventfd counts read */
	unsigned long long absorbed;
	unsigned long long doubled;	/* a raise seen both ways */
	long long host;			/* vfio-msi host irqs, -1: unknown */
	long long hits, misses;		/* tracepoints, -1: not available */
};

void irq_acct_add(struct irq_acct *sum, const struct irq_acct *c);
/* Zero c, note the host irq count of bdf, start the tracepoints if fast. */
void irq_acct_begin(struct irq_acct *c, const char *bdf, bool fast);
/* raised == guest + signalled + absorbed, nothing doubled. */
bool irq_acct_exact(const struct irq_acct *c);
void irq_acct_print(const char *name, const struct irq_acct *c);

/*
 * What edu_raise_wait() watches: the guest's ISR count (NULL when there is
 * no guest) and the vector's eventfd.
 */
struct msi_sink {
	const u32 *guest_count;
	u32 guest_seen;
	int efd;
};

static inline const u32 *guest_count_ptr(u8 *ram)
{
	return &((struct guest_params *)(ram + GUEST_PARAMS_GPA))->count;
}

/* Fold what the sink saw since the last call into c; returns the delta. */
unsigned int msi_sink_collect(struct msi_sink *s, struct irq_acct *c);

/*
 * Raise one edu MSI and wait until it shows up in the sink, at most
 * timeout_ms or until *abort is set.  The edu's status is acked after.
 * Returns 0, or -ETIMEDOUT (nothing seen: the caller decides whether that
 * raise was absorbed by a teardown or lost).
 */
int edu_raise_wait(struct edu_dev *edu, struct msi_sink *s,
		   struct irq_acct *c, int timeout_ms, const int *abort);
/*
 * The same with nr sinks (e.g. the guests of several VMs whose irqfds share
 * the vector's eventfd): c[i] gets what s[i] saw; the raise, and a doubling
 * (more than one arrival over all sinks), count in c[0].
 */
int edu_raise_wait_sinks(struct edu_dev *edu, struct msi_sink *s,
			 struct irq_acct *c, unsigned int nr, int timeout_ms,
			 const int *abort);

/* The vector's eventfd: nonblocking, close-on-exec. */
int msi_eventfd(void);
/* MSI vector 0 of the edu triggers fd (-1: disable MSI). */
int edu_msi_trigger(struct edu_dev *edu, int fd);

/* Kit fast path on: both parameters Y and the tracepoints exist. */
bool fastpath_enabled(void);
bool fastpath_trace_start(void);
void fastpath_trace_stop(void);
/* This irq's (irq < 0: any irq's) hit and miss events since the start. */
void fastpath_trace_count(int irq, long long *hits, long long *misses);

/*
 * Kernel log watch: kmsg_watch() remembers the end of the log,
 * kmsg_splats() prints and counts the lines added since that match a WARN,
 * BUG, oops, KASAN, lockdep, hung-task or kmemleak report.  -1 on error.
 */
int kmsg_watch(void);
int kmsg_splats(int fd);

/* A KVM VM that can take the kit's capability: KVM_CHECK_EXTENSION. */

#endif /* KVM_IRQBYPASS_STRESS_UTIL_H */

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
