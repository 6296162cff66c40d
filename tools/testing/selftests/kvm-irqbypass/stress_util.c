// SPDX-License-Identifier: GPL-2.0-only
/*
 * Shared code of the reliability campaign; see stress_util.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "stress_util.h"
#include "tap.h"

#define TRACEFS		"/sys/kernel/tracing"

void prng_seed(struct prng *p, u64 seed)
{
	/* Any seed, 0 included, gives a nonzero state. */
	p->state = seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
	if (!p->state)
		p->state = 1;
}

u64 prng_next(struct prng *p)
{
	u64 x = p->state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	p->state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

u32 prng_below(struct prng *p, u32 n)
{
	return n ? (u32)((prng_next(p) >> 32) % n) : 0;
}

void prng_usleep(struct prng *p, u32 max_us)
{
	u32 us = prng_below(p, max_us);

	if (us)
		usleep(us);
}

u64 stress_seed(void)
{
	const char *s = getenv("KVM_IRQBYPASS_SEED");

	if (s && *s)
		return strtoull(s, NULL, 0);
	return (u64)now_us() ^ ((u64)getpid() << 32);
}

u64 stress_init(const char *name)
{
	u64 seed;

	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = stress_seed();
	printf("# seed %llu\n", (unsigned long long)seed);
	printf("# replay: KVM_IRQBYPASS_SEED=%llu %s\n",
	       (unsigned long long)seed, name);
	return seed;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu_runner *r = arg;
	struct guest_exit ex;
	sigset_t set;
	int ret;

	if (r->cpu >= 0) {
		cpu_set_t cpus;

		CPU_ZERO(&cpus);
		CPU_SET(r->cpu, &cpus);
		pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	while (!READ_ONCE(r->stop)) {
		ret = guest_run(r->vm, &ex, 100);
		if (ret == -ETIMEDOUT)
			continue;
		if (ret) {
			WRITE_ONCE(r->err, ret);
			break;
		}
		/* The ISR makes no exit; any port is a surprise. */
		tap_diag("vCPU: unexpected exit on port 0x%x value %u", ex.port,
			 ex.value);
		WRITE_ONCE(r->err, -EPROTO);
		break;
	}
	return NULL;
}

/* Only vCPU threads take SIGALRM (guest_run()'s timeout). */
static void block_sigalrm(bool block)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

int vcpu_runner_start(struct vcpu_runner *r, struct lite_vm *vm, int cpu)
{
	r->vm = vm;
	r->cpu = cpu;
	r->stop = false;
	r->err = 0;
	block_sigalrm(true);
	if (pthread_create(&r->thread, NULL, vcpu_thread, r))
		return -EAGAIN;
	r->running = true;
	return 0;
}

void vcpu_runner_stop(struct vcpu_runner *r)
{
	if (!r->running)
		return;
	WRITE_ONCE(r->stop, true);
	pthread_join(r->thread, NULL);
	r->running = false;
	block_sigalrm(false);
}

void irq_acct_add(struct irq_acct *sum, const struct irq_acct *c)
{
	sum->raised += c->raised;
	sum->guest += c->guest;
	sum->signalled += c->signalled;
	sum->absorbed += c->absorbed;
	sum->doubled += c->doubled;
}

bool irq_acct_exact(const struct irq_acct *c)
{
	return !c->doubled &&
	       c->raised == c->guest + c->signalled + c->absorbed;
}

void irq_acct_print(const char *name, const struct irq_acct *c)
{
	tap_diag("%s: raised=%llu guest=%llu signalled=%llu absorbed=%llu doubled=%llu",
		 name, c->raised, c->guest, c->signalled, c->absorbed,
		 c->doubled);
	tap_diag("%s: host=%lld hits=%lld misses=%lld", name, c->host,
		 c->hits, c->misses);
}

unsigned int msi_sink_collect(struct msi_sink *s, struct irq_acct *c)
{
	unsigned int n = 0;
	u64 v;

	if (s->guest_count) {
		u32 now = READ_ONCE(*s->guest_count);

		n += now - s->guest_seen;
		c->guest += now - s->guest_seen;
		s->guest_seen = now;
	}
	while (read(s->efd, &v, sizeof(v)) == sizeof(v)) {
		n += v;
		c->signalled += v;
	}
	return n;
}

int edu_raise_wait_sinks(struct edu_dev *edu, struct msi_sink *s,
			 struct irq_acct *c, unsigned int nr, int timeout_ms,
			 const int *abort)
{
	long long deadline = now_us() + (long long)timeout_ms * 1000;
	unsigned int i, n;
	int ret = 0;

	edu_write(edu, EDU_REG_IRQ_RAISE, 1);
	c->raised++;
	for (;;) {
		for (i = n = 0; i < nr; i++)
			n += msi_sink_collect(&s[i], &c[i]);
		if (n) {
			if (n > 1)
				c->doubled += n - 1;
			break;
		}
		if ((abort && READ_ONCE(*abort)) || now_us() > deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		usleep(20);
	}
	edu_write(edu, EDU_REG_IRQ_ACK, 1);
	return ret;
}

int edu_raise_wait(struct edu_dev *edu, struct msi_sink *s,
		   struct irq_acct *c, int timeout_ms, const int *abort)
{
	return edu_raise_wait_sinks(edu, s, c, 1, timeout_ms, abort);
}

int msi_eventfd(void)
{
	return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int edu_msi_trigger(struct edu_dev *edu, int fd)
{
	s32 fds[1] = { fd };

	if (fd < 0)
		return vfio_set_irqs(edu->device_fd, VFIO_PCI_MSI_IRQ_INDEX,
				     VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	return vfio_set_irqs(edu->device_fd, VFIO_PCI_MSI_IRQ_INDEX,
			     VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, fds);
}

bool fastpath_enabled(void)
{
	char buf[16];

	if (!read_text_file("/sys/module/vfio_pci_core/parameters/fastpath",
			    buf, sizeof(buf)) || buf[0] != 'Y')
		return false;
	if (!read_text_file("/sys/module/kvm/parameters/irqfd_fastpath", buf,
			    sizeof(buf)) || buf[0] != 'Y')
		return false;
	return access(TRACEFS "/events/vfio_fastpath/enable", W_OK) == 0;
}

/*
 * Enabling a trace event patches kernel text (the tracepoint's static key,
 * and sched_wakeup's for comm recording).  Under multi-threaded TCG another
 * vCPU can run the stale text meanwhile and die on the patching int3
 * ("Oops: int3" in trace_sched_wakeup, seen on the debug kernel), so the
 * testbed enables the events once before the tests (guest-setup.sh); then
 * only the buffer is cleared here, and events found on are left on.
 */
static bool trace_enabled_here;

bool fastpath_trace_start(void)
{
	char buf[8];

	trace_enabled_here = !read_text_file(TRACEFS "/events/vfio_fastpath/enable",
					     buf, sizeof(buf)) || buf[0] != '1';
	return write_text_file(TRACEFS "/buffer_size_kb", "4096") &&
	       (!trace_enabled_here ||
		write_text_file(TRACEFS "/events/vfio_fastpath/enable", "1")) &&
	       write_text_file(TRACEFS "/trace", "");
}

void fastpath_trace_stop(void)
{
	if (trace_enabled_here)
		write_text_file(TRACEFS "/events/vfio_fastpath/enable", "0");
	trace_enabled_here = false;
}

void fastpath_trace_count(int irq, long long *hits, long long *misses)
{
	char line[512], hit[64], miss[64];
	FILE *f;

	*hits = -1;
	*misses = -1;
	f = fopen(TRACEFS "/trace", "re");
	if (!f)
		return;
	if (irq < 0) {	/* any irq: its vectors came and went */
		snprintf(hit, sizeof(hit), "vfio_fastpath_hit: irq=");
		snprintf(miss, sizeof(miss), "vfio_fastpath_miss: irq=");
	} else {
		snprintf(hit, sizeof(hit), "vfio_fastpath_hit: irq=%d\n", irq);
		snprintf(miss, sizeof(miss), "vfio_fastpath_miss: irq=%d ", irq);
	}
	*hits = 0;
	*misses = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "LOST"))
			tap_diag("trace: %s", line);
		if (strstr(line, hit))
			(*hits)++;
		else if (strstr(line, miss))
			(*misses)++;
	}
	fclose(f);
}

int kmsg_watch(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	lseek(fd, 0, SEEK_END);
	return fd;
}

/* What run.sh's splat scan looks for, as fixed strings. */
static const char *const splat_words[] = {
	"WARNING:", "BUG:", "Oops", "KASAN", "UBSAN",
	"possible circular locking", "possible recursive locking",
	"inconsistent lock state", "scheduling while atomic",
	"sleeping function called from invalid context", "Kernel panic",
	"blocked for more than", "new suspected memory leak",
};

int kmsg_splats(int fd)
{
	char rec[8192];
	unsigned int i;
	int n = 0;
	ssize_t len;

	if (fd < 0)
		return -1;
	for (;;) {
		len = read(fd, rec, sizeof(rec) - 1);
		if (len < 0) {
			if (errno == EPIPE)	/* overwritten: go on */
				continue;
			break;
		}
		rec[len] = '\0';
		for (i = 0; i < ARRAY_SIZE(splat_words); i++) {
			if (strstr(rec, splat_words[i])) {
				char *msg = strchr(rec, ';');

				tap_diag("kernel: %.*s", 200,
					 msg ? msg + 1 : rec);
				n++;
				break;
			}
		}
	}
	return n;
}

int rig_irqfd(struct msi_rig *r, bool assign)
{
	int ret = vm_irqfd(r->vm, r->efd, TEST_MSI_GSI,
			   assign ? 0 : KVM_IRQFD_FLAG_DEASSIGN, 0);

	if (!ret)
		r->irqfd = assign;
	return ret;
}

int rig_vm_up(struct msi_rig *r)
{
	struct guest_params params = {
		.vector = TEST_MSI_VECTOR,
		.target = ~0u,
	};

	r->vm = vm_create_ram(IRQCHIP_KERNEL, r->ram);
	if (!r->vm || vm_start_guest(r->vm, &params) ||
	    guest_run_until(r->vm, GUEST_PORT_READY, NULL, r->timeout) ||
	    vm_route_msi(r->vm, TEST_MSI_GSI, TEST_MSI_VECTOR) ||
	    rig_irqfd(r, true))
		return -EIO;
	r->sink.guest_count = guest_count_ptr(r->vm->ram);
	r->sink.guest_seen = READ_ONCE(*r->sink.guest_count);
	return vcpu_runner_start(&r->vcpu, r->vm, -1);
}

void rig_vm_down(struct msi_rig *r)
{
	vcpu_runner_stop(&r->vcpu);
	vm_destroy(r->vm);
	r->vm = NULL;
	r->irqfd = false;
	/* Caller-owned RAM outlives the VM: keep counting from it. */
	if (!r->ram)
		r->sink.guest_count = NULL;
}

int rig_setup(struct msi_rig *r, u8 *ram)
{
	int ret;

	memset(r, 0, sizeof(*r));
	r->efd = -1;
	r->irq = -1;
	r->kmsg = kmsg_watch();
	r->ram = ram;
	r->timeout = test_timeout_ms();
	pthread_mutex_init(&r->lock, NULL);
	ret = edu_open(&r->edu);
	if (ret)
		return ret;
	r->efd = msi_eventfd();
	r->sink.efd = r->efd;
	if (r->efd < 0 || edu_check_alive(&r->edu) ||
	    edu_enable_bus_master(&r->edu) || rig_vm_up(r) ||
	    edu_msi_trigger(&r->edu, r->efd))
		return -EIO;
	r->irq = proc_interrupts_irq("vfio-msi[0]", r->edu.bdf);
	r->fast = fastpath_enabled();
	tap_diag("edu MSI irq %d, fast path %s", r->irq,
		 r->fast ? "on (tracepoints counted)" : "off or stock modules");
	return 0;
}

void rig_teardown(struct msi_rig *r)
{
	vcpu_runner_stop(&r->vcpu);
	if (r->fast)
		fastpath_trace_stop();
	if (r->edu.device_fd >= 0 && r->edu.bar0)
		edu_msi_trigger(&r->edu, -1);
	if (r->vm && r->irqfd)
		rig_irqfd(r, false);
	vm_destroy(r->vm);
	r->vm = NULL;
	if (r->efd >= 0)
		close(r->efd);
	r->efd = -1;
	edu_close(&r->edu);
	if (r->kmsg >= 0)
		close(r->kmsg);
	r->kmsg = -1;
}

int rig_raise(struct msi_rig *r, struct irq_acct *c)
{
	int ret;

	pthread_mutex_lock(&r->lock);
	ret = edu_raise_wait(&r->edu, &r->sink, c, r->timeout, &r->vcpu.err);
	pthread_mutex_unlock(&r->lock);
	return ret;
}

void rig_settle(struct msi_rig *r, struct irq_acct *c, int ms)
{
	usleep(ms * 1000);
	msi_sink_collect(&r->sink, c);
}

void irq_acct_begin(struct irq_acct *c, const char *bdf, bool fast)
{
	memset(c, 0, sizeof(*c));
	c->host = proc_interrupts_count("vfio-msi[", bdf);
	c->hits = -1;
	c->misses = -1;
	if (fast && !fastpath_trace_start())
		tap_diag("cannot start tracing the vfio_fastpath events");
}

void rig_phase_begin(struct msi_rig *r, struct irq_acct *c)
{
	irq_acct_begin(c, r->edu.bdf, r->fast);
}

void rig_phase_end(struct msi_rig *r, struct irq_acct *c, const char *name)
{
	long long host;

	rig_settle(r, c, 100);
	host = proc_interrupts_count("vfio-msi[", r->edu.bdf);
	c->host = c->host >= 0 && host >= 0 ? host - c->host : -1;
	if (r->fast)
		fastpath_trace_count(r->irq, &c->hits, &c->misses);
	irq_acct_print(name, c);
}

int rig_run_control(struct msi_rig *r, void *(*fn)(void *), void *arg,
		    struct irq_acct *c, struct prng *p, u32 gap_us)
{
	int ret = 0;
	void *done;

	r->ctl_stop = 0;
	r->ctl_ops = 0;
	r->ctl_err = 0;
	if (pthread_create(&r->ctl, NULL, fn, arg))
		return -EAGAIN;
	/* pthread_tryjoin_np: raise until the control thread is done. */
	while (pthread_tryjoin_np(r->ctl, &done) == EBUSY) {
		ret = rig_raise(r, c);
		if (ret) {
			tap_diag("raise %llu: no ISR run, no eventfd count in %d ms (vCPU %d)",
				 c->raised, r->timeout, r->vcpu.err);
			WRITE_ONCE(r->ctl_stop, 1);
			pthread_join(r->ctl, &done);
			break;
		}
		prng_usleep(p, gap_us);
	}
	return ret;
}

void rig_report(struct msi_rig *r, const char *name, const struct irq_acct *c,
		bool host_exact)
{
	int splats;

	tap_result(irq_acct_exact(c) && c->raised > 0 &&
		   (!host_exact || c->host < 0 ||
		    c->host == (long long)c->raised),
		   "%s: %llu MSIs raised = %llu guest + %llu eventfd + %llu absorbed, none doubled",
		   name, c->raised, c->guest, c->signalled, c->absorbed);
	/* An absorbed MSI may not have reached the handler at all. */
	if (r->fast && c->hits >= 0)
		tap_result(c->hits + c->misses <= (long long)c->raised &&
			   c->hits + c->misses + (long long)c->absorbed >=
			   (long long)c->raised,
			   "%s: fast path saw each MSI once (%lld hits, %lld misses)",
			   name, c->hits, c->misses);
	else
		tap_skip("%s: fast path off or stock modules, no tracepoint count",
			 name);
	splats = kmsg_splats(r->kmsg);
	tap_result(splats == 0, "%s: kernel log clean (%d splats)", name,
		   splats);
}

int rig_setup_tap(struct msi_rig *r, u8 *ram)
{
	int ret = rig_setup(r, ram);

	if (ret == -ENODEV) {
		tap_skip_rest("no edu device (1234:11e8) on this machine");
		return ret;
	}
	if (!tap_result(!ret, "setup: edu MSI -> eventfd -> KVM_IRQFD on MSI route GSI %u",
			TEST_MSI_GSI))
		return -EIO;
	return 0;
}

int rig_control_phase(struct msi_rig *r, const char *name,
		      void *(*fn)(void *), void *arg, struct prng *p,
		      long ops, long long deadline, struct irq_acct *c)
{
	long long start = now_us();
	int ret;

	rig_phase_begin(r, c);
	ret = rig_run_control(r, fn, arg, c, p, 100);
	rig_phase_end(r, c, name);
	tap_diag("%s: %lu of %ld operations, %llu MSIs in %lld ms", name,
		 r->ctl_ops, ops, c->raised, (now_us() - start) / 1000);
	tap_result(!ret && !r->ctl_err && r->ctl_ops > 0 &&
		   (r->ctl_ops == (unsigned long)ops || deadline_passed(deadline)),
		   "%s: %lu operations while MSIs fly", name, r->ctl_ops);
	rig_report(r, name, c, true);
	return ret;
}

int rig_control_main(const char *prog, const char *name,
		     unsigned int nr_tests, const char *ops_env, long ops_def,
		     long secs_def, void *(*fn)(void *),
		     void (*after)(struct rig_control *ctl,
				   const struct irq_acct *c))
{
	u64 seed = stress_init(prog);
	struct rig_control ctl = { 0 };
	int fds = count_open_fds();
	struct irq_acct c;
	struct prng p;
	int ret;

	tap_plan(nr_tests);
	close(kvm_open_or_bail());
	ctl.ops = env_long(ops_env, ops_def, 1);
	ctl.deadline = now_us() +
		       env_long("KVM_IRQBYPASS_SECONDS", secs_def, 1) * 1000000;
	prng_seed(&p, seed);
	prng_seed(&ctl.prng, seed + 1);

	ret = rig_setup_tap(&ctl.r, NULL);
	if (ret == -ENODEV)
		return tap_finish();
	if (!ret) {
		rig_control_phase(&ctl.r, name, fn, &ctl, &p, ctl.ops,
				  ctl.deadline, &c);
		if (after)
			after(&ctl, &c);
	}
	rig_teardown(&ctl.r);
	ret = count_open_fds();
	tap_result(ret == fds, "no descriptor left open (%d before, %d after)",
		   fds, ret);
	return tap_finish();
}
