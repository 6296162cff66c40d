// SPDX-License-Identifier: GPL-2.0-only
/*
 * Small KVM helper for the kvm-irqbypass selftests; see kvm_util_lite.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "kvm_util_lite.h"
#include "tap.h"

/* Where KVM may put the TSS and EPT identity map: just below the BIOS. */
#define KVM_TSS_GPA		0xfffbd000
#define KVM_IDENTITY_MAP_GPA	0xfffbc000

#define GDT_CODE32_FLAT		0x00cf9b000000ffffULL
#define GDT_DATA32_FLAT		0x00cf93000000ffffULL
#define IDT_GATE_INTR32		0x8e00	/* present, DPL 0, 32-bit interrupt */

#define CPUID_MAX_ENTRIES	256

const char *irqchip_name(enum irqchip_mode mode)
{
	switch (mode) {
	case IRQCHIP_NONE:
		return "no irqchip";
	case IRQCHIP_KERNEL:
		return "in-kernel irqchip";
	case IRQCHIP_SPLIT:
		return "split irqchip";
	}
	return "?";
}

int kvm_open_or_bail(void)
{
	int fd, version;

	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		tap_bail("/dev/kvm: %s", strerror(errno));
	version = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (version != KVM_API_VERSION)
		tap_bail("/dev/kvm: API version %d, expected %d", version,
			 KVM_API_VERSION);
	return fd;
}

int __kvm_check_cap(long cap)
{
	int fd = kvm_open_or_bail(), r;

	r = ioctl(fd, KVM_CHECK_EXTENSION, cap);
	close(fd);
	return r;
}

int kvm_check_cap(long cap)
{
	int r = __kvm_check_cap(cap);

	if (r < 0)
		tap_bail("KVM_CHECK_EXTENSION(%ld): %s", cap, strerror(errno));
	return r;
}

static int vm_create_irqchip(struct lite_vm *vm, u32 nr_pins)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_SPLIT_IRQCHIP,
		.args[0] = nr_pins,
	};

	switch (vm->irqchip) {
	case IRQCHIP_NONE:
		return 0;
	case IRQCHIP_KERNEL:
		if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0) {
			tap_diag("KVM_CREATE_IRQCHIP: %s", strerror(errno));
			return -errno;
		}
		return 0;
	case IRQCHIP_SPLIT:
		if (ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap) < 0) {
			tap_diag("KVM_ENABLE_CAP(SPLIT_IRQCHIP): %s",
				 strerror(errno));
			return -errno;
		}
		return 0;
	}
	return -EINVAL;
}

/* GDT, exception stubs and guest code never change after creation. */
static void vm_load_image(struct lite_vm *vm)
{
	u64 *gdt = (u64 *)(vm->ram + GUEST_GDT_GPA);
	size_t len = guest_code_end - guest_code_start;

	gdt[0] = 0;
	gdt[GUEST_CS_SEL / 8] = GDT_CODE32_FLAT;
	gdt[GUEST_DS_SEL / 8] = GDT_DATA32_FLAT;
	memcpy(vm->ram + GUEST_CODE_GPA, guest_code_start, len);
}

/* @nr_pins: the IOAPIC pins a split irqchip reserves. */
static struct lite_vm *vm_create_pins(enum irqchip_mode mode, u8 *ram,
				      u32 nr_pins)
{
	struct lite_vm *vm;
	int ret, i;

	vm = calloc(1, sizeof(*vm));
	if (!vm)
		return NULL;
	vm->vm_fd = -1;
	for (i = 0; i < GUEST_MAX_VCPUS; i++)
		vm->vcpu[i].fd = -1;
	vm->irqchip = mode;
	vm->entry = guest_entry;
	vm->isr = guest_isr;
	vm->kvm_fd = kvm_open_or_bail();

	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0) {
		tap_diag("KVM_CREATE_VM: %s", strerror(errno));
		goto fail;
	}
	/* Needed before the first KVM_RUN on Intel; harmless on AMD. */
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, KVM_TSS_GPA) < 0) {
		tap_diag("KVM_SET_TSS_ADDR: %s", strerror(errno));
		goto fail;
	}
	if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION,
		  KVM_CAP_SET_IDENTITY_MAP_ADDR) > 0) {
		u64 addr = KVM_IDENTITY_MAP_GPA;

		if (ioctl(vm->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &addr) < 0)
			tap_diag("KVM_SET_IDENTITY_MAP_ADDR: %s (ignored)",
				 strerror(errno));
	}
	if (vm_create_irqchip(vm, nr_pins))
		goto fail;

	vm->ram = ram;
	if (!ram) {
		vm->ram = mmap(NULL, GUEST_RAM_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);
		vm->ram_owned = true;
	}
	if (vm->ram == MAP_FAILED) {
		vm->ram = NULL;
		tap_diag("guest RAM: %s", strerror(errno));
		goto fail;
	}
	ret = vm_add_memory(vm, 0, vm->ram, GUEST_RAM_SIZE);
	if (ret)
		goto fail;
	vm_load_image(vm);
	return vm;

