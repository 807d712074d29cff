/* SPDX-License-Identifier: Apache-2.0 */
/* store.c: the live event store (see store.h). */
#include "ph_common.h"
#include "store.h"
#include "ph_error.h"

#include <fcntl.h>
#include <unistd.h>

/*
 * A chunk's arena: big blocks, so an event's line and tree are adjacent.
 * A store with a small cap (tests) gets smaller chunks, so that it can
 * evict at all: at least four chunks fit under the cap.
 */
#define CHUNK_BYTES ((size_t)8 << 20)
#define CHUNK_MIN   ((size_t)4 << 10)

struct ph_store_chunk {
	struct ph_store_chunk *next;
	struct ph_arena arena; /* lines and trees */
	struct ph_event *ev;
	size_t n, alloc;
	int64_t max_t;	/* newest t in this chunk */
	uint64_t first; /* the store's version before its first event */
	/* Over its events' spans (ph_ev_span): a window that misses
	 * [lo_from, hi_to] skips the chunk without reading an event, and one
	 * that covers [max_from, min_to] overlaps every event in it. */
	int64_t lo_from, hi_to, max_from, min_to;
};

static int store_event(void *ctx, const struct ph_event *ev)
{
	struct ph_store *s = ctx;
	struct ph_store_chunk *c = s->newest;
	int64_t from, to;

	if (c->n == c->alloc && PH_GROW(c->ev, c->alloc, c->n + 1, 1024))
		return PH_ENOMEM;
	c->ev[c->n++] = *ev;
	if (ev->t > c->max_t)
		c->max_t = ev->t;
	ph_ev_span(ev, &from, &to);
	if (from < c->lo_from)
		c->lo_from = from;
	if (from > c->max_from)
		c->max_from = from;
	if (to > c->hi_to)
		c->hi_to = to;
	if (to < c->min_to)
		c->min_to = to;
	s->nevents++;
	s->version++;
	if (ev->seq < 0)
		s->host_made_at = s->version;
	return 0;
}

static size_t chunk_bytes(const struct ph_store *s)
{
	size_t n = s->cap / 4;

	return n > CHUNK_BYTES ? CHUNK_BYTES : n < CHUNK_MIN ? CHUNK_MIN : n;
}

static struct ph_store_chunk *chunk_new(struct ph_store *s)
{
	struct ph_store_chunk *c = s->spare;
	size_t cb = chunk_bytes(s);

	if (c) { /* its arena recycled and its event array kept */
		s->spare = NULL;
		c->next = NULL;
		c->n = 0;
	} else if ((c = calloc(1, sizeof(*c))) && cb == CHUNK_BYTES) {
		/* A full-size store fills hundreds of MB as fast as lines
		 * parse: in huge pages, its first writes fault 512x less. */
		ph_arena_init_huge(&c->arena, CHUNK_BYTES * 2);
	} else if (c) {
		ph_arena_init(&c->arena,
			      cb < ((size_t)1 << 20) ? cb : (size_t)1 << 20,
			      CHUNK_BYTES * 2);
	}
	if (c) {
		c->max_t = INT64_MIN;
		c->first = s->version;
		c->lo_from = c->min_to = INT64_MAX;
		c->hi_to = c->max_from = INT64_MIN;
	}
	return c;
}

static void chunk_free(struct ph_store_chunk *c)
{
	ph_arena_release(&c->arena);
	free(c->ev);
	free(c);
}

int ph_store_init(struct ph_store *s, size_t cap)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->cap = cap ? cap : (size_t)256 << 20;
	s->covered_from = INT64_MIN;
	ph_ingest_init(&s->in, store_event, s);
	s->oldest = s->newest = chunk_new(s);
	return s->newest ? 0 : PH_ENOMEM;
}

void ph_store_release(struct ph_store *s)
{
	struct ph_store_chunk *c = s->oldest, *next;

	for (; c; c = next) {
		next = c->next;
		chunk_free(c);
	}
	if (s->spare)
		chunk_free(s->spare);
	if (s->cache && s->cache_free)
		s->cache_free(s->cache);
	ph_ingest_release(&s->in);
	pthread_mutex_destroy(&s->lock);
	memset(s, 0, sizeof(*s));
}

