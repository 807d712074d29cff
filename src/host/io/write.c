/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io/write.c: the `io` view's answers, for a person (text), a program
 * (one JSON object) and the timeline (wire `io` events, NDJSON).
 */
#include "ph_common.h"
#include "ph_buf.h"
#include "io.h"

#define TEXT_MOMENTS 20
#define TEXT_PROCS   8

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static int64_t floor_ms(int64_t ns)
{
	return ns >= 0 ? ns / 1000000 : -((-ns + 999999) / 1000000);
}

static const char *op_wire(const char *op)
{
	static const char *const known[] = { "read", "write", "flush",
					     "discard" };

	for (size_t i = 0; i < PH_ARRAY_SIZE(known); i++)
		if (!strcmp(op, known[i]))
			return known[i];
	return "other"; /* secure_erase, none: protocol.md §4.4 */
}

void ph_io_event_write(const struct ph_io_req *r, struct ph_jw *jw)
{
	char dev[32];

	snprintf(dev, sizeof(dev), "%u,%u", r->dev >> 20, r->dev & 0xfffff);
	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "event", "io");
	ph_jw_kv_int(jw, "t", floor_ms(r->issue_ns));
	ph_jw_kv_int(jw, "seq", -1);
	ph_jw_key(jw, "data");
	ph_jw_obj_begin(jw);
	/* t is whole ms; the view joins on the issue's own ns (io/events.c
	 * reads them back), so the exact time travels beside it */
	ph_jw_kv_double(jw, "issueMs", ms(r->issue_ns));
	ph_jw_kv_str(jw, "dev", dev);
	if (r->sector >= 0)
		ph_jw_kv_int(jw, "sector", r->sector);
	ph_jw_kv_int(jw, "bytes", (int64_t)r->bytes);
	ph_jw_kv_str(jw, "rwbs", r->rwbs);
	ph_jw_kv_str(jw, "op", op_wire(r->op));
	if (r->latency_ns >= 0)
		ph_jw_kv_double(jw, "latencyMs", ms(r->latency_ns));
	ph_jw_kv_str(jw, "comm", r->comm);
	if (r->pid >= 0)
		ph_jw_kv_int(jw, "pid", r->pid);
	if (r->tid >= 0)
		ph_jw_kv_int(jw, "tid", r->tid);
	if (r->queue_ns >= 0)
		ph_jw_kv_double(jw, "queueMs", ms(r->queue_ns));
	if (r->request_id)
		ph_jw_kv_int(jw, "requestId", (int64_t)r->request_id);
	if (r->cpu >= 0)
		ph_jw_kv_int(jw, "cpu", r->cpu);
	ph_jw_obj_end(jw);
	ph_jw_obj_end(jw);
}

int ph_io_write_events(const struct ph_io_view *v, bool all, struct ph_buf *out)
{
	struct ph_jw jw;

	for (size_t i = 0; i < v->nreq; i++) {
		if (!all && !v->req[i].app)
			continue;
		ph_jw_init(&jw, out);
		ph_io_event_write(&v->req[i], &jw);
		if (ph_jw_finish(&jw) || ph_buf_addch(out, '\n'))
			return PH_ENOMEM;
	}
	return 0;
}

/* --- shared wording ------------------------------------------------------- */

static const char *const align_names[] = { "same-clock", "wall-clock",
					   "assumed", "given" };

const char *ph_io_align_name(int align)
{
	return align >= 0 && align < (int)PH_ARRAY_SIZE(align_names) ?
		       align_names[align] :
		       "unknown";
}

void ph_io_clock_note(const struct ph_io_view *v, char *buf, size_t size)
{
	switch (v->align) {
	case PH_IO_SAME_CLOCK:
		snprintf(buf, size,
			 "one clock: the app's t and the recording's mono_ns "
			 "are both CLOCK_MONOTONIC (their wall-clock offsets "
			 "agree within %.1f ms)",
			 ms(v->offset_diff_ns < 0 ? -v->offset_diff_ns :
						    v->offset_diff_ns));
		break;
	case PH_IO_WALL_CLOCK:
		snprintf(buf, size,
			 "aligned by wall clock: the recording's mono_ns "
			 "%+.3f s (another boot or device), +-1 ms plus any "
			 "drift between the two clocks",
			 (double)v->shift_ns / 1e9);
		break;
	case PH_IO_ASSUMED:
		snprintf(
			buf, size,
			"assumed one clock: %s, so the alignment is not "
			"checked",
			v->have_app_offset ?
				"the recording's manifest has no clock offset" :
				"the session has no device:clocks event");
		break;
	default:
		snprintf(buf, size,
			 "shifted as given: app t = mono_ns %+.3f ms",
			 ms(v->shift_ns));
		break;
	}
}

