// SPDX-License-Identifier: GPL-2.0-only
/*
 * Delivery accounting of one-at-a-time device MSIs; see irq_acct.h.
 */
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fastpath_trace.h"
#include "irq_acct.h"
#include "proc_util.h"
#include "tap.h"

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

	dev_msi_raise(edu);
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
	dev_msi_ack(edu);
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

	if (fd < 0) {
		if (edu->msix)
			e1000e_unthrottle(edu);
		return vfio_set_irqs(edu->device_fd, dev_msi_index(edu),
				     VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	}
	return vfio_set_irqs(edu->device_fd, dev_msi_index(edu),
			     VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, fds);
}

void irq_acct_begin(struct irq_acct *c, const struct edu_dev *dev, bool fast)
{
	memset(c, 0, sizeof(*c));
	c->host = proc_interrupts_count(dev_msi_name(dev), dev->bdf);
	c->hits = -1;
	c->misses = -1;
	if (fast && !fastpath_trace_start())
		tap_diag("cannot start tracing the vfio_fastpath events");
}
