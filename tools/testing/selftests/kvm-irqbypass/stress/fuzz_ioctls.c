// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_ioctls: a bounded, seeded ioctl fuzzer over the interrupt paths
 * (Documentation/reliability.rst).  Each sequence drives three VMs (full
 * in-kernel irqchip, split irqchip, none; a vCPU each, never run), a pool
 * of eventfd slots and the edu behind vfio-pci with random:
 *
 *   KVM_IRQFD (assign, deassign, resample; any slot, GSI, flags)
 *   KVM_SET_GSI_ROUTING (0-8 entries of any type, or a huge nr)
 *   KVM_ENABLE_CAP(KVM_CAP_SPLIT_IRQCHIP_RESAMPLE) (any args and flags)
 *   KVM_SIGNAL_MSI (any address, data, flags)
 *   VFIO_DEVICE_SET_IRQS (any index, action, data type, range, fds)
 *   eventfd close, dup, dup2 over another slot, write, and VM re-creation,
 *   so one eventfd is reused across VMs and devices
 *   edu interrupt raise and acknowledge
 *
 * Errors are expected; what fails a sequence is a kernel report (WARN,
 * BUG, KASAN, lockdep, hung task, kmemleak) in the log, a descriptor left
 * over once everything is closed, or a crash (the binary dies).
 *
 * Seeds: a fixed list, then KVM_IRQBYPASS_FUZZ_SEEDS (default 8) random
 * ones; KVM_IRQBYPASS_SEED=N runs the sequence of seed N alone.
 * KVM_IRQBYPASS_FUZZ_OPS: operations per sequence (default 2000).
 * KVM_IRQBYPASS_FUZZ_TRACE=1: print each operation before it runs and its
 * result after (to find the call that a replayed seed hangs or splats in).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "irq_acct.h"
#include "kmsg.h"
#include "linux/kvm_kit.h"
#include "prng.h"
#include "tap.h"

#define NR_VMS		3
#define NR_SLOTS	8
#define NR_OPS		11

static const u64 fixed_seeds[] = { 1, 2, 3, 42, 1000, 0xdeadbeef };

struct fuzz {
	struct prng p;
	struct lite_vm *vm[NR_VMS];
	int slot[NR_SLOTS];
	struct edu_dev *edu;
	unsigned long ops[NR_OPS], fails[NR_OPS];
};

static const char *const op_name[NR_OPS] = {
	"KVM_IRQFD", "KVM_SET_GSI_ROUTING", "KVM_ENABLE_CAP", "KVM_SIGNAL_MSI",
	"VFIO_DEVICE_SET_IRQS", "eventfd-close", "eventfd-dup", "eventfd-new",
	"eventfd-write", "edu-raise", "vm-recreate",
};

static const enum irqchip_mode vm_mode[NR_VMS] = {
	IRQCHIP_KERNEL, IRQCHIP_SPLIT, IRQCHIP_NONE,
};

static u32 pick_gsi(struct prng *p)
{
	switch (prng_below(p, 4)) {
	case 0:
		return prng_below(p, SPLIT_IRQCHIP_PINS);
	case 1:
		return TEST_MSI_GSI + prng_below(p, 8);
	case 2:
		return prng_below(p, 4096);
	}
	return (u32)prng_next(p);
}

/* A slot's fd, sometimes -1, a closed slot or a non-eventfd fd. */
static int pick_fd(struct fuzz *f)
{
	switch (prng_below(&f->p, 10)) {
	case 0:
		return -1;
	case 1:
		return 0;	/* stdin: not an eventfd */
	case 2:
		return f->edu->device_fd;
	}
	return f->slot[prng_below(&f->p, NR_SLOTS)];
}

static struct lite_vm *pick_vm(struct fuzz *f)
{
	return f->vm[prng_below(&f->p, NR_VMS)];
}

static int vm_make(struct fuzz *f, int i)
{
	struct guest_params params = { .vector = TEST_MSI_VECTOR };

	vm_destroy(f->vm[i]);
	f->vm[i] = __vm_create(vm_mode[i]);
	if (!f->vm[i] || vm_start_guest(f->vm[i], &params))
		return -EIO;
	return 0;
}

