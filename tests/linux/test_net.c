// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-net on a tap with the Debian 12 image (tools/debian-image.sh),
 * in the nested lab (issue 31, item 3).  The lab (lab.sh --with-net) has
 * tun and bridge: this test makes the tap hvtap0 (busybox tunctl) in the
 * bridge hvbr0, which owns 192.168.100.1/24; hotvm boots the image from
 * the lab's virtio disk with --net tap=hvtap0 and --agent on its
 * virtio-console, and the guest is given 192.168.100.2/24 through Debian's
 * qemu-ga (guest-exec, iproute2).  Then:
 *
 * - bad input, status 2 and the reason: a tap that does not exist, one
 *   held by the running VM (busy), a bad MAC, no permission (a user that
 *   cannot open /dev/net/tun);
 * - the guest's link is up (its carrier), the lab pings it;
 * - TCP both ways at once, checked byte for byte (sha256 on both sides:
 *   the lab streams 1 MiB blocks to the guest, the guest streams a 1 MiB
 *   file of its own back), while vCPUs 1 and 2 are hot-added and removed;
 *   neither connection is reset and no byte is lost;
 * - system_reset with both streams flowing; the guest boots again and
 *   moves traffic again (ping, and a transfer both ways checked).
 *
 * Usage: test-net LINUX IMAGE [CASE...], as test-debian; HOTVM is the
 * hotvm binary, DISK the block device (default /dev/vda).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <linux/if_tun.h>

#include "check.h"
#include "lab_linux.h"
#include "vmproc.h"

#define BOOT_MS	 240000
#define XFER_MS	 240000
#define TAP	 "hvtap0"
#define BRIDGE	 "hvbr0"
#define HOST_IP	 "192.168.100.1"
#define GUEST_IP "192.168.100.2"
#define MAC	 "02:68:76:00:00:02"
#define BLOCK	 (1 << 20)
#define SOCK	 "/tmp/hotvm-net-agent.sock"

static uint8_t blob[BLOCK]; /* what the lab streams to the guest */

/* bash -c @script in the guest to its end: its exit code, its output. */
static int guest_sh(const char *script, char *out, size_t size)
{
	long pid = lab_guest_exec(SOCK, "/bin/bash", script, true);

	out[0] = 0;
	return pid < 0 ? -1
		       : lab_guest_wait(SOCK, pid, out, size, LAB_AGENT_MS);
}

/* The lab's shell: 0 when @cmd succeeded. */
static int sh(const char *cmd)
{
	int st = system(cmd);

	if (st)
		printf("# '%s': status %d\n", cmd, st);
	return st;
}

/* sha256sum of @n bytes from @p, @times over, in hex. */
static void sha256(const uint8_t *p, size_t n, unsigned int times, char hex[65])
{
	char cmd[] = "sha256sum >/tmp/net-sha";
	FILE *f = popen(cmd, "w");

	hex[0] = 0;
	if (!f)
		return;
	for (unsigned int i = 0; i < times; i++)
		fwrite(p, 1, n, f);
	pclose(f);
	f = fopen("/tmp/net-sha", "r");
	if (f) {
		if (fscanf(f, "%64s", hex) != 1)
			hex[0] = 0;
		fclose(f);
	}
}

