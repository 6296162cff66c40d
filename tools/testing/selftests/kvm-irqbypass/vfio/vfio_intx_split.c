// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_intx_split: vfio_intx on a split irqchip, end to end through
 * KVM_CAP_SPLIT_IRQCHIP_RESAMPLE with NO_EOI_EXIT: edu level INTx -> vfio
 * (masks) -> resampling KVM_IRQFD on a level MSI route of pin 5 -> guest
 * ISR (acks the edu through BAR0) -> EOI -> resamplefd -> vfio unmask.
 */
#define VFIO_INTX_SPLIT	1
#include "vfio_intx.c"
