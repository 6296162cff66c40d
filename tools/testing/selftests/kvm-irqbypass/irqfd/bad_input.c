// SPDX-License-Identifier: GPL-2.0-only
/*
 * bad_input: KVM_IRQFD and VFIO_DEVICE_SET_IRQS must reject bad arguments
 * with the errno the stock kernel returns, and leave nothing behind: the
 * process fd count is unchanged, and the eventfd used in a failed call can
 * still be assigned afterwards (a half-registered irqfd would make that
 * fail with EBUSY).
 *
 * Expected errnos come from the 6.12 sources:
 *  - virt/kvm/eventfd.c kvm_irqfd(): unknown flags -> EINVAL.
 *  - kvm_irqfd_assign(): !kvm_arch_irqfd_allowed() -> EINVAL (x86: resample
 *    needs the full in-kernel irqchip, any irqfd needs an in-kernel LAPIC);
 *    fd not open -> EBADF; open but not an eventfd -> EINVAL (from
 *    eventfd_ctx_fileget()); same for resamplefd; an eventfd already bound
 *    to any GSI -> EBUSY.
 *  - kvm_irqfd_deassign() walks the list and returns 0 even when nothing
 *    matched: deassigning an irqfd that was never assigned is NOT an error
 *    (no ENOENT); only a bad fd fails (EBADF/EINVAL).
 *  - drivers/vfio/vfio_main.c vfio_set_irqs_validate_and_prepare(): bad
 *    index, undefined flag bits, start/count beyond the vector count, an
 *    unknown data type or a short argsz -> EINVAL.
 *  - drivers/vfio/pci/vfio_pci_intrs.c: MSI has no MASK/UNMASK -> ENOTTY;
 *    INTx UNMASK while INTx is off -> EINVAL; a new trigger for an enabled
 *    vector that is not open -> EBADF, not an eventfd -> EINVAL (the kit's
 *    in-place trigger change declines both and the stock path fails).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kvm_util_lite.h"
#include "tap.h"
#include "vfio_util_lite.h"

#define NR_KVM_TESTS	18
#define NR_VFIO_TESTS	13
#define DELIVERY_CHECKS	3

static int devnull_fd = -1;
static int closed_fd = -1;

static const char *errname(int err)
{
	const char *name = err ? strerrorname_np(err) : "0";

	return name ? name : "?";
}

/*
 * Report one case: ret must be -want, and the fd table must not have grown
 * or shrunk across the call.
 */
static bool expect(int ret, int want, int fds_before, const char *what)
{
	int fds = count_open_fds();
	bool ok = ret == -want && fds == fds_before;

	if (ret != -want)
		tap_diag("%s: got %s, want %s", what, errname(-ret),
			 errname(want));
	if (fds != fds_before)
		tap_diag("%s: open fds %d -> %d", what, fds_before, fds);
	return tap_result(ok, "%s -> %s", what, errname(want));
}

/* True if efd can be bound to gsi and unbound again: nothing stale. */
static bool still_assignable(struct lite_vm *vm, int efd, u32 gsi)
{
	int ret = __vm_irqfd(vm, efd, gsi, 0, 0);

	if (ret) {
		tap_diag("follow-up assign of the same eventfd: %s",
			 errname(-ret));
		return false;
	}
	ret = __vm_irqfd(vm, efd, gsi, KVM_IRQFD_FLAG_DEASSIGN, 0);
	if (ret)
		tap_diag("follow-up deassign: %s", errname(-ret));
	return !ret;
}

static bool expect_irqfd(struct lite_vm *vm, int fd, u32 gsi,
			 u32 flags, int resamplefd, int want,
			 int check_efd, const char *what)
{
	int fds = count_open_fds();
	int ret = __vm_irqfd(vm, fd, gsi, flags, resamplefd);

	if (check_efd >= 0 && !still_assignable(vm, check_efd, gsi)) {
		tap_diag("%s: left state behind", what);
		fds = -1;	/* force a failure in expect() */
	}
	return expect(ret, want, fds, what);
}

