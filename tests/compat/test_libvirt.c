// SPDX-License-Identifier: GPL-2.0-only
/*
 * The libvirt bridge (vmm/ctl/libvirt.c) against libvirt's in-process test
 * driver, which needs no daemon: test:///default (whose state is shared by
 * the connections of one process while one stays open, so the test sees
 * what `hotvm cpu` did) and a test:///PATH.xml domain with hot-pluggable
 * vCPUs; and `hotvm cpu list --libvirt-xml` of a real hotvm VM (with
 * /dev/kvm) defined into the test driver, to prove libvirt accepts it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "check.h"
#include "cpu_cmd.h"
#include "vmproc.h"

int check_failures;

/* Runs `hotvm cpu ARGS...`; its stdout into @out. */
static int run_cpu(char *out, size_t len, const char *const *args)
{
	char *argv[16];
	FILE *o = tmpfile(), *e = tmpfile();
	int n = 0, rc;
	size_t got;

	argv[n++] = (char *)"cpu";
	for (; *args && n < 15; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	rc = cpu_cmd_run(n, argv, o, e);
	rewind(o);
	got = fread(out, 1, len - 1, o);
	out[got] = 0;
	rewind(e);
	while (fgets(out + got, (int)(len - got), e))
		printf("# stderr: %s", out + got);
	out[got] = 0;
	fclose(o);
	fclose(e);
	return rc;
}

static int count(const char *s, const char *word)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, word)); p += strlen(word))
		n++;
	return n;
}

static void quiet(void *data, virErrorPtr e)
{
	(void)data;
	(void)e;
}

static void test_default_domain(void)
{
	static const char *const list[] = {
		"list", "--connect", "test:///default", "--domain", "test", NULL
	};
	static const char *const down[] = { "resize",	 "1",
					    "--connect", "test:///default",
					    "--domain",	 "test",
					    NULL };
	static const char *const up[] = { "resize",    "2",
					  "--connect", "test:///default",
					  "--domain",  "test",
					  NULL };
	/* Kept open: the driver's state lives as long as a connection. */
	virConnectPtr c = virConnectOpen("test:///default");
	virDomainPtr d = c ? virDomainLookupByName(c, "test") : NULL;
	char out[4096];

	CHECK(d != NULL);
	CHECK_EQ(run_cpu(out, sizeof(out), list), 0);
	CHECK(strstr(out, "SOCKET") != NULL); /* hotvm's table */
	CHECK_EQ(count(out, "present"), 2);
	CHECK_EQ(run_cpu(out, sizeof(out), down), 0);
	CHECK_STREQ(out, "resized to 1 vCPUs\n");
	CHECK_EQ(virDomainGetVcpusFlags(d, VIR_DOMAIN_AFFECT_LIVE), 1);
	CHECK_EQ(run_cpu(out, sizeof(out), list), 0);
	CHECK_EQ(count(out, "present"), 1);
	CHECK_EQ(count(out, "free"), 1);
	CHECK_EQ(run_cpu(out, sizeof(out), up), 0);
	CHECK_EQ(virDomainGetVcpusFlags(d, VIR_DOMAIN_AFFECT_LIVE), 2);
	if (d)
		virDomainFree(d);
	if (c)
		virConnectClose(c);
}

static const char node_xml[] =
	"<node>\n"
	"  <domain type='test'>\n"
	"    <name>hp</name>\n"
	"    <memory>1048576</memory>\n"
	"    <vcpu placement='static' current='2'>4</vcpu>\n"
	"    <vcpus>\n"
	"      <vcpu id='0' enabled='yes' hotpluggable='no' order='1'/>\n"
	"      <vcpu id='1' enabled='yes' hotpluggable='yes' order='2'/>\n"
	"      <vcpu id='2' enabled='no' hotpluggable='yes'/>\n"
	"      <vcpu id='3' enabled='no' hotpluggable='yes'/>\n"
	"    </vcpus>\n"
	"    <os><type>hvm</type></os>\n"
	"  </domain>\n"
	"</node>\n";

