// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_storm: vfio_pci_core.storm_budget, the PREEMPT_RT bound on the
 * interrupts one vector injects from hard irq.  With the budget at 2 per
 * ms, edu MSIs raised back to back (one outstanding at a time) must send
 * the vector to the irq thread (vfio_fastpath_storm on=1, misses with
 * -ENOBUFS) and, after a pause, back (on=0, hits again), with every MSI
 * delivered exactly once: raised == host vfio-msi interrupts == guest ISR
 * runs == fast-path hits + misses.  On a generic kernel the bound is off:
 * the same raises are all hits and no switch is traced.  (Bad values for
 * the parameter: tools/testbed/module_params.sh.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fastpath_trace.h"
#include "kmsg.h"
#include "kvm_util_lite.h"
#include "proc_util.h"
#include "tap.h"
#include "vfio_util_lite.h"

#define NR_TESTS	6
#define PARAM		"/sys/module/vfio_pci_core/parameters/storm_budget"
#define SLOW_RAISES	5
#define SLOW_GAP_US	3000

static struct edu_dev edu;
static struct lite_vm *vm;
static unsigned int raised, delivered;

/* One MSI, waited for in the guest; false on a timeout or a bad count. */
static bool raise_one(int timeout)
{
	u32 value;

	edu_write(&edu, EDU_REG_IRQ_RAISE, 1);
	raised++;
	if (guest_run_until(vm, GUEST_PORT_POST_EOI, &value, timeout))
		return false;
	edu_write(&edu, EDU_REG_IRQ_ACK, 1);
	delivered = guest_count(vm);
	return value == raised && delivered == raised;
}

int main(void)
{
	int n = test_iterations(300), timeout = test_timeout_ms();
	struct guest_params params = {
		.vector = TEST_MSI_VECTOR,
		.post_eoi_port = GUEST_PORT_POST_EOI,
		.target = ~0u,
	};
	long long hits = -1, misses = -1, on = -1, off = -1, thr = -1;
	long long host0, host = -1;
	char old[16] = "", buf[16];
	bool rt, traced, ok;
	int i, efd = -1, irq, kmsg, splats, ret;

	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	kmsg = kmsg_watch();
	rt = read_text_file("/sys/kernel/realtime", buf, sizeof(buf)) &&
	     buf[0] == '1';
	if (!read_text_file(PARAM, old, sizeof(old))) {
		tap_skip_rest("no %s (stock vfio-pci-core)", PARAM);
		return tap_finish();
	}
	old[strcspn(old, "\n")] = 0;
	tap_diag("kernel %s, storm_budget=%s", rt ? "PREEMPT_RT" : "generic",
		 old);

	ret = edu_open(&edu);
	if (ret == -ENODEV) {
		tap_skip_rest("no edu device (1234:11e8) on this machine");
		return tap_finish();
	}
	vm = ret ? NULL : __vm_create(IRQCHIP_KERNEL);
	ok = vm && !edu_check_alive(&edu) && !edu_enable_bus_master(&edu) &&
	     !vm_start_guest(vm, &params) &&
	     !guest_run_until(vm, GUEST_PORT_READY, NULL, timeout);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ok = ok && efd >= 0 && !vm_route_msi(vm, TEST_MSI_GSI, TEST_MSI_VECTOR) &&
	     !__vm_irqfd(vm, efd, TEST_MSI_GSI, 0, 0) &&
	     !vfio_set_irqs(edu.device_fd, VFIO_PCI_MSI_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &efd);
	irq = proc_interrupts_irq("vfio-msi[0]", edu.bdf);
	if (!tap_result(ok && irq >= 0 && write_text_file(PARAM, "2"),
			"edu MSI -> irqfd on irq %d, storm_budget=2", irq))
		goto out;
	traced = fastpath_enabled() && fastpath_trace_start();

	host0 = proc_interrupts_count("vfio-msi[", edu.bdf);
	for (i = 0; i < n && raise_one(timeout); i++)
		;
	if (traced)
		fastpath_trace_storm(irq, &on, &off, &thr);
	tap_diag("back to back: raised=%u delivered=%u storm on=%lld off=%lld throttled=%lld",
		 raised, delivered, on, off, thr);
	if (!traced)
		tap_skip("fast path off or stock modules, no tracepoint count");
	else if (rt)
		tap_result(on >= 1 && thr >= 1,
			   "PREEMPT_RT: %d MSIs back to back sent the vector to the irq thread",
			   n);
	else
		tap_result(on == 0 && thr == 0,
			   "generic kernel: no storm switch over %d MSIs", n);

	for (i = 0; i < SLOW_RAISES; i++) {
		usleep(SLOW_GAP_US);
		if (!raise_one(timeout))
			break;
	}
	if (traced) {
		fastpath_trace_storm(irq, &on, &off, &thr);
		fastpath_trace_count(irq, &hits, &misses);
	}
	tap_diag("then %d MSIs %d us apart: storm on=%lld off=%lld", SLOW_RAISES,
		 SLOW_GAP_US, on, off);
	if (!traced)
		tap_skip("fast path off or stock modules, no tracepoint count");
	else
		tap_result(rt ? off >= 1 : off == 0, "%s",
			   rt ? "PREEMPT_RT: back to the fast path once the rate fell" :
			   "generic kernel: nothing to come back from");

	host = proc_interrupts_count("vfio-msi[", edu.bdf) - host0;
	tap_diag("raised=%u host=%lld delivered=%u hits=%lld misses=%lld", raised,
		 host, delivered, hits, misses);
	tap_result(raised == (unsigned int)n + SLOW_RAISES && delivered == raised &&
		   host == raised,
		   "every MSI delivered once: raised == host == guest");
	if (traced)
		tap_result(hits + misses == raised && (!rt || misses >= thr),
			   "every MSI seen once by the fast path (hits + misses == raised)");
	else
		tap_skip("fast path off or stock modules, no tracepoint count");
	splats = kmsg_splats(kmsg);
	tap_result(splats == 0, "kernel log clean (%d splats)", splats);
	if (traced)
		fastpath_trace_stop();
out:
	write_text_file(PARAM, old);
	if (vm)
		edu_msi_release(&edu);
	if (efd >= 0)
		close(efd);
	vm_destroy(vm);
	edu_close(&edu);
	return tap_finish();
}