/* Cases on a VM with the full in-kernel irqchip. */
static void kvm_kernel_irqchip_cases(struct lite_vm *vm, int efd, int efd2)
{
	const u32 gsi = TEST_MSI_GSI;
	int pipefd[2], fds, ret;

	expect_irqfd(vm, efd, gsi, 1u << 2, 0, EINVAL, efd,
		     "KVM_IRQFD unknown flag bit 2");
	expect_irqfd(vm, efd, gsi, 1u << 31, 0, EINVAL, efd,
		     "KVM_IRQFD unknown flag bit 31");
	expect_irqfd(vm, devnull_fd, gsi, 0, 0, EINVAL, efd,
		     "KVM_IRQFD fd is /dev/null, not an eventfd");
	if (pipe2(pipefd, O_CLOEXEC) == 0) {
		expect_irqfd(vm, pipefd[0], gsi, 0, 0, EINVAL, efd,
			     "KVM_IRQFD fd is a pipe, not an eventfd");
		close(pipefd[0]);
		close(pipefd[1]);
	} else {
		tap_result(false, "pipe2: %s", strerror(errno));
	}
	expect_irqfd(vm, closed_fd, gsi, 0, 0, EBADF, efd,
		     "KVM_IRQFD fd not open");
	expect_irqfd(vm, -1, gsi, 0, 0, EBADF, efd, "KVM_IRQFD fd -1");
	expect_irqfd(vm, efd, 5, KVM_IRQFD_FLAG_RESAMPLE, devnull_fd, EINVAL,
		     efd, "KVM_IRQFD resamplefd is /dev/null");
	expect_irqfd(vm, efd, 5, KVM_IRQFD_FLAG_RESAMPLE, closed_fd, EBADF,
		     efd, "KVM_IRQFD resamplefd not open");

	/* Stock kvm_irqfd_deassign() returns 0 when nothing matches. */
	expect_irqfd(vm, efd, gsi, KVM_IRQFD_FLAG_DEASSIGN, 0, 0, efd,
		     "KVM_IRQFD deassign of a never-assigned irqfd");
	expect_irqfd(vm, devnull_fd, gsi, KVM_IRQFD_FLAG_DEASSIGN, 0, EINVAL,
		     efd, "KVM_IRQFD deassign with a non-eventfd");

	/* One eventfd can feed only one irqfd, whatever the GSI. */
	fds = count_open_fds();
	ret = __vm_irqfd(vm, efd2, gsi, 0, 0);
	if (ret)
		tap_diag("first assign: %s", errname(-ret));
	ret = ret ? ret : __vm_irqfd(vm, efd2, gsi + 1, 0, 0);
	expect(ret, EBUSY, fds, "KVM_IRQFD same eventfd on a second GSI");
	/* The first binding must have survived the refused second one. */
	ret = __vm_irqfd(vm, efd2, gsi, KVM_IRQFD_FLAG_DEASSIGN, 0);
	tap_result(!ret && still_assignable(vm, efd2, gsi),
		   "first binding intact after EBUSY, deassigns cleanly");
}

static void kvm_other_irqchip_cases(int efd, int resamplefd)
{
	struct lite_vm *split = __vm_create(IRQCHIP_SPLIT);
	struct lite_vm *none = __vm_create(IRQCHIP_NONE);
	int fds, ret;

	if (split) {
		expect_irqfd(split, efd, 5, KVM_IRQFD_FLAG_RESAMPLE,
			     resamplefd, EINVAL, efd,
			     "KVM_IRQFD_FLAG_RESAMPLE with split irqchip");
		/* A plain irqfd is fine there: MSI routes are its use. */
		fds = count_open_fds();
		ret = __vm_irqfd(split, efd, TEST_MSI_GSI, 0, 0);
		if (!ret)
			ret = __vm_irqfd(split, efd, TEST_MSI_GSI,
					 KVM_IRQFD_FLAG_DEASSIGN, 0);
		expect(ret, 0, fds, "KVM_IRQFD without resample on split irqchip");
	} else {
		tap_result(false, "split irqchip VM could not be created");
		tap_result(false, "split irqchip VM could not be created");
	}
	if (none) {
		expect_irqfd(none, efd, 5, KVM_IRQFD_FLAG_RESAMPLE, resamplefd,
			     EINVAL, -1,
			     "KVM_IRQFD_FLAG_RESAMPLE without any irqchip");
		expect_irqfd(none, efd, TEST_MSI_GSI, 0, 0, EINVAL, -1,
			     "KVM_IRQFD without any irqchip");
	} else {
		tap_result(false, "VM without irqchip could not be created");
		tap_result(false, "VM without irqchip could not be created");
	}
	vm_destroy(split);
	vm_destroy(none);
}

