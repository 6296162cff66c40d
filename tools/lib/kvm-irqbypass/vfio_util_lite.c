// SPDX-License-Identifier: GPL-2.0-only
/*
 * Minimal VFIO helper for the edu device (and any other PCI device a test
 * drives through BAR registers); see vfio_util_lite.h.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "tap.h"
#include "vfio_util_lite.h"

#define PCI_DEVICES	"/sys/bus/pci/devices"
#define VFIO_PCI_DRIVER	"/sys/bus/pci/drivers/vfio-pci"

static int read_hex_file(const char *path, unsigned long *value)
{
	char buf[32];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	*value = strtoul(buf, NULL, 16);
	return 0;
}

static int write_sysfs(const char *path, const char *value)
{
	ssize_t len = strlen(value);
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

static bool is_id(const char *bdf, u16 want_vendor, u16 want_device)
{
	char path[PATH_MAX];
	unsigned long vendor, device;

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/vendor", bdf);
	if (read_hex_file(path, &vendor))
		return false;
	snprintf(path, sizeof(path), PCI_DEVICES "/%s/device", bdf);
	if (read_hex_file(path, &device))
		return false;
	return vendor == want_vendor && device == want_device;
}

/* Copy a PCI address, refusing (rather than truncating) one too long. */
static bool copy_bdf(char *bdf, size_t len, const char *name)
{
	size_t n = strlen(name);

	if (n >= len)
		return false;
	memcpy(bdf, name, n + 1);
	return true;
}

/*
 * The n-th vendor:device in BDF order (readdir() order is the directory's,
 * not the bus's); for the edu, EDU_BDF in the environment names the first.
 */
static int pci_find(char *bdf, size_t len, u16 vendor, u16 device,
		    unsigned int n)
{
	const char *env = vendor == EDU_VENDOR && device == EDU_DEVICE ?
			  getenv("EDU_BDF") : NULL;
	char best[64] = "", prev[64] = "";
	struct dirent *de;
	unsigned int i;
	DIR *dir;

	if (env && *env && n == 0) {
		if (!is_id(env, vendor, device) || !copy_bdf(bdf, len, env)) {
			tap_diag("EDU_BDF=%s is not a %04x:%04x device", env,
				 EDU_VENDOR, EDU_DEVICE);
			return -EINVAL;
		}
		return 0;
	}
	/* n + 1 passes, each taking the least BDF above the previous one. */
	for (i = 0; i <= n; i++) {
		dir = opendir(PCI_DEVICES);
		if (!dir)
			return -ENODEV;
		best[0] = '\0';
		while ((de = readdir(dir))) {
			if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(best) ||
			    strcmp(de->d_name, prev) <= 0 ||
			    !is_id(de->d_name, vendor, device))
				continue;
			if (!best[0] || strcmp(de->d_name, best) < 0)
				snprintf(best, sizeof(best), "%s", de->d_name);
		}
		closedir(dir);
		if (!best[0])
			return -ENODEV;
		memcpy(prev, best, sizeof(prev));
	}
	return copy_bdf(bdf, len, best) ? 0 : -ENODEV;
}

/* Name of the driver bound to bdf, "" when unbound. */
static void bound_driver(const char *bdf, char *drv, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/driver", bdf);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		drv[0] = '\0';
		return;
	}
	target[n] = '\0';
	snprintf(drv, len, "%s", basename(target));
}

static int bind_vfio(const char *bdf)
{
	char path[PATH_MAX], drv[64];
	int ret;

	bound_driver(bdf, drv, sizeof(drv));
	if (!strcmp(drv, "vfio-pci"))
		return 0;
	if (access(VFIO_PCI_DRIVER, F_OK)) {
		tap_diag("%s: vfio-pci driver is not loaded", bdf);
		return -ENOENT;
	}
	tap_diag("%s: %s%s, binding it to vfio-pci", bdf,
		 drv[0] ? "bound to " : "not bound to a driver", drv);
	/* driver_override makes drivers_probe pick vfio-pci and only it. */
	snprintf(path, sizeof(path), PCI_DEVICES "/%s/driver_override", bdf);
	ret = write_sysfs(path, "vfio-pci");
	if (ret)
		goto fail;
	if (drv[0]) {
		snprintf(path, sizeof(path), PCI_DEVICES "/%s/driver/unbind",
			 bdf);
		ret = write_sysfs(path, bdf);
		if (ret)
			goto fail;
	}
	ret = write_sysfs("/sys/bus/pci/drivers_probe", bdf);
	if (ret)
		goto fail;
	bound_driver(bdf, drv, sizeof(drv));
	if (strcmp(drv, "vfio-pci")) {
		tap_diag("%s: still bound to '%s' after drivers_probe", bdf, drv);
		return -EBUSY;
	}
	return 0;
fail:
	tap_diag("%s: binding to vfio-pci via %s: %s", bdf, path,
		 strerror(-ret));
	return ret;
}

