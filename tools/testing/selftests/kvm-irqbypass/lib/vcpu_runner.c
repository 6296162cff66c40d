// SPDX-License-Identifier: GPL-2.0-only
/*
 * A vCPU kept running on its own thread; see vcpu_runner.h.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>

#include "tap.h"
#include "vcpu_runner.h"

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
		ret = _vcpu_run(r->vcpu ? r->vcpu : &r->vm->vcpu[0], &ex, 100);
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

static int runner_start(struct vcpu_runner *r, struct lite_vm *vm,
			struct lite_vcpu *vcpu, int cpu)
{
	r->vm = vm;
	r->vcpu = vcpu;
	r->cpu = cpu;
	r->stop = false;
	r->err = 0;
	block_sigalrm(true);
	if (pthread_create(&r->thread, NULL, vcpu_thread, r))
		return -EAGAIN;
	r->running = true;
	return 0;
}

int vcpu_runner_start(struct vcpu_runner *r, struct lite_vm *vm, int cpu)
{
	return runner_start(r, vm, NULL, cpu);
}

int vcpu_runner_start_vcpu(struct vcpu_runner *r, struct lite_vcpu *vcpu,
			   int cpu)
{
	return runner_start(r, vcpu->vm, vcpu, cpu);
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
