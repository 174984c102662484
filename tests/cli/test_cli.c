// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for `hotvm run`'s option table: the value parsers, the parser
 * that walks the table, --help, and README.md's options table (HOTVM_README
 * names README.md, readme_section.h).
 */
#include <errno.h>

#include "check.h"
#include "cli.h"
#include "readme_section.h"

static void test_size(void)
{
	uint64_t v = 0;

	CHECK_EQ(cli_parse_size("256M", &v), 0);
	CHECK_EQ(v, 256ULL << 20);
	CHECK_EQ(cli_parse_size("1g", &v), 0);
	CHECK_EQ(v, 1ULL << 30);
	CHECK_EQ(cli_parse_size("64KiB", &v), 0);
	CHECK_EQ(v, 64ULL << 10);
	CHECK_EQ(cli_parse_size("2TB", &v), 0);
	CHECK_EQ(v, 2ULL << 40);
	CHECK_EQ(cli_parse_size("4096", &v), 0);
	CHECK_EQ(v, 4096);
	CHECK_EQ(cli_parse_size("", &v), -EINVAL);
	CHECK_EQ(cli_parse_size("M", &v), -EINVAL);
	CHECK_EQ(cli_parse_size("-1M", &v), -EINVAL);
	CHECK_EQ(cli_parse_size(" 1M", &v), -EINVAL);
	CHECK_EQ(cli_parse_size("12X", &v), -EINVAL);
	CHECK_EQ(cli_parse_size("1MM", &v), -EINVAL);
	CHECK_EQ(cli_parse_size("1.5G", &v), -EINVAL);
	CHECK_EQ(cli_parse_size("0", &v), -ERANGE);
	CHECK_EQ(cli_parse_size("99999999999999999999", &v), -ERANGE);
	CHECK_EQ(cli_parse_size("20000000T", &v), -ERANGE);
}

/* --memory: no unit means MiB, as QEMU's -m; the suffixes still work. */
static void test_memory(void)
{
	char *bare[] = { "run", "--memory", "512" };
	char *eq[] = { "run", "--memory=2048" };
	char *suffixed[] = { "run", "--memory", "64K" };
	char *zero[] = { "run", "--memory", "0" };
	struct cli_run_opts o;
	uint64_t v = 0;

	CHECK_EQ(cli_parse_memory("512", &v), 0);
	CHECK_EQ(v, 512ULL << 20);
	CHECK_EQ(cli_parse_memory("1", &v), 0);
	CHECK_EQ(v, 1ULL << 20);
	CHECK_EQ(cli_parse_memory("4096", &v), 0);
	CHECK_EQ(v, 4ULL << 30);
	CHECK_EQ(cli_parse_memory("256M", &v), 0);
	CHECK_EQ(v, 256ULL << 20);
	CHECK_EQ(cli_parse_memory("2g", &v), 0);
	CHECK_EQ(v, 2ULL << 30);
	CHECK_EQ(cli_parse_memory("64KiB", &v), 0);
	CHECK_EQ(v, 64ULL << 10);
	CHECK_EQ(cli_parse_memory("1MB", &v), 0);
	CHECK_EQ(v, 1ULL << 20);
	CHECK_EQ(cli_parse_memory("0", &v), -ERANGE);
	CHECK_EQ(cli_parse_memory("", &v), -EINVAL);
	CHECK_EQ(cli_parse_memory(NULL, &v), -EINVAL);
	CHECK_EQ(cli_parse_memory("lots", &v), -EINVAL);
	CHECK_EQ(cli_parse_memory("12X", &v), -EINVAL);
	/* Fits in bytes, not once read as MiB. */
	CHECK_EQ(cli_parse_memory("17592186044416", &v), -ERANGE);
	CHECK_EQ(cli_parse_memory("17592186044415", &v), 0);
	CHECK_EQ(v, 17592186044415ULL << 20);

	CHECK_EQ(cli_parse_run(3, bare, &o), 0);
	CHECK_EQ(o.board.memory, 512ULL << 20);
	CHECK_EQ(cli_parse_run(2, eq, &o), 0);
	CHECK_EQ(o.board.memory, 2ULL << 30);
	CHECK_EQ(cli_parse_run(3, suffixed, &o), 0);
	CHECK_EQ(o.board.memory, 64ULL << 10);
	CHECK_EQ(cli_parse_run(3, zero, &o), -EINVAL);
}

