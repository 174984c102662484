// SPDX-License-Identifier: GPL-2.0-only
/*
 * The worker threads (vmm/api/qmp.h): the query thread runs the read-only
 * commands one at a time, the operation thread every other command one at
 * a time in the order they arrived from all clients.  A handler that may
 * block runs here, so nothing a guest or a hook does can stall events,
 * queries or `quit`.  A burst of one command with a batch handler, queued
 * one after another, runs as one batch.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qmp_internal.h"
#include "log.h"
#include "seccomp_policy.h"

/* A handler's outcome, with a reason whatever the handler left in err. */
static int call_result(int rc, struct qmp_error *err)
{
	if (rc && !hv_err_is_set(&err->e))
		qmp_error_set(err, QMP_ERROR_GENERIC, "%s",
			      strerror(rc < 0 ? -rc : EIO));
	if (!rc) /* a handler that filled err but returned 0 */
		*err = (struct qmp_error){ 0 };
	return rc;
}

/* Checks the arguments against the declaration, then runs the handler. */
int qmp_call_handler(const struct qmp_entry *e, struct json_object *args,
		     struct json_object **ret, struct qmp_error *err)
{
	const struct qmp_command *cmd = e->cmd;
	int rc = qmp_check_args(args, cmd->args, cmd->flags & QMP_CMD_OPEN_ARGS,
				e->ctx, err);

	if (!rc)
		rc = cmd->handler(e->ctx, args, ret, err);
	return call_result(rc, err);
}

/* {"return": ret} or {"error": err}, with the request's id; takes ret. */
struct json_object *qmp_response(int rc, struct json_object *ret,
				 const struct qmp_error *err,
				 struct json_object *req)
{
	struct json_object *resp, *id = NULL;

	if (rc) {
		json_object_put(ret);
		resp = qmp_error_object(
			err->class ? err->class : QMP_ERROR_GENERIC,
			hv_err_msg(&err->e));
	} else {
		resp = json_object_new_object();
		json_object_object_add(resp, "return",
				       ret ? ret : json_object_new_object());
	}
	if (json_object_is_type(req, json_type_object) &&
	    json_object_object_get_ex(req, "id", &id))
		json_object_object_add(resp, "id", json_object_get(id));
	return resp;
}

void qmp_job_free(struct qmp_job *j)
{
	json_object_put(j->req);
	free(j->reply);
	free(j);
}

/* Serialises the outcome into j->reply; takes ret, frees the request. */
static void job_answer(struct qmp_job *j, int rc, struct json_object *ret,
		       const struct qmp_error *err)
{
	struct json_object *resp = qmp_response(rc, ret, err, j->req);
	const char *text;
	size_t len;

	text = json_object_to_json_string_length(resp, QMP_JSON_FLAGS, &len);
	j->reply = text ? malloc(len + 1) : NULL;
	if (j->reply) {
		memcpy(j->reply, text, len + 1);
		j->reply_len = len;
	}
	json_object_put(resp);
	/* The request is the worker's: free it here, not in the I/O thread. */
	json_object_put(j->req);
	j->req = NULL;
	j->args = NULL;
}

/* On a worker: runs the job's command (unless stopping) into j->reply. */
static void job_run(struct qmp_job *j, bool stopping)
{
	struct qmp_error err = { 0 };
	struct json_object *ret = NULL;
	int rc;

	if (stopping)
		rc = qmp_error_set(&err, QMP_ERROR_GENERIC,
				   "%s not run: the VM is shutting down",
				   j->e.cmd->name);
	else
		rc = qmp_call_handler(&j->e, j->args, &ret, &err);
	job_answer(j, rc, ret, &err);
}

/*
 * On the operation thread: jobs[0..n) of one command with a batch handler,
 * queued one after another.  Those whose arguments pass the declaration
 * go to the handler together; each is answered on its own.
 */
static void batch_run(struct qmp_job **jobs, size_t n)
{
	const struct qmp_command *cmd = jobs[0]->e.cmd;
	void *ctx = jobs[0]->e.ctx;
	struct qmp_call *calls = calloc(n, sizeof(*calls));
	struct qmp_call *todo = calloc(n, sizeof(*todo));
	size_t *at = calloc(n, sizeof(*at)), nt = 0;

	if (!calls || !todo || !at) {
		for (size_t i = 0; i < n; i++)
			job_run(jobs[i], false);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct qmp_call *c = &calls[i];

		c->args = jobs[i]->args;
		c->rc = qmp_check_args(c->args, cmd->args,
				       cmd->flags & QMP_CMD_OPEN_ARGS, ctx,
				       &c->err);
		if (!c->rc) {
			at[nt] = i;
			todo[nt++] = *c;
		}
	}
	if (nt)
		cmd->batch(ctx, todo, nt);
	for (size_t k = 0; k < nt; k++)
		calls[at[k]] = todo[k];
	for (size_t i = 0; i < n; i++) {
		struct qmp_call *c = &calls[i];

		c->rc = call_result(c->rc, &c->err);
		job_answer(jobs[i], c->rc, c->ret, &c->err);
	}
out:
	free(calls);
	free(todo);
	free(at);
}

/*
 * Takes the next job off w's queue (s->lock held), with the jobs of the
 * same command queued right after it when that command batches.  Returns
 * how many are in jobs[].
 */
