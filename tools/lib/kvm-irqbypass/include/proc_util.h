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

#endif /* KVM_IRQBYPASS_PROC_UTIL_H */
