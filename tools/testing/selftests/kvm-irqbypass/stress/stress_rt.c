// SPDX-License-Identifier: GPL-2.0-only
/*
 * stress_rt: the MSI path under load from a competing real-time task
 * (Documentation/reliability.rst).  The edu's vfio-msi irq and the vCPU
 * thread are pinned to the last CPU; a SCHED_FIFO task pinned there too
 * (priority KVM_IRQBYPASS_RT_PRIO, default 60: above the irq threads'
 * 50) spins for random 50-1000 µs bursts with random sleeps in between,
 * while MSIs are raised one at a time from the first CPU.  Every MSI must
 * arrive exactly once.  With the kit's fast path every one is a hit (hard
 * irq, PREEMPT_RT too); with stock vfio on PREEMPT_RT the injection waits
 * in the irq thread behind the RT task, which the raise-to-ISR latency
 * shows (median and p99 printed).  Meant for FLAVOUR=rt; runs anywhere.
 *
 * KVM_IRQBYPASS_SEED        replay a run
 * KVM_IRQBYPASS_RT_IRQS     MSIs (default 2000)
 * KVM_IRQBYPASS_RT_PRIO     the competitor's SCHED_FIFO priority (60)
 * KVM_IRQBYPASS_SECONDS     time bound (default 120)
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc_util.h"
#include "rig.h"
#include "tap.h"

#define NR_TESTS	7

struct competitor {
	pthread_t thread;
	int cpu, prio;
	u64 seed;
	int stop;
	int err;
	unsigned long bursts;
};

static void *competitor_thread(void *arg)
{
	struct competitor *co = arg;
	struct sched_param sp = { .sched_priority = co->prio };
	cpu_set_t cpus;
	struct prng p;
	long long end;

	prng_seed(&p, co->seed);
	CPU_ZERO(&cpus);
	CPU_SET(co->cpu, &cpus);
	co->err = pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	if (!co->err)
		co->err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (co->err)
		return NULL;
	while (!READ_ONCE(co->stop)) {
		end = now_us() + 50 + prng_below(&p, 950);
		while (now_us() < end)
			;
		WRITE_ONCE(co->bursts, co->bursts + 1);
		usleep(100 + prng_below(&p, 900));
	}
	return NULL;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	u64 seed = stress_init("stress_rt");
	long n = env_long("KVM_IRQBYPASS_RT_IRQS", 2000, 1);
	long seconds = env_long("KVM_IRQBYPASS_SECONDS", 120, 1);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct competitor co = { 0 };
	char path[64], cpu[16], buf[64];
	long long *lat, t0, deadline;
	struct msi_rig r;
	struct irq_acct c;
	cpu_set_t cpus;
	long i;
	int ret;

	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	co.cpu = ncpu > 1 ? ncpu - 1 : 0;
	co.prio = env_long("KVM_IRQBYPASS_RT_PRIO", 60, 1);
	co.seed = seed + 1;
	lat = calloc(n, sizeof(*lat));
	if (!lat)
		tap_bail("no memory");
	tap_diag("kernel %s", read_text_file("/sys/kernel/realtime", buf, sizeof(buf)) &&
		 buf[0] == '1' ? "PREEMPT_RT" : "not PREEMPT_RT");

	ret = rig_setup_tap(&r, NULL);
	if (ret == -ENODEV)
		return tap_finish();
	if (ret)
		goto out;

	/* vCPU and irq on the competitor's CPU, the raiser elsewhere. */
	vcpu_runner_stop(&r.vcpu);
	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", r.irq);
	snprintf(cpu, sizeof(cpu), "%d", co.cpu);
	ret = vcpu_runner_start(&r.vcpu, r.vm, co.cpu);
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	ret = ret || !write_text_file(path, cpu) ||
	      pthread_create(&co.thread, NULL, competitor_thread, &co);
	usleep(100 * 1000);
	tap_result(!ret && !co.err,
		   "SCHED_FIFO %d competitor, vCPU thread and irq %d on CPU %d",
		   co.prio, r.irq, co.cpu);
	if (ret)
		goto out;

	rig_phase_begin(&r, &c);
	deadline = now_us() + seconds * 1000000;
	for (i = 0; !ret && i < n && !deadline_passed(deadline); i++) {
		t0 = now_us();
		ret = rig_raise(&r, &c);
		lat[i] = now_us() - t0;
		usleep(50);
	}
	WRITE_ONCE(co.stop, 1);
	pthread_join(co.thread, NULL);
	rig_phase_end(&r, &c, "rt");
	qsort(lat, i, sizeof(*lat), cmp_ll);
	tap_diag("rt: %ld MSIs, raise-to-delivery median %lld us, p99 %lld us",
		 i, i ? lat[i / 2] : 0, i ? lat[i * 99 / 100] : 0);
	tap_diag("rt: max %lld us; competitor %lu bursts", i ? lat[i - 1] : 0,
		 co.bursts);
	tap_result(!ret && i > 0 && co.bursts > 0,
		   "rt: %ld MSIs raised while the RT task competed (%lu bursts)",
		   i, co.bursts);
	rig_report(&r, "rt", &c, true);
	if (r.fast)
		tap_result(c.hits == (long long)c.raised && c.guest == c.raised,
			   "rt: every MSI injected by the fast path from hard irq (%lld hits)",
			   c.hits);
	else
		tap_skip("rt: fast path off or stock modules");
out:
	WRITE_ONCE(co.stop, 1);
	rig_teardown(&r);
	free(lat);
	return tap_finish();
}
