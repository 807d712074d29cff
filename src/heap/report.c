/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.c: what `porthole heap leaks|top|path|stats` print, as text for a
 * person and as JSON (--json) for the host, the MCP server and scripts.
 * Field names of a leak follow the `leak` event of docs/protocol.md §4.3.
 */
#include "ph_common.h"
#include "heap.h"
#include "ph_json.h"
#include "ph_log.h"

static const char *const leak_status_names[] = { "UNKNOWN", "NO", "YES" };

/* Opens the dump and the map; reports why not on stderr. */
static int open_dump(const struct ph_heap_cmd_opts *o, struct ph_heap *h,
		     struct ph_heap_map **map)
{
	char eb[300];
	int rc;

	*map = NULL;
	ph_heap_init(h);
	rc = ph_heap_open(h, o->dump);
	if (rc == PH_ENOENT) {
		ph_log(PH_LOG_ERROR, "%s: no such file", o->dump);
		return rc;
	}
	if (rc) {
		ph_log(PH_LOG_ERROR, "%s: %s", o->dump,
		       h->err.code ? ph_err_format(&h->err, eb, sizeof(eb)) :
				     ph_strerror(rc));
		return rc;
	}
	if (h->partial)
		ph_log(PH_LOG_WARN, "%s: read partially: %s", o->dump,
		       ph_err_format(&h->err, eb, sizeof(eb)));
	if (o->map) {
		rc = ph_heap_map_load(map, o->map);
		if (rc) {
			ph_log(PH_LOG_ERROR, "%s: cannot read the map (%s)",
			       o->map, ph_strerror(rc));
			return rc;
		}
		ph_heap_set_map(h, *map);
	}
	return 0;
}

static void close_dump(struct ph_heap *h, struct ph_heap_map *map)
{
	ph_heap_release(h);
	ph_heap_map_free(map);
}

static int emit(struct ph_buf *b, FILE *out)
{
	if (b->len && fwrite(b->buf, 1, b->len, out) != b->len)
		return 2;
	return 0;
}

static void jw_partial(struct ph_jw *w, const struct ph_heap *h)
{
	char eb[300];

	ph_jw_kv_bool(w, "partial", h->partial);
	if (h->partial)
		ph_jw_kv_str(w, "error",
			     ph_err_format(&h->err, eb, sizeof(eb)));
}

static void jw_id(struct ph_jw *w, const char *k, uint64_t id)
{
	char b[24];

	snprintf(b, sizeof(b), "0x%" PRIx64, id);
	ph_jw_kv_str(w, k, b);
}

/* LeakCanary's short description: the first suspect reference. */
static const char *short_desc(struct ph_heap *h, const struct ph_leak_trace *t,
			      char *buf, size_t size)
{
	if (t->first_suspect != PH_HEAP_NONE) {
		const char *cn =
			ph_heap_class_name(h, h->cls[t->first_suspect]);
		const char *dot = strrchr(cn, '.');

		snprintf(buf, size, "%s.%s", dot ? dot + 1 : cn,
			 t->first_suspect_ref);
		return buf;
	}
	return ph_heap_class_name(h, h->cls[t->nodes[t->nnodes - 1].obj]);
}

