/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef KVM_IRQBYPASS_PROC_UTIL_H
#define KVM_IRQBYPASS_PROC_UTIL_H

#include <stdbool.h>
#include <stddef.h>

/* Whole-file helpers for sysfs, procfs and tracefs. */
bool read_text_file(const char *path, char *buf, size_t size);
bool write_text_file(const char *path, const char *s);

/* /proc/stat "ctxt": context switches on all CPUs since boot; -1 on error. */
long long proc_stat_ctxt(void);
/* The calling thread's voluntary + involuntary context switches. */
long long thread_ctxsw(void);

/*
 * Steer every host irq whose /proc/interrupts line names both @name and
 * @bdf to @cpu (nothing if @cpu < 0); each result is a TAP diagnostic.
 * Returns how many were steered.
 */
int proc_irq_pin(const char *name, const char *bdf, int cpu);
/* The same irqs back to /proc/irq/default_smp_affinity; how many. */
int proc_irq_unpin(const char *name, const char *bdf);

#endif /* KVM_IRQBYPASS_PROC_UTIL_H */
