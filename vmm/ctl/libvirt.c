// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm cpu --connect URI --domain NAME` (libvirt.h): virDomainSetVcpusFlags
 * and virDomainGetVcpusFlags/virDomainGetVcpus on the domain's live state,
 * shown through the table printer of cpu_render.c, so a libvirt domain and a
 * hotvm VM look alike; and --libvirt-xml.
 *
 * libvirt is loaded (dlopen) only when --connect asks for it: linked in,
 * its 55 libraries (glib, gnutls, ICU, krb5, ...) were loaded by every
 * `hotvm run` too, which took 200 ms of a 300 ms boot in the nested lab.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#ifdef HOTVM_HAVE_LIBVIRT
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#endif

#include "cpu_json.h"
#include "cpu_render.h"
#include "cpu_slots.h"
#include "libvirt.h"

static int lv_socket(struct json_object *e)
{
	return json_object_get_int(
		cpu_json_member(cpu_json_member(e, "props"), "socket-id"));
}

void cli_libvirt_print_xml(FILE *out, struct json_object *hp,
			   struct json_object *fast)
{
	size_t n = json_object_is_type(hp, json_type_array)
			   ? json_object_array_length(hp)
			   : 0;
	struct json_object **slot = calloc(n ? n : 1, sizeof(*slot));
	int current = 0;

	/* vCPU n is socket n (hotvm's topology, one vCPU per socket). */
	for (size_t i = 0; slot && i < n; i++) {
		struct json_object *e = json_object_array_get_idx(hp, i);
		int s = lv_socket(e);

		if (s >= 0 && (size_t)s < n)
			slot[s] = e;
		current += cpu_json_member(e, "qom-path") != NULL;
	}
	fprintf(out, "<vcpu placement='static' current='%d'>%zu</vcpu>\n",
		current, n);
	fprintf(out, "<vcpus>\n");
	for (size_t i = 0; slot && i < n; i++) {
		const char *qom = json_object_get_string(
			cpu_json_member(slot[i], "qom-path"));
		struct json_object *f = qom ? cpu_slots_fast(fast, qom) : NULL;
		bool device = qom && !strncmp(qom, CPU_SLOTS_PERIPHERAL,
					      strlen(CPU_SLOTS_PERIPHERAL));
		int order = 0;

		/* libvirt's order: when it came online, by cpu-index. */
		for (size_t j = 0; f && j < n; j++) {
			const char *q = json_object_get_string(
				cpu_json_member(slot[j], "qom-path"));

			order += q && j <= i;
		}
		fprintf(out, "  <vcpu id='%zu' enabled='%s' hotpluggable='%s'",
			i, qom ? "yes" : "no",
			i && (device || !qom) ? "yes" : "no");
		if (qom && order)
			fprintf(out, " order='%d'", order);
		fprintf(out, "/>\n");
	}
	fprintf(out, "</vcpus>\n");
	free(slot);
}

#ifdef HOTVM_HAVE_LIBVIRT

/* The entry points used, typed by libvirt's own declarations. */
static struct {
	__typeof__(virConnectOpen) *connect_open;
	__typeof__(virConnectClose) *connect_close;
	__typeof__(virDomainLookupByName) *lookup;
	__typeof__(virDomainFree) *domain_free;
	__typeof__(virDomainGetVcpusFlags) *get_vcpus_flags;
	__typeof__(virDomainGetVcpus) *get_vcpus;
	__typeof__(virDomainSetVcpusFlags) *set_vcpus_flags;
	__typeof__(virGetLastError) *last_error;
	__typeof__(virSetErrorFunc) *set_error_func;
} lv;

#define LV_SONAME "libvirt.so.0"

static int lv_load(FILE *errf)
{
	static const struct {
		const char *name;
		size_t off;
	} syms[] = {
#define LV_SYM(field, sym) { #sym, offsetof(__typeof__(lv), field) }
		LV_SYM(connect_open, virConnectOpen),
		LV_SYM(connect_close, virConnectClose),
		LV_SYM(lookup, virDomainLookupByName),
		LV_SYM(domain_free, virDomainFree),
		LV_SYM(get_vcpus_flags, virDomainGetVcpusFlags),
		LV_SYM(get_vcpus, virDomainGetVcpus),
		LV_SYM(set_vcpus_flags, virDomainSetVcpusFlags),
		LV_SYM(last_error, virGetLastError),
		LV_SYM(set_error_func, virSetErrorFunc),
#undef LV_SYM
	};
	void *h = dlopen(LV_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(errf,
			"hotvm: cpu: --connect needs libvirt's library: %s "
			"(Debian: apt-get install libvirt0)\n",
			dlerror());
		return 1;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(h, syms[i].name);

		if (!f) {
			fprintf(errf, "hotvm: cpu: %s has no %s\n", LV_SONAME,
				syms[i].name);
			dlclose(h);
			return 1;
		}
		memcpy((char *)&lv + syms[i].off, &f, sizeof(f));
	}
	return 0; /* h stays open: the process is short-lived */
}

static int lv_error(FILE *errf, const char *what)
{
	const virError *e = lv.last_error();

	fprintf(errf, "hotvm: cpu: libvirt: %s: %s\n", what,
		e && e->message ? e->message : "failed");
	return 1;
}

/*
 * The domain's vCPUs in the shape of query-hotpluggable-cpus and
 * query-cpus-fast: vCPU n as socket n, online ones with a path named after
 * libvirt's alias (vcpuN) and their cpu-index; libvirt's API has no
 * thread ids.
 */