static void human_bytes(char *buf, size_t size, uint64_t b)
{
	if (b < 1024)
		snprintf(buf, size, "%" PRIu64 " B", b);
	else if (b < (uint64_t)1 << 20)
		snprintf(buf, size, "%.1f KiB", (double)b / 1024);
	else if (b < (uint64_t)1 << 30)
		snprintf(buf, size, "%.1f MiB", (double)b / 1048576);
	else
		snprintf(buf, size, "%.1f GiB", (double)b / 1073741824);
}

static const char *ms3(char *buf, size_t size, int64_t ns)
{
	if (ns < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.3f", ms(ns));
	return buf;
}

/* --- text ----------------------------------------------------------------- */

int ph_io_write_findings_text(const struct ph_io_view *v, struct ph_buf *o)
{
	int rc = 0;

	rc |= ph_buf_addstr(o, "\nfindings\n");
	if (!v->nf)
		rc |= ph_buf_addstr(o, "  none\n");
	for (size_t i = 0; i < v->nf; i++) {
		const struct ph_finding *f = &v->f[i];

		rc |= ph_buf_addf(o, "  %-7s %s  %s",
				  ph_severity_name(f->severity), f->id,
				  f->title);
		if (f->confidence == PH_CONF_CORRELATED)
			rc |= ph_buf_addstr(o, " (correlated)");
		if (!f->spanning)
			rc |= ph_buf_addf(o, "  t=%" PRId64 "..%" PRId64,
					  f->from, f->to);
		rc |= ph_buf_addch(o, '\n');
		for (int k = 0; k < f->ndetail; k++)
			rc |= ph_buf_addf(o, "          %s\n", f->detail[k]);
	}
	if (v->nquiet) {
		rc |= ph_buf_addstr(o, "quiet: ");
		for (size_t i = 0; i < v->nquiet; i++)
			rc |= ph_buf_addf(o, "%s%s", i ? ", " : "",
					  v->quiet[i]);
		rc |= ph_buf_addch(o, '\n');
	}
	return rc ? PH_ENOMEM : 0;
}

int ph_io_write_clock_text(const struct ph_io_view *v, struct ph_buf *o)
{
	char note[400];
	int rc = 0;

	ph_io_clock_note(v, note, sizeof(note));
	rc |= ph_buf_addf(o, "  clock      %s\n", note);
	if (v->w.from != INT64_MIN && v->w.to != INT64_MAX)
		rc |= ph_buf_addf(o,
				  "  window     t=%" PRId64 "..%" PRId64
				  " (%.1f s)\n",
				  v->w.from, v->w.to,
				  (double)(v->w.to - v->w.from) / 1000.0);
	return rc ? PH_ENOMEM : 0;
}

int ph_io_write_others_text(const struct ph_io_view *v, struct ph_buf *o)
{
	int rc = ph_buf_addf(o, "%" PRIu64 " by %" PRIu64 " other process%s",
			     v->others_n - v->unseen_n, v->other_procs,
			     v->other_procs == 1 ? "" : "es");

	if (v->unseen_n)
		rc |= ph_buf_addf(o, ", %" PRIu64 " whose issue was not seen",
				  v->unseen_n);
	rc |= ph_buf_addch(o, '\n');
	return rc ? PH_ENOMEM : 0;
}

int ph_io_write_lost_text(const struct ph_io_view *v, struct ph_buf *o)
{
	if (v->lost < 0)
		return ph_buf_addstr(o, "  lost       unknown (no manifest)\n");
	if (!v->lost)
		return ph_buf_addstr(o,
				     "  lost       none reported by ftrace\n");
	return ph_buf_addf(o, "  lost       %" PRId64 " events\n", v->lost);
}

static int text_devices(const struct ph_io_view *v, struct ph_buf *o)
{
	char b[32], c[4][32], dev[24];
	int rc = 0;

	if (!v->nops)
		return 0;
	rc |= ph_buf_addf(o, "\n%-9s %-13s %9s %11s %9s %9s %10s\n", "device",
			  "operation", "requests", "bytes", "p50 ms", "p99 ms",
			  "max ms");
	for (size_t i = 0; i < v->nops; i++) {
		const struct ph_io_dev_op *d = &v->ops[i];

		snprintf(dev, sizeof(dev), "%u:%u", d->dev >> 20,
			 d->dev & 0xfffff);
		human_bytes(b, sizeof(b), d->bytes);
		rc |= ph_buf_addf(o,
				  "%-9s %-13s %9" PRIu64 " %11s %9s %9s %10s\n",
				  dev, d->op, d->n, b,
				  ms3(c[0], sizeof(c[0]), d->p50_ns),
				  ms3(c[1], sizeof(c[1]), d->p99_ns),
				  ms3(c[2], sizeof(c[2]), d->max_ns));
	}
	return rc;
}

static int text_procs(const struct ph_io_view *v, struct ph_buf *o)
{
	char b[32], pid[24];
	size_t shown = v->nprocs < TEXT_PROCS ? v->nprocs : TEXT_PROCS;
	int rc = 0;

	if (!v->nprocs)
		return 0;
	rc |= ph_buf_addf(o,
			  "\nbusiest processes (the task that issued each "
			  "request)\n  %-8s %-16s %9s %11s %12s\n",
			  "pid", "command", "requests", "bytes", "device ms");
	for (size_t i = 0; i < shown; i++) {
		const struct ph_io_proc *p = &v->procs[i];

		if (p->pid >= 0)
			snprintf(pid, sizeof(pid), "%d", (int)p->pid);
		else
			snprintf(pid, sizeof(pid), "-");
		human_bytes(b, sizeof(b), p->bytes);
		rc |= ph_buf_addf(
			o, "  %-8s %-16s %9" PRIu64 " %11s %12.3f%s\n", pid,
			p->comm[0] ? p->comm : "(issue unseen)", p->n, b,
			ms(p->device_ns),
			v->pid > 0 && p->pid == v->pid ? "  <- the app" : "");
	}
	if (v->nprocs > shown)
		rc |= ph_buf_addf(o, "  ... and %zu more\n", v->nprocs - shown);
	return rc;
}

static int text_moments(const struct ph_io_view *v, struct ph_buf *o)
{
	size_t n = 0, shown = 0;
	char b[32], w1[32], w2[32], other[64];
	int rc = 0;

	for (size_t k = 0; k < v->nmom; k++)
		n += ph_io_moment_listed(&v->mom[k]);
	if (!n)
		return ph_buf_addstr(o,
				     "\napp moments with block I/O in flight: "
				     "none\n");
	rc |= ph_buf_addf(o,
			  "\napp moments with block I/O in flight "
			  "(%zu)\n  %-10s %-44s %6s %11s %10s %9s %9s  %s\n",
			  n, "t", "what", "ms", "app (main)", "bytes",
			  "app max", "dev max", "busiest other");
	for (size_t k = 0; k < v->nmom && shown < TEXT_MOMENTS; k++) {
		const struct ph_io_moment *m = &v->mom[k];
		char what[64], am[24];

		if (!ph_io_moment_listed(m))
			continue;
		shown++;
		if (m->kind == PH_IO_QUERY)
			snprintf(what, sizeof(what), "query %s%s %.30s", m->id,
				 m->main ? " (main)" : "", m->what);
		else
			snprintf(what, sizeof(what), "%s %.32s",
				 ph_io_moment_name(m->kind), m->what);
		snprintf(am, sizeof(am), "%" PRIu64 " (%" PRIu64 ")", m->app_n,
			 m->main_n);
		human_bytes(b, sizeof(b), m->app_bytes);
		if (m->other_comm)
			snprintf(other, sizeof(other), "%.24s (%" PRIu64 ")",
				 m->other_comm[0] ? m->other_comm : "?",
				 m->other_n);
		else
			snprintf(other, sizeof(other), "-");
		rc |= ph_buf_addf(o,
				  "  %-10" PRId64 " %-44s %6" PRId64
				  " %11s %10s %9s %9s  %s\n",
				  m->t, what, m->to - m->from - 2, am, b,
				  ms3(w1, sizeof(w1), m->app_worst_ns),
				  ms3(w2, sizeof(w2), m->dev_worst_ns), other);
	}
	if (n > shown)
		rc |= ph_buf_addf(o, "  ... and %zu more (--json lists them)\n",
				  n - shown);
	return rc;
}

int ph_io_write_text(const struct ph_io_view *v, struct ph_buf *o)
{
	char b[32];
	int rc = 0;

	rc |= ph_buf_addf(o, "io view: %s",
			  v->ident.package[0] ? v->ident.package :
						"(unnamed app)");
	if (v->pid > 0)
		rc |= ph_buf_addf(o, " (pid %" PRId64 ")", v->pid);
	rc |= ph_buf_addf(o, "  ·  recording %s\n",
			  v->rec_dir ? v->rec_dir : "(fed)");
	rc |= ph_io_write_clock_text(v, o);
	human_bytes(b, sizeof(b), v->app_bytes);
	rc |= ph_buf_addf(o,
			  "  requests   %zu in the window: %" PRIu64
			  " by the app (%" PRIu64 " on its main thread, %s), ",
			  v->nreq, v->app_n, v->main_n, b);
	rc |= ph_io_write_others_text(v, o);
	rc |= ph_io_write_lost_text(v, o);
	rc |= ph_io_write_findings_text(v, o);
	rc |= text_devices(v, o);
	rc |= text_procs(v, o);
	rc |= text_moments(v, o);
	if (v->nnotes) {
		rc |= ph_buf_addstr(o, "\nnotes\n");
		for (size_t i = 0; i < v->nnotes; i++)
			rc |= ph_buf_addf(o, "  %s\n", v->notes[i]);
	}
	return rc ? PH_ENOMEM : 0;
}

/* --- JSON ----------------------------------------------------------------- */

static void kv_ms_or_null(struct ph_jw *jw, const char *k, int64_t ns)
{
	ph_jw_key(jw, k);
	if (ns < 0)
		ph_jw_null(jw);
	else
		ph_jw_double(jw, ms(ns));
}

static void json_moment(const struct ph_io_moment *m, struct ph_jw *jw)
{
	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "kind", ph_io_moment_name(m->kind));
	ph_jw_kv_int(jw, "t", m->t);
	ph_jw_kv_int(jw, "from", m->from);
	ph_jw_kv_int(jw, "to", m->to);
	if (m->id)
		ph_jw_kv_str(jw, "id", m->id);
	ph_jw_kv_str(jw, "what", m->what);
	ph_jw_kv_bool(jw, "mainThread", m->main);
	if (m->error)
		ph_jw_kv_bool(jw, "failed", true);
	ph_jw_kv_int(jw, "appRequests", (int64_t)m->app_n);
	ph_jw_kv_int(jw, "mainThreadRequests", (int64_t)m->main_n);
	ph_jw_kv_int(jw, "appBytes", (int64_t)m->app_bytes);
	kv_ms_or_null(jw, "appWorstMs", m->app_worst_ns);
	ph_jw_kv_int(jw, "deviceRequests", (int64_t)m->dev_n);
	kv_ms_or_null(jw, "deviceWorstMs", m->dev_worst_ns);
	/* listed for jank alone, it may have none of the app's requests */
	if (m->jank)
		ph_jw_kv_bool(jw, "jank", true);
	if (m->other_comm) {
		ph_jw_key(jw, "busiestOther");
		ph_jw_obj_begin(jw);
		ph_jw_kv_int(jw, "pid", m->other_pid);
		ph_jw_kv_str(jw, "comm", m->other_comm);
		ph_jw_kv_int(jw, "requests", (int64_t)m->other_n);
		ph_jw_obj_end(jw);
	}
	ph_jw_obj_end(jw);
}