static size_t take_jobs(struct qmp_worker *w, struct qmp_job **jobs)
{
	size_t n = 0;

	do {
		jobs[n++] = w->head;
		w->head = w->head->next;
	} while (jobs[0]->e.cmd->batch && w->head &&
		 w->head->e.cmd == jobs[0]->e.cmd && n < QMP_BATCH_MAX);
	if (!w->head)
		w->tail = &w->head;
	return n;
}

static void *worker_thread(void *arg)
{
	struct qmp_worker *w = arg;
	struct qmp_server *s = w->s;

	seccomp_enter(w == &s->workers[QMP_WORKER_OP]
			      ? SECCOMP_THREAD_QMP_OP
			      : SECCOMP_THREAD_QMP_QUERY);
	pthread_mutex_lock(&s->lock);
	for (;;) {
		bool stopping = s->workers_stopping;
		struct qmp_job **js = w->jobs;
		size_t n;

		if (!w->head) {
			if (stopping)
				break;
			pthread_cond_wait(&w->cond, &s->lock);
			continue;
		}
		n = take_jobs(w, js);
		pthread_mutex_unlock(&s->lock);

		if (n > 1 && !stopping)
			batch_run(js, n);
		else
			for (size_t i = 0; i < n; i++)
				job_run(js[i], stopping);

		pthread_mutex_lock(&s->lock);
		for (size_t i = 0; i < n; i++) {
			js[i]->next = NULL;
			*s->done_tail = js[i];
			s->done_tail = &js[i]->next;
		}
		pthread_mutex_unlock(&s->lock);
		qmp_wake(s);
		/* The answers are out: what follows an operation, after it. */
		if (w == &s->workers[QMP_WORKER_OP] && s->after_ops &&
		    !stopping)
			s->after_ops(s->after_ops_ctx);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

void qmp_server_after_ops(struct qmp_server *s, void (*fn)(void *), void *ctx)
{
	if (s->started)
		return;
	s->after_ops = fn;
	s->after_ops_ctx = ctx;
}

void qmp_submit_hold(struct qmp_server *s)
{
	s->submit_held++;
}

void qmp_submit_release(struct qmp_server *s)
{
	if (--s->submit_held)
		return;
	pthread_mutex_lock(&s->lock);
	for (unsigned int i = 0; i < QMP_NR_WORKERS; i++)
		if (s->workers[i].head)
			pthread_cond_signal(&s->workers[i].cond);
	pthread_mutex_unlock(&s->lock);
}

/* Hands req to a worker; false (req still ours) once they are stopping. */
bool qmp_submit(struct qmp_server *s, struct qmp_conn *c,
		const struct qmp_entry *e, struct json_object *req,
		struct json_object *args, size_t cost)
{
	struct qmp_worker *w =
		&s->workers[e->cmd->flags & QMP_CMD_QUERY ? QMP_WORKER_QUERY
							  : QMP_WORKER_OP];
	struct qmp_job *j = calloc(1, sizeof(*j));
	bool ok;

	if (!j)
		return false;
	*j = (struct qmp_job){
		.conn_id = c->id,
		.e = *e,
		.req = req,
		.args = args,
		.cost = cost,
	};
	pthread_mutex_lock(&s->lock);
	ok = !s->workers_stopping;
	if (ok) {
		*w->tail = j;
		w->tail = &j->next;
		if (!s->submit_held)
			pthread_cond_signal(&w->cond);
	}
	pthread_mutex_unlock(&s->lock);
	if (!ok) {
		free(j);
		return false;
	}
	c->inflight++;
	c->inflight_other |= w != &s->workers[QMP_WORKER_OP];
	qmp_charge(s, c, cost);
	return true;
}

void qmp_workers_init(struct qmp_server *s)
{
	static const char *const names[QMP_NR_WORKERS] = {
		[QMP_WORKER_QUERY] = "qmp-query",
		[QMP_WORKER_OP] = "qmp-op",
	};

	for (int i = 0; i < QMP_NR_WORKERS; i++) {
		struct qmp_worker *w = &s->workers[i];

		*w = (struct qmp_worker){ .s = s, .name = names[i] };
		w->tail = &w->head;
		pthread_cond_init(&w->cond, NULL);
	}
}

int qmp_workers_start(struct qmp_server *s)
{
	int rc = 0;

	for (int i = 0; i < QMP_NR_WORKERS && !rc; i++) {
		struct qmp_worker *w = &s->workers[i];

		rc = -pthread_create(&w->thread, NULL, worker_thread, w);
		if (!rc) {
			w->started = true;
			pthread_setname_np(w->thread, w->name);
		}
	}
	return rc;
}

void qmp_workers_stop(struct qmp_server *s)
{
	pthread_mutex_lock(&s->lock);
	s->workers_stopping = true;
	for (int i = 0; i < QMP_NR_WORKERS; i++)
		pthread_cond_broadcast(&s->workers[i].cond);
	pthread_mutex_unlock(&s->lock);
	for (int i = 0; i < QMP_NR_WORKERS; i++) {
		if (s->workers[i].started)
			pthread_join(s->workers[i].thread, NULL);
		s->workers[i].started = false;
	}
}

void qmp_workers_destroy(struct qmp_server *s)
{
	struct qmp_job *j, *next;

	for (j = s->done_head; j; j = next) {
		next = j->next;
		qmp_job_free(j);
	}
	s->done_head = NULL;
	s->done_tail = &s->done_head;
	for (int i = 0; i < QMP_NR_WORKERS; i++)
		pthread_cond_destroy(&s->workers[i].cond);
}
