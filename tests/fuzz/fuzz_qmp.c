// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes the control API: the QMP server's framing, parsing and dispatch
 * (vmm/api/qmp_*.c) and the commands' handlers (vmm/api/qmp_cmds*.c),
 * on the real hotplug controller with the API tests' fake vCPUs and
 * scripted guest in place of KVM (tests/fake/fake_vm.h).
 *
 * The parser's only public entry is the socket (vmm/api/qmp.h), so each
 * input gets a fresh server, controller and connection: the input's bytes
 * are what one client sends, in one go, then it half-closes and reads
 * everything until the server hangs up.  A fresh server per input keeps
 * runs reproducible: no state survives from one input to the next.
 *
 * Checked: no crash or sanitizer report in the server thread or the
 * handlers; the server answers and closes (a hang is a libFuzzer
 * timeout); every line it sends is one strict JSON object (json-c's strict
 * mode, and no NaN or Infinity echoed from a request): the greeting first, then
 * only replies ("return" or "error" with a class and a description) and
 * events, all strictly valid UTF-8 (issue 8, item 7, and issue 21, item
 * 7: invalid UTF-8 in a request was echoed raw, overlong forms and
 * surrogates until the second); HOTVM_FUZZ_STRICT_UTF8=0 turns that check
 * off.
 *
 * Input: 5 bytes of setup (negotiate first, CPU counts, a CPU whose next
 * guest:ap-starting fails on the host side, a CPU whose next
 * ap:online-work fails on the guest side, the request size limit), then
 * the client's bytes.  Faults are injected as a user injects them.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fake_vm.h"
#include "fuzz.h"
#include "hotplug.h"
#include "hotvm/guest_states.h"
#include "qmp.h"
#include "qmp_cmds.h"

#define REPLY_MAX (8u << 20)
#define HANG_MS	  20000
/* A guest that does not answer: none here, but bound every wait anyway. */
#define GUEST_MS 100

static char dir[48], sock_path[96];
static char *reply;

static void cleanup(void)
{
	unlink(sock_path);
	rmdir(dir);
}

static void setup_once(void)
{
	if (dir[0])
		return;
	snprintf(dir, sizeof(dir), "/tmp/hotvm-fuzz-qmp-XXXXXX");
	FUZZ_ASSERT(mkdtemp(dir));
	snprintf(sock_path, sizeof(sock_path), "%s/api.sock", dir);
	reply = malloc(REPLY_MAX + 1);
	FUZZ_ASSERT(reply);
	atexit(cleanup);
}

static void send_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return; /* dropped us (too long a request): fine */
		p += k;
		n -= (size_t)k;
	}
}

/* Everything until the server closes; a hang is a finding. */
static size_t read_all(int fd)
{
	size_t len = 0;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t k;
		int n = poll(&pfd, 1, HANG_MS);

		if (n < 0 && errno == EINTR)
			continue;
		FUZZ_ASSERT(n ==
			    1); /* the server neither answered nor closed */
		k = recv(fd, reply + len, REPLY_MAX - len, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break; /* EOF, or ECONNRESET when it dropped us */
		len += (size_t)k;
		FUZZ_ASSERT(len < REPLY_MAX);
	}
	reply[len] = 0;
	return len;
}

/*
 * Strict UTF-8 (RFC 3629): no overlong form, no surrogate, nothing above
 * U+10FFFF (those were echoed raw).
 */
static bool utf8_valid(const unsigned char *s, size_t n)
{
	static const uint32_t least[] = { 0, 0x80, 0x800, 0x10000 };

	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t k;
		uint32_t cp;

		if (c < 0x80)
			k = 0;
		else if (c >= 0xc2 && c < 0xe0)
			k = 1;
		else if (c >= 0xe0 && c < 0xf0)
			k = 2;
		else if (c >= 0xf0 && c < 0xf5)
			k = 3;
		else
			return false;
		if (n - i <= k)
			return false;
		cp = k ? c & (0x3fu >> k) : c;
		for (size_t j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if (cp < least[k] || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += k + 1;
	}
	return true;
}

/*
 * No NaN or Infinity anywhere in @o: json-c's strict mode takes them
 * (0.16), though RFC 8259 has no such numbers.  A parsed double keeps its
 * text, so 1e999 (valid, if out of range) is told from Infinity.
 */
static void no_nan(struct json_object *o)
{
	const char *t;

	switch (json_object_get_type(o)) {
	case json_type_double:
		t = json_object_to_json_string(o);
		FUZZ_ASSERT(!strstr(t, "NaN") && !strstr(t, "Infinity"));
		break;
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++)
			no_nan(json_object_array_get_idx(o, i));
		break;
	case json_type_object: {
		json_object_object_foreach(o, k, v)
		{
			(void)k;
			no_nan(v);
		}
		break;
	}
	default:
		break;
	}
}

