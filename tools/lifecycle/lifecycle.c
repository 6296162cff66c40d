// SPDX-License-Identifier: GPL-2.0-only
/*
 * lifecycle: the cost of setting up and tearing down interrupt pairings
 * (KVM irqfd consumer <-> VFIO producer), and whether one VM's churn
 * disturbs another VM's interrupts.  Runs inside the kit's testbed; see
 * Documentation/bench-lifecycle.rst.
 *
 * Cases (one CSV row each per vector count):
 *   irqfd         KVM_IRQFD assign + deassign of N irqfds (one op = one
 *                 assign and one deassign); eventfd #0 is the edu's MSI
 *                 trigger (VFIO_DEVICE_SET_IRQS), so its irqfd pairs with
 *                 the vfio producer; the others are plain eventfds.
 *   trigger-swap  VFIO_DEVICE_SET_IRQS swapping MSI vector 0's trigger
 *                 between two eventfds that both have irqfds (what QEMU
 *                 does on a guest's MSI-X mask toggle: each swap
 *                 unregisters and re-registers the vfio producer), while
 *                 a second VM on a second edu measures its MSI latency
 *                 with irqlat's code (tools/irqlat/vmm.c).
 *   vm            KVM_CREATE_VM, vCPU, N MSI routes, N irqfds, close.
 *
 * Times are CLOCK_MONOTONIC around the loop; IPIs are the CAL and TLB
 * lines of /proc/interrupts (sum over CPUs) over the loop.  With --busy a
 * ninth column, busy_ns_per_op: the CPU time that tasks ran over the loop
 * (/proc/schedstat, all CPUs), i.e. the work without the idle waits for
 * ticks and grace periods that make up most of a vm op.  A benchmark:
 * nothing is judged, but every ioctl is checked and any failure exits 2.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "irqlat.h"
#include "kvm_util_lite.h"
#include "tap.h"
#include "vfio_util_lite.h"

#define CSV_HEADER \
	"case,vectors,kernel,modules,ops,ns_per_op,ipis_per_op,other_vm_p99_ns"
#define OTHER_HEADER \
	"kernel,modules,quiet_p99_ns,quiet_med_ns,churn_p99_ns,churn_med_ns,churn_swaps"

#define FIRST_GSI	TEST_MSI_GSI
#define MAX_VECTORS	2048
#define MAX_EDUS	4
/* The churn gives up if the other VM has not finished by then. */
#define SWAP_TIMEOUT_MS	120000
/* Swaps at least, however soon the other VM is done. */
#define SWAP_MIN_OPS	16
/* VMs whose own times the vm case keeps (its distribution line). */
#define VM_TIMES	4096

struct opts {
	long min_ops;		/* at least this many ops per row ... */
	long min_ms;		/* ... and at least this long ... */
	long max_ms;		/* ... but stop after the round that ends here */
	long vm_min_ops;	/* the vm case's min_ops (ops are whole VMs) */
	unsigned int other_n;	/* the other VM's interrupts */
	char kernel[64], modules[64];
	bool verbose;
};

struct row {
	const char *name;
	unsigned int vectors;
	long ops;
	double ns_per_op, ipis_per_op, busy_ns_per_op;
	double other_p99_ns;	/* < 0: not measured */
};

static bool verbose;
static bool busy_col;

