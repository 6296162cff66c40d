// SPDX-License-Identifier: GPL-2.0-only
/*
 * stress_teardown: tear down each end of the interrupt path while an edu
 * MSI is in flight (Documentation/reliability.rst).  Every cycle raises a
 * few MSIs that must each arrive exactly once, then raises one more,
 * waits a random 0-300 µs and, with that MSI in flight:
 *
 *   vm-close        closes the VM (vCPU, VM fds): irqfd released by KVM;
 *                   in half the cycles (by seed) the vCPU is stopped before
 *                   the raise, so the MSI lands in a VM that no longer runs
 *   vmm-kill        SIGKILLs a forked VMM process that owns the VM
 *   vector-disable  disables the MSI vector (VFIO_DEVICE_SET_IRQS count 0)
 *                   and enables it again on the same eventfd
 *   device-release  closes the VFIO device, group and container, then
 *                   opens the device again
 *
 * The MSI in flight must show up at most once: as a guest ISR run, as an
 * eventfd count, or nowhere ("absorbed": injected into the LAPIC of the
 * VM being destroyed, or dropped with the vector).  Nothing is doubled;
 * the next cycle's MSIs are exact again.
 *
 * The four cases run with the edu's MSI, then with MSI-X vector 0 of the
 * testbed's e1000e (skipped without one).  The e1000e's interrupt is
 * acknowledged and its throttle timers run before each teardown: a timer
 * that expires with MSI-X disabled aborts QEMU 7.2 (e1000e_unthrottle()).
 *
 * KVM_IRQBYPASS_SEED        replay a run
 * KVM_IRQBYPASS_TEARDOWNS   cycles per case (default 50; vector-disable 4x)
 * KVM_IRQBYPASS_SECONDS     time bound per case (default 60)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rig.h"
#include "tap.h"

#define NR_CASES	4
#define NR_DEVS		2	/* edu MSI, e1000e MSI-X */
#define NR_DEV_TESTS	(1 + 4 * NR_CASES)
#define NR_TESTS	(NR_DEVS * NR_DEV_TESTS + 1)
#define SETTLE_MS	50
#define BEFORE_MAX	4	/* exact MSIs before the one in flight */

enum teardown { VM_CLOSE, VMM_KILL, VECTOR_DISABLE, DEVICE_RELEASE };

static const char *const case_name[NR_CASES] = {
	"vm-close", "vmm-kill", "vector-disable", "device-release",
};

static const char *const dev_name[NR_DEVS] = {
	"edu MSI", "e1000e MSI-X vector 0",
};

struct td {
	struct msi_rig r;
	struct prng prng;
	u8 *ram;		/* shared guest RAM, seen by the parent */
	pid_t vmm;		/* vmm-kill: the child owning the VM */
};