static int open_group(struct edu_dev *edu)
{
	struct vfio_group_status status = { .argsz = sizeof(status) };
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/iommu_group", edu->bdf);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		tap_diag("%s: no IOMMU group (is the IOMMU on?): %s", edu->bdf,
			 strerror(errno));
		return -errno;
	}
	target[n] = '\0';
	snprintf(path, sizeof(path), "/dev/vfio/%s", basename(target));
	edu->group_fd = open(path, O_RDWR | O_CLOEXEC);
	if (edu->group_fd < 0) {
		tap_diag("%s: %s", path, strerror(errno));
		return -errno;
	}
	if (ioctl(edu->group_fd, VFIO_GROUP_GET_STATUS, &status) < 0) {
		tap_diag("VFIO_GROUP_GET_STATUS: %s", strerror(errno));
		return -errno;
	}
	if (!(status.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		tap_diag("%s: group not viable (devices not bound to vfio)",
			 path);
		return -EBUSY;
	}
	return 0;
}

static int open_container(struct edu_dev *edu)
{
	int type = VFIO_TYPE1v2_IOMMU;

	edu->container_fd = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (edu->container_fd < 0) {
		tap_diag("/dev/vfio/vfio: %s", strerror(errno));
		return -errno;
	}
	if (ioctl(edu->container_fd, VFIO_GET_API_VERSION) != VFIO_API_VERSION) {
		tap_diag("VFIO API version mismatch");
		return -EINVAL;
	}
	if (ioctl(edu->container_fd, VFIO_CHECK_EXTENSION, type) <= 0)
		type = VFIO_TYPE1_IOMMU;
	if (ioctl(edu->group_fd, VFIO_GROUP_SET_CONTAINER,
		  &edu->container_fd) < 0) {
		tap_diag("VFIO_GROUP_SET_CONTAINER: %s", strerror(errno));
		return -errno;
	}
	/* No DMA mappings: the tests only use MMIO and interrupts. */
	if (ioctl(edu->container_fd, VFIO_SET_IOMMU, type) < 0) {
		tap_diag("VFIO_SET_IOMMU(%d): %s", type, strerror(errno));
		return -errno;
	}
	return 0;
}

void *vfio_pci_map_bar(struct edu_dev *dev, unsigned int index,
		       size_t *size)
{
	struct vfio_region_info bar = {
		.argsz = sizeof(bar),
		.index = VFIO_PCI_BAR0_REGION_INDEX + index,
	};
	void *p;

	if (ioctl(dev->device_fd, VFIO_DEVICE_GET_REGION_INFO, &bar) < 0) {
		tap_diag("VFIO_DEVICE_GET_REGION_INFO(BAR%u): %s", index,
			 strerror(errno));
		return NULL;
	}
	if (!(bar.flags & VFIO_REGION_INFO_FLAG_MMAP) || !bar.size) {
		tap_diag("BAR%u is not mmap-able (flags 0x%x size 0x%llx)",
			 index, bar.flags, (unsigned long long)bar.size);
		return NULL;
	}
	p = mmap(NULL, bar.size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 dev->device_fd, bar.offset);
	if (p == MAP_FAILED) {
		tap_diag("mmap(BAR%u): %s", index, strerror(errno));
		return NULL;
	}
	*size = bar.size;
	return p;
}

