/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_merge.c: rows paired on identity: the fold of N repeats of one
 * scenario (analyze A B C) and `porthole trace compare BASE.json
 * NEW.json`.
 *
 * A row's identity is the values of its detector's @identity columns
 * (location by default), written as JSON text and joined, so two rows are
 * the same finding exactly when those values are equal.
 *
 * Fold: the rows of every repeat with one identity become one row; each
 * numeric column is the median over the repeats that had the row, any
 * other column is the first repeat's value, and seen_in says in how many
 * of the repeats it was (a row seen once in five runs is noise, not a
 * finding).
 *
 * Compare: per detector present in either report, rows paired on identity.
 * A pair is worse when NEW's self_ms exceeds BASE's by more than the noise
 * floor: max(--floor-ms, --floor-pct of BASE's value) (defaults 2 ms and
 * 10%); better the other way round; a row only in NEW is new, only in
 * BASE resolved.  Exit 0 when nothing is new or worse, 1 when something
 * is (the CI gate fails), 2 when an input cannot be read or is not a
 * report.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "ph_log.h"
#include "trace/trace_cli.h"
#include "trace/trace_run.h"

#include <math.h>

/* The identity of row as text, into key (reset first). */
static int identity_key(const struct ph_json *row, const char *identity,
			struct ph_buf *key)
{
	const char *p = identity;
	int rc = 0;

	ph_buf_reset(key);
	while (*p && !rc) {
		char col[128];
		size_t n = 0;
		const struct ph_json *v;
		struct ph_buf tmp = PH_BUF_INIT(1 << 20);
		struct ph_jw w;

		while (*p == ' ' || *p == ',')
			p++;
		while (*p && *p != ',' && *p != ' ' && n < sizeof(col) - 1)
			col[n++] = *p++;
		col[n] = 0;
		if (!n)
			break;
		v = ph_json_get(row, col);
		ph_jw_init(&w, &tmp);
		if (v)
			ph_jw_value(&w, v);
		else
			ph_jw_null(&w);
		rc = ph_jw_finish(&w);
		if (!rc)
			rc = ph_buf_add(key, tmp.buf, tmp.len);
		if (!rc)
			rc = ph_buf_addch(key, '\x1f');
		ph_buf_release(&tmp);
	}
	return rc;
}

struct group {
	char *key;
	const struct ph_json *rows[64]; /* by repeat, NULL when absent */
	size_t seen;
};

size_t ph_trace_rows_fold(struct ph_jw *w, const char **arrays, size_t n,
			  const char *identity)
{
	struct ph_arena a;
	struct group *g = NULL;
	size_t ng = 0, cap = 0;
	struct ph_buf key = PH_BUF_INIT(1 << 20);

	ph_arena_init(&a, 1 << 16, SIZE_MAX);
	if (n > 64)
		n = 64;
	for (size_t k = 0; k < n; k++) {
		struct ph_json *arr;

		if (!arrays[k] ||
		    ph_json_parse(&a, arrays[k], strlen(arrays[k]), &arr,
				  NULL) ||
		    arr->type != PH_JSON_ARRAY)
			continue;
		for (uint32_t r = 0; r < arr->n; r++) {
			const struct ph_json *row = &arr->u.items[r];
			size_t i;

			if (identity_key(row, identity, &key))
				continue;
			for (i = 0; i < ng; i++)
				if (!strcmp(g[i].key, key.buf))
					break;
			if (i == ng) {
				if (ng == cap && PH_GROW(g, cap, ng + 1, 16))
					break;
				memset(&g[ng], 0, sizeof(*g));
				g[ng].key = strdup(key.buf);
				ng++;
			}
			if (!g[i].rows[k]) {
				g[i].rows[k] = row;
				g[i].seen++;
			}
		}
	}
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < ng; i++) {
		const struct ph_json *first = NULL;

		for (size_t k = 0; k < n && !first; k++)
			first = g[i].rows[k];
		ph_jw_obj_begin(w);
		for (uint32_t m = 0; first && m < first->n; m++) {
			const struct ph_json_member *mb = &first->u.members[m];
			double v[64];
			size_t nv = 0;
			bool numeric = mb->value.type == PH_JSON_INT ||
				       mb->value.type == PH_JSON_DOUBLE;
			char name[128];

			snprintf(name, sizeof(name), "%.*s", (int)mb->key.n,
				 mb->key.u.s);
			ph_jw_keyn(w, mb->key.u.s, mb->key.n);
			for (size_t k = 0; numeric && k < n; k++) {
				const struct ph_json *x =
					ph_json_get(g[i].rows[k], name);

				if (x && ph_json_as_double(x, &v[nv]))
					nv++;
			}
			if (!numeric || !nv) {
				ph_jw_value(w, &mb->value);
			} else {
				double med = ph_trace_median(v, nv);

				if (mb->value.type == PH_JSON_INT &&
				    med == floor(med))
					ph_jw_int(w, (int64_t)med);
				else
					ph_jw_double(w, med);
			}
		}
		ph_jw_kv_int(w, "seen_in", (int64_t)g[i].seen);
		ph_jw_obj_end(w);
		free(g[i].key);
	}
	ph_jw_arr_end(w);
	free(g);
	ph_buf_release(&key);
	ph_arena_release(&a);
	return ng;
}

