/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef KVM_IRQBYPASS_RAISER_H
#define KVM_IRQBYPASS_RAISER_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>

#include "kvm_util_lite.h"
#include "vfio_util_lite.h"

/*
 * A host thread that raises the edu's interrupt a little after each
 * raiser_post(), so that it fires while the posting thread is back in
 * KVM_RUN with its vCPU halted (as a device interrupt usually finds a
 * guest that waits for it), not while the vCPU thread is in userspace.
 */
struct raiser {
	struct edu_dev *edu;
	unsigned int delay_us;
	sem_t go;
	pthread_t thread;
	bool started, stop;
	unsigned int raised;	/* raises done, read with raiser_raised() */
};

int raiser_start(struct raiser *r, struct edu_dev *edu, unsigned int delay_us);
void raiser_post(struct raiser *r);
unsigned int raiser_raised(struct raiser *r);
void raiser_stop(struct raiser *r);

/*
 * The guest the raised INTx goes to: IOAPIC @pin level-triggered on
 * TEST_LEVEL_VECTOR; its ISR acks the edu through BAR0 mapped at
 * @bar0_gpa, EOIs and exits to GUEST_PORT_POST_EOI, until the VM is
 * destroyed.  @extra_flags: GUEST_F_SPIN for a vCPU that stays in the guest.
 */
struct guest_params raiser_intx_guest(u32 pin, u32 bar0_gpa, u32 extra_flags);

#endif /* KVM_IRQBYPASS_RAISER_H */
