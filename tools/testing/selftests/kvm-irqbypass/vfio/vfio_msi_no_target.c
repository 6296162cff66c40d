// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_msi_no_target: an edu MSI on an irqfd whose MSI route reaches no
 * LAPIC, because the destination APIC ID does not exist or the guest's
 * APIC is software-disabled.  KVM drops it (stock does too, on the
 * eventfd path); the kit's fast path must consume it without signalling
 * the eventfd and trace it as vfio_fastpath_drop result=no_target, never
 * as a hit.  Then the APIC is enabled again and one MSI is delivered.
 *
 * Counts: raised (BAR writes) == host vfio-msi interrupts, guest ISR runs
 * 0 while no target exists, eventfd never readable (the irqfd consumes
 * what is signalled), and with the kit's tracepoints no_target == raised.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "edu_tap.h"
#include "fastpath_trace.h"
#include "kmsg.h"
#include "kvm_util_lite.h"
#include "tap.h"
#include "vfio_util_lite.h"

#define NR_TESTS	9
#define QUIET_MS	200
#define MISSING_APIC_ID	7
#define APIC_SPIV	0xf0
#define APIC_SPIV_ENABLE	0x100

static struct edu_dev edu;
static struct lite_vm *vm;
static int efd = -1, host_irq = -1;
static bool traced;

static int route_msi_dest(u32 dest)
{
	struct kvm_irq_routing_entry e = {
		.gsi = TEST_MSI_GSI,
		.type = KVM_IRQ_ROUTING_MSI,
		.u.msi.address_lo = LAPIC_BASE | dest << 12,
		.u.msi.data = TEST_MSI_VECTOR,
	};

	return vm_set_route(vm, &e);
}

static int set_apic_enabled(bool on)
{
	struct kvm_lapic_state s;
	u32 *spiv = (u32 *)&s.regs[APIC_SPIV];

	if (ioctl(vm->vcpu[0].fd, KVM_GET_LAPIC, &s) < 0)
		return -errno;
	*spiv = on ? *spiv | APIC_SPIV_ENABLE : *spiv & ~APIC_SPIV_ENABLE;
	return ioctl(vm->vcpu[0].fd, KVM_SET_LAPIC, &s) < 0 ? -errno : 0;
}

/*
 * Raise n MSIs, each once the host took the one before (back to back they
 * would merge in the host LAPIC); 0 or -ETIMEDOUT.
 */
static int raise_n(int n, int timeout, long long *host)
{
	long long before = proc_interrupts_count("vfio-msi[", edu.bdf);
	long long deadline;
	int i;

	for (i = 0; i < n; i++) {
		deadline = now_us() + timeout * 1000LL;
		edu_write(&edu, EDU_REG_IRQ_RAISE, 1);
		edu_write(&edu, EDU_REG_IRQ_ACK, 1);
		for (;;) {
			*host = proc_interrupts_count("vfio-msi[", edu.bdf) -
				before;
			if (*host > i)
				break;
			if (now_us() >= deadline)
				return -ETIMEDOUT;
			usleep(100);
		}
	}
	return 0;
}

/* One no-target phase: raised == host, nothing in the guest or eventfd. */
static void no_target_phase(const char *what, int n, int timeout)
{
	struct fastpath_results res;
	long long host = -1;
	u64 val;
	bool readable;
	int ret;

	if (traced)
		fastpath_trace_clear();
	ret = raise_n(n, timeout, &host);
	if (!ret)
		ret = guest_run_quiet(vm, QUIET_MS);
	readable = read(efd, &val, sizeof(val)) == sizeof(val);
	tap_diag("%s: raised=%d host=%lld guest=%u eventfd %s", what, n, host,
		 guest_count(vm), readable ? "readable" : "empty");
	tap_result(!ret && host == n && guest_count(vm) == 0 && !readable,
		   "%s: %d MSIs taken by the host, none reached the guest or the eventfd",
		   what, n);
	if (!traced) {
		tap_skip("%s: fast path off or stock modules, no tracepoint count",
			 what);
		return;
	}
	fastpath_trace_results(host_irq, &res);
	tap_diag("%s: trace delivered=%lld queued=%lld merged=%lld no_target=%lld misses=%lld",
		 what, res.delivered, res.queued, res.merged, res.no_target,
		 res.misses);
	tap_result(res.no_target == n && !res.delivered && !res.queued &&
		   !res.merged && !res.misses,
		   "%s: the fast path traced each as no_target, none as a hit",
		   what);
}

int main(void)
{
	int n = test_iterations(20), timeout = test_timeout_ms();
	struct guest_params params = {
		.vector = TEST_MSI_VECTOR,
		.post_eoi_port = GUEST_PORT_POST_EOI,
		.target = 1,
	};
	struct fastpath_results res;
	int kmsg, ret, splats;
	u32 value = 0;
	bool ok;

	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	kmsg = kmsg_watch();
	ret = edu_open_tap(&edu);
	if (ret == -ENODEV)
		return tap_finish();
	if (ret)
		goto out;

	vm = __vm_create(IRQCHIP_KERNEL);
	ok = vm && !vm_start_guest(vm, &params) &&
	     !guest_run_until(vm, GUEST_PORT_READY, NULL, timeout);
	if (!tap_result(ok, "guest set up and ready"))
		goto out;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ret = efd < 0 ? -errno : route_msi_dest(MISSING_APIC_ID);
	if (!ret)
		ret = __vm_irqfd(vm, efd, TEST_MSI_GSI, 0, 0);
	if (!ret)
		ret = vfio_set_irqs(edu.device_fd, VFIO_PCI_MSI_IRQ_INDEX,
				    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &efd);
	host_irq = proc_interrupts_irq("vfio-msi[0]", edu.bdf);
	if (!tap_result(!ret && host_irq >= 0,
			"edu MSI -> eventfd -> KVM_IRQFD, route to APIC ID %d (irq %d)",
			MISSING_APIC_ID, host_irq))
		goto out;
	traced = fastpath_enabled() && fastpath_trace_start();

	no_target_phase("missing destination", n, timeout);

	ret = route_msi_dest(0);
	if (!ret)
		ret = set_apic_enabled(false);
	if (ret)
		tap_diag("route to APIC ID 0 with the APIC disabled: %s",
			 strerror(-ret));
	no_target_phase("APIC software-disabled", n, timeout);

	ret = set_apic_enabled(true);
	if (traced)
		fastpath_trace_clear();
	if (!ret) {
		edu_write(&edu, EDU_REG_IRQ_RAISE, 1);
		ret = guest_run_until(vm, GUEST_PORT_POST_EOI, &value, timeout);
		edu_write(&edu, EDU_REG_IRQ_ACK, 1);
	}
	ok = !ret && value == 1 && guest_count(vm) == 1;
	if (ok && traced) {
		fastpath_trace_results(host_irq, &res);
		ok = res.delivered == 1 && !res.no_target && !res.misses;
		tap_diag("APIC enabled: trace delivered=%lld no_target=%lld misses=%lld",
			 res.delivered, res.no_target, res.misses);
	}
	tap_result(ok, "APIC enabled again: one MSI delivered%s",
		   traced ? ", traced as a hit" : "");

	edu_msi_release(&edu);
	splats = kmsg_splats(kmsg);
	tap_result(splats == 0, "kernel log clean (%d splats)", splats);
out:
	if (traced)
		fastpath_trace_stop();
	if (efd >= 0)
		close(efd);
	vm_destroy(vm);
	edu_close(&edu);
	return tap_finish();
}
