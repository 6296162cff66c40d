// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_fastpath_ctxsw: host context switches per vfio-pci MSI delivered to
 * a guest (Documentation/vfio-fastpath.rst, "Figures").
 *
 * One thread raises an edu MSI (BAR0 0x60) and then runs the vCPU until the
 * guest ISR exits after its EOI, N times; the /proc/stat ctxt delta is
 * compared with a control loop with the same BAR write (to the liveness
 * register instead), the same exits and an MSI injected with
 * KVM_SIGNAL_MSI instead of by the device.  The difference per interrupt is
 * what the device interrupt's host path costs: 0 when it is injected from
 * hard irq, 2 when an irq thread runs in between (stock PREEMPT_RT).  The
 * voluntary switches of the vector's irq thread, if there is one, are
 * shown too.  Works with kit and stock modules; the figures are
 * diagnostics, the tests only check that every MSI was delivered once.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kvm_util_lite.h"
#include "proc_util.h"
#include "tap.h"
#include "vfio_util_lite.h"

#define NR_TESTS	3

/* Sum of voluntary + involuntary switches of threads named irq/<irq>-*. */
static long long irq_thread_switches(int irq, int *nthreads)
{
	char path[300], line[256], comm[64], prefix[32];
	long long total = 0, v;
	struct dirent *de;
	DIR *d;
	FILE *f;

	*nthreads = 0;
	snprintf(prefix, sizeof(prefix), "irq/%d-", irq);
	d = opendir("/proc");
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (strncmp(comm, prefix, strlen(prefix)))
			continue;
		(*nthreads)++;
		snprintf(path, sizeof(path), "/proc/%s/status", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1 ||
			    sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1)
				total += v;
		fclose(f);
	}
	closedir(d);
	return total;
}

static int signal_msi(struct lite_vm *vm)
{
	struct kvm_msi msi = {
		.address_lo = LAPIC_BASE,
		.data = TEST_MSI_VECTOR,
	};

	return ioctl(vm->vm_fd, KVM_SIGNAL_MSI, &msi) < 0 ? -errno : 0;
}

int main(void)
{
	int iters = test_iterations(500);
	int timeout = test_timeout_ms();
	struct guest_params params = {
		.vector = TEST_MSI_VECTOR,
		.post_eoi_port = GUEST_PORT_POST_EOI,
		.target = ~0u,
	};
	long long c0, c1, c2, t0, t1, irqs0, irqs1;
	struct lite_vm *vm = NULL;
	struct edu_dev edu;
	int i, ret, irq, nthr;
	u32 start, value;
	char param[8] = "-";
	s32 efd = -1;
	FILE *f;
	bool ok;

	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	ret = edu_open(&edu);
	if (ret == -ENODEV) {
		tap_skip_rest("no edu device (1234:11e8) on this machine");
		return tap_finish();
	}
	f = fopen("/sys/module/vfio_pci_core/parameters/fastpath", "re");
	if (f) {
		if (!fgets(param, sizeof(param), f))
			param[0] = '?';
		param[strcspn(param, "\n")] = '\0';
		fclose(f);
	}
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	vm = __vm_create(IRQCHIP_KERNEL);
	ok = !ret && !edu_check_alive(&edu) && !edu_enable_bus_master(&edu) &&
	     efd >= 0 && vm && !vm_start_guest(vm, &params) &&
	     !guest_run_until(vm, GUEST_PORT_READY, NULL, timeout) &&
	     !vm_route_msi(vm, TEST_MSI_GSI, TEST_MSI_VECTOR) &&
	     !__vm_irqfd(vm, efd, TEST_MSI_GSI, 0, 0) &&
	     !vfio_set_irqs(edu.device_fd, VFIO_PCI_MSI_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &efd);
	irq = ok ? proc_interrupts_irq("vfio-msi[0]", edu.bdf) : -1;
	if (!tap_result(ok && irq > 0, "setup: edu MSI -> irqfd, irq %d, vfio_pci_core.fastpath=%s",
			irq, param))
		goto out;

	/* Warm up: first-touch faults, thread creation, caches. */
	for (i = 0; i < 20; i++) {
		edu_write(&edu, EDU_REG_IRQ_RAISE, 1);
		if (guest_run_until(vm, GUEST_PORT_POST_EOI, &value, timeout))
			break;
		edu_write(&edu, EDU_REG_IRQ_ACK, 1);
	}

	start = guest_count(vm);
	irqs0 = proc_interrupts_count("vfio-msi[", edu.bdf);
	t0 = irq_thread_switches(irq, &nthr);
	c0 = proc_stat_ctxt();
	for (i = 0; i < iters; i++) {
		edu_write(&edu, EDU_REG_IRQ_RAISE, 1);
		if (guest_run_until(vm, GUEST_PORT_POST_EOI, &value, timeout))
			break;
		edu_write(&edu, EDU_REG_IRQ_ACK, 1);
	}
	c1 = proc_stat_ctxt();
	t1 = irq_thread_switches(irq, &nthr);
	irqs1 = proc_interrupts_count("vfio-msi[", edu.bdf);
	tap_result(i == iters && guest_count(vm) - start == (u32)iters &&
		   irqs1 - irqs0 == iters,
		   "%d edu MSIs, each delivered once (host irqs %lld)", iters,
		   irqs1 - irqs0);

	start = guest_count(vm);
	for (i = 0; i < iters; i++) {
		edu_write(&edu, EDU_REG_LIVENESS, i);
		if (signal_msi(vm) ||
		    guest_run_until(vm, GUEST_PORT_POST_EOI, &value, timeout))
			break;
	}
	c2 = proc_stat_ctxt();
	tap_result(i == iters && guest_count(vm) - start == (u32)iters,
		   "control: %d KVM_SIGNAL_MSI, each delivered once", iters);

	tap_diag("ctxsw: fastpath=%s n=%d device=%lld control=%lld per_irq=%.2f",
		 param, iters, c1 - c0, c2 - c1,
		 (double)((c1 - c0) - (c2 - c1)) / iters);
	tap_diag("ctxsw: irq_threads=%d irq_thread_switches=%lld", nthr, t1 - t0);

out:
	vfio_set_irqs(edu.device_fd, VFIO_PCI_MSI_IRQ_INDEX,
		      VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	if (vm && efd >= 0)
		__vm_irqfd(vm, efd, TEST_MSI_GSI, KVM_IRQFD_FLAG_DEASSIGN, 0);
	if (efd >= 0)
		close(efd);
	vm_destroy(vm);
	edu_close(&edu);
	return tap_finish();
}