static int op_irqfd(struct fuzz *f, struct lite_vm *vm)
{
	static const u32 flags[] = {
		0, KVM_IRQFD_FLAG_DEASSIGN, KVM_IRQFD_FLAG_RESAMPLE,
		KVM_IRQFD_FLAG_RESAMPLE | KVM_IRQFD_FLAG_DEASSIGN, 0x4, ~0u,
	};
	u32 fl = flags[prng_below(&f->p, ARRAY_SIZE(flags))];
	int fd = pick_fd(f), rfd = pick_fd(f);

	return __vm_irqfd(vm, fd, pick_gsi(&f->p), fl, rfd);
}

static int op_routing(struct fuzz *f, struct lite_vm *vm)
{
	struct kvm_irq_routing *t;
	unsigned int n = prng_below(&f->p, 9), i, valid;
	int ret;

	t = calloc(1, sizeof(*t) + 8 * sizeof(t->entries[0]));
	if (!t)
		return -ENOMEM;
	t->nr = n;
	if (!prng_below(&f->p, 20))
		t->nr = prng_below(&f->p, 2) ? 4097 : ~0u;	/* too many */
	t->flags = prng_below(&f->p, 20) ? 0 : (u32)prng_next(&f->p);
	for (i = 0; i < n; i++) {
		struct kvm_irq_routing_entry *e = &t->entries[i];

		/* Five in six entries are valid on some irqchip. */
		valid = prng_below(&f->p, 6);
		e->gsi = valid ? prng_below(&f->p, 64) : pick_gsi(&f->p);
		e->type = valid ? 1 + prng_below(&f->p, 2) : prng_below(&f->p, 7);
		e->flags = valid || prng_below(&f->p, 4) ? 0 : (u32)prng_next(&f->p);
		if (e->type == KVM_IRQ_ROUTING_IRQCHIP) {
			e->u.irqchip.irqchip = valid ? KVM_IRQCHIP_IOAPIC :
						       prng_below(&f->p, 4);
			e->u.irqchip.pin = valid ? e->gsi % 24 :
					   prng_below(&f->p, 30);
		} else {
			e->u.msi.address_lo = LAPIC_BASE |
					      (valid ? 0 :
					       (u32)prng_next(&f->p) & 0xffff);
			e->u.msi.address_hi = valid ? 0 : (u32)prng_next(&f->p);
			e->u.msi.data = (u32)prng_next(&f->p) &
					(valid ? 0xff : ~0u);
		}
	}
	ret = ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, t) < 0 ? -errno : 0;
	free(t);
	return ret;
}

static int op_enable_cap(struct fuzz *f, struct lite_vm *vm)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_SPLIT_IRQCHIP_RESAMPLE,
		.args[0] = prng_below(&f->p, 3) ? prng_below(&f->p, 2) :
						   prng_next(&f->p),
		.args[1] = prng_below(&f->p, 8) ? 0 : prng_next(&f->p),
		.flags = prng_below(&f->p, 8) ? 0 : (u32)prng_next(&f->p),
	};

	return ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap) < 0 ? -errno : 0;
}

static int op_signal_msi(struct fuzz *f, struct lite_vm *vm)
{
	struct kvm_msi msi = {
		.address_lo = LAPIC_BASE |
			      (prng_below(&f->p, 2) ? 0 :
			       (u32)prng_next(&f->p) & 0xffff),
		.address_hi = prng_below(&f->p, 8) ? 0 : (u32)prng_next(&f->p),
		.data = (u32)prng_next(&f->p) & (prng_below(&f->p, 2) ? 0xff : ~0u),
		.flags = prng_below(&f->p, 8) ? 0 : (u32)prng_next(&f->p),
	};

	return ioctl(vm->vm_fd, KVM_SIGNAL_MSI, &msi) < 0 ? -errno : 0;
}