/* The selftest libraries report through these; diagnostics go to stderr. */
void tap_diag_fmt(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	fprintf(stderr, "lifecycle: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void tap_bail_fmt(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lifecycle: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lifecycle: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static double now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		fail("clock_gettime: %s", strerror(errno));
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * Sum over CPUs of the time tasks ran (ns): the seventh field of
 * /proc/schedstat's cpu lines (rq_cpu_time; CONFIG_SCHED_INFO).  vCPU
 * threads, kworkers and RCU kthreads count; idle does not.
 */
static long long busy_ns(void)
{
	long long total = 0, f[9];
	char line[512];
	bool seen = false;
	FILE *fp;

	fp = fopen("/proc/schedstat", "re");
	if (!fp)
		fail("/proc/schedstat: %s", strerror(errno));
	while (fgets(line, sizeof(line), fp)) {
		if (strncmp(line, "cpu", 3))
			continue;
		if (sscanf(line, "%*s %lld %lld %lld %lld %lld %lld %lld %lld %lld",
			   &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6],
			   &f[7], &f[8]) != 9)
			fail("/proc/schedstat: unexpected cpu line: %s", line);
		total += f[6];
		seen = true;
	}
	fclose(fp);
	if (!seen)
		fail("/proc/schedstat has no cpu line");
	return total;
}

/* Sum over CPUs of the CAL (function call) and TLB (shootdown) IPIs. */
static long long ipis(void)
{
	long long total = 0;
	char line[4096];
	bool seen = false;
	FILE *f;

	f = fopen("/proc/interrupts", "re");
	if (!f)
		fail("/proc/interrupts: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		while (*p == ' ')
			p++;
		if (strncmp(p, "CAL:", 4) && strncmp(p, "TLB:", 4))
			continue;
		seen = true;
		for (p += 4; ; p = end) {
			long long v = strtoll(p, &end, 10);

			if (end == p)
				break;
			total += v;
		}
	}
	fclose(f);
	if (!seen)
		fail("/proc/interrupts has no CAL or TLB line");
	return total;
}

static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fail("sched_setaffinity(CPU %d): %s", cpu, strerror(errno));
}

/* The edus' PCI addresses, sorted: the first is VM 1's, the second VM 2's. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

static unsigned int find_edus(char bdf[][32])
{
	unsigned long vendor, device;
	char path[320], buf[32];
	unsigned int n = 0;
	struct dirent *de;
	FILE *f;
	DIR *dir;

	dir = opendir("/sys/bus/pci/devices");
	if (!dir)
		fail("/sys/bus/pci/devices: %s", strerror(errno));
	while ((de = readdir(dir)) && n < MAX_EDUS) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= 32)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor",
			 de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		vendor = fgets(buf, sizeof(buf), f) ? strtoul(buf, NULL, 16) : 0;
		fclose(f);
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device",
			 de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		device = fgets(buf, sizeof(buf), f) ? strtoul(buf, NULL, 16) : 0;
		fclose(f);
		if (vendor == EDU_VENDOR && device == EDU_DEVICE)
			snprintf(bdf[n++], 32, "%s", de->d_name);
	}
	closedir(dir);
	qsort(bdf, n, 32, cmp_str);
	return n;
}

static void open_edu(struct edu_dev *edu, const char *bdf)
{
	int ret;

	setenv("EDU_BDF", bdf, 1);
	ret = edu_open(edu);
	if (ret)
		fail("edu %s: open: %s", bdf, strerror(-ret));
	ret = edu_check_alive(edu);
	if (!ret)
		ret = edu_enable_bus_master(edu);
	if (ret)
		fail("edu %s: %s", bdf, strerror(-ret));
}

static void msi_trigger(struct edu_dev *edu, int fd)
{
	int ret = vfio_set_irqs(edu->device_fd, VFIO_PCI_MSI_IRQ_INDEX,
				VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &fd);

	if (ret)
		fail("VFIO_DEVICE_SET_IRQS(MSI trigger = eventfd %d): %s", fd,
		     strerror(-ret));
}

static void msi_off(struct edu_dev *edu)
{
	int ret = vfio_set_irqs(edu->device_fd, VFIO_PCI_MSI_IRQ_INDEX,
				VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);

	if (ret)
		fail("VFIO_DEVICE_SET_IRQS(MSI off): %s", strerror(-ret));
}

static int *eventfds(unsigned int n)
{
	int *fd = calloc(n, sizeof(*fd));
	unsigned int i;

	if (!fd)
		fail("out of memory");
	for (i = 0; i < n; i++) {
		fd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (fd[i] < 0)
			fail("eventfd #%u: %s", i, strerror(errno));
	}
	return fd;
}

static void close_fds(int *fd, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		close(fd[i]);
	free(fd);
}

static struct lite_vm *new_vm(void)
{
	struct lite_vm *vm = __vm_create(IRQCHIP_KERNEL);

	if (!vm)
		fail("creating a VM failed (run with -v for the cause)");
	return vm;
}

/* GSIs FIRST_GSI.. FIRST_GSI + n - 1, each an MSI route to APIC ID 0. */
static void set_routes(struct lite_vm *vm, unsigned int n)
{
	struct kvm_irq_routing *r;
	unsigned int i;

	r = calloc(1, sizeof(*r) + n * sizeof(r->entries[0]));
	if (!r)
		fail("out of memory");
	r->nr = n;
	for (i = 0; i < n; i++) {
		r->entries[i].gsi = FIRST_GSI + i;
		r->entries[i].type = KVM_IRQ_ROUTING_MSI;
		r->entries[i].u.msi.address_lo = LAPIC_BASE;
		r->entries[i].u.msi.data = 0x40 + i % 0x80;
	}
	if (ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, r) < 0)
		fail("KVM_SET_GSI_ROUTING(%u MSI routes): %s", n,
		     strerror(errno));
	free(r);
}

