/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A deliberately small KVM helper for the kvm-irqbypass selftests: one VM,
 * one vCPU (or GUEST_MAX_VCPUS, see vm_add_vcpu()) in 32-bit flat protected
 * mode with paging off, running the guest from guest_code.S.  Errors are
 * reported as TAP diagnostics and returned as negative errno values so each
 * test decides what a failure means.
 *
 * Every vCPU may be run from its own host thread: the vcpu_*() calls touch
 * only their vCPU (and the timer of the calling thread); struct vthread is
 * such a thread.  struct race_cpu and struct reraiser (a device thread)
 * order threads on one CPU for the tests that make a race deterministic.
 */
#ifndef KVM_IRQBYPASS_KVM_UTIL_LITE_H
#define KVM_IRQBYPASS_KVM_UTIL_LITE_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/kvm.h>

#include "compat.h"
#include "guest_abi.h"

enum irqchip_mode {
	IRQCHIP_NONE,	/* no in-kernel LAPIC/IOAPIC/PIC at all */
	IRQCHIP_KERNEL,	/* KVM_CREATE_IRQCHIP: LAPIC, IOAPIC and PIC in KVM */
	IRQCHIP_SPLIT,	/* KVM_CAP_SPLIT_IRQCHIP: only the LAPIC in KVM */
};

/* Number of IOAPIC pins the split irqchip reserves for userspace routes. */
#define SPLIT_IRQCHIP_PINS	24

/* First GSI above the IOAPIC pins, free for MSI routes. */
#define TEST_MSI_GSI		24
#define TEST_MSI_VECTOR		0x40
#define TEST_LEVEL_VECTOR	0x50

struct lite_vm;

struct lite_vcpu {
	struct lite_vm *vm;
	unsigned int id;	/* vCPU id, which KVM makes the APIC ID */
	int fd;			/* -1 until created */
	struct kvm_run *run;
	size_t run_size;
	struct guest_params *params;	/* this vCPU's block in guest RAM */
	/* KVM_EXIT_IOAPIC_EOI exits seen by vcpu_run() (split irqchip). */
	unsigned int eoi_exits;
	u32 last_eoi_vector;
};

struct lite_vm {
	int kvm_fd;
	int vm_fd;
	enum irqchip_mode irqchip;
	u8 *ram;		/* host view of GPA 0..GUEST_RAM_SIZE */
	bool ram_owned;		/* vm_destroy() unmaps ram */
	u32 next_slot;
	unsigned int nr_vcpus;	/* vCPUs created so far */
	/* vcpu[0] comes from vm_start_guest(), the others from vm_add_vcpu(). */
	struct lite_vcpu vcpu[GUEST_MAX_VCPUS];
};

/* What a guest_run() call stopped on: an OUT to one of the test ports. */
struct guest_exit {
	u16 port;
	u32 value;
};

const char *irqchip_name(enum irqchip_mode mode);

/* Open /dev/kvm; on failure prints "Bail out!" and exits 1. */
int kvm_open_or_bail(void);

/* KVM_CHECK_EXTENSION on /dev/kvm: the value, or -1 with errno set. */
int kvm_check_cap(long cap);

/* VM with irqchip and RAM, but no vCPU yet; NULL on failure. */
struct lite_vm *vm_create(enum irqchip_mode mode);
/* The same with a split irqchip that reserves @nr_pins IOAPIC pins. */
struct lite_vm *vm_create_split(u32 nr_pins);
/*
 * The same with caller-owned guest RAM (GUEST_RAM_SIZE bytes, e.g. shared
 * with another process, or kept to read the guest's count after the VM is
 * gone): vm_destroy() leaves it mapped.
 */
struct lite_vm *vm_create_ram(enum irqchip_mode mode, u8 *ram);
void vm_destroy(struct lite_vm *vm);

/* Copy *params into the guest, build the IDT and create vCPU 0. */
int vm_start_guest(struct lite_vm *vm, const struct guest_params *params);

/*
 * After vm_start_guest(): create the next vCPU (id and APIC ID 1, ...) with
 * its own copy of *params, its own stack and, if params->vector differs from
 * vCPU 0's, an ISR gate for it as well; it is runnable at once (no
 * INIT/SIPI).  Returns the vCPU or NULL after a diagnostic.
 */
struct lite_vcpu *vm_add_vcpu(struct lite_vm *vm,
			      const struct guest_params *params);

/* Map host memory (e.g. a VFIO BAR) at a guest physical address. */
int vm_add_memory(struct lite_vm *vm, u64 gpa, void *hva, size_t size);

/* Replace the GSI routing table by a single MSI route gsi -> vector. */
int vm_route_msi(struct lite_vm *vm, u32 gsi, u32 vector);
/* Replace the whole GSI routing table with one entry: 0 or -errno. */
int vm_set_route(struct lite_vm *vm, const struct kvm_irq_routing_entry *e);

/* KVM_IRQFD; returns 0 or -errno. */
int vm_irqfd(struct lite_vm *vm, int fd, u32 gsi, u32 flags,
	     int resamplefd);

/*
 * Run the vCPU until it writes one of the test ports, at most timeout_ms.
 * Returns 0 with *ex filled in, -ETIMEDOUT, or another -errno after
 * printing a diagnostic (guest exception, stray vector, odd exit).
 */
int vcpu_run(struct lite_vcpu *vcpu, struct guest_exit *ex, int timeout_ms);

/* Run until the guest writes port; any other port is an error. */
int vcpu_run_until(struct lite_vcpu *vcpu, u16 port, u32 *value,
		   int timeout_ms);

