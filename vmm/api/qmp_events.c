// SPDX-License-Identifier: GPL-2.0-only
/*
 * Events (vmm/api/qmp.h): queued as text by any thread, including a
 * handler or a vCPU thread, and written out by the I/O thread as they
 * come, also while a command runs.  A reply is written after the events
 * its command raised.  An event is never dropped silently: a lossy one
 * that a lagging client misses is counted and reported (EVENTS_LOST).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "clock.h"
#include "qmp_internal.h"
#include "log.h"

/* The wall clock @ago_ns before now. */
static void wall_before(struct timeval *tv, uint64_t ago_ns)
{
	uint64_t us = (uint64_t)tv->tv_sec * 1000000u + (uint64_t)tv->tv_usec;

	us -= ago_ns / 1000 < us ? ago_ns / 1000 : us;
	tv->tv_sec = (time_t)(us / 1000000u);
	tv->tv_usec = (suseconds_t)(us % 1000000u);
}

/*
 * {"event", "data", "timestamp"} as text, json-c's plain form: @name is
 * one of hotvm's event names (no character to escape), @data the text of
 * a JSON object or NULL.  Written with one snprintf rather than built as
 * json-c objects: an event is on the hot path of every hotplug step, and
 * the envelope's five objects cost more than the formatting.  @ago_ns:
 * how long before now it happened.
 */
static struct qmp_event *event_text(const char *name, const char *data,
				    bool lossy, uint64_t ago_ns)
{
	struct qmp_event *e;
	struct timeval tv;
	int len;

	gettimeofday(&tv, NULL);
	wall_before(&tv, ago_ns);
	len = snprintf(NULL, 0,
		       "{\"event\":\"%s\"%s%s,\"timestamp\":{\"seconds\":%lld,"
		       "\"microseconds\":%lld}}",
		       name, data ? ",\"data\":" : "", data ? data : "",
		       (long long)tv.tv_sec, (long long)tv.tv_usec);
	e = len < 0 ? NULL : malloc(sizeof(*e) + (size_t)len + 1);
	if (!e)
		return NULL;
	*e = (struct qmp_event){ .lossy = lossy, .len = (size_t)len };
	snprintf(e->text, (size_t)len + 1,
		 "{\"event\":\"%s\"%s%s,\"timestamp\":{\"seconds\":%lld,"
		 "\"microseconds\":%lld}}",
		 name, data ? ",\"data\":" : "", data ? data : "",
		 (long long)tv.tv_sec, (long long)tv.tv_usec);
	return e;
}

/* The same with @data as json-c objects; takes over data. */
static struct qmp_event *event_new(const char *name, struct json_object *data,
				   bool lossy, uint64_t ago_ns)
{
	const char *text =
		data ? json_object_to_json_string_ext(data, QMP_JSON_FLAGS)
		     : NULL;
	struct qmp_event *e = NULL;

	if (text || !data)
		e = event_text(name, text, lossy, ago_ns);
	json_object_put(data);
	return e;
}

/* Queues @e (NULL: out of memory) for every client. */
static int queue(struct qmp_server *s, const char *name, struct qmp_event *e)
{
	bool lossy = e && e->lossy;
	bool dropped = false, first;

	if (!e) {
		pr_err("api: event %s dropped: out of memory", name);
		return -ENOMEM;
	}
	pthread_mutex_lock(&s->lock);
	/*
	 * The I/O thread takes the whole queue at once, so only the event
	 * that finds it empty need wake it: a hot-add's dozen CPUHP_STATEs
	 * from one ring drain were a dozen eventfd writes, and on a busy CPU
	 * as many switches to the I/O thread inside the vCPU's exit.
	 */
	first = !s->ev_head;
	if (lossy && s->n_lossy >= QMP_MAX_PENDING_EVENTS) {
		s->lost++;
		dropped = true;
	} else {
		*s->ev_tail = e;
		s->ev_tail = &e->next;
		s->n_lossy += lossy;
	}
	pthread_mutex_unlock(&s->lock);
	if (dropped)
		free(e); /* counted: the clients get an EVENTS_LOST */
	if (first)
		qmp_wake(s);
	return 0;
}