static void irqfd(struct lite_vm *vm, int fd, unsigned int i, bool assign)
{
	int ret = __vm_irqfd(vm, fd, FIRST_GSI + i,
			   assign ? 0 : KVM_IRQFD_FLAG_DEASSIGN, 0);

	if (ret)
		fail("KVM_IRQFD(%s eventfd #%u, gsi %u): %s",
		     assign ? "assign" : "deassign", i, FIRST_GSI + i,
		     strerror(-ret));
}

/*
 * The kit's manager lists its tokens in debugfs; count the paired ones
 * (-1 when there is no such file: stock modules).  A diagnostic only.
 */
static int paired_tokens(void)
{
	char line[256];
	int n = 0;
	FILE *f;

	f = fopen("/sys/kernel/debug/irqbypass/tokens", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned int p, c, paired;

		if (sscanf(line, "%*s %u %u %u", &p, &c, &paired) == 3 &&
		    paired)
			n++;
	}
	fclose(f);
	return n;
}

/* Should another round run?  ops and elapsed so far. */
static bool more(const struct opts *o, long min_ops, long ops, double ns)
{
	if (!ops)
		return true;
	if (ns >= o->max_ms * 1e6)
		return false;
	return ops < min_ops || ns < o->min_ms * 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The counters at the start of a loop. */
struct mark {
	long long ipis, busy;
};

static struct mark mark(void)
{
	return (struct mark){ .ipis = ipis(), .busy = busy_ns() };
}

static void finish(struct row *r, long ops, double ns, struct mark m0)
{
	r->ops = ops;
	r->ns_per_op = ns / ops;
	r->ipis_per_op = (double)(ipis() - m0.ipis) / ops;
	r->busy_ns_per_op = (double)(busy_ns() - m0.busy) / ops;
}

static void case_irqfd(const struct opts *o, struct edu_dev *edu,
		       unsigned int n, struct row *r)
{
	struct lite_vm *vm = new_vm();
	int *fd = eventfds(n);
	struct mark m0;
	double t0, ns;
	unsigned int i;
	long ops = 0;
	int paired;

	set_routes(vm, n);
	msi_trigger(edu, fd[0]);
	/* Warm-up round, which also tells whether #0 pairs. */
	for (i = 0; i < n; i++)
		irqfd(vm, fd[i], i, true);
	paired = paired_tokens();
	for (i = 0; i < n; i++)
		irqfd(vm, fd[i], i, false);

	m0 = mark();
	t0 = now_ns();
	do {
		for (i = 0; i < n; i++)
			irqfd(vm, fd[i], i, true);
		for (i = 0; i < n; i++)
			irqfd(vm, fd[i], i, false);
		ops += n;
		ns = now_ns() - t0;
	} while (more(o, o->min_ops, ops, ns));
	finish(r, ops, ns, m0);
	printf("# irqfd/%u: %ld ops in %.1f ms, paired tokens while assigned: %d%s\n",
	       n, ops, ns / 1e6, paired, paired < 0 ? " (no debugfs file)" : "");
	msi_off(edu);
	vm_destroy(vm);
	close_fds(fd, n);
}

static void case_vm(const struct opts *o, struct edu_dev *edu,
		    unsigned int n, struct row *r)
{
	struct guest_params params = { .vector = IRQLAT_VECTOR };
	int *fd = eventfds(n);
	struct lite_vm *vm;
	struct mark m0 = { 0 };
	double ns = 0;
	unsigned int i;
	long ops = 0;
	bool warm = false;
	static double op_ns[VM_TIMES];
	double t_op = 0, op;
	unsigned int dither = 1;

	msi_trigger(edu, fd[0]);
	for (;;) {
		/*
		 * Most of a VM's teardown is an rcu_barrier() that ends on
		 * a timer tick.  Without this pause each VM would start at
		 * the same point of the tick as the last one ended, so a
		 * few hundred ns more or less of work before the barrier
		 * could move every VM's barrier by a tick, the same way.
		 * A pause of 0-4 ms (one tick at HZ=250), the same
		 * sequence for every module set and not timed, starts each
		 * VM at an unrelated point of the tick.
		 */
		dither = dither * 1103515245 + 12345;
		usleep((dither >> 8) % 4000);
		t_op = now_ns();
		vm = new_vm();
		vm_set_guest(vm, irqlat_entry, irqlat_isr);
		if (vm_start_guest(vm, &params))
			fail("creating the vCPU failed (run with -v)");
		set_routes(vm, n);
		for (i = 0; i < n; i++)
			irqfd(vm, fd[i], i, true);
		vm_destroy(vm);
		op = now_ns() - t_op;
		/* The first VM is a warm-up, not timed. */
		if (!warm) {
			warm = true;
			m0 = mark();
			continue;
		}
		/* ns: the VMs' own times, without the pauses between them. */
		ns += op;
		if (ops < VM_TIMES)
			op_ns[ops] = op;
		ops++;
		if (!more(o, o->vm_min_ops, ops, ns))
			break;
	}
	finish(r, ops, ns, m0);
	printf("# vm/%u: %ld VMs in %.1f ms\n", n, ops, ns / 1e6);
	{
		long k, m = ops < VM_TIMES ? ops : VM_TIMES;

		qsort(op_ns, m, sizeof(op_ns[0]), cmp_double);
		printf("# vm/%u: per VM min %.2f p25 %.2f median %.2f p75 %.2f max %.2f ms:",
		       n, op_ns[0] / 1e6, op_ns[m / 4] / 1e6, op_ns[m / 2] / 1e6,
		       op_ns[3 * m / 4] / 1e6, op_ns[m - 1] / 1e6);
		for (k = 0; k < m && m <= 256; k++)
			printf(" %.1f", op_ns[k] / 1e6);
		printf("\n");
	}
	msi_off(edu);
	close_fds(fd, n);
}

/* What the other VM's process hands back through shared memory. */
struct other_result {
	int done;		/* set last */
	int rc;
	double p99_ns, med_ns;
};

/*
 * The other VM: irqlat's MSI scenario with the in-kernel irqchip on the
 * second edu, its vCPU and the edu's host IRQ on @cpu.  Runs in a child
 * process (irqlat's watchdog is a process-wide SIGALRM).
 */
static pid_t other_vm_start(const struct opts *o, const char *bdf, int cpu,
			    struct other_result *out)
{
	struct irqlat_opts io = {
		.n = o->other_n, .stall_ms = 20000, .quiet_ms = 0,
		.control = false, .verbose = o->verbose,
		.vcpu_cpu = cpu, .irq_cpu = cpu, .io_cpu = -1,
	};
	struct irqlat_result res;
	char why[160] = "";
	pid_t pid;
	int ret;

	memset(out, 0, sizeof(*out));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (pid)
		return pid;
	setenv("EDU_BDF", bdf, 1);
	ret = irqlat_run(IRQ_MSI, CHIP_KERNEL, &io, &res, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "lifecycle: other VM (irqlat msi/kernel on %s): %s %s\n",
			bdf, strerror(-ret), why);
		out->rc = 2;
	} else if (res.lost || res.doubled || !res.nr_samples) {
		fprintf(stderr,
			"lifecycle: other VM: raised %u, delivered %u: %u lost, %u doubled\n",
			res.raised, res.delivered, res.lost, res.doubled);
		out->rc = 1;
	}
	out->p99_ns = res.lat_p99_ns;
	out->med_ns = res.lat_med_ns;
	__atomic_store_n(&out->done, 1, __ATOMIC_RELEASE);
	_exit(out->rc);
}

