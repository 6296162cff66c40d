// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_intx_shared_mixed: vfio_intx_shared with the other edu's line
 * requested with vfio_pci_core.fastpath=0: the fast handler and stock's
 * (force-threaded on PREEMPT_RT) share one host line.
 */
#define VFIO_INTX_SHARED	2
#include "vfio_intx.c"
