/* SPDX-License-Identifier: Apache-2.0 */
/* ingest.c: wire lines to events (see ingest.h). */
#include "ph_common.h"
#include "ingest.h"
#include "ph_error.h"

#include <fcntl.h>
#include <unistd.h>

/* Seqs past this are deduplicated by max only: the bitmap stays bounded. */
#define SEEN_MAX_SEQ ((int64_t)1 << 32)

void ph_ingest_init(struct ph_ingest *in,
		    int (*on_event)(void *, const struct ph_event *), void *ctx)
{
	memset(in, 0, sizeof(*in));
	ph_json_reader_init(&in->reader);
	in->on_event = on_event;
	in->ctx = ctx;
	in->max_seq = -1;
	in->min_seq = -1;
	snprintf(in->ident.device_id, sizeof(in->ident.device_id), "unknown");
}

void ph_ingest_release(struct ph_ingest *in)
{
	ph_json_reader_release(&in->reader);
	free(in->seen);
	in->seen = NULL;
	in->seen_words = 0;
}

static void copy_str(char *dst, size_t size, const struct ph_json *v)
{
	size_t n;

	if (!ph_json_is(v, PH_JSON_STRING))
		return;
	n = v->n < size - 1 ? v->n : size - 1;
	memcpy(dst, v->u.s, n);
	dst[n] = '\0';
}

void ph_ident_from_hello(struct ph_ident *id, const struct ph_json *r)
{
	int64_t v;

	memset(id, 0, sizeof(*id));
	id->have = true;
	if (ph_json_as_int(ph_json_get(r, "protocol"), &v))
		id->protocol = (int)v;
	if (ph_json_as_int(ph_json_get(r, "startedAt"), &v))
		id->started_at = v;
	if (ph_json_as_int(ph_json_get(r, "pid"), &v) && v > 0)
		id->pid = v;
	copy_str(id->package, sizeof(id->package),
		 ph_json_get(r, "packageName"));
	copy_str(id->process, sizeof(id->process),
		 ph_json_get(r, "processName"));
	copy_str(id->device, sizeof(id->device), ph_json_get(r, "device"));
	copy_str(id->version, sizeof(id->version),
		 ph_json_get(r, "versionName"));
	/* The published host's sentinel when deviceId is absent (§2 Hello). */
	snprintf(id->device_id, sizeof(id->device_id), "unknown");
	copy_str(id->device_id, sizeof(id->device_id),
		 ph_json_get(r, "deviceId"));
}

void ph_profile_from_event(struct ph_profile *p, const struct ph_event *ev)
{
	double d;
	int64_t v;

	p->have = true;
	if (ph_ev_num(ev, "refreshHz", &d) && d > 0 && d < 1000)
		p->refresh_hz = d;
	if (ph_ev_int(ev, "cores", &v) && v > 0 && v < 100000)
		p->cores = (int)v;
	ph_ev_strcpy(ev, "model", p->model, sizeof(p->model));
	ph_ev_strcpy(ev, "os", p->os, sizeof(p->os));
}

/* true when seq is new; marks it seen and counts any gap it closes over. */
static bool seq_is_new(struct ph_ingest *in, int64_t seq)
{
	size_t w;

	if (seq < 0)
		return true; /* host-made events are never device seqs */
	if (seq >= SEEN_MAX_SEQ) {
		if (seq <= in->max_seq)
			return false;
		in->max_seq = seq;
		return true;
	}
	w = (size_t)(seq >> 6);
	if (w >= in->seen_words) {
		size_t was = in->seen_words;

		if (PH_GROW(in->seen, in->seen_words, w + 1, 64))
			return seq > in->max_seq; /* degrade to max-only */
		memset(in->seen + was, 0,
		       (in->seen_words - was) * sizeof(*in->seen));
	}
	if (in->seen[w] & ((uint64_t)1 << (seq & 63)))
		return false;
	in->seen[w] |= (uint64_t)1 << (seq & 63);
	if (seq > in->max_seq) {
		if (in->max_seq >= 0 && seq > in->max_seq + 1)
			in->gaps += (uint64_t)(seq - in->max_seq - 1);
		in->max_seq = seq;
	} else if (in->gaps) {
		in->gaps--; /* a backfill filled a hole */
	}
	return true;
}

/*
 * Another process's stream starts: its seqs start again at 0, so the seqs
 * seen so far say nothing about its own.
 */
