// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel log watch; see kmsg.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "compat.h"
#include "kmsg.h"
#include "tap.h"

int kmsg_watch(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	lseek(fd, 0, SEEK_END);
	return fd;
}

/* What run.sh's splat scan looks for, as fixed strings. */
static const char *const splat_words[] = {
	"WARNING:", "BUG:", "Oops", "KASAN", "UBSAN",
	"possible circular locking", "possible recursive locking",
	"inconsistent lock state", "scheduling while atomic",
	"sleeping function called from invalid context", "Kernel panic",
	"blocked for more than", "new suspected memory leak",
};

int kmsg_splats(int fd)
{
	char rec[8192];
	unsigned int i;
	int n = 0;
	ssize_t len;

	if (fd < 0)
		return -1;
	for (;;) {
		len = read(fd, rec, sizeof(rec) - 1);
		if (len < 0) {
			if (errno == EPIPE)	/* overwritten: go on */
				continue;
			break;
		}
		rec[len] = '\0';
		for (i = 0; i < ARRAY_SIZE(splat_words); i++) {
			if (strstr(rec, splat_words[i])) {
				char *msg = strchr(rec, ';');

				tap_diag("kernel: %.*s", 200,
					 msg ? msg + 1 : rec);
				n++;
				break;
			}
		}
	}
	return n;
}
