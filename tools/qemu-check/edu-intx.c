// SPDX-License-Identifier: GPL-2.0-only
/*
 * edu-intx: the interrupt source of make check-qemu, run in the L2 guest
 * (its busybox initramfs).  QEMU's edu device, assigned to the guest, is
 * bound to uio_pci_generic, which handles its level INTx by setting the
 * INTx disable bit.  For each of N rounds this program raises the edu's
 * interrupt (BAR0 0x60), waits for uio to report it, acknowledges it at
 * the device (0x64, the line drops) and clears INTx disable again in the
 * command register, then checks that uio counted exactly one interrupt.
 *
 *   edu-intx BDF N [AT HOOK]
 *
 * With AT and HOOK, the shell command HOOK runs once after round AT (an
 * INTx transition in the middle of the run: an IOAPIC route change, a
 * device reset); its exit code is printed and must be 0.
 *
 * Prints "edu-intx: raised R arrived A extra E timeouts T" and exits 0
 * when A == R == N, E == T == 0 and the hook, if any, succeeded.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define EDU_IRQ_STATUS	0x24
#define EDU_IRQ_RAISE	0x60
#define EDU_IRQ_ACK	0x64
#define CMD_INTX_DISABLE_HI	0x04	/* bit 10 of the command register, in byte 5 */

static uint32_t *bar;

/* MMIO: one 32-bit access each, never merged or cached by the compiler. */
static uint32_t rd(unsigned int off)
{
	return __atomic_load_n(&bar[off / 4], __ATOMIC_RELAXED);
}

static void wr(unsigned int off, uint32_t v)
{
	__atomic_store_n(&bar[off / 4], v, __ATOMIC_RELAXED);
}

/* The uio device's name (uioN) under the PCI device. */
static int uio_name(const char *bdf, char *name, size_t len)
{
	char path[128];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/uio", bdf);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (!strncmp(e->d_name, "uio", 3)) {
			snprintf(name, len, "%s", e->d_name);
			closedir(d);
			return 0;
		}
	}
	closedir(d);
	return -1;
}

/* Clear INTx disable (uio_pci_generic set it in its handler). */
static int intx_enable(int cfg)
{
	uint8_t hi;

	if (pread(cfg, &hi, 1, 5) != 1)
		return -1;
	hi &= ~CMD_INTX_DISABLE_HI;
	return pwrite(cfg, &hi, 1, 5) == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	unsigned int n, i, at = 0, arrived = 0, extra = 0, timeouts = 0;
	const char *hook = NULL;
	int hook_rc = 0;
	uint32_t count, last;
	char path[320], uio[256];
	struct pollfd pfd;
	int res, cfg, fd;

	if (argc != 3 && argc != 5) {
		fprintf(stderr, "usage: edu-intx BDF N [AT HOOK]\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 0);
	if (argc == 5) {
		at = strtoul(argv[3], NULL, 0);
		hook = argv[4];
	}
	if (uio_name(argv[1], uio, sizeof(uio))) {
		fprintf(stderr, "edu-intx: %s has no uio device\n", argv[1]);
		return 3;
	}
	snprintf(path, sizeof(path), "/dev/%s", uio);
	fd = open(path, O_RDWR);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", argv[1]);
	res = open(path, O_RDWR | O_SYNC);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", argv[1]);
	cfg = open(path, O_RDWR);
	if (fd < 0 || res < 0 || cfg < 0) {
		perror("edu-intx: open");
		return 4;
	}
	bar = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, res, 0);
	if (bar == MAP_FAILED) {
		perror("edu-intx: mmap resource0");
		return 5;
	}
	/* Start from a quiet line and an enabled INTx. */
	wr(EDU_IRQ_ACK, rd(EDU_IRQ_STATUS));
	if (intx_enable(cfg)) {
		perror("edu-intx: config");
		return 6;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	/* uio's count of events since the bind: none before the first raise. */
	last = 0;
	if (poll(&pfd, 1, 0) == 1 && read(fd, &last, 4) != 4)
		return 7;
	extra = last;
	for (i = 0; i < n; i++) {
		wr(EDU_IRQ_RAISE, 1);
		if (poll(&pfd, 1, 5000) != 1) {
			timeouts++;
			wr(EDU_IRQ_ACK, rd(EDU_IRQ_STATUS));
			intx_enable(cfg);
			continue;
		}
		if (read(fd, &count, 4) != 4) {
			perror("edu-intx: read uio");
			return 8;
		}
		extra += count - last - 1;
		last = count;
		arrived++;
		wr(EDU_IRQ_ACK, rd(EDU_IRQ_STATUS));
		if (intx_enable(cfg)) {
			perror("edu-intx: config");
			return 6;
		}
		if (hook && i + 1 == at) {
			hook_rc = system(hook);
			printf("edu-intx: after round %u: %s: exit %d\n",
			       at, hook, hook_rc);
			fflush(stdout);
		}
	}
	/* An interrupt after the last round would be one too many. */
	if (poll(&pfd, 1, 200) == 1 && read(fd, &count, 4) == 4)
		extra += count - last;
	printf("edu-intx: raised %u arrived %u extra %u timeouts %u\n",
	       n, arrived, extra, timeouts);
	return arrived == n && !extra && !timeouts && !hook_rc ? 0 : 1;
}