static void new_stream(struct ph_ingest *in)
{
	in->restarted = true;
	if (in->seen)
		memset(in->seen, 0, in->seen_words * sizeof(*in->seen));
	in->max_seq = -1;
	in->min_seq = -1;
	in->rehello = false;
	in->streams++;
}

/* An event's fingerprint: FNV-1a over the frame as written again. */
static uint64_t fingerprint(const struct ph_event *ev)
{
	struct ph_buf b = PH_BUF_INIT((size_t)1 << 20);
	struct ph_jw jw;
	uint64_t h = 14695981039346656037ull ^ (uint64_t)ev->t;

	h = (h ^ (uint64_t)ev->kind) * 1099511628211ull;
	ph_jw_init(&jw, &b);
	ph_jw_value(&jw, ev->frame);
	if (!ph_jw_finish(&jw))
		for (size_t i = 0; i < b.len; i++)
			h = (h ^ (unsigned char)b.buf[i]) * 1099511628211ull;
	ph_buf_release(&b);
	return h;
}

/*
 * For the first device event after a hello of the same identity: whether
 * it starts a new process's stream (see ingest.h).  A seq above the
 * stream's lowest says nothing (a reconnect's backfill, once the ring has
 * moved past the first events, or the stream going on): the question
 * stays open for the next event.
 */
static bool restarted_same_identity(struct ph_ingest *in,
				    const struct ph_event *ev)
{
	if (in->min_seq < 0 || ev->seq > in->min_seq)
		return false;
	in->rehello = false;
	return ev->seq < in->min_seq || fingerprint(ev) != in->min_print;
}

/* An envelope's four members in one pass; the last of a repeated key wins,
 * as in ph_json_get. */
struct envelope {
	const struct ph_json *event, *data, *t, *seq;
};

static bool envelope(const struct ph_json *frame, struct envelope *env)
{
	memset(env, 0, sizeof(*env));
	for (uint32_t i = 0; i < frame->n; i++) {
		const struct ph_json_member *m = &frame->u.members[i];
		const char *k = m->key.u.s;

		switch (m->key.n) {
		case 1:
			if (k[0] == 't')
				env->t = &m->value;
			break;
		case 3:
			if (!memcmp(k, "seq", 3))
				env->seq = &m->value;
			break;
		case 4:
			if (!memcmp(k, "data", 4))
				env->data = &m->value;
			break;
		case 5:
			if (!memcmp(k, "event", 5))
				env->event = &m->value;
			break;
		}
	}
	return ph_json_is(env->event, PH_JSON_STRING);
}

static int take_event(struct ph_ingest *in, const struct ph_json *frame,
		      const struct envelope *env)
{
	const struct ph_json *name = env->event, *data = env->data;
	static const struct ph_json empty = { .type = PH_JSON_OBJECT };
	struct ph_event ev = { .frame = frame, .stream = in->streams };

	ev.kind = ph_wire_kind(name->u.s, name->n);
	if (!ph_json_as_int(env->t, &ev.t))
		ev.t = 0;
	/* A hostile or broken t is kept, clamped, so no time arithmetic
	 * downstream overflows (the frame keeps what was sent). */
	ev.t = ph_ev_clamp(ev.t);
	if (!ph_json_as_int(env->seq, &ev.seq))
		ev.seq = -1;
	ev.data = ph_json_is(data, PH_JSON_OBJECT) ? data : &empty;
	if (ev.kind == PH_KIND_DROPPED) {
		int64_t c;

		/* Not an event: its t and seq are the next frame's (§1.6). */
		if (ph_ev_int(&ev, "count", &c) && c > 0)
			in->dropped += (uint64_t)c;
		return 0;
	}
	if (ev.seq >= 0 && in->rehello && restarted_same_identity(in, &ev)) {
		new_stream(in);
		ev.stream = in->streams;
	}
	if (!seq_is_new(in, ev.seq)) {
		in->dups++;
		return 0;
	}
	if (ev.seq >= 0 && (in->min_seq < 0 || ev.seq < in->min_seq)) {
		in->min_seq = ev.seq;
		in->min_print = fingerprint(&ev);
	}
	if (ev.kind == PH_KIND_DEVICE && ph_ev_streq(&ev, "kind", "profile"))
		ph_profile_from_event(&in->profile, &ev);
	in->events++;
	in->counts[ev.kind]++;
	if (!in->first_t || ev.t < in->first_t)
		in->first_t = ev.t;
	if (ev.t > in->last_t)
		in->last_t = ev.t;
	return in->on_event ? in->on_event(in->ctx, &ev) : 0;
}

