/* SPDX-License-Identifier: Apache-2.0 */
/* systrace.c: a system trace's answers merged into the findings. */
#include "ph_common.h"
#include "systrace.h"
#include "ph_json.h"
#include "trace/trace.h"
#include "trace/trace_ask.h"

/*
 * The trace's name for the process with this pid, into buf; false when
 * the trace never saw it.  An ftrace text trace names threads, not
 * processes: an unnamed process is named here after its main thread, so
 * the trace engine (which picks a process by name) finds this one and
 * not another of the same program.
 */
static bool name_process(struct ph_trace *t, int64_t pid, char *buf,
			 size_t size)
{
	struct ph_table *pt = &t->tables[PH_T_PROCESS];
	struct ph_table *th = &t->tables[PH_T_THREAD];
	const char *main = NULL;
	bool found = false;

	for (size_t i = 0; i < th->rows && !main; i++)
		if (ph_col_i64(th, TH_TID)[i] == pid)
			main = ph_trace_str(t, ph_col_str(th, TH_NAME)[i]);
	for (size_t i = pt->rows; i-- > 0 && !found;) {
		uint32_t *name = &ph_col_str(pt, P_NAME)[i];

		if (ph_col_i64(pt, P_PID)[i] != pid)
			continue;
		found = true;
		if (!*name || !ph_trace_str(t, *name)[0]) {
			char n[300];

			snprintf(n, sizeof(n), "%s [pid %" PRId64 "]",
				 main ? main : "app", pid);
			*name = ph_trace_intern(t, n, strlen(n));
		}
		snprintf(buf, size, "%s", ph_trace_str(t, *name));
	}
	return found;
}

static const char *keep_json(struct ph_analysis *a, const struct ph_json *v)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	struct ph_jw jw;
	const char *s = NULL;

	ph_jw_init(&jw, &b);
	ph_jw_value(&jw, v);
	if (!ph_jw_finish(&jw))
		s = ph_arena_strndup(&a->arena, b.buf, b.len);
	ph_buf_release(&b);
	return s;
}

static const char *keep_str(struct ph_analysis *a, const struct ph_json *v,
			    const char *dflt)
{
	const char *s = NULL;

	if (ph_json_is(v, PH_JSON_STRING))
		s = ph_arena_strndup(&a->arena, v->u.s, v->n);
	return s ? s : dflt;
}

static int64_t ms(const struct ph_json *v)
{
	double d = 0;

	ph_json_as_double(v, &d);
	return (int64_t)(d + (d < 0 ? -0.5 : 0.5));
}

/*
 * Every answer in the ask's JSON becomes a finding; returns how many.
 * Its windows are on the app's clock when the answer says MONOTONIC (the
 * trace's own, or converted through its clock snapshots); otherwise they
 * cannot be placed on the app's axis and the findings are spanning.
 */
static int merge_answer(struct ph_analysis *a, const struct ph_json *root)
{
	const struct ph_json *fs = ph_json_get(root, "findings");
	const struct ph_json *un = ph_json_get(root, "unanswered");
	bool app_clock = ph_json_streq(ph_json_get(root, "clock"), "MONOTONIC");
	int added = 0;

	for (size_t i = 0; ph_json_is(fs, PH_JSON_ARRAY) && i < fs->n; i++) {
		const struct ph_json *it = &fs->u.items[i];
		const struct ph_json *win = ph_json_get(it, "window");
		struct ph_finding *f = ph_analysis_add(a);
		int64_t count = 1;

		if (!f)
			break;
		f->id = keep_str(a, ph_json_get(it, "id"), "trace");
		f->severity = ph_severity_parse(
			keep_str(a, ph_json_get(it, "severity"), "note"));
		if (f->severity < 0)
			f->severity = PH_SEV_NOTE;
		f->confidence = ph_json_streq(ph_json_get(it, "confidence"),
					      "correlated") ?
					PH_CONF_CORRELATED :
					PH_CONF_OBSERVED;
		f->source = "trace";
		f->title = keep_str(a, ph_json_get(it, "title"), f->id);
		if (ph_json_is(ph_json_get(it, "detail"), PH_JSON_STRING))
			f->detail[f->ndetail++] =
				keep_str(a, ph_json_get(it, "detail"), "");
		if (ph_json_is(win, PH_JSON_OBJECT) && app_clock) {
			f->from = f->last_from = ms(ph_json_get(win, "from"));
			f->to = f->last_to = ms(ph_json_get(win, "to"));
		} else {
			f->spanning = true;
		}
		if (ph_json_as_int(ph_json_get(it, "count"), &count) &&
		    count > 0)
			f->count = count;
		if (ph_json_get(it, "evidence"))
			f->evidence = keep_json(a, ph_json_get(it, "evidence"));
		if (!f->evidence)
			f->evidence = "{}";
		f->key = f->id;
		added++;
	}
	if (added && !app_clock)
		ph_analysis_note(a, "system trace: its clock could not be "
				    "related to the app's, so its findings "
				    "are not placed in time");
	for (size_t i = 0; ph_json_is(un, PH_JSON_ARRAY) && i < un->n; i++) {
		const struct ph_json *q =
			ph_json_get(&un->u.items[i], "question");
		const struct ph_json *r =
			ph_json_get(&un->u.items[i], "reason");

		if (ph_json_is(q, PH_JSON_STRING) &&
		    ph_json_is(r, PH_JSON_STRING))
			ph_analysis_note(a,
					 "system trace: %.*s unanswered: %.*s",
					 (int)q->n, q->u.s, (int)r->n, r->u.s);
	}
	return added;
}