static void other_vm_wait(pid_t pid, const struct other_result *out)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		fail("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) || !out->done)
		fail("the other VM's irqlat run failed (status 0x%x)", status);
}

static void case_swap(const struct opts *o, struct edu_dev *edu,
		      const char *other_bdf, FILE *other_csv, struct row *r)
{
	struct other_result *out;
	struct lite_vm *vm = new_vm();
	int *fd = eventfds(2);
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), other_cpu = -1;
	double quiet_p99, quiet_med, t0, ns;
	struct mark m0;
	long ops = 0;
	pid_t pid;

	out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (out == MAP_FAILED)
		fail("mmap: %s", strerror(errno));
	/* The churn on CPU 0 (main() pinned it), the other VM on the last. */
	if (ncpu >= 2)
		other_cpu = ncpu - 1;

	/* The other VM alone first: its latency without churn. */
	pid = other_vm_start(o, other_bdf, other_cpu, out);
	other_vm_wait(pid, out);
	quiet_p99 = out->p99_ns;
	quiet_med = out->med_ns;

	set_routes(vm, 2);
	irqfd(vm, fd[0], 0, true);
	irqfd(vm, fd[1], 1, true);
	msi_trigger(edu, fd[0]);
	printf("# trigger-swap: paired tokens before the loop: %d\n",
	       paired_tokens());

	pid = other_vm_start(o, other_bdf, other_cpu, out);
	m0 = mark();
	t0 = now_ns();
	/* Swap until the other VM is done (and SWAP_MIN_OPS times). */
	while (!__atomic_load_n(&out->done, __ATOMIC_ACQUIRE) ||
	       ops < SWAP_MIN_OPS) {
		msi_trigger(edu, fd[++ops & 1]);
		if (!(ops & 63) && now_ns() - t0 >= SWAP_TIMEOUT_MS * 1e6)
			fail("the other VM did not finish in %d ms of swapping",
			     SWAP_TIMEOUT_MS);
	}
	ns = now_ns() - t0;
	finish(r, ops, ns, m0);
	other_vm_wait(pid, out);
	r->other_p99_ns = out->p99_ns;
	printf("# trigger-swap: %ld swaps in %.1f ms\n", ops, ns / 1e6);
	printf("# other VM: p99 %.0f ns (med %.0f); without churn p99 %.0f ns (med %.0f)\n",
	       out->p99_ns, out->med_ns, quiet_p99, quiet_med);
	if (other_csv)
		fprintf(other_csv, "%s,%s,%.0f,%.0f,%.0f,%.0f,%ld\n",
			o->kernel, o->modules, quiet_p99, quiet_med,
			out->p99_ns, out->med_ns, ops);

	msi_off(edu);
	irqfd(vm, fd[0], 0, false);
	irqfd(vm, fd[1], 1, false);
	vm_destroy(vm);
	close_fds(fd, 2);
	munmap(out, sizeof(*out));
}