/* The key, then n, or null when n is not known. */
static void kv_int_or_null(struct ph_jw *jw, const char *k, int64_t n,
			   bool known)
{
	ph_jw_key(jw, k);
	if (known)
		ph_jw_int(jw, n);
	else
		ph_jw_null(jw);
}

void ph_io_write_app(const struct ph_io_view *v, struct ph_jw *jw)
{
	ph_jw_key(jw, "app");
	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "packageName", v->ident.package);
	ph_jw_kv_str(jw, "processName", v->ident.process);
	kv_int_or_null(jw, "pid", v->pid, v->pid > 0);
	ph_jw_obj_end(jw);
}

void ph_io_write_window(const struct ph_io_view *v, struct ph_jw *jw)
{
	ph_jw_key(jw, "window");
	ph_jw_obj_begin(jw);
	kv_int_or_null(jw, "from", v->w.from, v->w.from != INT64_MIN);
	kv_int_or_null(jw, "to", v->w.to, v->w.to != INT64_MAX);
	ph_jw_obj_end(jw);
}

void ph_io_write_requests(const struct ph_io_view *v, struct ph_jw *jw)
{
	ph_jw_key(jw, "requests");
	ph_jw_obj_begin(jw);
	ph_jw_kv_int(jw, "total", (int64_t)v->nreq);
	ph_jw_kv_int(jw, "app", (int64_t)v->app_n);
	ph_jw_kv_int(jw, "mainThread", (int64_t)v->main_n);
	ph_jw_kv_int(jw, "appBytes", (int64_t)v->app_bytes);
	ph_jw_kv_int(jw, "mainThreadBytes", (int64_t)v->main_bytes);
	ph_jw_kv_int(jw, "others", (int64_t)v->others_n);
	ph_jw_kv_int(jw, "issueUnseen", (int64_t)v->unseen_n);
	ph_jw_kv_int(jw, "otherProcesses", (int64_t)v->other_procs);
	ph_jw_obj_end(jw);
}