fail:
	vm_destroy(vm);
	return NULL;
}

struct lite_vm *__vm_create(enum irqchip_mode mode)
{
	return vm_create_pins(mode, NULL, SPLIT_IRQCHIP_PINS);
}

struct lite_vm *vm_create(enum irqchip_mode mode)
{
	struct lite_vm *vm = __vm_create(mode);

	if (!vm)
		tap_bail("creating a VM (%s irqchip) failed", irqchip_name(mode));
	return vm;
}

struct lite_vm *vm_create_split(u32 nr_pins)
{
	return vm_create_pins(IRQCHIP_SPLIT, NULL, nr_pins);
}

struct lite_vm *vm_create_ram(enum irqchip_mode mode, u8 *ram)
{
	return vm_create_pins(mode, ram, SPLIT_IRQCHIP_PINS);
}

void vm_destroy(struct lite_vm *vm)
{
	struct lite_vcpu *vcpu;

	if (!vm)
		return;
	for (vcpu = vm->vcpu; vcpu < vm->vcpu + GUEST_MAX_VCPUS; vcpu++) {
		if (vcpu->params && vcpu->params->stray)
			/* The emulated CPU's; Documentation/testing.rst. */
			tap_diag("vCPU %u: %u ISR run(s) with IF clear, not counted",
				 vcpu->id, vcpu->params->stray);
		if (vcpu->run)
			munmap(vcpu->run, vcpu->run_size);
		if (vcpu->fd >= 0)
			close(vcpu->fd);
	}
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->ram && vm->ram_owned)
		munmap(vm->ram, GUEST_RAM_SIZE);
	close(vm->kvm_fd);
	free(vm);
}

int vm_add_memory(struct lite_vm *vm, u64 gpa, void *hva, size_t size)
{
	struct kvm_userspace_memory_region region = {
		.slot = vm->next_slot,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (uintptr_t)hva,
	};

	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
		tap_diag("KVM_SET_USER_MEMORY_REGION(slot %u, gpa 0x%llx, size 0x%zx): %s",
			 vm->next_slot, (unsigned long long)gpa, size,
			 strerror(errno));
		return -errno;
	}
	vm->next_slot++;
	return 0;
}

static void idt_set_gate(struct lite_vm *vm, unsigned int vector,
			 const char *handler)
{
	u32 *idt = (u32 *)(vm->ram + GUEST_IDT_GPA);
	u32 addr = GUEST_CODE_GPA + (u32)(handler - guest_code_start);

	idt[vector * 2] = (addr & 0xffff) | (GUEST_CS_SEL << 16);
	idt[vector * 2 + 1] = (addr & 0xffff0000) | IDT_GATE_INTR32;
}

static void vm_build_idt(struct lite_vm *vm, unsigned int test_vector)
{
	unsigned int v;

	for (v = 0; v < 32; v++)
		idt_set_gate(vm, v, guest_fault_stubs + v * GUEST_FAULT_STUB_SIZE);
	for (v = 32; v < 256; v++)
		idt_set_gate(vm, v, v == test_vector ? vm->isr :
			     guest_unexpected_irq);
}

/*
 * Give the vCPU the host's supported CPUID so KVM derives a sane
 * MAXPHYADDR and LAPIC model, as a real VMM would.
 */
