/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Interface of fastpath_producer.ko, shared by the module and the selftests
 * that drive it.  One producer per open file.
 */
#ifndef KIT_FASTPATH_PRODUCER_H
#define KIT_FASTPATH_PRODUCER_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define KIT_FP_DEVICE	"/dev/kit_fastpath_producer"

/* KIT_FP_PAIR: register a fast producer with this eventfd as its token. */
struct kit_fp_pair {
	__s32 eventfd;
	__u32 pad;
};

/* KIT_FP_FIRE: fire @count times, every @period_ns, from an hrtimer. */
struct kit_fp_fire {
	__u32 count;
	__u32 period_ns;
};

/*
 * KIT_FP_COUNTERS, since the last KIT_FP_PAIR: @fired, @hits and @misses of
 * the fast handler, @signalled misses; @active while fires are pending.
 */
struct kit_fp_counters {
	__u64 fired;
	__u64 hits;
	__u64 misses;
	__u64 signalled;
	__u32 active;
	__u32 pad;
};

#define KIT_FP_IOC	0xfb
#define KIT_FP_PAIR	_IOW(KIT_FP_IOC, 1, struct kit_fp_pair)
#define KIT_FP_UNPAIR	_IO(KIT_FP_IOC, 2)
#define KIT_FP_FIRE	_IOW(KIT_FP_IOC, 3, struct kit_fp_fire)
#define KIT_FP_COUNTERS	_IOR(KIT_FP_IOC, 4, struct kit_fp_counters)

#endif /* KIT_FASTPATH_PRODUCER_H */
