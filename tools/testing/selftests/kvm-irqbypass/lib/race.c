// SPDX-License-Identifier: GPL-2.0-only
/*
 * Races made deterministic on one CPU; see race.h.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "kvm_util_lite.h"
#include "proc_util.h"
#include "race.h"
#include "tap.h"

static int pin_fifo(pthread_t t, int cpu, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	cpu_set_t one;
	int ret;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	ret = pthread_setaffinity_np(t, sizeof(one), &one);
	if (!ret)
		ret = pthread_setschedparam(t, SCHED_FIFO, &sp);
	return -ret;
}

int race_cpu_enter(struct race_cpu *rc)
{
	pthread_t self = pthread_self();
	int ret;

	rc->cpu = sched_getcpu();
	if (rc->cpu < 0)
		return -errno;
	ret = pthread_getaffinity_np(self, sizeof(rc->saved_cpus),
				     &rc->saved_cpus);
	if (!ret)
		ret = pthread_getschedparam(self, &rc->saved_policy,
					    &rc->saved_param);
	if (ret)
		return -ret;
	ret = pin_fifo(self, rc->cpu, RACE_PRIO_IOCTL);
	if (ret)
		race_cpu_leave(rc);
	return ret;
}

int race_cpu_add(const struct race_cpu *rc, pthread_t t, int prio)
{
	return pin_fifo(t, rc->cpu, prio);
}

void race_cpu_leave(const struct race_cpu *rc)
{
	pthread_t self = pthread_self();

	/* Drop SCHED_FIFO before the thread may run on the other CPUs. */
	pthread_setschedparam(self, rc->saved_policy, &rc->saved_param);
	pthread_setaffinity_np(self, sizeof(rc->saved_cpus), &rc->saved_cpus);
}

/* The preemption model ("rt", "full", ..., "unknown"); see below. */
static bool preempt_model(char *buf, size_t size)
{
	char text[128], *sel = NULL, *end = NULL, *tok;
	struct utsname u;

	if (read_text_file("/sys/kernel/realtime", text, sizeof(text)) &&
	    text[0] == '1') {
		snprintf(buf, size, "rt");
		return true;
	}
	/* PREEMPT_DYNAMIC: "none (voluntary) full", the mode in use in (). */
	if (read_text_file("/sys/kernel/debug/sched/preempt", text,
			   sizeof(text)))
		sel = strchr(text, '(');
	if (sel)
		end = strchr(sel, ')');
	if (end) {
		*end = '\0';
		snprintf(buf, size, "%s", sel + 1);
		return !strcmp(sel + 1, "full") || !strcmp(sel + 1, "lazy");
	}
	/* A static model shows in the version: "#1 SMP PREEMPT ...". */
	tok = uname(&u) ? NULL : strtok_r(u.version, " ", &end);
	for (; tok; tok = strtok_r(NULL, " ", &end)) {
		if (!strcmp(tok, "PREEMPT")) {
			snprintf(buf, size, "full");
			return true;
		}
	}
	snprintf(buf, size, "unknown");
	return false;
}

bool race_preempt_diag(const char *what)
{
	char model[32];

	if (preempt_model(model, sizeof(model))) {
		tap_diag("preemption model %s: a wakeup preempts %s at once",
			 model, what);
		return true;
	}
	tap_diag("preemption model %s: a wakeup does not preempt %s at once,",
		 model, what);
	tap_diag("  this kernel cannot expose the race (PREEMPT_RT or preempt=full can)");
	tap_diag("  the outcome is still checked");
	return false;
}

static int reraiser_wait(struct reraiser *d, int ms)
{
	struct pollfd pfd = { .fd = d->resample, .events = POLLIN };
	u64 v = 0;
	int r;

	r = poll(&pfd, 1, ms);
	if (r <= 0)
		return r ? -errno : -ETIMEDOUT;
	r = eventfd_drain(d->resample, &v);
	if (r)
		return r;
	d->resampled += v;
	if (v != 1)
		d->doubled++;
	return 0;
}

static void *reraiser_main(void *arg)
{
	struct reraiser *d = arg;

	d->ret = reraiser_wait(d, d->wait_ms);
	if (!d->ret)
		d->ret = eventfd_raise(d->trigger);
	if (d->ret)
		return NULL;
	d->raised++;
	if (d->after_raise)
		d->after_raise(d->arg);
	d->ret = reraiser_wait(d, d->quiet_ms);
	return NULL;
}

int reraiser_start(struct reraiser *d, int cpu, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	int explicit = PTHREAD_EXPLICIT_SCHED;
	pthread_attr_t attr;
	cpu_set_t one;
	int ret;

	d->raised = 0;
	d->resampled = 0;
	d->doubled = 0;
	d->ret = 0;
	pthread_attr_init(&attr);
	/*
	 * Created with its policy, not given it afterwards: it must be
	 * waiting for the resample before the caller goes on.
	 */
	if (cpu >= 0) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		ret = pthread_attr_setaffinity_np(&attr, sizeof(one), &one) ?:
		      pthread_attr_setinheritsched(&attr, explicit) ?:
		      pthread_attr_setschedpolicy(&attr, SCHED_FIFO) ?:
		      pthread_attr_setschedparam(&attr, &sp);
		if (ret)
			goto out;
	}
	ret = pthread_create(&d->thread, &attr, reraiser_main, d);
out:
	pthread_attr_destroy(&attr);
	if (ret)
		tap_diag("device thread (CPU %d, SCHED_FIFO %d): %s", cpu, prio,
			 strerror(ret));
	return -ret;
}

void reraiser_join(struct reraiser *d)
{
	pthread_join(d->thread, NULL);
}
