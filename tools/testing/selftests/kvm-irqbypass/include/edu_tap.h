/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef KVM_IRQBYPASS_EDU_TAP_H
#define KVM_IRQBYPASS_EDU_TAP_H

#include <stdbool.h>

#include "vfio_util_lite.h"

/*
 * edu_open(), alive and bus master, as a test's TAP line: 0; -ENODEV after
 * skipping the whole plan; -EIO after a "not ok".  (Not in the shared
 * library: irqlat and lifecycle report without TAP.)
 */
int edu_open_tap(struct edu_dev *edu);

#endif /* KVM_IRQBYPASS_EDU_TAP_H */