/* Irqfd ops the swap-irqfd case keeps the times of, for their p99. */
#define IRQFD_TIMES	65536

/*
 * One VM swaps the edu's trigger between two irqfds' eventfds in a child
 * process (CPU 0) while another VM, here (the last CPU), assigns and
 * deassigns an irqfd that no producer pairs: how much the first VM's churn
 * holds up the second's KVM_IRQFD.  Row: the second VM's ops, mean ns per
 * assign + deassign and, as other_vm_p99_ns, their p99.
 */
static void case_swap_irqfd(const struct opts *o, struct edu_dev *edu,
			    struct row *r)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), efd[2], status;
	struct lite_vm *vm2;
	double t0, t, ns, *op_ns;
	long ops = 0, kept, swaps;
	struct mark m0;
	int *stop;
	pid_t pid;

	stop = mmap(NULL, 2 * sizeof(*stop), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	op_ns = calloc(IRQFD_TIMES, sizeof(*op_ns));
	if (stop == MAP_FAILED || !op_ns)
		fail("no memory for the swap-irqfd case");
	stop[0] = 0;
	stop[1] = 0;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (!pid) {
		struct lite_vm *vm1 = new_vm();
		int *fd = eventfds(2);
		long n = 0;

		set_routes(vm1, 2);
		irqfd(vm1, fd[0], 0, true);
		irqfd(vm1, fd[1], 1, true);
		msi_trigger(edu, fd[0]);
		__atomic_store_n(&stop[1], -1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&stop[0], __ATOMIC_ACQUIRE))
			msi_trigger(edu, fd[++n & 1]);
		msi_off(edu);
		__atomic_store_n(&stop[1], n, __ATOMIC_RELEASE);
		_exit(0);
	}
	if (ncpu >= 2)
		pin_self(ncpu - 1);
	vm2 = new_vm();
	efd[0] = eventfd(0, EFD_CLOEXEC);
	if (efd[0] < 0)
		fail("eventfd: %s", strerror(errno));
	set_routes(vm2, 1);
	while (!__atomic_load_n(&stop[1], __ATOMIC_ACQUIRE))
		usleep(1000);

	m0 = mark();
	t0 = now_ns();
	do {
		t = now_ns();
		irqfd(vm2, efd[0], 0, true);
		irqfd(vm2, efd[0], 0, false);
		op_ns[ops % IRQFD_TIMES] = now_ns() - t;
		ops++;
		ns = now_ns() - t0;
	} while (more(o, o->min_ops, ops, ns));
	finish(r, ops, ns, m0);
	__atomic_store_n(&stop[0], 1, __ATOMIC_RELEASE);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fail("the swapping VM failed (status 0x%x)", status);
	swaps = __atomic_load_n(&stop[1], __ATOMIC_ACQUIRE);
	kept = ops < IRQFD_TIMES ? ops : IRQFD_TIMES;
	qsort(op_ns, kept, sizeof(*op_ns), cmp_double);
	r->other_p99_ns = op_ns[kept * 99 / 100];
	printf("# swap-irqfd: %ld irqfd ops in %.1f ms, %ld swaps meanwhile; ",
	       ops, ns / 1e6, swaps);
	printf("op median %.0f ns, p99 %.0f ns\n", op_ns[kept / 2],
	       r->other_p99_ns);
	if (ncpu >= 2)
		pin_self(0);
	vm_destroy(vm2);
	close(efd[0]);
	free(op_ns);
	munmap(stop, 2 * sizeof(*stop));
}