/* vmm-kill: a child process owns the VM; the parent keeps edu and eventfd. */
static int vmm_spawn(struct td *t)
{
	int pipefd[2];
	char ok = 0;

	if (pipe(pipefd))
		return -errno;
	fflush(stdout);
	t->vmm = fork();
	if (t->vmm < 0)
		return -errno;
	if (!t->vmm) {
		close(pipefd[0]);
		ok = !rig_vm_up(&t->r);
		if (write(pipefd[1], &ok, 1) != 1 || !ok)
			_exit(1);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	if (read(pipefd[0], &ok, 1) != 1)
		ok = 0;
	close(pipefd[0]);
	/* The child's VM counts in the shared RAM. */
	t->r.sink.guest_count = guest_count_ptr(t->ram);
	t->r.sink.guest_seen = READ_ONCE(*t->r.sink.guest_count);
	return ok ? 0 : -EIO;
}

static int vmm_kill(struct td *t)
{
	int status;

	kill(t->vmm, SIGKILL);
	if (waitpid(t->vmm, &status, 0) != t->vmm)
		return -errno;
	t->vmm = 0;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : -EIO;
}

static int reopen_device(struct msi_rig *r)
{
	bool msix = r->edu.msix;

	edu_close(&r->edu);
	if ((msix ? e1000e_open(&r->edu, 0) : edu_open(&r->edu)) ||
	    edu_enable_bus_master(&r->edu) ||
	    edu_msi_trigger(&r->edu, r->efd))
		return -EIO;
	return 0;
}

/* The teardown with one MSI in flight, then back to a working path. */
static int teardown(struct td *t, enum teardown which)
{
	switch (which) {
	case VM_CLOSE:
		rig_vm_down(&t->r);
		return 0;
	case VMM_KILL:
		return vmm_kill(t);
	case VECTOR_DISABLE:
		return edu_msi_trigger(&t->r.edu, -1);
	case DEVICE_RELEASE:
		return reopen_device(&t->r);
	}
	return -EINVAL;
}

static int rebuild(struct td *t, enum teardown which)
{
	switch (which) {
	case VM_CLOSE:
		return rig_vm_up(&t->r);
	case VMM_KILL:
		return vmm_spawn(t);
	case VECTOR_DISABLE:
		return edu_msi_trigger(&t->r.edu, t->r.efd);
	case DEVICE_RELEASE:
		return 0;
	}
	return -EINVAL;
}

static int cycle(struct td *t, enum teardown which, struct irq_acct *c)
{
	struct msi_rig *r = &t->r;
	unsigned int i, n = prng_below(&t->prng, BEFORE_MAX + 1), seen;
	int ret;

	for (i = 0; i < n; i++) {
		ret = edu_raise_wait(&r->edu, &r->sink, c, r->timeout, NULL);
		if (ret) {
			tap_diag("%s: raise %llu before the teardown timed out",
				 case_name[which], c->raised);
			return ret;
		}
	}
	if (which == VM_CLOSE && prng_below(&t->prng, 2))
		vcpu_runner_stop(&r->vcpu);
	dev_msi_raise(&r->edu);
	c->raised++;
	prng_usleep(&t->prng, 300);
	if (r->edu.msix) {
		/* Its message is out; no timer may outlive MSI-X. */
		dev_msi_ack(&r->edu);
		e1000e_unthrottle(&r->edu);
	}
	ret = teardown(t, which);
	if (ret) {
		tap_diag("%s: teardown failed: %d", case_name[which], ret);
		return ret;
	}
	usleep(SETTLE_MS * 1000);
	seen = msi_sink_collect(&r->sink, c);
	if (!seen)
		c->absorbed++;
	else if (seen > 1)
		c->doubled += seen - 1;
	if (r->edu.bar0 && !r->edu.msix)
		edu_write(&r->edu, EDU_REG_IRQ_ACK, ~0u);
	ret = rebuild(t, which);
	if (ret)
		tap_diag("%s: cannot rebuild the path: %d", case_name[which],
			 ret);
	return ret;
}

static void run_case(struct td *t, enum teardown which, long cycles,
		     long seconds)
{
	long long deadline = now_us() + seconds * 1000000, start = now_us();
	struct msi_rig *r = &t->r;
	struct irq_acct c;
	char name[32];
	long i;
	int ret = 0;

	if (which == VMM_KILL) {
		/* The VM moves into a child; the parent keeps no VM. */
		rig_vm_down(r);
		ret = vmm_spawn(t);
	}
	/* The edu's cases keep their names; the e1000e's say MSI-X. */
	snprintf(name, sizeof(name), "%s%s", r->edu.msix ? "msix " : "",
		 case_name[which]);
	rig_phase_begin(r, &c);
	for (i = 0; !ret && i < cycles && !deadline_passed(deadline); i++)
		ret = cycle(t, which, &c);
	rig_phase_end(r, &c, name);
	tap_diag("%s: %ld of %ld cycles in %lld ms", name, i, cycles,
		 (now_us() - start) / 1000);
	tap_result(!ret && i > 0, "%s: %ld teardowns with an MSI in flight, path rebuilt each time",
		   name, i);
	rig_report(r, name, &c, false);
	if (which == VMM_KILL) {
		if (t->vmm > 0)
			vmm_kill(t);
		rig_vm_up(r);
	}
}

int main(void)
{
	u64 seed = stress_init("stress_teardown");
	long cycles, seconds;
	int fds = count_open_fds();
	struct td t = { 0 };
	int ret, i, d;

	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	cycles = env_long("KVM_IRQBYPASS_TEARDOWNS", 50, 1);
	seconds = env_long("KVM_IRQBYPASS_SECONDS", 60, 1);
	prng_seed(&t.prng, seed);
	t.ram = mmap(NULL, GUEST_RAM_SIZE, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t.ram == MAP_FAILED)
		tap_bail("shared guest RAM: %m");

	for (d = 0; d < NR_DEVS; d++) {
		ret = rig_setup_dev(&t.r, t.ram, d);
		if (ret == -ENODEV) {
			for (i = 0; i < NR_DEV_TESTS; i++)
				tap_skip("no %s on this machine", dev_name[d]);
			rig_teardown(&t.r);
			continue;
		}
		if (!tap_result(!ret, "setup: %s -> eventfd -> KVM_IRQFD on MSI route GSI %u",
				dev_name[d], TEST_MSI_GSI)) {
			for (i = 0; i < 4 * NR_CASES; i++)
				tap_result(false, "%s: not run", dev_name[d]);
			rig_teardown(&t.r);
			continue;
		}
		/* Any irq: vectors are freed and requested again. */
		t.r.irq = -1;
		for (i = 0; i < NR_CASES; i++)
			run_case(&t, i, i == VECTOR_DISABLE ? 4 * cycles :
				 cycles, seconds);
		rig_teardown(&t.r);
	}

	ret = count_open_fds();
	tap_result(ret == fds, "no descriptor left open (%d before, %d after)",
		   fds, ret);
	return tap_finish();
}
