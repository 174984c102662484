// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where a request goes (vmm/api/qmp.h, qmp_internal.h): the server's own
 * commands and the QMP_CMD_FAST ones are answered at once in the I/O
 * thread; the others go to a worker.  A client's replies keep the order
 * of its requests, so a request that may not go yet is held; what is read
 * ahead is bounded in bytes (max_queued per client, max_queued_total for
 * all), and a request past a bound is refused in its place.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qmp_internal.h"
#include "log.h"

const struct qmp_entry *qmp_find_command(struct qmp_server *s, const char *name)
{
	for (size_t i = 0; i < s->n_cmds; i++)
		if (!strcmp(s->cmds[i].cmd->name, name))
			return &s->cmds[i];
	return NULL;
}

static const struct qmp_arg capabilities_args[] = {
	{ .name = "enable",
	  .type = QMP_ARG_ARRAY,
	  .optional = true,
	  .help = "capabilities to enable (none is offered)" },
	{ 0 },
};

/* The server's own commands, declared like the others; handled inline. */
static const struct qmp_command builtins[] = {
	{ .name = "qmp_capabilities",
	  .flags = QMP_CMD_FAST,
	  .help = "leave negotiation mode: the first command of a session",
	  .args = capabilities_args },
	{ .name = "query-commands",
	  .flags = QMP_CMD_FAST,
	  .help = "the commands this server runs" },
};

#define QMP_NR_BUILTINS (sizeof(builtins) / sizeof(builtins[0]))

static int builtin_capabilities(struct qmp_conn *c, struct json_object *args,
				struct qmp_error *err)
{
	struct json_object *en;

	if (c->negotiated)
		return qmp_error_set(err, QMP_ERROR_COMMAND_NOT_FOUND,
				     "Capabilities negotiation is already "
				     "complete, command ignored");
	if (json_object_object_get_ex(args, "enable", &en) &&
	    json_object_array_length(en)) {
		/* The greeting offers no capability, so none can be enabled. */
		struct json_object *cap = json_object_array_get_idx(en, 0);

		if (!json_object_is_type(cap, json_type_string))
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Invalid parameter type for "
					     "'enable', expected: string");
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Capability '%s' not available",
				     json_object_get_string(cap));
	}
	c->negotiated = true;
	return 0;
}

static struct json_object *builtin_query_commands(struct qmp_server *s)
{
	struct json_object *list = json_object_new_array();

	for (size_t i = 0; i < QMP_NR_BUILTINS + s->n_cmds; i++) {
		struct json_object *o = json_object_new_object();
		const char *name =
			i < QMP_NR_BUILTINS
				? builtins[i].name
				: s->cmds[i - QMP_NR_BUILTINS].cmd->name;

		json_object_object_add(o, "name", json_object_new_string(name));
		json_object_array_add(list, o);
	}
	return list;
}

bool qmp_is_builtin(const char *name)
{
	for (size_t i = 0; i < QMP_NR_BUILTINS; i++)
		if (!strcmp(builtins[i].name, name))
			return true;
	return false;
}

/*
 * What a parsed request holds in memory, about (qmp_lex.h: json-c's
 * allocations, measured).  The text is no measure: "[{},{},...]" takes 260
 * times its length, a long string only its length.
 */
size_t qmp_request_cost(struct json_object *o)
{
	size_t cost;

	switch (json_object_get_type(o)) {
	case json_type_null:
		return 0; /* json-c's null is a NULL pointer */
	case json_type_string:
		return QMP_LEX_COST_STRING +
		       (size_t)json_object_get_string_len(o);
	case json_type_double:
		return QMP_LEX_COST_DOUBLE;
	case json_type_array:
		cost = QMP_LEX_COST_ARRAY;
		for (size_t i = 0; i < json_object_array_length(o); i++)
			cost += QMP_LEX_COST_ELEMENT +
				qmp_request_cost(
					json_object_array_get_idx(o, i));
		return cost;
	case json_type_object:
		cost = QMP_LEX_COST_OBJECT;
		json_object_object_foreach(o, key, val)
		{
			cost += QMP_LEX_COST_MEMBER + strlen(key) +
				qmp_request_cost(val);
		}
		return cost;
	default:
		return QMP_LEX_COST_INT;
	}
}

static size_t kib(size_t bytes)
{
	return (bytes + 1023) / 1024;
}

/*
 * Whether reading ahead a request of cost bytes (earlier ones of c are
 * unanswered) would pass a limit: then err says which, and what to do.
 * One request alone is bounded while it is parsed (qmp_lex.h).
 */
