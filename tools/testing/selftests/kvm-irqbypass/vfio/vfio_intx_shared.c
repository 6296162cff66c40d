// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_intx_shared: vfio_intx with a second edu on the same host INTx line
 * (the testbed puts one at 00:07.0, which q35 routes to the same PIRQ as
 * 00:03.0): the other device's interrupts are signalled once on its own
 * eventfd and never reach the guest, whose device keeps its exactly-once
 * delivery through the fast path.
 */
#define VFIO_INTX_SHARED	1
#include "vfio_intx.c"