static int op_set_irqs(struct fuzz *f)
{
	static const u32 data[] = {
		VFIO_IRQ_SET_DATA_NONE, VFIO_IRQ_SET_DATA_BOOL,
		VFIO_IRQ_SET_DATA_EVENTFD,
	};
	static const u32 action[] = {
		VFIO_IRQ_SET_ACTION_MASK, VFIO_IRQ_SET_ACTION_UNMASK,
		VFIO_IRQ_SET_ACTION_TRIGGER,
	};
	struct {
		struct vfio_irq_set set;
		s32 fds[4];
	} s = { 0 };
	unsigned int i;

	s.set.argsz = sizeof(s);
	if (!prng_below(&f->p, 10))
		s.set.argsz = prng_below(&f->p, sizeof(s));
	s.set.flags = data[prng_below(&f->p, 3)] |
		      action[prng_below(&f->p, 3)];
	/* Mostly the triggers that wire MSI and INTx to eventfds. */
	if (prng_below(&f->p, 2))
		s.set.flags = VFIO_IRQ_SET_DATA_EVENTFD |
			      VFIO_IRQ_SET_ACTION_TRIGGER;
	if (!prng_below(&f->p, 20))
		s.set.flags = (u32)prng_next(&f->p);
	s.set.index = prng_below(&f->p, 2) ? VFIO_PCI_MSI_IRQ_INDEX :
					     prng_below(&f->p, 6);
	s.set.start = prng_below(&f->p, 4) ? 0 : prng_below(&f->p, 3);
	s.set.count = prng_below(&f->p, 4) ? 1 : prng_below(&f->p, 5);
	for (i = 0; i < ARRAY_SIZE(s.fds); i++)
		s.fds[i] = prng_below(&f->p, 4) ?
			   f->slot[prng_below(&f->p, NR_SLOTS)] :
			   pick_fd(f);
	return vfio_set_irqs_raw(f->edu->device_fd, &s.set);
}

static int op_eventfd(struct fuzz *f, unsigned int op)
{
	unsigned int a = prng_below(&f->p, NR_SLOTS);
	unsigned int b = prng_below(&f->p, NR_SLOTS);
	int fd;

	switch (op) {
	case 5:	/* close: whatever uses it keeps its reference */
		if (f->slot[a] >= 0)
			close(f->slot[a]);
		f->slot[a] = -1;
		return 0;
	case 6:	/* dup, or dup2 over another slot */
		if (f->slot[a] < 0 || a == b)
			return -EBADF;
		fd = prng_below(&f->p, 2) && f->slot[b] >= 0 ?
		     dup2(f->slot[a], f->slot[b]) : dup(f->slot[a]);
		if (fd < 0)
			return -errno;
		if (fd != f->slot[b]) {
			if (f->slot[b] >= 0)
				close(f->slot[b]);
			f->slot[b] = fd;
		}
		return 0;
	case 7:
		if (f->slot[a] >= 0)
			close(f->slot[a]);
		f->slot[a] = msi_eventfd();
		return f->slot[a] < 0 ? -errno : 0;
	case 8:
		return f->slot[a] < 0 ? -EBADF : eventfd_raise(f->slot[a]);
	}
	return -EINVAL;
}

static int do_op(struct fuzz *f, unsigned int op)
{
	switch (op) {
	case 0:
		return op_irqfd(f, pick_vm(f));
	case 1:
		return op_routing(f, pick_vm(f));
	case 2:
		return op_enable_cap(f, pick_vm(f));
	case 3:
		return op_signal_msi(f, pick_vm(f));
	case 4:
		return op_set_irqs(f);
	case 9:
		edu_write(f->edu, EDU_REG_IRQ_RAISE, 1);
		if (prng_below(&f->p, 2))
			edu_write(f->edu, EDU_REG_IRQ_ACK, ~0u);
		return 0;
	case 10:
		return vm_make(f, prng_below(&f->p, NR_VMS));
	}
	return op_eventfd(f, op);
}

