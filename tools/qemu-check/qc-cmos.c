// SPDX-License-Identifier: GPL-2.0-only
/*
 * qc-cmos: one byte of the RTC's CMOS RAM, read or written through the
 * index and data ports (0x70, 0x71) by way of /dev/port (the kernel does
 * the port I/O; ioperm() and in/out from the L2 guest's user space died
 * with SIGSEGV under the nested testbed).  The L2 guest of make
 * check-qemu marks its first boot there: QEMU keeps the CMOS RAM across a
 * guest reset, so the boot after a reboot can tell itself apart.
 *
 *   qc-cmos INDEX          prints the byte (decimal)
 *   qc-cmos INDEX VALUE    writes it
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned char idx, val;
	unsigned long i;
	int fd;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: qc-cmos INDEX [VALUE]\n");
		return 2;
	}
	/* 14-127: above the clock and status registers of the first bank. */
	i = strtoul(argv[1], NULL, 0);
	if (i < 14 || i > 127) {
		fprintf(stderr, "qc-cmos: index %lu outside 14-127\n", i);
		return 2;
	}
	/* Bit 7 of the index port is the NMI mask: it stays clear. */
	idx = i;
	fd = open("/dev/port", O_RDWR);
	if (fd < 0 || pwrite(fd, &idx, 1, 0x70) != 1) {
		perror("qc-cmos: /dev/port");
		return 3;
	}
	if (argc == 3) {
		val = strtoul(argv[2], NULL, 0);
		if (pwrite(fd, &val, 1, 0x71) != 1) {
			perror("qc-cmos: write");
			return 3;
		}
	} else {
		if (pread(fd, &val, 1, 0x71) != 1) {
			perror("qc-cmos: read");
			return 3;
		}
		printf("%u\n", val);
	}
	return 0;
}
