/* SPDX-License-Identifier: Apache-2.0 */
/*
 * logs.c: log events from porthole_log() and, with PORTHOLE_CAPTURE_STDIO,
 * from the process's own stdout and stderr.
 *
 * Capture: each of fd 1 and 2 is replaced by a pipe; a thread reads the
 * pipes, writes every byte on to the original destination (so the app's
 * output still reaches the terminal or file it was going to), and turns
 * lines into `log` events: stderr as W, stdout as I.  Lines that continue
 * a stack trace (indented, "at ...", "#3 ...", "Caused by") from the same
 * stream within 150 ms of the line before become `log_append` events of
 * that line, so one trace is one entry.  The agent's own diagnostics go to
 * a dup of the original stderr (ph_log_set_fd), never into the pipe, so
 * they cannot loop back into capture.
 */
#include "ph_common.h"
#include "collectors.h"
#include "../server.h"
#include "ph_clock.h"
#include "ph_log.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#define CAP_TAG	    64
#define CAP_MESSAGE 1024
#define CAP_APPEND  512
#define GLUE_MS	    150

/* log.message keeps the published marker: "... (+N)" dropped bytes. */
static void put_message(struct ph_rec *r, const char *msg, size_t len)
{
	char tail[24];
	size_t keep, tn;
	uint8_t *p;

	if (len <= CAP_MESSAGE) {
		ph_rec_strn(r, PH_KEY_MESSAGE, PH_F_STR, msg, len, CAP_MESSAGE);
		return;
	}
	tn = (size_t)snprintf(tail, sizeof(tail), "... (+%zu)",
			      len - (CAP_MESSAGE - 20));
	keep = ph_utf8_cut(msg, len, CAP_MESSAGE - tn + 3);
	tn = (size_t)snprintf(tail, sizeof(tail), "... (+%zu)", len - keep);
	p = ph_rec_field(r, PH_KEY_MESSAGE, PH_F_STR, keep + tn);
	if (!p)
		return;
	memcpy(p, msg, keep);
	memcpy(p + keep, tail, tn);
}

void ph_log_emit(enum porthole_level level, const char *tag, const char *msg,
		 size_t len, int tid)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_LOG, &pos);
	char lv = (char)level;

	if (!r)
		return;
	r->tid = tid;
	if (!strchr("VDIWEF", lv) || !lv)
		lv = 'I';
	ph_rec_strn(r, PH_KEY_LEVEL, PH_F_STR, &lv, 1, 1);
	ph_rec_str(r, PH_KEY_TAG, tag ? tag : "", CAP_TAG);
	put_message(r, msg ? msg : "", msg ? len : 0);
	ph_rec_int(r, PH_KEY_PID, ph_agent.pid);
	ph_emit_commit(pos);
}

/* --- stdio capture -------------------------------------------------------- */

struct stream {
	int orig;    /* dup of the original fd 1 or 2 */
	int pipe_rd; /* our end */
	int target;  /* 1 or 2 */
	char level;
	const char *tag;
	char line[CAP_MESSAGE + 1];
	size_t len;
	int64_t last_t; /* when its last line ended */
	bool have_head; /* a line that continuations can attach to */
};

static struct stream streams[2];
static pthread_t capture_thread;
static int capture_stop[2] = { -1, -1 };
static bool capturing;

static bool is_continuation(const char *s, size_t n)
{
	if (!n)
		return false;
	if (s[0] == ' ' || s[0] == '\t')
		return true;
	if (n > 3 && s[0] == '#' && s[1] >= '0' && s[1] <= '9')
		return true; /* gdb / backtrace_symbols style "#3 0x..." */
	return (n >= 3 && !memcmp(s, "at ", 3)) ||
	       (n >= 9 && !memcmp(s, "Caused by", 9)) ||
	       (n >= 3 && !memcmp(s, "...", 3));
}

static void emit_append(const struct stream *st, const char *s, size_t n)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_LOG_APPEND, &pos);

	if (!r)
		return;
	/* The writer adds the seq of the stream's last log (state.c). */
	ph_rec_str(r, PH_KEY_TAG, st->tag, CAP_TAG);
	ph_rec_strn(r, PH_KEY_TEXT, PH_F_STR, s, n, CAP_APPEND);
	ph_emit_commit(pos);
}

static void line_done(struct stream *st)
{
	int64_t now = ph_clock_uptime_ms();
	size_t n = st->len;

	if (n && st->line[n - 1] == '\r')
		n--;
	if (st->have_head && now - st->last_t <= GLUE_MS &&
	    is_continuation(st->line, n)) {
		emit_append(st, st->line, n);
	} else if (n) {
		ph_log_emit((enum porthole_level)st->level, st->tag, st->line,
			    n, atomic_load(&ph_agent.main_tid));
		st->have_head = true;
	}
	st->last_t = now;
	st->len = 0;
}