static int map_bar0(struct edu_dev *dev)
{
	struct vfio_region_info cfg = {
		.argsz = sizeof(cfg),
		.index = VFIO_PCI_CONFIG_REGION_INDEX,
	};

	if (ioctl(dev->device_fd, VFIO_DEVICE_GET_REGION_INFO, &cfg) < 0) {
		tap_diag("VFIO_DEVICE_GET_REGION_INFO(config): %s",
			 strerror(errno));
		return -errno;
	}
	dev->config_offset = cfg.offset;
	dev->bar0 = vfio_pci_map_bar(dev, 0, &dev->bar0_size);
	return dev->bar0 ? 0 : -EIO;
}

int edu_open(struct edu_dev *edu)
{
	return edu_open_nth(edu, 0);
}

int vfio_pci_open_id(struct edu_dev *dev, u16 vendor, u16 device,
		     unsigned int n)
{
	int ret;

	memset(dev, 0, sizeof(*dev));
	dev->container_fd = -1;
	dev->group_fd = -1;
	dev->device_fd = -1;

	ret = pci_find(dev->bdf, sizeof(dev->bdf), vendor, device, n);
	if (ret)
		return ret;
	ret = bind_vfio(dev->bdf);
	if (!ret)
		ret = open_group(dev);
	if (!ret)
		ret = open_container(dev);
	if (ret)
		goto fail;
	dev->device_fd = ioctl(dev->group_fd, VFIO_GROUP_GET_DEVICE_FD,
			       dev->bdf);
	if (dev->device_fd < 0) {
		ret = -errno;
		tap_diag("VFIO_GROUP_GET_DEVICE_FD(%s): %s", dev->bdf,
			 strerror(errno));
		goto fail;
	}
	ret = map_bar0(dev);
	if (ret)
		goto fail;
	return 0;
fail:
	edu_close(dev);
	/* The device exists, so a failure here is never a skip. */
	return ret == -ENODEV ? -EIO : ret;
}

int edu_open_nth(struct edu_dev *edu, unsigned int n)
{
	static bool told;	/* a test may open it hundreds of times */
	int ret;

	ret = vfio_pci_open_id(edu, EDU_VENDOR, EDU_DEVICE, n);
	if (ret)
		return ret;
	if (!told && n == 0)
		tap_diag("edu device at %s", edu->bdf);
	told = true;
	/* A previous run may have died with an interrupt still raised. */
	edu_write(edu, EDU_REG_IRQ_ACK, ~0u);
	return 0;
}

