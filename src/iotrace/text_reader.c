/* SPDX-License-Identifier: Apache-2.0 */
/*
 * text_reader.c: ftrace text lines in, rows out; see text_reader.h.
 */
#include "ph_common.h"
#include "ph_error.h"
#include "iotrace/text_reader.h"

enum {
	HTML_UNDECIDED, /* no non-blank line of this input seen yet */
	HTML_NO,	/* plain ftrace text */
	HTML_OUTSIDE,	/* systrace HTML, outside a trace-data block */
	HTML_INSIDE,	/* systrace HTML, inside a trace-data block */
};

void ph_iot_text_reader_init(struct ph_iot_text_reader *s, ph_iot_emit_fn emit,
			     void *ctx)
{
	memset(s, 0, sizeof(*s));
	ph_iot_pairer_init(&s->pair);
	ph_iot_lines_init(&s->lines);
	s->emit = emit;
	s->emit_ctx = ctx;
	s->html = HTML_UNDECIDED;
	s->st.header_in_buffer = -1;
	s->st.header_written = -1;
	s->st.first_ns = -1;
	s->st.last_ns = -1;
	ph_buf_init(&s->partial, PH_IOT_LINE_MAX);
}

void ph_iot_text_reader_release(struct ph_iot_text_reader *s)
{
	ph_iot_pairer_release(&s->pair);
	ph_buf_release(&s->partial);
}

static bool starts_with(const char *p, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(e - p) >= n && !memcmp(p, lit, n);
}

static bool starts_with_nocase(const char *p, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(e - p) >= n && !strncasecmp(p, lit, n);
}