static void feed(struct stream *st, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			line_done(st);
		} else if (st->len < CAP_MESSAGE) {
			st->line[st->len++] = buf[i];
		}
	}
}

static void *capture_main(void *arg)
{
	struct pollfd pfd[3];
	char buf[8192];

	ph_exits_thread_altstack(); /* a crash here writes its record */
	(void)arg;
	ph_platform_name_self("porthole-logs");
	pfd[0] = (struct pollfd){ .fd = streams[0].pipe_rd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = streams[1].pipe_rd, .events = POLLIN };
	pfd[2] = (struct pollfd){ .fd = capture_stop[0], .events = POLLIN };
	for (;;) {
		if (poll(pfd, 3, -1) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (!(pfd[i].revents & (POLLIN | POLLHUP)))
				continue;
			n = read(pfd[i].fd, buf, sizeof(buf));
			if (n <= 0)
				continue;
			/* The app's output still goes where it was going. */
			for (ssize_t off = 0; off < n;) {
				ssize_t w = write(streams[i].orig, buf + off,
						  (size_t)(n - off));

				if (w <= 0)
					break;
				off += w;
			}
			feed(&streams[i], buf, (size_t)n);
		}
		if (pfd[2].revents)
			break;
	}
	return NULL;
}

int ph_stdio_capture_start(void)
{
	int p[2];

	if (pipe2(capture_stop, O_CLOEXEC))
		return PH_EIO;
	for (int i = 0; i < 2; i++) {
		struct stream *st = &streams[i];

		memset(st, 0, sizeof(*st));
		st->target = i + 1;
		st->level = i ? 'W' : 'I';
		st->tag = i ? "stderr" : "stdout";
		st->orig = fcntl(st->target, F_DUPFD_CLOEXEC, 3);
		if (st->orig < 0 || pipe2(p, O_CLOEXEC))
			return PH_EIO;
		fflush(i ? stderr : stdout);
		dup2(p[1], st->target);
		close(p[1]);
		st->pipe_rd = p[0];
	}
	/* Our own lines bypass the pipe: no loop back into capture. */
	ph_log_set_fd(streams[1].orig);
	/* Line-buffer stdout so lines arrive when they are written. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pthread_create(&capture_thread, NULL, capture_main, NULL))
		return PH_EIO;
	capturing = true;
	return 0;
}

void ph_stdio_capture_stop(void)
{
	if (!capturing)
		return;
	if (atomic_load(&ph_agent.fds_lost)) {
		/* Its pipes' and saved streams' numbers may be the app's
		 * files now: none is dup'ed, written or closed.  The thread
		 * ends on its own once its pipes are gone (POLLNVAL). */
		pthread_detach(capture_thread);
		capturing = false;
		return;
	}
	fflush(stdout);
	fflush(stderr);
	/* Give the streams back first, then let the thread drain and end. */
	for (int i = 0; i < 2; i++)
		dup2(streams[i].orig, streams[i].target);
	if (write(capture_stop[1], "x", 1) < 0)
		ph_debug("could not stop stdio capture");
	pthread_join(capture_thread, NULL);
	for (int i = 0; i < 2; i++) {
		close(streams[i].pipe_rd);
		ph_log_set_fd(2);
		close(streams[i].orig);
	}
	close(capture_stop[0]);
	close(capture_stop[1]);
	capturing = false;
}

/* --- the logs method ------------------------------------------------------ */

static int level_rank(char c)
{
	const char *order = "VDIWEF";
	const char *p = c ? strchr(order, c) : NULL;

	return p ? (int)(p - order) : 0;
}

/* One log event from the ring, as a LogPage entry, if it matches. */
static bool log_entry(struct ph_server *s, const struct ph_ring_entry *e,
		      int min, const char *tag, const char *needle,
		      struct ph_jw *w)
{
	struct ph_buf line = PH_BUF_INIT(1 << 16);
	const struct ph_json *d, *lvl, *tg, *msg;
	struct ph_json *ev;
	char tagbuf[CAP_TAG + 1];
	bool ok = false;

