/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api.c: the event calls of porthole.h.
 *
 * Each one claims a record, copies its arguments in (cut to the caps of
 * docs/protocol.md section 8), and publishes it.  Nothing here allocates,
 * locks, formats numbers or makes a system call: the writer thread does
 * the rest.
 */
#include "ph_common.h"
#include "agent.h"
#include "collectors/collectors.h"

#define CAP_NAME    64
#define CAP_LABEL   128
#define CAP_DETAIL  256
#define CAP_URL	    512
#define CAP_SQL	    512
#define CAP_ARGS    512
#define CAP_MESSAGE 1024
#define CAP_ERROR   256
#define MAX_ARRAY   16

PORTHOLE_API void porthole_mark(const char *label, const char *detail)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_MARK, &pos);

	if (!r)
		return;
	ph_rec_str(r, PH_KEY_LABEL, label ? label : "", CAP_LABEL);
	if (detail && *detail)
		ph_rec_str(r, PH_KEY_DETAIL, detail, CAP_DETAIL);
	ph_emit_commit(pos);
}

/* Spans: the id carries the start time, so the end needs no table. */
PORTHOLE_API uint64_t porthole_span_begin(const char *name)
{
	uint64_t pos, id;
	struct ph_rec *r;

	if (!ph_agent_live())
		return 0;
	id = atomic_fetch_add_explicit(&ph_agent.next_id, 1,
				       memory_order_relaxed);
	r = ph_emit_begin(PH_KIND_SPAN, &pos);
	if (!r)
		return id;
	ph_rec_int(r, PH_KEY_ID, (int64_t)id);
	ph_rec_str(r, PH_KEY_NAME, name ? name : "", CAP_NAME);
	ph_rec_str(r, PH_KEY_PHASE, "begin", 8);
	ph_emit_commit(pos);
	ph_trace_marker_begin(name);
	return id;
}

PORTHOLE_API void porthole_span_end(uint64_t span)
{
	uint64_t pos;
	struct ph_rec *r;

	if (!span)
		return;
	ph_trace_marker_end();
	r = ph_emit_begin(PH_KIND_SPAN, &pos);
	if (!r)
		return;
	ph_rec_int(r, PH_KEY_ID, (int64_t)span);
	ph_rec_str(r, PH_KEY_PHASE, "end", 8);
	ph_emit_commit(pos);
}

PORTHOLE_API void porthole_log_str(enum porthole_level level, const char *tag,
				   const char *message)
{
	ph_log_emit(level, tag, message, message ? strlen(message) : 0,
		    ph_tid());
}

PORTHOLE_API void porthole_log(enum porthole_level level, const char *tag,
			       const char *fmt, ...)
{
	char msg[CAP_MESSAGE + 1];
	va_list ap;
	int n;

	if (!ph_agent_live())
		return;
	/*
	 * The one formatting an event call does, into a stack buffer: the
	 * caller asked for printf.  vsnprintf neither allocates nor makes a
	 * system call for the formats apps log with.
	 */
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	ph_log_emit(level, tag, msg,
		    (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1,
		    ph_tid());
}

PORTHOLE_API void porthole_recompose(const char *id, const char *name,
				     const char *screen,
				     const char *const *triggered_by,
				     size_t n_triggered)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_RECOMPOSE, &pos);

	if (!r)
		return;
	ph_rec_str(r, PH_KEY_ID, id ? id : "", CAP_NAME);
	ph_rec_str(r, PH_KEY_NAME, name ? name : "", CAP_NAME);
	ph_rec_str(r, PH_KEY_SCREEN, screen ? screen : "", CAP_NAME);
	/* pass is counted by the writer, which sees every recompose */
	if (triggered_by && n_triggered) {
		n_triggered = n_triggered < MAX_ARRAY ? n_triggered : MAX_ARRAY;
		for (size_t i = 0; i < n_triggered; i++)
			ph_rec_arr_str(r, PH_KEY_TRIGGERED_BY,
				       triggered_by[i] ? triggered_by[i] : "",
				       CAP_NAME);
		ph_rec_str(r, PH_KEY_ATTRIBUTION, "explicit", 16);
	}
	ph_emit_commit(pos);
}

PORTHOLE_API void porthole_state_write(const char *key)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_STATE_WRITE, &pos);

	if (!r)
		return;
	/* An anonymous write is named by the writer: unnamed#<hex>. */
	if (key)
		ph_rec_arr_str(r, PH_KEY_KEYS, key, CAP_NAME);
	ph_emit_commit(pos);
}