/* cli_parse_cpus() with its reason copied into @why. */
static int parse_cpus(const char *s, struct board_cpus *c, char *why, size_t n)
{
	struct hv_err err = { 0 };
	int ret = cli_parse_cpus(s, c, &err);

	snprintf(why, n, "%s", hv_err_msg(&err));
	return ret;
}

static void test_cpus(void)
{
	struct board_cpus c;
	char why[128];

	CHECK_EQ(parse_cpus("boot=2,max=8", &c, why, sizeof(why)), 0);
	CHECK_EQ(c.boot, 2);
	CHECK_EQ(c.max, 8);
	CHECK_EQ(parse_cpus("max=8,boot=3", &c, why, sizeof(why)), 0);
	CHECK_EQ(c.boot, 3);
	CHECK_EQ(c.max, 8);
	CHECK_EQ(parse_cpus("boot=4", &c, why, sizeof(why)), 0);
	CHECK_EQ(c.max, 4);
	CHECK_EQ(parse_cpus("max=4", &c, why, sizeof(why)), 0);
	CHECK_EQ(c.boot, 1);

	CHECK_EQ(parse_cpus("boot=4,max=2", &c, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "greater than max"));
	CHECK_EQ(parse_cpus("boot=0", &c, why, sizeof(why)), -EINVAL);
	CHECK_EQ(parse_cpus("4", &c, why, sizeof(why)), -EINVAL);
	CHECK_EQ(parse_cpus("", &c, why, sizeof(why)), -EINVAL);
	CHECK_EQ(parse_cpus("boot=", &c, why, sizeof(why)), -EINVAL);
	CHECK_EQ(parse_cpus("boot=x", &c, why, sizeof(why)), -EINVAL);
	CHECK_EQ(parse_cpus("boot=-1", &c, why, sizeof(why)), -EINVAL);
	CHECK_EQ(parse_cpus("boot=1,", &c, why, sizeof(why)), -EINVAL);
	CHECK_EQ(parse_cpus("boot=1,boot=2", &c, why, sizeof(why)), -EINVAL);
	CHECK_EQ(parse_cpus("cores=2", &c, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "cores"));
	CHECK_EQ(parse_cpus("boot=9999999999", &c, why, sizeof(why)), -EINVAL);
}

static void test_serial(void)
{
	struct serial_config s = { 0 };

	CHECK_EQ(cli_parse_serial("stdio", &s), 0);
	CHECK_EQ(s.sink, SERIAL_SINK_STDIO);
	CHECK_EQ(cli_parse_serial("none", &s), 0);
	CHECK_EQ(s.sink, SERIAL_SINK_NONE);
	CHECK_EQ(cli_parse_serial("file:/tmp/x", &s), 0);
	CHECK_EQ(s.sink, SERIAL_SINK_FILE);
	CHECK_STREQ(s.path, "/tmp/x");
	CHECK_EQ(cli_parse_serial("file:", &s), -EINVAL);
	CHECK_EQ(cli_parse_serial("tty", &s), -EINVAL);
}

static void test_run(void)
{
	struct cli_run_opts o;
	char *ok[] = { "run",	   "--kernel", "k",	    "--cmdline=a b",
		       "--memory", "1G",       "--cpus",    "boot=2,max=4",
		       "--serial", "none",     "--initrd=i" };
	char *missing[] = { "run", "--kernel" };
	char *unknown[] = { "run", "--frobnicate" };
	char *badcpus[] = { "run", "--cpus", "boot=3,max=2" };
	char *help[] = { "run", "--help" };
	char *defaults[] = { "run" };

	CHECK_EQ(cli_parse_run(11, ok, &o), 0);
	CHECK_STREQ(o.board.kernel, "k");
	CHECK_STREQ(o.board.cmdline, "a b");
	CHECK_STREQ(o.board.initrd, "i");
	CHECK_EQ(o.board.memory, 1ULL << 30);
	CHECK_EQ(o.board.cpus.boot, 2);
	CHECK_EQ(o.board.cpus.max, 4);
	CHECK_EQ(o.board.serial.sink, SERIAL_SINK_NONE);

	CHECK_EQ(cli_parse_run(1, defaults, &o), 0);
	CHECK(!o.board.kernel);
	CHECK_EQ(o.board.memory, BOARD_DEFAULT_MEMORY);
	CHECK_EQ(o.board.cpus.boot, 1);
	CHECK_EQ(o.board.cpus.max, 1);
	CHECK_EQ(o.board.serial.sink, SERIAL_SINK_STDIO);

	CHECK_EQ(cli_parse_run(2, missing, &o), -EINVAL);
	CHECK_EQ(cli_parse_run(2, unknown, &o), -EINVAL);
	CHECK_EQ(cli_parse_run(3, badcpus, &o), -EINVAL);
	CHECK_EQ(cli_parse_run(2, help, &o), 0);
	CHECK(o.help);
}