static int vcpu_set_cpuid(struct lite_vcpu *vcpu)
{
	struct kvm_cpuid2 *cpuid;
	int ret = 0;

	cpuid = calloc(1, sizeof(*cpuid) +
		       CPUID_MAX_ENTRIES * sizeof(cpuid->entries[0]));
	if (!cpuid)
		return -ENOMEM;
	cpuid->nent = CPUID_MAX_ENTRIES;
	if (ioctl(vcpu->vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, cpuid) < 0 ||
	    ioctl(vcpu->fd, KVM_SET_CPUID2, cpuid) < 0) {
		ret = -errno;
		tap_diag("KVM_{GET_SUPPORTED,SET}_CPUID: %s", strerror(errno));
	}
	free(cpuid);
	return ret;
}

static void flat_segment(struct kvm_segment *seg, u16 selector,
			 u8 type)
{
	memset(seg, 0, sizeof(*seg));
	seg->base = 0;
	seg->limit = 0xffffffff;
	seg->selector = selector;
	seg->type = type;
	seg->present = 1;
	seg->db = 1;
	seg->s = 1;
	seg->g = 1;
}

static int vcpu_set_protected_mode(struct lite_vcpu *vcpu)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (ioctl(vcpu->fd, KVM_GET_SREGS, &sregs) < 0)
		goto fail;
	flat_segment(&sregs.cs, GUEST_CS_SEL, 0xb);	/* code, read, accessed */
	flat_segment(&sregs.ds, GUEST_DS_SEL, 0x3);	/* data, write, accessed */
	sregs.es = sregs.ds;
	sregs.fs = sregs.ds;
	sregs.gs = sregs.ds;
	sregs.ss = sregs.ds;
	sregs.gdt.base = GUEST_GDT_GPA;
	sregs.gdt.limit = 3 * 8 - 1;
	sregs.idt.base = GUEST_IDT_GPA;
	sregs.idt.limit = 256 * 8 - 1;
	/* PE | ET | NE, caches on, paging off: LAPIC/IOAPIC reachable 1:1. */
	sregs.cr0 = 0x31;
	sregs.cr3 = 0;
	sregs.cr4 = 0;
	sregs.efer = 0;
	if (ioctl(vcpu->fd, KVM_SET_SREGS, &sregs) < 0)
		goto fail;

	memset(&regs, 0, sizeof(regs));
	regs.rip = GUEST_CODE_GPA + (vcpu->vm->entry - guest_code_start);
	regs.rsp = GUEST_STACK_TOP - vcpu->id * GUEST_STACK_SIZE;
	/* The guest's handle on its own struct guest_params (guest_abi.h). */
	regs.rbp = GUEST_PARAMS_GPA + vcpu->id * GUEST_PARAMS_STRIDE;
	regs.rflags = 0x2;	/* reserved bit; IF stays clear until sti */
	if (ioctl(vcpu->fd, KVM_SET_REGS, &regs) < 0)
		goto fail;
	return 0;
fail:
	tap_diag("vCPU register setup: %s", strerror(errno));
	return -errno;
}

/* Create vCPU vm->nr_vcpus with its own params block, stack and %ebp. */
static int vcpu_create(struct lite_vm *vm, const struct guest_params *params)
{
	struct lite_vcpu *vcpu = &vm->vcpu[vm->nr_vcpus];
	int size, ret;

	vcpu->vm = vm;
	vcpu->id = vm->nr_vcpus;
	vcpu->eoi_eventfd = -1;
	vcpu->crashed = false;
	vcpu->params = (struct guest_params *)(vm->ram + GUEST_PARAMS_GPA +
					       vcpu->id * GUEST_PARAMS_STRIDE);
	*vcpu->params = *params;
	vcpu->params->count = 0;
	vcpu->params->stray = 0;

	vcpu->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, (unsigned long)vcpu->id);
	if (vcpu->fd < 0) {
		tap_diag("KVM_CREATE_VCPU(%u): %s", vcpu->id, strerror(errno));
		return -errno;
	}
	vm->nr_vcpus++;
	size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (size < (int)sizeof(struct kvm_run)) {
		tap_diag("KVM_GET_VCPU_MMAP_SIZE: %d", size);
		return -EINVAL;
	}
	vcpu->run_size = size;
	vcpu->run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 vcpu->fd, 0);
	if (vcpu->run == MAP_FAILED) {
		vcpu->run = NULL;
		tap_diag("mmap(kvm_run): %s", strerror(errno));
		return -errno;
	}
	ret = vcpu_set_cpuid(vcpu);
	if (ret)
		return ret;
	return vcpu_set_protected_mode(vcpu);
}