static int lv_shape(virDomainPtr d, struct json_object **hp,
		    struct json_object **fast, FILE *errf)
{
	int max = lv.get_vcpus_flags(d, VIR_DOMAIN_AFFECT_LIVE |
						VIR_DOMAIN_VCPU_MAXIMUM);
	virVcpuInfoPtr info;
	int cur;

	if (max < 0)
		return lv_error(errf, "virDomainGetVcpusFlags");
	info = calloc((size_t)max, sizeof(*info));
	if (!info)
		return 1;
	cur = lv.get_vcpus(d, info, max, NULL, 0);
	if (cur < 0) {
		free(info);
		return lv_error(errf, "virDomainGetVcpus");
	}
	*hp = json_object_new_array();
	*fast = json_object_new_array();
	for (int i = max; i-- > 0;) {
		struct json_object *e = json_object_new_object();
		struct json_object *p = json_object_new_object();
		char qom[64];

		json_object_object_add(p, "socket-id", json_object_new_int(i));
		json_object_object_add(p, "core-id", json_object_new_int(0));
		json_object_object_add(p, "thread-id", json_object_new_int(0));
		json_object_object_add(e, "type",
				       json_object_new_string("libvirt-vcpu"));
		json_object_object_add(e, "vcpus-count",
				       json_object_new_int(1));
		json_object_object_add(e, "props", p);
		snprintf(qom, sizeof(qom), CPU_SLOTS_PERIPHERAL "vcpu%d", i);
		for (int k = 0; k < cur; k++) {
			struct json_object *f;

			if ((int)info[k].number != i)
				continue;
			json_object_object_add(e, "qom-path",
					       json_object_new_string(qom));
			f = json_object_new_object();
			json_object_object_add(f, "cpu-index",
					       json_object_new_int(i));
			json_object_object_add(f, "qom-path",
					       json_object_new_string(qom));
			json_object_object_add(
				f, "host-cpu",
				json_object_new_int(info[k].cpu));
			json_object_array_add(*fast, f);
		}
		json_object_array_add(*hp, e);
	}
	free(info);
	return 0;
}

static int lv_list(virDomainPtr d, bool json, FILE *out, FILE *errf)
{
	struct json_object *hp = NULL, *fast = NULL, *both;
	int rc = lv_shape(d, &hp, &fast, errf);

	if (rc)
		return rc;
	if (json) {
		both = json_object_new_object();
		json_object_object_add(both, "query-hotpluggable-cpus", hp);
		json_object_object_add(both, "query-cpus-fast", fast);
		fprintf(out, "%s\n",
			json_object_to_json_string_ext(
				both, JSON_C_TO_STRING_PRETTY));
		json_object_put(both);
		return 0;
	}
	cpu_render_list(out, hp, fast);
	json_object_put(hp);
	json_object_put(fast);
	return 0;
}

static int lv_resize(virDomainPtr d, const char *arg, bool json, FILE *out,
		     FILE *errf)
{
	char *end;
	long n = strtol(arg ? arg : "", &end, 10);

	if (!arg || !*arg || *end || n < 1 || n > 1024) {
		fprintf(errf, "hotvm: cpu resize: give a count of 1 or more\n");
		return 2;
	}
	if (lv.set_vcpus_flags(d, (unsigned int)n, VIR_DOMAIN_AFFECT_LIVE))
		return lv_error(errf, "virDomainSetVcpusFlags");
	if (json)
		fprintf(out, "{\"count\": %ld}\n", n);
	else
		fprintf(out, "resized to %ld vCPUs\n", n);
	return 0;
}

/* libvirt prints its errors itself unless told otherwise. */
static void lv_quiet(void *data, virErrorPtr e)
{
	(void)data;
	(void)e;
}

int cli_libvirt_run(const char *verb, const char *arg, const char *uri,
		    const char *domain, bool json, FILE *out, FILE *errf)
{
	virConnectPtr c;
	virDomainPtr d;
	int rc;

	if (!uri || !domain) {
		fprintf(errf, "hotvm: cpu: --connect URI and --domain NAME go "
			      "together\n");
		return 2;
	}
	if (strcmp(verb, "list") && strcmp(verb, "resize")) {
		fprintf(errf,
			"hotvm: cpu %s: only list and resize drive a libvirt "
			"domain\n",
			verb);
		return 2;
	}
	if (lv_load(errf))
		return 1;
	lv.set_error_func(NULL, lv_quiet);
	c = lv.connect_open(uri);
	if (!c)
		return lv_error(errf, uri);
	d = lv.lookup(c, domain);
	if (!d) {
		rc = lv_error(errf, domain);
		lv.connect_close(c);
		return rc;
	}
	rc = !strcmp(verb, "list") ? lv_list(d, json, out, errf)
				   : lv_resize(d, arg, json, out, errf);
	lv.domain_free(d);
	lv.connect_close(c);
	fflush(out);
	return rc;
}

#else

int cli_libvirt_run(const char *verb, const char *arg, const char *uri,
		    const char *domain, bool json, FILE *out, FILE *errf)
{
	(void)verb;
	(void)arg;
	(void)uri;
	(void)domain;
	(void)json;
	(void)out;
	fprintf(errf, "hotvm: cpu: this hotvm was built without libvirt "
		      "(install libvirt-dev and set up the build again)\n");
	return 1;
}

#endif
