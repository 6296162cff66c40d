/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Minimal TAP 13 producer.  Every test binary declares its plan up front
 * and tap_finish() reports any planned test that was never reached as
 * "not ok", so an early abort can never look like a short, passing run.
 */
#ifndef KVM_IRQBYPASS_TAP_H
#define KVM_IRQBYPASS_TAP_H

#include <stdbool.h>
#include <stdio.h>
#include <stdnoreturn.h>

void tap_plan(unsigned int count);
/* Returns ok, so callers can chain on the outcome. */
bool tap_result_fmt(bool ok, const char *fmt, ...);
void tap_skip_fmt(const char *fmt, ...);
/* Skip every planned test that has not been reported yet. */
void tap_skip_rest_fmt(const char *fmt, ...);
void tap_diag_fmt(const char *fmt, ...);
noreturn void tap_bail_fmt(const char *fmt, ...);
/* Close the plan; returns the process exit code (0 iff all ok). */
int tap_finish(void);

/*
 * gcc checks the format of every printf() call it parses, reachable or
 * not: the dead call below lends that check to the wrappers.
 */
#define TAP_CHECK_FORMAT(...)	((void)(0 && printf(__VA_ARGS__)))

#define tap_result(ok, ...) \
	(TAP_CHECK_FORMAT(__VA_ARGS__), tap_result_fmt(ok, __VA_ARGS__))
#define tap_skip(...) \
	(TAP_CHECK_FORMAT(__VA_ARGS__), tap_skip_fmt(__VA_ARGS__))
#define tap_skip_rest(...) \
	(TAP_CHECK_FORMAT(__VA_ARGS__), tap_skip_rest_fmt(__VA_ARGS__))
#define tap_diag(...) \
	(TAP_CHECK_FORMAT(__VA_ARGS__), tap_diag_fmt(__VA_ARGS__))
#define tap_bail(...) \
	(TAP_CHECK_FORMAT(__VA_ARGS__), tap_bail_fmt(__VA_ARGS__))

#endif /* KVM_IRQBYPASS_TAP_H */
