// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest driver's register encoding and programming sequences
 * (guest/drivers/virtio/virtio_mmio_msi_regs.h, compiled here in userspace)
 * against a model of Dragonball's register block, as its device code
 * behaves (Documentation/virtio-mmio-msi.rst): CSR writes after DRIVER_OK
 * and unknown commands fail the device, UPDATE of a vector past the queue
 * count is ignored, MASK/UNMASK act only on a live device.  The model also
 * delivers messages: a vector raised while masked is held and sent on
 * unmask (a property of this model, so that "exactly once" can be
 * checked across a retarget).  TAP on stdout.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#include "virtio_mmio_msi_regs.h"

#define MAXV 16

struct vec {
	struct vm_msi_msg msg;
	bool set, masked, pending;
};

struct model {
	u32 vendor, nq, notify;
	bool has_msi;
	u32 status;
	bool msi_on;
	struct vm_msi_msg latch;
	struct vec v[MAXV];
	unsigned int accesses, ignored;
	unsigned int live_unmasked_updates;	/* UPDATE of an unmasked live vector */
	/* messages delivered, by data value */
	unsigned int delivered[256];
	int raise_on_update;			/* vector to raise during an UPDATE */
	char trace[512];
};

static void tr(struct model *m, const char *s)
{
	strncat(m->trace, s, sizeof(m->trace) - strlen(m->trace) - 1);
}

static bool live(struct model *m)
{
	return m->status & VM_MSI_STATUS_DRIVER_OK;
}

static void deliver(struct model *m, u32 vec)
{
	m->delivered[m->v[vec].msg.data & 0xff]++;
}

static void raise_vec(struct model *m, u32 vec)
{
	if (!m->msi_on || !live(m) || vec > m->nq)
		return;
	if (m->v[vec].masked)
		m->v[vec].pending = true;
	else
		deliver(m, vec);
}

static u32 rd32(void *ctx, u32 off)
{
	struct model *m = ctx;

	m->accesses++;
	switch (off) {
	case 0x00c: return m->vendor;
	case VM_MSI_REG_QUEUE_NOTIFY: return m->notify;
	case VM_MSI_REG_STATUS: return m->status;
	}
	return 0;
}

static void wr32(void *ctx, u32 off, u32 val)
{
	struct model *m = ctx;

	m->accesses++;
	switch (off) {
	case VM_MSI_REG_STATUS:
		m->status = val;
		break;
	case VM_MSI_REG_ADDR_LO:
		if (m->msi_on)
			m->latch.addr_lo = val;
		break;
	case VM_MSI_REG_ADDR_HI:
		if (m->msi_on)
			m->latch.addr_hi = val;
		break;
	case VM_MSI_REG_DATA:
		if (m->msi_on)
			m->latch.data = val;
		break;
	}
}

static u16 rd16(void *ctx, u32 off)
{
	struct model *m = ctx;

	m->accesses++;
	if (off == VM_MSI_REG_CSR)
		return m->has_msi ? VM_MSI_CSR_ENABLE : 0;
	return 0;
}

static void wr16(void *ctx, u32 off, u16 val)
{
	struct model *m = ctx;
	u32 arg = val & VM_MSI_CMD_ARG_MASK;
	char buf[32];

	m->accesses++;
	if (off == VM_MSI_REG_CSR) {
		if (live(m)) {
			m->status |= VM_MSI_STATUS_FAILED;
			return;
		}
		if ((val & VM_MSI_CSR_ENABLE) && !m->has_msi)
			m->status |= VM_MSI_STATUS_FAILED;
		else
			m->msi_on = val & VM_MSI_CSR_ENABLE;
		return;
	}
	if (off != VM_MSI_REG_CMD)
		return;
	switch (val >> VM_MSI_CMD_OP_SHIFT) {
	case VM_MSI_CMD_UPDATE:
		snprintf(buf, sizeof(buf), "U%u ", arg);
		tr(m, buf);
		if (arg > m->nq) {
			m->ignored++;
			return;
		}
		if (!m->msi_on)
			return;
		if (live(m) && !m->v[arg].masked)
			m->live_unmasked_updates++;
		if (m->raise_on_update == (int)arg) {
			m->raise_on_update = -1;
			raise_vec(m, arg);	/* with the old message still in place */
		}
		m->v[arg].msg = m->latch;
		m->v[arg].set = true;
		break;
	case VM_MSI_CMD_MASK:
	case VM_MSI_CMD_UNMASK:
		snprintf(buf, sizeof(buf), "%c%u ",
			 val >> VM_MSI_CMD_OP_SHIFT == VM_MSI_CMD_MASK ? 'M' : 'u', arg);
		tr(m, buf);
		if (!live(m) || !m->msi_on || arg > m->nq)
			return;
		m->v[arg].masked = val >> VM_MSI_CMD_OP_SHIFT == VM_MSI_CMD_MASK;
		if (!m->v[arg].masked && m->v[arg].pending) {
			m->v[arg].pending = false;
			deliver(m, arg);
		}
		break;
	default:
		m->status |= VM_MSI_STATUS_FAILED;
	}
}

