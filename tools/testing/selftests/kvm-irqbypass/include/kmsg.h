/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef KVM_IRQBYPASS_KMSG_H
#define KVM_IRQBYPASS_KMSG_H

/*
 * Kernel log watch: kmsg_watch() remembers the end of the log,
 * kmsg_splats() prints and counts the lines added since that match a WARN,
 * BUG, oops, KASAN, lockdep, hung-task or kmemleak report.  -1 on error.
 */
int kmsg_watch(void);
int kmsg_splats(int fd);

#endif /* KVM_IRQBYPASS_KMSG_H */