static void jw_trace_nodes(struct ph_jw *w, struct ph_heap *h,
			   const struct ph_leak_trace *t)
{
	static const char *const rk[] = { "static", "instance", "array",
					  "local" };

	ph_jw_key(w, "path");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < t->nnodes; i++) {
		const struct ph_leak_node *n = &t->nodes[i];

		ph_jw_obj_begin(w);
		jw_id(w, "id", ph_heap_id(h, n->obj));
		ph_jw_kv_str(w, "class", ph_heap_class_name(h, h->cls[n->obj]));
		ph_jw_kv_str(w, "type",
			     ph_heap_kind_name(ph_heap_kind_of(h, n->obj)));
		ph_jw_kv_str(w, "leaking", leak_status_names[n->status]);
		ph_jw_kv_str(w, "reason", n->reason);
		ph_jw_key(w, "labels");
		ph_jw_arr_begin(w);
		for (size_t k = 0; k < n->nlabels; k++)
			ph_jw_str(w, n->labels[k]);
		ph_jw_arr_end(w);
		if (i + 1 < t->nnodes) {
			ph_jw_key(w, "reference");
			ph_jw_obj_begin(w);
			ph_jw_kv_str(w, "kind", rk[n->ref_kind & 3]);
			ph_jw_kv_str(w, "owner", n->ref_owner);
			ph_jw_kv_str(w, "name", n->ref_name);
			ph_jw_kv_bool(w, "suspect", n->suspect);
			ph_jw_obj_end(w);
		}
		if (h->retained) {
			ph_jw_kv_int(w, "retainedHeapByteSize",
				     (int64_t)h->retained[n->obj]);
			ph_jw_kv_int(w, "retainedObjectCount",
				     h->retained_count[n->obj]);
		}
		ph_jw_obj_end(w);
	}
	ph_jw_arr_end(w);
}

/* A long path's elided middle: "path" holds path[elidedAfter - 1], then
 * elidedReferences nodes are left out, then path[elidedAfter]. */
static void jw_elided(struct ph_jw *w, const struct ph_leak_trace *t)
{
	ph_jw_kv_int(w, "pathLength", (int64_t)t->length);
	if (!t->elided)
		return;
	ph_jw_kv_int(w, "elidedReferences", (int64_t)t->elided);
	ph_jw_kv_int(w, "elidedAfter", (int64_t)t->elided_at);
}

/* Where a `leak` event's traceText is cut (docs/protocol.md §4.3). */
#define TRACE_CAP_CHARS 6000

/* The length of s's first `chars` UTF-8 characters (all of it if less). */
static size_t utf8_prefix(const char *s, size_t n, size_t chars)
{
	size_t i = 0;

	for (; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && chars-- == 0)
			break;
	return i;
}

/*
 * A leak group's fields, the `leak` event's data (docs/protocol.md §4.3,
 * no more: an event carries only what the protocol lists); `heap leaks
 * --json` (event false) adds the library leak's pattern.  trace is the
 * rendered trace; a cap > 0 cuts it there, marked with "...".
 */
static void jw_leak_fields(struct ph_jw *w, struct ph_heap *h,
			   const struct ph_leak_trace *t, const char *hprof,
			   const struct ph_buf *trace, size_t cap, bool event)
{
	char sd[512];
	size_t n = cap ? utf8_prefix(trace->buf, trace->len, cap) : trace->len;

	ph_jw_kv_str(w, "kind", t->library ? "library" : "application");
	ph_jw_kv_str(w, "signature", t->signature);
	ph_jw_kv_str(w, "shortDescription", short_desc(h, t, sd, sizeof(sd)));
	ph_jw_kv_str(w, "leakingClass",
		     ph_heap_class_name(h,
					h->cls[t->nodes[t->nnodes - 1].obj]));
	ph_jw_kv_int(w, "retainedHeapByteSize", (int64_t)t->retained);
	ph_jw_kv_int(w, "retainedObjectCount", t->retained_count);
	ph_jw_kv_int(w, "leakCount", t->group_count);
	ph_jw_kv_str(w, "gcRoot", ph_heap_root_name(t->root_kind));
	ph_jw_kv_str(w, "source", "heap");
	if (hprof)
		ph_jw_kv_str(w, "hprof", hprof);
	if (t->library && !event)
		ph_jw_kv_str(w, "libraryLeakPattern", t->library_desc);
	ph_jw_key(w, "traceText");
	if (n < trace->len) {
		struct ph_buf cut = PH_BUF_INIT(PH_BUF_NO_CAP);

		if (ph_buf_add(&cut, trace->buf, n) ||
		    ph_buf_addstr(&cut, "..."))
			ph_jw_strn(w, trace->buf, n); /* no memory: uncut */
		else
			ph_jw_strn(w, cut.buf, cut.len);
		ph_buf_release(&cut);
	} else {
		ph_jw_strn(w, trace->buf, trace->len);
	}
}

