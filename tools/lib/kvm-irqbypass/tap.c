// SPDX-License-Identifier: GPL-2.0-only
/*
 * Minimal TAP 13 producer for the kvm-irqbypass selftests.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tap.h"

static unsigned int tap_planned;
static unsigned int tap_next = 1;
static unsigned int tap_failed;

void tap_plan(unsigned int count)
{
	/* Line buffering keeps our lines ordered against the kernel's dmesg. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	tap_planned = count;
	printf("TAP version 13\n1..%u\n", count);
}

static void tap_vline(const char *prefix, const char *fmt, va_list ap)
{
	printf("%s", prefix);
	vprintf(fmt, ap);
	putchar('\n');
}

bool tap_result_fmt(bool ok, const char *fmt, ...)
{
	char prefix[32];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%sok %u - ", ok ? "" : "not ",
		 tap_next++);
	if (!ok)
		tap_failed++;
	va_start(ap, fmt);
	tap_vline(prefix, fmt, ap);
	va_end(ap);
	return ok;
}

void tap_skip_fmt(const char *fmt, ...)
{
	char prefix[32];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "ok %u # SKIP ", tap_next++);
	va_start(ap, fmt);
	tap_vline(prefix, fmt, ap);
	va_end(ap);
}

void tap_skip_rest_fmt(const char *fmt, ...)
{
	char prefix[32];
	va_list ap;

	while (tap_next <= tap_planned) {
		snprintf(prefix, sizeof(prefix), "ok %u # SKIP ", tap_next++);
		va_start(ap, fmt);
		tap_vline(prefix, fmt, ap);
		va_end(ap);
	}
}

void tap_diag_fmt(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vline("# ", fmt, ap);
	va_end(ap);
}

noreturn void tap_bail_fmt(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vline("Bail out! ", fmt, ap);
	va_end(ap);
	exit(1);
}

int tap_finish(void)
{
	while (tap_next <= tap_planned)
		tap_result_fmt(false, "not reached (an earlier step failed)");
	if (tap_next - 1 > tap_planned) {
		tap_diag("reported %u results for a plan of %u",
			 tap_next - 1, tap_planned);
		return 1;
	}
	return tap_failed ? 1 : 0;
}
