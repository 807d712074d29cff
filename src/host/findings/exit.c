/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exit.c: exit.  How the previous process died, as the next one reported
 * it: a crash, native crash or ANR is an error with its top frame; a
 * user-requested stop is a note; an ordinary kill in the background
 * (importance >= 400: low memory, a signal, the process's own exit) is
 * what Android does every day and makes no finding.  Anything else in the
 * foreground is a note.  Exits are `spanning`: they belong to the previous
 * process, not to this session's clock.
 */
#include "ph_common.h"
#include "family.h"

struct ex {
	int64_t t, importance, ts;
	const char *reason, *description, *top, *stack;
};

struct exit_state {
	struct ex *v;
	size_t n, alloc;
};

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct exit_state *s = p;
	struct ex *x;
	const char *st;
	size_t n;

	if (ev->kind != PH_KIND_EXIT)
		return;
	if (s->n == s->alloc && PH_GROW(s->v, s->alloc, s->n + 1, 4))
		return;
	x = &s->v[s->n++];
	memset(x, 0, sizeof(*x));
	x->t = ev->t;
	x->reason = ph_keep_field(c, ev, "reason");
	if (!x->reason)
		x->reason = "REASON_UNKNOWN";
	if (!ph_ev_int(ev, "importance", &x->importance))
		x->importance = 100;
	ph_ev_int(ev, "timestamp", &x->ts);
	x->description = ph_keep_field(c, ev, "description");
	if (ph_ev_str(ev, "mainStack", &st, &n)) {
		x->stack = ph_keep(c, st, n);
		x->top = ph_keep(c, st, strcspn(x->stack, "\n"));
	}
}

static int classify(const struct ex *x)
{
	const char *r = x->reason;

	if (!strcmp(r, "REASON_CRASH") || !strcmp(r, "REASON_CRASH_NATIVE") ||
	    !strcmp(r, "REASON_ANR"))
		return PH_SEV_ERROR;
	if (!strcmp(r, "REASON_USER_REQUESTED") ||
	    !strcmp(r, "REASON_USER_STOPPED"))
		return PH_SEV_NOTE;
	if (x->importance >= 400)
		return -1; /* an ordinary background kill */
	return PH_SEV_NOTE;
}

static void emit(struct ph_fctx *c, void *p)
{
	struct exit_state *s = p;

	for (size_t i = 0; i < s->n; i++) {
		const struct ex *x = &s->v[i];
		int sev = classify(x);
		struct ph_finding *f;
		struct ph_jw *jw;

		if (sev < 0)
			continue;
		f = ph_fnd_new(c, "exit", sev, PH_CONF_OBSERVED, x->t, x->t);
		if (!f)
			return;
		f->spanning = true;
		ph_fnd_title(c, f, "The previous process ended: %s%s%.160s",
			     x->reason, x->top ? " in " : "",
			     x->top ? x->top : "");
		if (x->description)
			ph_fnd_detail(c, f, "%.240s", x->description);
		ph_fnd_detail(c, f, "importance %" PRId64 "%s", x->importance,
			      x->importance >= 400 ? " (background)" :
						     " (foreground)");
		ph_fnd_key(c, f, "exit:%s:%" PRId64, x->reason, x->ts);
		if (x->top) {
			ph_parse_frame(c, x->top, strlen(x->top), &f->hint);
			f->hint.fn = ph_fnd_str(c, f->hint.fn);
			f->hint.file = ph_fnd_str(c, f->hint.file);
			f->hint.app = true;
		}
		jw = ph_fnd_evidence_begin(c);
		ph_jw_kv_str(jw, "reason", x->reason);
		ph_jw_kv_int(jw, "importance", x->importance);
		if (x->ts)
			ph_jw_kv_int(jw, "timestamp", x->ts);
		if (x->description)
			ph_jw_kv_str(jw, "description", x->description);
		if (x->top)
			ph_jw_kv_str(jw, "top", x->top);
		if (x->stack)
			ph_jw_kv_str(jw, "mainStack", x->stack);
		ph_fnd_evidence_end(c, f);
	}
}

static void release(void *p)
{
	free(((struct exit_state *)p)->v);
}

const struct ph_family ph_family_exit = {
	.name = "exit",
	.ids = { "exit" },
	.kinds = PH_KIND_BIT(EXIT),
	.state_size = sizeof(struct exit_state),
	.event = on_event,
	.emit = emit,
	.release = release,
};