void ph_io_write_devices(const struct ph_io_view *v, size_t max,
			 struct ph_jw *jw)
{
	char dev[24];

	ph_jw_key(jw, "devices");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < v->nops && i < max; i++) {
		const struct ph_io_dev_op *d = &v->ops[i];

		snprintf(dev, sizeof(dev), "%u:%u", d->dev >> 20,
			 d->dev & 0xfffff);
		ph_jw_obj_begin(jw);
		ph_jw_kv_str(jw, "device", dev);
		ph_jw_kv_str(jw, "operation", d->op);
		ph_jw_kv_int(jw, "requests", (int64_t)d->n);
		ph_jw_kv_int(jw, "bytes", (int64_t)d->bytes);
		kv_ms_or_null(jw, "p50Ms", d->p50_ns);
		kv_ms_or_null(jw, "p99Ms", d->p99_ns);
		kv_ms_or_null(jw, "maxMs", d->max_ns);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
}

void ph_io_write_processes(const struct ph_io_view *v, size_t max,
			   struct ph_jw *jw)
{
	ph_jw_key(jw, "processes");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < v->nprocs && i < max; i++) {
		const struct ph_io_proc *p = &v->procs[i];

		ph_jw_obj_begin(jw);
		kv_int_or_null(jw, "pid", p->pid, p->pid >= 0);
		ph_jw_kv_str(jw, "comm", p->comm);
		ph_jw_kv_int(jw, "requests", (int64_t)p->n);
		ph_jw_kv_int(jw, "bytes", (int64_t)p->bytes);
		ph_jw_kv_double(jw, "deviceMs", ms(p->device_ns));
		ph_jw_kv_bool(jw, "app", v->pid > 0 && p->pid == v->pid);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
}