int ph_heap_leak_events(struct ph_heap *h, const struct ph_leak_result *res,
			const char *hprof, int64_t t, struct ph_buf *out)
{
	struct ph_buf tr = PH_BUF_INIT(PH_BUF_NO_CAP);
	int rc = 0;

	for (size_t i = 0; !rc && i < res->ntraces; i++) {
		const struct ph_leak_trace *lt = &res->traces[i];
		struct ph_jw w;

		ph_buf_reset(&tr);
		rc = ph_leak_trace_render(h, lt, true, &tr);
		if (rc)
			break;
		ph_jw_init(&w, out);
		ph_jw_obj_begin(&w);
		ph_jw_kv_str(&w, "event", "leak");
		ph_jw_kv_int(&w, "t", t);
		ph_jw_kv_int(&w, "seq", -1); /* host-made: never a device seq */
		ph_jw_key(&w, "data");
		ph_jw_obj_begin(&w);
		jw_leak_fields(&w, h, lt, hprof, &tr, TRACE_CAP_CHARS, true);
		ph_jw_obj_end(&w);
		ph_jw_obj_end(&w);
		rc = ph_jw_finish(&w);
		if (!rc)
			rc = ph_buf_addch(out, '\n');
	}
	ph_buf_release(&tr);
	return rc;
}

static const char rule[] = "====================================\n";

