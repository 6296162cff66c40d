/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef KVM_IRQBYPASS_VCPU_RUNNER_H
#define KVM_IRQBYPASS_VCPU_RUNNER_H

#include <pthread.h>
#include <stdbool.h>

#include "kvm_util_lite.h"

/* A vCPU that keeps the guest running in a thread; err set on a failure. */
struct vcpu_runner {
	struct lite_vm *vm;
	struct lite_vcpu *vcpu;	/* NULL: vCPU 0 */
	pthread_t thread;
	int cpu;		/* pin the thread to this CPU, -1: no pinning */
	bool running;
	bool stop;
	int err;
};

int vcpu_runner_start(struct vcpu_runner *r, struct lite_vm *vm, int cpu);
/* The same for another vCPU than vCPU 0. */
int vcpu_runner_start_vcpu(struct vcpu_runner *r, struct lite_vcpu *vcpu,
			   int cpu);
void vcpu_runner_stop(struct vcpu_runner *r);

#endif /* KVM_IRQBYPASS_VCPU_RUNNER_H */
