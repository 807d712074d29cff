/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of what an answer covers (host/coverage.h): seq runs, holes, a
 * late attach, a restarted process, the link, and the quiet / not seen
 * split they decide.
 */
#include "ph_common.h"
#include "harness.h"
#include "host/coverage.h"
#include "host/findings.h"
#include "host/store.h"

static uint64_t holes_of(const struct ph_seq_runs *r)
{
	struct ph_coverage c;

	ph_coverage_from_runs(&c, r, PH_WINDOW_ALL, 1, 2, 1, NULL);
	return c.missing;
}

void test_coverage__runs_count_holes_and_backfill_fills_them(void)
{
	struct ph_seq_runs r = { 0 };

	/* The stream from seq 100, a backfill of 0..99 after it. */
	for (int64_t s = 100; s < 200; s++)
		ph_seq_runs_add(&r, 0, s, 1000 + s);
	CHECK_INT(r.n, 1);
	for (int64_t s = 0; s < 100; s++)
		ph_seq_runs_add(&r, 0, s, 1000 + s);
	CHECK_INT(r.n, 1);
	CHECK_INT(holes_of(&r), 0);
	/* Lost 200..209 and 230; a duplicate changes nothing. */
	for (int64_t s = 210; s < 230; s++)
		ph_seq_runs_add(&r, 0, s, 1000 + s);
	ph_seq_runs_add(&r, 0, 231, 1231);
	ph_seq_runs_add(&r, 0, 150, 1150);
	CHECK_INT(r.n, 3);
	CHECK_INT(holes_of(&r), 11);
	/* Filling 230 joins two runs; one at a time, from the top down,
	 * joins the rest. */
	ph_seq_runs_add(&r, 0, 230, 1230);
	for (int64_t s = 209; s >= 200; s--)
		ph_seq_runs_add(&r, 0, s, 1000 + s);
	CHECK_INT(r.n, 1);
	CHECK_INT(r.v[0].lo, 0);
	CHECK_INT(r.v[0].hi, 231);
	CHECK_INT(holes_of(&r), 0);
	ph_seq_runs_release(&r);
}

void test_coverage__a_restarted_process_keeps_its_own_runs(void)
{
	struct ph_seq_runs r = { 0 };

	/* The first process lost 5..9; the second numbers from 0 again. */
	for (int64_t s = 0; s < 20; s++)
		if (s < 5 || s >= 10)
			ph_seq_runs_add(&r, 0, s, s);
	for (int64_t s = 0; s < 20; s++)
		ph_seq_runs_add(&r, 1, s, 100 + s);
	CHECK_INT(r.n, 1);
	CHECK_INT(holes_of(&r), 5);
	ph_seq_runs_release(&r);
}

/* A store fed a hello, then events seq first..last at t = 1000 + seq. */
static int feed(struct ph_store *s, int64_t first, int64_t last, int64_t skip)
{
	static const char hello[] =
		"{\"id\":1,\"ok\":true,\"result\":{\"protocol\":1,"
		"\"packageName\":\"p\",\"processName\":\"p\",\"startedAt\":"
		"900}}";
	char line[200];
	int rc = ph_store_add_line(s, hello, strlen(hello));

	for (int64_t q = first; !rc && q <= last; q++) {
		int n;

		if (q == skip)
			continue;
		n = snprintf(line, sizeof(line),
			     "{\"event\":\"log\",\"t\":%" PRId64
			     ",\"seq\":%" PRId64 ",\"data\":{\"level\":\"I\","
			     "\"message\":\"m\"}}",
			     1000 + q, q);
		rc = ph_store_add_line(s, line, (size_t)n);
	}
	return rc;
}

void test_coverage__complete_only_when_every_seq_is_held(void)
{
	struct ph_store s;
	struct ph_analysis *a;

	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(feed(&s, 0, 50, -1), 0);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a);
	CHECK(a->cov.complete);
	CHECK(a->nquiet > 0);
	CHECK_INT(a->nnot_seen, 0);
	CHECK(ph_analysis_quiet(a, "main-thread-stall"));
	ph_analysis_free(a);
	ph_store_release(&s);

	/* One lost on the way: every check that found nothing is not
	 * seen, and says where. */
	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(feed(&s, 0, 50, 20), 0);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a);
	CHECK(!a->cov.complete);
	CHECK_INT(a->cov.missing, 1);
	CHECK_INT(a->cov.missing_from, 1019);
	CHECK_INT(a->cov.missing_to, 1021);
	CHECK_INT(a->nquiet, 0);
	CHECK(a->nnot_seen > 0);
	CHECK_INT(a->nnot_seen, a->nlooked);
	/* Still "looked": the check ran over what was held. */
	CHECK(ph_analysis_quiet(a, "main-thread-stall"));
	CHECK(strstr(a->cov.reason, "1 events missing by seq"));
	ph_analysis_free(a);
	ph_store_release(&s);
}

