/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kit's version, the one place it is written: MODULE_VERSION of our
 * modules (modinfo, /sys/module/<name>/version).  dkms.conf and
 * debian/changelog carry the same string; make deb refuses a mismatch.
 */
#ifndef _LINUX_KVM_IRQBYPASS_VERSION_H
#define _LINUX_KVM_IRQBYPASS_VERSION_H

#define KVM_IRQBYPASS_VERSION "0.1"

#endif /* _LINUX_KVM_IRQBYPASS_VERSION_H */
