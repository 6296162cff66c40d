/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM's per-vCPU binary statistics (KVM_GET_STATS_FD), and the waits of the
 * posted-interrupt tests built on them.
 */
#ifndef KVM_IRQBYPASS_VCPU_STATS_H
#define KVM_IRQBYPASS_VCPU_STATS_H

#include <stdbool.h>
#include <sys/types.h>

#include "kvm_util_lite.h"

/*
 * exits: VM exits; irq_exits: external-interrupt exits; halt_exits: HLT
 * exits; req_event: KVM_REQ_EVENT requests handled by vcpu_enter_guest();
 * irq_injections: interrupts injected through the VM-entry interruption
 * information.
 */
enum vcpu_stat { VS_EXITS, VS_IRQ_EXITS, VS_HALT_EXITS, VS_REQ_EVENT,
		 VS_IRQ_INJECTIONS, VS_NR };

struct vcpu_stats {
	int fd;			/* -1: not open */
	off_t data_offset;
	off_t offset[VS_NR];	/* of each counter in the data block */
};

/* Open the vCPU's statistics; 0 or -errno, with a TAP diagnostic. */
int vcpu_stats_open(struct lite_vcpu *vcpu, struct vcpu_stats *s);
void vcpu_stats_close(struct vcpu_stats *s);
u64 vcpu_stats_read(const struct vcpu_stats *s, enum vcpu_stat k);
void vcpu_stats_snap(const struct vcpu_stats *s, u64 *v);
/* Wait for a HLT exit after the one counted in *halts; false on timeout. */
bool vcpu_stats_wait_halted(const struct vcpu_stats *s, u64 *halts,
			    int timeout_ms);

/* kvm_intel loaded with enable_apicv=Y. */
bool kvm_intel_apicv(void);
/* Pin the calling thread to @cpu. */
void pin_self(int cpu);
/* Wait until the vCPU's ISR count reaches @want; false after timeout_ms. */
bool vcpu_wait_count(struct lite_vcpu *vcpu, u32 want, int timeout_ms);

#endif /* KVM_IRQBYPASS_VCPU_STATS_H */
