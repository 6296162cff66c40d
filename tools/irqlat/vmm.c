// SPDX-License-Identifier: GPL-2.0-only
/*
 * irqlat's VMM: one VM per run, the edu assigned through VFIO, its BAR0
 * mapped into the guest, its interrupt wired to the guest as the scenario
 * says, and the counters read around the guest's raise loop.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "irqlat.h"
#include "kvm_util_lite.h"
#include "proc_util.h"
#include "tap.h"
#include "vfio_util_lite.h"

#define EDU_BAR0_GPA	0xe0000000u
/* The in-kernel IOAPIC pin (and, with split irqchip, the GSI) for INTx. */
#define INTX_GSI	5
/* x86 MSI data: bit 15 level-triggered, bit 14 assert. */
#define MSI_DATA_LEVEL	0xc000
/* An edu register whose write raises nothing: the control run's target. */
#define EDU_REG_NOP	EDU_REG_LIVENESS

/* How the VMM re-enables the host INTx line after the guest's EOI. */
enum unmask_mode {
	UNMASK_NONE,		/* edge MSI, or KVM does it (resamplefd) */
	UNMASK_EVENTFD,		/* write vfio's unmask eventfd on EOI exit */
	UNMASK_IOCTL,		/* VFIO_DEVICE_SET_IRQS(UNMASK) on EOI exit */
};

struct run_ctx {
	enum irqlat_irq irq;
	enum irqlat_chip chip;
	const struct irqlat_opts *opts;
	struct edu_dev *edu;
	struct lite_vm *vm;
	struct irqlat_guest *g;
	bool control;

	int trigger, resample, stop;
	u32 gsi;
	bool irqfd, irqfd_resample, vfio_on;
	enum unmask_mode unmask;
	struct kvm_msi msg;	/* what the userspace path injects */

	/* I/O thread of the userspace-only scenarios */
	bool io;
	pthread_t io_tid;
	long long io_reads;	/* eventfd counts read */
	long long io_inject_err;

	/* --extra-irqfds: idle irqfds on EXTRA_GSI, their eventfds */
	int *extra_fds;
	unsigned int nr_extra;

	/* vCPU statistics (KVM_GET_STATS_FD) */
	int stats_fd;
	long long off_exits, off_halt_exits, off_irq_exits;

	/* run loop bookkeeping */
	long long uexits, eoi_exits;
	u32 last_delivered;
	struct timespec last_progress;
};

const char *irq_name(enum irqlat_irq irq)
{
	static const char * const names[] = { "msi", "intx" };

	return irq < NR_IRQ ? names[irq] : "?";
}

const char *chip_name(enum irqlat_chip chip)
{
	static const char * const names[] = {
		"kernel", "split-user", "split-userspace-only",
		"split-kernel", "split-kernel-noexit",
	};

	return chip < NR_CHIP ? names[chip] : "?";
}

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) / 1e9;
}

/*
 * Find a few counters in the vCPU's binary stats.  Offsets are file
 * offsets of the u64 values, -1 when a counter is missing.
 */
static void stats_open(struct run_ctx *c)
{
	struct kvm_stats_header hdr;
	struct kvm_stats_desc *d;
	size_t dsz;
	char *buf;
	u32 i;

	c->off_exits = -1;
	c->off_halt_exits = -1;
	c->off_irq_exits = -1;
	c->stats_fd = ioctl(c->vm->vcpu[0].fd, KVM_GET_STATS_FD, 0);
	if (c->stats_fd < 0) {
		tap_diag("KVM_GET_STATS_FD: %s (no VM exit counts)",
			 strerror(errno));
		return;
	}
	if (pread(c->stats_fd, &hdr, sizeof(hdr), 0) != sizeof(hdr))
		return;
	dsz = sizeof(*d) + hdr.name_size;
	buf = calloc(hdr.num_desc, dsz);
	if (!buf)
		return;
	if (pread(c->stats_fd, buf, hdr.num_desc * dsz, hdr.desc_offset) ==
	    (ssize_t)(hdr.num_desc * dsz)) {
		for (i = 0; i < hdr.num_desc; i++) {
			long long off;

			d = (struct kvm_stats_desc *)(buf + i * dsz);
			off = hdr.data_offset + d->offset;
			if (!strcmp(d->name, "exits"))
				c->off_exits = off;
			else if (!strcmp(d->name, "halt_exits"))
				c->off_halt_exits = off;
			else if (!strcmp(d->name, "irq_exits"))
				c->off_irq_exits = off;
		}
	}
	free(buf);
}

