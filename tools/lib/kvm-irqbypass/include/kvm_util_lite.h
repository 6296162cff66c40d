/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A deliberately small KVM helper for the kvm-irqbypass selftests and
 * tools: one VM, one vCPU (or GUEST_MAX_VCPUS, see vm_add_vcpu()) in
 * 32-bit flat protected mode with paging off, running a guest program of
 * guest_code.S.
 *
 * Helpers named as upstream's come in pairs as upstream's do: __foo() (for
 * vcpu_run, _vcpu_run()) prints a TAP diagnostic and returns the error, so
 * a test decides what a failure means; foo() fails the test with "Bail
 * out!" instead.  Every vCPU may be run from its own host thread: the
 * vcpu_*() calls touch only their vCPU (and the timer of the calling
 * thread).
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
	/* KVM_EXIT_IOAPIC_EOI exits seen by _vcpu_run() (split irqchip). */
	unsigned int eoi_exits;
	u32 last_eoi_vector;
	/*
	 * -1, or an eventfd that _vcpu_run() signals at each such exit: the
	 * resample a VMM's userspace IOAPIC does there (QEMU without
	 * KVM_CAP_SPLIT_IRQCHIP_RESAMPLE), for a test's "device" to wait on.
	 */
	int eoi_eventfd;
	/*
	 * The guest left its program: a triple fault, an exception, or found
	 * outside its code when a run timed out.  Under nested TCG in the
	 * testbed this also happens with stock KVM (Documentation/testing.rst,
	 * "Guest crashes under nested TCG"); a test may retry on a new VM.
	 */
	bool crashed;
};

struct lite_vm {
	int kvm_fd;
	int vm_fd;
	enum irqchip_mode irqchip;
	u8 *ram;		/* host view of GPA 0..GUEST_RAM_SIZE */
	bool ram_owned;		/* vm_destroy() unmaps ram */
	u32 next_slot;
	/* The guest program: guest_entry/guest_isr unless vm_set_guest(). */
	const char *entry, *isr;
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
int __kvm_check_cap(long cap);
/* The same; a failed ioctl fails the test. */
int kvm_check_cap(long cap);

/* VM with irqchip and RAM, but no vCPU yet; NULL on failure. */
struct lite_vm *__vm_create(enum irqchip_mode mode);
/* The same; a failure fails the test. */
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

/* Before vm_start_guest(): run another program of guest_code.S. */
static inline void vm_set_guest(struct lite_vm *vm, const char *entry,
				const char *isr)
{
	vm->entry = entry;
	vm->isr = isr;
}

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
int __vm_irqfd(struct lite_vm *vm, int fd, u32 gsi, u32 flags,
	       int resamplefd);
/* The same; an error fails the test. */
void vm_irqfd(struct lite_vm *vm, int fd, u32 gsi, u32 flags, int resamplefd);

/*
 * Run the vCPU until it writes one of the test ports, at most timeout_ms.
 * Returns 0 with *ex filled in, -ETIMEDOUT, or another -errno after
 * printing a diagnostic (guest exception, stray vector, odd exit).
 */
int _vcpu_run(struct lite_vcpu *vcpu, struct guest_exit *ex, int timeout_ms);
/* The same; anything but an exit on a test port fails the test. */
void vcpu_run(struct lite_vcpu *vcpu, struct guest_exit *ex, int timeout_ms);

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

/* The same on vCPU 0, for the single-vCPU tests. */
static inline int guest_run(struct lite_vm *vm, struct guest_exit *ex,
			    int timeout_ms)
{
	return _vcpu_run(&vm->vcpu[0], ex, timeout_ms);
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

#endif /* KVM_IRQBYPASS_KVM_UTIL_LITE_H */
