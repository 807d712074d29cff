/* SPDX-License-Identifier: Apache-2.0 */
/*
 * findings_answer.c: a findings answer as JSON, its findings classified
 * against the previous call's (new, ongoing, resolved), and the banner
 * line that says what the answer covers.
 */
#include "ph_common.h"
#include "findings.h"

void ph_finding_write(const struct ph_finding *f, struct ph_jw *jw)
{
	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "id", f->id);
	ph_jw_kv_str(jw, "severity", ph_severity_name(f->severity));
	ph_jw_kv_str(jw, "confidence",
		     f->confidence == PH_CONF_CORRELATED ? "correlated" :
							   "observed");
	ph_jw_kv_str(jw, "source", f->source);
	ph_jw_kv_str(jw, "title", f->title);
	ph_jw_key(jw, "detail");
	ph_jw_arr_begin(jw);
	for (int i = 0; i < f->ndetail; i++)
		ph_jw_str(jw, f->detail[i]);
	ph_jw_arr_end(jw);
	if (f->spanning) {
		ph_jw_kv_bool(jw, "spanning", true);
	} else {
		ph_jw_key(jw, "window");
		ph_jw_obj_begin(jw);
		ph_jw_kv_int(jw, "from", f->from);
		ph_jw_kv_int(jw, "to", f->to);
		ph_jw_obj_end(jw);
	}
	ph_jw_kv_int(jw, "count", f->count);
	ph_jw_key(jw, "evidence");
	ph_jw_raw(jw, f->evidence, strlen(f->evidence));
	if (f->where) {
		ph_jw_key(jw, "where");
		ph_jw_raw(jw, f->where, strlen(f->where));
	}
	if (ph_status_name(f->status))
		ph_jw_kv_str(jw, "status", ph_status_name(f->status));
	if (f->status == PH_STATUS_ONGOING)
		ph_jw_kv_int(jw, "delta", f->delta);
	ph_jw_kv_str(jw, "key", f->key);
	ph_jw_obj_end(jw);
}

void ph_analysis_write_findings(const struct ph_analysis *a, struct ph_jw *jw)
{
	ph_coverage_write(&a->cov, a->window, jw);
	ph_jw_key(jw, "findings");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < a->nf; i++)
		ph_finding_write(&a->f[i], jw);
	ph_jw_arr_end(jw);
	ph_jw_key(jw, "quiet");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < a->nquiet; i++)
		ph_jw_str(jw, a->quiet[i]);
	ph_jw_arr_end(jw);
	ph_jw_key(jw, "notSeen");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < a->nnot_seen; i++)
		ph_jw_str(jw, a->not_seen[i]);
	ph_jw_arr_end(jw);
	if (a->nexits || a->device_events || a->memory_events || a->gc_events) {
		ph_jw_key(jw, "alsoInWindow");
		ph_jw_obj_begin(jw);
		if (a->nexits) {
			ph_jw_key(jw, "exits");
			ph_jw_arr_begin(jw);
			for (size_t i = 0; i < a->nexits; i++) {
				ph_jw_obj_begin(jw);
				ph_jw_kv_int(jw, "t", a->exits[i].t);
				ph_jw_kv_str(jw, "reason", a->exits[i].reason);
				if (a->exits[i].description)
					ph_jw_kv_str(jw, "description",
						     a->exits[i].description);
				ph_jw_obj_end(jw);
			}
			ph_jw_arr_end(jw);
		}
		if (a->device_events)
			ph_jw_kv_int(jw, "device", (int64_t)a->device_events);
		if (a->memory_events)
			ph_jw_kv_int(jw, "memory", (int64_t)a->memory_events);
		if (a->gc_events)
			ph_jw_kv_int(jw, "gc", (int64_t)a->gc_events);
		ph_jw_obj_end(jw);
	}
	if (a->nnotes) {
		ph_jw_key(jw, "notes");
		ph_jw_arr_begin(jw);
		for (size_t i = 0; i < a->nnotes; i++)
			ph_jw_str(jw, a->notes[i]);
		ph_jw_arr_end(jw);
	}
	if (a->status_note)
		ph_jw_kv_str(jw, "statusNote", a->status_note);
}

