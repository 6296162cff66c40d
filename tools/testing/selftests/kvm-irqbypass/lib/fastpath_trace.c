// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kit's fast-path parameters and tracepoints; see fastpath_trace.h.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fastpath_trace.h"
#include "proc_util.h"
#include "tap.h"

#define TRACEFS		"/sys/kernel/tracing"

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
	return write_text_file(TRACEFS "/buffer_size_kb", "16384") &&
	       (!trace_enabled_here ||
		write_text_file(TRACEFS "/events/vfio_fastpath/enable", "1")) &&
	       write_text_file(TRACEFS "/trace", "");
}

bool fastpath_trace_clear(void)
{
	return write_text_file(TRACEFS "/trace", "");
}

void fastpath_trace_stop(void)
{
	if (trace_enabled_here)
		write_text_file(TRACEFS "/events/vfio_fastpath/enable", "0");
	trace_enabled_here = false;
}

void fastpath_trace_count(int irq, long long *hits, long long *misses)
{
	char line[512], hit[64], drop[64], miss[64];
	unsigned long long kept = 0, written = 0;
	FILE *f;

	*hits = -1;
	*misses = -1;
	f = fopen(TRACEFS "/trace", "re");
	if (!f)
		return;
	if (irq < 0) {	/* any irq: its vectors came and went */
		snprintf(hit, sizeof(hit), "vfio_fastpath_hit: irq=");
		snprintf(drop, sizeof(drop), "vfio_fastpath_drop: irq=");
		snprintf(miss, sizeof(miss), "vfio_fastpath_miss: irq=");
	} else {
		snprintf(hit, sizeof(hit), "vfio_fastpath_hit: irq=%d ", irq);
		snprintf(drop, sizeof(drop), "vfio_fastpath_drop: irq=%d ", irq);
		snprintf(miss, sizeof(miss), "vfio_fastpath_miss: irq=%d ", irq);
	}
	*hits = 0;
	*misses = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "LOST"))
			tap_diag("trace: %s", line);
		if (sscanf(line, "# entries-in-buffer/entries-written: %llu/%llu",
			   &kept, &written) == 2)
			continue;
		if (strstr(line, hit) || strstr(line, drop))
			(*hits)++;
		else if (strstr(line, miss))
			(*misses)++;
	}
	fclose(f);
	/*
	 * The buffer overwrites its oldest events when full (81,706 MSIs in
	 * stress_irqfd_churn's 187 s on the rt debug kernel, with kvm_set_irq
	 * on too): the counts would be short, not wrong.  Say so, count none.
	 */
	if (written > kept) {
		tap_diag("trace: %llu of %llu events overwritten, hits/misses not counted",
			 written - kept, written);
		*hits = -1;
		*misses = -1;
	}
}

void fastpath_trace_swaps(long long *in_place, long long *stock)
{
	char line[512], *p;
	FILE *f;

	*in_place = -1;
	*stock = -1;
	f = fopen(TRACEFS "/trace", "re");
	if (!f)
		return;
	*in_place = 0;
	*stock = 0;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "vfio_fastpath_swap: ");
		if (!p)
			continue;
		p = strstr(p, " err=");
		if (p && atoi(p + 5) == 0)
			(*in_place)++;
		else
			(*stock)++;
	}
	fclose(f);
}

void fastpath_trace_results(int irq, struct fastpath_results *res)
{
	char line[512], irqs[32];
	const char *p;
	FILE *f;

	memset(res, 0, sizeof(*res));
	f = fopen(TRACEFS "/trace", "re");
	if (!f) {
		res->delivered = -1;
		return;
	}
	snprintf(irqs, sizeof(irqs), " irq=%d ", irq);
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "vfio_fastpath_");
		if (!p || (irq >= 0 && !strstr(p, irqs)))
			continue;
		if (strstr(p, "result=delivered"))
			res->delivered++;
		else if (strstr(p, "result=queued"))
			res->queued++;
		else if (strstr(p, "result=merged"))
			res->merged++;
		else if (strstr(p, "result=no_target"))
			res->no_target++;
		else if (strstr(p, "vfio_fastpath_miss: "))
			res->misses++;
	}
	fclose(f);
}

void fastpath_trace_storm(int irq, long long *on, long long *off,
			  long long *throttled)
{
	char line[512], irqs[32];
	const char *p;
	FILE *f;

	*on = *off = *throttled = -1;
	f = fopen(TRACEFS "/trace", "re");
	if (!f)
		return;
	*on = *off = *throttled = 0;
	snprintf(irqs, sizeof(irqs), " irq=%d ", irq);
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "vfio_fastpath_");
		if (!p || !strstr(p, irqs))
			continue;
		if (strstr(p, "vfio_fastpath_storm: ") && strstr(p, " on=1 "))
			(*on)++;
		else if (strstr(p, "vfio_fastpath_storm: "))
			(*off)++;
		else if (strstr(p, "vfio_fastpath_miss: ") &&
			 strstr(p, " err=-105"))
			(*throttled)++;
	}
	fclose(f);
}