static bool over_budget(struct qmp_server *s, struct qmp_conn *c, size_t cost,
			struct qmp_error *err)
{
	size_t all = atomic_load(&s->queued);
	const char *which;

	if (c->queued + cost > s->max_queued) {
		which = "per client";
		qmp_error_set(err, QMP_ERROR_GENERIC,
			      "request not queued: the read-ahead limit per "
			      "client is %zu KiB, and this client's requests "
			      "waiting for a reply would take %zu KiB with it; "
			      "send it again once earlier requests are "
			      "answered",
			      kib(s->max_queued), kib(c->queued + cost));
	} else if (all + cost > s->max_queued_total) {
		which = "for all clients";
		qmp_error_set(err, QMP_ERROR_GENERIC,
			      "request not queued: the read-ahead limit for "
			      "all clients is %zu KiB, and the requests of all "
			      "clients waiting for a reply would take %zu KiB "
			      "with it; send it again once earlier requests "
			      "are answered",
			      kib(s->max_queued_total), kib(all + cost));
	} else {
		return false;
	}
	if (!c->refusal_logged)
		pr_err("api: client fd %d: refusing requests sent ahead of "
		       "their turn: past the read-ahead limit %s (logged "
		       "once per client)",
		       c->fd, which);
	c->refusal_logged = true;
	return true;
}

/*
 * Whether req may be dispatched now, with earlier requests of c still
 * unanswered: only an operation behind operations, which queues on the same
 * thread behind them, so the replies keep their order.
 */
static bool may_go_ahead(struct qmp_server *s, struct qmp_conn *c,
			 const char *name)
{
	const struct qmp_entry *e;

	if (!c->inflight)
		return true;
	if (c->inflight_other || !name || !c->negotiated)
		return false;
	e = qmp_find_command(s, name);
	return e && qmp_is_operation(e->cmd);
}

/*
 * Answers req at once, hands it to a worker, holds it until the client's
 * earlier requests are answered, or, read ahead past a limit, refuses it.
 * Takes over req (cost: its estimated bytes).
 */
void qmp_dispatch(struct qmp_server *s, struct qmp_conn *c,
		  struct json_object *req, size_t cost)
{
	struct qmp_error err = { 0 }, budget = { 0 };
	const struct qmp_entry *e = NULL;
	struct json_object *args, *ret = NULL, *resp;
	const char *name = qmp_check_request(req, &args, &err);
	int rc = -EINVAL;

	/* Read ahead (earlier ones unanswered): within the limits, or not. */
	if (c->inflight && over_budget(s, c, cost, &budget)) {
		atomic_fetch_add(&s->refused, 1);
		qmp_conn_reply(s, c, qmp_response(-EINVAL, NULL, &budget, req));
		json_object_put(req);
		return;
	}
	if (!may_go_ahead(s, c, name)) {
		c->held = req; /* dispatched again once c's replies are out */
		c->held_cost = cost;
		qmp_charge(s, c, cost);
		return;
	}
	if (name && !args) {
		/* Handlers always get an object; it lives as long as req. */
		args = json_object_new_object();
		json_object_object_add(req, "arguments", args);
	}
	if (!name) {
		/* err says what is wrong with the request */
	} else if (!strcmp(name, "qmp_capabilities")) {
		rc = qmp_check_args(args, capabilities_args, false, NULL, &err);
		if (!rc)
			rc = builtin_capabilities(c, args, &err);
	} else if (!c->negotiated) {
		rc = qmp_error_set(&err, QMP_ERROR_COMMAND_NOT_FOUND,
				   "Expecting capabilities negotiation "
				   "with 'qmp_capabilities'");
	} else if (!strcmp(name, "query-commands")) {
		rc = qmp_check_args(args, NULL, false, NULL, &err);
		if (!rc)
			ret = builtin_query_commands(s);
	} else if (!(e = qmp_find_command(s, name))) {
		rc = qmp_error_set(&err, QMP_ERROR_COMMAND_NOT_FOUND,
				   "The command %s has not been found", name);
	} else if (e->cmd->flags & QMP_CMD_FAST) {
		rc = qmp_call_handler(e, args, &ret, &err);
	} else if (qmp_submit(s, c, e, req, args, cost)) {
		return;
	} else {
		rc = qmp_error_set(&err, QMP_ERROR_GENERIC,
				   "%s not run: the VM is shutting down", name);
	}
	resp = qmp_response(rc, ret, &err, req);
	/* Events raised by an inline handler happened before its reply. */
	qmp_deliver_events(s);
	qmp_conn_send_json(s, c, resp);
	json_object_put(resp);
	json_object_put(req);
}