int vm_start_guest(struct lite_vm *vm, const struct guest_params *params)
{
	if (vm->nr_vcpus) {
		tap_diag("%s: vCPU 0 exists already", __func__);
		return -EBUSY;
	}
	vm_build_idt(vm, params->vector);
	return vcpu_create(vm, params);
}

struct lite_vcpu *vm_add_vcpu(struct lite_vm *vm,
			      const struct guest_params *params)
{
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };
	struct lite_vcpu *vcpu;

	if (!vm->nr_vcpus || vm->nr_vcpus >= GUEST_MAX_VCPUS) {
		tap_diag("%s: %u vCPUs (need 1 to %d)", __func__, vm->nr_vcpus,
			 GUEST_MAX_VCPUS - 1);
		return NULL;
	}
	if (params->vector >= 32 && params->vector < 256 &&
	    params->vector != vm->vcpu[0].params->vector)
		idt_set_gate(vm, params->vector, vm->isr);
	vcpu = &vm->vcpu[vm->nr_vcpus];
	if (vcpu_create(vm, params))
		return NULL;
	/*
	 * With an in-kernel LAPIC an AP starts in wait-for-SIPI; the test
	 * guest needs no INIT/SIPI dance: start it where the BSP starts.
	 */
	if (ioctl(vcpu->fd, KVM_SET_MP_STATE, &mp) < 0) {
		tap_diag("KVM_SET_MP_STATE(vCPU %u, RUNNABLE): %s", vcpu->id,
			 strerror(errno));
		return NULL;
	}
	return vcpu;
}

int vm_set_route(struct lite_vm *vm, const struct kvm_irq_routing_entry *e)
{
	struct {
		struct kvm_irq_routing hdr;
		struct kvm_irq_routing_entry entry;
	} table = { .hdr.nr = 1, .entry = *e };

	return ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, &table) < 0 ? -errno : 0;
}

int vm_route_msi(struct lite_vm *vm, u32 gsi, u32 vector)
{
	/* Fixed delivery, physical destination APIC ID 0. */
	struct kvm_irq_routing_entry e = {
		.gsi = gsi,
		.type = KVM_IRQ_ROUTING_MSI,
		.u.msi.address_lo = LAPIC_BASE,
		.u.msi.data = vector,
	};
	int ret = vm_set_route(vm, &e);

	if (ret)
		tap_diag("KVM_SET_GSI_ROUTING(gsi %u -> vector 0x%x): %s", gsi,
			 vector, strerror(-ret));
	return ret;
}

int __vm_irqfd(struct lite_vm *vm, int fd, u32 gsi, u32 flags,
	       int resamplefd)
{
	struct kvm_irqfd irqfd = {
		.fd = fd,
		.gsi = gsi,
		.flags = flags,
		.resamplefd = resamplefd,
	};

	return ioctl(vm->vm_fd, KVM_IRQFD, &irqfd) < 0 ? -errno : 0;
}

void vm_irqfd(struct lite_vm *vm, int fd, u32 gsi, u32 flags, int resamplefd)
{
	int ret = __vm_irqfd(vm, fd, gsi, flags, resamplefd);

	if (ret)
		tap_bail("KVM_IRQFD(fd %d, gsi %u, flags 0x%x): %s", fd, gsi,
			 flags, strerror(-ret));
}

/*
 * Bounded KVM_RUN: a one-shot SIGALRM sets immediate_exit, so the run
 * returns -EINTR whether the signal lands inside KVM_RUN (the vCPU may be
 * blocked in HLT) or just before it.  Each thread that runs a vCPU has its
 * own timer, whose signal goes to that thread only (SIGEV_THREAD_ID), and
 * its own alarm_run, so vCPUs can run on several threads at once.
 */
static __thread struct kvm_run *alarm_run;
static __thread timer_t alarm_timer;
static __thread bool alarm_timer_ok;
static pthread_key_t alarm_key;
static pthread_once_t alarm_once = PTHREAD_ONCE_INIT;

