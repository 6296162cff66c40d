// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM's per-vCPU binary statistics; see vcpu_stats.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "proc_util.h"
#include "tap.h"
#include "vcpu_stats.h"

static const char *const stat_names[VS_NR] = {
	"exits", "irq_exits", "halt_exits", "req_event", "irq_injections",
};

/* The offsets of the counters we read, from the descriptors. */
int vcpu_stats_open(struct lite_vcpu *vcpu, struct vcpu_stats *s)
{
	struct kvm_stats_header h;
	struct kvm_stats_desc *d;
	unsigned int i, k, found = 0;
	size_t dsize;
	char *descs;

	s->fd = ioctl(vcpu->fd, KVM_GET_STATS_FD, NULL);
	if (s->fd < 0) {
		tap_diag("KVM_GET_STATS_FD: %s", strerror(errno));
		return -errno;
	}
	if (pread(s->fd, &h, sizeof(h), 0) != sizeof(h))
		return -EIO;
	dsize = sizeof(*d) + h.name_size;
	descs = calloc(h.num_desc, dsize);
	if (!descs)
		return -ENOMEM;
	if (pread(s->fd, descs, h.num_desc * dsize, h.desc_offset) !=
	    (ssize_t)(h.num_desc * dsize)) {
		free(descs);
		return -EIO;
	}
	s->data_offset = h.data_offset;
	for (i = 0; i < h.num_desc; i++) {
		d = (struct kvm_stats_desc *)(descs + i * dsize);
		for (k = 0; k < VS_NR; k++) {
			if (strcmp(d->name, stat_names[k]))
				continue;
			s->offset[k] = d->offset;
			found |= 1u << k;
		}
	}
	free(descs);
	for (k = 0; k < VS_NR; k++) {
		if (!(found & (1u << k))) {
			tap_diag("vCPU statistic %s: not found", stat_names[k]);
			return -ENOENT;
		}
	}
	return 0;
}

void vcpu_stats_close(struct vcpu_stats *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

u64 vcpu_stats_read(const struct vcpu_stats *s, enum vcpu_stat k)
{
	u64 v = 0;

	if (pread(s->fd, &v, sizeof(v), s->data_offset + s->offset[k]) != sizeof(v))
		return 0;
	return v;
}

void vcpu_stats_snap(const struct vcpu_stats *s, u64 *v)
{
	for (int k = 0; k < VS_NR; k++)
		v[k] = vcpu_stats_read(s, k);
}

bool vcpu_stats_wait_halted(const struct vcpu_stats *s, u64 *halts,
			    int timeout_ms)
{
	long long end = now_us() + timeout_ms * 1000LL;
	u64 h;

	while ((h = vcpu_stats_read(s, VS_HALT_EXITS)) <= *halts) {
		if (now_us() > end)
			return false;
		usleep(50);
	}
	*halts = h;
	return true;
}

bool kvm_intel_apicv(void)
{
	char buf[8];

	return read_text_file("/sys/module/kvm_intel/parameters/enable_apicv",
			      buf, sizeof(buf)) && buf[0] == 'Y';
}

void pin_self(int cpu)
{
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
}

bool vcpu_wait_count(struct lite_vcpu *vcpu, u32 want, int timeout_ms)
{
	long long end = now_us() + timeout_ms * 1000LL;

	while (vcpu_count(vcpu) < want) {
		if (now_us() > end)
			return false;
		usleep(50);
	}
	return true;
}
