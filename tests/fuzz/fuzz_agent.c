// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes what the guest agent sends hotvm (the guest is untrusted):
 * vmm/agent/qga.c's reply path (the handshake's resync past stale lines
 * and garbage, line framing, the strict JSON check, the 1 MiB cap) and
 * vmm/hotplug/linux_view.c's reading of the replies (guest-get-vcpus,
 * the firmware-node reads through guest-file-open/read/close), through
 * their public entries: qga_call(), qga_forward(), qga_send() and
 * hotplug_agent_refresh() on the real controller over the API tests'
 * fake machine (tests/fake/fake_vm.h).
 *
 * The guest is this file: serial_receive() and serial_rx_flush() are
 * wrapped at link time, so each line hotvm sends the agent reaches
 * guest_line() at once, in the caller's thread, which answers it with
 * the input's next record before hotvm waits: runs are reproducible, and
 * a call that gets no good reply waits only for its short deadline.
 *
 * Input: a scenario byte (bit 0: also the Linux view), then records, one
 * per line hotvm sends: a flags byte, a 2-byte length, that many bytes.
 * Flags: bit 0, a working agent's sync answer ("\xff{"return": ID}\n")
 * before the bytes; bit 1, after them; bit 2, the bytes repeated (the
 * next byte times 8 KiB, for the size cap).  "@ID@" in the bytes becomes
 * the id of the last sync hotvm sent.  For the Linux view, every sync
 * is answered after the record and every other line ends with a newline
 * (see guest_line()).  Once the input is used up the
 * agent answers every line with its sync answer and an error, so that
 * the rest of the run ends quickly (linux_view.c waits 1 s for a reply
 * that is not there).  Seeds: real qemu-ga 7.2 replies (make-seeds.py).
 *
 * Checked: no crash or sanitizer report; each call's result is one of
 * its documented errors, with a reason, or a reply of the documented
 * shape; the agent's counters add up; Linux's view of every CPU is -1, 0
 * or 1.
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fake_vm.h"
#include "fuzz.h"
#include "hotplug.h"
#include "hotplug_vmm.h"
#include "qga.h"

#define CALL_MS 2 /* a reply that is not there is not waited for long */
#define GUEST_NO                                                               \
	"{\"error\": {\"class\": \"GenericError\", \"desc\": \"no more "       \
	"input\"}}\n"

size_t __wrap_serial_receive(struct serial *s, const void *buf, size_t len);
void __wrap_serial_rx_flush(struct serial *s);

/* The two agents' ports: only their addresses are used. */
static char port_a, port_b;

static struct guest {
	pthread_mutex_t lock;
	struct fuzz_in in;
	struct serial_host host_a, host_b;
	char line[8192];
	size_t len;
	long long id;
	bool view; /* answering fuzz_linux_view()'s calls */
} gs = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void put(const struct serial_host *h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h->out(h->ctx, (uint8_t)s[i]);
}

static void put_sync(const struct serial_host *h)
{
	char b[64];
	int n = snprintf(b, sizeof(b), "\xff{\"return\": %lld}\n", gs.id);

	put(h, b, (size_t)n);
}

/* The record's bytes, "@ID@" replaced, @rep times. */
static void put_bytes(const struct serial_host *h, const uint8_t *p, size_t n,
		      unsigned int rep)
{
	char id[24];
	int idn = snprintf(id, sizeof(id), "%lld", gs.id);

	for (unsigned int r = 0; r < rep; r++)
		for (size_t i = 0; i < n; i++) {
			if (i + 4 <= n && !memcmp(p + i, "@ID@", 4)) {
				put(h, id, (size_t)idn);
				i += 3;
				continue;
			}
			put(h, (const char *)p + i, 1);
		}
}

/* One line from hotvm: note a sync's id, answer with the next record. */
static void guest_line(const struct serial_host *h)
{
	struct json_object *o = json_tokener_parse(gs.line), *a, *v;
	unsigned int flags, rep = 1;
	const uint8_t *p;
	size_t n, len;

	bool sync = o && json_object_object_get_ex(o, "arguments", &a) &&
		    json_object_object_get_ex(a, "id", &v);

	if (sync)
		gs.id = json_object_get_int64(v);
	json_object_put(o);
	if (!fuzz_left(&gs.in)) {
		/* Used up: an agent that refuses all, quickly. */
		put_sync(h);
		put(h, GUEST_NO, sizeof(GUEST_NO) - 1);
		return;
	}
	flags = fuzz_u8(&gs.in);
	len = (size_t)fuzz_uint(&gs.in, 2);
	if (flags & 4)
		rep = 1 +
		      fuzz_u8(&gs.in) * 8192u / (len ? (unsigned int)len : 1);
	p = fuzz_bytes(&gs.in, len, &n);
	if (flags & 1)
		put_sync(h);
	put_bytes(h, p, n, rep);
	if (flags & 2)
		put_sync(h);
	/*
	 * linux_view.c's calls wait 1 s for what does not come: there the
	 * handshake always ends and every reply has its newline (the
	 * handshake itself is fuzzed with short deadlines, fuzz_calls()).
	 */
	if (gs.view)
		sync ? put_sync(h) : put(h, "\n", 1);
}

