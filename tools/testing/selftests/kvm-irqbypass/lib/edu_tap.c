// SPDX-License-Identifier: GPL-2.0-only
/*
 * The edu's opening as a selftest's TAP line; see edu_tap.h.
 */
#include <errno.h>

#include "edu_tap.h"
#include "tap.h"

int edu_open_tap(struct edu_dev *edu)
{
	int ret = edu_open(edu);

	if (ret == -ENODEV) {
		tap_skip_rest("no edu device (1234:11e8) on this machine");
		return ret;
	}
	if (!tap_result(!ret && !edu_check_alive(edu) &&
			!edu_enable_bus_master(edu),
			"edu opened through vfio-pci, BAR0 mapped and alive"))
		return -EIO;
	return 0;
}