/*
 * A time on the app's clock (CLOCK_MONOTONIC, ns) on the trace's clock:
 * itself for a tracefs trace recorded with trace_clock=mono; through the
 * clock snapshots for a device's perfetto trace (BOOTTIME, which runs
 * ahead of MONOTONIC by the time the device slept).  ph_trace_to_clock
 * converts the other way, and the offset only changes at a snapshot, so
 * two steps from a guess settle it.  PH_NULL_I64 when no snapshot relates
 * the two clocks.
 */
static int64_t app_to_trace(const struct ph_trace *t, int64_t ns)
{
	int64_t ts = ns;

	if (!t->trace_clock || t->trace_clock == PH_CLK_MONOTONIC)
		return ns;
	for (int i = 0; i < 2; i++) {
		int64_t m = ph_trace_to_clock(t, ts, PH_CLK_MONOTONIC), d;

		if (m == PH_NULL_I64 || __builtin_sub_overflow(ns, m, &d) ||
		    __builtin_add_overflow(ts, d, &ts))
			return PH_NULL_I64;
	}
	return ts;
}

int ph_systrace_merge(struct ph_analysis *a, const char *path, int64_t pid,
		      int64_t from_ms, int64_t to_ms, char *why,
		      size_t why_size)
{
	int64_t from, to;

	struct ph_trace t;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_jw jw;
	struct ph_arena ar;
	struct ph_json *root;
	char name[256] = "", err[512] = "";
	const char *process = NULL;
	int rc, added = -1;

	why[0] = '\0';
	ph_arena_init(&ar, 1 << 16, (size_t)256 << 20);
	rc = ph_trace_init(&t);
	if (!rc)
		rc = ph_trace_load_file(&t, path);
	if (rc && rc != PH_ECORRUPT) {
		snprintf(why, why_size,
			 "the system trace %s does not load (%s)", path,
			 ph_strerror(rc));
		goto out;
	}
	if (pid > 0) {
		if (!name_process(&t, pid, name, sizeof(name))) {
			snprintf(why, why_size,
				 "the app's process (pid %" PRId64
				 ") is not in the system trace",
				 pid);
			goto out;
		}
		process = name;
	} else if (a->ident.process[0]) {
		process = a->ident.process;
	}
	from = app_to_trace(&t, from_ms * 1000000);
	to = app_to_trace(&t, to_ms * 1000000);
	if (from == PH_NULL_I64 || to == PH_NULL_I64) {
		/* It was recorded over the same run: its whole life. */
		from = to = PH_NULL_I64;
		ph_analysis_note(a,
				 "system trace: no clock snapshot relates "
				 "its %s clock to the app's; asked over "
				 "all of it",
				 t.clock_name ? t.clock_name : "unknown");
	}
	ph_jw_init(&jw, &out);
	rc = ph_trace_ask(&t, process, from, to, NULL, 0, NULL, &jw, err,
			  sizeof(err));
	if (rc || ph_jw_finish(&jw) ||
	    ph_json_parse(&ar, out.buf, out.len, &root, NULL)) {
		snprintf(why, why_size, "the trace engine could not answer: %s",
			 err[0] ? err : "no answer");
		goto out;
	}
	added = merge_answer(a, root);
	ph_analysis_rank(a);
	ph_analysis_note(a,
			 "system trace: %d finding%s about %s over the same "
			 "window, tagged [trace]",
			 added, added == 1 ? "" : "s",
			 name[0] ? name : "the app");
out:
	if (added < 0)
		ph_analysis_note(a, "system trace: %s", why);
	ph_buf_release(&out);
	ph_arena_release(&ar);
	ph_trace_release(&t);
	return added;
}
