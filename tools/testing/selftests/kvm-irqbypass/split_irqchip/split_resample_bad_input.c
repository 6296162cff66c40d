// SPDX-License-Identifier: GPL-2.0-only
/*
 * split_resample_bad_input: the errors of KVM_CAP_SPLIT_IRQCHIP_RESAMPLE
 * (Documentation/split-irqchip-resample.rst): each call fails with the
 * documented errno and leaves the process's fd count unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "linux/kvm_kit.h"
#include "kvm_util_lite.h"
#include "tap.h"

#define NR_TESTS	15

static int enable_cap(struct lite_vm *vm, u64 a0, u64 a1)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_SPLIT_IRQCHIP_RESAMPLE,
		.args = { a0, a1 },
	};

	return ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap) < 0 ? -errno : 0;
}

static int route_msi_level(struct lite_vm *vm, u32 gsi)
{
	struct {
		struct kvm_irq_routing hdr;
		struct kvm_irq_routing_entry e[2];
	} t = {
		.hdr.nr = 2,
		.e[0] = { .gsi = gsi, .type = KVM_IRQ_ROUTING_MSI,
			  .u.msi = { .address_lo = LAPIC_BASE,
				     .data = TEST_LEVEL_VECTOR | 0xc000 } },
		/* An MSI route above the reserved pins. */
		.e[1] = { .gsi = SPLIT_IRQCHIP_PINS, .type = KVM_IRQ_ROUTING_MSI,
			  .u.msi = { .address_lo = LAPIC_BASE,
				     .data = TEST_MSI_VECTOR } },
	};

	return ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, &t) < 0 ? -errno : 0;
}

/* ret is 0 or -errno; want is 0 or an errno. */
static void expect(int ret, int want, int fds_before, const char *what)
{
	int fds = count_open_fds();

	tap_result(ret == -want && fds == fds_before,
		   "%s: %s (want %s), fds %d -> %d", what,
		   ret ? strerror(-ret) : "0", want ? strerror(want) : "0",
		   fds_before, fds);
}

int main(void)
{
	struct lite_vm *none, *kernel, *split, *nocap;
	int efd, rfd, devnull, closed, fds, r;

	tap_plan(NR_TESTS);
	r = __kvm_check_cap(KVM_CAP_SPLIT_IRQCHIP_RESAMPLE);
	if (r <= 0) {
		tap_skip_rest("KVM_CAP_SPLIT_IRQCHIP_RESAMPLE not supported (stock KVM)");
		return tap_finish();
	}

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	none = __vm_create(IRQCHIP_NONE);
	kernel = __vm_create(IRQCHIP_KERNEL);
	split = __vm_create(IRQCHIP_SPLIT);
	nocap = __vm_create(IRQCHIP_SPLIT);
	if (efd < 0 || rfd < 0 || devnull < 0 || !none || !kernel || !split ||
	    !nocap)
		tap_bail("setup failed");

	fds = count_open_fds();
	expect(enable_cap(none, 0, 0), EINVAL, fds, "cap on a VM without irqchip");
	expect(enable_cap(kernel, 0, 0), EINVAL, fds,
	       "cap on a VM with the full in-kernel irqchip");
	expect(enable_cap(split, 1ULL << 63, 0), EINVAL, fds,
	       "cap with an unknown flag in args[0]");
	expect(enable_cap(split, 0, 1), EINVAL, fds, "cap with args[1] != 0");
	expect(enable_cap(split, KVM_SPLIT_RESAMPLE_NO_EOI_EXIT, 0), 0, fds,
	       "cap with NO_EOI_EXIT on a split irqchip VM");
	/* Already enabled: EEXIST, as KVM answers for KVM_CAP_SPLIT_IRQCHIP. */
	expect(enable_cap(split, 0, 0), EEXIST, fds,
	       "cap enabled twice, other flags");
	expect(enable_cap(split, KVM_SPLIT_RESAMPLE_NO_EOI_EXIT, 0), EEXIST,
	       fds, "cap enabled twice, same flags");

	if (route_msi_level(split, 5) || route_msi_level(nocap, 5))
		tap_bail("KVM_SET_GSI_ROUTING failed");
	expect(__vm_irqfd(split, efd, SPLIT_IRQCHIP_PINS, KVM_IRQFD_FLAG_RESAMPLE,
			  rfd), EINVAL, fds,
	       "resample on an MSI-routed GSI >= the reserved pins");
	expect(__vm_irqfd(split, efd, 3, KVM_IRQFD_FLAG_RESAMPLE, rfd), EINVAL,
	       fds, "resample on a pin GSI with no route");
	expect(__vm_irqfd(split, efd, 5, KVM_IRQFD_FLAG_RESAMPLE, devnull), EINVAL,
	       fds, "resamplefd is /dev/null");
	/* A number that was just closed and is not reused before the call. */
	closed = dup(efd);
	close(closed);
	expect(__vm_irqfd(split, efd, 5, KVM_IRQFD_FLAG_RESAMPLE, closed), EBADF,
	       fds, "resamplefd not open");
	expect(__vm_irqfd(nocap, efd, 5, KVM_IRQFD_FLAG_RESAMPLE, rfd), EINVAL,
	       fds, "resample on split irqchip without the capability");
	/* The valid call still works and undoes cleanly. */
	expect(__vm_irqfd(split, efd, 5, KVM_IRQFD_FLAG_RESAMPLE, rfd), 0, fds,
	       "resample on an MSI-routed pin GSI with the capability");
	expect(__vm_irqfd(split, efd, 5, KVM_IRQFD_FLAG_DEASSIGN, 0), 0, fds,
	       "deassign it");
	expect(__vm_irqfd(split, efd, 5, 0, 0), 0, fds,
	       "plain irqfd on the same GSI afterwards");
	__vm_irqfd(split, efd, 5, KVM_IRQFD_FLAG_DEASSIGN, 0);

	vm_destroy(none);
	vm_destroy(kernel);
	vm_destroy(split);
	vm_destroy(nocap);
	close(efd);
	close(rfd);
	close(devnull);
	return tap_finish();
}