void edu_msi_release(struct edu_dev *edu)
{
	edu_write(edu, EDU_REG_IRQ_ACK, ~0u);
	vfio_set_irqs(edu->device_fd, VFIO_PCI_MSI_IRQ_INDEX,
		      VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
}

void edu_close(struct edu_dev *edu)
{
	if (edu->bar0)
		munmap(edu->bar0, edu->bar0_size);
	edu->bar0 = NULL;
	if (edu->device_fd >= 0)
		close(edu->device_fd);
	if (edu->group_fd >= 0)
		close(edu->group_fd);
	if (edu->container_fd >= 0)
		close(edu->container_fd);
	edu->device_fd = -1;
	edu->group_fd = -1;
	edu->container_fd = -1;
}

int e1000e_open(struct edu_dev *dev, unsigned int n)
{
	int ret = vfio_pci_open_id(dev, E1000E_VENDOR, E1000E_DEVICE, n);

	if (ret)
		return ret;
	dev->msix = true;
	edu_write(dev, E1000_IMC, ~0u);
	edu_write(dev, E1000_ICR, ~0u);
	edu_write(dev, E1000_IVAR, E1000_IVAR_ALL);
	edu_write(dev, E1000_CTRL_EXT, edu_read(dev, E1000_CTRL_EXT) |
		  E1000_CTRL_EXT_INT_TIMERS_CLEAR_ENA);
	if (edu_read(dev, E1000_IVAR) != E1000_IVAR_ALL) {
		tap_diag("%s: IVAR reads 0x%08x", dev->bdf,
			 edu_read(dev, E1000_IVAR));
		edu_close(dev);
		return -EIO;
	}
	return 0;
}

/* Each vector's cause: IVAR's fields 0-4. */
static const u32 e1000e_cause[E1000E_NR_VEC] = {
	0x00100000, 0x00200000, 0x00400000, 0x00800000, 0x01000000,
};

void e1000e_unthrottle(struct edu_dev *dev)
{
	edu_write(dev, E1000_IMS, E1000_IMS_ALL);
}

void e1000e_fire(struct edu_dev *dev, unsigned int v)
{
	e1000e_unthrottle(dev);
	edu_write(dev, E1000_ICS, e1000e_cause[v]);
}

void e1000e_clear(struct edu_dev *dev, unsigned int v)
{
	edu_write(dev, E1000_ICR, e1000e_cause[v]);
}

void dev_msi_raise(struct edu_dev *dev)
{
	if (dev->msix)
		e1000e_fire(dev, 0);
	else
		edu_write(dev, EDU_REG_IRQ_RAISE, 1);
}

void dev_msi_ack(struct edu_dev *dev)
{
	if (dev->msix)
		e1000e_clear(dev, 0);
	else
		edu_write(dev, EDU_REG_IRQ_ACK, 1);
}

int edu_check_alive(struct edu_dev *edu)
{
	u32 id = edu_read(edu, EDU_REG_ID);
	u32 probe = 0x5a5aa5a5;

	edu_write(edu, EDU_REG_LIVENESS, probe);
	if ((id & 0xffff) != 0x00ed ||
	    edu_read(edu, EDU_REG_LIVENESS) != ~probe) {
		tap_diag("BAR0 does not look like an edu: id 0x%08x, liveness 0x%08x",
			 id, edu_read(edu, EDU_REG_LIVENESS));
		return -EIO;
	}
	tap_diag("edu version %u.%u", id >> 24, (id >> 16) & 0xff);
	return 0;
}

int edu_enable_bus_master(struct edu_dev *edu)
{
	off_t off = edu->config_offset + PCI_COMMAND;
	u16 cmd;

	if (pread(edu->device_fd, &cmd, sizeof(cmd), off) != sizeof(cmd))
		goto fail;
	cmd |= PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
	if (pwrite(edu->device_fd, &cmd, sizeof(cmd), off) != sizeof(cmd))
		goto fail;
	return 0;
fail:
	tap_diag("PCI_COMMAND via VFIO config region: %s", strerror(errno));
	return -errno;
}

int vfio_irq_count(int device_fd, u32 index)
{
	struct vfio_irq_info info = { .argsz = sizeof(info), .index = index };

	if (ioctl(device_fd, VFIO_DEVICE_GET_IRQ_INFO, &info) < 0)
		return -errno;
	return info.count;
}

int vfio_set_irqs_raw(int device_fd, struct vfio_irq_set *set)
{
	return ioctl(device_fd, VFIO_DEVICE_SET_IRQS, set) < 0 ? -errno : 0;
}

int vfio_set_irqs(int device_fd, u32 index, u32 action,
		  u32 start, u32 count, const s32 *fds)
{
	size_t data = fds ? count * sizeof(s32) : 0;
	struct vfio_irq_set *set;
	int ret;

	set = calloc(1, sizeof(*set) + data);
	if (!set)
		return -ENOMEM;
	set->argsz = sizeof(*set) + data;
	set->flags = action | (fds ? VFIO_IRQ_SET_DATA_EVENTFD :
			       VFIO_IRQ_SET_DATA_NONE);
	set->index = index;
	set->start = start;
	set->count = count;
	if (data)
		memcpy(set->data, fds, data);
	ret = vfio_set_irqs_raw(device_fd, set);
	free(set);
	return ret;
}

int proc_interrupts_irq(const char *name, const char *bdf)
{
	char line[4096];
	int irq = -1;
	FILE *f;

	f = fopen("/proc/interrupts", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (p && strstr(p, name) && strstr(p, bdf)) {
			irq = atoi(line);
			break;
		}
	}
	fclose(f);
	return irq;
}

long long proc_interrupts_count(const char *name, const char *bdf)
{
	long long total = 0;
	char line[4096];
	FILE *f;

	f = fopen("/proc/interrupts", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (!p || !strstr(p, name) || !strstr(p, bdf))
			continue;
		/* Per-CPU counts follow the colon, up to the chip name. */
		for (p++; ; ) {
			char *end;
			long long v;

			while (*p == ' ')
				p++;
			if (!isdigit((unsigned char)*p))
				break;
			v = strtoll(p, &end, 10);
			total += v;
			p = end;
		}
	}
	fclose(f);
	return total;
}