/* After all the refusals, the same VM must still take interrupts. */
static void kvm_delivery_after_errors(struct lite_vm *vm, int efd,
				      int timeout)
{
	unsigned int raised = 0, signalled = 0;
	bool ok;
	int i;

	ok = !vm_route_msi(vm, TEST_MSI_GSI, TEST_MSI_VECTOR) &&
	     !__vm_irqfd(vm, efd, TEST_MSI_GSI, 0, 0) &&
	     !guest_run_until(vm, GUEST_PORT_READY, NULL, timeout);
	for (i = 1; ok && i <= DELIVERY_CHECKS; i++) {
		ok = !eventfd_raise(efd);
		raised += ok;
		ok = ok && !guest_run_until(vm, GUEST_PORT_POST_EOI, NULL,
					    timeout);
		signalled += ok && !fd_readable(efd);
	}
	ok = ok && !guest_run_until(vm, GUEST_PORT_DONE, NULL, timeout);
	tap_diag("raised=%u signalled=%u delivered=%u", raised, signalled,
		 guest_count(vm));
	tap_result(ok && guest_count(vm) == DELIVERY_CHECKS &&
		   signalled == raised,
		   "a valid irqfd still delivers after the refused calls");
}

static void vfio_cases(struct edu_dev *edu)
{
	int dev = edu->device_fd;
	int msi = vfio_irq_count(dev, VFIO_PCI_MSI_IRQ_INDEX);
	int msix = vfio_irq_count(dev, VFIO_PCI_MSIX_IRQ_INDEX);
	struct vfio_irq_set set;
	s32 efd, fds;
	int ret;

	tap_diag("edu MSI vectors %d, MSI-X vectors %d", msi, msix);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	fds = count_open_fds();
	expect(vfio_set_irqs(dev, VFIO_PCI_NUM_IRQS, VFIO_IRQ_SET_ACTION_TRIGGER,
			     0, 1, &efd), EINVAL, fds,
	       "SET_IRQS index VFIO_PCI_NUM_IRQS");
	expect(vfio_set_irqs(dev, VFIO_PCI_MSI_IRQ_INDEX,
			     VFIO_IRQ_SET_ACTION_TRIGGER, 0, msi + 1, NULL),
	       EINVAL, fds, "SET_IRQS MSI count beyond the vector count");
	expect(vfio_set_irqs(dev, VFIO_PCI_MSI_IRQ_INDEX,
			     VFIO_IRQ_SET_ACTION_TRIGGER, msi, 1, &efd),
	       EINVAL, fds, "SET_IRQS MSI start beyond the vector count");

	memset(&set, 0, sizeof(set));
	set.argsz = sizeof(set);
	set.index = VFIO_PCI_MSI_IRQ_INDEX;
	set.count = 1;
	set.flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER |
		    (1u << 9);
	expect(vfio_set_irqs_raw(dev, &set), EINVAL, fds,
	       "SET_IRQS undefined flag bit 9");
	set.flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_DATA_BOOL |
		    VFIO_IRQ_SET_ACTION_TRIGGER;
	expect(vfio_set_irqs_raw(dev, &set), EINVAL, fds,
	       "SET_IRQS two data types");
	set.flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	expect(vfio_set_irqs_raw(dev, &set), EINVAL, fds,
	       "SET_IRQS DATA_EVENTFD with argsz too short for the fd");
	set.argsz = 4;
	set.flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER;
	expect(vfio_set_irqs_raw(dev, &set), EINVAL, fds,
	       "SET_IRQS argsz shorter than the header");

	if (msix == 0)
		expect(vfio_set_irqs(dev, VFIO_PCI_MSIX_IRQ_INDEX,
				     VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &efd),
		       EINVAL, fds, "SET_IRQS MSI-X on a device without MSI-X");
	else
		tap_skip("edu has MSI-X here (%d vectors)", msix);
	expect(vfio_set_irqs(dev, VFIO_PCI_MSI_IRQ_INDEX,
			     VFIO_IRQ_SET_ACTION_UNMASK, 0, 1, NULL),
	       ENOTTY, fds, "SET_IRQS MSI ACTION_UNMASK (not supported)");
	expect(vfio_set_irqs(dev, VFIO_PCI_INTX_IRQ_INDEX,
			     VFIO_IRQ_SET_ACTION_UNMASK, 0, 1, &efd),
	       EINVAL, fds, "SET_IRQS INTx UNMASK eventfd while INTx is off");

	/* A trigger change of an enabled vector to a bad fd. */
	for (int i = 0; i < 2; i++) {
		s32 bad = i ? devnull_fd : closed_fd;

		ret = vfio_set_irqs(dev, VFIO_PCI_MSI_IRQ_INDEX,
				    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &efd);
		if (!ret)
			ret = vfio_set_irqs(dev, VFIO_PCI_MSI_IRQ_INDEX,
					    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &bad);
		expect(ret, i ? EINVAL : EBADF, fds, i ?
		       "SET_IRQS MSI trigger changed to a non-eventfd" :
		       "SET_IRQS MSI trigger changed to a closed fd");
		vfio_set_irqs(dev, VFIO_PCI_MSI_IRQ_INDEX,
			      VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	}

	/* Nothing half-enabled: a valid MSI enable/disable cycle works. */
	ret = vfio_set_irqs(dev, VFIO_PCI_MSI_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &efd);
	if (ret)
		tap_diag("MSI enable: %s", errname(-ret));
	if (!ret) {
		ret = vfio_set_irqs(dev, VFIO_PCI_MSI_IRQ_INDEX,
				    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
		if (ret)
			tap_diag("MSI disable: %s", errname(-ret));
	}
	expect(ret, 0, fds, "valid MSI enable and disable after the refusals");
	close(efd);
}

int main(void)
{
	struct guest_params params = {
		.vector = TEST_MSI_VECTOR,
		.post_eoi_port = GUEST_PORT_POST_EOI,
		.target = DELIVERY_CHECKS,
	};
	int timeout = test_timeout_ms();
	int efd, efd2, resamplefd;
	struct lite_vm *vm;
	struct edu_dev edu;
	int fds_start, ret;

	tap_plan(NR_KVM_TESTS + NR_VFIO_TESTS);
	close(kvm_open_or_bail());

	devnull_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	closed_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	/* A descriptor number that is certainly not open right now. */
	close(closed_fd);
	closed_fd = 1000;
	while (fcntl(closed_fd, F_GETFD) >= 0)
		closed_fd++;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	efd2 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	resamplefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (devnull_fd < 0 || efd < 0 || efd2 < 0 || resamplefd < 0)
		tap_bail("setting up descriptors: %s", strerror(errno));
	fds_start = count_open_fds();

	vm = __vm_create(IRQCHIP_KERNEL);
	if (!vm || vm_start_guest(vm, &params))
		tap_bail("could not create the in-kernel irqchip VM");
	kvm_kernel_irqchip_cases(vm, efd, efd2);
	kvm_other_irqchip_cases(efd, resamplefd);
	kvm_delivery_after_errors(vm, efd, timeout);
	vm_destroy(vm);
	ret = count_open_fds();
	if (ret != fds_start)
		tap_diag("open fds %d at start, %d after the KVM cases",
			 fds_start, ret);
	tap_result(ret == fds_start, "no descriptor leaked by the KVM cases");

	ret = edu_open(&edu);
	if (ret == -ENODEV) {
		tap_skip_rest("no edu device (1234:11e8) on this machine");
	} else if (ret) {
		tap_diag("edu_open: %s", errname(-ret));
	} else {
		vfio_cases(&edu);
		edu_close(&edu);
	}

	close(devnull_fd);
	close(efd);
	close(efd2);
	close(resamplefd);
	return tap_finish();
}