static void evict(struct ph_store *s)
{
	while (s->bytes > s->cap && s->oldest != s->newest) {
		struct ph_store_chunk *c = s->oldest;

		s->oldest = c->next;
		s->bytes -= c->arena.total;
		s->nevents -= c->n;
		if (c->max_t != INT64_MIN && c->max_t + 1 > s->covered_from)
			s->covered_from = c->max_t + 1;
		if (s->spare) {
			chunk_free(c);
		} else {
			ph_arena_recycle(&c->arena);
			s->spare = c;
		}
	}
}

static int add_locked(struct ph_store *s, const char *line, size_t len)
{
	struct ph_store_chunk *c = s->newest;
	size_t before = c->arena.total;
	char *copy;
	int rc;

	if (c->arena.total > chunk_bytes(s)) {
		struct ph_store_chunk *nc = chunk_new(s);

		if (!nc)
			return PH_ENOMEM;
		c->next = nc;
		s->newest = c = nc;
		before = 0;
		evict(s);
	}
	/* The tree borrows its strings from the line: keep the line too. */
	copy = ph_arena_strndup(&c->arena, line, len);
	rc = copy ? ph_ingest_line(&s->in, &c->arena, copy, len) : PH_ETOOBIG;
	s->bytes += c->arena.total - before;
	if (rc == PH_ETOOBIG)
		ph_ingest_malformed(&s->in, "line larger than a store chunk");
	return rc == PH_ETOOBIG ? 0 : rc;
}

int ph_store_add_line(struct ph_store *s, const char *line, size_t len)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = add_locked(s, line, len);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int ph_store_add_lines(struct ph_store *s, const char *buf, size_t len)
{
	size_t start = 0;
	int rc = 0;

	while (start < len && !rc) {
		/* ~64 KiB of lines per hold of the lock. */
		size_t stop = start + 65536 < len ? start + 65536 : len;

		pthread_mutex_lock(&s->lock);
		while (start < len && (start < stop || start == 0) && !rc) {
			const char *nl = memchr(buf + start, '\n', len - start);
			size_t n = nl ? (size_t)(nl - (buf + start)) :
					len - start;

			rc = add_locked(s, buf + start, n);
			start += n + 1;
		}
		pthread_mutex_unlock(&s->lock);
	}
	return rc;
}

int ph_store_load_file(struct ph_store *s, const char *path)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	size_t start = 0;
	char *nl;
	int rc = ph_buf_read_file(&b, path);

	if (rc)
		goto out;
	pthread_mutex_lock(&s->lock);
	while (start < b.len) {
		size_t len;

		nl = memchr(b.buf + start, '\n', b.len - start);
		len = nl ? (size_t)(nl - (b.buf + start)) : b.len - start;
		rc = add_locked(s, b.buf + start, len);
		if (rc)
			break;
		start += len + 1;
	}
	pthread_mutex_unlock(&s->lock);
out:
	ph_buf_release(&b);
	return rc;
}

int ph_store_load_prefix(struct ph_store *s, const char *path, uint64_t bytes)
{
	const size_t slice = (size_t)4 << 20;
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	uint64_t at = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return errno == ENOENT ? PH_ENOENT :
					 ph_error(PH_EIO, "%s: %s", path,
						  strerror(errno));
	while (at < bytes && !rc) {
		size_t want = bytes - at < slice ? (size_t)(bytes - at) : slice;
		const char *nl;
		ssize_t n;

		if (ph_buf_grow(&b, want)) {
			rc = PH_ENOMEM;
			break;
		}
		n = pread(fd, b.buf + b.len, want, (off_t)at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ph_error(PH_EIO, "%s: %s", path, strerror(errno));
			break;
		}
		if (n == 0)
			break; /* shorter than it was: what is there is all */
		at += (uint64_t)n;
		ph_buf_setlen(&b, b.len + (size_t)n);
		/* Whole lines now; a line cut by the slice waits for the
		 * next one. */
		nl = memrchr(b.buf, '\n', b.len);
		if (nl) {
			size_t whole = (size_t)(nl - b.buf) + 1;

			rc = ph_store_add_lines(s, b.buf, whole);
			ph_buf_consume(&b, whole);
		}
	}
	/* A last line without '\n' at the prefix's end is one being written
	 * (or torn): the live stream or the next answer has it. */
	ph_buf_release(&b);
	close(fd);
	return rc;
}

