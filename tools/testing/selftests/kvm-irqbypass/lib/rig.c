// SPDX-License-Identifier: GPL-2.0-only
/*
 * The campaign's MSI rig; see rig.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fastpath_trace.h"
#include "irq_acct.h"
#include "kmsg.h"
#include "proc_util.h"
#include "rig.h"
#include "tap.h"

int rig_irqfd(struct msi_rig *r, bool assign)
{
	int ret = __vm_irqfd(r->vm, r->efd, TEST_MSI_GSI,
			   assign ? 0 : KVM_IRQFD_FLAG_DEASSIGN, 0);

	if (!ret)
		r->irqfd = assign;
	return ret;
}

int rig_vm_up(struct msi_rig *r)
{
	struct guest_params params = {
		.vector = TEST_MSI_VECTOR,
		.target = ~0u,
	};

	r->vm = vm_create_ram(IRQCHIP_KERNEL, r->ram);
	if (!r->vm || vm_start_guest(r->vm, &params) ||
	    guest_run_until(r->vm, GUEST_PORT_READY, NULL, r->timeout) ||
	    vm_route_msi(r->vm, TEST_MSI_GSI, TEST_MSI_VECTOR) ||
	    rig_irqfd(r, true))
		return -EIO;
	r->sink.guest_count = guest_count_ptr(r->vm->ram);
	r->sink.guest_seen = READ_ONCE(*r->sink.guest_count);
	return vcpu_runner_start(&r->vcpu, r->vm, -1);
}

void rig_vm_down(struct msi_rig *r)
{
	vcpu_runner_stop(&r->vcpu);
	vm_destroy(r->vm);
	r->vm = NULL;
	r->irqfd = false;
	/* Caller-owned RAM outlives the VM: keep counting from it. */
	if (!r->ram)
		r->sink.guest_count = NULL;
}

int rig_setup(struct msi_rig *r, u8 *ram)
{
	return rig_setup_dev(r, ram, false);
}

int rig_setup_dev(struct msi_rig *r, u8 *ram, bool msix)
{
	char name[32];
	int ret;

	memset(r, 0, sizeof(*r));
	r->efd = -1;
	r->irq = -1;
	r->kmsg = kmsg_watch();
	r->ram = ram;
	r->timeout = test_timeout_ms();
	pthread_mutex_init(&r->lock, NULL);
	ret = msix ? e1000e_open(&r->edu, 0) : edu_open(&r->edu);
	if (ret)
		return ret;
	r->efd = msi_eventfd();
	r->sink.efd = r->efd;
	if (r->efd < 0 || (!msix && edu_check_alive(&r->edu)) ||
	    edu_enable_bus_master(&r->edu) || rig_vm_up(r) ||
	    edu_msi_trigger(&r->edu, r->efd))
		return -EIO;
	snprintf(name, sizeof(name), "%s0]", dev_msi_name(&r->edu));
	r->irq = proc_interrupts_irq(name, r->edu.bdf);
	r->fast = fastpath_enabled();
	tap_diag("%s %s irq %d, fast path %s", msix ? "e1000e" : "edu",
		 msix ? "MSI-X vector 0" : "MSI", r->irq,
		 r->fast ? "on (tracepoints counted)" : "off or stock modules");
	return 0;
}

void rig_teardown(struct msi_rig *r)
{
	vcpu_runner_stop(&r->vcpu);
	if (r->fast)
		fastpath_trace_stop();
	if (r->edu.device_fd >= 0 && r->edu.bar0)
		edu_msi_trigger(&r->edu, -1);
	if (r->vm && r->irqfd)
		rig_irqfd(r, false);
	vm_destroy(r->vm);
	r->vm = NULL;
	if (r->efd >= 0)
		close(r->efd);
	r->efd = -1;
	edu_close(&r->edu);
	if (r->kmsg >= 0)
		close(r->kmsg);
	r->kmsg = -1;
}

int rig_raise(struct msi_rig *r, struct irq_acct *c)
{
	int ret;

	pthread_mutex_lock(&r->lock);
	ret = edu_raise_wait(&r->edu, &r->sink, c, r->timeout, &r->vcpu.err);
	pthread_mutex_unlock(&r->lock);
	return ret;
}

void rig_settle(struct msi_rig *r, struct irq_acct *c, int ms)
{
	usleep(ms * 1000);
	msi_sink_collect(&r->sink, c);
}

void rig_phase_begin(struct msi_rig *r, struct irq_acct *c)
{
	irq_acct_begin(c, &r->edu, r->fast);
}

void rig_phase_end(struct msi_rig *r, struct irq_acct *c, const char *name)
{
	long long host;

	rig_settle(r, c, 100);
	host = proc_interrupts_count(dev_msi_name(&r->edu), r->edu.bdf);
	c->host = c->host >= 0 && host >= 0 ? host - c->host : -1;
	if (r->fast)
		fastpath_trace_count(r->irq, &c->hits, &c->misses);
	irq_acct_print(name, c);
}