static void print_row(FILE *f, const struct opts *o, const struct row *r)
{
	fprintf(f, "%s,%u,%s,%s,%ld,%.1f,%.3f,", r->name, r->vectors,
		o->kernel, o->modules, r->ops, r->ns_per_op, r->ipis_per_op);
	if (r->other_p99_ns < 0)
		fprintf(f, "-");
	else
		fprintf(f, "%.0f", r->other_p99_ns);
	if (busy_col)
		fprintf(f, ",%.0f", r->busy_ns_per_op);
	fprintf(f, "\n");
	fflush(f);
}

/* Is @name in the comma-separated @list? */
static bool has_case(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
	return false;
}

static void check_cases(const char *list)
{
	char *copy = strdup(list), *tok, *save;

	if (!copy)
		fail("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (strcmp(tok, "irqfd") && strcmp(tok, "trigger-swap") &&
		    strcmp(tok, "vm") && strcmp(tok, "swap-irqfd"))
			fail("--cases: unknown case '%s'", tok);
	free(copy);
}

/* Room for 1024 eventfds and the VMs' files. */
static void raise_nofile(unsigned int need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		fail("getrlimit: %s", strerror(errno));
	if (rl.rlim_cur >= need)
		return;
	if (rl.rlim_max < need)
		rl.rlim_max = need;
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		fail("setrlimit(RLIMIT_NOFILE, %u): %s", need, strerror(errno));
}