static int listener(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, HOST_IP, &a.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1)) {
		printf("# bind %s:%d: %s\n", HOST_IP, port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Accepts one connection within the transfer's bound: its fd, or -1. */
static int accept_one(int lfd)
{
	struct timeval tv = { .tv_sec = XFER_MS / 1000 };
	int fd;

	setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	return fd;
}

/*
 * The two streams: the lab sends blob to the guest until told to stop
 * (then at a block's end), and takes the guest's blocks, each compared
 * with the first.
 */
struct streams {
	int down_l, up_l;	  /* the listeners: 5001 down, 5002 up */
	atomic_bool stop;	  /* finish at the next block's end */
	bool abandon;		  /* the reset case: no end expected */
	unsigned int down_blocks; /* whole blocks sent */
	uint64_t up_bytes;
	bool up_same; /* every block the same as the first */
	uint8_t *up_first;
	int down_err, up_err;	   /* errno of a failed send or recv */
	atomic_int down_fd, up_fd; /* the connections, -1 before */
	pthread_t down_t, up_t;
};

static void *down_thread(void *arg)
{
	struct streams *s = arg;
	int fd = accept_one(s->down_l);

	if (fd < 0) {
		s->down_err = errno;
		return NULL;
	}
	atomic_store(&s->down_fd, fd);
	while (!atomic_load(&s->stop)) {
		size_t off = 0;

		while (off < BLOCK) {
			ssize_t w =
				send(fd, blob + off, BLOCK - off, MSG_NOSIGNAL);

			if (w < 0) {
				s->down_err = errno;
				close(fd);
				return NULL;
			}
			off += (size_t)w;
		}
		s->down_blocks++;
	}
	close(fd);
	return NULL;
}

static void *up_thread(void *arg)
{
	struct streams *s = arg;
	uint8_t *b = malloc(BLOCK);
	size_t have = 0;
	int fd = accept_one(s->up_l);

	s->up_same = true;
	s->up_first = malloc(BLOCK);
	if (fd < 0) {
		s->up_err = errno;
		free(b);
		return NULL;
	}
	atomic_store(&s->up_fd, fd);
	for (;;) {
		ssize_t r = recv(fd, b + have, BLOCK - have, 0);

		if (r == 0)
			break;
		if (r < 0) {
			s->up_err = errno;
			break;
		}
		have += (size_t)r;
		s->up_bytes += (uint64_t)r;
		if (have < BLOCK)
			continue;
		if (s->up_bytes == BLOCK)
			memcpy(s->up_first, b, BLOCK);
		else if (memcmp(b, s->up_first, BLOCK))
			s->up_same = false;
		have = 0;
	}
	close(fd);
	free(b);
	return NULL;
}

/*
 * The guest's side, one bash: a 1 MiB file of its own, its sha256, then
 * the file sent up again and again until /tmp/net-stop, and what comes
 * down hashed, at once; prints "up SHA N" and "down SHA".
 */
static const char guest_streams[] =
	"set -e; rm -f /tmp/net-stop; "
	"head -c 1048576 /dev/urandom >/tmp/net-up; "
	"up=$(sha256sum </tmp/net-up | cut -d' ' -f1); "
	"exec 3</dev/tcp/" HOST_IP "/5001; "
	"sha256sum <&3 >/tmp/net-down & d=$!; "
	"n=0; exec 4>/dev/tcp/" HOST_IP "/5002; "
	"while [ ! -e /tmp/net-stop ]; do cat /tmp/net-up >&4; n=$((n+1)); "
	"done; exec 4>&-; wait $d; "
	"echo \"up $up $n\"; echo \"down $(cut -d' ' -f1 /tmp/net-down)\"";

static bool streams_start(struct streams *s, long *pid)
{
	memset(s, 0, sizeof(*s));
	atomic_store(&s->down_fd, -1);
	atomic_store(&s->up_fd, -1);
	s->down_l = listener(5001);
	s->up_l = listener(5002);
	if (s->down_l < 0 || s->up_l < 0)
		return false;
	pthread_create(&s->down_t, NULL, down_thread, s);
	pthread_create(&s->up_t, NULL, up_thread, s);
	*pid = lab_guest_exec(SOCK, "/bin/bash", guest_streams, true);
	return *pid >= 0;
}

/* Waits until both streams have moved @mb MiB each way. */
static bool streams_moving(struct streams *s, unsigned int mb)
{
	long end = lab_now_ms() + XFER_MS;

	while (lab_now_ms() < end) {
		if (s->down_err || s->up_err)
			return false;
		if (s->down_blocks >= mb && s->up_bytes >= (uint64_t)mb * BLOCK)
			return true;
		usleep(100000);
	}
	return false;
}

/* Stops both streams at a block's end and checks every byte. */
static void streams_check(struct streams *s, long pid, long t0)
{
	char out[512], up_sha[65] = "", down_sha[65] = "", want[65];
	unsigned int up_n = 0;
	char dummy[8];
	int code;

	CHECK_EQ(guest_sh("touch /tmp/net-stop", dummy, sizeof(dummy)), 0);
	atomic_store(&s->stop, true);
	code = lab_guest_wait(SOCK, pid, out, sizeof(out), XFER_MS);
	pthread_join(s->down_t, NULL);
	pthread_join(s->up_t, NULL);
	close(s->down_l);
	close(s->up_l);
	printf("# %u MiB down, %llu bytes up in %ld ms; guest: %s",
	       s->down_blocks, (unsigned long long)s->up_bytes,
	       lab_now_ms() - t0, out);
	CHECK_EQ(code, 0);
	CHECK_EQ(s->down_err, 0);
	CHECK_EQ(s->up_err, 0);
	CHECK(sscanf(out, "up %64s %u down %64s", up_sha, &up_n, down_sha) ==
	      3);
	/* Down: the guest's hash of all it read is that of all sent. */
	sha256(blob, BLOCK, s->down_blocks, want);
	CHECK_STREQ(down_sha, want);
	/* Up: as many blocks as the guest sent, each its file. */
	CHECK_EQ(s->up_bytes, (uint64_t)up_n * BLOCK);
	CHECK(s->up_same);
	sha256(s->up_first, BLOCK, 1, want);
	CHECK_STREQ(up_sha, want);
	free(s->up_first);
}

/* The guest's NIC by its MAC, up, with its address; the lab pings it. */
static bool guest_address(void)
{
	char out[256];
	int code = guest_sh(
		"i=$(grep -l " MAC " /sys/class/net/*/address | cut -d/ -f5); "
		"ip link set \"$i\" up && ip addr add " GUEST_IP
		"/24 dev \"$i\" "
		"&& echo \"$i carrier $(cat /sys/class/net/$i/carrier)\"",
		out, sizeof(out));

	printf("# guest: %s", out);
	CHECK_EQ(code, 0);
	CHECK(strstr(out, "carrier 1") != NULL);
	return code == 0 && !sh("ping -c 3 -W 10 " GUEST_IP " >/dev/null");
}

/* cpu-hotplug of @cpu to @state, checked. */
static void hotplug(struct vmproc *v, int cpu, const char *state)
{
	char err[256];
	long t0 = lab_now_ms();
	int ret = vmproc_qmp(
		v, "cpu-hotplug", NULL, err, sizeof(err),
		"{\"cpu\": %d, \"state\": \"%s\"%s}", cpu, state,
		strcmp(state, "online") ? "" : ", \"wait\": \"started\"");

	if (ret)
		printf("# cpu-hotplug %d %s: %s\n", cpu, state, err);
	printf("# cpu-hotplug %d %s: %ld ms\n", cpu, state, lab_now_ms() - t0);
	CHECK_EQ(ret, 0);
}

/*
 * A hotvm with --net @spec (and the tiny guest), as uid and gid @uid when
 * it is not 0: its exit status, its stderr's first line in @err.
 */
static int hotvm_bad(const char *spec, unsigned int uid, char *err, size_t size)
{
	int st = -1;
	pid_t pid = fork();
	FILE *f;

	if (pid == 0) {
		int fd = open("/tmp/net-err", O_WRONLY | O_CREAT | O_TRUNC,
			      0644);

		if (fd < 0 || dup2(fd, 2) < 0 ||
		    (uid && (setgid(uid) || setuid(uid))))
			_exit(99);
		execl(vmproc_hotvm(), "hotvm", "run", "--net", spec, "--serial",
		      "none", (char *)NULL);
		_exit(98);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
	err[0] = 0;
	f = fopen("/tmp/net-err", "r");
	if (f) {
		if (!fgets(err, (int)size, f))
			err[0] = 0;
		fclose(f);
	}
	err[strcspn(err, "\n")] = 0;
	st = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	printf("# --net %s (uid %u): status %d: %s\n", spec, uid, st, err);
	return st;
}

/* A persistent tap @name owned by root (busybox's tunctl sets no owner). */
static int root_tap(const char *name)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI };
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0 || ioctl(fd, TUNSETPERSIST, 1) < 0 ||
	    ioctl(fd, TUNSETOWNER, 0) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static char nspec[64];

/* The tap and its bridge, as README says (busybox's words), once. */
static void lab_net(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	for (size_t i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)(i * 2654435761u >> 13);
	CHECK_EQ(sh("tunctl -t " TAP " >/dev/null && brctl addbr " BRIDGE
		    " && brctl addif " BRIDGE " " TAP " && ip link set " TAP
		    " up && ip link set " BRIDGE " up && ip addr add " HOST_IP
		    "/24 dev " BRIDGE),
		 0);
	snprintf(nspec, sizeof(nspec), "tap=%s,mac=%s", TAP, MAC);
}

/* The image on hotvm, with --net when @net, to multi-user.target. */
static bool boot(struct vmproc *v, bool net)
{
	const char *more[] = { "--net", nspec, NULL };

	lab_net();
	if (lab_debian_boot(v, NULL, SOCK, "virtio", net ? more : NULL)) {
		CHECK(!"boot");
		return false;
	}
	/* multi-user.target may come before Debian's qemu-ga answers. */
	if (!lab_agent_wait(SOCK, LAB_AGENT_MS)) {
		printf("# Debian's qemu-ga never answered\n");
		CHECK(!"the agent");
		vmproc_console_tail(v, 60);
		vmproc_stop(v);
		return false;
	}
	return true;
}

/* Where hotvm's threads are: a reset stuck, or a guest that is not. */
static void threads(struct vmproc *v)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd),
		 "for t in /proc/%d/task/*; do echo \"# $(cat $t/comm) "
		 "$(cat $t/wchan) $(cut -d' ' -f1 $t/syscall)\"; done",
		 (int)v->pid);
	sh(cmd);
}