static void alarm_handler(int sig)
{
	struct kvm_run *run = READ_ONCE(alarm_run);

	(void)sig;
	if (run)
		WRITE_ONCE(run->immediate_exit, 1);
}

/* pthread key destructor: the exiting thread's timer goes with it. */
static void alarm_thread_exit(void *unused)
{
	(void)unused;
	if (alarm_timer_ok)
		timer_delete(alarm_timer);
	alarm_timer_ok = false;
}

static void alarm_install_once(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = alarm_handler;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: KVM_RUN must come back with EINTR. */
	sigaction(SIGALRM, &sa, NULL);
	pthread_key_create(&alarm_key, alarm_thread_exit);
}

static int alarm_install(void)
{
	struct sigevent sev;

	pthread_once(&alarm_once, alarm_install_once);
	if (alarm_timer_ok)
		return 0;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGALRM;
	sev._sigev_un._tid = gettid();	/* sigev_notify_thread_id */
	if (timer_create(CLOCK_MONOTONIC, &sev, &alarm_timer) < 0) {
		tap_diag("timer_create: %s", strerror(errno));
		return -errno;
	}
	alarm_timer_ok = true;
	pthread_setspecific(alarm_key, &alarm_timer);
	return 0;
}

static void alarm_arm(s64 ms)
{
	struct itimerspec it = { 0 };

	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_nsec = (ms % 1000) * 1000000;
	timer_settime(alarm_timer, 0, &it, NULL);
}

long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static s64 now_ms(void)
{
	return now_us() / 1000;
}

/* Returns the guest's RIP, or ~0 if KVM_GET_REGS failed. */
static u64 dump_guest_state(struct lite_vcpu *vcpu)
{
	struct kvm_regs regs;
	u32 esp, i;

	if (ioctl(vcpu->fd, KVM_GET_REGS, &regs) < 0)
		return ~0ull;
	tap_diag("guest vCPU %u eip=0x%llx esp=0x%llx eflags=0x%llx count=%u",
		 vcpu->id, (unsigned long long)regs.rip,
		 (unsigned long long)regs.rsp, (unsigned long long)regs.rflags,
		 vcpu_count(vcpu));
	esp = (u32)regs.rsp;
	for (i = 0; i < 6 && esp + 4 * i + 4 <= GUEST_RAM_SIZE; i++)
		tap_diag("  stack[%u] = 0x%08x", i,
			 *(u32 *)(vcpu->vm->ram + esp + 4 * i));
	return regs.rip;
}

/* The set bits of one 256-bit LAPIC register (ISR, TMR, IRR) as vectors. */
static void lapic_vectors(const struct kvm_lapic_state *l, unsigned int reg,
			  char *buf, size_t len)
{
	unsigned int v, n = 0;
	u32 word;

	buf[0] = 0;
	for (v = 0; v < 256 && n + 6 < len; v++) {
		memcpy(&word, l->regs + reg + (v / 32) * 0x10, sizeof(word));
		if (word & (1u << (v % 32)))
			n += snprintf(buf + n, len - n, " 0x%02x", v);
	}
	if (!n)
		snprintf(buf, len, " -");
}

/*
 * Where a vCPU that waited in vain stands: halted or running, an interrupt
 * pending in the LAPIC (IRR: not woken or not taken), in service (ISR: no
 * EOI) or in neither (never delivered), or queued for injection by KVM.
 */
