// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whole-file access to procfs, sysfs and tracefs, and the scheduler's
 * context-switch counters; see proc_util.h.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc_util.h"
#include "tap.h"

bool read_text_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return true;
}

bool write_text_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok;
}

long long proc_stat_ctxt(void)
{
	long long v = -1;
	char line[256];
	FILE *f;

	f = fopen("/proc/stat", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ctxt %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

long long thread_ctxsw(void)
{
	long long v, sum = 0;
	char line[256];
	FILE *f;

	f = fopen("/proc/thread-self/status", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1)
			sum += v;
	fclose(f);
	return sum;
}

/* Writes @val to /proc/irq/N/@file for each irq named @name and @bdf. */
static int proc_irq_write(const char *name, const char *bdf, const char *file,
			  const char *val)
{
	char line[4096], path[64];
	int done = 0;
	FILE *f, *w;

	f = fopen("/proc/interrupts", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;

		while (*p == ' ')
			p++;
		if (!isdigit((unsigned char)*p) || !strstr(line, name) ||
		    !strstr(line, bdf))
			continue;
		snprintf(path, sizeof(path), "/proc/irq/%d/%s", atoi(p), file);
		w = fopen(path, "we");
		if (!w || fputs(val, w) < 0 || fclose(w)) {
			tap_diag("%s: cannot write %s", path, val);
		} else {
			tap_diag("%s: %s", path, val);
			done++;
		}
	}
	fclose(f);
	return done;
}

int proc_irq_pin(const char *name, const char *bdf, int cpu)
{
	char val[16];

	if (cpu < 0)
		return 0;
	snprintf(val, sizeof(val), "%d", cpu);
	return proc_irq_write(name, bdf, "smp_affinity_list", val);
}

int proc_irq_unpin(const char *name, const char *bdf)
{
	char mask[256];

	if (!read_text_file("/proc/irq/default_smp_affinity", mask, sizeof(mask)))
		return 0;
	mask[strcspn(mask, "\n")] = '\0';
	return proc_irq_write(name, bdf, "smp_affinity", mask);
}