/*
 * system_reset, then the guest ready again: 0, or -ETIMEDOUT (its console
 * and hotvm's threads said).
 */
static int reset(struct vmproc *v)
{
	char err[256];
	long t0 = lab_now_ms();
	int ret;

	CHECK_EQ(vmproc_qmp(v, "system_reset", NULL, err, sizeof(err), NULL),
		 0);
	ret = vmproc_wait_line(v, "ready: multi-user.target", BOOT_MS / 2, NULL,
			       0);
	printf("# ready again %ld ms after system_reset: %d\n",
	       lab_now_ms() - t0, ret);
	if (ret) {
		threads(v);
		vmproc_console_tail(v, 20);
	}
	return ret;
}

/* Bad input, then traffic both ways while vCPUs come and go. */
static void test_traffic(void)
{
	char err[512];
	struct streams s;
	struct vmproc v;
	long t0, pid;

	lab_net();
	/* Bad input before any VM: status 2, the reason said. */
	CHECK_EQ(hotvm_bad("tap=hvnosuch0", 0, err, sizeof(err)), 2);
	CHECK(strstr(err, "no such interface") != NULL);
	CHECK_EQ(hotvm_bad("tap=" TAP ",mac=01:00:00:00:00:01", 0, err,
			   sizeof(err)),
		 2);
	CHECK(strstr(err, "not a unicast MAC") != NULL);
	/*
	 * Another user's tap (root's), opened by a user who may use
	 * /dev/kvm and /dev/net/tun: TUNSETIFF's EPERM.
	 */
	CHECK_EQ(root_tap("hvtap9"), 0);
	CHECK_EQ(chmod("/dev/kvm", 0666), 0);
	CHECK_EQ(chmod("/dev/net/tun", 0666), 0);
	CHECK_EQ(hotvm_bad("tap=hvtap9", 65534, err, sizeof(err)), 2);
	CHECK(strstr(err, "no permission") != NULL);
	CHECK_EQ(chmod("/dev/kvm", 0600), 0);
	CHECK_EQ(chmod("/dev/net/tun", 0600), 0);

	if (!boot(&v, true))
		return;
	/* The running VM holds the tap: a second one is told it is busy. */
	CHECK_EQ(hotvm_bad("tap=" TAP, 0, err, sizeof(err)), 2);
	CHECK(strstr(err, "busy") != NULL);
	if (!guest_address()) {
		CHECK(!"the guest's address and ping");
		vmproc_console_tail(&v, 40);
		vmproc_stop(&v);
		return;
	}
	/* Both ways at once, vCPUs coming and going meanwhile. */
	t0 = lab_now_ms();
	CHECK(streams_start(&s, &pid));
	CHECK(streams_moving(&s, 2));
	hotplug(&v, 1, "online");
	hotplug(&v, 2, "online");
	hotplug(&v, 2, "offline");
	hotplug(&v, 1, "offline");
	hotplug(&v, 1, "online");
	hotplug(&v, 1, "offline");
	CHECK(streams_moving(&s, s.down_blocks + 2));
	streams_check(&s, pid, t0);
	CHECK_EQ(vmproc_stop(&v), 0);
}