static void dump_irq_state(struct lite_vcpu *vcpu)
{
	struct kvm_mp_state mp = { .mp_state = ~0u };
	struct kvm_vcpu_events ev;
	struct kvm_lapic_state l;
	char isr[64], tmr[64], irr[64];
	u64 rip = dump_guest_state(vcpu);
	u32 ppr = 0;

	if (rip != ~0ull &&
	    (rip < GUEST_CODE_GPA ||
	     rip >= GUEST_CODE_GPA + (u64)(guest_code_end - guest_code_start))) {
		tap_diag("  vCPU %u is outside the guest program: its state was lost",
			 vcpu->id);
		vcpu->crashed = true;
	}
	ioctl(vcpu->fd, KVM_GET_MP_STATE, &mp);
	memset(&ev, 0, sizeof(ev));
	ioctl(vcpu->fd, KVM_GET_VCPU_EVENTS, &ev);
	tap_diag("  mp_state %u (0 runnable, 3 halted); interrupt queued %u vector 0x%x shadow %u",
		 mp.mp_state, ev.interrupt.injected, ev.interrupt.nr,
		 ev.interrupt.shadow);
	if (vcpu->vm->irqchip == IRQCHIP_NONE ||
	    ioctl(vcpu->fd, KVM_GET_LAPIC, &l) < 0)
		return;
	lapic_vectors(&l, LAPIC_ISR, isr, sizeof(isr));
	lapic_vectors(&l, LAPIC_ISR + 0x80, tmr, sizeof(tmr));
	lapic_vectors(&l, LAPIC_ISR + 0x100, irr, sizeof(irr));
	memcpy(&ppr, l.regs + 0xa0, sizeof(ppr));
	tap_diag("  LAPIC ISR%s TMR%s IRR%s PPR 0x%02x", isr, tmr, irr, ppr);
}

static int handle_io_exit(struct lite_vcpu *vcpu, struct guest_exit *ex)
{
	struct kvm_run *run = vcpu->run;
	u32 value = 0;

	if (run->io.direction != KVM_EXIT_IO_OUT || run->io.count != 1) {
		tap_diag("unexpected port %s 0x%x size %u count %u",
			 run->io.direction == KVM_EXIT_IO_OUT ? "out" : "in",
			 run->io.port, run->io.size, run->io.count);
		return -EPROTO;
	}
	memcpy(&value, (u8 *)run + run->io.data_offset,
	       run->io.size < 4 ? run->io.size : 4);

	switch (run->io.port) {
	case GUEST_PORT_FAULT:
		tap_diag("guest exception, vector %u", value);
		vcpu->crashed = true;
		dump_guest_state(vcpu);
		return -EFAULT;
	case GUEST_PORT_UNEXPECTED:
		tap_diag("guest vCPU %u got unexpected interrupt vector 0x%x (0: spurious)",
			 vcpu->id, value);
		return -EPROTO;
	case GUEST_PORT_READY:
	case GUEST_PORT_PRE_EOI:
	case GUEST_PORT_POST_EOI:
	case GUEST_PORT_DONE:
		ex->port = run->io.port;
		ex->value = value;
		return 0;
	}
	tap_diag("out to unknown port 0x%x value 0x%x", run->io.port, value);
	return -EPROTO;
}

int _vcpu_run(struct lite_vcpu *vcpu, struct guest_exit *ex, int timeout_ms)
{
	s64 deadline = now_ms() + timeout_ms;
	struct kvm_run *run = vcpu->run;
	int ret, err;

	ret = alarm_install();
	if (ret)
		return ret;
	for (;;) {
		s64 left = deadline - now_ms();

		if (left <= 0)
			return -ETIMEDOUT;
		WRITE_ONCE(run->immediate_exit, 0);
		WRITE_ONCE(alarm_run, run);
		alarm_arm(left);
		ret = ioctl(vcpu->fd, KVM_RUN, 0);
		err = errno;
		alarm_arm(0);
		WRITE_ONCE(alarm_run, NULL);
		WRITE_ONCE(run->immediate_exit, 0);
		if (ret < 0) {
			/* The deadline check above decides if this was ours. */
			if (err == EINTR || err == EAGAIN)
				continue;
			tap_diag("KVM_RUN: %s", strerror(err));
			return -err;
		}

		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			return handle_io_exit(vcpu, ex);
		case KVM_EXIT_INTR:
			continue;
		case KVM_EXIT_IOAPIC_EOI:
			/* Split irqchip EOI of a vector routed as an IOAPIC pin. */
			vcpu->eoi_exits++;
			vcpu->last_eoi_vector = run->eoi.vector;
			if (vcpu->eoi_eventfd >= 0) {
				ret = eventfd_raise(vcpu->eoi_eventfd);
				if (ret)
					return ret;
			}
			continue;
		case KVM_EXIT_MMIO:
			tap_diag("guest MMIO %s at 0x%llx (nothing there in this VM)",
				 run->mmio.is_write ? "write" : "read",
				 (unsigned long long)run->mmio.phys_addr);
			dump_guest_state(vcpu);
			return -EPROTO;
		case KVM_EXIT_SHUTDOWN:
			tap_diag("guest shutdown (triple fault)");
			vcpu->crashed = true;
			dump_guest_state(vcpu);
			return -EPROTO;
		case KVM_EXIT_FAIL_ENTRY:
			tap_diag("VM entry failed, reason 0x%llx",
				 (unsigned long long)
				 run->fail_entry.hardware_entry_failure_reason);
			return -EPROTO;
		case KVM_EXIT_INTERNAL_ERROR:
			tap_diag("KVM internal error, suberror %u",
				 run->internal.suberror);
			dump_guest_state(vcpu);
			return -EPROTO;
		default:
			tap_diag("unexpected exit reason %u", run->exit_reason);
			dump_guest_state(vcpu);
			return -EPROTO;
		}
	}
}