static void test_hotpluggable_domain(void)
{
	char path[] = "/tmp/hotvm-lv-XXXXXX.xml", uri[64], out[4096];
	int fd = mkstemps(path, 4);
	const char *list[] = {
		"list", "--connect", uri, "--domain", "hp", NULL
	};
	const char *grow[] = { "resize",   "4",	 "--connect", uri,
			       "--domain", "hp", NULL };
	const char *over[] = { "resize",   "5",	 "--connect", uri,
			       "--domain", "hp", NULL };
	const char *json[] = { "list",	   "--json", "--connect", uri,
			       "--domain", "hp",     NULL };

	CHECK(fd >= 0);
	CHECK(write(fd, node_xml, strlen(node_xml)) ==
	      (ssize_t)strlen(node_xml));
	close(fd);
	snprintf(uri, sizeof(uri), "test://%s", path);
	CHECK_EQ(run_cpu(out, sizeof(out), list), 0);
	CHECK_EQ(count(out, "present"), 2);
	CHECK_EQ(count(out, "free"), 2);
	CHECK_EQ(run_cpu(out, sizeof(out), json), 0);
	CHECK(strstr(out, "query-hotpluggable-cpus") != NULL);
	CHECK_EQ(run_cpu(out, sizeof(out), grow), 0);
	CHECK_STREQ(out, "resized to 4 vCPUs\n");
	/* Beyond the maximum: libvirt says no, and so does the command. */
	CHECK_EQ(run_cpu(out, sizeof(out), over), 1);
	unlink(path);
}

/* hotvm's vCPU state as libvirt XML, loaded into the test driver. */
static void test_exported_xml_is_accepted(void)
{
	struct vmproc v;
	char out[4096], xml[8192];
	const char *args[] = { "list", "--libvirt-xml", "--api-socket", NULL,
			       NULL };
	virConnectPtr c;
	virDomainPtr d = NULL;
	char *desc;

	CHECK_EQ(vmproc_start(&v, "boot=1,max=4", "", NULL), 0);
	CHECK_EQ(vmproc_qmp(&v, "device_add", NULL, NULL, 0,
			    "{\"driver\": \"host-x86_64-cpu\", \"id\": "
			    "\"vcpu2\", \"socket-id\": 2}"),
		 0);
	args[3] = v.sock;
	CHECK_EQ(run_cpu(out, sizeof(out), args), 0);
	CHECK(strstr(out, "<vcpu placement='static' current='2'>4</vcpu>"));
	CHECK(strstr(out, "<vcpu id='0' enabled='yes' hotpluggable='no' "
			  "order='1'/>"));
	CHECK(strstr(out, "<vcpu id='2' enabled='yes' hotpluggable='yes' "
			  "order='2'/>"));
	CHECK(strstr(out, "<vcpu id='3' enabled='no' hotpluggable='yes'/>"));
	CHECK_EQ(vmproc_stop(&v), 0);

	snprintf(xml, sizeof(xml),
		 "<domain type='test'><name>fromhotvm</name>"
		 "<memory>1048576</memory>%s<os><type>hvm</type></os>"
		 "</domain>",
		 out);
	c = virConnectOpen("test:///default");
	CHECK(c != NULL);
	if (c)
		d = virDomainDefineXML(c, xml);
	if (!d)
		printf("# libvirt refused it: %s\n", virGetLastErrorMessage());
	CHECK(d != NULL);
	if (d) {
		CHECK_EQ(virDomainGetVcpusFlags(
				 d, VIR_DOMAIN_AFFECT_CONFIG |
					    VIR_DOMAIN_VCPU_MAXIMUM),
			 4);
		CHECK_EQ(virDomainGetVcpusFlags(d, VIR_DOMAIN_AFFECT_CONFIG),
			 2);
		desc = virDomainGetXMLDesc(d, 0);
		CHECK(desc && strstr(desc, "<vcpu id='2' enabled='yes' "
					   "hotpluggable='yes' order='2'/>"));
		free(desc);
		virDomainUndefine(d);
		virDomainFree(d);
	}
	if (c)
		virConnectClose(c);
}

/* Whether the cases named (all when none is) include the one on a VM. */
static bool wants_vm(int argc, char **argv)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "test_exported_xml_is_accepted"))
			return true;
	return false;
}

/*
 * Case names as arguments run only those: the meson tests run the driver
 * cases anywhere and the exported XML where /dev/kvm is, or in the lab
 * (lab-vm-suites), where a skip fails.
 */
int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_default_domain),
		TEST(test_hotpluggable_domain),
		TEST(test_exported_xml_is_accepted),
	};

	if (wants_vm(argc, argv) && access("/dev/kvm", R_OK | W_OK)) {
		printf("1..0 # SKIP /dev/kvm is absent (lab-vm-suites runs "
		       "it in the nested lab)\n");
		return 77;
	}
	virSetErrorFunc(NULL, quiet);
	return check_run_named(cases, sizeof(cases) / sizeof(cases[0]),
			       argv + 1, argc - 1);
}