PORTHOLE_API void porthole_nav(enum porthole_nav_op op, const char *route,
			       const char *label, const char *args,
			       const char *deep_link, int depth)
{
	static const char *const dirs[] = { "start", "push", "pop", "replace" };
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_NAV, &pos);

	if (!r)
		return;
	ph_rec_str(r, PH_KEY_ROUTE, route ? route : "", CAP_NAME);
	ph_rec_str(r, PH_KEY_LABEL, label ? label : "", CAP_NAME);
	ph_rec_str(r, PH_KEY_ARGS, args ? args : "", CAP_ARGS);
	ph_rec_int(r, PH_KEY_DEPTH, depth);
	ph_rec_str(r, PH_KEY_DIRECTION,
		   (unsigned)op < PH_ARRAY_SIZE(dirs) ? dirs[op] : "push", 16);
	ph_rec_str(r, PH_KEY_SOURCE, "backStack", 16);
	if (deep_link) {
		char red[CAP_URL + 1];

		ph_redact_url(deep_link, red, sizeof(red));
		ph_rec_str(r, PH_KEY_DEEP_LINK, red, CAP_URL);
	}
	ph_emit_commit(pos);
}

/* "work-<workId>-<attempt>", workId and attempt: the v1 span ids. */
static void work_ids(struct ph_rec *r, const char *work_id, int attempt)
{
	char id[CAP_NAME + 32];
	int n;

	work_id = work_id ? work_id : "";
	n = snprintf(id, sizeof(id), "work-%.64s-%d", work_id, attempt);
	ph_rec_strn(r, PH_KEY_ID, PH_F_STR, id, (size_t)n, sizeof(id));
	ph_rec_str(r, PH_KEY_WORK_ID, work_id, CAP_NAME);
	ph_rec_qint(r, PH_KEY_ATTEMPT, attempt);
}

PORTHOLE_API void porthole_work_start(const char *work_id, const char *name,
				      int attempt, const char *tags)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_WORK_START, &pos);

	if (!r)
		return;
	work_ids(r, work_id, attempt);
	ph_rec_str(r, PH_KEY_NAME, name ? name : "", CAP_NAME);
	ph_rec_str(r, PH_KEY_STATE, "RUNNING", 16);
	if (tags)
		ph_rec_str(r, PH_KEY_TAGS, tags, CAP_DETAIL);
	ph_emit_commit(pos);
}

PORTHOLE_API void porthole_work_end(const char *work_id, int attempt,
				    enum porthole_work_state state,
				    const char *error)
{
	static const char *const states[] = { "SUCCEEDED", "FAILED", "ENQUEUED",
					      "CANCELLED" };
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_WORK_END, &pos);

	if (!r)
		return;
	/* elapsedMs is added by the writer, from the matching start */
	work_ids(r, work_id, attempt);
	ph_rec_str(r, PH_KEY_STATE,
		   (unsigned)state < PH_ARRAY_SIZE(states) ? states[state] :
							     "UNKNOWN",
		   16);
	if (state == PORTHOLE_WORK_RETRY) {
		ph_rec_qint(r, PH_KEY_NEXT_ATTEMPT, attempt + 1);
		ph_rec_str(r, PH_KEY_RETRYING, "true", 8);
	}
	if (error)
		ph_rec_str(r, PH_KEY_ERROR, error, CAP_ERROR);
	ph_emit_commit(pos);
}

PORTHOLE_API void porthole_input(enum porthole_input_action action, float x,
				 float y, int64_t event_uptime_ms,
				 const char *target)
{
	static const char *const actions[] = { "down", "up", "cancel" };
	uint64_t pos;
	int64_t handled;
	struct ph_rec *r = ph_emit_begin(PH_KIND_INPUT, &pos);

	if (!r) {
		ph_frames_note_input(action, event_uptime_ms, x, y);
		return;
	}
	handled = ph_rec_t(r);
	/* the event's own time (protocol 4.2) */
	ph_rec_set_t(r, event_uptime_ms);
	ph_rec_str(r, PH_KEY_ACTION,
		   (unsigned)action < PH_ARRAY_SIZE(actions) ? actions[action] :
							       "cancel",
		   8);
	ph_rec_double(r, PH_KEY_X, x);
	ph_rec_double(r, PH_KEY_Y, y);
	ph_rec_int(r, PH_KEY_HANDLED_AT, handled);
	if (target)
		ph_rec_str(r, PH_KEY_TARGET, target, CAP_NAME);
	ph_rec_str(r, PH_KEY_SOURCE, "touch", 8);
	ph_emit_commit(pos);
	ph_frames_note_input(action, event_uptime_ms, x, y);
}

PORTHOLE_API void porthole_device_rotation(int degrees)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_DEVICE, &pos);

	if (!r)
		return;
	r->sub = PH_DEV_ROTATION;
	ph_rec_qint(r, PH_KEY_ROTATION_DEG, degrees);
	ph_rec_str(r, PH_KEY_ORIENTATION,
		   degrees % 180 ? "landscape" : "portrait", 16);
	ph_emit_commit(pos);
}