/* Reads a decimal number at p; -1 when there is none. */
static int64_t number_at(const char *p, const char *e)
{
	int64_t v = 0;

	if (p >= e || *p < '0' || *p > '9')
		return -1;
	for (; p < e && *p >= '0' && *p <= '9'; p++) {
		if (v > (INT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v;
}

/* "# entries-in-buffer/entries-written: 99975/99975   #P:8" */
static void comment(struct ph_iot_text_reader *s, const char *p, const char *e)
{
	static const char key[] = "entries-in-buffer/entries-written:";
	const char *k = memmem(p, (size_t)(e - p), key, sizeof(key) - 1);
	const char *slash;

	s->st.comments++;
	if (!k)
		return;
	k += sizeof(key) - 1;
	while (k < e && *k == ' ')
		k++;
	slash = memchr(k, '/', (size_t)(e - k));
	if (!slash)
		return;
	s->st.header_in_buffer = number_at(k, slash);
	s->st.header_written = number_at(slash + 1, e);
}

/* "CPU:3 [LOST 1234 EVENTS]"; false when the line is something else. */
static bool lost_marker(struct ph_iot_text_reader *s, const char *p,
			const char *e)
{
	const char *k = memmem(p, (size_t)(e - p), "[LOST ", 6);
	int64_t n;

	if (!k || (n = number_at(k + 6, e)) < 0)
		return false;
	s->st.lost_markers++;
	s->st.lost_events += (uint64_t)n;
	return true;
}

static int html_line(struct ph_iot_text_reader *s, const char *l, size_t n)
{
	if (s->html == HTML_OUTSIDE) {
		if (memmem(l, n, "<script class=\"trace-data\"", 26))
			s->html = HTML_INSIDE;
		s->st.html++;
		return 1;
	}
	if (memmem(l, n, "</script>", 9)) {
		s->html = HTML_OUTSIDE;
		s->st.html++;
		return 1;
	}
	return 0;
}

static bool blank(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	return p == e;
}

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* Lines parsed at a time from a feed of plain ftrace text. */
#define BATCH 32

/* Counts a block event, pairs it and emits the row it finishes. */
static ALWAYS_INLINE int record(struct ph_iot_text_reader *s,
				const struct ph_iot_rec *rec)
{
	struct ph_iot_row row;
	int rc;

	if (s->err)
		return s->err;
	s->st.block[rec->event]++;
	s->st.rwbs_unknown += rec->unknown_rwbs;
	if (s->st.first_ns < 0)
		s->st.first_ns = rec->ts_ns;
	s->st.last_ns = rec->ts_ns;
	rc = ph_iot_pairer_feed(&s->pair, rec, &row);
	if (rc <= 0)
		return rc;
	rc = s->emit ? s->emit(s->emit_ctx, &row) : 0;
	if (rc)
		s->err = rc;
	return rc;
}

/* Where the line at l (the one just counted in st.lines) is in its input:
 * in the buffer being fed, or else the partial line kept across feeds. */
static struct ph_iot_line_at line_at(const struct ph_iot_text_reader *s,
				     const char *l, uint8_t why)
{
	struct ph_iot_line_at at = { 0 };

	at.line = s->st.lines - s->input_lines0;
	at.offset = s->feed && l >= s->feed && l < s->feed + s->feed_len ?
			    s->feed_off + (uint64_t)(l - s->feed) :
			    s->partial_off;
	at.input = s->input;
	at.why = why;
	return at;
}

/* Counts what the parser said of a line; pairs a block event. */
static ALWAYS_INLINE int parsed(struct ph_iot_text_reader *s,
				const struct ph_iot_parsed *r)
{
	switch (r->kind) {
	case PH_IOT_LINE_BLOCK: return record(s, &r->rec);
	case PH_IOT_LINE_MALFORMED:
		s->st.malformed++;
		s->st.bad[r->why]++;
		s->last_why = r->why;
		if (s->st.n_bad_at < PH_IOT_BAD_KEPT)
			s->st.bad_at[s->st.n_bad_at++] =
				line_at(s, r->line, r->why);
		return 0;
	case PH_IOT_LINE_OTHER: s->st.other_events++; return 0;
	default:
		if (blank(r->line, r->line + r->len)) {
			s->st.blank++;
			return 0;
		}
		s->st.unknown++;
		if (!s->st.not_ftrace_at.line)
			s->st.not_ftrace_at =
				line_at(s, r->line, PH_IOT_AT_NOT_EVENT);
		return 0;
	}
}

/* A line that is not HTML, a comment or a loss marker: an event, or not. */
static int event_line(struct ph_iot_text_reader *s, const char *l, size_t n)
{
	struct ph_iot_parsed r;
	enum ph_iot_bad why = PH_IOT_BAD_COUNT;

	r.kind = (uint8_t)ph_iot_parse_line(l, n, &r.rec, &why);
	r.why = (uint8_t)why;
	r.line = l;
	r.len = n;
	return parsed(s, &r);
}

/* A line of a systrace HTML file, a comment or a loss marker, or one that
 * only looks like them at its first byte; line() sends them here. */
static int unusual_line(struct ph_iot_text_reader *s, const char *l, size_t n)
{
	const char *e = l + n;

	if (s->html != HTML_NO) {
		const char *p = l;

		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (p == e || blank(p, e)) {
			s->st.blank++;
			return 0;
		}
		if (s->html == HTML_UNDECIDED)
			s->html = starts_with_nocase(p, e, "<!DOCTYPE html") ||
						  starts_with_nocase(p, e,
								     "<html") ?
					  HTML_OUTSIDE :
					  HTML_NO;
		if (s->html != HTML_NO && html_line(s, l, n))
			return 0;
	}
	/* tracefs writes its comments and loss markers from column 0 */
	if (n && l[0] == '#') {
		comment(s, l, e);
		return 0;
	}
	if (n && l[0] == 'C' && starts_with(l, e, "CPU:") &&
	    lost_marker(s, l, e))
		return 0;
	return event_line(s, l, n);
}

static int line(struct ph_iot_text_reader *s, const char *l, size_t n)
{
	s->st.lines++;
	if (PH_UNLIKELY(s->html != HTML_NO) || !n || l[0] == '#' || l[0] == 'C')
		return unusual_line(s, l, n);
	return event_line(s, l, n);
}

int ph_iot_text_reader_record(struct ph_iot_text_reader *s,
			      const struct ph_iot_rec *rec)
{
	return record(s, rec);
}

static int stop(struct ph_iot_text_reader *s, int rc)
{
	s->err = rc;
	return rc;
}

int ph_iot_text_reader_feed(struct ph_iot_text_reader *s, const char *buf,
			    size_t len)
{
	const char *p = buf, *e = buf + len, *nl;
	int rc;

	if (s->err)
		return s->err;
	s->st.bytes += len;
	s->feed = buf;
	s->feed_len = len;
	s->feed_off = s->input_bytes;
	s->input_bytes += len;
	if (s->partial.len || s->dropping) {
		nl = memchr(p, '\n', len);
		size_t take = nl ? (size_t)(nl - p) : len;

		if (!s->dropping && ph_buf_add(&s->partial, p, take)) {
			s->dropping = true; /* past PH_IOT_LINE_MAX */
			ph_buf_reset(&s->partial);
		}
		if (!nl)
			return 0;
		if (s->dropping) {
			s->st.lines++;
			s->st.too_long++;
			s->dropping = false;
		} else {
			rc = line(s, s->partial.buf, s->partial.len);
			ph_buf_reset(&s->partial);
			if (rc)
				return stop(s, rc);
		}
		p = nl + 1;
	}
	while (p < e) {
		if (s->html == HTML_NO) {
			/* plain ftrace text: the parser splits the lines */
			struct ph_iot_parsed r[BATCH];
			size_t used, n;

			n = ph_iot_parse_lines(&s->lines, p, (size_t)(e - p), r,
					       BATCH, &used);
			for (size_t i = 0; i < n; i++) {
				s->st.lines++;
				rc = parsed(s, &r[i]);
				if (rc)
					return stop(s, rc);
			}
			p += used;
			if (n == BATCH)
				continue;
		}
		/* a line the reader reads itself, or the first of an
		 * input, or HTML */
		nl = memchr(p, '\n', (size_t)(e - p));
		if (!nl)
			break;
		rc = line(s, p, (size_t)(nl - p));
		if (rc)
			return stop(s, rc);
		p = nl + 1;
	}
	if (p < e)
		s->partial_off = s->feed_off + (uint64_t)(p - buf);
	if (p < e && ph_buf_add(&s->partial, p, (size_t)(e - p))) {
		s->dropping = true;
		ph_buf_reset(&s->partial);
	}
	return 0;
}

int ph_iot_text_reader_end_input(struct ph_iot_text_reader *s)
{
	int rc = 0;

	if (s->err)
		return s->err;
	if (s->dropping) {
		s->st.lines++;
		s->st.too_long++;
	} else if (s->partial.len) {
		/* the kernel ends every line: one without its newline that
		 * is not a whole block event was most likely cut off */
		uint64_t malformed = s->st.malformed, unknown = s->st.unknown,
			 other = s->st.other_events;

		rc = line(s, s->partial.buf, s->partial.len);
		if (s->st.malformed > malformed || s->st.unknown > unknown ||
		    s->st.other_events > other) {
			s->st.torn = true;
			s->st.torn_at = line_at(s, s->partial.buf,
						s->st.malformed > malformed ?
							s->last_why :
						s->st.unknown > unknown ?
							PH_IOT_AT_NOT_EVENT :
							PH_IOT_AT_OTHER_EVENT);
		}
	}
	ph_buf_reset(&s->partial);
	s->dropping = false;
	s->html = HTML_UNDECIDED;
	s->feed = NULL;
	s->feed_len = 0;
	s->input_bytes = 0;
	s->input_lines0 = s->st.lines;
	s->input++;
	return rc ? stop(s, rc) : 0;
}

bool ph_iot_find_clock_sync(const char *buf, size_t len, int64_t *offset_ns)
{
	static const char key[] = "trace_event_clock_sync: realtime_ts=";
	const char *k = buf, *end = buf + len;

	/* the first one on an ftrace line: a systrace's viewer code names
	 * the marker too */
	while ((k = memmem(k, (size_t)(end - k), key, sizeof(key) - 1))) {
		const char *ls = k, *le;
		struct ph_iot_rec rec;
		enum ph_iot_bad why;
		int64_t ms = number_at(k + sizeof(key) - 1, end);

		while (ls > buf && ls[-1] != '\n')
			ls--;
		le = memchr(k, '\n', (size_t)(end - k));
		if (!le)
			le = end;
		/* a tracing_mark_write event: OTHER, with its header */
		if (ms >= 0 && ms <= INT64_MAX / 1000000 &&
		    ph_iot_parse_line(ls, (size_t)(le - ls), &rec, &why) ==
			    PH_IOT_LINE_OTHER) {
			*offset_ns = ms * 1000000 - rec.ts_ns;
			return true;
		}
		k += sizeof(key) - 1;
	}
	return false;
}
