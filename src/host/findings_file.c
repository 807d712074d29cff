/* SPDX-License-Identifier: Apache-2.0 */
/*
 * findings_file.c: the findings engine over a session file, read and
 * parsed on one thread while the engine is fed on another, and the window
 * answer that joins the file with what the live store still holds.
 */
#include "ph_common.h"
#include "findings.h"
#include "ph_error.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

/*
 * A file is analyzed on two threads: one reads and parses (the bigger
 * half of the work), the other feeds the engine, one batch behind.  Each
 * batch owns its text, the trees parsed from it and the events, and a
 * snapshot of the ingest's state (identity, profile, counters) as of its
 * end, which the engine reads through its own copy: the two threads
 * share nothing but the batches.
 */
#define PIPE_BATCH ((size_t)4 << 20)

struct batch {
	struct ph_buf text;
	struct ph_arena arena;
	struct ph_event *ev;
	size_t n, alloc;
	struct ph_ingest snap;
	bool full;
};

struct pipe {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch b[2];
	int fd, rc;
	bool done;
	struct ph_ingest in;
	struct batch *cur; /* being filled by the parser */
};

static int collect(void *ctx, const struct ph_event *ev)
{
	struct batch *b = ((struct pipe *)ctx)->cur;

	if (b->n == b->alloc && PH_GROW(b->ev, b->alloc, b->n + 1, 4096))
		return PH_ENOMEM;
	b->ev[b->n++] = *ev;
	return 0;
}

/* Parses every line of b->text (whole lines, the last may be torn). */
static int parse_batch(struct pipe *p, struct batch *b)
{
	size_t start = 0;
	int rc = 0;

	while (start < b->text.len && !rc) {
		const char *l = b->text.buf + start;
		const char *nl = memchr(l, '\n', b->text.len - start);
		size_t n = nl ? (size_t)(nl - l) : b->text.len - start;

		rc = ph_ingest_line(&p->in, &b->arena, l, n);
		if (rc == PH_ETOOBIG || rc == PH_ENOMEM) {
			ph_ingest_malformed(&p->in, "line too big");
			rc = 0;
		}
		start += n + 1;
	}
	return rc;
}

static void *parse_file(void *arg)
{
	struct pipe *p = arg;
	struct ph_buf carry = PH_BUF_INIT(PH_BUF_NO_CAP);
	int rc = 0;
	bool eof = false;

	for (int k = 0; !eof && !rc; k++) {
		struct batch *b = &p->b[k & 1];
		char *last;

		pthread_mutex_lock(&p->mu);
		while (b->full)
			pthread_cond_wait(&p->cv, &p->mu);
		pthread_mutex_unlock(&p->mu);
		ph_buf_reset(&b->text);
		ph_arena_reset(&b->arena);
		b->n = 0;
		if (ph_buf_add(&b->text, carry.buf, carry.len)) {
			rc = PH_ENOMEM;
			break;
		}
		ph_buf_reset(&carry);
		/* A batch: at least PIPE_BATCH bytes, ending at a newline. */
		while (!eof && (b->text.len < PIPE_BATCH ||
				!memchr(b->text.buf, '\n', b->text.len))) {
			ssize_t n;

			if (ph_buf_grow(&b->text, PIPE_BATCH)) {
				rc = PH_ENOMEM;
				break;
			}
			n = read(p->fd, b->text.buf + b->text.len, PIPE_BATCH);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				rc = ph_error(PH_EIO, "read: %s",
					      strerror(errno));
				break;
			}
			ph_buf_setlen(&b->text, b->text.len + (size_t)n);
			eof = n == 0;
		}
		if (rc)
			break;
		last = memrchr(b->text.buf, '\n', b->text.len);
		if (!eof && last) {
			size_t keep = (size_t)(last + 1 - b->text.buf);

			if (ph_buf_add(&carry, last + 1, b->text.len - keep)) {
				rc = PH_ENOMEM;
				break;
			}
			ph_buf_setlen(&b->text, keep);
		}
		p->cur = b;
		rc = parse_batch(p, b);
		b->snap = p->in;
		pthread_mutex_lock(&p->mu);
		b->full = true;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	pthread_mutex_lock(&p->mu);
	p->rc = rc;
	p->done = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	ph_buf_release(&carry);
	return NULL;
}