size_t ph_io_write_moments(const struct ph_io_view *v, size_t max,
			   struct ph_jw *jw)
{
	size_t n = 0;

	ph_jw_key(jw, "moments");
	ph_jw_arr_begin(jw);
	for (size_t k = 0; k < v->nmom; k++) {
		if (!ph_io_moment_listed(&v->mom[k]))
			continue;
		if (n++ < max)
			json_moment(&v->mom[k], jw);
	}
	ph_jw_arr_end(jw);
	return n;
}

static void json_strs(struct ph_jw *jw, const char *k, const char *const *s,
		      size_t n)
{
	ph_jw_key(jw, k);
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < n; i++)
		ph_jw_str(jw, s[i]);
	ph_jw_arr_end(jw);
}

void ph_io_write_quiet(const struct ph_io_view *v, struct ph_jw *jw)
{
	json_strs(jw, "quiet", v->quiet, v->nquiet);
}

void ph_io_write_notes(const struct ph_io_view *v, struct ph_jw *jw)
{
	json_strs(jw, "notes", v->notes, v->nnotes);
}

/* Every member of the JSON answer but format, version and the findings'
 * (the capture holds those merged with its own). */
static void json_body(const struct ph_io_view *v, struct ph_jw *jw,
		      bool findings)
{
	char note[400];

	ph_io_write_app(v, jw);
	ph_jw_key(jw, "recording");
	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "dir", v->rec_dir);
	ph_jw_kv_str(jw, "mode", v->rec_mode);
	kv_int_or_null(jw, "totalLost", v->lost, v->lost >= 0);
	ph_jw_kv_int(jw, "rows", (int64_t)v->rows);
	ph_jw_kv_int(jw, "rowsOutsideWindow", (int64_t)v->rows_outside);
	ph_jw_kv_int(jw, "rowsWithoutTime", (int64_t)v->rows_no_time);
	ph_jw_obj_end(jw);
	ph_jw_key(jw, "clock");
	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "alignment", ph_io_align_name(v->align));
	ph_jw_kv_int(jw, "shiftNs", v->shift_ns);
	kv_int_or_null(jw, "offsetDiffNs", v->offset_diff_ns,
		       v->have_app_offset && v->have_rec_offset);
	ph_io_clock_note(v, note, sizeof(note));
	ph_jw_kv_str(jw, "note", note);
	ph_jw_obj_end(jw);
	ph_io_write_window(v, jw);
	ph_jw_kv_double(jw, "budgetMs", v->budget_ms);
	ph_jw_kv_str(jw, "budgetSource", v->budget_source);
	ph_io_write_requests(v, jw);
	ph_io_write_devices(v, SIZE_MAX, jw);
	ph_io_write_processes(v, PH_IO_MAX_PROCS, jw);
	if (findings) {
		ph_jw_key(jw, "findings");
		ph_jw_arr_begin(jw);
		for (size_t i = 0; i < v->nf; i++)
			ph_finding_write(&v->f[i], jw);
		ph_jw_arr_end(jw);
	}
	ph_io_write_quiet(v, jw);
	ph_io_write_moments(v, PH_IO_MAX_MOMENTS, jw);
	ph_io_write_notes(v, jw);
}