PORTHOLE_API void porthole_device_theme(bool dark)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_DEVICE, &pos);

	if (!r)
		return;
	r->sub = PH_DEV_THEME;
	ph_rec_str(r, PH_KEY_DARK_MODE, dark ? "true" : "false", 8);
	ph_emit_commit(pos);
}

PORTHOLE_API void porthole_device_font_scale(double scale)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_DEVICE, &pos);
	char buf[16];
	int n;

	if (!r)
		return;
	r->sub = PH_DEV_FONT_SCALE;
	/* device values are strings on the wire: "1.15" */
	n = snprintf(buf, sizeof(buf), "%d.%02d", (int)scale,
		     (int)((scale - (int)scale) * 100 + 0.5) % 100);
	ph_rec_strn(r, PH_KEY_FONT_SCALE, PH_F_STR, buf, (size_t)n, 16);
	ph_emit_commit(pos);
}

/*
 * Explicit HTTP and DB events, for clients the helpers do not cover.  The
 * end events carry only what the caller knows at the end; the writer fills
 * in the method, URL, SQL and elapsed time from the matching start.
 */
PORTHOLE_API uint64_t porthole_http_start(const char *method, const char *url)
{
	uint64_t pos, id;
	struct ph_rec *r;
	char idbuf[32], red[CAP_URL + 1];

	if (!ph_agent_live())
		return 0;
	id = atomic_fetch_add_explicit(&ph_agent.next_id, 1,
				       memory_order_relaxed);
	r = ph_emit_begin(PH_KIND_HTTP_START, &pos);
	if (!r)
		return id;
	snprintf(idbuf, sizeof(idbuf), "http-%" PRIu64, id);
	ph_redact_url(url ? url : "", red, sizeof(red));
	ph_rec_str(r, PH_KEY_ID, idbuf, sizeof(idbuf));
	ph_rec_str(r, PH_KEY_METHOD, method ? method : "GET", 16);
	ph_rec_str(r, PH_KEY_URL, red, CAP_URL);
	ph_emit_commit(pos);
	ph_trace_marker_call_begin(id, red); /* the URL, as the curl helper */
	return id;
}

PORTHOLE_API void porthole_http_end(uint64_t call, int status,
				    const char *error)
{
	uint64_t pos;
	struct ph_rec *r;
	char idbuf[32];

	ph_trace_marker_call_end(call);
	if (!call || !(r = ph_emit_begin(PH_KIND_HTTP_END, &pos)))
		return;
	snprintf(idbuf, sizeof(idbuf), "http-%" PRIu64, call);
	ph_rec_str(r, PH_KEY_ID, idbuf, sizeof(idbuf));
	ph_rec_str(r, PH_KEY_PHASE, error ? "failed" : "done", 8);
	if (status > 0)
		ph_rec_qint(r, PH_KEY_STATUS, status);
	if (error)
		ph_rec_str(r, PH_KEY_DETAIL, error, CAP_ERROR);
	ph_emit_commit(pos);
}

PORTHOLE_API uint64_t porthole_db_start(const char *sql, const char *args,
					bool write)
{
	uint64_t pos, id;
	struct ph_rec *r;
	char idbuf[32];

	if (!ph_agent_live())
		return 0;
	id = atomic_fetch_add_explicit(&ph_agent.next_id, 1,
				       memory_order_relaxed);
	r = ph_emit_begin(PH_KIND_DB_START, &pos);
	if (!r)
		return id;
	snprintf(idbuf, sizeof(idbuf), "db-%" PRIu64, id);
	ph_rec_str(r, PH_KEY_ID, idbuf, sizeof(idbuf));
	ph_rec_str(r, PH_KEY_SQL, sql ? sql : "", CAP_SQL);
	ph_rec_str(r, PH_KEY_KIND, write ? "write" : "read", 8);
	if (args && *args)
		ph_rec_str(r, PH_KEY_ARGS, args, CAP_ARGS);
	ph_emit_commit(pos);
	ph_trace_marker_call_begin(id, sql);
	return id;
}

PORTHOLE_API void porthole_db_end(uint64_t query, int64_t rows,
				  const char *error)
{
	uint64_t pos;
	struct ph_rec *r;
	char idbuf[32];

	ph_trace_marker_call_end(query);
	if (!query || !(r = ph_emit_begin(PH_KIND_DB_END, &pos)))
		return;
	snprintf(idbuf, sizeof(idbuf), "db-%" PRIu64, query);
	ph_rec_str(r, PH_KEY_ID, idbuf, sizeof(idbuf));
	if (rows >= 0)
		ph_rec_int(r, PH_KEY_ROWS, rows);
	if (error)
		ph_rec_str(r, PH_KEY_ERROR, error, CAP_ERROR);
	ph_emit_commit(pos);
}