static void model_init(struct model *m, u32 vendor, u32 nq, u32 notify, bool has_msi,
		       struct vm_msi_io *io)
{
	memset(m, 0, sizeof(*m));
	m->vendor = vendor;
	m->nq = nq;
	m->notify = notify;
	m->has_msi = has_msi;
	m->raise_on_update = -1;
	*io = (struct vm_msi_io){ m, rd32, wr32, rd16, wr16 };
}

static int n, failed;

static void ok(bool cond, const char *fmt, const char *what)
{
	n++;
	if (!cond)
		failed++;
	printf("%s %d - %s%s\n", cond ? "ok" : "not ok", n, fmt, what);
}

#define OK(cond, desc) ok((cond), (desc), "")

static struct vm_msi_msg msg_of(u32 irq)
{
	/* x86 compatibility format: 0xfee00000 | dest << 12, data = vector */
	return (struct vm_msi_msg){ 0xfee00000u | (irq << 12), 0, 0x30 + irq };
}

static void test_encoding(void)
{
	struct vm_msi_doorbell db = {};
	bool all;
	u32 v, k;

	OK(vm_msi_vendor_flags(0xdbfcdb07) == 7, "VendorID 0xdbfcdb07: flags 7");
	OK(vm_msi_vendor_flags(0x554d4551) == 0, "VendorID QEMU: no extension");
	OK(vm_msi_vendor_flags(0xdbfcda06) == 0, "VendorID 0xdbfcda06: no extension");
	OK(vm_msi_cmd(VM_MSI_CMD_UPDATE, 3) == 0x1003 &&
	   vm_msi_cmd(VM_MSI_CMD_MASK, 0) == 0x2000 &&
	   vm_msi_cmd(VM_MSI_CMD_UNMASK, 0xfff) == 0x3fff,
	   "commands: op << 12 | vector");
	OK(vm_msi_cmd(0, 1) == -EINVAL && vm_msi_cmd(4, 1) == -EINVAL &&
	   vm_msi_cmd(15, 1) == -EINVAL, "unknown command ops refused");
	OK(vm_msi_cmd(VM_MSI_CMD_UPDATE, 0x1000) == -EINVAL,
	   "vector over 12 bits refused");
	OK(!vm_msi_doorbell_decode(0x1000 | 4 << 16, 2, 0x2000, &db) &&
	   db.offset == 0x1000 && db.scale == 4 &&
	   vm_msi_doorbell_off(&db, 1) == 0x1004,
	   "doorbell 0x41000: queue 1 at 0x1004");
	OK(vm_msi_doorbell_decode(0x1000 | 4 << 16, 2, 0x200, &db) == -EINVAL,
	   "doorbell refused in a 0x200 window (QEMU microvm's size)");
	OK(!vm_msi_doorbell_decode(0x1000 | 4 << 16, 1024, 0x2000, &db) &&
	   vm_msi_doorbell_decode(0x1000 | 4 << 16, 1025, 0x2000, &db) == -EINVAL,
	   "doorbells of 1024 queues fill 8 KiB exactly, 1025 do not fit");
	OK(vm_msi_doorbell_decode(0x0050 | 4 << 16, 1, 0x2000, &db) == -EINVAL &&
	   vm_msi_doorbell_decode(0x1002 | 4 << 16, 1, 0x2000, &db) == -EINVAL &&
	   vm_msi_doorbell_decode(0x1000, 1, 0x2000, &db) == -EINVAL &&
	   vm_msi_doorbell_decode(0x1000 | 6 << 16, 1, 0x2000, &db) == -EINVAL &&
	   vm_msi_doorbell_decode(0x1000 | 4 << 16, 0, 0x2000, &db) == -EINVAL,
	   "doorbell over the registers, unaligned, scale 0 or 6, or 0 queues: refused");
	OK(vm_msi_plan(2, 3) == 3 && vm_msi_plan(4, 100) == 5 &&
	   vm_msi_plan(4, 2) == 2 && vm_msi_plan(4, 1) == 0 && vm_msi_plan(0, 8) == 0 &&
	   vm_msi_plan(4095, 8000) == 0,
	   "plan: queues + 1, else shared down to 2, else legacy");
	/* Sharing: every device vector served by one irq, each irq used. */
	all = vm_msi_irq_of_vector(0, 3) == 0;
	for (v = 1; v <= 4; v++)
		all &= vm_msi_irq_of_vector(v, 3) == 1 + (v - 1) % 2;
	for (k = 1; k < 3; k++) {
		bool used = false;

		for (v = 1; v <= 4; v++)
			used |= vm_msi_irq_of_vector(v, 3) == k;
		all &= used;
	}
	OK(all, "sharing 4 queues on 3 irqs: config alone, queues 1,2,1,2");
	all = true;
	for (v = 0; v <= 8; v++)
		all &= vm_msi_irq_of_vector(v, 9) == v;
	OK(all && vm_msi_vector_of_queue(0) == 1,
	   "one irq per vector: vector i on irq i, queue i on vector i + 1");
}

