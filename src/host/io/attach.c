/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io/attach.c: an iotrace recording's requests added to a session
 * (io/attach.h says which and why; docs/iotrace.md, "In a session").
 */
#include "ph_common.h"
#include "ph_buf.h"
#include "ph_error.h"
#include "attach.h"
#include "events.h"
#include "../ingest.h"
#include "../session.h"
#include "iotrace/sha256.h"

#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

#define NS_PER_MS 1000000

/* --- the recording's identity --------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The first 16 hex digits of the SHA-256 of its manifest.json (written
 * once, at the end of a recording), or, without one, of its ds files'
 * names and sizes.
 */
static int identity(const char *rec, char out[17])
{
	struct ph_buf b = PH_BUF_INIT((size_t)64 << 20);
	char path[PATH_MAX + 64], *names[4096];
	size_t n = 0;
	uint8_t h[32];
	DIR *d;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/manifest.json", rec);
	if (ph_buf_read_file(&b, path)) {
		struct dirent *de;

		ph_buf_reset(&b);
		snprintf(path, sizeof(path), "%s/ds", rec);
		if (!(d = opendir(path))) {
			ph_buf_release(&b);
			return PH_ENOENT;
		}
		while ((de = readdir(d)) && n < PH_ARRAY_SIZE(names)) {
			if (de->d_name[0] == '.')
				continue;
			if (!(names[n] = strdup(de->d_name)))
				break;
			n++;
		}
		closedir(d);
		qsort(names, n, sizeof(*names), cmp_str);
		for (size_t i = 0; i < n; i++) {
			struct stat st;

			snprintf(path, sizeof(path), "%s/ds/%s", rec, names[i]);
			if (stat(path, &st))
				st.st_size = -1;
			rc |= ph_buf_addf(&b, "%s %lld\n", names[i],
					  (long long)st.st_size);
			free(names[i]);
		}
	}
	ph_iot_sha256(b.buf, b.len, h);
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
	ph_buf_release(&b);
	return rc ? PH_ENOMEM : 0;
}

/* --- what the session already holds --------------------------------------- */

/* The session's io events and markers, read back as findings read them. */
static int feed_both(void *ctx, const struct ph_event *ev)
{
	void **both = ctx;
	int rc = ph_io_feed_event(both[0], ev);

	return rc ? rc : ph_io_events_feed(both[1], ev);
}

/*
 * The session's events, read once (a session can be hundreds of MB):
 * into the view, and into what the session already holds (have: its io
 * events and recordings' markers).
 */
static int read_session(const char *events, struct ph_io_view *v,
			struct ph_io_events *have, char *why, size_t why_size)
{
	void *both[2] = { v, have };
	struct ph_ingest in;
	int rc;

	if ((rc = ph_io_events_init(have, false)))
		return rc;
	ph_ingest_init(&in, feed_both, both);
	rc = ph_ingest_file(&in, events);
	if (!rc && !in.events)
		rc = PH_ENOENT;
	if (rc)
		snprintf(why, why_size, "%s: %s", events,
			 rc == PH_ENOENT ? "no events in it" :
					   "cannot read the session");
	else
		ph_io_set_session(v, &in.ident, &in.profile, in.first_t,
				  in.last_t);
	ph_ingest_release(&in);
	return rc;
}

/* --- which requests ------------------------------------------------------- */

/* For each request (sorted by issue), whether it was in flight during
 * one of the app's moments (stall, late frame, query). */
static uint8_t *in_moments(const struct ph_io_view *v)
{
	uint8_t *mark = calloc(v->nreq ? v->nreq : 1, 1);

	if (!mark)
		return NULL;
	for (size_t k = 0; k < v->nmom; k++) {
		int64_t from = v->mom[k].from * NS_PER_MS,
			to = v->mom[k].to * NS_PER_MS;

		for (size_t i = ph_io_first_in_flight(v, from);
		     i < v->nreq && v->req[i].issue_ns <= to; i++)
			if (v->req[i].done_ns >= from)
				mark[i] = 1;
	}
	return mark;
}

/*
 * Chooses the requests to attach: every one of the app's, then others'
 * in flight during a moment, then the rest by issue time, max in all.
 * pick[i] is set for the chosen.
 */