static bool comparable(struct ph_window a, struct ph_window b)
{
	int64_t lo, hi, shorter;

	if (a.from == INT64_MIN || b.from == INT64_MIN || a.to == INT64_MAX ||
	    b.to == INT64_MAX)
		return false;
	if (b.from >= a.to && b.from - a.to <= 1000)
		return true; /* chained: this call starts where that ended */
	lo = a.from > b.from ? a.from : b.from;
	hi = a.to < b.to ? a.to : b.to;
	shorter = (a.to - a.from) < (b.to - b.from) ? a.to - a.from :
						      b.to - b.from;
	return hi > lo && (hi - lo) * 2 >= shorter;
}

void ph_analysis_classify(struct ph_analysis *a, const struct ph_prev_call *p)
{
	size_t i, j, n = a->nf;

	if (!p || !p->have) {
		a->status_note = "no previous call on this session";
		return;
	}
	if (!comparable(p->w, a->window)) {
		a->status_note = "the previous call's window neither chains to "
				 "nor overlaps this one by half; status not "
				 "classified";
		return;
	}
	for (i = 0; i < n; i++) {
		struct ph_finding *f = &a->f[i];

		f->status = PH_STATUS_NEW;
		for (j = 0; j < p->n; j++) {
			if (!strcmp(p->keys[j], f->key)) {
				f->status = PH_STATUS_ONGOING;
				f->delta = f->count - p->counts[j];
				break;
			}
		}
	}
	for (j = 0; j < p->n; j++) {
		bool found = false;
		struct ph_finding *f;

		for (i = 0; i < n && !found; i++)
			found = !strcmp(p->keys[j], a->f[i].key);
		if (found)
			continue;
		f = ph_analysis_add(a);
		if (!f)
			return;
		*f = (struct ph_finding){
			.id = ph_arena_strndup(&a->arena, p->ids[j],
					       strlen(p->ids[j])),
			.severity = p->severities[j],
			.source = "porthole",
			.title = ph_arena_strndup(&a->arena, p->titles[j],
						  strlen(p->titles[j])),
			.from = a->window.from,
			.to = a->window.to,
			.count = 0,
			.evidence = "{}",
			.key = ph_arena_strndup(&a->arena, p->keys[j],
						strlen(p->keys[j])),
			.status = PH_STATUS_RESOLVED,
			.delta = -p->counts[j],
		};
		if (!f->id || !f->title || !f->key)
			a->nf--;
	}
}

void ph_analysis_banner(const struct ph_analysis *a,
			bool (*reported)(void *ctx, const char *key), void *ctx,
			char *out, size_t size)
{
	const char *kinds[32];
	size_t nk = 0, nerr = 0, len;

	out[0] = '\0';
	for (size_t i = 0; i < a->nf; i++) {
		const struct ph_finding *f = &a->f[i];
		bool dup = false;

		if (f->severity != PH_SEV_ERROR ||
		    f->status == PH_STATUS_RESOLVED ||
		    (reported && reported(ctx, f->key)))
			continue;
		nerr++;
		for (size_t k = 0; k < nk; k++)
			dup |= !strcmp(kinds[k], f->id);
		if (!dup && nk < PH_ARRAY_SIZE(kinds))
			kinds[nk++] = f->id;
	}
	if (!nerr || size < 64)
		return;
	snprintf(out, size, "%zu unreported error%s: ", nerr,
		 nerr == 1 ? "" : "s");
	len = strlen(out);
	for (size_t k = 0; k < nk; k++) {
		char more[48];
		size_t need = strlen(kinds[k]) + 2;

		snprintf(more, sizeof(more), " …and %zu more kind%s", nk - k,
			 nk - k == 1 ? "" : "s");
		/* Leave room for the "…and N more kinds" tail. */
		if (len + need + (k + 1 < nk ? strlen(more) : 0) > 240 ||
		    len + need + strlen(more) >= size) {
			snprintf(out + len, size - len, "%s", more + (k == 0));
			return;
		}
		snprintf(out + len, size - len, "%s%s", k ? ", " : "",
			 kinds[k]);
		len = strlen(out);
	}
}
