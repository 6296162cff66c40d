// SPDX-License-Identifier: GPL-2.0-only
/*
 * posted_fastpath: the kit's fast path into a vCPU, driven by the test
 * producer fastpath_producer.ko (virt/lib/tests/), which calls
 * irq_bypass_fastpath() from a hard-irq hrtimer for an eventfd that is also
 * a KVM irqfd on an MSI route: the consumer's handler injects from hard irq
 * (on kvm_intel with APICv, vmx_deliver_posted_interrupt()), and a miss
 * signals the eventfd once, which the irqfd then injects as usual.
 *
 * First the misses alone: the producer paired with an eventfd that no
 * irqfd consumes, fired in a burst; every fire must be a miss signalled
 * exactly once (the eventfd's counter).  Then into a halted vCPU (the
 * interrupt wakes it) and into a running one (a guest spinning with
 * interrupts on), one interrupt at a time from CPU 1 while the vCPU runs on
 * CPU 0, waiting for the ISR's count, so that coalescing cannot hide a lost
 * or doubled interrupt: guest count == fired == hits + misses signalled.
 * KVM's vCPU statistics give exits and KVM_REQ_EVENT per interrupt.
 *
 * The posted-interrupt checks (no injection through VM entry; no
 * KVM_REQ_EVENT for a wakeup; fewer exits than interrupts into a running
 * vCPU) need kvm_intel with enable_apicv=Y (the bochs3 testbed) and skip
 * elsewhere; the counting runs on every testbed with the kit's modules.
 * The test loads fastpath_producer with modprobe (MODROOT and KREL of the
 * testbed) and skips without it (stock modules).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../../../../virt/lib/tests/fastpath_producer.h"
#include "kvm_util_lite.h"
#include "proc_util.h"
#include "tap.h"
#include "vcpu_runner.h"
#include "vcpu_stats.h"

#define TESTS_PER_CASE	6
#define NR_TESTS	(2 + 2 * TESTS_PER_CASE)
#define QUIET_MS	1000
#define VCPU_CPU	0
#define BURST_PERIOD_NS	100000
#define ONE_PERIOD_NS	10000

static int raise_cpu;

/* modprobe [-d MODROOT] [-S KREL] [-r] fastpath_producer; true if it worked. */
static bool modprobe_producer(bool remove)
{
	const char *root = getenv("MODROOT"), *krel = getenv("KREL");
	char *argv[8];
	int argc = 0, status;
	pid_t pid;

	argv[argc++] = "modprobe";
	if (root && *root) {
		argv[argc++] = "-d";
		argv[argc++] = (char *)root;
	}
	if (krel && *krel) {
		argv[argc++] = "-S";
		argv[argc++] = (char *)krel;
	}
	if (remove)
		argv[argc++] = "-r";
	argv[argc++] = "fastpath_producer";
	argv[argc] = NULL;
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       !WEXITSTATUS(status);
}

static int fp_counters(int fd, struct kit_fp_counters *c)
{
	return ioctl(fd, KIT_FP_COUNTERS, c) ? -errno : 0;
}