/* --- compare ------------------------------------------------------------- */

struct report {
	struct ph_buf text;
	struct ph_json *root;
	const struct ph_json *dets;
};

static int read_report(const char *path, struct report *r, struct ph_arena *a)
{
	struct ph_err err;

	r->text = (struct ph_buf)PH_BUF_INIT((size_t)1 << 30);
	if (ph_buf_read_file(&r->text, path)) {
		fprintf(stderr, "porthole trace compare: cannot read %s: %s\n",
			path, strerror(errno));
		return 2;
	}
	memset(&err, 0, sizeof(err));
	if (ph_json_parse(a, r->text.buf, r->text.len, &r->root, &err)) {
		fprintf(stderr,
			"porthole trace compare: %s: not JSON (byte %" PRIu64
			": %s)\n",
			path, err.offset, err.msg);
		return 2;
	}
	r->dets = ph_json_get(r->root, "detectors");
	if (!ph_json_is(r->dets, PH_JSON_ARRAY)) {
		fprintf(stderr,
			"porthole trace compare: %s: not a trace report "
			"(no \"detectors\" array)\n",
			path);
		return 2;
	}
	return 0;
}

static const struct ph_json *find_det(const struct report *r, const char *id)
{
	for (uint32_t i = 0; i < r->dets->n; i++)
		if (ph_json_streq(ph_json_get(&r->dets->u.items[i], "id"), id))
			return &r->dets->u.items[i];
	return NULL;
}

static double num_of(const struct ph_json *row, const char *col)
{
	double v = 0;

	if (!ph_json_as_double(ph_json_get(row, col), &v))
		v = 0;
	return v;
}

static void kv_null(struct ph_jw *w, const char *k)
{
	ph_jw_key(w, k);
	ph_jw_null(w);
}

struct tally {
	size_t worse, better, same, added, resolved;
};

static void pair_rows(struct ph_jw *w, const char *id, const char *identity,
		      const struct ph_json *br, const struct ph_json *nr,
		      const struct ph_trace_compare_opts *o, struct tally *t,
		      FILE *txt)
{
	struct ph_buf kb = PH_BUF_INIT(1 << 20), kn = PH_BUF_INIT(1 << 20);
	uint32_t nb = ph_json_is(br, PH_JSON_ARRAY) ? br->n : 0;
	uint32_t nn = ph_json_is(nr, PH_JSON_ARRAY) ? nr->n : 0;
	bool *used = calloc(nb ? nb : 1, sizeof(*used));

	if (!used)
		return;
	for (uint32_t j = 0; j < nn; j++) {
		const struct ph_json *n = &nr->u.items[j], *b = NULL;
		const char *status;
		double bv, nv, floor;

		if (identity_key(n, identity, &kn))
			continue;
		for (uint32_t i = 0; i < nb && !b; i++) {
			if (used[i] ||
			    identity_key(&br->u.items[i], identity, &kb) ||
			    strcmp(kb.buf, kn.buf))
				continue;
			used[i] = true;
			b = &br->u.items[i];
		}
		nv = num_of(n, "self_ms");
		bv = b ? num_of(b, "self_ms") : 0;
		floor = fmax(o->floor_ms, fabs(bv) * o->floor_pct / 100);
		if (!b) {
			status = "new";
			t->added++;
		} else if (nv - bv > floor) {
			status = "worse";
			t->worse++;
		} else if (bv - nv > floor) {
			status = "better";
			t->better++;
		} else {
			status = "same";
			t->same++;
		}
		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "detector", id);
		ph_jw_key(w, "location");
		ph_jw_value(w, ph_json_get(n, "location"));
		ph_jw_kv_str(w, "status", status);
		if (b)
			ph_jw_kv_double(w, "base_self_ms", bv);
		else
			kv_null(w, "base_self_ms");
		ph_jw_kv_double(w, "new_self_ms", nv);
		ph_jw_kv_double(w, "delta_ms", nv - bv);
		ph_jw_kv_double(w, "noise_floor_ms", floor);
		ph_jw_obj_end(w);
		if (txt && strcmp(status, "same")) {
			const struct ph_json *loc = ph_json_get(n, "location");

			fprintf(txt, "%-7s %-22s %-40.*s %9.3f -> %9.3f ms\n",
				status, id,
				ph_json_is(loc, PH_JSON_STRING) ? (int)loc->n :
								  1,
				ph_json_is(loc, PH_JSON_STRING) ? loc->u.s :
								  "?",
				bv, nv);
		}
	}
	for (uint32_t i = 0; i < nb; i++) {
		const struct ph_json *b = &br->u.items[i];
		const struct ph_json *loc = ph_json_get(b, "location");

		if (used[i])
			continue;
		t->resolved++;
		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "detector", id);
		ph_jw_key(w, "location");
		ph_jw_value(w, loc);
		ph_jw_kv_str(w, "status", "resolved");
		ph_jw_kv_double(w, "base_self_ms", num_of(b, "self_ms"));
		kv_null(w, "new_self_ms");
		ph_jw_kv_double(w, "delta_ms", -num_of(b, "self_ms"));
		ph_jw_obj_end(w);
		if (txt)
			fprintf(txt, "%-7s %-22s %-40.*s %9.3f -> gone\n",
				"gone", id,
				ph_json_is(loc, PH_JSON_STRING) ? (int)loc->n :
								  1,
				ph_json_is(loc, PH_JSON_STRING) ? loc->u.s :
								  "?",
				num_of(b, "self_ms"));
	}
	free(used);
	ph_buf_release(&kb);
	ph_buf_release(&kn);
}