struct ph_analysis *ph_analyze_file(const char *path, struct ph_window w,
				    int *rc)
{
	struct pipe p = { .rc = 0 };
	struct ph_ingest shadow;
	struct ph_engine *e;
	struct ph_analysis *a = NULL;
	pthread_t th;

	*rc = 0;
	p.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (p.fd < 0) {
		*rc = errno == ENOENT ? PH_ENOENT : PH_EIO;
		return NULL;
	}
	ph_ingest_init(&p.in, collect, &p);
	memset(&shadow, 0, sizeof(shadow));
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	for (int i = 0; i < 2; i++) {
		ph_buf_init(&p.b[i].text, PH_BUF_NO_CAP);
		ph_arena_init(&p.b[i].arena, (size_t)1 << 20,
			      (size_t)512 << 20);
	}
	e = ph_engine_new(w, &shadow);
	if (!e || pthread_create(&th, NULL, parse_file, &p)) {
		*rc = PH_ENOMEM;
		goto out;
	}
	for (int k = 0;; k++) {
		struct batch *b = &p.b[k & 1];

		pthread_mutex_lock(&p.mu);
		while (!b->full && !p.done)
			pthread_cond_wait(&p.cv, &p.mu);
		if (!b->full) {
			pthread_mutex_unlock(&p.mu);
			break;
		}
		pthread_mutex_unlock(&p.mu);
		/* The state as of the batch's end: identity and profile for
		 * the families, counters for the notes.  Only the parser
		 * owns the bitmap and the reader behind these pointers. */
		shadow = b->snap;
		for (size_t i = 0; i < b->n; i++)
			ph_engine_feed(e, &b->ev[i]);
		pthread_mutex_lock(&p.mu);
		b->full = false;
		pthread_cond_broadcast(&p.cv);
		pthread_mutex_unlock(&p.mu);
	}
	pthread_join(th, NULL);
	*rc = p.rc;
	if (!*rc) {
		a = ph_engine_analyze(e);
		if (a && w.from != INT64_MIN && shadow.first_t &&
		    w.from < shadow.first_t)
			a->clipped_ms = shadow.first_t - w.from;
	}
out:
	ph_engine_free(e);
	for (int i = 0; i < 2; i++) {
		ph_buf_release(&p.b[i].text);
		ph_arena_release(&p.b[i].arena);
		free(p.b[i].ev);
	}
	pthread_cond_destroy(&p.cv);
	pthread_mutex_destroy(&p.mu);
	ph_ingest_release(&p.in);
	close(p.fd);
	return a;
}

struct fallback {
	struct ph_engine *e;
	int64_t file_max_seq;
	int64_t min_seq; /* the oldest store event fed, INT64_MAX: none */
	int64_t min_t;	 /* and its t */
};

static int feed_newer(void *ctx, const struct ph_event *ev)
{
	struct fallback *fb = ctx;

	if (ph_store_ev_in_file(ev, fb->file_max_seq))
		return 0;
	if (ev->seq < fb->min_seq) {
		fb->min_seq = ev->seq;
		fb->min_t = ev->t;
	}
	return ph_engine_feed(fb->e, ev);
}

static struct ph_analysis *
window_answer(struct ph_store *s, const char *session_path, struct ph_window w)
{
	struct fallback fb = { .min_seq = INT64_MAX };
	struct ph_ingest in;
	struct ph_analysis *a = NULL;
	int64_t covered_from, from;
	int rc;

	pthread_mutex_lock(&s->lock);
	covered_from = s->covered_from;
	pthread_mutex_unlock(&s->lock);
	if (covered_from == INT64_MIN || w.from >= covered_from ||
	    !session_path)
		return ph_analyze_store(s, w);

	ph_ingest_init(&in, NULL, NULL);
	fb.e = ph_engine_new(w, &in);
	if (!fb.e)
		goto out;
	in.on_event = ph_engine_feed_cb;
	in.ctx = fb.e;
	rc = ph_ingest_file(&in, session_path);
	if (rc || !in.events) {
		/* An unreadable or empty file: what the store has, clipped. */
		ph_engine_free(fb.e);
		ph_ingest_release(&in);
		return ph_analyze_store(s, w);
	}
	/* The file's events are in; now the store's newer ones. */
	fb.file_max_seq = in.max_seq;
	pthread_mutex_lock(&s->lock);
	if (!in.profile.have)
		in.profile = s->in.profile;
	pthread_mutex_unlock(&s->lock);
	ph_store_each(s, w, 0, feed_newer, &fb);
	a = ph_engine_analyze(fb.e);
	if (!a)
		goto out;
	/* What neither holds: before the recording, and a hole between the
	 * file's end and the store's oldest event when writing stopped. */
	from = w.from == INT64_MIN ? in.first_t : w.from;
	if (from < in.first_t)
		a->clipped_ms += in.first_t - from;
	if (fb.min_seq != INT64_MAX && fb.min_seq > fb.file_max_seq + 1 &&
	    fb.min_t > in.last_t) {
		a->clipped_ms += fb.min_t - in.last_t;
		ph_analysis_note(a,
				 "events between t=%" PRId64 " and t=%" PRId64
				 " are neither on disk nor in the live "
				 "buffer (seq %" PRId64 "..%" PRId64 ")",
				 in.last_t, fb.min_t, fb.file_max_seq + 1,
				 fb.min_seq - 1);
	}
	ph_analysis_note(a,
			 "the live buffer starts at t=%" PRId64
			 "; the window before it was read from the session "
			 "on disk; %" PRId64 " ms clipped",
			 covered_from, a->clipped_ms);
out:
	ph_engine_free(fb.e);
	ph_ingest_release(&in);
	return a;
}

struct ph_analysis *ph_analyze_window(struct ph_store *s,
				      const char *session_path,
				      struct ph_window w)
{
	struct ph_analysis *a;
	bool loading;

	/* Read before the answer: a load that ends during it may still have
	 * missed the walk. */
	pthread_mutex_lock(&s->lock);
	loading = s->loading;
	pthread_mutex_unlock(&s->lock);
	a = window_answer(s, session_path, w);
	if (a && loading)
		ph_analysis_note(a, "this host is still loading the session an "
				    "earlier host recorded: what the app sent "
				    "before this host attached may be missing "
				    "from this answer; ask again");
	return a;
}