static int fp_fire(int fd, u32 count, u32 period_ns)
{
	struct kit_fp_fire f = { .count = count, .period_ns = period_ns };

	if (ioctl(fd, KIT_FP_FIRE, &f)) {
		tap_diag("KIT_FP_FIRE: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int fp_pair(int fd, int efd)
{
	struct kit_fp_pair p = { .eventfd = efd };

	if (ioctl(fd, KIT_FP_PAIR, &p)) {
		tap_diag("KIT_FP_PAIR: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * Wait until @fired fires are done and every miss is signalled (on
 * PREEMPT_RT from the irq_work thread); false after timeout_ms.
 */
static bool fp_wait(int fd, u64 fired, struct kit_fp_counters *c,
		    int timeout_ms)
{
	long long end = now_us() + timeout_ms * 1000LL;

	for (;;) {
		if (fp_counters(fd, c))
			return false;
		if (!c->active && c->fired >= fired && c->signalled == c->misses)
			return true;
		if (now_us() > end)
			return false;
		usleep(50);
	}
}

/* One ioctl's errno against the expected one; 0 expected: success. */
static int expect_errno(const char *what, int ret, int want)
{
	int got = ret ? errno : 0;

	if (got == want)
		return 0;
	tap_diag("bad input: %s: %s, expected %s", what,
		 got ? strerror(got) : "success", want ? strerror(want) : "success");
	return 1;
}

/*
 * The device's ioctls with bad input, on a file of their own: each fails
 * with its documented errno (fastpath_producer.h, kit_fp_ioctl()) and
 * nothing fires.
 */
static void test_bad_input(void)
{
	struct kit_fp_fire f = { .count = 1, .period_ns = BURST_PERIOD_NS };
	struct kit_fp_pair p = { .eventfd = -1 };
	struct kit_fp_counters c;
	int fd, efd, bad = 0;

	fd = open(KIT_FP_DEVICE, O_RDWR | O_CLOEXEC);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0 || efd < 0) {
		tap_result(false, "bad input: open: %s", strerror(errno));
		goto out;
	}
	bad += expect_errno("FIRE unpaired", ioctl(fd, KIT_FP_FIRE, &f), ENOTCONN);
	bad += expect_errno("PAIR fd -1", ioctl(fd, KIT_FP_PAIR, &p), EBADF);
	p.eventfd = fd;
	bad += expect_errno("PAIR not an eventfd", ioctl(fd, KIT_FP_PAIR, &p), EINVAL);
	p.eventfd = efd;
	bad += expect_errno("PAIR", ioctl(fd, KIT_FP_PAIR, &p), 0);
	bad += expect_errno("PAIR twice", ioctl(fd, KIT_FP_PAIR, &p), EBUSY);
	f.count = 0;
	bad += expect_errno("FIRE count 0", ioctl(fd, KIT_FP_FIRE, &f), EINVAL);
	f.count = 1000001;
	bad += expect_errno("FIRE count 1000001", ioctl(fd, KIT_FP_FIRE, &f), EINVAL);
	f.count = 1;
	f.period_ns = ONE_PERIOD_NS - 1;
	bad += expect_errno("FIRE period below 10 us", ioctl(fd, KIT_FP_FIRE, &f), EINVAL);
	bad += expect_errno("FIRE NULL", ioctl(fd, KIT_FP_FIRE, NULL), EFAULT);
	bad += expect_errno("COUNTERS NULL", ioctl(fd, KIT_FP_COUNTERS, NULL), EFAULT);
	bad += expect_errno("unknown command", ioctl(fd, _IO(KIT_FP_IOC, 99)), ENOTTY);
	bad += expect_errno("UNPAIR", ioctl(fd, KIT_FP_UNPAIR), 0);
	bad += expect_errno("UNPAIR twice", ioctl(fd, KIT_FP_UNPAIR), 0);
	if (ioctl(fd, KIT_FP_COUNTERS, &c) || c.fired || c.active) {
		tap_diag("bad input: something fired (%llu) or is active (%u)",
			 (unsigned long long)c.fired, c.active);
		bad++;
	}
	tap_result(!bad, "bad input: 13 ioctls as documented, nothing fired (%d wrong)",
		   bad);
out:
	if (efd >= 0)
		close(efd);
	if (fd >= 0)
		close(fd);
}

/* Misses only: no irqfd on the eventfd, so no consumer. */
static void test_misses(int fd, int iters, int timeout)
{
	struct kit_fp_counters c = { 0 };
	u64 value = 0;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	bool ok;

	ok = efd >= 0 && !fp_pair(fd, efd) &&
	     !fp_fire(fd, iters, BURST_PERIOD_NS) && fp_wait(fd, iters, &c, timeout);
	if (ok && eventfd_drain(efd, &value))
		ok = false;
	tap_diag("no consumer: fired=%llu hits=%llu misses=%llu signalled=%llu eventfd=%llu",
		 (unsigned long long)c.fired, (unsigned long long)c.hits,
		 (unsigned long long)c.misses, (unsigned long long)c.signalled,
		 (unsigned long long)value);
	tap_result(ok && c.fired == (u64)iters && !c.hits && c.misses == c.fired &&
		   c.signalled == c.fired && value == c.fired,
		   "no consumer: %d fires in a burst, each a miss signalled exactly once",
		   iters);
	ioctl(fd, KIT_FP_UNPAIR);
	if (efd >= 0)
		close(efd);
}

/* Always produces exactly TESTS_PER_CASE results, so the plan holds. */
static void test_case(int fd, bool running, bool apicv, bool fast,
		      int iters, int timeout)
{
	const char *name = running ? "running vCPU" : "halted vCPU";
	struct guest_params params = {
		.flags = running ? GUEST_F_SPIN : 0,
		.vector = TEST_MSI_VECTOR,
	};
	struct vcpu_runner runner = { 0 };
	struct vcpu_stats st = { .fd = -1 };
	struct kit_fp_counters base = { 0 }, c = { 0 };
	u64 before[VS_NR], after[VS_NR], d[VS_NR], halts = 0;
	u64 fired = 0, hits = 0, misses = 0, signalled = 0;
	unsigned int delivered = 0;
	int reported = 0, efd, i, k;
	struct lite_vcpu *vcpu;
	struct lite_vm *vm;
	bool ok;

	vm = __vm_create(IRQCHIP_KERNEL);
	ok = vm && !vm_start_guest(vm, &params) &&
	     !guest_run_until(vm, GUEST_PORT_READY, NULL, timeout);
	vcpu = vm ? &vm->vcpu[0] : NULL;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ok = ok && efd >= 0 && !vm_route_msi(vm, TEST_MSI_GSI, TEST_MSI_VECTOR) &&
	     !__vm_irqfd(vm, efd, TEST_MSI_GSI, 0, 0) && !vcpu_stats_open(vcpu, &st) &&
	     !fp_pair(fd, efd);
	/* The first interrupt maps the guest's IDT and stack into the EPT. */
	if (ok) {
		halts = vcpu_stats_read(&st, VS_HALT_EXITS);
		ok = !vcpu_runner_start(&runner, vm, VCPU_CPU) &&
		     (running || vcpu_stats_wait_halted(&st, &halts, timeout)) &&
		     !fp_fire(fd, 1, ONE_PERIOD_NS) && vcpu_wait_count(vcpu, 1, timeout) &&
		     fp_wait(fd, 1, &base, timeout);
	}
	reported++;
	if (!tap_result(ok, "%s: guest ready, irqfd and producer paired, first interrupt delivered",
			name))
		goto out;

	vcpu_stats_snap(&st, before);
	for (i = 0; i < iters; i++) {
		if (!running && !vcpu_stats_wait_halted(&st, &halts, timeout)) {
			tap_diag("%s: interrupt %d: the vCPU did not halt again", name, i + 1);
			break;
		}
		if (fp_fire(fd, 1, ONE_PERIOD_NS))
			break;
		if (!vcpu_wait_count(vcpu, i + 2, timeout) ||
		    !fp_wait(fd, base.fired + i + 1, &c, timeout)) {
			tap_diag("%s: interrupt %d not delivered within %d ms", name,
				 i + 1, timeout);
			break;
		}
		delivered = vcpu_count(vcpu) - 1;
		if (delivered != (unsigned int)i + 1) {
			tap_diag("%s: interrupt %d: ISR count %u", name, i + 1, delivered);
			break;
		}
	}
	vcpu_stats_snap(&st, after);
	for (k = 0; k < VS_NR; k++)
		d[k] = after[k] - before[k];
	if (!fp_counters(fd, &c)) {
		fired = c.fired - base.fired;
		hits = c.hits - base.hits;
		misses = c.misses - base.misses;
		signalled = c.signalled - base.signalled;
	}
	tap_diag("%s: fired=%llu hits=%llu misses=%llu signalled=%llu delivered=%u",
		 name, (unsigned long long)fired, (unsigned long long)hits,
		 (unsigned long long)misses, (unsigned long long)signalled, delivered);
	if (fired) {
		tap_diag("%s: per interrupt: %.2f exits (%.2f external-interrupt, %.2f HLT)",
			 name, (double)d[VS_EXITS] / fired,
			 (double)d[VS_IRQ_EXITS] / fired, (double)d[VS_HALT_EXITS] / fired);
		tap_diag("%s: per interrupt: %.2f KVM_REQ_EVENT, %.2f injected by VM entry",
			 name, (double)d[VS_REQ_EVENT] / fired,
			 (double)d[VS_IRQ_INJECTIONS] / fired);
	}
	reported++;
	ok = fired == (u64)iters && delivered == fired && hits + signalled == fired &&
	     misses == signalled;
	tap_result(ok, "%s: %d fired, each delivered exactly once (hits + misses signalled)",
		   name, iters);

	usleep(QUIET_MS * 1000);
	reported++;
	ok = vcpu_count(vcpu) - 1 == delivered && !fd_readable(efd) &&
	     !READ_ONCE(runner.err);
	tap_result(ok, "%s: nothing stray or unconsumed in a %d ms quiet window (count %u)",
		   name, QUIET_MS, vcpu_count(vcpu) - 1);

	reported++;
	if (!fast)
		tap_skip("%s: all through the fast path: kvm irqfd_fastpath is not Y", name);
	else
		tap_result(fired && hits == fired,
			   "%s: all through the fast path (%llu hits of %llu)", name,
			   (unsigned long long)hits, (unsigned long long)fired);

	/* Posted: PIR -> virtual IRR -> RVI, nothing through VM entry. */
	reported++;
	if (!apicv)
		tap_skip("%s: none injected through VM entry: no APICv (TESTBED=bochs3)", name);
	else
		tap_result(fired && d[VS_IRQ_INJECTIONS] == 0,
			   "%s: none injected by KVM through VM entry (irq_injections +%llu)",
			   name, (unsigned long long)d[VS_IRQ_INJECTIONS]);

	reported++;
	if (!apicv)
		tap_skip("%s: posted-interrupt cost: no APICv (TESTBED=bochs3)", name);
	else if (running)
		/* Only posted-interrupt processing in the guest delivers without an exit. */
		tap_result(fired && d[VS_EXITS] < fired,
			   "%s: %llu VM exits for %llu: posted-interrupt processing in the guest",
			   name, (unsigned long long)d[VS_EXITS], (unsigned long long)fired);
	else
		tap_result(fired && d[VS_REQ_EVENT] < fired,
			   "%s: %llu KVM_REQ_EVENT for %llu that each woke the vCPU",
			   name, (unsigned long long)d[VS_REQ_EVENT], (unsigned long long)fired);

out:
	vcpu_runner_stop(&runner);
	if (runner.err)
		tap_diag("%s: vCPU thread failed: %s", name, strerror(-runner.err));
	while (reported++ < TESTS_PER_CASE)
		tap_result(false, "%s: not reached", name);
	ioctl(fd, KIT_FP_UNPAIR);
	vcpu_stats_close(&st);
	if (efd >= 0)
		close(efd);
	if (vm)
		vm_destroy(vm);
}

int main(void)
{
	int iters = test_iterations(200);
	int timeout = test_timeout_ms();
	bool loaded = false, apicv, fast;
	char buf[8];
	int fd;

	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	if (access(KIT_FP_DEVICE, F_OK))
		loaded = modprobe_producer(false);
	fd = open(KIT_FP_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		tap_skip_rest("no %s (fastpath_producer.ko of the kit's build): %s",
			      KIT_FP_DEVICE, strerror(errno));
		return tap_finish();
	}
	apicv = kvm_intel_apicv();
	fast = read_text_file("/sys/module/kvm/parameters/irqfd_fastpath", buf,
			      sizeof(buf)) && buf[0] == 'Y';
	raise_cpu = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
	if (apicv && !raise_cpu)
		apicv = false;	/* the notification must come from another CPU */
	pin_self(raise_cpu);
	tap_diag("iterations=%d timeout=%d ms, vCPU on CPU %d, fires from CPU %d",
		 iters, timeout, VCPU_CPU, raise_cpu);
	tap_diag("APICv %s, irqfd_fastpath %s", apicv ? "on" : "off", fast ? "on" : "off");
	test_bad_input();
	test_misses(fd, iters, timeout);
	test_case(fd, false, apicv, fast, iters, timeout);
	test_case(fd, true, apicv, fast, iters, timeout);
	close(fd);
	if (loaded)
		modprobe_producer(true);
	return tap_finish();
}