/* A reset with both streams flowing; then traffic again. */
static void test_reset_traffic(void)
{
	struct streams s, s2;
	struct vmproc v;
	long t0, pid;
	int ret;

	if (!boot(&v, true))
		return;
	if (!guest_address()) {
		CHECK(!"the guest's address and ping");
		vmproc_stop(&v);
		return;
	}
	CHECK(streams_start(&s, &pid));
	CHECK(streams_moving(&s, 2));
	ret = reset(&v);
	CHECK_EQ(ret, 0);
	/* The old connections died with the guest's kernel: ended here. */
	atomic_store(&s.stop, true);
	shutdown(atomic_load(&s.down_fd), SHUT_RDWR);
	shutdown(atomic_load(&s.up_fd), SHUT_RDWR);
	pthread_join(s.down_t, NULL);
	pthread_join(s.up_t, NULL);
	close(s.down_l);
	close(s.up_l);
	free(s.up_first);
	printf("# before the reset: %u MiB down, %llu bytes up\n",
	       s.down_blocks, (unsigned long long)s.up_bytes);
	if (!ret && guest_address()) {
		t0 = lab_now_ms();
		CHECK(streams_start(&s2, &pid));
		CHECK(streams_moving(&s2, 2));
		streams_check(&s2, pid, t0);
	} else {
		CHECK(!"traffic after the reset");
	}
	CHECK_EQ(vmproc_stop(&v), 0);
}

/* The same image and reset without --net: the control of the above. */
static void test_reset_no_net(void)
{
	struct vmproc v;

	if (!boot(&v, false))
		return;
	CHECK_EQ(reset(&v), 0);
	CHECK_EQ(vmproc_stop(&v), 0);
}

int check_failures;

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_traffic),
		TEST(test_reset_traffic),
		TEST(test_reset_no_net),
	};

	if (lab_debian_init(argc, argv))
		return 1;
	return check_run_named(cases, sizeof(cases) / sizeof(cases[0]),
			       argv + 3, argc > 3 ? argc - 3 : 0);
}
