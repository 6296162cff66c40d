/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef KVM_IRQBYPASS_VTHREAD_H
#define KVM_IRQBYPASS_VTHREAD_H

#include <pthread.h>
#include <stdbool.h>

#include "kvm_util_lite.h"

/*
 * A host thread that owns one vCPU: the caller posts a request (run until a
 * port, or a quiet window) and later waits for its result, so KVM_RUN of
 * the vCPU always runs on the same thread (KVM waits for an RCU grace
 * period when the thread of a vCPU changes) and several vCPUs can run at
 * once.
 */
enum vt_op { VT_RUN_UNTIL, VT_QUIET, VT_EXIT };

struct vthread {
	struct lite_vcpu *vcpu;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool busy;		/* a request is posted and not finished */
	enum vt_op op;
	u16 port;
	int ms;
	int ret;
};

int vt_start(struct vthread *vt, struct lite_vcpu *vcpu);
void vt_stop(struct vthread *vt);
/* Post a request; waits for the previous one to finish first. */
void vt_post(struct vthread *vt, enum vt_op op, u16 port, int ms);
/* The result of the last request, once it has finished. */
int vt_wait(struct vthread *vt);
/* Run the vCPU (on its thread) until it writes @port. */
int vt_until(struct vthread *vt, u16 port, int ms);

#endif /* KVM_IRQBYPASS_VTHREAD_H */