static int choose(const struct ph_io_view *v, const struct ph_io_attach_opts *o,
		  uint8_t *pick, uint64_t *chosen)
{
	uint64_t max = o->max ? o->max : UINT64_MAX, n = 0;
	uint8_t *mom = in_moments(v);

	if (!mom)
		return PH_ENOMEM;
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < v->nreq && n < max; i++) {
			const struct ph_io_req *q = &v->req[i];
			bool take = pass == 0 ? q->app :
				    pass == 1 ? !q->app && mom[i] :
						!q->app && !mom[i];

			if (!take || (pass && o->app_only))
				continue;
			pick[i] = 1;
			n++;
		}
	free(mom);
	*chosen = n;
	return 0;
}

/* --- the marker ----------------------------------------------------------- */

static void write_marker(const struct ph_io_view *v,
			 const struct ph_io_attach_opts *o,
			 const struct ph_io_attach_result *r, const char *dir,
			 struct ph_jw *jw)
{
	char dev[24];

	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "event", "io_recording");
	ph_jw_kv_int(jw, "t", v->w.from);
	ph_jw_kv_int(jw, "seq", -1);
	ph_jw_key(jw, "data");
	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "recording", r->recording);
	ph_jw_kv_str(jw, "dir", dir);
	if (v->rec_mode)
		ph_jw_kv_str(jw, "mode", v->rec_mode);
	ph_jw_kv_int(jw, "durationMs", v->w.to - v->w.from);
	ph_jw_kv_str(jw, "alignment", ph_io_align_name(v->align));
	ph_jw_kv_int(jw, "shiftNs", v->shift_ns);
	if (v->lost >= 0)
		ph_jw_kv_int(jw, "totalLost", v->lost);
	if (v->pid > 0)
		ph_jw_kv_int(jw, "pid", v->pid);
	ph_jw_kv_int(jw, "requests", (int64_t)v->nreq);
	ph_jw_kv_int(jw, "app", (int64_t)v->app_n);
	ph_jw_kv_int(jw, "mainThread", (int64_t)v->main_n);
	ph_jw_kv_int(jw, "added", (int64_t)(r->added_app + r->added_other));
	ph_jw_kv_int(jw, "already", (int64_t)r->already);
	ph_jw_kv_int(jw, "leftOut", (int64_t)r->left_out);
	if (o->app_only)
		ph_jw_kv_bool(jw, "appOnly", true);
	ph_jw_kv_int(jw, "max", (int64_t)o->max);
	/* each device's median over the whole recording: what the slow
	 * and jank rules measure against, which the window's requests
	 * alone would not give */
	ph_jw_key(jw, "devices");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < v->nhist; i++) {
		int64_t p50 = ph_io_hist_median(&v->hist[i]);

		if (p50 < 0)
			continue;
		snprintf(dev, sizeof(dev), "%u,%u", v->hist[i].dev >> 20,
			 v->hist[i].dev & 0xfffff);
		ph_jw_obj_begin(jw);
		ph_jw_kv_str(jw, "dev", dev);
		ph_jw_kv_double(jw, "medianMs", (double)p50 / 1e6);
		ph_jw_kv_int(jw, "rows", (int64_t)v->hist[i].total);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
	ph_jw_obj_end(jw);
	ph_jw_obj_end(jw);
}

/* --- appending ------------------------------------------------------------ */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Appends lines[0..len) in batches of whole lines, a flush apart. */
static int append(const char *dir, const char *lines, size_t len,
		  struct ph_io_attach_result *r)
{
	size_t at = 0;
	int rc;

	while (at < len) {
		size_t n = len - at;

		if (n > PH_IO_ATTACH_BATCH) {
			const char *p = lines + at + PH_IO_ATTACH_BATCH;

			while (p > lines + at && p[-1] != '\n')
				p--;
			n = p > lines + at ? (size_t)(p - (lines + at)) : n;
		}
		if (r->batches)
			sleep_ms(3 * PH_SESSION_FLUSH_MS);
		if ((rc = ph_session_add_events(dir, lines + at, n)))
			return rc;
		r->batches++;
		r->bytes += n;
		at += n;
	}
	return 0;
}