/*
 * Let the guest sit for quiet_ms.  Returns 0 if no interrupt reached the
 * ISR and the guest made no exit meanwhile (what a test wants), the number
 * of ISR runs (or else exits) if it did, or a negative errno.
 */
int vcpu_run_quiet(struct lite_vcpu *vcpu, int quiet_ms);

static inline u32 vcpu_count(struct lite_vcpu *vcpu)
{
	return READ_ONCE(vcpu->params->count);
}

/*
 * A host thread that owns one vCPU: the caller posts a request (run until a
 * port, or a quiet window) and later waits for its result, so KVM_RUN of
 * the vCPU always runs on the same thread (KVM waits for an RCU grace
 * period when the thread of a vCPU changes) and several vCPUs can run at
 * once.
 */
enum vt_op { VT_RUN_UNTIL, VT_QUIET, VT_EXIT };

struct vthread {
	struct lite_vcpu *vcpu;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool busy;		/* a request is posted and not finished */
	enum vt_op op;
	u16 port;
	int ms;
	int ret;
};

int vt_start(struct vthread *vt, struct lite_vcpu *vcpu);
void vt_stop(struct vthread *vt);
/* Post a request; waits for the previous one to finish first. */
void vt_post(struct vthread *vt, enum vt_op op, u16 port, int ms);
/* The result of the last request, once it has finished. */
int vt_wait(struct vthread *vt);
/* Run the vCPU (on its thread) until it writes @port. */
int vt_until(struct vthread *vt, u16 port, int ms);

/* The same on vCPU 0, for the single-vCPU tests. */
static inline int guest_run(struct lite_vm *vm, struct guest_exit *ex,
			    int timeout_ms)
{
	return vcpu_run(&vm->vcpu[0], ex, timeout_ms);
}

static inline int guest_run_until(struct lite_vm *vm, u16 port, u32 *value,
				  int timeout_ms)
{
	return vcpu_run_until(&vm->vcpu[0], port, value, timeout_ms);
}

static inline int guest_run_quiet(struct lite_vm *vm, int quiet_ms)
{
	return vcpu_run_quiet(&vm->vcpu[0], quiet_ms);
}

static inline u32 guest_count(struct lite_vm *vm)
{
	return vcpu_count(&vm->vcpu[0]);
}

/* Small shared helpers. */
/* Integer from the environment; def if unset or outside [min, 10^9]. */
long env_long(const char *name, long def, long min);
long long now_us(void);
int test_iterations(int def);
int test_timeout_ms(void);
int count_open_fds(void);
bool fd_readable(int fd);
int eventfd_raise(int fd);
int eventfd_drain(int fd, u64 *value);
/* Whole-file helpers for sysfs, procfs and tracefs. */
bool read_text_file(const char *path, char *buf, size_t size);
bool write_text_file(const char *path, const char *s);

/*
 * Races made deterministic on one CPU: the threads involved run on the
 * same CPU under SCHED_FIFO, so the kernel always runs the highest-priority
 * runnable one, and on a fully preemptible kernel the wakeup of a
 * higher-priority thread preempts a lower one at once, even inside an
 * ioctl: a window between two steps of that ioctl is then always taken.
 * Their priorities, lowest first:
 */
#define RACE_PRIO_IOCTL		10	/* the thread in the racing ioctl */
#define RACE_PRIO_DEVICE	20	/* a struct reraiser */
#define RACE_PRIO_VCPU		30	/* a struct vthread */

struct race_cpu {
	int cpu;		/* the CPU they all run on */
	cpu_set_t saved_cpus;	/* the calling thread's, for race_cpu_leave() */
	int saved_policy;
	struct sched_param saved_param;
};

/*
 * Pin the calling thread to the CPU it is on, SCHED_FIFO RACE_PRIO_IOCTL.
 * Returns 0, or -errno (-EPERM: SCHED_FIFO not allowed) with nothing
 * changed.
 */
int race_cpu_enter(struct race_cpu *rc);
/* Pin thread @t to that CPU, SCHED_FIFO @prio, until it exits: 0 or -errno. */
int race_cpu_add(const struct race_cpu *rc, pthread_t t, int prio);
/* Back to the calling thread's own affinity and policy. */
void race_cpu_leave(const struct race_cpu *rc);

/*
 * Print the kernel's preemption model as a TAP diagnostic; true if a wakeup
 * preempts kernel code at once (PREEMPT_RT, full or lazy preemption), which
 * a race inside ioctl @what needs: otherwise the woken thread waits until
 * the ioctl sleeps or returns, and the diagnostic says so.
 */
bool race_preempt_diag(const char *what);

/*
 * A level device behind a resampling irqfd whose line stays asserted, as
 * vfio INTx is: masked until a resample, it then raises its irqfd again.
 * One shot, on its own thread: wait (at most wait_ms) for a resample,
 * raise @trigger, call after_raise(arg) if set, then wait (at most
 * quiet_ms) for the resample of that raise.
 */
struct reraiser {
	int trigger, resample;
	int wait_ms, quiet_ms;
	void (*after_raise)(void *arg);
	void *arg;
	/* Results, valid after reraiser_join(). */
	unsigned int raised, resampled;
	unsigned int doubled;	/* reads that found more than one resample */
	int ret;		/* 0, or the -errno that ended it */
	pthread_t thread;
};

/* Start it on @cpu as SCHED_FIFO @prio (@cpu < 0: the caller's policy). */
int reraiser_start(struct reraiser *d, int cpu, int prio);
void reraiser_join(struct reraiser *d);

#endif /* KVM_IRQBYPASS_KVM_UTIL_LITE_H */
