/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_host_io_merge.c: `capture --iotrace`'s join (src/host/io/merge.c)
 * from fixed input: the golden io session (tests/golden/io/data) loaded
 * into a live store, its analysis, and the made-up recording beside it.
 * The merged answer must be the one `porthole io` gives for the same
 * files (ph_io_load), its findings in the analysis with source iotrace.
 * tests/e2e/capture_iotrace.sh does the same live with porthole-sample.
 */
#include "ph_common.h"
#include "harness.h"
#include "host/capture.h"
#include "host/findings.h"
#include "host/io/io.h"
#include "host/io/merge.h"
#include "host/store.h"

#define DATA "tests/golden/io/data/"

void test_host_io_merge__the_capture_gets_what_porthole_io_answers(void)
{
	struct ph_store s;
	struct ph_analysis *a = NULL;
	struct ph_io_view *v = NULL, *ref = NULL;
	struct ph_io_opts o = { .w = PH_WINDOW_ALL };
	char why[600];
	size_t before, notes;
	bool noted = false;

	CHECK(!ph_store_init(&s, 0));
	CHECK(!ph_store_load_file(&s, DATA "events.ndjson"));
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	ref = ph_io_view_new(&o);
	if (!a || !ref ||
	    ph_io_load(ref, DATA "events.ndjson", DATA "rec", why, sizeof(why)))
		goto out;
	before = a->nf;
	notes = a->nnotes;
	v = ph_io_merge(a, &s, NULL, DATA "rec", true, 0, why, sizeof(why));
	if (!v) {
		ph_test_fail(__FILE__, __LINE__, "merge: %s", why);
		goto out;
	}
	/* the same window, requests and judgement as porthole io */
	if (v->w.from != ref->w.from || v->w.to != ref->w.to ||
	    v->nreq != ref->nreq || v->app_n != ref->app_n ||
	    v->main_n != ref->main_n || v->nf != ref->nf || !ref->main_n ||
	    !ref->nf) {
		ph_test_fail(__FILE__, __LINE__,
			     "merged view differs: window %" PRId64 "..%" PRId64
			     " requests %zu app %" PRIu64 " main %" PRIu64
			     " findings %zu",
			     v->w.from, v->w.to, v->nreq, v->app_n, v->main_n,
			     v->nf);
		goto out;
	}
	if (a->nf != before + ref->nf)
		ph_test_fail(__FILE__, __LINE__, "%zu findings merged of %zu",
			     a->nf - before, ref->nf);
	for (size_t i = 0; i < ref->nf; i++) {
		const struct ph_finding *f = ph_analysis_find(a, ref->f[i].id);

		if (!f || strcmp(f->source, "iotrace") ||
		    f->count != ref->f[i].count ||
		    f->severity != ref->f[i].severity ||
		    strcmp(f->evidence, ref->f[i].evidence))
			ph_test_fail(__FILE__, __LINE__, "%s not merged as is",
				     ref->f[i].id);
	}
	for (size_t i = 0; i < ref->nquiet; i++)
		if (!ph_analysis_quiet(a, ref->quiet[i]))
			ph_test_fail(__FILE__, __LINE__, "%s not quiet",
				     ref->quiet[i]);
	for (size_t i = notes; i < a->nnotes; i++)
		noted |= !strncmp(a->notes[i], "block I/O: ", 11);
	if (!noted)
		ph_test_fail(__FILE__, __LINE__, "no block I/O note");
	/* the analysis is ranked again: errors first */
	for (size_t i = 1; i < a->nf; i++)
		if (a->f[i - 1].severity > a->f[i].severity)
			ph_test_fail(__FILE__, __LINE__, "not ranked at %zu",
				     i);
out:
	ph_io_view_free(v);
	ph_io_view_free(ref);
	ph_analysis_free(a);
	ph_store_release(&s);
}