int ph_io_attach(const struct ph_io_attach_opts *o,
		 struct ph_io_attach_result *r, char *why, size_t why_size)
{
	struct ph_io_opts vo = { .pid = o->pid,
				 .have_shift = o->have_shift,
				 .shift_ns = o->shift_ns,
				 .w = PH_WINDOW_ALL };
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_io_events have = { 0 };
	char events[4200], dir[PATH_MAX];
	uint8_t *pick = NULL;
	struct stat st;
	int rc;

	memset(r, 0, sizeof(*r));
	why[0] = '\0';
	snprintf(events, sizeof(events), "%s/events.ndjson", o->session_dir);
	if (stat(events, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, why_size, "no session at %s (no events.ndjson)",
			 o->session_dir);
		return PH_ENOENT;
	}
	if (!realpath(o->rec_dir, dir))
		snprintf(dir, sizeof(dir), "%s", o->rec_dir);
	if (!(r->v = ph_io_view_new(&vo)))
		return PH_ENOMEM;
	r->v->rec_dir =
		ph_arena_strndup(&r->v->arena, o->rec_dir, strlen(o->rec_dir));
	if ((rc = read_session(events, r->v, &have, why, why_size)) ||
	    (rc = ph_io_load_recording(r->v, o->rec_dir, why, why_size)))
		goto out;
	if (r->v->no_overlap) {
		snprintf(why, why_size,
			 "the recording (t=%" PRId64 "..%" PRId64
			 ") does not overlap the session (t=%" PRId64
			 "..%" PRId64 "); another boot or machine? "
			 "--offset-ms sets the shift",
			 r->v->rec_first_ns / NS_PER_MS,
			 r->v->rec_last_ns / NS_PER_MS, r->v->w.from,
			 r->v->w.to);
		rc = PH_EINVAL;
		goto out;
	}
	if (!r->v->nreq) {
		snprintf(why, why_size,
			 "%s: no block request in the session's window "
			 "(t=%" PRId64 "..%" PRId64 "; %" PRIu64
			 " rows, mode %s)",
			 o->rec_dir, r->v->w.from, r->v->w.to, r->v->rows,
			 r->v->rec_mode ? r->v->rec_mode : "unknown");
		rc = PH_EINVAL;
		goto out;
	}
	if ((rc = identity(o->rec_dir, r->recording))) {
		snprintf(why, why_size, "%s: cannot read the recording",
			 o->rec_dir);
		goto out;
	}
	for (size_t i = 0; i < have.nmarks; i++)
		r->seen_before |= !strcmp(have.marks[i].id, r->recording);
	rc = PH_ENOMEM;
	if (!(pick = calloc(r->v->nreq, 1)) ||
	    choose(r->v, o, pick, &r->selected))
		goto out;
	r->left_out = r->v->nreq - r->selected;
	for (size_t i = 0; i < r->v->nreq; i++) {
		const struct ph_io_req *q = &r->v->req[i];
		struct ph_jw jw;

		if (!pick[i])
			continue;
		if (ph_io_events_has(&have, q)) {
			r->already++;
			continue;
		}
		ph_jw_init(&jw, &out);
		ph_io_event_write(q, &jw);
		if (ph_jw_finish(&jw) || ph_buf_addch(&out, '\n'))
			goto out;
		r->added_app += q->app;
		r->added_other += !q->app;
	}
	if (out.len) {
		struct ph_jw jw;

		ph_jw_init(&jw, &out);
		write_marker(r->v, o, r, dir, &jw);
		if (ph_jw_finish(&jw) || ph_buf_addch(&out, '\n'))
			goto out;
		if ((rc = append(o->session_dir, out.buf, out.len, r))) {
			snprintf(why, why_size,
				 "could not add the io events to %s (%s)",
				 o->session_dir, ph_strerror(rc));
			goto out;
		}
	}
	rc = 0;
out:
	if (rc && !why[0])
		snprintf(why, why_size, "out of memory");
	free(pick);
	if (have.in)
		ph_io_events_release(&have);
	ph_buf_release(&out);
	return rc;
}