int ph_heap_cmd_leaks(const struct ph_heap_cmd_opts *o, FILE *out)
{
	struct ph_heap h;
	struct ph_heap_map *map;
	struct ph_leak_result res;
	struct ph_leak_opts lo = { .watch_class = o->watch_class,
				   .with_retained = true };
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf tr = PH_BUF_INIT(PH_BUF_NO_CAP);
	int rc, status = 2;

	if (open_dump(o, &h, &map))
		goto out;
	rc = ph_heap_leaks(&h, &lo, &res);
	if (rc == PH_ENOENT) {
		ph_log(PH_LOG_ERROR, "--class %s: no such class in the dump",
		       o->watch_class);
		goto out;
	}
	if (rc) {
		ph_log(PH_LOG_ERROR, "leak analysis failed: %s",
		       ph_strerror(rc));
		goto out;
	}
	if (o->events) {
		int64_t t = o->uptime_of ? o->uptime_of(o->uptime_ctx,
							h.timestamp_ms) :
					   0;

		if (ph_heap_leak_events(&h, &res, o->dump, t, o->events)) {
			ph_log(PH_LOG_ERROR, "out of memory");
			goto out;
		}
	}
	if (o->json) {
		struct ph_jw w;

		ph_jw_init(&w, &b);
		ph_jw_obj_begin(&w);
		ph_jw_kv_str(&w, "hprof", o->dump);
		ph_jw_kv_int(&w, "applicationLeaks", (int64_t)res.napp);
		ph_jw_kv_int(&w, "libraryLeaks", (int64_t)res.nlib);
		ph_jw_kv_int(&w, "leakingObjects", (int64_t)res.nleaking);
		ph_jw_kv_int(&w, "unreachableLeakingObjects",
			     (int64_t)res.unreachable_leaking);
		jw_partial(&w, &h);
		ph_jw_key(&w, "leaks");
		ph_jw_arr_begin(&w);
		for (size_t i = 0; i < res.ntraces; i++) {
			const struct ph_leak_trace *t = &res.traces[i];

			ph_buf_reset(&tr);
			if (ph_leak_trace_render(&h, t, true, &tr))
				goto out;
			ph_jw_obj_begin(&w);
			jw_leak_fields(&w, &h, t, NULL, &tr, 0, false);
			jw_trace_nodes(&w, &h, t);
			jw_elided(&w, t);
			ph_jw_obj_end(&w);
		}
		ph_jw_arr_end(&w);
		ph_jw_obj_end(&w);
		if (ph_jw_finish(&w) || ph_buf_addch(&b, '\n'))
			goto out;
	} else {
		for (int lib = 0; lib <= 1; lib++) {
			size_t count = lib ? res.nlib : res.napp;

			if (ph_buf_addf(&b, "%s%s%s%zu %s LEAKS\n\n",
					lib ? "" : rule,
					lib ? "" : "HEAP ANALYSIS RESULT\n",
					lib ? "" : rule, count,
					lib ? "LIBRARY" : "APPLICATION"))
				goto out;
			if (count &&
			    ph_buf_addstr(
				    &b, lib ? "A Library Leak is a leak caused "
					      "by a known bug in 3rd party "
					      "code that you do not have "
					      "control over.\n\n" :
					      "References underlined with "
					      "\"~~~\" are likely causes.\n"
					      "Learn more at "
					      "https://squ.re/leaks.\n\n"))
				goto out;
			for (size_t i = 0; i < res.ntraces; i++) {
				const struct ph_leak_trace *t = &res.traces[i];

				if (t->library != (lib == 1))
					continue;
				if (t->library &&
				    ph_buf_addf(&b, "Leak pattern: %s\n",
						t->library_desc))
					goto out;
				if (ph_buf_addf(&b,
						"%" PRIu64 " bytes retained by "
						"leaking objects\n",
						t->retained))
					goto out;
				if (t->group_count > 1 &&
				    ph_buf_addf(&b,
						"Displaying only 1 leak trace "
						"out of %u with the same "
						"signature\n",
						t->group_count))
					goto out;
				if (ph_buf_addf(&b, "Signature: %s\n",
						t->signature) ||
				    ph_leak_trace_render(&h, t, true, &b) ||
				    ph_buf_addstr(&b, "\n\n"))
					goto out;
			}
			if (ph_buf_addstr(&b, rule))
				goto out;
		}
		if (res.unreachable_leaking &&
		    ph_buf_addf(&b,
				"%" PRIu64 " leaking objects have no strong "
				"path from a GC root (they will be "
				"collected)\n",
				res.unreachable_leaking))
			goto out;
		if (h.partial) {
			char eb[300];

			if (ph_buf_addf(&b,
					"PARTIAL: the dump was read only up to "
					"%s\n",
					ph_err_format(&h.err, eb, sizeof(eb))))
				goto out;
		}
	}
	status = emit(&b, out);
	/* a partial dump was not all seen: never an all-clear, and told
	 * apart from "the app leaks" */
	if (!status && h.partial)
		status = 3;
	else if (!status && res.napp)
		status = 1;
out:
	ph_buf_release(&b);
	ph_buf_release(&tr);
	close_dump(&h, map);
	return status;
}

/* ---- top --------------------------------------------------------------- */

/* What top sorts by: a context, as several threads may ask. */
struct top_sort {
	const struct ph_heap *h;
	int by; /* 0 retained, 1 shallow, 2 count */
};

