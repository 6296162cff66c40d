// SPDX-License-Identifier: GPL-2.0-only
/* The kit's version in a module with no other file of ours (modinfo). */
#include <linux/kvm_irqbypass_version.h>
#include <linux/module.h>

MODULE_VERSION(KVM_IRQBYPASS_VERSION);