bool ph_ingest_seq_seen(const struct ph_ingest *in, int64_t seq)
{
	size_t w;

	if (seq < 0 || seq >= SEEN_MAX_SEQ)
		return true;
	w = (size_t)(seq >> 6);
	return w < in->seen_words &&
	       (in->seen[w] & ((uint64_t)1 << (seq & 63)));
}

int64_t ph_ingest_seen_below(const struct ph_ingest *in, int64_t seq)
{
	if (seq > SEEN_MAX_SEQ)
		seq = SEEN_MAX_SEQ;
	while (--seq >= 0) {
		size_t w = (size_t)(seq >> 6);
		uint64_t bits;

		if (w >= in->seen_words) {
			seq = (int64_t)in->seen_words << 6;
			continue;
		}
		/* The bits at and below seq's in its word. */
		bits = in->seen[w] & (~(uint64_t)0 >> (63 - (seq & 63)));
		if (bits)
			return (int64_t)(w << 6) + 63 - __builtin_clzll(bits);
		seq &= ~(int64_t)63;
	}
	return -1;
}

/* Keeps the line just taken among the first issues. */
static void add_issue(struct ph_ingest *in, bool repaired, const char *why)
{
	struct ph_ingest_issue *is;

	if (in->nissues >= PH_INGEST_ISSUES)
		return;
	is = &in->issues[in->nissues++];
	is->line = in->line_no;
	is->offset = in->line_at;
	is->repaired = repaired;
	snprintf(is->why, sizeof(is->why), "%s", why);
}

/* Moves the position past one line of len bytes (and its '\n'). */
static void advance(struct ph_ingest *in, size_t len)
{
	in->line_no++;
	in->line_at = in->next_at;
	in->next_at += len + 1;
}