/*
 * One line: exactly one strict JSON (RFC 8259) object, by json-c's strict
 * mode (no comments, trailing commas, leading zeros, single quotes) and
 * no_nan() (an id of NaN was echoed raw).
 */
static struct json_object *strict_json(const char *line, size_t n)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;

	FUZZ_ASSERT(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, line, (int)n);
	FUZZ_ASSERT(o && json_tokener_get_error(tok) == json_tokener_success &&
		    (size_t)json_tokener_get_parse_end(tok) == n);
	json_tokener_free(tok);
	no_nan(o);
	return o;
}

static void check_line(const char *line, size_t n, bool first, bool strict)
{
	struct json_object *o = strict_json(line, n), *v, *e;
	int kinds = 0;

	FUZZ_ASSERT(json_object_is_type(o, json_type_object));
	if (first) {
		FUZZ_ASSERT(json_object_object_get_ex(o, "QMP", &v));
	} else {
		kinds += json_object_object_get_ex(o, "return", &v);
		kinds += json_object_object_get_ex(o, "event", &v);
		if (json_object_object_get_ex(o, "error", &e)) {
			kinds++;
			FUZZ_ASSERT(json_object_object_get_ex(e, "class", &v) &&
				    json_object_is_type(v, json_type_string));
			FUZZ_ASSERT(json_object_object_get_ex(e, "desc", &v) &&
				    json_object_is_type(v, json_type_string));
		}
		FUZZ_ASSERT(kinds == 1);
	}
	if (strict)
		FUZZ_ASSERT(utf8_valid((const unsigned char *)line, n));
	json_object_put(o);
}

static void check_replies(size_t len)
{
	const char *env = getenv("HOTVM_FUZZ_STRICT_UTF8");
	bool strict = !env || strcmp(env, "0");
	char *p = reply, *end = reply + len;
	bool first = true;

	FUZZ_ASSERT(len > 0); /* the greeting at least */
	while (p < end) {
		char *nl = memmem(p, (size_t)(end - p), "\r\n", 2);

		/* QMP's framing: every message ends with CRLF. */
		FUZZ_ASSERT(nl);
		*nl = 0;
		check_line(p, (size_t)(nl - p), first, strict);
		first = false;
		p = nl + 2;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char nego[] = "{\"execute\":\"qmp_capabilities\"}\n";
	struct fuzz_in in = { data, size };
	uint8_t flags = fuzz_u8(&in), b1 = fuzz_u8(&in), b2 = fuzz_u8(&in),
		b3 = fuzz_u8(&in), b4 = fuzz_u8(&in);
	unsigned int max = 1 + (flags >> 1) % 8, boot = 1 + b1 % max;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct qmp_server *s;
	struct qmp_cmds *qc;
	struct fake_vm *fv;
	const uint8_t *body;
	size_t n;
	int fd;

	setup_once();
	FUZZ_ASSERT(fake_vm_create(max, boot, GUEST_MS, &fv) == 0);
	if (b2 & 0x80)
		hotplug_inject(fv->hp, b2 % max, HP_SIDE_HOST, HOST_AP_STARTING,
			       NULL);
	if (b3 & 0x80)
		hotplug_inject(fv->hp, b3 % max, HP_SIDE_GUEST, GUEST_AP_WORK,
			       NULL);
	FUZZ_ASSERT(qmp_server_create(
			    &(struct qmp_server_opts){
				    .path = sock_path,
				    .max_clients = 2,
				    /* Sometimes small, to reach the limit. */
				    .max_request = b4 ? 16u * b4 : 0 },
			    &s) == 0);
	FUZZ_ASSERT(qmp_cmds_register(s, fv->hp, NULL, &qc) == 0);
	FUZZ_ASSERT(qmp_server_start(s) == 0);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	FUZZ_ASSERT(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	FUZZ_ASSERT(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	if (flags & 1)
		send_all(fd, (const uint8_t *)nego, sizeof(nego) - 1);
	body = fuzz_bytes(&in, fuzz_left(&in), &n);
	send_all(fd, body, n);
	shutdown(fd, SHUT_WR);
	n = read_all(fd);
	close(fd);

	/*
	 * As the board: no events, the workers joined, the vCPUs stopped,
	 * then the commands go.
	 */
	qmp_cmds_detach(qc);
	qmp_server_stop(s);
	fake_vm_destroy(fv);
	qmp_cmds_unregister(qc);
	check_replies(n);
	return 0;
}