static long long stat_read(struct run_ctx *c, long long off)
{
	u64 v;

	if (c->stats_fd < 0 || off < 0 ||
	    pread(c->stats_fd, &v, sizeof(v), off) != sizeof(v))
		return -1;
	return (long long)v;
}

static int set_route(struct run_ctx *c, u32 gsi, const struct kvm_msi *msg)
{
	struct {
		struct kvm_irq_routing hdr;
		struct kvm_irq_routing_entry entry;
	} table = {
		.hdr.nr = 1,
		.entry = {
			.gsi = gsi,
			.type = KVM_IRQ_ROUTING_MSI,
			.u.msi.address_lo = msg->address_lo,
			.u.msi.data = msg->data,
		},
	};

	if (ioctl(c->vm->vm_fd, KVM_SET_GSI_ROUTING, &table) < 0) {
		tap_diag("KVM_SET_GSI_ROUTING(gsi %u): %s", gsi,
			 strerror(errno));
		return -errno;
	}
	return 0;
}

static int pin_thread(pthread_t t, int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(t, sizeof(set), &set);
}

static void *io_thread(void *arg)
{
	struct run_ctx *c = arg;
	struct pollfd pfd[2] = {
		{ .fd = c->trigger, .events = POLLIN },
		{ .fd = c->stop, .events = POLLIN },
	};
	u64 v;

	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		if (read(c->trigger, &v, sizeof(v)) != sizeof(v))
			continue;
		__atomic_add_fetch(&c->io_reads, v, __ATOMIC_RELAXED);
		if (ioctl(c->vm->vm_fd, KVM_SIGNAL_MSI, &c->msg) < 0)
			__atomic_add_fetch(&c->io_inject_err, 1,
					   __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Is the kit's split-irqchip resample capability there? */
static bool have_split_resample(int kvm_fd)
{
	return ioctl(kvm_fd, KVM_CHECK_EXTENSION,
		     IRQLAT_CAP_SPLIT_RESAMPLE) > 0;
}

static int vfio_intx_wire(struct run_ctx *c, bool unmask_fd)
{
	int ret;

	/* vfio takes the unmask eventfd only once INTx is enabled. */
	ret = vfio_set_irqs(c->edu->device_fd, VFIO_PCI_INTX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &c->trigger);
	if (ret) {
		tap_diag("VFIO_DEVICE_SET_IRQS(INTx trigger): %s",
			 strerror(-ret));
		return ret;
	}
	c->vfio_on = true;
	if (!unmask_fd)
		return 0;
	ret = vfio_set_irqs(c->edu->device_fd, VFIO_PCI_INTX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_UNMASK, 0, 1, &c->resample);
	if (ret)
		tap_diag("VFIO_DEVICE_SET_IRQS(INTx unmask eventfd): %s",
			 strerror(-ret));
	return ret;
}

static int irqfd(struct run_ctx *c, bool resample)
{
	int ret;

	ret = __vm_irqfd(c->vm, c->trigger, c->gsi,
			 resample ? KVM_IRQFD_FLAG_RESAMPLE : 0,
			 resample ? c->resample : 0);
	if (ret) {
		tap_diag("KVM_IRQFD(gsi %u%s): %s", c->gsi,
			 resample ? ", resample" : "", strerror(-ret));
		return ret;
	}
	c->irqfd = true;
	c->irqfd_resample = resample;
	return 0;
}

/*
 * --extra-irqfds: N irqfds that nothing signals, on an IOAPIC pin no
 * scenario uses, so that a VM has as many irqfds as a large guest; what
 * KVM does per irqfd on the interrupt's path shows in the latency.  The
 * eventfds stay open: closing one would deassign its irqfd (EPOLLHUP).
 */
#define EXTRA_GSI	10

static int extra_irqfds(struct run_ctx *c)
{
	unsigned int n = c->opts->extra_irqfds;
	struct rlimit rl;
	int ret;

	if (!n)
		return 0;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < n + 256) {
		rl.rlim_cur = n + 256;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	c->extra_fds = calloc(n, sizeof(*c->extra_fds));
	if (!c->extra_fds)
		return -ENOMEM;
	for (c->nr_extra = 0; c->nr_extra < n; c->nr_extra++) {
		int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

		if (fd < 0) {
			ret = -errno;
			goto err;
		}
		ret = __vm_irqfd(c->vm, fd, EXTRA_GSI, 0, 0);
		if (ret) {
			close(fd);
			goto err;
		}
		c->extra_fds[c->nr_extra] = fd;
	}
	return 0;
err:
	tap_diag("extra irqfd %u of %u: %s", c->nr_extra + 1, n, strerror(-ret));
	return ret;
}

static void extra_irqfds_close(struct run_ctx *c)
{
	while (c->nr_extra)
		close(c->extra_fds[--c->nr_extra]);
	free(c->extra_fds);
	c->extra_fds = NULL;
}

/* Connect the edu's interrupt to the guest the way the scenario says. */
static int wire(struct run_ctx *c)
{
	struct kvm_enable_cap cap = { .cap = IRQLAT_CAP_SPLIT_RESAMPLE };
	int ret;

	c->msg.address_lo = LAPIC_BASE;	/* fixed, physical, APIC ID 0 */
	c->msg.data = IRQLAT_VECTOR;
	if (c->irq == IRQ_MSI) {
		c->gsi = TEST_MSI_GSI;
		if (c->chip != CHIP_SPLIT_USERSPACE_ONLY) {
			ret = set_route(c, c->gsi, &c->msg);
			if (!ret)
				ret = irqfd(c, false);
			if (ret)
				return ret;
		}
		ret = vfio_set_irqs(c->edu->device_fd, VFIO_PCI_MSI_IRQ_INDEX,
				    VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1,
				    &c->trigger);
		if (ret) {
			tap_diag("VFIO_DEVICE_SET_IRQS(MSI): %s",
				 strerror(-ret));
			return ret;
		}
		c->vfio_on = true;
		c->io = c->chip == CHIP_SPLIT_USERSPACE_ONLY;
		return 0;
	}

	c->gsi = INTX_GSI;
	if (c->chip == CHIP_KERNEL) {
		/* KVM's default routing: GSI 5 is IOAPIC pin 5 (and the PIC). */
		ret = irqfd(c, true);
		return ret ? ret : vfio_intx_wire(c, true);
	}

	/* Split irqchip: the pin is a level MSI route, as QEMU makes it. */
	c->msg.data |= MSI_DATA_LEVEL;
	if (c->chip == CHIP_SPLIT_KERNEL ||
	    c->chip == CHIP_SPLIT_KERNEL_NOEXIT) {
		if (c->chip == CHIP_SPLIT_KERNEL_NOEXIT)
			cap.args[0] = IRQLAT_SPLIT_RESAMPLE_NO_EOI_EXIT;
		if (ioctl(c->vm->vm_fd, KVM_ENABLE_CAP, &cap) < 0) {
			tap_diag("KVM_ENABLE_CAP(split resample 0x%x): %s",
				 IRQLAT_CAP_SPLIT_RESAMPLE, strerror(errno));
			return -errno;
		}
	}
	ret = set_route(c, c->gsi, &c->msg);
	if (ret)
		return ret;
	switch (c->chip) {
	case CHIP_SPLIT_USER:
		c->unmask = UNMASK_EVENTFD;
		ret = irqfd(c, false);
		return ret ? ret : vfio_intx_wire(c, true);
	case CHIP_SPLIT_USERSPACE_ONLY:
		c->unmask = UNMASK_IOCTL;
		c->io = true;
		return vfio_intx_wire(c, false);
	case CHIP_SPLIT_KERNEL:
	case CHIP_SPLIT_KERNEL_NOEXIT:
		ret = irqfd(c, true);
		return ret ? ret : vfio_intx_wire(c, true);
	default:
		return -EINVAL;
	}
}

static void unwire(struct run_ctx *c)
{
	u32 index = c->irq == IRQ_MSI ? VFIO_PCI_MSI_IRQ_INDEX :
					VFIO_PCI_INTX_IRQ_INDEX;
	u64 one = 1;

	if (c->io) {
		if (write(c->stop, &one, sizeof(one)) == sizeof(one))
			pthread_join(c->io_tid, NULL);
		c->io = false;
		eventfd_drain(c->stop, NULL);
	}
	/* Lower the line first, so the host IRQ stays quiet. */
	edu_write(c->edu, EDU_REG_IRQ_ACK, ~0u);
	if (c->vfio_on)
		vfio_set_irqs(c->edu->device_fd, index,
			      VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	c->vfio_on = false;
	if (c->irqfd)
		__vm_irqfd(c->vm, c->trigger, c->gsi, KVM_IRQFD_FLAG_DEASSIGN,
			   0);
	c->irqfd = false;
}

/* The guest's EOI of a level vector routed through a split IOAPIC pin. */
static int on_eoi_exit(struct run_ctx *c, u8 vector)
{
	u64 one = 1;
	int ret;

	c->eoi_exits++;
	if (vector != IRQLAT_VECTOR)
		return 0;
	switch (c->unmask) {
	case UNMASK_EVENTFD:
		if (write(c->resample, &one, sizeof(one)) != sizeof(one))
			return -errno;
		return 0;
	case UNMASK_IOCTL:
		ret = vfio_set_irqs(c->edu->device_fd, VFIO_PCI_INTX_IRQ_INDEX,
				    VFIO_IRQ_SET_ACTION_UNMASK, 0, 1, NULL);
		if (ret)
			tap_diag("VFIO_DEVICE_SET_IRQS(INTx unmask): %s",
				 strerror(-ret));
		return ret;
	default:
		return 0;
	}
}

/*
 * The watchdog: SIGALRM sets immediate_exit, so KVM_RUN comes back with
 * EINTR wherever the signal lands (even while the vCPU is in HLT).  Those
 * returns are the benchmark's own and are not counted as exits.
 */
static struct kvm_run *alarm_run;

static void on_alarm(int sig)
{
	struct kvm_run *run = READ_ONCE(alarm_run);

	(void)sig;
	if (run)
		WRITE_ONCE(run->immediate_exit, 1);
}

static void alarm_arm(unsigned int ms)
{
	struct itimerval it = { 0 };

	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (ms % 1000) * 1000;
	it.it_interval = it.it_value;
	setitimer(ITIMER_REAL, &it, NULL);
}

static int io_exit(struct run_ctx *c, u16 *port, u32 *value)
{
	struct kvm_run *run = c->vm->vcpu[0].run;

	*value = 0;
	memcpy(value, (u8 *)run + run->io.data_offset,
	       run->io.size < 4 ? run->io.size : 4);
	*port = run->io.port;
	switch (run->io.port) {
	case GUEST_PORT_READY:
	case GUEST_PORT_DONE:
		return 0;
	case GUEST_PORT_FAULT:
		tap_diag("guest exception, vector %u", *value);
		return -EFAULT;
	case GUEST_PORT_UNEXPECTED:
		tap_diag("guest got unexpected vector 0x%x (0: spurious)",
			 *value);
		return -EPROTO;
	}
	tap_diag("guest wrote unknown port 0x%x", run->io.port);
	return -EPROTO;
}

/*
 * Run the vCPU until the guest writes port want.  With want == 0, run for
 * opts->quiet_ms and return 0.  -ETIMEDOUT when the guest stopped making
 * progress for opts->stall_ms.
 */
static int vcpu_loop(struct run_ctx *c, u16 want)
{
	struct kvm_run *run = c->vm->vcpu[0].run;
	struct timespec now, start;
	unsigned int tick;
	u16 port;
	u32 value;
	int ret;

	tick = want ? 500 : c->opts->quiet_ms;
	clock_gettime(CLOCK_MONOTONIC, &start);
	c->last_progress = start;
	c->last_delivered = READ_ONCE(c->g->delivered);
	WRITE_ONCE(alarm_run, run);
	alarm_arm(tick);
	for (;;) {
		WRITE_ONCE(run->immediate_exit, 0);
		ret = ioctl(c->vm->vcpu[0].fd, KVM_RUN, 0);
		if (ret < 0 && (errno == EINTR || errno == EAGAIN)) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (!want && ts_diff(&start, &now) * 1000 >=
			    c->opts->quiet_ms) {
				ret = 0;
				break;
			}
			if (READ_ONCE(c->g->delivered) != c->last_delivered) {
				c->last_delivered = READ_ONCE(c->g->delivered);
				c->last_progress = now;
			} else if (want && c->opts->stall_ms <=
				   ts_diff(&c->last_progress, &now) * 1000) {
				ret = -ETIMEDOUT;
				break;
			}
			continue;
		}
		if (ret < 0) {
			ret = -errno;
			tap_diag("KVM_RUN: %s", strerror(errno));
			break;
		}
		c->uexits++;
		if (run->exit_reason == KVM_EXIT_IOAPIC_EOI) {
			ret = on_eoi_exit(c, run->eoi.vector);
			if (ret)
				break;
			continue;
		}
		if (run->exit_reason == KVM_EXIT_INTR)
			continue;
		if (run->exit_reason != KVM_EXIT_IO ||
		    run->io.direction != KVM_EXIT_IO_OUT) {
			tap_diag("unexpected exit reason %u", run->exit_reason);
			ret = -EPROTO;
			break;
		}
		ret = io_exit(c, &port, &value);
		if (ret)
			break;
		if (want && port == want)
			break;
		tap_diag("guest wrote port 0x%x (value %u) unexpectedly",
			 port, value);
		ret = -EPROTO;
		break;
	}
	alarm_arm(0);
	WRITE_ONCE(alarm_run, NULL);
	WRITE_ONCE(run->immediate_exit, 0);
	return ret;
}

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted samples. */
static u32 percentile(const u32 *s, u32 n, unsigned int pct)
{
	u64 rank = ((u64)n * pct + 99) / 100;

	return s[rank ? rank - 1 : 0];
}

static void latency(struct run_ctx *c, struct irqlat_result *res)
{
	u32 n = c->g->delivered, *s;

	if (!n)
		return;
	s = malloc(n * sizeof(*s));
	if (!s)
		return;
	memcpy(s, c->vm->ram + IRQLAT_SAMPLES_GPA, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_u32);
	res->lat_min_cyc = s[0];
	res->lat_max_cyc = s[n - 1];
	res->lat_med_cyc = percentile(s, n, 50);
	res->lat_p99_cyc = percentile(s, n, 99);
	if (res->tsc_khz) {
		res->lat_med_ns = res->lat_med_cyc * 1e6 / res->tsc_khz;
		res->lat_p99_ns = res->lat_p99_cyc * 1e6 / res->tsc_khz;
	}
	res->samples = s;
	res->nr_samples = n;
}

/* One pass of the guest loop: the measured one, or the control. */
static int one_run(struct run_ctx *c, struct irqlat_result *res)
{
	const char *vfio_irq = c->irq == IRQ_MSI ? "vfio-msi[" : "vfio-intx(";
	enum irqchip_mode mode = c->chip == CHIP_KERNEL ? IRQCHIP_KERNEL :
							   IRQCHIP_SPLIT;
	struct guest_params params = { .vector = IRQLAT_VECTOR };
	long long ctxt0, vcpu0, exits0, halt0, irqx0, host_irqs0;
	u32 doubled0;
	struct timespec t0, t1;
	sigset_t set, old;
	int ret, tsc_khz;

	/* Nothing left over from the previous run. */
	eventfd_drain(c->trigger, NULL);
	eventfd_drain(c->resample, NULL);
	c->uexits = 0;
	c->eoi_exits = 0;
	c->io_reads = 0;
	c->io_inject_err = 0;
	c->unmask = UNMASK_NONE;
	c->stats_fd = -1;
	c->vm = __vm_create(mode);
	if (!c->vm)
		return -EIO;
	vm_set_guest(c->vm, irqlat_entry, irqlat_isr);
	ret = vm_add_memory(c->vm, EDU_BAR0_GPA, c->edu->bar0,
			    c->edu->bar0_size);
	if (!ret)
		ret = vm_start_guest(c->vm, &params);
	if (ret)
		goto out;

	c->g = (struct irqlat_guest *)(c->vm->ram + IRQLAT_GPA);
	memset(c->g, 0, sizeof(*c->g));
	c->g->flags = c->control ? IRQLAT_F_CONTROL : 0;
	if (c->opts->spin)
		c->g->flags |= IRQLAT_F_SPIN;
	if (c->irq == IRQ_INTX && c->chip == CHIP_KERNEL) {
		c->g->flags |= IRQLAT_F_IOAPIC | IRQLAT_F_LEVEL;
		c->g->pin = INTX_GSI;
	}
	c->g->raise_addr = EDU_BAR0_GPA +
			   (c->control ? EDU_REG_NOP : EDU_REG_IRQ_RAISE);
	c->g->raise_value = c->control ? 0 : 1;
	c->g->ack_addr = EDU_BAR0_GPA + EDU_REG_IRQ_ACK;
	c->g->ack_value = 1;
	c->g->target = c->opts->n;

	stats_open(c);
	tsc_khz = ioctl(c->vm->vcpu[0].fd, KVM_GET_TSC_KHZ, 0);
	res->tsc_khz = tsc_khz > 0 ? tsc_khz : 0;

	ret = extra_irqfds(c);
	if (!ret)
		ret = wire(c);
	if (ret)
		goto out;
	if (c->io) {
		/* Only the vCPU thread takes the watchdog's SIGALRM. */
		sigemptyset(&set);
		sigaddset(&set, SIGALRM);
		pthread_sigmask(SIG_BLOCK, &set, &old);
		ret = -pthread_create(&c->io_tid, NULL, io_thread, c);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (ret) {
			c->io = false;
			goto out;
		}
		if (pin_thread(c->io_tid, c->opts->io_cpu))
			tap_diag("I/O thread: cannot pin to CPU %d",
				 c->opts->io_cpu);
	}
	proc_irq_pin(vfio_irq, c->edu->bdf, c->opts->irq_cpu);

	ret = vcpu_loop(c, GUEST_PORT_READY);
	if (ret)
		goto out;

	c->uexits = 0;
	c->eoi_exits = 0;
	doubled0 = READ_ONCE(c->g->doubled);
	host_irqs0 = proc_interrupts_count(vfio_irq, c->edu->bdf);
	exits0 = stat_read(c, c->off_exits);
	halt0 = stat_read(c, c->off_halt_exits);
	irqx0 = stat_read(c, c->off_irq_exits);
	vcpu0 = thread_ctxsw();
	ctxt0 = proc_stat_ctxt();
	clock_gettime(CLOCK_MONOTONIC, &t0);

	ret = vcpu_loop(c, GUEST_PORT_DONE);

	clock_gettime(CLOCK_MONOTONIC, &t1);
	ctxt0 = proc_stat_ctxt() - ctxt0;
	vcpu0 = thread_ctxsw() - vcpu0;
	exits0 = exits0 < 0 ? -1 : stat_read(c, c->off_exits) - exits0;
	halt0 = halt0 < 0 ? -1 : stat_read(c, c->off_halt_exits) - halt0;
	irqx0 = irqx0 < 0 ? -1 : stat_read(c, c->off_irq_exits) - irqx0;
	/* The final DONE write is the loop's end, not an interrupt's exit. */
	if (!ret)
		c->uexits--;

	if (c->control) {
		res->ctl_wall_s = ts_diff(&t0, &t1);
		res->ctl_ctxt = ctxt0;
		res->ctl_vcpu_ctxsw = vcpu0;
		res->ctl_vmexits = exits0;
		res->ctl_uexits = c->uexits;
		res->has_control = !ret;
		goto out;
	}

	res->wall_s = ts_diff(&t0, &t1);
	res->ctxt = ctxt0;
	res->vcpu_ctxsw = vcpu0;
	res->vmexits = exits0;
	res->halt_exits = halt0;
	res->irq_exits = irqx0;
	res->uexits = c->uexits;
	res->eoi_exits = c->eoi_exits;
	if (ret == -ETIMEDOUT)
		tap_diag("%s/%s: no interrupt for %u ms after %u of %u raises",
			 irq_name(c->irq), chip_name(c->chip),
			 c->opts->stall_ms, c->g->raised, c->opts->n);
	else if (ret)
		goto out;
	/* A late or repeated interrupt after the last raise still counts. */
	if (c->opts->quiet_ms && !ret)
		ret = vcpu_loop(c, 0);
	if (ret && ret != -ETIMEDOUT)
		goto out;
	ret = 0;

	res->raised = c->g->raised;
	res->delivered = c->g->delivered;
	res->doubled = c->g->doubled;
	res->stray = c->g->stray;
	res->stray_eip = c->g->last_eip;
	res->lost = res->raised > res->delivered ?
		    res->raised - res->delivered : 0;
	if (c->chip == CHIP_SPLIT_USERSPACE_ONLY)
		res->signalled = __atomic_load_n(&c->io_reads,
						 __ATOMIC_RELAXED);
	else if (host_irqs0 >= 0)
		res->signalled = proc_interrupts_count(vfio_irq, c->edu->bdf) -
				 host_irqs0;
	if (c->io_inject_err)
		tap_diag("KVM_SIGNAL_MSI failed %lld times", c->io_inject_err);
	/*
	 * Where a doubled interrupt came: before the counted window (setup,
	 * the guest's READY) or in it, against the host's handler runs.
	 */
	if (res->doubled)
		tap_diag("doubled: %u before the window, %u in it (host irqs: %lld; last at 0x%x)",
			 doubled0, res->doubled - doubled0, res->signalled,
			 c->g->last_eip);
	latency(c, res);
out:
	unwire(c);
	if (c->stats_fd >= 0)
		close(c->stats_fd);
	c->stats_fd = -1;
	/* Drop the memslot over the BAR before anyone unmaps the BAR. */
	vm_destroy(c->vm);
	c->vm = NULL;
	extra_irqfds_close(c);
	return ret;
}

int irqlat_run(enum irqlat_irq irq, enum irqlat_chip chip,
	       const struct irqlat_opts *opts, struct irqlat_result *res,
	       char *why, size_t why_len)
{
	struct run_ctx c = {
		.irq = irq, .chip = chip, .opts = opts,
		.trigger = -1, .resample = -1, .stop = -1, .stats_fd = -1,
	};
	static bool handler;
	struct edu_dev edu;
	int kvm_fd, ret;

	memset(res, 0, sizeof(*res));
	res->irq = irq;
	res->chip = chip;
	res->n = opts->n;
	res->signalled = -1;
	res->vmexits = -1;
	res->ctl_vmexits = -1;

	if (irq == IRQ_MSI && (chip == CHIP_SPLIT_KERNEL ||
			       chip == CHIP_SPLIT_KERNEL_NOEXIT)) {
		snprintf(why, why_len, "resampling is for level INTx only");
		return -EINVAL;
	}
	kvm_fd = kvm_open_or_bail();
	ret = have_split_resample(kvm_fd);
	close(kvm_fd);
	if (!ret && (chip == CHIP_SPLIT_KERNEL ||
		     chip == CHIP_SPLIT_KERNEL_NOEXIT)) {
		snprintf(why, why_len,
			 "not available on these modules (KVM_CHECK_EXTENSION(0x%x) = 0)",
			 IRQLAT_CAP_SPLIT_RESAMPLE);
		return -EOPNOTSUPP;
	}
	if (!handler) {
		struct sigaction sa = { .sa_handler = on_alarm };

		/* No SA_RESTART: KVM_RUN must come back with EINTR. */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		handler = true;
	}

	if (pin_thread(pthread_self(), opts->vcpu_cpu))
		tap_diag("vCPU thread: cannot pin to CPU %d", opts->vcpu_cpu);
	ret = edu_open(&edu);
	if (ret == -ENODEV) {
		snprintf(why, why_len, "no edu device (1234:11e8)");
		return -EOPNOTSUPP;
	}
	if (ret)
		return ret;
	c.edu = &edu;
	ret = edu_check_alive(&edu);
	if (!ret)
		ret = edu_enable_bus_master(&edu);
	if (ret)
		goto out;
	c.trigger = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c.resample = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c.stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c.trigger < 0 || c.resample < 0 || c.stop < 0) {
		ret = -errno;
		goto out;
	}

	ret = one_run(&c, res);
	if (!ret && opts->control) {
		c.control = true;
		ret = one_run(&c, res);
	}
out:
	if (c.trigger >= 0)
		close(c.trigger);
	if (c.resample >= 0)
		close(c.resample);
	if (c.stop >= 0)
		close(c.stop);
	edu_close(&edu);
	return ret;
}
