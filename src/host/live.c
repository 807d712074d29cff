/* SPDX-License-Identifier: Apache-2.0 */
/* live.c: link -> store + session (see live.h). */
#include "ph_common.h"
#include "live.h"
#include "env.h"
#include "ph_error.h"
#include "ph_log.h"

/* Has the parser load what the session file held before this host came
 * (see live.h); lv->mu is held. */
static void queue_preload(struct ph_live *lv)
{
	pthread_mutex_lock(&lv->qmu);
	snprintf(lv->preload_path, sizeof(lv->preload_path), "%s",
		 lv->session_path);
	lv->preload_bytes = lv->session.preload_bytes;
	lv->preload_of = lv->started_at;
	pthread_cond_signal(&lv->qcv);
	pthread_mutex_unlock(&lv->qmu);
	pthread_mutex_lock(&lv->store.lock);
	lv->store.loading = true;
	pthread_mutex_unlock(&lv->store.lock);
}

/*
 * Drops a load of the closed session that the parser has not begun: its
 * lines would reach the store after the new process's hello and pass for
 * that process's own.
 */
static void cancel_preload(struct ph_live *lv)
{
	bool dropped;

	pthread_mutex_lock(&lv->qmu);
	dropped = lv->preload_bytes != 0;
	lv->preload_bytes = 0;
	pthread_mutex_unlock(&lv->qmu);
	if (dropped) {
		pthread_mutex_lock(&lv->store.lock);
		lv->store.loading = false;
		pthread_mutex_unlock(&lv->store.lock);
	}
}

/*
 * On the parser thread, qmu not held: loads the session file's first
 * `bytes` into the store, then lets the session write meta.json from the
 * store, if that session is still the open one.
 */
static void preload(struct ph_live *lv, const char *path, uint64_t bytes,
		    int64_t started_at)
{
	int rc = ph_store_load_prefix(&lv->store, path, bytes);

	pthread_mutex_lock(&lv->store.lock);
	lv->store.loading = false;
	pthread_mutex_unlock(&lv->store.lock);

	if (rc)
		ph_warn("%s: the events recorded before this host attached "
			"could not be read (%s); answers hold only what it "
			"received",
			path, ph_strerror(rc));
	else
		ph_info("%s: loaded the %" PRIu64 " bytes recorded before "
			"this host attached",
			path, bytes);
	pthread_mutex_lock(&lv->mu);
	if (!rc && lv->session_open && lv->started_at == started_at)
		ph_session_store_complete(&lv->session);
	pthread_mutex_unlock(&lv->mu);
	if (lv->on_line)
		lv->on_line(lv->ctx);
}

static void on_hello(void *ctx, const struct ph_ident *id)
{
	struct ph_live *lv = ctx;

	if (lv->on_hello)
		lv->on_hello(lv->ctx, id, lv->link.target);
	if (!lv->sessions)
		return;
	pthread_mutex_lock(&lv->mu);
	if (lv->session_open && lv->started_at != id->started_at) {
		ph_session_close(&lv->session);
		lv->session_open = false;
		cancel_preload(lv);
	}
	if (!lv->session_open &&
	    !ph_session_open(&lv->session, lv->sessions_dir, id, &lv->store)) {
		lv->session_open = true;
		lv->started_at = id->started_at;
		snprintf(lv->session_path, sizeof(lv->session_path),
			 "%s/events.ndjson", lv->session.dir);
		if (lv->session.preload_bytes)
			queue_preload(lv);
	}
	pthread_mutex_unlock(&lv->mu);
}

/* The most bytes queued for the parser before the reader waits. */
#define QUEUE_CAP ((size_t)64 << 20)

static void on_line(void *ctx, const char *line, size_t len)
{
	struct ph_live *lv = ctx;
	bool wake;

	pthread_mutex_lock(&lv->qmu);
	while (lv->q.len + len + 1 > QUEUE_CAP && lv->parser_running &&
	       !lv->qstop)
		pthread_cond_wait(&lv->qroom, &lv->qmu);
	wake = lv->q.len == 0;
	if (ph_buf_add(&lv->q, line, len) || ph_buf_addch(&lv->q, '\n'))
		ph_warn("the event queue is full; an event was skipped");
	if (wake)
		pthread_cond_signal(&lv->qcv);
	pthread_mutex_unlock(&lv->qmu);
	pthread_mutex_lock(&lv->mu);
	if (lv->session_open)
		ph_session_append(&lv->session, line, len);
	pthread_mutex_unlock(&lv->mu);
}

