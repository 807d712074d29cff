/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stall.c: main-thread-stall.  The watchdog saw the main thread not answer
 * for durationMs: an error, grouped by the top app frame (the code to look
 * at).  A stall that lies inside a heap dump's pause (leak events carry
 * heapDumpStartMs/heapDumpEndMs) was caused by the dump, not the app: it
 * becomes a note that says so.
 *
 * While a stall lasts the agent sends it again and again, "ongoing", with
 * the same t (the stall's start) and a growing durationMs; the closing
 * event has no "ongoing".  One stall is one entry, updated by each of its
 * events: counted once.  A stall whose last event is ongoing is open: the
 * main thread was not answering when last heard from, and the finding
 * says so.
 */
#include "ph_common.h"
#include "family.h"

struct stall {
	int64_t t, ms;
	bool open;	   /* its newest event is ongoing */
	const char *top;   /* the top app frame's line */
	const char *where; /* its function and file: the group and the key */
	const char *stack; /* first lines of the stack */
	const char *module;
};

struct dump {
	int64_t from, to;
};

struct stall_state {
	struct stall *v;
	size_t n, alloc;
	struct dump *d;
	size_t nd, ad;
};

/* The top frame that is the app's own: frames[] when sent, else `top`. */
static void top_app_frame(struct ph_fctx *c, const struct ph_event *ev,
			  struct stall *x)
{
	const struct ph_json *fr = ph_ev_get(ev, "frames");
	const char *s;
	size_t n;

	x->top = NULL;
	for (size_t i = 0; ph_json_is(fr, PH_JSON_ARRAY) && i < fr->n; i++) {
		const struct ph_json *f = &fr->u.items[i];
		const struct ph_json *fn = ph_json_get(f, "fn");
		const struct ph_json *file = ph_json_get(f, "file");
		int64_t line = -1;
		char buf[400];

		if (!ph_json_is(ph_json_get(f, "app"), PH_JSON_TRUE) ||
		    !ph_json_is(fn, PH_JSON_STRING))
			continue;
		ph_json_as_int(ph_json_get(f, "line"), &line);
		/* The agent's line form: what is unknown is left out. */
		if (!ph_json_is(file, PH_JSON_STRING) || !file->n)
			snprintf(buf, sizeof(buf), "%.*s", (int)fn->n, fn->u.s);
		else if (line <= 0)
			snprintf(buf, sizeof(buf), "%.*s(%.*s)", (int)fn->n,
				 fn->u.s, (int)file->n, file->u.s);
		else
			snprintf(buf, sizeof(buf), "%.*s(%.*s:%" PRId64 ")",
				 (int)fn->n, fn->u.s, (int)file->n, file->u.s,
				 line);
		x->top = ph_keep(c, buf, strlen(buf));
		x->module = ph_keep_field(c, &(struct ph_event){ .data = f },
					  "module");
		return;
	}
	if (ph_ev_str(ev, "top", &s, &n))
		x->top = ph_keep(c, s, n);
	else if (ph_ev_str(ev, "stack", &s, &n))
		x->top = ph_keep(c, s,
				 strcspn(s, "\n") < n ? strcspn(s, "\n") : n);
	else
		x->top = "unknown";
}

/*
 * The same stall in two runs, or twice in one, is the same function: the
 * line is where the sample landed in it (a busy loop's compare, or the
 * call inside it), so stalls group and are keyed by "fn(file)" when the
 * top frame has both, else by the whole top line.
 */
static const char *stall_where(struct ph_fctx *c, const char *top)
{
	struct ph_where_hint h = { 0 };
	char buf[400];

	ph_parse_frame(c, top, strlen(top), &h);
	if (!h.fn || !h.file)
		return top;
	snprintf(buf, sizeof(buf), "%s(%s)", h.fn, h.file);
	return ph_keep(c, buf, strlen(buf));
}

/* One blocked event into x: a new stall, or an open one's newer view. */
static void read_stall(struct ph_fctx *c, const struct ph_event *ev,
		       struct stall *x)
{
	const char *stack;
	size_t n, cut = 0;

	x->t = ev->t;
	x->open = ph_ev_true(ev, "ongoing");
	if (!ph_ev_int(ev, "durationMs", &x->ms))
		x->ms = 0;
	/* A sample that did not come (top "?", the stack empty or absent)
	 * keeps the stack an earlier one had. */
	if (x->top && ph_ev_str(ev, "top", &stack, &n) && n == 1 &&
	    stack[0] == '?' && (!ph_ev_str(ev, "stack", &stack, &n) || n == 0))
		return;
	top_app_frame(c, ev, x);
	x->where = stall_where(c, x->top);
	x->stack = NULL;
	if (ph_ev_str(ev, "stack", &stack, &n)) {
		/* Keep the first four frames: enough to read. */
		for (int l = 0; l < 4 && cut < n; l++) {
			const char *nl = memchr(stack + cut, '\n', n - cut);

			cut = nl ? (size_t)(nl - stack) + 1 : n;
		}
		x->stack =
			ph_keep(c, stack,
				cut && stack[cut - 1] == '\n' ? cut - 1 : cut);
	}
}

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct stall_state *s = p;
	int64_t a, b;

	if (ev->kind == PH_KIND_LEAK && ph_ev_int(ev, "heapDumpStartMs", &a) &&
	    ph_ev_int(ev, "heapDumpEndMs", &b) && b >= a) {
		if (s->nd == s->ad && PH_GROW(s->d, s->ad, s->nd + 1, 8))
			return;
		s->d[s->nd++] = (struct dump){ a, b };
		return;
	}
	if (ev->kind != PH_KIND_BLOCKED)
		return;
	/* An open stall's next event: update it in place. */
	for (size_t i = s->n; i-- > 0;) {
		if (s->v[i].open && s->v[i].t == ev->t) {
			read_stall(c, ev, &s->v[i]);
			return;
		}
	}
	if (s->n == s->alloc && PH_GROW(s->v, s->alloc, s->n + 1, 16))
		return;
	memset(&s->v[s->n], 0, sizeof(s->v[0]));
	read_stall(c, ev, &s->v[s->n++]);
}