void ph_io_write_json(const struct ph_io_view *v, struct ph_jw *jw)
{
	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "format", "porthole-io");
	ph_jw_kv_int(jw, "version", 1);
	json_body(v, jw, true);
	ph_jw_obj_end(jw);
}

void ph_io_write_span(const struct ph_io_req *r, struct ph_jw *jw)
{
	char dev[24];

	snprintf(dev, sizeof(dev), "%u:%u", r->dev >> 20, r->dev & 0xfffff);
	ph_jw_obj_begin(jw);
	ph_jw_kv_double(jw, "from", ms(r->issue_ns));
	ph_jw_kv_double(jw, "to", ms(r->done_ns));
	kv_ms_or_null(jw, "latencyMs", r->latency_ns);
	ph_jw_kv_str(jw, "device", dev);
	ph_jw_kv_str(jw, "rwbs", r->rwbs);
	ph_jw_kv_str(jw, "op", r->op);
	ph_jw_kv_int(jw, "bytes", (int64_t)r->bytes);
	if (r->pid >= 0)
		ph_jw_kv_int(jw, "pid", r->pid);
	if (r->tid >= 0)
		ph_jw_kv_int(jw, "tid", r->tid);
	ph_jw_kv_str(jw, "comm", r->comm);
	if (r->app)
		ph_jw_kv_bool(jw, "app", true);
	if (r->main)
		ph_jw_kv_bool(jw, "mainThread", true);
	ph_jw_obj_end(jw);
}

void ph_io_write_capture(const struct ph_io_view *v, size_t max_spans,
			 struct ph_jw *jw)
{
	size_t app = 0, kept = 0, others;

	/* The app's requests first, then others' in issue order. */
	for (size_t i = 0; i < v->nreq; i++)
		app += v->req[i].app;
	others = max_spans > app ? max_spans - app : 0;
	ph_jw_obj_begin(jw);
	json_body(v, jw, false);
	ph_jw_key(jw, "spans");
	ph_jw_arr_begin(jw);
	for (size_t i = 0, o = 0; i < v->nreq; i++) {
		const struct ph_io_req *r = &v->req[i];

		if (r->app ? kept - o >= max_spans : o >= others)
			continue;
		o += !r->app;
		kept++;
		ph_io_write_span(r, jw);
	}
	ph_jw_arr_end(jw);
	ph_jw_kv_int(jw, "spansOmitted", (int64_t)(v->nreq - kept));
	ph_jw_obj_end(jw);
}