size_t __wrap_serial_receive(struct serial *s, const void *buf, size_t len)
{
	const struct serial_host *h =
		(void *)s == &port_a ? &gs.host_a : &gs.host_b;
	const uint8_t *b = buf;

	pthread_mutex_lock(&gs.lock);
	for (size_t i = 0; i < len; i++) {
		if (b[i] == 0xff) { /* the agent's parser starts afresh */
			gs.len = 0;
		} else if (b[i] == '\n') {
			gs.line[gs.len] = '\0';
			guest_line(h);
			gs.len = 0;
		} else if (gs.len < sizeof(gs.line) - 1) {
			gs.line[gs.len++] = (char)b[i];
		}
	}
	pthread_mutex_unlock(&gs.lock);
	h->drained(h->ctx); /* read at once */
	return len;
}

void __wrap_serial_rx_flush(struct serial *s)
{
	(void)s;
}

static void check_err(int rc, const struct hv_err *err)
{
	FUZZ_ASSERT(rc == 0 || rc == -ETIMEDOUT || rc == -EREMOTEIO ||
		    rc == -EPROTO || rc == -EMSGSIZE || rc == -ENOMEM);
	FUZZ_ASSERT(!rc || err->msg[0]);
}

/* The agent alone: a call, another client's call, a send. */
static void fuzz_calls(struct qga *g)
{
	struct json_object *r = NULL, *args = json_object_new_object();
	struct hv_err err = { 0 };
	struct qga_stats st;
	int rc;

	rc = qga_call(g, "guest-get-vcpus", NULL, &r, CALL_MS, &err);
	check_err(rc, &err);
	FUZZ_ASSERT(!rc || !r);
	json_object_put(r);

	hv_err_clear(&err);
	json_object_object_add(args, "id", json_object_new_int64(77));
	rc = qga_forward(g, "guest-sync", args, true, &r, CALL_MS, &err);
	check_err(rc, &err);
	FUZZ_ASSERT(rc != -EREMOTEIO);
	FUZZ_ASSERT(!rc == !!r);
	if (r)
		FUZZ_ASSERT(json_object_object_length(r) == 1 &&
			    (json_object_object_get_ex(r, "return", NULL) ||
			     json_object_object_get_ex(r, "error", NULL)));
	json_object_put(r);
	json_object_put(args);

	hv_err_clear(&err);
	rc = qga_send(g, "guest-shutdown", NULL, CALL_MS, &err);
	check_err(rc, &err);

	qga_get_stats(g, &st);
	FUZZ_ASSERT(st.calls == 3 && st.failed <= 3);
	FUZZ_ASSERT(st.timeouts + st.bad_replies <= st.failed);
}

/* Linux's view: what the agent says of the CPUs, checked. */
static void fuzz_linux_view(struct qga *g)
{
	struct fake_vm *fv = NULL;

	fake_vm_agent = g;
	gs.view = true;
	if (fake_vm_create(4, 1, 50, &fv))
		return; /* out of resources: nothing to judge */
	for (int round = 0; round < 2; round++) {
		hotplug_agent_refresh(fv->hp, round);
		for (unsigned int c = 0; c < 4; c++) {
			struct hp_cpu_view v;

			FUZZ_ASSERT(!hotplug_cpu_view(fv->hp, c, &v));
			FUZZ_ASSERT(v.linux_online >= -1 &&
				    v.linux_online <= 1);
		}
	}
	fake_vm_destroy(fv);
	fake_vm_agent = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qga a, b;
	uint8_t scenario;

	gs.in = (struct fuzz_in){ .p = data, .n = size };
	gs.len = 0;
	gs.id = 0;
	gs.view = false;
	scenario = fuzz_u8(&gs.in);
	FUZZ_ASSERT(!qga_init(&a, &gs.host_a));
	qga_attach(&a, (struct serial *)(void *)&port_a);
	fuzz_calls(&a);
	qga_destroy(&a);
	if (scenario & 1) {
		FUZZ_ASSERT(!qga_init(&b, &gs.host_b));
		qga_attach(&b, (struct serial *)(void *)&port_b);
		fuzz_linux_view(&b);
		qga_destroy(&b);
	}
	return 0;
}