static void fuzz_close(struct fuzz *f)
{
	unsigned int i;

	for (i = 0; i < NR_VMS; i++) {
		vm_destroy(f->vm[i]);
		f->vm[i] = NULL;
	}
	for (i = 0; i < NR_SLOTS; i++) {
		if (f->slot[i] >= 0)
			close(f->slot[i]);
		f->slot[i] = -1;
	}
	/* Every index back to no trigger, the device quiet. */
	for (i = 0; i <= VFIO_PCI_MSIX_IRQ_INDEX; i++)
		vfio_set_irqs(f->edu->device_fd, i,
			      VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	edu_write(f->edu, EDU_REG_IRQ_ACK, ~0u);
}

static bool trace_ops;

static void run_seed(struct edu_dev *edu, u64 seed, long nops, int kmsg)
{
	struct fuzz f = { .edu = edu };
	int fds = count_open_fds(), after, splats, ret = 0;
	unsigned long ok = 0;
	long i;
	unsigned int op;

	printf("# seed %llu\n", (unsigned long long)seed);
	prng_seed(&f.p, seed);
	for (i = 0; i < NR_SLOTS; i++)
		f.slot[i] = prng_below(&f.p, 4) ? msi_eventfd() : -1;
	for (i = 0; i < NR_VMS && !ret; i++)
		ret = vm_make(&f, i);
	/* Operations 10 (VM re-creation) and 9 (edu) are the rare ones. */
	for (i = 0; !ret && i < nops; i++) {
		op = prng_below(&f.p, 100);
		op = op < 2 ? 10 : op < 8 ? 9 : op % 9;
		f.ops[op]++;
		if (trace_ops)
			tap_diag("op %ld: %s (state %016llx)", i, op_name[op],
				 (unsigned long long)f.p.state);
		ret = do_op(&f, op);
		if (trace_ops)
			tap_diag("op %ld: %d", i, ret);
		if (ret)
			f.fails[op]++;
		else
			ok++;
		ret = 0;
		if (op == 10 && !f.vm[0])
			ret = -EIO;
		if (op == 10 && (!f.vm[1] || !f.vm[2]))
			ret = -EIO;
	}
	fuzz_close(&f);
	for (op = 0; op < NR_OPS; op++)
		tap_diag("  %-21s %4lu calls, %4lu failed", op_name[op],
			 f.ops[op], f.fails[op]);
	after = count_open_fds();
	splats = kmsg_splats(kmsg);
	tap_result(!ret && after == fds && !splats,
		   "seed %llu: %ld operations (%lu succeeded), %d kernel reports, fds %d -> %d",
		   (unsigned long long)seed, i, ok, splats, fds, after);
}

int main(void)
{
	long nseeds = env_long("KVM_IRQBYPASS_FUZZ_SEEDS", 8, 0);
	long nops = env_long("KVM_IRQBYPASS_FUZZ_OPS", 2000, 1);
	const char *replay = getenv("KVM_IRQBYPASS_SEED");
	u64 base = stress_init("fuzz_ioctls");
	int kmsg = kmsg_watch(), ret;
	struct edu_dev edu;
	long cap;
	long i, total;

	trace_ops = env_long("KVM_IRQBYPASS_FUZZ_TRACE", 0, 0) > 0;
	total = replay && *replay ? 1 : (long)ARRAY_SIZE(fixed_seeds) + nseeds;
	tap_plan(total + 2);
	cap = __kvm_check_cap(KVM_CAP_SPLIT_IRQCHIP_RESAMPLE);
	ret = edu_open(&edu);
	if (ret == -ENODEV) {
		tap_skip_rest("no edu device (1234:11e8) on this machine");
		return tap_finish();
	}
	if (!tap_result(!ret && !edu_enable_bus_master(&edu),
			"setup: edu open, %ld sequences of %ld operations",
			total, nops))
		goto out;
	/* Stock KVM answers 0: the cap's calls then all fail with EINVAL. */
	tap_diag("KVM_CAP_SPLIT_IRQCHIP_RESAMPLE: %ld", cap);
	for (i = 0; i < total; i++)
		run_seed(&edu, replay && *replay ? base :
			 i < (long)ARRAY_SIZE(fixed_seeds) ? fixed_seeds[i] :
			 base + i, nops, kmsg);
	tap_result(edu_check_alive(&edu) == 0, "the edu still answers after the fuzzing");
out:
	edu_close(&edu);
	return tap_finish();
}
