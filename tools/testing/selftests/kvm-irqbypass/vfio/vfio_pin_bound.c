// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_pin_bound: a fast-path interrupt on an in-kernel IOAPIC pin waits
 * for its destination vCPU's thread to set the pin (kvm.irqfd_vcpu_inject)
 * at most kvm.irqfd_pin_wait_ms; then the irqfd's work item sets it, as
 * stock does at once.
 *
 * The edu's MSI goes through KVM_IRQFD on GSI 24, routed to IOAPIC pin 10,
 * which vCPU 0's guest programs (edge, destination APIC 0).  vCPU 0's
 * thread runs on CPU 1, vCPU 1's (halted) on CPU 0.  A SCHED_FIFO task
 * then takes CPU 1 for STARVE_MS (RT throttling off meanwhile): vCPU 0's
 * thread stays in KVM_RUN and cannot run, as a vCPU stuck in a
 * userfaultfd fault would.  An MSI is raised, and the host moves the pin's
 * redirection entry to APIC 1 at once (KVM_SET_IRQCHIP).  With the wait
 * at WAIT_MS, vCPU 1 must take the interrupt after about WAIT_MS and well
 * before the starvation ends; vCPU 0 never.  Skipped with stock modules,
 * whose work item sets the pin before the move (to vCPU 0).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kmsg.h"
#include "kvm_util_lite.h"
#include "proc_util.h"
#include "tap.h"
#include "vcpu_runner.h"
#include "vfio_util_lite.h"

#define NR_TESTS	6
#define PIN		10
#define WAIT_MS		200
#define STARVE_MS	1500
#define WAIT_PARAM	"/sys/module/kvm/parameters/irqfd_pin_wait_ms"
#define INJECT_PARAM	"/sys/module/kvm/parameters/irqfd_vcpu_inject"
#define RT_RUNTIME	"/proc/sys/kernel/sched_rt_runtime_us"

static int stop_spin;

/* SCHED_FIFO on CPU 1 until told to stop or STARVE_MS + 1 s passed. */
static void *spinner(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	long long end = now_us() + (STARVE_MS + 1000) * 1000LL;
	cpu_set_t cpus;

	(void)arg;
	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus) ||
	    sched_setscheduler(0, SCHED_FIFO, &sp))
		return (void *)1L;
	while (!__atomic_load_n(&stop_spin, __ATOMIC_RELAXED) && now_us() < end)
		;
	return NULL;
}

static int route_pin(struct lite_vm *vm)
{
	struct kvm_irq_routing_entry e = {
		.gsi = TEST_MSI_GSI,
		.type = KVM_IRQ_ROUTING_IRQCHIP,
		.u.irqchip = { .irqchip = KVM_IRQCHIP_IOAPIC, .pin = PIN },
	};

	return vm_set_route(vm, &e);
}

static int move_pin(struct lite_vm *vm, u8 dest)
{
	struct kvm_irqchip chip = { .chip_id = KVM_IRQCHIP_IOAPIC };

	if (ioctl(vm->vm_fd, KVM_GET_IRQCHIP, &chip) < 0)
		return -errno;
	chip.chip.ioapic.redirtbl[PIN].fields.dest_id = dest;
	return ioctl(vm->vm_fd, KVM_SET_IRQCHIP, &chip) < 0 ? -errno : 0;
}

/* Wait until @vcpu counted @n interrupts; the time in us, or -1. */
static long long wait_count(struct lite_vcpu *vcpu, u32 n, int ms)
{
	long long t0 = now_us();

	while (now_us() - t0 < ms * 1000LL) {
		if (vcpu_count(vcpu) >= n)
			return now_us() - t0;
		usleep(500);
	}
	return -1;
}