static void test_hotplug_opts(void)
{
	struct cli_run_opts o;
	char *ok[] = { "run",
		       "--api-socket",
		       "/tmp/s",
		       "--hook",
		       "/bin/a",
		       "--hook=/bin/b",
		       "--name",
		       "vm1",
		       "--hook-timeout",
		       "250",
		       "--hotplug-timeout=3000" };
	char *defaults[] = { "run" };
	char *bad_ms[] = { "run", "--hotplug-timeout", "0" };
	char *bad_ms2[] = { "run", "--hook-timeout", "10s" };
	char *bad_ms3[] = { "run", "--hotplug-timeout", "999999999" };
	char *no_sock[] = { "run", "--api-socket" };
	char *empty_sock[] = { "run", "--api-socket=" };
	char *empty_name[] = { "run", "--name=" };
	char *many[2 + 2 * (BOARD_MAX_HOOKS + 1)] = { "run" };
	int ms;

	CHECK_EQ(cli_parse_run(11, ok, &o), 0);
	CHECK_STREQ(o.board.api_socket, "/tmp/s");
	CHECK_EQ(o.board.nr_hooks, 2);
	CHECK_STREQ(o.board.hooks[0], "/bin/a");
	CHECK_STREQ(o.board.hooks[1], "/bin/b");
	CHECK_STREQ(o.board.name, "vm1");
	CHECK_EQ(o.board.hook_timeout_ms, 250);
	CHECK_EQ(o.board.hotplug_timeout_ms, 3000);

	CHECK_EQ(cli_parse_run(1, defaults, &o), 0);
	CHECK(!o.board.api_socket);
	CHECK_EQ(o.board.nr_hooks, 0);
	CHECK_STREQ(o.board.name, BOARD_DEFAULT_NAME);
	CHECK_EQ(o.board.hook_timeout_ms, 0);
	CHECK_EQ(o.board.hotplug_timeout_ms, 0);

	CHECK_EQ(cli_parse_run(3, bad_ms, &o), -EINVAL);
	CHECK_EQ(cli_parse_run(3, bad_ms2, &o), -EINVAL);
	CHECK_EQ(cli_parse_run(3, bad_ms3, &o), -EINVAL);
	CHECK_EQ(cli_parse_run(2, no_sock, &o), -EINVAL);
	CHECK_EQ(cli_parse_run(2, empty_sock, &o), -EINVAL);
	CHECK_EQ(cli_parse_run(2, empty_name, &o), -EINVAL);

	for (int i = 0; i < BOARD_MAX_HOOKS + 1; i++) {
		many[1 + 2 * i] = "--hook";
		many[2 + 2 * i] = "/bin/true";
	}
	CHECK_EQ(cli_parse_run(1 + 2 * BOARD_MAX_HOOKS, many, &o), 0);
	CHECK_EQ(o.board.nr_hooks, BOARD_MAX_HOOKS);
	CHECK_EQ(cli_parse_run(1 + 2 * (BOARD_MAX_HOOKS + 1), many, &o),
		 -EINVAL);

	CHECK_EQ(cli_parse_ms("1", &ms), 0);
	CHECK_EQ(ms, 1);
	CHECK_EQ(cli_parse_ms("", &ms), -EINVAL);
	CHECK_EQ(cli_parse_ms("-5", &ms), -EINVAL);
}

/* Every row is complete, and spelled once. */
static void test_table(void)
{
	size_t n;
	const struct cli_opt *t = cli_run_options(&n);

	CHECK(n > 0);
	for (size_t i = 0; i < n; i++) {
		CHECK(t[i].name && !strncmp(t[i].name, "--", 2));
		CHECK(!strchr(t[i].name, '='));
		CHECK(t[i].help && *t[i].help && t[i].parse);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(t[i].name, t[j].name));
	}
}