/* The parser: queued lines into the store, a batch at a time. */
static void *parse_run(void *arg)
{
	struct ph_live *lv = arg;

	pthread_mutex_lock(&lv->qmu);
	for (;;) {
		struct ph_buf t;

		while (!lv->q.len && !lv->preload_bytes && !lv->qstop)
			pthread_cond_wait(&lv->qcv, &lv->qmu);
		if (lv->preload_bytes && !lv->qstop) {
			char path[sizeof(lv->preload_path)];
			uint64_t bytes = lv->preload_bytes;
			int64_t of = lv->preload_of;

			snprintf(path, sizeof(path), "%s", lv->preload_path);
			lv->preload_bytes = 0;
			pthread_mutex_unlock(&lv->qmu);
			preload(lv, path, bytes, of);
			pthread_mutex_lock(&lv->qmu);
			continue;
		}
		if (!lv->q.len)
			break; /* stopping, and everything is stored */
		t = lv->qwork;
		lv->qwork = lv->q;
		lv->q = t;
		ph_buf_reset(&lv->q);
		pthread_cond_broadcast(&lv->qroom);
		pthread_mutex_unlock(&lv->qmu);
		if (ph_store_add_lines(&lv->store, lv->qwork.buf,
				       lv->qwork.len))
			ph_warn("the event store is full; events were "
				"skipped");
		if (lv->on_line)
			lv->on_line(lv->ctx);
		pthread_mutex_lock(&lv->qmu);
		ph_buf_reset(&lv->qwork);
	}
	pthread_mutex_unlock(&lv->qmu);
	return NULL;
}

int ph_live_init(struct ph_live *lv)
{
	memset(lv, 0, sizeof(*lv));
	pthread_mutex_init(&lv->mu, NULL);
	pthread_mutex_init(&lv->qmu, NULL);
	pthread_cond_init(&lv->qcv, NULL);
	pthread_cond_init(&lv->qroom, NULL);
	ph_buf_init(&lv->q, QUEUE_CAP);
	ph_buf_init(&lv->qwork, QUEUE_CAP);
	lv->sessions = ph_env_sessions_enabled();
	ph_env_sessions_dir(lv->sessions_dir, sizeof(lv->sessions_dir));
	lv->link.on_line = on_line;
	lv->link.on_hello = on_hello;
	lv->link.ctx = lv;
	lv->link.app_id = ph_env_app_id();
	lv->link.host = ph_env_host();
	lv->link.port = ph_env_port();
	ph_link_init(&lv->link);
	return ph_store_init(&lv->store, 0);
}

int ph_live_start(struct ph_live *lv)
{
	lv->qstop = false;
	if (pthread_create(&lv->parser, NULL, parse_run, lv))
		return PH_ENOMEM;
	lv->parser_running = true;
	return ph_link_start(&lv->link);
}

void ph_live_stop(struct ph_live *lv)
{
	ph_link_stop(&lv->link);
	if (lv->parser_running) {
		pthread_mutex_lock(&lv->qmu);
		lv->qstop = true;
		pthread_cond_signal(&lv->qcv);
		pthread_mutex_unlock(&lv->qmu);
		pthread_join(lv->parser, NULL); /* after the last line */
		lv->parser_running = false;
	}
	pthread_mutex_lock(&lv->mu);
	if (lv->session_open)
		ph_session_close(&lv->session);
	lv->session_open = false;
	pthread_mutex_unlock(&lv->mu);
}

void ph_live_release(struct ph_live *lv)
{
	ph_store_release(&lv->store);
	ph_buf_release(&lv->q);
	ph_buf_release(&lv->qwork);
	pthread_cond_destroy(&lv->qcv);
	pthread_cond_destroy(&lv->qroom);
	pthread_mutex_destroy(&lv->qmu);
	pthread_mutex_destroy(&lv->mu);
	ph_link_release(&lv->link);
}

struct ph_analysis *ph_live_analyze(struct ph_live *lv, struct ph_window w)
{
	char path[sizeof(lv->session_path)];

	pthread_mutex_lock(&lv->mu);
	snprintf(path, sizeof(path), "%s", lv->session_path);
	pthread_mutex_unlock(&lv->mu);
	return ph_analyze_window(&lv->store, path[0] ? path : NULL, w);
}
