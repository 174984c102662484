// SPDX-License-Identifier: GPL-2.0-only
/*
 * tap_open() (tap.h): the checks before TUNSETIFF, which would create a
 * missing interface rather than fail, and the words for its errors.
 * Flags and ioctls from linux/if_tun.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/if_tun.h>

#include "hv_err.h"
#include "tap.h"
#include "virtio_net.h"

/* /sys/class/net/NAME/tun_flags: the interface's IFF_* flags, or -errno. */
static long tun_flags(const char *name)
{
	char path[64], buf[32] = "";
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/net/%s/tun_flags", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -EIO;
	return strtol(buf, NULL, 16);
}

/*
 * @name is an existing tap's: a name, an interface, not a tun.  Its
 * sysfs IFF_* flags in *@fl (-errno where sysfs does not show them).
 */
static int tap_check(const char *name, long *fl, struct hv_err *err)
{
	if (!*name || strlen(name) >= IFNAMSIZ || strchr(name, '/')) {
		return hv_err_set(err, -EINVAL,
				  "tap=%s: not an interface name (1 to %d "
				  "characters, no '/')",
				  name, IFNAMSIZ - 1);
	}
	if (!if_nametoindex(name)) {
		return hv_err_set(
			err, -ENODEV,
			"tap=%s: no such interface; create it first (ip "
			"tuntap add %s mode tap user $(id -un))",
			name, name);
	}
	/* Its flags, where sysfs shows this namespace (multi-queue). */
	*fl = tun_flags(name);
	if (*fl >= 0 && !(*fl & IFF_TAP)) {
		return hv_err_set(err, -EINVAL,
				  "tap=%s: a tun (IP) device, not a tap: "
				  "make it with mode tap",
				  name);
	}
	return 0;
}

/* TUNSETIFF: @fd becomes tap @name (flags @fl as tap_check() read them). */
static int tap_attach(int fd, const char *name, long fl, struct hv_err *err)
{
	struct ifreq ifr = { 0 };
	int ret;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_flags =
		IFF_TAP | IFF_NO_PI | IFF_VNET_HDR |
		(fl >= 0 && (fl & IFF_MULTI_QUEUE) ? IFF_MULTI_QUEUE : 0);
	if (ioctl(fd, TUNSETIFF, &ifr) >= 0)
		return 0;
	ret = -errno;
	if (ret == -EPERM)
		hv_err_set(err, ret,
			   "tap=%s: no permission (it belongs to another "
			   "user or group; make it with ip tuntap add %s "
			   "mode tap user USER, or run as root)",
			   name, name);
	else if (ret == -EINVAL)
		hv_err_set(err, ret,
			   "tap=%s: not a tap device (an interface, but "
			   "not one made by ip tuntap ... mode tap)",
			   name);
	else if (ret == -EBUSY)
		hv_err_set(err, ret,
			   "tap=%s: busy: another process has it open", name);
	else
		hv_err_set(err, ret, "tap=%s: TUNSETIFF: %s", name,
			   strerror(-ret));
	return ret;
}

/*
 * The virtio_net_hdr_v1 before each frame, and no offloads until the
 * driver says; *@offload whether the tap would take them.
 */
static int tap_vnet(int fd, const char *name, bool *offload, struct hv_err *err)
{
	int hdr = VNET_HDR_LEN, ret;

	if (ioctl(fd, TUNSETVNETHDRSZ, &hdr) < 0) {
		ret = -errno;
		hv_err_set(err, ret, "tap=%s: TUNSETVNETHDRSZ: %s", name,
			   strerror(-ret));
		return ret;
	}
	*offload = ioctl(fd, TUNSETOFFLOAD,
			 TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) == 0;
	if (ioctl(fd, TUNSETOFFLOAD, 0) < 0) {
		ret = -errno;
		hv_err_set(err, ret, "tap=%s: TUNSETOFFLOAD: %s", name,
			   strerror(-ret));
		return ret;
	}
	return 0;
}

int tap_open(const char *name, bool *offload, struct hv_err *err)
{
	int fd, ret;
	long fl = 0;

	*offload = false;
	ret = tap_check(name, &fl, err);
	if (ret)
		return ret;
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		hv_err_set(err, ret, "tap=%s: cannot open /dev/net/tun: %s",
			   name, strerror(-ret));
		return ret;
	}
	ret = tap_attach(fd, name, fl, err);
	if (!ret)
		ret = tap_vnet(fd, name, offload, err);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}
