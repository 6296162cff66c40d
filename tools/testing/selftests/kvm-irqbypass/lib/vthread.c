// SPDX-License-Identifier: GPL-2.0-only
/*
 * A host thread per vCPU; see vthread.h.
 */
#include <pthread.h>
#include <string.h>

#include "tap.h"
#include "vthread.h"

static void *vt_main(void *arg)
{
	struct vthread *vt = arg;
	enum vt_op op;
	int ret;

	pthread_mutex_lock(&vt->lock);
	for (;;) {
		while (!vt->busy)
			pthread_cond_wait(&vt->cond, &vt->lock);
		op = vt->op;
		if (op == VT_EXIT)
			break;
		pthread_mutex_unlock(&vt->lock);
		if (op == VT_QUIET)
			ret = vcpu_run_quiet(vt->vcpu, vt->ms);
		else
			ret = vcpu_run_until(vt->vcpu, vt->port, NULL, vt->ms);
		pthread_mutex_lock(&vt->lock);
		vt->ret = ret;
		vt->busy = false;
		pthread_cond_broadcast(&vt->cond);
	}
	pthread_mutex_unlock(&vt->lock);
	return NULL;
}

void vt_post(struct vthread *vt, enum vt_op op, u16 port, int ms)
{
	pthread_mutex_lock(&vt->lock);
	while (vt->busy)
		pthread_cond_wait(&vt->cond, &vt->lock);
	vt->op = op;
	vt->port = port;
	vt->ms = ms;
	vt->busy = true;
	pthread_cond_broadcast(&vt->cond);
	pthread_mutex_unlock(&vt->lock);
}

int vt_wait(struct vthread *vt)
{
	int ret;

	pthread_mutex_lock(&vt->lock);
	while (vt->busy)
		pthread_cond_wait(&vt->cond, &vt->lock);
	ret = vt->ret;
	pthread_mutex_unlock(&vt->lock);
	return ret;
}

int vt_until(struct vthread *vt, u16 port, int ms)
{
	vt_post(vt, VT_RUN_UNTIL, port, ms);
	return vt_wait(vt);
}

int vt_start(struct vthread *vt, struct lite_vcpu *vcpu)
{
	int ret;

	vt->vcpu = vcpu;
	pthread_mutex_init(&vt->lock, NULL);
	pthread_cond_init(&vt->cond, NULL);
	ret = pthread_create(&vt->thread, NULL, vt_main, vt);
	if (ret) {
		tap_diag("pthread_create: %s", strerror(ret));
		return -ret;
	}
	vt->started = true;
	return 0;
}

void vt_stop(struct vthread *vt)
{
	if (!vt->started)
		return;
	vt_post(vt, VT_EXIT, 0, 0);
	pthread_join(vt->thread, NULL);
	pthread_cond_destroy(&vt->cond);
	pthread_mutex_destroy(&vt->lock);
	vt->started = false;
}