void test_coverage__a_late_attach_is_not_seen_before_its_first_event(void)
{
	struct ph_store s;
	struct ph_analysis *a;

	/* The host's first event is seq 30: 0..29 were never received. */
	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(feed(&s, 30, 60, -1), 0);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a);
	CHECK(!a->cov.complete);
	CHECK_INT(a->cov.missing_before, 30);
	CHECK_INT(a->cov.before_to, 1030);
	CHECK_INT(a->nquiet, 0);
	ph_analysis_free(a);

	/* A window after the first held event: seq 39 before it is held,
	 * so the window was seen whole. */
	a = ph_analyze_store(&s, (struct ph_window){ 1040, 1050 });
	CHECK(a);
	CHECK_INT(a->cov.missing_before, 0);
	CHECK(a->cov.complete);
	ph_analysis_free(a);
	ph_store_release(&s);
}

void test_coverage__the_link_decides_the_stretch_after_the_last_event(void)
{
	struct ph_store s;
	struct ph_analysis *a;

	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(feed(&s, 0, 10, -1), 0);
	/* Up to now, not connected: the time since the last event was not
	 * observed. */
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a);
	ph_analysis_link(a, false, "connection refused", s.in.first_t);
	CHECK(!a->cov.complete);
	CHECK(strstr(a->cov.reason, "not connected after t=1010"));
	CHECK(strstr(a->cov.reason, "connection refused"));
	CHECK_INT(a->nquiet, 0);
	/* Connected: the same answer stands complete. */
	ph_analysis_link(a, true, NULL, s.in.first_t);
	CHECK(a->cov.complete);
	CHECK_INT(a->nquiet, a->nlooked);
	ph_analysis_free(a);

	/* Connected since before an empty window: an idle app, seen. */
	a = ph_analyze_store(&s, (struct ph_window){ 2000, 3000 });
	CHECK(a);
	CHECK(!a->cov.complete);
	CHECK(strstr(a->cov.reason, "nothing observed"));
	ph_analysis_link(a, true, NULL, s.in.first_t);
	CHECK(a->cov.complete);
	ph_analysis_free(a);

	/* A window over what arrived before the link went is whole. */
	a = ph_analyze_store(&s, (struct ph_window){ 1000, 1005 });
	CHECK(a);
	ph_analysis_link(a, false, "gone", s.in.first_t);
	CHECK(a->cov.complete);
	ph_analysis_free(a);
	ph_store_release(&s);
}

void test_coverage__nothing_held_is_never_quiet(void)
{
	struct ph_store s;
	struct ph_analysis *a;

	CHECK_INT(ph_store_init(&s, 0), 0);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a);
	CHECK(!a->cov.complete);
	CHECK(!a->cov.held);
	CHECK_INT(a->nquiet, 0);
	CHECK(a->nnot_seen > 0);
	ph_analysis_free(a);
	ph_store_release(&s);
}

void test_coverage__before_the_apps_first_event_is_seen_empty(void)
{
	struct ph_store s;
	struct ph_analysis *a;

	/* Seq 0 held: the app had not begun before it. */
	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(feed(&s, 0, 10, -1), 0);
	a = ph_analyze_store(&s, (struct ph_window){ 100, 500 });
	CHECK(a);
	CHECK(a->cov.complete);
	CHECK(a->nquiet > 0);
	ph_analysis_free(a);
	ph_store_release(&s);

	/* Seq 0 never received: what came before is not known. */
	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(feed(&s, 5, 10, -1), 0);
	a = ph_analyze_store(&s, (struct ph_window){ 100, 500 });
	CHECK(a);
	CHECK(!a->cov.complete);
	CHECK_INT(a->nquiet, 0);
	ph_analysis_free(a);
	ph_store_release(&s);
}

void test_coverage__too_many_holes_are_counted_at_least(void)
{
	struct ph_seq_runs r = { 0 };
	struct ph_coverage c;

	/* Every other seq: a hole each, more than the runs kept. */
	for (int64_t s = 0; s < 2 * 70000; s += 2)
		ph_seq_runs_add(&r, 0, s, s);
	ph_coverage_from_runs(&c, &r, PH_WINDOW_ALL, 1, 2, 1, NULL);
	CHECK(c.at_least);
	CHECK(c.missing >= 65535 && c.missing < 70000);
	CHECK(!c.complete);
	CHECK(strstr(c.reason, "at least "));
	ph_seq_runs_release(&r);
}