/* Program every irq of a device, as the kernel's activate does. */
static int program_all(struct vm_msi_io *io, u32 nirq, u32 nq)
{
	struct vm_msi_msg msg;
	u32 k;
	int ret;

	for (k = 0; k < nirq; k++) {
		msg = msg_of(k);
		ret = vm_msi_io_program_irq(io, k, nirq, nq, &msg);
		if (ret)
			return ret;
	}
	return 0;
}

static void test_sequences(void)
{
	struct vm_msi_doorbell db = {};
	struct vm_msi_msg msg;
	struct vm_msi_io io;
	struct model m;
	unsigned int acc;
	bool good;
	u32 v, flags;

	/* A device without the extension: nothing is touched. */
	model_init(&m, 0x554d4551, 2, 0, false, &io);
	OK(vm_msi_io_probe(&io, m.vendor, 2, 0x2000, &db) == 0 && m.accesses == 0,
	   "stock device: no flags, no register access");

	/* MSI in the VendorID but the CSR says unsupported. */
	model_init(&m, 0xdbfcdb02, 2, 0, false, &io);
	OK(vm_msi_io_probe(&io, m.vendor, 2, 0x2000, &db) == 0,
	   "VendorID says MSI, CSR does not: MSI not used");

	/* Good sequence: 2 queues, 3 vectors, doorbells. */
	model_init(&m, 0xdbfcdb07, 2, 0x1000 | 4 << 16, true, &io);
	flags = vm_msi_io_probe(&io, m.vendor, 2, 0x2000, &db);
	OK(flags == (VM_MSI_F_MSI | VM_MSI_F_DOORBELL) && db.offset == 0x1000,
	   "Dragonball device: MSI and doorbells offered");
	OK(vm_msi_io_enable(&io, true) == 0 && m.msi_on, "CSR enable before DRIVER_OK");
	OK(program_all(&io, 3, 2) == 0, "3 vectors programmed before DRIVER_OK");
	good = !strcmp(m.trace, "U0 U1 U2 ");
	for (v = 0; v <= 2; v++)
		good &= m.v[v].set && m.v[v].msg.data == msg_of(v).data &&
			m.v[v].msg.addr_lo == msg_of(v).addr_lo;
	OK(good, "before DRIVER_OK: UPDATE only, each vector its own message");
	m.status = 0xf;	/* ACK, DRIVER, FEATURES_OK, DRIVER_OK */
	for (v = 0; v <= 2; v++)
		raise_vec(&m, v);
	good = !(m.status & VM_MSI_STATUS_FAILED);
	for (v = 0; v <= 2; v++)
		good &= m.delivered[msg_of(v).data] == 1;
	OK(good, "live: each vector delivers its message exactly once, device not failed");

	/* Affinity change on the live device: mask, update, unmask. */
	m.trace[0] = 0;
	m.raise_on_update = 1;	/* the queue fires in the middle */
	msg = (struct vm_msi_msg){ 0xfee01000u, 0, 0x41 };
	OK(vm_msi_io_program_irq(&io, 1, 3, 2, &msg) == 0 &&
	   !strcmp(m.trace, "M1 U1 u1 "), "retarget: M1 U1 u1");
	OK(m.live_unmasked_updates == 0 && m.delivered[0x41] == 1 &&
	   m.delivered[msg_of(1).data] == 1,
	   "an interrupt raised during the retarget arrives once, with the new message");
	OK(vm_msi_io_mask_irq(&io, 2, 3, 2, true) == 0 && m.v[2].masked &&
	   !m.v[1].masked, "mask of irq 2 masks vector 2 only");

	/* Bad input, caught by the driver before it reaches the device. */
	acc = m.accesses;
	OK(vm_msi_io_enable(&io, false) == -EBUSY &&
	   !(m.status & VM_MSI_STATUS_FAILED) && m.msi_on,
	   "CSR change after DRIVER_OK refused by the driver");
	OK(vm_msi_io_update(&io, 3, 2, &msg) == -ERANGE &&
	   vm_msi_io_program_irq(&io, 3, 3, 2, &msg) == -ERANGE,
	   "vector or irq out of range refused by the driver");
	OK(m.accesses == acc + 1, "... with one Status read and no write");
	/* The same input written raw: what the device does with it. */
	wr16(&m, VM_MSI_REG_CMD, 0x1000 | 3);
	OK(m.ignored == 1 && !(m.status & VM_MSI_STATUS_FAILED),
	   "device: UPDATE of vector 3 of 2 queues ignored");
	wr16(&m, VM_MSI_REG_CSR, 0);
	OK(m.status & VM_MSI_STATUS_FAILED, "device: CSR write after DRIVER_OK fails it");
	model_init(&m, 0xdbfcdb07, 2, 0, true, &io);
	wr16(&m, VM_MSI_REG_CMD, 0x4000);
	OK(m.status & VM_MSI_STATUS_FAILED, "device: unknown command 4 fails it");

	/* Sharing fallback: 4 queues on 3 irqs. */
	model_init(&m, 0xdbfcdb02, 4, 0, true, &io);
	vm_msi_io_enable(&io, true);
	OK(program_all(&io, 3, 4) == 0 && m.v[3].msg.data == msg_of(1).data &&
	   m.v[4].msg.data == msg_of(2).data && m.v[0].msg.data == msg_of(0).data,
	   "sharing: vectors 1..4 carry the messages of irqs 1,2,1,2");
	m.status = 0xf;
	m.trace[0] = 0;
	OK(vm_msi_io_mask_irq(&io, 2, 3, 4, true) == 0 && m.v[2].masked &&
	   m.v[4].masked && !m.v[1].masked && !strcmp(m.trace, "M2 M4 "),
	   "sharing: masking irq 2 masks vectors 2 and 4");

	/* Teardown: back to legacy after a reset, refused before it. */
	m.status = 0;
	OK(vm_msi_io_enable(&io, false) == 0 && !m.msi_on,
	   "after a reset: CSR back to legacy");
	model_init(&m, 0xdbfcdb06, 1, 0x1000 | 4 << 16, true, &io);
	OK(vm_msi_io_probe(&io, m.vendor, 1, 0x200, &db) == VM_MSI_F_MSI,
	   "doorbells refused in a small window, MSI kept");
}

int main(void)
{
	printf("TAP version 13\n");
	test_encoding();
	test_sequences();
	printf("1..%d\n", n);
	printf("# %d passed, %d failed\n", n - failed, failed);
	return failed ? 1 : 0;
}
