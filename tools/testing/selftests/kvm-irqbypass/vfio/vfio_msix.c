// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_msix: MSI-X through vfio-pci into a KVM guest, and the trigger swap
 * of a live MSI-X vector, with a real device: QEMU's e1000e (82574L, five
 * MSI-X vectors), the q35 machine's default NIC in every testbed boot.
 *
 * The host raises one interrupt at a time with a cause bit written to the
 * e1000e's ICS register (IVAR maps each cause to its own vector) and waits
 * for it in the guest or on the vector's eventfd, so every interrupt is
 * accounted for: raised == host vfio-msix interrupts == delivered.
 *
 * The swap phases move vector 0 between its irqfd's eventfd and one that
 * has no irqfd (what QEMU does on each guest mask and unmask).  The kit
 * switches the eventfd in place when the vector's MSI-X table entry still
 * holds the message the irq core cached; the second pair of swaps changes
 * the entry first, through the table's mmap (the testbed has interrupt
 * remapping, so the entry is only a handle), and nothing may fire with it:
 * then the swap must go the stock way, free and request, which writes the
 * cached message back.  The entry read after each swap, and the interrupts
 * that follow it, show which one happened and that it worked.
 *
 * The affinity phase moves vector 0 between two CPUs and swaps after each
 * move.  Without interrupt remapping (check.sh's msix-noremap step boots
 * with intremap=off) every move makes the irq core write a new message to
 * the entry and its cache: the swap must still find the entry intact and
 * switch in place (the vfio_fastpath_swap tracepoint tells), and the
 * interrupts must follow the vector to its new CPU.  With remapping the
 * entry is a handle that no move changes.
 *
 * QEMU 7.2's e1000e throttles each vector and, once it has held one
 * interrupt back, sends every later one on that vector twice: seen here on
 * the rt kernel with raises 2 ms apart per vector, 597 messages for 500
 * raises, one vector doubled from its fourth raise on.  The timer that
 * ends a hold runs in QEMU's main loop, so no spacing rules it out;
 * e1000e_fire() runs the device's timers before each raise instead
 * (e1000e_unthrottle() in vfio_util_lite.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "fastpath_trace.h"
#include "irq_acct.h"
#include "kmsg.h"
#include "kvm_util_lite.h"
#include "proc_util.h"
#include "tap.h"
#include "vfio_util_lite.h"

#define SWAP_RAISES	20
#define QUIET_MS	1000
#define AFF_ROUNDS	10
#define MOVE_RAISES	20
#define MOVE_WAIT_US	5000
#define NR_TESTS	18

struct msix_test {
	struct edu_dev dev;	/* BAR0: the e1000e's registers */
	u8 *table;		/* the MSI-X BAR (table at offset 0) */
	size_t table_size;
	struct lite_vm *vm;
	int timeout;
	s32 efd[E1000E_NR_VEC];	/* each vector's irqfd eventfd */
	s32 plain;		/* an eventfd without irqfd */
	bool irqfd[E1000E_NR_VEC];
	bool fast;		/* kit fast path, its tracepoints on */
	unsigned int raised, delivered, signalled;
};

/* Vector v's table entry: address low, address high, data. */
static void entry_read(struct msix_test *t, unsigned int v, u32 e[3])
{
	u8 *p = t->table + v * PCI_MSIX_ENTRY_SIZE;

	e[0] = mmio_read32(p + PCI_MSIX_ENTRY_LOWER_ADDR);
	e[1] = mmio_read32(p + PCI_MSIX_ENTRY_UPPER_ADDR);
	e[2] = mmio_read32(p + PCI_MSIX_ENTRY_DATA);
}

/* Read what the eventfd counted (0 if nothing), waiting up to ms for it. */
static u64 efd_wait(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	u64 n = 0;

	if (ms && poll(&p, 1, ms) <= 0)
		return 0;
	if (read(fd, &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}

/*
 * Fire vector v once and wait for it: in the guest (to_guest) or on fd.
 * The cause is cleared after, so that the next ICS write fires again.
 * Returns 0 when exactly one arrived where expected.
 */
static int raise_one(struct msix_test *t, unsigned int v, bool to_guest,
		     int fd)
{
	u32 before = guest_count(t->vm), value;
	int ret = 0;
	u64 n;

	e1000e_fire(&t->dev, v);
	t->raised++;
	if (to_guest) {
		ret = guest_run_until(t->vm, GUEST_PORT_POST_EOI, &value,
				      t->timeout);
		if (!ret && guest_count(t->vm) != before + 1)
			ret = -EPROTO;
		if (!ret)
			t->delivered++;
	} else {
		n = efd_wait(fd, t->timeout);
		t->signalled += n;
		if (n != 1)
			ret = -EPROTO;
	}
	e1000e_clear(&t->dev, v);
	if (ret)
		tap_diag("vector %u, raise %u: %s (guest %u -> %u)", v,
			 t->raised, ret == -EPROTO ? "not exactly one arrival" :
			 strerror(-ret), before, guest_count(t->vm));
	return ret;
}

/* Host interrupts of each vector so far, into n[]; false if unreadable. */
static bool vector_irqs(struct msix_test *t, long long *n)
{
	char name[32];
	int v;

	for (v = 0; v < E1000E_NR_VEC; v++) {
		snprintf(name, sizeof(name), "vfio-msix[%d](", v);
		n[v] = proc_interrupts_count(name, t->dev.bdf);
		if (n[v] < 0)
			return false;
	}
	return true;
}

static int set_trigger(struct msix_test *t, unsigned int v, s32 fd)
{
	int ret = vfio_set_irqs(t->dev.device_fd, VFIO_PCI_MSIX_IRQ_INDEX,
				VFIO_IRQ_SET_ACTION_TRIGGER, v, 1, &fd);

	if (ret)
		tap_diag("VFIO_DEVICE_SET_IRQS(MSI-X %u, fd %d): %s", v, fd,
			 strerror(-ret));
	return ret;
}

/*
 * n raises on vector 0 while its trigger is fd (to_guest: the irqfd's);
 * true when each arrived once and the other sink got nothing.
 */
static bool raise_n(struct msix_test *t, int n, bool to_guest, s32 fd)
{
	u32 guest = guest_count(t->vm);
	int i;

	for (i = 0; i < n; i++)
		if (raise_one(t, 0, to_guest, fd))
			return false;
	if (!to_guest && guest_count(t->vm) != guest) {
		tap_diag("the guest counted %u interrupts meant for the eventfd",
			 guest_count(t->vm) - guest);
		return false;
	}
	if (to_guest && efd_wait(t->plain, 0)) {
		tap_diag("the eventfd without irqfd counted after the swap back");
		return false;
	}
	return true;
}

static bool entry_equal(const u32 *a, const u32 *b)
{
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/*
 * Swap vector 0's trigger to fd, first changing its table entry when
 * corrupt.  True when the entry then holds the message it had before and,
 * with the fast path, the kit took the way the entry calls for: in place
 * if intact, stock's free and request if changed (vfio_fastpath_swap).
 */
static bool swap_trigger(struct msix_test *t, s32 fd, bool corrupt)
{
	long long in0 = -1, st0 = -1, in, st;
	u32 orig[3], e[3];

	entry_read(t, 0, orig);
	if (corrupt) {
		/* Data only: with remapping a subhandle, never fired. */
		mmio_write32(t->table + PCI_MSIX_ENTRY_DATA, orig[2] ^ 1);
		entry_read(t, 0, e);
		if (e[2] != (orig[2] ^ 1)) {
			tap_diag("the MSI-X table did not take the write (data 0x%x)",
				 e[2]);
			return false;
		}
	}
	if (t->fast)
		fastpath_trace_swaps(&in0, &st0);
	if (set_trigger(t, 0, fd))
		return false;
	entry_read(t, 0, e);
	if (!entry_equal(orig, e))
		tap_diag("entry 0 after the swap: %08x %08x %08x, before %08x %08x %08x",
			 e[0], e[1], e[2], orig[0], orig[1], orig[2]);
	if (!t->fast)
		return entry_equal(orig, e);
	fastpath_trace_swaps(&in, &st);
	in = in0 >= 0 && in >= 0 ? in - in0 : -1;
	st = st0 >= 0 && st >= 0 ? st - st0 : -1;
	if (in != !corrupt || st != corrupt) {
		tap_diag("swap: %lld in place, %lld stock; expected %s", in, st,
			 corrupt ? "stock" : "in place");
		return false;
	}
	return entry_equal(orig, e);
}

/* Read /proc/irq/<irq>/<file> as a number; -1 if unreadable. */
static int irq_file_int(int irq, const char *file)
{
	char path[64], buf[32];

	snprintf(path, sizeof(path), "/proc/irq/%d/%s", irq, file);
	if (!read_text_file(path, buf, sizeof(buf)))
		return -1;
	return atoi(buf);
}

static bool irq_set_cpu(int irq, int cpu)
{
	char path[64], val[16];

	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	snprintf(val, sizeof(val), "%d", cpu);
	if (write_text_file(path, val))
		return true;
	tap_diag("%s: cannot write %s", path, val);
	return false;
}

/* Whether irq's chip is interrupt remapping's ("IR-PCI-MSIX-..."). */
static bool irq_remapped(int irq)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/sys/kernel/irq/%d/chip_name", irq);
	return read_text_file(path, buf, sizeof(buf)) &&
	       !strncmp(buf, "IR-", 3);
}

struct affinity_result {
	bool delivered;		/* every raise arrived once, where expected */
	bool followed;		/* effective affinity followed each write */
	bool kept;		/* no swap changed entry 0 */
	int changes;		/* moves after which entry 0 differed */
	int raises;		/* interrupts it took the moves to happen */
};

/*
 * AFF_ROUNDS times: move vector 0 (Linux irq) to the other CPU; raise
 * interrupts to the guest until the move is done; swap to the eventfd
 * without irqfd, raise one there, swap back, raise one to the guest.
 * Without remapping x86 moves an MSI in the vector's next interrupt, and
 * puts that off again (-EBUSY) while the vector's previous move still
 * waits for its cleanup on the old CPU (a timer, a jiffy later).
 */
static void affinity_swaps(struct msix_test *t, int irq,
			   struct affinity_result *res)
{
	u32 prev[3], e[3], after[3];
	int r, n, cpu, eff = irq_file_int(irq, "effective_affinity_list");

	*res = (struct affinity_result){ .followed = eff >= 0, .kept = true };
	entry_read(t, 0, prev);
	for (r = 0; r < AFF_ROUNDS; r++) {
		cpu = (eff + 1 + r) % 2;
		if (!irq_set_cpu(irq, cpu))
			return;
		for (n = 1; ; n++) {
			if (raise_one(t, 0, true, -1))
				return;
			if (irq_file_int(irq, "effective_affinity_list") == cpu)
				break;
			if (n == MOVE_RAISES) {
				tap_diag("round %d: CPU %d written, on %d after %d interrupts",
					 r, cpu,
					 irq_file_int(irq, "effective_affinity_list"),
					 n);
				res->followed = false;
				break;
			}
			usleep(MOVE_WAIT_US);
		}
		res->raises += n;
		entry_read(t, 0, e);
		if (!entry_equal(prev, e))
			res->changes++;
		memcpy(prev, e, sizeof(e));
		if (set_trigger(t, 0, t->plain))
			return;
		entry_read(t, 0, after);
		res->kept &= entry_equal(e, after);
		if (raise_one(t, 0, false, t->plain) ||
		    set_trigger(t, 0, t->efd[0]))
			return;
		entry_read(t, 0, after);
		res->kept &= entry_equal(e, after);
		if (raise_one(t, 0, true, -1))
			return;
	}
	res->delivered = r == AFF_ROUNDS;
}

static int open_device(struct msix_test *t)
{
	int ret = e1000e_open(&t->dev, 0);

	if (ret)
		return ret;
	tap_diag("e1000e at %s", t->dev.bdf);
	t->table = vfio_pci_map_bar(&t->dev, E1000E_MSIX_BAR, &t->table_size);
	if (!t->table || edu_enable_bus_master(&t->dev))
		return -EIO;
	ret = vfio_irq_count(t->dev.device_fd, VFIO_PCI_MSIX_IRQ_INDEX);
	if (ret != E1000E_NR_VEC) {
		tap_diag("MSI-X vectors: %d, expected %d", ret, E1000E_NR_VEC);
		return -EIO;
	}
	return 0;
}

static bool wire_vectors(struct msix_test *t)
{
	int v, ret;

	if (vm_route_msi(t->vm, TEST_MSI_GSI, TEST_MSI_VECTOR))
		return false;
	/* The irqfds first, so each producer finds its consumer at once. */
	for (v = 0; v < E1000E_NR_VEC; v++) {
		t->efd[v] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (t->efd[v] < 0)
			return false;
		ret = __vm_irqfd(t->vm, t->efd[v], TEST_MSI_GSI, 0, 0);
		if (ret) {
			tap_diag("KVM_IRQFD(vector %d): %s", v, strerror(-ret));
			return false;
		}
		t->irqfd[v] = true;
	}
	ret = vfio_set_irqs(t->dev.device_fd, VFIO_PCI_MSIX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 0, E1000E_NR_VEC,
			    t->efd);
	if (ret) {
		tap_diag("VFIO_DEVICE_SET_IRQS(MSI-X, %d eventfds): %s",
			 E1000E_NR_VEC, strerror(-ret));
		return false;
	}
	return true;
}

static void teardown(struct msix_test *t)
{
	int v;

	if (t->dev.bar0) {
		edu_write(&t->dev, E1000_IMC, ~0u);
		edu_write(&t->dev, E1000_ICR, ~0u);
		edu_msi_trigger(&t->dev, -1);
	}
	for (v = 0; v < E1000E_NR_VEC; v++) {
		if (t->irqfd[v])
			__vm_irqfd(t->vm, t->efd[v], TEST_MSI_GSI,
				   KVM_IRQFD_FLAG_DEASSIGN, 0);
		if (t->efd[v] >= 0)
			close(t->efd[v]);
	}
	if (t->plain >= 0)
		close(t->plain);
	vm_destroy(t->vm);
	if (t->table)
		munmap(t->table, t->table_size);
	edu_close(&t->dev);
}

int main(void)
{
	struct guest_params params = {
		.vector = TEST_MSI_VECTOR,
		.post_eoi_port = GUEST_PORT_POST_EOI,
		.target = ~0u,
	};
	int iters = test_iterations(500), kmsg = kmsg_watch();
	long long host_before, host, hits = -1, misses = -1, h0, m0;
	long long swaps = -1, stock = -1, s0 = -1, f0 = -1;
	struct affinity_result aff;
	bool remapped;
	int irq0;
	long long vec0[E1000E_NR_VEC], vec[E1000E_NR_VEC];
	struct msix_test t = { .plain = -1 };
	bool ok, got_vec, fast = false, steps_ok = true;
	int i, v, ret;

	for (v = 0; v < E1000E_NR_VEC; v++)
		t.efd[v] = -1;
	t.timeout = test_timeout_ms();
	tap_plan(NR_TESTS);
	close(kvm_open_or_bail());
	tap_diag("iterations=%d timeout=%d ms", iters, t.timeout);

	ret = open_device(&t);
	if (ret == -ENODEV) {
		tap_skip_rest("no e1000e (8086:10d3) on this machine");
		return tap_finish();
	}
	if (!tap_result(!ret, "e1000e opened through vfio-pci, BAR0 and the MSI-X table mapped"))
		goto out;

	t.vm = __vm_create(IRQCHIP_KERNEL);
	ok = t.vm && !vm_start_guest(t.vm, &params) &&
	     !guest_run_until(t.vm, GUEST_PORT_READY, NULL, t.timeout);
	t.plain = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ok = ok && t.plain >= 0 && wire_vectors(&t);
	if (!tap_result(ok, "%d MSI-X vectors -> eventfds -> KVM_IRQFD on MSI route GSI %u",
			E1000E_NR_VEC, TEST_MSI_GSI))
		goto out;

	fast = fastpath_enabled() && fastpath_trace_start();
	t.fast = fast;
	host_before = proc_interrupts_count("vfio-msix[", t.dev.bdf);
	got_vec = vector_irqs(&t, vec0);
	for (i = 0; i < iters; i++)
		if (raise_one(&t, i % E1000E_NR_VEC, true, -1))
			break;
	host = proc_interrupts_count("vfio-msix[", t.dev.bdf);
	if (got_vec && vector_irqs(&t, vec))
		tap_diag("host interrupts per vector: %lld %lld %lld %lld %lld",
			 vec[0] - vec0[0], vec[1] - vec0[1], vec[2] - vec0[2],
			 vec[3] - vec0[3], vec[4] - vec0[4]);
	host = host_before >= 0 && host >= 0 ? host - host_before : -1;
	if (fast)
		fastpath_trace_count(-1, &hits, &misses);
	tap_diag("raised=%u host=%lld delivered=%u hits=%lld misses=%lld",
		 t.raised, host, t.delivered, hits, misses);
	tap_result(t.raised == (unsigned int)iters && t.delivered == t.raised,
		   "%d interrupts over %d vectors, each delivered to the guest once",
		   iters, E1000E_NR_VEC);
	tap_result(host == t.raised,
		   "host saw exactly one vfio-msix interrupt per raise");
	if (fast)
		tap_result(hits == t.raised && !misses,
			   "fast path injected each one (%lld hits, %lld misses)",
			   hits, misses);
	else
		tap_skip("fast path off or stock modules, no tracepoint count");

	/* Swaps with the entry intact: the kit's in-place switch. */
	ok = swap_trigger(&t, t.plain, false);
	tap_result(ok && raise_n(&t, SWAP_RAISES, false, t.plain),
		   "vector 0 swapped to an eventfd without irqfd (kit: in place): entry kept, %d interrupts read from it once each",
		   SWAP_RAISES);
	ok = swap_trigger(&t, t.efd[0], false);
	tap_result(ok && raise_n(&t, SWAP_RAISES, true, -1),
		   "swapped back: entry kept, %d interrupts to the guest once each",
		   SWAP_RAISES);

	/* Swaps of an entry changed behind the kernel: stock's rewrite. */
	ok = swap_trigger(&t, t.plain, true);
	tap_result(ok && raise_n(&t, SWAP_RAISES, false, t.plain),
		   "entry 0 changed, swapped to the eventfd (kit: stock's way): the irq core's message written back, %d interrupts read once each",
		   SWAP_RAISES);
	if (fast)
		fastpath_trace_count(-1, &h0, &m0);
	ok = swap_trigger(&t, t.efd[0], true);
	tap_result(ok && raise_n(&t, SWAP_RAISES, true, -1),
		   "entry 0 changed, swapped back: message written back, %d interrupts to the guest once each",
		   SWAP_RAISES);
	if (fast) {
		fastpath_trace_count(-1, &hits, &misses);
		hits = h0 >= 0 && hits >= 0 ? hits - h0 : -1;
		misses = m0 >= 0 && misses >= 0 ? misses - m0 : -1;
		tap_result(hits == SWAP_RAISES && !misses,
			   "fast path after the stock re-request (%lld hits, %lld misses)",
			   hits, misses);
	} else {
		tap_skip("fast path off or stock modules, no tracepoint count");
	}

	/* Affinity moves of vector 0, a pair of swaps after each. */
	irq0 = proc_interrupts_irq("vfio-msix[0](", t.dev.bdf);
	if (irq0 < 0 || sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		tap_skip("vector 0's irq not found, or fewer than 2 CPUs online");
		tap_skip("no affinity moves");
		tap_skip("no affinity moves");
	} else {
		remapped = irq_remapped(irq0);
		if (fast)
			fastpath_trace_swaps(&s0, &f0);
		affinity_swaps(&t, irq0, &aff);
		proc_irq_unpin("vfio-msix[0](", t.dev.bdf);
		tap_diag("irq %d (%s): %d moves in %d raises, entry changed %d, kept: %s",
			 irq0, remapped ? "remapped" : "not remapped",
			 AFF_ROUNDS, aff.raises, aff.changes,
			 aff.kept ? "yes" : "no");
		tap_result(aff.delivered && aff.followed,
			   "vector 0 moved between 2 CPUs %d times, swapped to the eventfd and back after each: every interrupt arrived once",
			   AFF_ROUNDS);
		tap_result(aff.changes == (remapped ? 0 : AFF_ROUNDS),
			   "entry 0 %s",
			   remapped ? "unchanged by the moves (remapped: a handle)" :
			   "rewritten by the irq core on each move (no remapping)");
		if (fast) {
			fastpath_trace_swaps(&swaps, &stock);
			swaps = s0 >= 0 && swaps >= 0 ? swaps - s0 : -1;
			stock = f0 >= 0 && stock >= 0 ? stock - f0 : -1;
			tap_result(aff.kept && swaps == 2 * AFF_ROUNDS && !stock,
				   "each swap found the moved entry intact and switched in place (%lld in place, %lld stock)",
				   swaps, stock);
		} else {
			tap_skip("fast path off or stock modules: swaps free and request");
		}
	}

	/* Every vector still works after vector 0's swaps. */
	for (v = 0; v < E1000E_NR_VEC && steps_ok; v++)
		steps_ok = !raise_one(&t, v, true, -1);
	tap_result(steps_ok, "all %d vectors deliver after the swaps",
		   E1000E_NR_VEC);

	ret = guest_run_quiet(t.vm, QUIET_MS);
	tap_result(ret == 0 && !efd_wait(t.plain, 0),
		   "no stray interrupt in a %d ms quiet window", QUIET_MS);
	tap_diag("raised=%u delivered=%u signalled=%u", t.raised, t.delivered,
		 t.signalled);
	tap_result(t.raised == t.delivered + t.signalled,
		   "all %u raises accounted for: %u guest + %u eventfd",
		   t.raised, t.delivered, t.signalled);

	edu_write(&t.dev, E1000_IMC, ~0u);
	ret = edu_msi_trigger(&t.dev, -1);
	ok = !ret;
	for (v = 0; v < E1000E_NR_VEC; v++) {
		ret = __vm_irqfd(t.vm, t.efd[v], TEST_MSI_GSI,
				 KVM_IRQFD_FLAG_DEASSIGN, 0);
		ok = ok && !ret;
		t.irqfd[v] = false;
	}
	tap_result(ok, "MSI-X disabled and irqfds deassigned cleanly");
	ret = kmsg_splats(kmsg);
	tap_result(ret == 0, "kernel log clean (%d splats)", ret);
out:
	if (fast)
		fastpath_trace_stop();
	teardown(&t);
	return tap_finish();
}