static int emit(struct qmp_server *s, const char *name,
		struct json_object *data, bool lossy, uint64_t ago_ns)
{
	return queue(s, name, event_new(name, data, lossy, ago_ns));
}

int qmp_emit_event(struct qmp_server *s, const char *name,
		   struct json_object *data)
{
	return emit(s, name, data, false, 0);
}

int qmp_emit_event_lossy(struct qmp_server *s, const char *name,
			 struct json_object *data)
{
	return emit(s, name, data, true, 0);
}

/* How long before now @at_ns (CLOCK_MONOTONIC) was; 0 for 0. */
static uint64_t ago(uint64_t at_ns)
{
	uint64_t mono = hv_now_ns();

	return at_ns && at_ns < mono ? mono - at_ns : 0;
}

int qmp_emit_event_text_lossy_at(struct qmp_server *s, const char *name,
				 const char *data, uint64_t at_ns)
{
	return queue(s, name, event_text(name, data, true, ago(at_ns)));
}

/* The client caught up after skipping lossy events: say how many. */
void qmp_report_lost(struct qmp_server *s, struct qmp_conn *c)
{
	struct qmp_event *e;
	struct json_object *d;

	if (!c->lost || c->dead || qmp_conn_backlog(c) > s->max_output / 2)
		return;
	d = json_object_new_object();
	json_object_object_add(d, "count", json_object_new_int64(c->lost));
	e = event_new(QMP_EVENT_LOST, d, false, 0);
	if (!e)
		return; /* still counted: the next try reports it */
	qmp_conn_send(s, c, e->text, e->len);
	c->lost = 0;
	free(e);
}

static void conn_send_event(struct qmp_server *s, struct qmp_conn *c,
			    const struct qmp_event *e)
{
	if (!c->negotiated || c->dead)
		return;
	if (e->lossy && qmp_conn_backlog(c) > s->max_output / 2) {
		c->lost++;
		return;
	}
	qmp_report_lost(s, c);
	qmp_conn_send(s, c, e->text, e->len);
}

void qmp_deliver_events(struct qmp_server *s)
{
	struct qmp_event *e, *next;
	unsigned long long lost;

	pthread_mutex_lock(&s->lock);
	e = s->ev_head;
	s->ev_head = NULL;
	s->ev_tail = &s->ev_head;
	s->n_lossy = 0;
	lost = s->lost;
	s->lost = 0;
	pthread_mutex_unlock(&s->lock);

	if (lost)
		pr_err("api: %llu progress events dropped: the control thread "
		       "fell behind",
		       lost);
	for (size_t i = 0; i < s->n_conns; i++)
		if (s->conns[i]->negotiated)
			s->conns[i]->lost += lost;
	for (; e; e = next) {
		next = e->next;
		for (size_t i = 0; i < s->n_conns; i++)
			conn_send_event(s, s->conns[i], e);
		free(e);
	}
	for (size_t i = 0; i < s->n_conns; i++)
		qmp_report_lost(s, s->conns[i]);
}

void qmp_events_free(struct qmp_server *s)
{
	struct qmp_event *e, *next;

	for (e = s->ev_head; e; e = next) {
		next = e->next;
		free(e);
	}
	s->ev_head = NULL;
	s->ev_tail = &s->ev_head;
}

/*
 * A reply made by the I/O thread, in its place among c's replies: now, or
 * once every earlier one is out.  Takes resp.
 */
void qmp_conn_reply(struct qmp_server *s, struct qmp_conn *c,
		    struct json_object *resp)
{
	const char *text =
		c->inflight
			? json_object_to_json_string_ext(resp, QMP_JSON_FLAGS)
			: NULL;

	if (text && (c->held_reply = strdup(text))) {
		json_object_put(resp);
		return;
	}
	qmp_deliver_events(s);
	qmp_conn_send_json(s, c, resp);
	json_object_put(resp);
}