int ph_trace_cmd_compare(const struct ph_trace_compare_opts *o, FILE *f)
{
	const char *paths[2] = { o->base, o->new_path };
	struct report r[2];
	struct ph_arena a;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_jw w;
	struct tally t = { 0 };
	int status = 2;

	memset(r, 0, sizeof(r));
	ph_arena_init(&a, 1 << 20, SIZE_MAX);
	if (read_report(paths[0], &r[0], &a) ||
	    read_report(paths[1], &r[1], &a))
		goto out;
	ph_jw_init(&w, &out);
	ph_jw_obj_begin(&w);
	ph_jw_kv_str(&w, "base", paths[0]);
	ph_jw_kv_str(&w, "new", paths[1]);
	ph_jw_kv_double(&w, "floor_ms", o->floor_ms);
	ph_jw_kv_double(&w, "floor_pct", o->floor_pct);
	ph_jw_key(&w, "rows");
	ph_jw_arr_begin(&w);
	/* every detector of NEW, then those only BASE has */
	for (int side = 1; side >= 0; side--) {
		for (uint32_t i = 0; i < r[side].dets->n; i++) {
			const struct ph_json *d = &r[side].dets->u.items[i];
			const struct ph_json *idj = ph_json_get(d, "id");
			const struct ph_json *other, *ident;
			char id[128], idn[256];

			if (!ph_json_is(idj, PH_JSON_STRING))
				continue;
			snprintf(id, sizeof(id), "%.*s", (int)idj->n, idj->u.s);
			other = find_det(&r[!side], id);
			if (side == 0 && other)
				continue; /* paired already */
			ident = ph_json_get(d, "identity");
			snprintf(idn, sizeof(idn), "%.*s",
				 ph_json_is(ident, PH_JSON_STRING) ?
					 (int)ident->n :
					 8,
				 ph_json_is(ident, PH_JSON_STRING) ?
					 ident->u.s :
					 "location");
			pair_rows(&w, id, idn,
				  ph_json_get(side ? other : d, "rows"),
				  ph_json_get(side ? d : other, "rows"), o, &t,
				  o->json ? NULL : f);
		}
	}
	ph_jw_arr_end(&w);
	ph_jw_kv_int(&w, "worse", (int64_t)t.worse);
	ph_jw_kv_int(&w, "new_rows", (int64_t)t.added);
	ph_jw_kv_int(&w, "better", (int64_t)t.better);
	ph_jw_kv_int(&w, "resolved", (int64_t)t.resolved);
	ph_jw_kv_int(&w, "same", (int64_t)t.same);
	ph_jw_kv_bool(&w, "pass", !t.worse && !t.added);
	ph_jw_obj_end(&w);
	if (ph_jw_finish(&w))
		goto out;
	if (o->json)
		fprintf(f, "%s\n", out.buf);
	else
		fprintf(f,
			"%zu worse, %zu new, %zu better, %zu resolved, %zu the "
			"same (noise floor %.3g ms or %.3g%%)\n",
			t.worse, t.added, t.better, t.resolved, t.same,
			o->floor_ms, o->floor_pct);
	status = t.worse || t.added ? 1 : 0;
out:
	ph_buf_release(&r[0].text);
	ph_buf_release(&r[1].text);
	ph_buf_release(&out);
	ph_arena_release(&a);
	return status;
}