/* --help shows every option of the table, with its default. */
static void test_usage(void)
{
	size_t n, len = 0;
	const struct cli_opt *t = cli_run_options(&n);
	char *out = NULL;
	FILE *f = open_memstream(&out, &len);

	CHECK(f);
	if (!f)
		return;
	cli_run_usage(f);
	fclose(f);
	CHECK(strstr(out, "Usage: hotvm run [options]"));
	CHECK(strstr(out, "  --cpus boot=N,max=M "));
	CHECK(strstr(out, "  -h, --help "));
	CHECK(!strchr(out, '`'));
	for (size_t i = 0; i < n; i++) {
		char want[128];

		snprintf(want, sizeof(want), "  %s%s%s%s%s",
			 t[i].alias ? t[i].alias : "", t[i].alias ? ", " : "",
			 t[i].name, t[i].arg ? " " : "",
			 t[i].arg ? t[i].arg : "");
		CHECK(strstr(out, want));
		snprintf(want, sizeof(want), "(default: %s)",
			 t[i].def ? t[i].def : "");
		CHECK(!t[i].def || strstr(out, want));
	}
	for (char *l = out; *l;
	     l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
		CHECK(strcspn(l, "\n") <= 78);
	free(out);
}

/* README.md's options table is the table's (HOTVM_README names it). */
static void test_readme(void)
{
	size_t len = 0;
	char *text = NULL;
	FILE *f = open_memstream(&text, &len);

	CHECK(f);
	if (!f)
		return;
	cli_run_markdown(f);
	fclose(f);
	CHECK(readme_section_check("run-options", text));
	free(text);
}

/* --disk: its keys, repeatable up to eight, each value's own copy. */
static void test_disk(void)
{
	struct cli_run_opts o;
	char *two[] = { "run", "--disk", "path=/a,readonly=on,id=sys-1",
			"--disk=id=d2,path=/b" };
	char *bad[][3] = {
		{ "run", "--disk", "readonly=on" },
		{ "run", "--disk", "path=" },
		{ "run", "--disk", "path=/a,path=/b" },
		{ "run", "--disk", "path=/a,readonly=yes" },
		{ "run", "--disk", "path=/a,id=this-is-longer-than-20" },
		{ "run", "--disk", "path=/a,id=a b" },
		{ "run", "--disk", "path=/a,cache=none" },
		{ "run", "--disk", "/a" },
	};
	char *nine[19] = { "run" };

	CHECK_EQ(cli_parse_run(4, two, &o), 0);
	CHECK_EQ(o.board.nr_disks, 2);
	CHECK_STREQ(o.board.disks[0].path, "/a");
	CHECK(o.board.disks[0].readonly);
	CHECK_STREQ(o.board.disks[0].id, "sys-1");
	CHECK_STREQ(o.board.disks[1].path, "/b");
	CHECK(!o.board.disks[1].readonly);
	CHECK_STREQ(o.board.disks[1].id, "d2");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(cli_parse_run(3, bad[i], &o), -EINVAL);
	for (int i = 0; i < 9; i++) {
		nine[1 + 2 * i] = "--disk";
		nine[2 + 2 * i] = "path=/x";
	}
	CHECK_EQ(cli_parse_run(17, nine, &o), 0);
	CHECK_EQ(o.board.nr_disks, 8);
	CHECK_EQ(cli_parse_run(19, nine, &o), -EINVAL);
}

/* --net: its keys, repeatable up to four; a bad MAC is bad input. */
static void test_net(void)
{
	struct cli_run_opts o;
	char *two[] = { "run", "--net", "tap=tap0,mac=02:00:00:aa:bb:01,id=lan",
			"--net=mrg_rxbuf=off,offload=off,tap=tap1" };
	char *bad[][3] = {
		{ "run", "--net", "mac=02:00:00:00:00:01" },
		{ "run", "--net", "tap=" },
		{ "run", "--net", "tap=a,tap=b" },
		{ "run", "--net", "tap=a,mac=03:00:00:00:00:01" },
		{ "run", "--net", "tap=a,mac=00:00:00:00:00:00" },
		{ "run", "--net", "tap=a,mac=02:00:00:00:01" },
		{ "run", "--net", "tap=a,mac=zz:00:00:00:00:01" },
		{ "run", "--net", "tap=a,id=seventeen-chars-x" },
		{ "run", "--net", "tap=a,offload=yes" },
		{ "run", "--net", "tap=a,vhost=on" },
		{ "run", "--net", "tap0" },
	};
	char *five[11] = { "run" };

	CHECK_EQ(cli_parse_run(4, two, &o), 0);
	CHECK_EQ(o.board.nr_nets, 2);
	CHECK_STREQ(o.board.nets[0].tap, "tap0");
	CHECK(o.board.nets[0].mac_set);
	CHECK_EQ(o.board.nets[0].mac[4], 0xbb);
	CHECK_STREQ(o.board.nets[0].id, "lan");
	CHECK(!o.board.nets[0].no_offload && !o.board.nets[0].no_mrg_rxbuf);
	CHECK_STREQ(o.board.nets[1].tap, "tap1");
	CHECK(!o.board.nets[1].mac_set);
	CHECK(o.board.nets[1].no_offload && o.board.nets[1].no_mrg_rxbuf);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(cli_parse_run(3, bad[i], &o), -EINVAL);
	for (int i = 0; i < 5; i++) {
		five[1 + 2 * i] = "--net";
		five[2 + 2 * i] = "tap=t";
	}
	CHECK_EQ(cli_parse_run(9, five, &o), 0);
	CHECK_EQ(o.board.nr_nets, 4);
	CHECK_EQ(cli_parse_run(11, five, &o), -EINVAL);
}

/* --vsock and --agent-channel vsock[:PORT]: reserved CIDs refused. */
static void test_vsock(void)
{
	struct cli_run_opts o;
	char *good[] = { "run", "--vsock", "cid=3,socket=/run/v.sock",
			 "--agent-channel", "vsock:4000" };
	char *dflt[] = { "run", "--agent-channel", "vsock" };
	char *bad[][3] = {
		{ "run", "--vsock", "cid=0,socket=/v" },
		{ "run", "--vsock", "cid=1,socket=/v" },
		{ "run", "--vsock", "cid=2,socket=/v" },
		{ "run", "--vsock", "cid=4294967295,socket=/v" },
		{ "run", "--vsock", "cid=3" },
		{ "run", "--agent-channel", "vsock:" },
		{ "run", "--agent-channel", "vsock:4294967296" },
		{ "run", "--agent-channel", "vsock:1x" },
	};

	CHECK_EQ(cli_parse_run(5, good, &o), 0);
	CHECK_EQ(o.board.vsock.cid, 3);
	CHECK_STREQ(o.board.vsock.path, "/run/v.sock");
	CHECK_EQ(o.board.agent_channel, BOARD_AGENT_VSOCK);
	CHECK_EQ(o.board.agent_vsock_port, 4000);
	CHECK_EQ(cli_parse_run(3, dflt, &o), 0);
	CHECK_EQ(o.board.agent_vsock_port, CLI_AGENT_VSOCK_PORT);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(cli_parse_run(3, bad[i], &o), -EINVAL);
}

/* Options without a value: no "=value"; --help ends parsing. */
static void test_flags(void)
{
	struct cli_run_opts o;
	char *reboot[] = { "run", "--no-reboot" };
	char *reboot_eq[] = { "run", "--no-reboot=1" };
	char *help_eq[] = { "run", "--help=1" };
	char *help_first[] = { "run", "-h", "--frobnicate" };
	char *eject[] = { "run", "--guest-eject", "deny" };

	CHECK_EQ(cli_parse_run(2, reboot, &o), 0);
	CHECK(o.board.no_reboot);
	CHECK_EQ(cli_parse_run(2, reboot_eq, &o), -EINVAL);
	CHECK_EQ(cli_parse_run(2, help_eq, &o), -EINVAL);
	CHECK_EQ(cli_parse_run(3, help_first, &o), 0);
	CHECK(o.help);
	CHECK_EQ(cli_parse_run(3, eject, &o), 0);
	CHECK_EQ(o.board.guest_eject, HOTPLUG_GUEST_EJECT_DENY);
}

CHECK_MAIN(TEST(test_size), TEST(test_memory), TEST(test_cpus),
	   TEST(test_serial), TEST(test_run), TEST(test_hotplug_opts),
	   TEST(test_table), TEST(test_usage), TEST(test_readme),
	   TEST(test_disk), TEST(test_net), TEST(test_vsock), TEST(test_flags))