/* The capture's io: spans by issue time, the app's first under a cap. */
static int spans(const struct ph_io_view *v, size_t max, size_t *n, size_t *app,
		 int64_t *omitted, bool *sorted, bool *dir_null)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_arena ar;
	struct ph_json *root = NULL;
	const struct ph_json *sp;
	struct ph_jw jw;
	double last = -1e300;
	int rc;

	ph_arena_init(&ar, PH_ARENA_DEFAULT_BLOCK, (size_t)64 << 20);
	ph_jw_init(&jw, &b);
	ph_io_write_capture(v, max, &jw);
	rc = ph_jw_finish(&jw) || ph_json_parse(&ar, b.buf, b.len, &root, NULL);
	if (!rc) {
		sp = ph_json_get(root, "spans");
		*n = *app = 0;
		*sorted = true;
		for (size_t i = 0; ph_json_is(sp, PH_JSON_ARRAY) && i < sp->n;
		     i++) {
			double from = 0;

			ph_json_as_double(ph_json_get(&sp->u.items[i], "from"),
					  &from);
			*sorted &= from >= last;
			last = from;
			*app += ph_json_get(&sp->u.items[i], "app") != NULL;
			(*n)++;
		}
		ph_json_as_int(ph_json_get(root, "spansOmitted"), omitted);
		*dir_null = ph_json_is(
			ph_json_get(ph_json_get(root, "recording"), "dir"),
			PH_JSON_NULL);
		rc = !ph_json_get(root, "requests") ||
		     ph_json_get(root, "findings") ||
		     ph_json_get(root, "format");
	}
	ph_arena_release(&ar);
	ph_buf_release(&b);
	return rc;
}

void test_host_io_merge__spans_keep_the_apps_requests_first(void)
{
	struct ph_store s;
	struct ph_analysis *a = NULL;
	struct ph_io_view *v = NULL;
	char why[600];
	size_t n = 0, app = 0;
	int64_t omitted = -1;
	bool sorted = false, dir_null = false;

	CHECK(!ph_store_init(&s, 0));
	CHECK(!ph_store_load_file(&s, DATA "events.ndjson"));
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	if (a)
		v = ph_io_merge(a, &s, NULL, DATA "rec", false, 0, why,
				sizeof(why));
	if (!v) {
		ph_test_fail(__FILE__, __LINE__, "merge failed");
		goto out;
	}
	if (v->app_n < 3 || v->nreq <= v->app_n) {
		ph_test_fail(__FILE__, __LINE__, "fixture: %" PRIu64 " of %zu",
			     v->app_n, v->nreq);
		goto out;
	}
	/* all of them */
	if (spans(v, PH_CAPTURE_IO_SPANS, &n, &app, &omitted, &sorted,
		  &dir_null) ||
	    n != v->nreq || app != v->app_n || omitted != 0 || !sorted ||
	    !dir_null)
		ph_test_fail(__FILE__, __LINE__,
			     "all: %zu spans (%zu app), %" PRId64
			     " omitted, sorted %d, dir null %d",
			     n, app, omitted, sorted, dir_null);
	/* fewer than the app's: only the app's */
	if (spans(v, 2, &n, &app, &omitted, &sorted, &dir_null) || n != 2 ||
	    app != 2 || omitted != (int64_t)v->nreq - 2 || !sorted)
		ph_test_fail(__FILE__, __LINE__, "2: %zu spans (%zu app)", n,
			     app);
	/* the app's and the first others' */
	if (spans(v, v->app_n + 1, &n, &app, &omitted, &sorted, &dir_null) ||
	    n != v->app_n + 1 || app != v->app_n || !sorted)
		ph_test_fail(__FILE__, __LINE__, "app+1: %zu spans (%zu app)",
			     n, app);
out:
	ph_io_view_free(v);
	ph_analysis_free(a);
	ph_store_release(&s);
}

void test_host_io_merge__a_missing_recording_is_a_note(void)
{
	struct ph_store s;
	struct ph_analysis *a;
	struct ph_io_view *v;
	char why[600];
	size_t before;

	CHECK(!ph_store_init(&s, 0));
	CHECK(!ph_store_load_file(&s, DATA "events.ndjson"));
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a);
	before = a->nf;
	v = ph_io_merge(a, &s, NULL, DATA "no-such-recording", false, 0, why,
			sizeof(why));
	CHECK(!v);
	CHECK(strstr(why, "not a recording") != NULL);
	CHECK_INT(a->nf, before);
	CHECK(a->nnotes > 0 &&
	      !strncmp(a->notes[a->nnotes - 1], "block I/O: ", 11));
	ph_analysis_free(a);
	ph_store_release(&s);
}