static int cmp_class_idx(const void *a, const void *b, void *arg)
{
	const struct top_sort *k = arg;
	const struct ph_heap_class *x = &k->h->classes[*(const uint32_t *)a];
	const struct ph_heap_class *y = &k->h->classes[*(const uint32_t *)b];
	uint64_t vx = k->by == 0 ? x->retained :
		      k->by == 1 ? x->shallow :
				   x->count;
	uint64_t vy = k->by == 0 ? y->retained :
		      k->by == 1 ? y->shallow :
				   y->count;

	if (vx != vy)
		return vx > vy ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_obj_retained(const void *a, const void *b, void *arg)
{
	const struct top_sort *k = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t vx = k->h->retained[x], vy = k->h->retained[y];

	if (vx != vy)
		return vx > vy ? -1 : 1;
	return x < y ? -1 : x > y;
}

int ph_heap_cmd_top(const struct ph_heap_cmd_opts *o, FILE *out)
{
	struct ph_heap h;
	struct ph_heap_map *map;
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	uint32_t *idx = NULL, *objs = NULL;
	size_t limit = o->limit > 0 ? (size_t)o->limit : 20, nobj = 0;
	struct top_sort k = { 0 };
	int status = 2;

	if (open_dump(o, &h, &map))
		goto out;
	if (ph_heap_graph(&h) || ph_heap_dominators(&h)) {
		ph_log(PH_LOG_ERROR, "out of memory");
		goto out;
	}
	k.h = &h;
	k.by = !o->by || !strcmp(o->by, "retained") ? 0 :
	       !strcmp(o->by, "shallow")	    ? 1 :
						      2;
	idx = malloc((h.nclasses + 1) * 4);
	/* biggest retainers: keep the top `limit` with a partial sort */
	objs = malloc((limit + 1) * 4);
	if (!idx || !objs)
		goto out;
	for (uint32_t i = 0; i < h.nclasses; i++)
		idx[i] = i;
	qsort_r(idx, h.nclasses, 4, cmp_class_idx, &k);
	for (uint32_t x = 0; x < h.nobj; x++) {
		size_t at;

		if (!h.retained_count[x])
			continue;
		if (nobj == limit &&
		    h.retained[objs[nobj - 1]] >= h.retained[x])
			continue;
		at = nobj < limit ? nobj++ : limit - 1;
		objs[at] = x;
		while (at && h.retained[objs[at - 1]] < h.retained[objs[at]]) {
			uint32_t t = objs[at];

			objs[at] = objs[at - 1];
			objs[at - 1] = t;
			at--;
		}
	}
	qsort_r(objs, nobj, 4, cmp_obj_retained, &k);
	if (o->json) {
		struct ph_jw w;
		size_t shown = 0;

		ph_jw_init(&w, &b);
		ph_jw_obj_begin(&w);
		ph_jw_kv_str(&w, "by",
			     k.by == 0 ? "retained" :
			     k.by == 1 ? "shallow" :
					 "count");
		jw_partial(&w, &h);
		ph_jw_key(&w, "classes");
		ph_jw_arr_begin(&w);
		for (uint32_t i = 0; i < h.nclasses && shown < limit; i++) {
			const struct ph_heap_class *c = &h.classes[idx[i]];

			if (!c->count)
				continue;
			shown++;
			ph_jw_obj_begin(&w);
			ph_jw_kv_str(&w, "name", c->name);
			ph_jw_kv_int(&w, "count", (int64_t)c->count);
			ph_jw_kv_int(&w, "shallow", (int64_t)c->shallow);
			ph_jw_kv_int(&w, "retained", (int64_t)c->retained);
			ph_jw_obj_end(&w);
		}
		ph_jw_arr_end(&w);
		ph_jw_key(&w, "retainers");
		ph_jw_arr_begin(&w);
		for (size_t i = 0; i < nobj; i++) {
			uint32_t x = objs[i];

			ph_jw_obj_begin(&w);
			jw_id(&w, "id", ph_heap_id(&h, x));
			ph_jw_kv_str(&w, "class",
				     ph_heap_class_name(&h, h.cls[x]));
			ph_jw_kv_str(&w, "type",
				     ph_heap_kind_name(ph_heap_kind_of(&h, x)));
			ph_jw_kv_int(&w, "shallow", h.shallow[x]);
			ph_jw_kv_int(&w, "retained", (int64_t)h.retained[x]);
			ph_jw_kv_int(&w, "retainedCount", h.retained_count[x]);
			ph_jw_obj_end(&w);
		}
		ph_jw_arr_end(&w);
		ph_jw_obj_end(&w);
		if (ph_jw_finish(&w) || ph_buf_addch(&b, '\n'))
			goto out;
	} else {
		size_t shown = 0;

		if (ph_buf_addf(&b, "%10s %14s %14s  %s\n", "count", "shallow",
				"retained", "class"))
			goto out;
		for (uint32_t i = 0; i < h.nclasses && shown < limit; i++) {
			const struct ph_heap_class *c = &h.classes[idx[i]];

			if (!c->count)
				continue;
			shown++;
			if (ph_buf_addf(&b,
					"%10" PRIu64 " %14" PRIu64 " %14" PRIu64
					"  %s\n",
					c->count, c->shallow, c->retained,
					c->name))
				goto out;
		}
		if (ph_buf_addf(&b, "\nbiggest retainers\n%14s %10s  %s\n",
				"retained", "objects", "object"))
			goto out;
		for (size_t i = 0; i < nobj; i++) {
			uint32_t x = objs[i];

			if (ph_buf_addf(
				    &b,
				    "%14" PRIu64 " %10u  %s %s @ 0x%" PRIx64
				    "\n",
				    h.retained[x], h.retained_count[x],
				    ph_heap_class_name(&h, h.cls[x]),
				    ph_heap_kind_name(ph_heap_kind_of(&h, x)),
				    ph_heap_id(&h, x)))
				goto out;
		}
	}
	status = emit(&b, out);
out:
	free(idx);
	free(objs);
	ph_buf_release(&b);
	close_dump(&h, map);
	return status;
}

/* ---- path ---------------------------------------------------------------- */

int ph_heap_cmd_path(const struct ph_heap_cmd_opts *o, FILE *out)
{
	struct ph_heap h;
	struct ph_heap_map *map;
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_leak_trace t;
	uint32_t obj;
	int rc, status = 2;

	if (open_dump(o, &h, &map))
		goto out;
	obj = ph_heap_find(&h, o->object_id);
	if (obj == PH_HEAP_NONE) {
		ph_log(PH_LOG_ERROR, "no object 0x%" PRIx64 " in %s",
		       o->object_id, o->dump);
		goto out;
	}
	if (ph_heap_graph(&h) || ph_heap_dominators(&h)) {
		ph_log(PH_LOG_ERROR, "out of memory");
		goto out;
	}
	rc = ph_heap_path_trace(&h, obj, &t);
	if (rc == PH_ENOENT) {
		status = 1;
		if (o->json)
			rc = ph_buf_addf(
				&b,
				"{\"id\":\"0x%" PRIx64
				"\",\"reachable\":false,\"path\":[]}\n",
				o->object_id);
		else
			rc = ph_buf_addf(&b,
					 "0x%" PRIx64 " is not strongly "
					 "reachable from any GC root\n",
					 o->object_id);
		if (!rc && emit(&b, out))
			status = 2;
		goto out;
	}
	if (rc)
		goto out;
	if (o->json) {
		struct ph_jw w;
		struct ph_buf tr = PH_BUF_INIT(PH_BUF_NO_CAP);

		if (ph_leak_trace_render(&h, &t, true, &tr)) {
			ph_buf_release(&tr);
			goto out;
		}
		ph_jw_init(&w, &b);
		ph_jw_obj_begin(&w);
		jw_id(&w, "id", o->object_id);
		ph_jw_kv_bool(&w, "reachable", true);
		ph_jw_kv_str(&w, "gcRoot", ph_heap_root_name(t.root_kind));
		jw_partial(&w, &h);
		ph_jw_key(&w, "traceText");
		ph_jw_strn(&w, tr.buf, tr.len);
		jw_trace_nodes(&w, &h, &t);
		jw_elided(&w, &t);
		ph_jw_obj_end(&w);
		ph_buf_release(&tr);
		if (ph_jw_finish(&w) || ph_buf_addch(&b, '\n'))
			goto out;
	} else if (ph_leak_trace_render(&h, &t, true, &b) ||
		   ph_buf_addch(&b, '\n')) {
		goto out;
	}
	status = emit(&b, out);
out:
	ph_buf_release(&b);
	close_dump(&h, map);
	return status;
}

/* ---- stats -----------------------------------------------------------------
 */

static const char *record_name(unsigned tag)
{
	switch (tag) {
	case 0x01: return "STRING";
	case 0x02: return "LOAD_CLASS";
	case 0x03: return "UNLOAD_CLASS";
	case 0x04: return "STACK_FRAME";
	case 0x05: return "STACK_TRACE";
	case 0x06: return "ALLOC_SITES";
	case 0x07: return "HEAP_SUMMARY";
	case 0x0A: return "START_THREAD";
	case 0x0B: return "END_THREAD";
	case 0x0C: return "HEAP_DUMP";
	case 0x0D: return "CPU_SAMPLES";
	case 0x0E: return "CONTROL_SETTINGS";
	case 0x1C: return "HEAP_DUMP_SEGMENT";
	case 0x2C: return "HEAP_DUMP_END";
	}
	return NULL;
}

static const char *sub_name(unsigned tag)
{
	switch (tag) {
	case 0x20: return "CLASS_DUMP";
	case 0x21: return "INSTANCE_DUMP";
	case 0x22: return "OBJECT_ARRAY_DUMP";
	case 0x23: return "PRIMITIVE_ARRAY_DUMP";
	case 0xC3: return "PRIMITIVE_ARRAY_NODATA";
	case 0xFE: return "HEAP_DUMP_INFO";
	}
	return NULL;
}

int ph_heap_cmd_stats(const struct ph_heap_cmd_opts *o, FILE *out)
{
	struct ph_heap h;
	struct ph_heap_map *map;
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	uint64_t roots[256] = { 0 }, kinds[4] = { 0 };
	char name[32];
	int status = 2;

	if (open_dump(o, &h, &map))
		goto out;
	if (ph_heap_graph(&h) || ph_heap_dominators(&h)) {
		ph_log(PH_LOG_ERROR, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < h.nroots; i++)
		roots[h.roots[i].kind]++;
	for (uint32_t i = 0; i < h.nobj; i++)
		kinds[ph_heap_kind_of(&h, i)]++;
	size_t index_bytes = (size_t)h.nobj * (h.wide ? 16 : 12);
	if (o->json) {
		struct ph_jw w;

		ph_jw_init(&w, &b);
		ph_jw_obj_begin(&w);
		ph_jw_kv_str(&w, "hprof", o->dump);
		ph_jw_kv_str(&w, "format", h.version);
		ph_jw_kv_int(&w, "idSize", h.idsz);
		ph_jw_kv_int(&w, "bytes", (int64_t)h.size);
		ph_jw_kv_bool(&w, "android", h.android);
		jw_partial(&w, &h);
		ph_jw_key(&w, "records");
		ph_jw_obj_begin(&w);
		for (unsigned t = 0; t < 256; t++) {
			const char *n = record_name(t);

			if (!h.rec_count[t])
				continue;
			if (!n) {
				snprintf(name, sizeof(name), "0x%02X", t);
				n = name;
			}
			ph_jw_kv_int(&w, n, (int64_t)h.rec_count[t]);
		}
		ph_jw_obj_end(&w);
		ph_jw_key(&w, "subRecords");
		ph_jw_obj_begin(&w);
		for (unsigned t = 0; t < 256; t++) {
			const char *n = sub_name(t);

			if (!h.sub_count[t])
				continue;
			if (!n) {
				snprintf(name, sizeof(name), "ROOT_%s",
					 ph_heap_root_name(t));
				n = name;
			}
			ph_jw_kv_int(&w, n, (int64_t)h.sub_count[t]);
		}
		ph_jw_obj_end(&w);
		ph_jw_key(&w, "roots");
		ph_jw_obj_begin(&w);
		for (unsigned t = 0; t < 256; t++)
			if (roots[t])
				ph_jw_kv_int(&w, ph_heap_root_name(t),
					     (int64_t)roots[t]);
		ph_jw_obj_end(&w);
		ph_jw_key(&w, "heaps");
		ph_jw_arr_begin(&w);
		for (uint32_t i = 0; i < h.nheaps; i++) {
			if (!h.heaps[i].classes && !h.heaps[i].objects)
				continue;
			ph_jw_obj_begin(&w);
			ph_jw_kv_str(&w, "name", h.heaps[i].name);
			ph_jw_kv_int(&w, "classes",
				     (int64_t)h.heaps[i].classes);
			ph_jw_kv_int(&w, "objects",
				     (int64_t)h.heaps[i].objects);
			ph_jw_kv_int(&w, "shallow",
				     (int64_t)h.heaps[i].shallow);
			ph_jw_obj_end(&w);
		}
		ph_jw_arr_end(&w);
		ph_jw_kv_int(&w, "classes", (int64_t)kinds[PH_HEAP_CLASS]);
		ph_jw_kv_int(&w, "instances", (int64_t)kinds[PH_HEAP_INSTANCE]);
		ph_jw_kv_int(&w, "objectArrays",
			     (int64_t)kinds[PH_HEAP_OBJ_ARRAY]);
		ph_jw_kv_int(&w, "primitiveArrays",
			     (int64_t)kinds[PH_HEAP_PRIM_ARRAY]);
		ph_jw_kv_int(&w, "objects", h.nobj);
		ph_jw_kv_int(&w, "reachable", (int64_t)h.reachable);
		ph_jw_kv_int(&w, "indexBytes", (int64_t)index_bytes);
		ph_jw_obj_end(&w);
		if (ph_jw_finish(&w) || ph_buf_addch(&b, '\n'))
			goto out;
	} else {
		if (ph_buf_addf(&b, "%s: %zu bytes, %s, %u-byte ids%s\n",
				o->dump, h.size, h.version, h.idsz,
				h.android ? ", Android" : ""))
			goto out;
		if (ph_buf_addstr(&b, "records:"))
			goto out;
		for (unsigned t = 0; t < 256; t++) {
			const char *n = record_name(t);

			if (!h.rec_count[t])
				continue;
			if (!n) {
				snprintf(name, sizeof(name), "0x%02X", t);
				n = name;
			}
			if (ph_buf_addf(&b, " %s %" PRIu64, n, h.rec_count[t]))
				goto out;
		}
		if (ph_buf_addstr(&b, "\nsub-records:"))
			goto out;
		for (unsigned t = 0; t < 256; t++) {
			const char *n = sub_name(t);

			if (!h.sub_count[t])
				continue;
			if (!n) {
				snprintf(name, sizeof(name), "ROOT_%s",
					 ph_heap_root_name(t));
				n = name;
			}
			if (ph_buf_addf(&b, " %s %" PRIu64, n, h.sub_count[t]))
				goto out;
		}
		if (ph_buf_addstr(&b, "\nroots:"))
			goto out;
		for (unsigned t = 0; t < 256; t++)
			if (roots[t] &&
			    ph_buf_addf(&b, " %s %" PRIu64,
					ph_heap_root_name(t), roots[t]))
				goto out;
		if (ph_buf_addstr(&b, "\nheaps:"))
			goto out;
		for (uint32_t i = 0; i < h.nheaps; i++)
			if ((h.heaps[i].classes || h.heaps[i].objects) &&
			    ph_buf_addf(&b,
					" %s (%" PRIu64 " classes, %" PRIu64
					" objects, %" PRIu64 " bytes)",
					h.heaps[i].name, h.heaps[i].classes,
					h.heaps[i].objects, h.heaps[i].shallow))
				goto out;
		if (ph_buf_addf(&b,
				"\nclasses %" PRIu64 ", instances %" PRIu64
				", object arrays %" PRIu64
				", primitive arrays %" PRIu64 "\n"
				"reachable %" PRIu64 " of %u objects "
				"(strongly, from GC roots)\n"
				"index %zu bytes (%.1f bytes/object)\n",
				kinds[0], kinds[1], kinds[2], kinds[3],
				h.reachable, h.nobj, index_bytes,
				h.nobj ? (double)index_bytes / h.nobj : 0.0))
			goto out;
		if (h.partial) {
			char eb[300];

			if (ph_buf_addf(&b, "PARTIAL: %s\n",
					ph_err_format(&h.err, eb, sizeof(eb))))
				goto out;
		}
	}
	status = emit(&b, out);
	if (!status && h.partial)
		status = 1;
out:
	ph_buf_release(&b);
	close_dump(&h, map);
	return status;
}