void vcpu_run(struct lite_vcpu *vcpu, struct guest_exit *ex, int timeout_ms)
{
	int ret = _vcpu_run(vcpu, ex, timeout_ms);

	if (ret)
		tap_bail("vCPU %u: KVM_RUN: %s", vcpu->id, strerror(-ret));
}

int vcpu_run_until(struct lite_vcpu *vcpu, u16 port, u32 *value,
		   int timeout_ms)
{
	struct guest_exit ex;
	int ret;

	ret = _vcpu_run(vcpu, &ex, timeout_ms);
	if (ret == -ETIMEDOUT) {
		tap_diag("vCPU %u timed out after %d ms waiting for port 0x%x (count %u)",
			 vcpu->id, timeout_ms, port, vcpu_count(vcpu));
		dump_irq_state(vcpu);
		return ret;
	}
	if (ret)
		return ret;
	if (ex.port != port) {
		tap_diag("guest vCPU %u wrote port 0x%x (value %u), expected 0x%x",
			 vcpu->id, ex.port, ex.value, port);
		return -EPROTO;
	}
	if (value)
		*value = ex.value;
	return 0;
}

int vcpu_run_quiet(struct lite_vcpu *vcpu, int quiet_ms)
{
	s64 deadline = now_ms() + quiet_ms;
	u32 before = vcpu_count(vcpu);
	struct guest_exit ex;
	int exits = 0, ret;

	for (;;) {
		s64 left = deadline - now_ms();

		if (left <= 0)
			break;
		ret = _vcpu_run(vcpu, &ex, left);
		if (ret == -ETIMEDOUT)
			break;
		if (ret)
			return ret;
		/* A storm would flood the log: show its start only. */
		if (exits++ < 3)
			tap_diag("vCPU %u exit on port 0x%x (value %u) while it should be idle",
				 vcpu->id, ex.port, ex.value);
	}
	ret = vcpu_count(vcpu) - before;
	if (ret || exits)
		tap_diag("vCPU %u: %d ISR runs, %d exits in a %d ms quiet window",
			 vcpu->id, ret, exits, quiet_ms);
	return ret ? ret : exits;
}

long env_long(const char *name, long def, long min)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 0);
	if (*end || v < min || v > 1000000000) {
		tap_diag("ignoring %s=%s", name, s);
		return def;
	}
	return v;
}

static int env_int(const char *name, int def, int min)
{
	return (int)env_long(name, def, min);
}

/* KVM under TCG is slow: the defaults keep a run to a few minutes. */
int test_iterations(int def)
{
	return env_int("KVM_IRQBYPASS_ITERS", def, 1);
}

int test_timeout_ms(void)
{
	return env_int("KVM_IRQBYPASS_TIMEOUT", 60, 1) * 1000;
}

int count_open_fds(void)
{
	struct dirent *de;
	int n = 0;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -errno;
	while ((de = readdir(dir)))
		if (de->d_name[0] != '.')
			n++;
	closedir(dir);
	/* Do not count the descriptor of the directory stream itself. */
	return n - 1;
}

bool fd_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

int eventfd_raise(int fd)
{
	u64 one = 1;

	return write(fd, &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}

int eventfd_drain(int fd, u64 *value)
{
	u64 v;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return -errno;
	if (value)
		*value = v;
	return 0;
}