void ph_ingest_write_issues(const struct ph_ingest_issue *v, unsigned n,
			    struct ph_jw *jw)
{
	ph_jw_key(jw, "lines");
	ph_jw_arr_begin(jw);
	for (unsigned i = 0; i < n; i++) {
		ph_jw_obj_begin(jw);
		ph_jw_kv_int(jw, "line", (int64_t)v[i].line);
		ph_jw_kv_int(jw, "byte", (int64_t)v[i].offset);
		ph_jw_kv_str(jw, "action",
			     v[i].repaired ? "repaired" : "skipped");
		ph_jw_kv_str(jw, "why", v[i].why);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
}

void ph_ingest_malformed(struct ph_ingest *in, const char *why)
{
	if (!in->malformed++)
		snprintf(in->first_error, sizeof(in->first_error),
			 "line %" PRIu64 " (byte %" PRIu64 "): %s", in->line_no,
			 in->line_at, why);
	add_issue(in, false, why);
}

void ph_ingest_skip_line(struct ph_ingest *in, size_t len, const char *why)
{
	advance(in, len);
	ph_ingest_malformed(in, why);
}

/*
 * A line the reader refused for bytes that are not UTF-8: a copy with
 * each replaced by U+FFFD, read again.  Returns 0 with *root set, 1 when
 * the line had no such bytes (or fails after repair: it is malformed),
 * or PH_ETOOBIG when the arena cannot hold the copy.
 */
static int read_repaired(struct ph_ingest *in, struct ph_arena *arena,
			 const char *line, size_t len, struct ph_json **root)
{
	char *copy;
	size_t n, replaced;
	struct ph_err err;
	char why[120];
	int rc;

	if (!ph_utf8_repair(line, len, NULL, &n))
		return 1; /* refused for something else */
	copy = ph_arena_alloc(arena, n);
	if (!copy)
		return PH_ETOOBIG;
	replaced = ph_utf8_repair(line, len, copy, &n);
	rc = ph_json_read(&in->reader, arena, copy, n, root, &err);
	if (rc == PH_ENOMEM || rc == PH_ETOOBIG)
		return rc;
	if (rc)
		return 1;
	in->repaired++;
	snprintf(why, sizeof(why), "%zu byte%s not UTF-8, replaced with U+FFFD",
		 replaced, replaced == 1 ? "" : "s");
	add_issue(in, true, why);
	return 0;
}

int ph_ingest_line(struct ph_ingest *in, struct ph_arena *arena,
		   const char *line, size_t len)
{
	struct ph_json *root = NULL;
	const struct ph_json *res, *evs;
	struct envelope env;
	struct ph_err err;
	char msg[160];
	int rc;

	uint64_t line_no = in->line_no, line_at = in->line_at;
	uint64_t next_at = in->next_at;

	advance(in, len);
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (!len)
		return 0;
	in->lines++;
	rc = ph_json_read(&in->reader, arena, line, len, &root, &err);
	if (rc == PH_ECORRUPT) {
		int fixed = read_repaired(in, arena, line, len, &root);

		rc = fixed == 1 ? PH_ECORRUPT : fixed;
	}
	if (rc == PH_ENOMEM || rc == PH_ETOOBIG) {
		/* The arena is full, not the line bad: the caller retries. */
		in->lines--;
		in->line_no = line_no;
		in->line_at = line_at;
		in->next_at = next_at;
		return rc;
	}
	in->bytes += len + 1;
	if (rc) {
		ph_ingest_malformed(in, ph_err_format(&err, msg, sizeof(msg)));
		return 0;
	}
	if (!ph_json_is(root, PH_JSON_OBJECT)) {
		ph_ingest_malformed(in, "not a JSON object");
		return 0;
	}
	if (envelope(root, &env))
		return take_event(in, root, &env);
	res = ph_json_get(root, "result");
	if (!ph_json_get(root, "id") || !ph_json_is(res, PH_JSON_OBJECT))
		return 0; /* an error answer, or neither: ignored (§1.3) */
	if (ph_json_get(res, "protocol") && ph_json_get(res, "packageName")) {
		struct ph_ident id;

		ph_ident_from_hello(&id, res);
		if (in->ident.have &&
		    (id.started_at != in->ident.started_at ||
		     (id.pid && in->ident.pid && id.pid != in->ident.pid))) {
			new_stream(in);
			in->ident = id;
		} else if (in->ident.have) {
			/* The same process reconnected, or one that restarted
			 * with its identity: its next event tells. */
			in->rehello = in->min_seq >= 0;
		}
		if (!in->ident.have)
			in->ident = id;
		in->hellos++;
		return 0;
	}
	evs = ph_json_get(res, "events");
	if (ph_json_is(evs, PH_JSON_ARRAY)) {
		in->pages++;
		for (size_t i = 0; i < evs->n; i++) {
			const struct ph_json *e = &evs->u.items[i];

			if (!ph_json_is(e, PH_JSON_OBJECT) ||
			    !envelope(e, &env))
				continue;
			rc = take_event(in, e, &env);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int ph_ingest_fd(struct ph_ingest *in, int fd)
{
	struct ph_buf buf = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_arena arena;
	size_t chunk = (size_t)4 << 20;
	int rc = 0;

	/* Per-batch arena: a line's tree is dead once its batch is done. */
	ph_arena_init(&arena, (size_t)1 << 20, (size_t)256 << 20);
	for (;;) {
		ssize_t n;
		size_t start = 0;
		char *nl;

		if (ph_buf_grow(&buf, chunk)) {
			rc = PH_ENOMEM;
			break;
		}
		n = read(fd, buf.buf + buf.len, chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ph_error(PH_EIO, "read: %s", strerror(errno));
			break;
		}
		ph_buf_setlen(&buf, buf.len + (size_t)n);
		while ((nl = memchr(buf.buf + start, '\n', buf.len - start))) {
			size_t len = (size_t)(nl - (buf.buf + start));

			rc = ph_ingest_line(in, &arena, buf.buf + start, len);
			if (rc == PH_ETOOBIG) {
				ph_arena_reset(&arena);
				rc = ph_ingest_line(in, &arena, buf.buf + start,
						    len);
				if (rc == PH_ETOOBIG) {
					ph_ingest_skip_line(in, len,
							    "line too big");
					rc = 0;
				}
			}
			if (rc)
				goto out;
			start += len + 1;
			if (arena.total > ((size_t)64 << 20))
				ph_arena_reset(&arena);
		}
		ph_arena_reset(&arena);
		ph_buf_consume(&buf, start);
		if (n == 0) {
			/* A torn last line: kept only if it is whole JSON. */
			if (buf.len)
				rc = ph_ingest_line(in, &arena, buf.buf,
						    buf.len);
			break;
		}
	}
out:
	ph_arena_release(&arena);
	ph_buf_release(&buf);
	return rc;
}

int ph_ingest_file(struct ph_ingest *in, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return errno == ENOENT ? PH_ENOENT : PH_EIO;
	rc = ph_ingest_fd(in, fd);
	close(fd);
	return rc;
}