static unsigned int parse_vectors(const char *s, unsigned int *v)
{
	unsigned int n = 0;
	char *copy, *tok, *save, *end;
	unsigned long x;

	copy = strdup(s);
	if (!copy)
		fail("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok && n < 8;
	     tok = strtok_r(NULL, ",", &save)) {
		x = strtoul(tok, &end, 10);
		if (*end || !x || x > MAX_VECTORS)
			fail("--vectors: '%s' is not 1..%d", tok, MAX_VECTORS);
		v[n++] = x;
	}
	free(copy);
	if (!n)
		fail("--vectors: empty");
	return n;
}

static long parse_long(const char *s, const char *what, long min)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v < min || v > 1000000000)
		fail("%s: bad number '%s'", what, s);
	return v;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: lifecycle [options]\n"
		"  --cases LIST       irqfd,trigger-swap,vm,swap-irqfd (default all)\n"
		"  --vectors LIST     N for irqfd and vm (default 1,64,1024)\n"
		"  --kernel LABEL     kernel column (e.g. 6.12-generic)\n"
		"  --modules LABEL    modules column (stock or kit)\n"
		"  --csv-file F       rows (with the header) to F as well as stdout\n"
		"  --other-csv-file F the other VM's latencies, quiet and under churn\n"
		"  --no-header        no CSV header on stdout\n"
		"  --min-ops N        irqfd ops per row at least (default 1024)\n"
		"  --vm-min-ops N     VMs per vm row at least (default 16)\n"
		"  --min-ms MS        and at least this long (default 100)\n"
		"  --max-ms MS        stop after the round that passes MS (default 2000)\n"
		"                     (trigger-swap: until the other VM is done)\n"
		"  --other-n N        the other VM's interrupts (default 500)\n"
		"  --busy             a ninth column, busy_ns_per_op (/proc/schedstat)\n"
		"  -v, --verbose      the helpers' diagnostics on stderr\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cases", required_argument, NULL, 'c' },
		{ "vectors", required_argument, NULL, 'V' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "modules", required_argument, NULL, 'm' },
		{ "csv-file", required_argument, NULL, 'F' },
		{ "other-csv-file", required_argument, NULL, 'O' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "min-ops", required_argument, NULL, 'o' },
		{ "vm-min-ops", required_argument, NULL, 'M' },
		{ "min-ms", required_argument, NULL, 't' },
		{ "max-ms", required_argument, NULL, 'T' },
		{ "other-n", required_argument, NULL, 'n' },
		{ "busy", no_argument, NULL, 'B' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.min_ops = 1024, .vm_min_ops = 16, .min_ms = 100,
		.max_ms = 2000, .other_n = 500,
		.kernel = "unknown", .modules = "unknown",
	};
	const char *cases = "irqfd,trigger-swap,vm,swap-irqfd";
	unsigned int vec[8] = { 1, 64, 1024 }, nvec = 3, i, nedu;
	FILE *csv = NULL, *other_csv = NULL;
	char edus[MAX_EDUS][32];
	struct edu_dev edu;
	bool header = true;
	struct row r;
	int opt;

	while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			cases = optarg;
			break;
		case 'V':
			nvec = parse_vectors(optarg, vec);
			break;
		case 'k':
			snprintf(o.kernel, sizeof(o.kernel), "%s", optarg);
			break;
		case 'm':
			snprintf(o.modules, sizeof(o.modules), "%s", optarg);
			break;
		case 'F':
		case 'O':
			if (opt == 'F')
				csv = fopen(optarg, "we");
			else
				other_csv = fopen(optarg, "we");
			if (!(opt == 'F' ? csv : other_csv))
				fail("%s: %s", optarg, strerror(errno));
			break;
		case 'H':
			header = false;
			break;
		case 'o':
			o.min_ops = parse_long(optarg, "--min-ops", 1);
			break;
		case 'M':
			o.vm_min_ops = parse_long(optarg, "--vm-min-ops", 1);
			break;
		case 't':
			o.min_ms = parse_long(optarg, "--min-ms", 0);
			break;
		case 'T':
			o.max_ms = parse_long(optarg, "--max-ms", 1);
			break;
		case 'n':
			o.other_n = parse_long(optarg, "--other-n", 1);
			if (o.other_n > IRQLAT_MAX_SAMPLES)
				fail("--other-n: at most %u", IRQLAT_MAX_SAMPLES);
			break;
		case 'B':
			busy_col = true;
			break;
		case 'v':
			verbose = true;
			o.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/*
	 * The VMM on one CPU for every case, as trigger-swap always was: a
	 * process that has run on two CPUs sends TLB-shootdown IPIs from its
	 * own munmap() (a VM's memory) and fork(), which the ipis_per_op
	 * column would count against whichever module set it happened to.
	 */
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		pin_self(0);
	for (i = 0; i < nvec; i++)
		raise_nofile(vec[i] + 256);
	check_cases(cases);
	nedu = find_edus(edus);
	if (!nedu)
		fail("no edu device (1234:11e8)");
	if (has_case(cases, "trigger-swap") && nedu < 2)
		fail("trigger-swap needs a second edu (-device edu) for the other VM");

	if (header)
		printf("%s%s\n", CSV_HEADER, busy_col ? ",busy_ns_per_op" : "");
	if (csv)
		fprintf(csv, "%s%s\n", CSV_HEADER, busy_col ? ",busy_ns_per_op" : "");
	if (other_csv)
		fprintf(other_csv, "%s\n", OTHER_HEADER);

	open_edu(&edu, edus[0]);
	printf("# VM 1's edu %s%s%s\n", edus[0],
	       nedu > 1 ? ", the other VM's edu " : "", nedu > 1 ? edus[1] : "");
	for (i = 0; i < nvec && has_case(cases, "irqfd"); i++) {
		r = (struct row){ .name = "irqfd", .vectors = vec[i],
				  .other_p99_ns = -1 };
		case_irqfd(&o, &edu, vec[i], &r);
		print_row(stdout, &o, &r);
		if (csv)
			print_row(csv, &o, &r);
	}
	if (has_case(cases, "trigger-swap")) {
		r = (struct row){ .name = "trigger-swap", .vectors = 1,
				  .other_p99_ns = -1 };
		case_swap(&o, &edu, edus[1], other_csv, &r);
		print_row(stdout, &o, &r);
		if (csv)
			print_row(csv, &o, &r);
	}
	for (i = 0; i < nvec && has_case(cases, "vm"); i++) {
		r = (struct row){ .name = "vm", .vectors = vec[i],
				  .other_p99_ns = -1 };
		case_vm(&o, &edu, vec[i], &r);
		print_row(stdout, &o, &r);
		if (csv)
			print_row(csv, &o, &r);
	}
	/* Last: it runs on two CPUs (see above). */
	if (has_case(cases, "swap-irqfd")) {
		r = (struct row){ .name = "swap-irqfd", .vectors = 1,
				  .other_p99_ns = -1 };
		case_swap_irqfd(&o, &edu, &r);
		print_row(stdout, &o, &r);
		if (csv)
			print_row(csv, &o, &r);
	}
	edu_close(&edu);
	if (csv && fclose(csv))
		fail("writing the CSV: %s", strerror(errno));
	if (other_csv && fclose(other_csv))
		fail("writing the other VM's CSV: %s", strerror(errno));
	return 0;
}
