// SPDX-License-Identifier: GPL-2.0-only
/*
 * The workers' replies back to their clients (qmp_internal.h), after the
 * events their commands raised; and, once a client's earlier replies are
 * out, what waited behind them: a held reply, a held request, the rest of
 * what it sent.
 */
#include <stdlib.h>
#include <string.h>

#include "qmp_internal.h"

static struct qmp_conn *conn_by_id(struct qmp_server *s, uint64_t id)
{
	for (size_t i = 0; i < s->n_conns; i++)
		if (s->conns[i]->id == id)
			return s->conns[i];
	return NULL;
}

/* Every earlier reply of c is out: what waited behind them goes now. */
static void conn_release(struct qmp_server *s, struct qmp_conn *c)
{
	struct json_object *req = c->held;
	size_t cost = c->held_cost;

	c->inflight_other = false;
	c->overlong = false;
	c->held = NULL;
	c->held_cost = 0;
	qmp_uncharge(s, c, cost);
	if (c->held_reply) {
		qmp_conn_send(s, c, c->held_reply, strlen(c->held_reply));
		free(c->held_reply);
		c->held_reply = NULL;
	}
	if (req)
		qmp_dispatch(s, c, req, cost);
}

/* Replies from the workers, after the events their commands raised. */
void qmp_deliver_replies(struct qmp_server *s)
{
	struct qmp_job *j, *next;

	pthread_mutex_lock(&s->lock);
	j = s->done_head;
	s->done_head = NULL;
	s->done_tail = &s->done_head;
	pthread_mutex_unlock(&s->lock);
	if (!j)
		return;
	/* Taken after the replies: every event a command raised is here. */
	qmp_deliver_events(s);
	/* What the clients sent meanwhile is queued whole (a burst). */
	qmp_submit_hold(s);
	for (; j; j = next) {
		struct qmp_conn *c = conn_by_id(s, j->conn_id);

		next = j->next;
		qmp_uncharge(s, c, j->cost);
		if (c) {
			c->inflight--;
			if (j->reply)
				qmp_conn_send(s, c, j->reply, j->reply_len);
			else
				qmp_conn_send_error(s, c, "out of memory");
			if (!c->inflight)
				conn_release(s, c);
			/* What the client sent meanwhile is next. */
			qmp_conn_process(s, c);
		}
		qmp_job_free(j);
	}
	qmp_submit_release(s);
}
