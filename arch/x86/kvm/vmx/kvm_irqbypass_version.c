// SPDX-License-Identifier: GPL-2.0-only
#include <linux/kvm_irqbypass_version.h>
#include <linux/module.h>

MODULE_VERSION(KVM_IRQBYPASS_VERSION);
