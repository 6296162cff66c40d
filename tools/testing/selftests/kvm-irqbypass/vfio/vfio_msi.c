// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_msi: a real device MSI (QEMU's edu behind vfio-pci) reaches an L2
 * guest through VFIO_DEVICE_SET_IRQS -> eventfd -> KVM_IRQFD on an MSI
 * route: the path irqbypass connects.
 *
 * The host raises one MSI at a time by writing the edu's raise register
 * and waits for the guest ISR, so every MSI is accounted for: raised (BAR
 * writes) == signalled (host IRQs in /proc/interrupts) == delivered (guest
 * ISR runs).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "edu_tap.h"
#include "kvm_util_lite.h"
#include "tap.h"
#include "vfio_util_lite.h"

#define QUIET_MS	1000
#define NR_TESTS	8

int main(void)
{
	int iters = test_iterations(500);
	int timeout = test_timeout_ms();
	struct guest_params params = {
		.vector = TEST_MSI_VECTOR,
		.post_eoi_port = GUEST_PORT_POST_EOI,
		.target = iters,
	};
	unsigned int raised = 0, delivered = 0;
	long long irqs_before, signalled = -1;
	struct lite_vm *vm = NULL;
	struct edu_dev edu;
	bool irqfd = false;
	s32 efd = -1;
	u32 value;
	int i, ret;
	bool ok;

	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	tap_diag("iterations=%d timeout=%d ms", iters, timeout);

	ret = edu_open_tap(&edu);
	if (ret == -ENODEV)
		return tap_finish();
	if (ret)
		goto out;
	ret = vfio_irq_count(edu.device_fd, VFIO_PCI_MSI_IRQ_INDEX);
	tap_diag("MSI vectors: %d", ret);

	vm = __vm_create(IRQCHIP_KERNEL);
	ok = vm && !vm_start_guest(vm, &params) &&
	     !guest_run_until(vm, GUEST_PORT_READY, NULL, timeout);
	if (!tap_result(ok, "guest set up and ready"))
		goto out;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ok = efd >= 0 && !vm_route_msi(vm, TEST_MSI_GSI, TEST_MSI_VECTOR);
	if (ok) {
		ret = __vm_irqfd(vm, efd, TEST_MSI_GSI, 0, 0);
		if (ret)
			tap_diag("KVM_IRQFD: %s", strerror(-ret));
		irqfd = !ret;
	}
	/* Bind the irqfd first, so the producer finds its consumer at once. */
	if (irqfd) {
		ret = vfio_set_irqs(edu.device_fd, VFIO_PCI_MSI_IRQ_INDEX,
				    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &efd);
		if (ret)
			tap_diag("VFIO_DEVICE_SET_IRQS(MSI, 1 eventfd): %s",
				 strerror(-ret));
	}
	if (!tap_result(irqfd && !ret,
			"edu MSI -> eventfd -> KVM_IRQFD on MSI route GSI %u",
			TEST_MSI_GSI))
		goto out;

	irqs_before = proc_interrupts_count("vfio-msi[", edu.bdf);
	for (i = 1; i <= iters; i++) {
		edu_write(&edu, EDU_REG_IRQ_RAISE, 1);
		raised++;
		if (guest_run_until(vm, GUEST_PORT_POST_EOI, &value, timeout))
			break;
		/* MSI is edge: the status bit only matters to INTx, clear it. */
		edu_write(&edu, EDU_REG_IRQ_ACK, 1);
		delivered = guest_count(vm);
		if (value != (u32)i || delivered != (u32)i) {
			tap_diag("raise %d: ISR reported %u, guest count %u", i,
				 value, delivered);
			break;
		}
	}
	delivered = guest_count(vm);
	if (irqs_before >= 0)
		signalled = proc_interrupts_count("vfio-msi[", edu.bdf) -
			    irqs_before;
	tap_diag("raised=%u signalled=%lld delivered=%u", raised, signalled,
		 delivered);
	tap_result(raised == (unsigned int)iters && delivered == raised,
		   "%d edu MSIs delivered to the guest, one per raise", iters);
	tap_result(signalled == raised,
		   "host saw exactly one vfio-msi interrupt per raise");

	ret = guest_run_until(vm, GUEST_PORT_DONE, &value, timeout);
	tap_result(!ret && value == (u32)iters,
		   "guest reported done at count %d", iters);

	ret = guest_run_quiet(vm, QUIET_MS);
	tap_result(ret == 0, "no stray interrupt in a %d ms quiet window", QUIET_MS);

	/* Leave the device idle for whoever opens it next. */
	edu_write(&edu, EDU_REG_IRQ_ACK, ~0u);
	ret = vfio_set_irqs(edu.device_fd, VFIO_PCI_MSI_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	if (ret)
		tap_diag("VFIO_DEVICE_SET_IRQS(MSI, count 0): %s", strerror(-ret));
	ok = !ret;
	ret = __vm_irqfd(vm, efd, TEST_MSI_GSI, KVM_IRQFD_FLAG_DEASSIGN, 0);
	if (ret)
		tap_diag("KVM_IRQFD deassign: %s", strerror(-ret));
	irqfd = false;
	tap_result(ok && !ret, "MSI disabled and irqfd deassigned cleanly");

out:
	if (irqfd)
		__vm_irqfd(vm, efd, TEST_MSI_GSI, KVM_IRQFD_FLAG_DEASSIGN, 0);
	if (efd >= 0)
		close(efd);
	vm_destroy(vm);
	edu_close(&edu);
	return tap_finish();
}