int main(void)
{
	struct guest_params p0 = {
		.vector = TEST_MSI_VECTOR, .flags = GUEST_F_IOAPIC,
		.ioapic_pin = PIN, .target = ~0u,
	}, p1 = { .vector = TEST_MSI_VECTOR, .target = ~0u };
	char wait_old[16] = "", rt_old[32] = "", buf[16], path[64], cpu0[] = "0";
	struct vcpu_runner r0 = { 0 }, r1 = { 0 };
	int timeout = test_timeout_ms(), efd = -1, irq, kmsg, ret, splats;
	struct lite_vcpu *v1 = NULL;
	struct lite_vm *vm = NULL;
	long long t_late, t_first;
	pthread_t spin;
	struct edu_dev edu;
	cpu_set_t cpus;
	void *spin_ret;
	bool ok;

	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	kmsg = kmsg_watch();
	/* This thread and vCPU 1's stay off the CPU that is taken. */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	if (!read_text_file(WAIT_PARAM, wait_old, sizeof(wait_old)) ||
	    !read_text_file(INJECT_PARAM, buf, sizeof(buf)) || buf[0] != 'Y') {
		tap_skip_rest("stock modules or irqfd_vcpu_inject=N: pins set at once");
		return tap_finish();
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		tap_skip_rest("needs two CPUs");
		return tap_finish();
	}
	wait_old[strcspn(wait_old, "\n")] = 0;
	ret = edu_open(&edu);
	if (ret == -ENODEV) {
		tap_skip_rest("no edu device (1234:11e8) on this machine");
		return tap_finish();
	}

	vm = ret ? NULL : __vm_create(IRQCHIP_KERNEL);
	ok = vm && !edu_check_alive(&edu) && !edu_enable_bus_master(&edu) &&
	     !vm_start_guest(vm, &p0) && (v1 = vm_add_vcpu(vm, &p1)) &&
	     !vcpu_run_until(&vm->vcpu[0], GUEST_PORT_READY, NULL, timeout) &&
	     !vcpu_run_until(v1, GUEST_PORT_READY, NULL, timeout);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ok = ok && efd >= 0 && !route_pin(vm) &&
	     !__vm_irqfd(vm, efd, TEST_MSI_GSI, 0, 0) &&
	     !vfio_set_irqs(edu.device_fd, VFIO_PCI_MSI_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &efd);
	irq = proc_interrupts_irq("vfio-msi[0]", edu.bdf);
	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	ok = ok && irq >= 0 && write_text_file(path, cpu0) &&
	     !vcpu_runner_start(&r0, vm, 1) &&
	     !vcpu_runner_start_vcpu(&r1, v1, 0);
	if (!tap_result(ok, "two vCPUs, edu MSI -> IOAPIC pin %d -> APIC 0, irq %d on CPU 0",
			PIN, irq))
		goto out;

	/* Unhindered, vCPU 0 takes it (its own thread sets the pin). */
	edu_write(&edu, EDU_REG_IRQ_RAISE, 1);
	edu_write(&edu, EDU_REG_IRQ_ACK, 1);
	t_first = wait_count(&vm->vcpu[0], 1, timeout);
	tap_result(t_first >= 0 && vcpu_count(v1) == 0,
		   "unhindered: vCPU 0 took the interrupt after %lld us", t_first);

	snprintf(buf, sizeof(buf), "%d", WAIT_MS);
	ok = read_text_file(RT_RUNTIME, rt_old, sizeof(rt_old)) &&
	     write_text_file(RT_RUNTIME, "-1") && write_text_file(WAIT_PARAM, buf);
	rt_old[strcspn(rt_old, "\n")] = 0;
	__atomic_store_n(&stop_spin, 0, __ATOMIC_RELAXED);
	ok = ok && !pthread_create(&spin, NULL, spinner, NULL);
	if (!tap_result(ok, "irqfd_pin_wait_ms=%d, CPU 1 taken by SCHED_FIFO for %d ms",
			WAIT_MS, STARVE_MS))
		goto restore;
	usleep(50 * 1000);

	edu_write(&edu, EDU_REG_IRQ_RAISE, 1);
	edu_write(&edu, EDU_REG_IRQ_ACK, 1);
	ret = move_pin(vm, 1);
	t_late = wait_count(v1, 1, STARVE_MS - 100);
	tap_diag("starved vCPU 0: move to APIC 1 %s; vCPU 1 took it after %lld us, vCPU 0 count %u",
		 ret ? strerror(-ret) : "done", t_late, vcpu_count(&vm->vcpu[0]));
	tap_result(!ret && t_late >= (WAIT_MS - 20) * 1000LL &&
		   t_late < (STARVE_MS - 100) * 1000LL,
		   "the pin moved to vCPU 1 was set after the %d ms bound, not after the starvation",
		   WAIT_MS);
	usleep((STARVE_MS - 100) * 1000);
	__atomic_store_n(&stop_spin, 1, __ATOMIC_RELAXED);
	pthread_join(spin, &spin_ret);
	usleep(200 * 1000);
	tap_result(vcpu_count(&vm->vcpu[0]) == 1 && vcpu_count(v1) == 1,
		   "once each: vCPU 0 %u (the unhindered one), vCPU 1 %u",
		   vcpu_count(&vm->vcpu[0]), vcpu_count(v1));
restore:
	write_text_file(WAIT_PARAM, wait_old);
	if (rt_old[0])
		write_text_file(RT_RUNTIME, rt_old);
	splats = kmsg_splats(kmsg);
	tap_result(splats == 0, "kernel log clean (%d splats)", splats);
out:
	vcpu_runner_stop(&r0);
	vcpu_runner_stop(&r1);
	if (vm)
		edu_msi_release(&edu);
	if (efd >= 0)
		close(efd);
	vm_destroy(vm);
	edu_close(&edu);
	return tap_finish();
}