	ph_arena_reset(&s->arena);
	if (ph_ring_copy(&s->ring, e, &line) ||
	    ph_json_parse(&s->arena, line.buf, line.len, &ev, NULL))
		goto out;
	d = ph_json_get(ev, "data");
	lvl = ph_json_get(d, "level");
	tg = ph_json_get(d, "tag");
	msg = ph_json_get(d, "message");
	snprintf(tagbuf, sizeof(tagbuf), "%.*s", tg ? (int)tg->n : 0,
		 tg ? tg->u.s : "");
	ok = (!min || (lvl && lvl->n && level_rank(lvl->u.s[0]) >= min)) &&
	     (!tag[0] || strcasestr(tagbuf, tag)) &&
	     (!needle[0] ||
	      (msg && memmem(msg->u.s, msg->n, needle, strlen(needle))));
	if (!ok || !w)
		goto out;
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "t", e->t);
	ph_jw_key(w, "wallTime");
	ph_jw_value(w, ph_json_get(d, "wallTime") ? ph_json_get(d, "wallTime") :
						    &(struct ph_json){ 0 });
	ph_jw_key(w, "level");
	ph_jw_value(w, lvl ? lvl : &(struct ph_json){ 0 });
	ph_jw_kv_str(w, "tag", tagbuf);
	ph_jw_kv_int(w, "pid", ph_agent.pid);
	ph_jw_key(w, "tid");
	ph_jw_value(w, ph_json_get(d, "tid") ? ph_json_get(d, "tid") :
					       &(struct ph_json){ 0 });
	ph_jw_key(w, "message");
	ph_jw_value(w, msg ? msg : &(struct ph_json){ 0 });
	ph_jw_obj_end(w);
out:
	ph_buf_release(&line);
	return ok;
}

/* logs: the newest `limit` log events in the ring that match, newest first. */
const char *ph_collectors_logs_method(struct ph_server *s,
				      const struct ph_json *params,
				      struct ph_jw *w)
{
	const struct ph_json *lv = ph_json_get(params, "level");
	const struct ph_json *tag = ph_json_get(params, "tag");
	const struct ph_json *contains = ph_json_get(params, "contains");
	int64_t limit = 200, v, now = ph_clock_uptime_ms(), from = 0, to = now;
	int min = ph_json_is(lv, PH_JSON_STRING) && lv->n ?
			  level_rank(lv->u.s[0]) :
			  0;
	char want_tag[CAP_TAG + 1] = "", needle[256] = "";
	int64_t sent = 0;
	uint64_t held = 0, evicted;
	char note[200];

	if (ph_json_as_int(ph_json_get(params, "limit"), &v) && v > 0)
		limit = v;
	if (ph_json_as_int(ph_json_get(params, "sinceMs"), &v))
		from = ph_state_since(now, v);
	if (ph_json_as_int(ph_json_get(params, "from"), &v))
		from = v;
	if (ph_json_as_int(ph_json_get(params, "to"), &v))
		to = v;
	/* Copied out: the arena is reused for each entry.  "" and "null"
	 * count as absent, as in the published runtime. */
	if (ph_json_is(tag, PH_JSON_STRING) && !ph_json_streq(tag, "null"))
		snprintf(want_tag, sizeof(want_tag), "%.*s", (int)tag->n,
			 tag->u.s);
	if (ph_json_is(contains, PH_JSON_STRING) &&
	    !ph_json_streq(contains, "null"))
		snprintf(needle, sizeof(needle), "%.*s", (int)contains->n,
			 contains->u.s);
	ph_jw_obj_begin(w);
	ph_jw_key(w, "entries");
	ph_jw_arr_begin(w);
	for (size_t i = ph_ring_count(&s->ring); i-- > 0;) {
		const struct ph_ring_entry *e = ph_ring_at(&s->ring, i);

		if (e->kind != PH_KIND_LOG)
			continue;
		held++;
		if (sent < limit && e->t >= from && e->t <= to &&
		    log_entry(s, e, min, want_tag, needle, w))
			sent++;
	}
	ph_jw_arr_end(w);
	/* The ring keeps the newest events of every kind: the log lines it
	 * let go are the ones put in it and no longer held. */
	evicted = s->state.logs > held ? s->state.logs - held : 0;
	ph_jw_kv_bool(w, "capturing", capturing);
	ph_jw_kv_int(w, "evicted", (int64_t)evicted);
	ph_jw_key(w, "notes");
	ph_jw_arr_begin(w);
	ph_jw_str(w, "Newest first, from the agent's ring of recent events.");
	if (evicted) {
		snprintf(note, sizeof(note),
			 "%" PRIu64 " older log line%s no longer held here "
			 "(the ring keeps the newest events of every kind); "
			 "the log events recorded have them",
			 evicted, evicted == 1 ? " is" : "s are");
		ph_jw_str(w, note);
	}
	if (!capturing)
		ph_jw_str(w, "stdout and stderr are not captured "
			     "(PORTHOLE_CAPTURE_STDIO is off): porthole_log() "
			     "lines only.");
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
	return NULL;
}