static bool in_dump(const struct stall_state *s, const struct stall *x)
{
	for (size_t i = 0; i < s->nd; i++)
		if (x->t >= s->d[i].from - 50 &&
		    x->t + x->ms <= s->d[i].to + 50)
			return true;
	return false;
}

static void emit_group(struct ph_fctx *c, const struct stall_state *s,
		       size_t first, bool dump)
{
	const struct stall *x0 = &s->v[first], *worst = x0;
	int64_t count = 0, total = 0, from = INT64_MAX, to = INT64_MIN;
	const struct stall *last = x0, *open = NULL;
	struct ph_finding *f;
	struct ph_jw *jw;

	for (size_t i = first; i < s->n; i++) {
		const struct stall *x = &s->v[i];

		if (strcmp(x->where, x0->where) || in_dump(s, x) != dump)
			continue;
		count++;
		total += x->ms;
		if (x->t < from)
			from = x->t;
		if (x->t + x->ms > to)
			to = x->t + x->ms;
		if (x->ms > worst->ms)
			worst = x;
		if (x->t >= last->t)
			last = x;
		if (x->open)
			open = x;
	}
	f = ph_fnd_new(c, "main-thread-stall",
		       dump ? PH_SEV_NOTE : PH_SEV_ERROR, PH_CONF_OBSERVED,
		       from, to);
	if (!f)
		return;
	f->count = count;
	f->open = open != NULL;
	f->last_from = last->t;
	f->last_to = last->t + last->ms;
	if (open)
		ph_fnd_title(c, f,
			     "Main thread not answering for %" PRId64
			     " ms, still stuck when last heard from, in %.120s",
			     open->ms, open->top);
	else if (dump)
		ph_fnd_title(c, f,
			     "Main thread stalled %" PRId64
			     " ms during a heap dump",
			     worst->ms);
	else
		ph_fnd_title(c, f,
			     "Main thread stalled %" PRId64 " ms in %.120s",
			     worst->ms, worst->top);
	if (dump)
		ph_fnd_detail(c, f,
			      "the heap dump paused the app; top frame "
			      "%.160s",
			      worst->top);
	else if (open)
		ph_fnd_detail(c, f,
			      "stuck since t=%" PRId64 ", %" PRId64
			      " ms when last heard from; %" PRId64
			      " stall(s) in all",
			      open->t, open->ms, count);
	else if (count > 1)
		ph_fnd_detail(c, f,
			      "%" PRId64 " stalls, %" PRId64
			      " ms in all; worst at t=%" PRId64,
			      count, total, worst->t);
	else
		ph_fnd_detail(c, f, "at t=%" PRId64 " for %" PRId64 " ms",
			      worst->t, worst->ms);
	if (worst->stack) {
		char line[300];
		size_t k = 0;

		/* The stack on one line: frames joined with " < ". */
		for (const char *q = worst->stack; *q && k + 4 < sizeof(line);
		     q++) {
			if (*q == '\n') {
				memcpy(line + k, " < ", 3);
				k += 3;
			} else {
				line[k++] = *q;
			}
		}
		line[k] = '\0';
		ph_fnd_detail(c, f, "stack: %s", line);
	}
	ph_parse_frame(c, worst->top, strlen(worst->top), &f->hint);
	f->hint.fn = ph_fnd_str(c, f->hint.fn);
	f->hint.file = ph_fnd_str(c, f->hint.file);
	ph_fnd_key(c, f, "main-thread-stall:%s%s", dump ? "dump:" : "",
		   x0->where);
	f->hint.app = true;
	jw = ph_fnd_evidence_begin(c);
	ph_jw_kv_int(jw, "durationMs", worst->ms);
	ph_jw_kv_int(jw, "at", worst->t);
	ph_jw_kv_int(jw, "count", count);
	ph_jw_kv_int(jw, "totalMs", total);
	ph_jw_kv_str(jw, "top", worst->top);
	if (worst->stack)
		ph_jw_kv_str(jw, "stack", worst->stack);
	if (worst->module)
		ph_jw_kv_str(jw, "module", worst->module);
	if (dump)
		ph_jw_kv_bool(jw, "duringHeapDump", true);
	if (open) {
		/* Not over when the record ends: how long so far, from when. */
		ph_jw_kv_bool(jw, "open", true);
		ph_jw_kv_int(jw, "openSinceT", open->t);
		ph_jw_kv_int(jw, "openForMs", open->ms);
	}
	ph_fnd_evidence_end(c, f);
}

static void emit(struct ph_fctx *c, void *p)
{
	struct stall_state *s = p;

	for (size_t i = 0; i < s->n; i++) {
		bool dump = in_dump(s, &s->v[i]), seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(s->v[j].where, s->v[i].where) &&
			       in_dump(s, &s->v[j]) == dump;
		if (!seen)
			emit_group(c, s, i, dump);
	}
}

static void release(void *p)
{
	struct stall_state *s = p;

	free(s->v);
	free(s->d);
}

const struct ph_family ph_family_stall = {
	.name = "main-thread-stall",
	.ids = { "main-thread-stall" },
	.kinds = PH_KIND_BIT(LEAK) | PH_KIND_BIT(BLOCKED),
	.state_size = sizeof(struct stall_state),
	.event = on_event,
	.emit = emit,
	.release = release,
};