int rig_run_control(struct msi_rig *r, void *(*fn)(void *), void *arg,
		    struct irq_acct *c, struct prng *p, u32 gap_us)
{
	int ret = 0;
	void *done;

	r->ctl_stop = 0;
	r->ctl_ops = 0;
	r->ctl_err = 0;
	if (pthread_create(&r->ctl, NULL, fn, arg))
		return -EAGAIN;
	/* pthread_tryjoin_np: raise until the control thread is done. */
	while (pthread_tryjoin_np(r->ctl, &done) == EBUSY) {
		ret = rig_raise(r, c);
		if (ret) {
			tap_diag("raise %llu: no ISR run, no eventfd count in %d ms (vCPU %d)",
				 c->raised, r->timeout, r->vcpu.err);
			WRITE_ONCE(r->ctl_stop, 1);
			pthread_join(r->ctl, &done);
			break;
		}
		prng_usleep(p, gap_us);
	}
	return ret;
}

void rig_report(struct msi_rig *r, const char *name, const struct irq_acct *c,
		bool host_exact)
{
	int splats;

	tap_result(irq_acct_exact(c) && c->raised > 0 &&
		   (!host_exact || c->host < 0 ||
		    c->host == (long long)c->raised),
		   "%s: %llu MSIs raised = %llu guest + %llu eventfd + %llu absorbed, none doubled",
		   name, c->raised, c->guest, c->signalled, c->absorbed);
	/* An absorbed MSI may not have reached the handler at all. */
	if (r->fast && c->hits >= 0)
		tap_result(c->hits + c->misses <= (long long)c->raised &&
			   c->hits + c->misses + (long long)c->absorbed >=
			   (long long)c->raised,
			   "%s: fast path saw each MSI once (%lld hits, %lld misses)",
			   name, c->hits, c->misses);
	else
		tap_skip("%s: fast path off or stock modules, no tracepoint count",
			 name);
	splats = kmsg_splats(r->kmsg);
	tap_result(splats == 0, "%s: kernel log clean (%d splats)", name,
		   splats);
}

int rig_setup_tap(struct msi_rig *r, u8 *ram)
{
	int ret = rig_setup(r, ram);

	if (ret == -ENODEV) {
		tap_skip_rest("no edu device (1234:11e8) on this machine");
		return ret;
	}
	if (!tap_result(!ret, "setup: edu MSI -> eventfd -> KVM_IRQFD on MSI route GSI %u",
			TEST_MSI_GSI))
		return -EIO;
	return 0;
}

int rig_control_phase(struct msi_rig *r, const char *name,
		      void *(*fn)(void *), void *arg, struct prng *p,
		      long ops, long long deadline, struct irq_acct *c)
{
	long long start = now_us();
	int ret;

	rig_phase_begin(r, c);
	ret = rig_run_control(r, fn, arg, c, p, 100);
	rig_phase_end(r, c, name);
	tap_diag("%s: %lu of %ld operations, %llu MSIs in %lld ms", name,
		 r->ctl_ops, ops, c->raised, (now_us() - start) / 1000);
	tap_result(!ret && !r->ctl_err && r->ctl_ops > 0 &&
		   (r->ctl_ops == (unsigned long)ops || deadline_passed(deadline)),
		   "%s: %lu operations while MSIs fly", name, r->ctl_ops);
	rig_report(r, name, c, true);
	return ret;
}

int rig_control_main(const char *prog, const char *name,
		     unsigned int nr_tests, const char *ops_env, long ops_def,
		     long secs_def, void *(*fn)(void *),
		     void (*after)(struct rig_control *ctl,
				   const struct irq_acct *c))
{
	u64 seed = stress_init(prog);
	struct rig_control ctl = { 0 };
	int fds = count_open_fds();
	struct irq_acct c;
	struct prng p;
	int ret;

	tap_plan(nr_tests);
	close(kvm_open_or_bail());
	ctl.ops = env_long(ops_env, ops_def, 1);
	ctl.deadline = now_us() +
		       env_long("KVM_IRQBYPASS_SECONDS", secs_def, 1) * 1000000;
	prng_seed(&p, seed);
	prng_seed(&ctl.prng, seed + 1);

	ret = rig_setup_tap(&ctl.r, NULL);
	if (ret == -ENODEV)
		return tap_finish();
	if (!ret) {
		rig_control_phase(&ctl.r, name, fn, &ctl, &p, ctl.ops,
				  ctl.deadline, &c);
		if (after)
			after(&ctl, &c);
	}
	rig_teardown(&ctl.r);
	ret = count_open_fds();
	tap_result(ret == fds, "no descriptor left open (%d before, %d after)",
		   fds, ret);
	return tap_finish();
}