static size_t each_locked(struct ph_store *s, struct ph_window w,
			  uint64_t kinds,
			  int (*fn)(void *ctx, const struct ph_event *ev),
			  void *ctx)
{
	size_t visited = 0;

	for (struct ph_store_chunk *c = s->oldest; c; c = c->next) {
		/* A window since the last call reads the newest chunk only. */
		if (c->hi_to < w.from || c->lo_from > w.to)
			continue;
		for (size_t i = 0; i < c->n; i++) {
			const struct ph_event *ev = &c->ev[i];
			int64_t from, to;

			if (kinds && !(kinds & ((uint64_t)1 << ev->kind)))
				continue;
			ph_ev_span(ev, &from, &to);
			if (to < w.from || from > w.to)
				continue;
			visited++;
			if (fn(ctx, ev))
				return visited;
		}
	}
	return visited;
}

bool ph_store_each_since_locked(struct ph_store *s, uint64_t since,
				int (*fn)(void *ctx, const struct ph_event *ev),
				void *ctx)
{
	if (since < s->version - s->nevents || since > s->version)
		return false; /* some were evicted, or never stored */
	for (struct ph_store_chunk *c = s->oldest; c; c = c->next) {
		if (c->first + c->n <= since)
			continue;
		for (size_t i = since > c->first ? since - c->first : 0;
		     i < c->n; i++)
			if (fn(ctx, &c->ev[i]))
				return true;
	}
	return true;
}

bool ph_store_covers_all_locked(const struct ph_store *s, struct ph_window w)
{
	for (const struct ph_store_chunk *c = s->oldest; c; c = c->next)
		if (c->n && (c->min_to < w.from || c->max_from > w.to))
			return false;
	return true;
}

size_t ph_store_each(struct ph_store *s, struct ph_window w, uint64_t kinds,
		     int (*fn)(void *ctx, const struct ph_event *ev), void *ctx)
{
	size_t visited;

	pthread_mutex_lock(&s->lock);
	visited = each_locked(s, w, kinds, fn, ctx);
	pthread_mutex_unlock(&s->lock);
	return visited;
}

struct tl_ctx {
	const struct ph_event **ev;
	size_t n, alloc;
	int err;
};

static int tl_collect(void *ctx, const struct ph_event *ev)
{
	struct tl_ctx *t = ctx;

	if (t->n == t->alloc && PH_GROW(t->ev, t->alloc, t->n + 1, 256)) {
		t->err = PH_ENOMEM;
		return 1;
	}
	t->ev[t->n++] = ev;
	return 0;
}

static int by_t_then_seq(const void *a, const void *b)
{
	const struct ph_event *x = *(const struct ph_event *const *)a;
	const struct ph_event *y = *(const struct ph_event *const *)b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int ph_store_timeline(struct ph_store *s, struct ph_window w, uint64_t kinds,
		      size_t limit, struct ph_jw *jw)
{
	struct tl_ctx t = { 0 };
	size_t first;
	int64_t clipped = 0;

	/* The tree pointers stay valid while the lock is held: hold it. */
	pthread_mutex_lock(&s->lock);
	each_locked(s, w, kinds, tl_collect, &t);
	if (t.err) {
		pthread_mutex_unlock(&s->lock);
		free(t.ev);
		return t.err;
	}
	if (t.n) /* an empty store has no array: qsort's is never NULL */
		qsort(t.ev, t.n, sizeof(*t.ev), by_t_then_seq);
	first = limit && t.n > limit ? t.n - limit : 0;
	if (s->covered_from != INT64_MIN && w.from < s->covered_from)
		clipped = w.from == INT64_MIN ? -1 : s->covered_from - w.from;
	ph_jw_obj_begin(jw);
	ph_jw_key(jw, "events");
	ph_jw_arr_begin(jw);
	for (size_t i = first; i < t.n; i++)
		ph_jw_value(jw, t.ev[i]->frame);
	ph_jw_arr_end(jw);
	ph_jw_kv_int(jw, "count", (int64_t)(t.n - first));
	ph_jw_kv_bool(jw, "truncated", first > 0);
	if (clipped)
		ph_jw_kv_int(jw, "clippedMs", clipped < 0 ? 0 : clipped);
	if (clipped < 0)
		ph_jw_kv_int(jw, "coveredFrom", s->covered_from);
	ph_jw_obj_end(jw);
	pthread_mutex_unlock(&s->lock);
	free(t.ev);
	return 0;
}

uint64_t ph_kinds_mask(const char *names)
{
	uint64_t m = 0;

	while (names && *names) {
		size_t n = strcspn(names, ",");
		enum ph_kind k = ph_wire_kind(names, n);

		if (k != PH_KIND_UNKNOWN)
			m |= (uint64_t)1 << k;
		names += n + (names[n] == ',');
	}
	return m;
}
