// SPDX-License-Identifier: GPL-2.0-only
/*
 * irqfd_assign_race: KVM_IRQFD deassign racing with the assign of the same
 * irqfd.  kvm_irqfd_assign() puts the irqfd on the VM's list, where a
 * deassign finds it, before it polls the eventfd and registers the
 * irqbypass consumer; irqfd_shutdown() must not tear it down before the
 * assign is done (it waits for kvm->irq_srcu then; the kit skips that wait
 * for irqfds whose assign has finished, patches/<line>/0011).
 *
 * The assigner (the main thread) assigns a fresh eventfd to one GSI,
 * checks whether the irqfd is still there, deassigns it and closes the
 * eventfd; the racer (a second thread) deassigns whatever eventfd is
 * current, in a loop.  A teardown under a running assign shows up as a use
 * after free (KASAN in make check-debug), a list corruption or a refcount
 * report, which the testbed's dmesg scan fails; here the test checks the
 * ioctls' results, that the race ran (the racer removed irqfds that the
 * assigner had just assigned), that nothing is left behind (the eventfd of
 * the last cycle can be assigned again, no fd leaked) and that an irqfd on
 * the same VM still delivers afterwards.
 *
 * KVM_IRQBYPASS_ITERATIONS  assign cycles (default 2000)
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kvm_util_lite.h"
#include "tap.h"

#define NR_TESTS	5
#define RACE_GSI	5
#define CHECK_GSI	6
#define CHECK_IRQS	20
#define QUIET_MS	500

static struct lite_vm *vm;
static atomic_int cur_fd = -1;
static atomic_bool stop;
static atomic_long racer_calls, racer_bad;
static atomic_int racer_err;

/*
 * Deassign the current eventfd over and over.  The assigner may close
 * it (and the number may be reused by the next eventfd()) at any time, so
 * EBADF and EINVAL are expected too; anything else is a failure.
 */
static void *racer(void *arg)
{
	int fd, ret;

	(void)arg;
	while (!atomic_load(&stop)) {
		fd = atomic_load(&cur_fd);
		if (fd < 0)
			continue;
		ret = __vm_irqfd(vm, fd, RACE_GSI, KVM_IRQFD_FLAG_DEASSIGN, 0);
		atomic_fetch_add(&racer_calls, 1);
		if (ret && ret != -EBADF && ret != -EINVAL) {
			atomic_fetch_add(&racer_bad, 1);
			atomic_store(&racer_err, -ret);
		}
	}
	return NULL;
}

/* 0 if efd is no longer bound to any GSI of the VM, -EBUSY if it is. */
static int probe_bound(int efd)
{
	int ret = __vm_irqfd(vm, efd, CHECK_GSI, 0, 0);

	if (!ret)
		ret = __vm_irqfd(vm, efd, CHECK_GSI, KVM_IRQFD_FLAG_DEASSIGN,
				 0);
	return ret;
}

int main(void)
{
	long i, iterations, removed = 0, kept = 0, bad = 0, raised = 0;
	int fds_before, efd = -1, ret, last_err = 0;
	int timeout = test_timeout_ms();
	struct guest_params params = { 0 };
	u32 value, delivered;
	pthread_t thread;
	bool ok;

	tap_plan(NR_TESTS);
	kvm_open_or_bail();
	iterations = env_long("KVM_IRQBYPASS_ITERATIONS", 2000, 1);
	vm = vm_create(IRQCHIP_KERNEL);
	fds_before = count_open_fds();

	if (pthread_create(&thread, NULL, racer, NULL))
		tap_bail("pthread_create");
	for (i = 0; i < iterations; i++) {
		efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (efd < 0)
			tap_bail("eventfd: %s", strerror(errno));
		atomic_store(&cur_fd, efd);
		ret = __vm_irqfd(vm, efd, RACE_GSI, 0, 0);
		if (ret) {
			bad++;
			last_err = -ret;
		}
		/* Still bound: the racer has not removed it (yet). */
		ret = probe_bound(efd);
		if (ret == -EBUSY) {
			kept++;
		} else if (!ret) {
			removed++;
		} else {
			bad++;
			last_err = -ret;
		}
		ret = __vm_irqfd(vm, efd, RACE_GSI, KVM_IRQFD_FLAG_DEASSIGN, 0);
		if (ret) {
			bad++;
			last_err = -ret;
		}
		atomic_store(&cur_fd, -1);
		if (i + 1 < iterations)
			close(efd);
	}
	atomic_store(&stop, true);
	pthread_join(thread, NULL);

	if (bad || atomic_load(&racer_bad))
		tap_diag("assigner: %ld failed calls (last %s), racer: %ld (last %s)",
			 bad, strerror(last_err), atomic_load(&racer_bad),
			 strerror(atomic_load(&racer_err)));
	tap_result(!bad && !atomic_load(&racer_bad),
		   "%ld assign/deassign cycles, %ld racing deassigns: every KVM_IRQFD returned 0 or EBADF/EINVAL for a closed fd",
		   iterations, atomic_load(&racer_calls));
	tap_diag("%s %ld of %ld cycles (%ld still bound)",
		 "the racer removed the irqfd before the assigner's check in",
		 removed, iterations, kept);
	tap_result(removed > 0,
		   "the race ran: the racer removed %ld freshly assigned irqfds",
		   removed);

	/* The last cycle's eventfd is still open and must be free to bind. */
	ret = probe_bound(efd);
	tap_result(!ret, "the last cycle's eventfd can be assigned again (%s)",
		   ret ? strerror(-ret) : "0");
	close(efd);
	tap_result(count_open_fds() == fds_before,
		   "no fd left behind (%d open, %d before)", count_open_fds(),
		   fds_before);

	/* The VM's irqfds still work: MSIs through a new irqfd, each once. */
	params.vector = TEST_MSI_VECTOR;
	params.post_eoi_port = GUEST_PORT_POST_EOI;
	params.target = CHECK_IRQS;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ok = efd >= 0 && !vm_start_guest(vm, &params) &&
	     !guest_run_until(vm, GUEST_PORT_READY, NULL, timeout) &&
	     !vm_route_msi(vm, TEST_MSI_GSI, TEST_MSI_VECTOR) &&
	     !__vm_irqfd(vm, efd, TEST_MSI_GSI, 0, 0);
	for (i = 0; ok && i < CHECK_IRQS; i++) {
		if (eventfd_raise(efd) ||
		    guest_run_until(vm, GUEST_PORT_POST_EOI, &value, timeout))
			break;
		raised++;
	}
	delivered = ok ? guest_count(vm) : 0;
	/* At its target the guest reports done, then must stay quiet. */
	ok = ok && raised == CHECK_IRQS && delivered == CHECK_IRQS &&
	     !guest_run_until(vm, GUEST_PORT_DONE, &value, timeout) &&
	     value == CHECK_IRQS && !guest_run_quiet(vm, QUIET_MS);
	tap_result(ok,
		   "after the race, a new irqfd delivers: raised=%ld delivered=%u, nothing more in %d ms",
		   raised, delivered, QUIET_MS);
	if (efd >= 0)
		close(efd);
	vm_destroy(vm);
	return tap_finish();
}
