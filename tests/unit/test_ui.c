/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ui.c: the UI server's request checks (src/ui/http.c), driven
 * without a socket: routing and methods, Host/Origin (DNS rebinding),
 * windows and bodies with their 400 reasons, size caps, trace ids refused
 * before anything runs, and the embedded page.
 */
#include "ph_common.h"
#include "harness.h"
#include "ui/assets.h"
#include "ui/ui.h"

#include <sys/stat.h>
#include <unistd.h>

void test_ui__route_and_methods(void)
{
	int st;

	CHECK_INT(ph_ui_route("GET", "/", &st), PH_UI_R_ASSET);
	CHECK_INT(st, 0);
	CHECK_INT(ph_ui_route("GET", "/api/findings", &st), PH_UI_R_FINDINGS);
	CHECK_INT(st, 0);
	CHECK_INT(ph_ui_route("HEAD", "/app.js", &st), PH_UI_R_ASSET);
	CHECK_INT(st, 0);
	/* every embedded file is a route; nothing else is */
	CHECK_INT(ph_ui_route("GET", "/store.js", &st), PH_UI_R_ASSET);
	CHECK_INT(st, 0);
	ph_ui_route("POST", "/store.js", &st);
	CHECK_INT(st, 405);
	CHECK_INT(ph_ui_route("GET", "/nothing.js", &st), PH_UI_R_NONE);
	CHECK_INT(st, 404);
	/* mutations are POST only, reads GET only */
	ph_ui_route("GET", "/api/save", &st);
	CHECK_INT(st, 405);
	ph_ui_route("GET", "/api/restart", &st);
	CHECK_INT(st, 405);
	ph_ui_route("POST", "/api/findings", &st);
	CHECK_INT(st, 405);
	ph_ui_route("DELETE", "/api/db/query", &st);
	CHECK_INT(st, 405);
	CHECK_INT(ph_ui_route("POST", "/api/db/query", &st), PH_UI_R_DB_QUERY);
	CHECK_INT(st, 0);
	CHECK_INT(ph_ui_route("GET", "/api/where", &st), PH_UI_R_WHERE);
	CHECK_INT(ph_ui_route("GET", "/api/trace/system", &st), PH_UI_R_SYSTEM);
	ph_ui_route("POST", "/api/trace/system", &st);
	CHECK_INT(st, 405);
	CHECK_INT(ph_ui_route("GET", "/etc/passwd", &st), PH_UI_R_NONE);
	CHECK_INT(st, 404);
	CHECK_INT(ph_ui_route("GET", "/api/findings/", &st), PH_UI_R_NONE);
	CHECK_INT(ph_ui_route(NULL, NULL, &st), PH_UI_R_NONE);
	CHECK_INT(st, 404);
}

void test_ui__host_and_origin(void)
{
	char why[300];

	CHECK_INT(ph_ui_check_request("GET", "127.0.0.1:8678", NULL, 8678, why,
				      sizeof(why)),
		  0);
	CHECK_INT(ph_ui_check_request("GET", "localhost:8678",
				      "http://localhost:8678", 8678, why,
				      sizeof(why)),
		  0);
	/* DNS rebinding: a name that resolves here is still not us */
	CHECK_INT(ph_ui_check_request("GET", "evil.example:8678", NULL, 8678,
				      why, sizeof(why)),
		  403);
	CHECK(strstr(why, "evil.example"));
	CHECK_INT(ph_ui_check_request("GET", "127.0.0.1:9999", NULL, 8678, why,
				      sizeof(why)),
		  403);
	CHECK_INT(ph_ui_check_request("GET", "127.0.0.1:86780", NULL, 8678, why,
				      sizeof(why)),
		  403);
	CHECK_INT(ph_ui_check_request("GET", "127.0.0.1", NULL, 8678, why,
				      sizeof(why)),
		  403);
	CHECK_INT(ph_ui_check_request("GET", NULL, NULL, 8678, why,
				      sizeof(why)),
		  400);
	CHECK_INT(ph_ui_check_request("GET", "", NULL, 8678, why, sizeof(why)),
		  400);
	/* a cross-site page posting to us carries its own Origin */
	CHECK_INT(ph_ui_check_request("POST", "127.0.0.1:8678",
				      "http://evil.example", 8678, why,
				      sizeof(why)),
		  403);
	CHECK(strstr(why, "cross-origin"));
	CHECK_INT(ph_ui_check_request("POST", "127.0.0.1:8678",
				      "https://127.0.0.1:8678", 8678, why,
				      sizeof(why)),
		  403);
	CHECK_INT(ph_ui_check_request("POST", "127.0.0.1:8678", "null", 8678,
				      why, sizeof(why)),
		  403);
	CHECK_INT(ph_ui_check_request("POST", "127.0.0.1:8678",
				      "http://127.0.0.1:8678.evil.example",
				      8678, why, sizeof(why)),
		  403);
}

void test_ui__window_400s_with_reasons(void)
{
	struct ph_window w;
	char trace[256], why[300], big[PH_UI_MAX_QUERY + 64];

	CHECK_INT(ph_ui_parse_window(NULL, &w, trace, sizeof(trace), why,
				     sizeof(why)),
		  0);
	CHECK(w.from == INT64_MIN && w.to == INT64_MAX);
	CHECK_INT(ph_ui_parse_window("from=10&to=20", &w, trace, sizeof(trace),
				     why, sizeof(why)),
		  0);
	CHECK_INT(w.from, 10);
	CHECK_INT(w.to, 20);
	CHECK_STR(trace, "");
	CHECK_INT(ph_ui_parse_window("from=20&to=20", &w, trace, sizeof(trace),
				     why, sizeof(why)),
		  400);
	CHECK(strstr(why, "must be before"));
	CHECK_INT(ph_ui_parse_window("from=30&to=20", &w, trace, sizeof(trace),
				     why, sizeof(why)),
		  400);
	CHECK_INT(ph_ui_parse_window("from=abc", &w, trace, sizeof(trace), why,
				     sizeof(why)),
		  400);
	CHECK(strstr(why, "not an integer"));
	CHECK_INT(ph_ui_parse_window("to=99999999999999999999999", &w, trace,
				     sizeof(trace), why, sizeof(why)),
		  400);
	CHECK_INT(ph_ui_parse_window("from=1%00&to=5", &w, trace, sizeof(trace),
				     why, sizeof(why)),
		  0); /* a NUL ends nothing: the value is not taken */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	CHECK_INT(ph_ui_parse_window(big, &w, trace, sizeof(trace), why,
				     sizeof(why)),
		  400);
	CHECK(strstr(why, "longer than"));
}

void test_ui__trace_id_refused_before_anything_runs(void)
{
	struct ph_window w;
	char trace[256], why[300], dir[] = "/tmp/ph-ui-test-XXXXXX";
	char path[400];
	FILE *f;

	CHECK_INT(ph_ui_parse_window("trace=..%2F..%2Fetc%2Fpasswd", &w, trace,
				     sizeof(trace), why, sizeof(why)),
		  400);
	CHECK_INT(ph_ui_parse_window("trace=/etc/passwd", &w, trace,
				     sizeof(trace), why, sizeof(why)),
		  400);
	CHECK_INT(ph_ui_parse_window("trace=.hidden", &w, trace, sizeof(trace),
				     why, sizeof(why)),
		  400);
	CHECK_INT(ph_ui_parse_window("trace=run-1.pftrace", &w, trace,
				     sizeof(trace), why, sizeof(why)),
		  0);
	CHECK_STR(trace, "run-1.pftrace");
	CHECK(!ph_ui_trace_id_ok("a/b"));
	CHECK(!ph_ui_trace_id_ok(""));
	CHECK(!ph_ui_trace_id_ok(".."));
	/* a well-formed id that is not in the listing is refused too, and
	 * so is a directory of that name */
	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/run-1.pftrace", dir);
	CHECK((f = fopen(path, "w")) != NULL);
	fputs("not a trace", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/sub", dir);
	CHECK(!mkdir(path, 0700));
	CHECK(ph_ui_trace_listed(dir, "run-1.pftrace"));
	CHECK(!ph_ui_trace_listed(dir, "run-2.pftrace"));
	CHECK(!ph_ui_trace_listed(dir, "sub"));
	CHECK(!ph_ui_trace_listed(dir, "../run-1.pftrace"));
	{
		struct ph_buf b = PH_BUF_INIT(1 << 20);

		CHECK_INT(ph_ui_trace_ask(dir, "nope", PH_WINDOW_ALL, 0, &b,
					  why, sizeof(why)),
			  PH_ENOENT);
		CHECK(strstr(why, "no trace"));
		CHECK_INT(b.len, 0);
		ph_buf_release(&b);
	}
	{
		/* the app's pid is not in a trace: asked about the busiest
		 * process instead, and when the trace lost events, the note
		 * says the app may have run in a hole */
		static const char *const traces[2] = {
			"# trace_clock: mono\n"
			"  x-100  (  100) [000] d..2.  1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=x next_pid=100 next_prio=120\n"
			"  x-100  (  100) [000] d..2.  1.200000: sched_switch: prev_comm=x prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n",
			"CPU:0 [LOST 7 EVENTS]\n"
		};
		struct ph_buf b = PH_BUF_INIT(1 << 20);
		char tp[PATH_MAX];

		snprintf(tp, sizeof(tp), "%s/live.trace", dir);
		for (int lost = 0; lost < 2; lost++) {
			CHECK((f = fopen(tp, "w")) != NULL);
			fputs(traces[0], f);
			if (lost)
				fputs(traces[1], f);
			fclose(f);
			ph_buf_reset(&b);
			CHECK_INT(ph_ui_trace_ask(dir, "live.trace",
						  PH_WINDOW_ALL, 4242, &b, why,
						  sizeof(why)),
				  0);
			CHECK(strstr(why, "(pid 4242) is not in this trace"));
			CHECK(!strstr(why, "lost events") == !lost);
			CHECK(b.len && strstr(b.buf, "\"pid\":100"));
		}
		unlink(tp);
		ph_buf_release(&b);
	}
	rmdir(path);
	snprintf(path, sizeof(path), "%s/run-1.pftrace", dir);
	unlink(path);
	rmdir(dir);
}

void test_ui__save_body(void)
{
	struct ph_window w;
	char sc[80], why[300], *big;
	const char *ok =
		"{\"from\":100,\"to\":200,\"scenario\":\"check-out_1\"}";

	CHECK_INT(ph_ui_parse_save(ok, strlen(ok), &w, sc, sizeof(sc), why,
				   sizeof(why)),
		  0);
	CHECK_INT(w.from, 100);
	CHECK_INT(w.to, 200);
	CHECK_STR(sc, "check-out_1");
	CHECK_INT(ph_ui_parse_save("{\"from\":1,\"to\":2}", 17, &w, sc,
				   sizeof(sc), why, sizeof(why)),
		  0);
	CHECK_STR(sc, "ui");
#define BAD(body, reason)                                                 \
	do {                                                              \
		CHECK_INT(ph_ui_parse_save(body, strlen(body), &w, sc,    \
					   sizeof(sc), why, sizeof(why)), \
			  400);                                           \
		CHECK(strstr(why, reason));                               \
	} while (0)
	BAD("", "not JSON");
	BAD("{\"from\":1,", "not JSON");
	BAD("[1,2]", "must be an object");
	BAD("{\"from\":2,\"to\":1}", "must be before");
	BAD("{\"from\":2,\"to\":2}", "must be before");
	BAD("{\"from\":\"1\",\"to\":2}", "integers");
	BAD("{\"from\":1.5,\"to\":2}", "integers");
	BAD("{\"to\":2}", "integers");
	BAD("{\"from\":1,\"to\":2,\"scenario\":\"../x\"}", "scenario");
	BAD("{\"from\":1,\"to\":2,\"scenario\":\"\"}", "scenario");
	BAD("{\"from\":1,\"to\":2,\"scenario\":7}", "scenario");
#undef BAD
	/* the size cap answers 413, before parsing */
	big = malloc(PH_UI_MAX_BODY + 2);
	CHECK(big);
	memset(big, ' ', PH_UI_MAX_BODY + 1);
	big[PH_UI_MAX_BODY + 1] = 0;
	CHECK_INT(ph_ui_parse_save(big, PH_UI_MAX_BODY + 1, &w, sc, sizeof(sc),
				   why, sizeof(why)),
		  413);
	free(big);
}

void test_ui__inspector_is_read_only(void)
{
	char why[300], *big;

	CHECK(ph_ui_sql_read_only("SELECT * FROM t", why, sizeof(why)));
	CHECK(ph_ui_sql_read_only("  with x as (select 1) select * from x", why,
				  sizeof(why)));
	CHECK(ph_ui_sql_read_only("(SELECT 1)", why, sizeof(why)));
	CHECK(!ph_ui_sql_read_only("DELETE FROM cart_items", why, sizeof(why)));
	CHECK(strstr(why, "read-only"));
	CHECK(!ph_ui_sql_read_only("drop table t", why, sizeof(why)));
	CHECK(!ph_ui_sql_read_only("", why, sizeof(why)));
	CHECK(!ph_ui_sql_read_only("selectx 1", why, sizeof(why)));
	big = malloc(PH_UI_MAX_SQL + 16);
	CHECK(big);
	memcpy(big, "SELECT ", 7);
	memset(big + 7, '1', PH_UI_MAX_SQL);
	big[PH_UI_MAX_SQL + 7] = 0;
	CHECK(!ph_ui_sql_read_only(big, why, sizeof(why)));
	free(big);
}

void test_ui__query_get(void)
{
	char v[16];

	CHECK(ph_ui_query_get("a=1&table=cart%5Fitems&b", "table", v,
			      sizeof(v)));
	CHECK_STR(v, "cart_items");
	CHECK(ph_ui_query_get("a=1&b", "b", v, sizeof(v)));
	CHECK_STR(v, "");
	CHECK(!ph_ui_query_get("ab=1", "a", v, sizeof(v)));
	CHECK(!ph_ui_query_get("a=0123456789abcdefXYZ", "a", v, sizeof(v)));
	CHECK(ph_ui_query_get("a=%zz+x", "a", v, sizeof(v)));
	CHECK_STR(v, "%zz x");
	CHECK(!ph_ui_query_get(NULL, "a", v, sizeof(v)));
}

void test_ui__assets_embedded(void)
{
	bool html = false, js = false, css = false;

	for (const struct ph_ui_asset *a = ph_ui_assets; a->path; a++) {
		CHECK(a->size > 0);
		CHECK_INT(a->data[a->size], 0);
		if (!strcmp(a->path, "/index.html"))
			html = strstr((const char *)a->data, "/app.js") != NULL;
		if (!strcmp(a->path, "/app.js"))
			js = strstr(a->type, "javascript") != NULL;
		if (!strcmp(a->path, "/app.css"))
			css = true;
	}
	CHECK(html && js && css);
}

/* The page is several scripts: index.html loads every one, app.js last. */
void test_ui__page_loads_every_script(void)
{
	const char *html = NULL, *app;
	size_t scripts = 0;

	for (const struct ph_ui_asset *a = ph_ui_assets; a->path; a++)
		if (!strcmp(a->path, "/index.html"))
			html = (const char *)a->data;
	CHECK(html != NULL);
	app = strstr(html, "<script src=\"/app.js\">");
	CHECK(app != NULL);
	for (const struct ph_ui_asset *a = ph_ui_assets; a->path; a++) {
		char tag[128];
		const char *at;

		if (!strstr(a->type, "javascript"))
			continue;
		scripts++;
		snprintf(tag, sizeof(tag), "<script src=\"%s\">", a->path);
		at = strstr(html, tag);
		CHECK(at != NULL);
		CHECK(at <= app);
	}
	CHECK(scripts > 1);
}

/* A write without the page's token is refused, whatever its body. */
void test_ui__writes_need_the_token(void)
{
	static const char want[] = "0123456789abcdef0123456789abcdef";
	char why[300];
	int st;

	CHECK_INT(ph_ui_route("GET", "/api/token", &st), PH_UI_R_TOKEN);
	CHECK_INT(st, 0);
	ph_ui_route("POST", "/api/token", &st);
	CHECK_INT(st, 405);
	CHECK_INT(ph_ui_check_token(want, want, why, sizeof(why)), 0);
	CHECK_INT(ph_ui_check_token(want, NULL, why, sizeof(why)), 403);
	CHECK(strstr(why, "X-Porthole-Token") != NULL);
	CHECK_INT(ph_ui_check_token(want, "", why, sizeof(why)), 403);
	CHECK_INT(ph_ui_check_token(want, "0123456789abcdef0123456789abcdee",
				    why, sizeof(why)),
		  403);
	CHECK(strstr(why, "not this server's") != NULL);
	CHECK_INT(ph_ui_check_token(want, "0123456789abcdef", why, sizeof(why)),
		  403);
	CHECK_INT(ph_ui_check_token(want, "0123456789abcdef0123456789abcdef0",
				    why, sizeof(why)),
		  403);
}

/*
 * The system lanes' answer from a small ftrace text trace on MONOTONIC:
 * the app's main thread (pid 100) runs 1.000-1.200 s on CPU 0, sleeps in
 * I/O until woken at 1.300, waits 40 ms for CPU 0 while kworker/0:1 (tid
 * 200) holds it, runs from 1.340 to 1.400, then sleeps; CPU 0 goes from
 * 1.8 to 0.6 GHz at 1.250.
 */
void test_ui__trace_system_states_and_freq(void)
{
	static const char txt[] =
		"# trace_clock: mono\n"
		"  <idle>-0  [000] d..2.  1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120\n"
		"  <idle>-0  [000] d..2.  1.010000: cpu_frequency: state=1800000 cpu_id=0\n"
		"  app-100  [000] d..2.  1.200000: sched_switch: prev_comm=app prev_pid=100 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
		"  <idle>-0  [000] d..2.  1.250000: cpu_frequency: state=600000 cpu_id=0\n"
		"  <idle>-0  [000] d..2.  1.290000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kworker/0:1 next_pid=200 next_prio=120\n"
		"  kworker/0:1-200  [000] d..2.  1.300000: sched_waking: comm=app pid=100 prio=120 target_cpu=000\n"
		"  kworker/0:1-200  [000] d..2.  1.340000: sched_switch: prev_comm=kworker/0:1 prev_pid=200 prev_prio=120 prev_state=S ==> next_comm=app next_pid=100 next_prio=120\n"
		"  app-100  [000] d..2.  1.400000: sched_switch: prev_comm=app prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
		"  <idle>-0  [000] d..2.  1.500000: sched_waking: comm=app pid=100 prio=120 target_cpu=000\n";
	char dir[] = "/tmp/ph-ui-sys-XXXXXX", path[128], why[300];
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/run.trace", dir);
	CHECK((f = fopen(path, "w")) != NULL);
	fputs(txt, f);
	fclose(f);
	CHECK_INT(ph_ui_trace_system(dir, "nope", PH_WINDOW_ALL, 100, &b, why,
				     sizeof(why)),
		  PH_ENOENT);
	CHECK_INT(ph_ui_trace_system(dir, "run.trace", PH_WINDOW_ALL, 100, &b,
				     why, sizeof(why)),
		  0);
	/* the main thread, by tid = pid */
	CHECK(strstr(b.buf, "\"thread\":{\"tid\":100,\"name\":\"app\"}"));
	/* running on CPU 0 from 1000 ms for 200 ms */
	CHECK(strstr(b.buf, "[1000.0,200.0,\"running\",\"Running\",0,0,\"\"]"));
	/* in I/O (D), then runnable 40 ms while kworker/0:1 held CPU 0 */
	CHECK(strstr(b.buf, "\"io\",\"D\""));
	CHECK(strstr(b.buf,
		     "[1300.0,40.0,\"runnable\",\"R\",0,200,\"kworker/0:1\"]"));
	/* CPU 0's frequency steps, on the app clock */
	CHECK(strstr(
		b.buf,
		"{\"cpu\":0,\"points\":[[1010.0,1800000.0],[1250.0,600000.0]]}"));
	/* a window: only what overlaps it, the step in force carried in */
	ph_buf_reset(&b);
	CHECK_INT(ph_ui_trace_system(dir, "run.trace",
				     (struct ph_window){ 1320, 1380 }, 100, &b,
				     why, sizeof(why)),
		  0);
	CHECK(!strstr(b.buf, "[1000.0,200.0,"));
	CHECK(strstr(b.buf, "[1300.0,40.0,\"runnable\""));
	CHECK(strstr(b.buf, "[[1320.0,600000.0]]"));
	/* a pid the trace does not hold: no thread, and why */
	ph_buf_reset(&b);
	CHECK_INT(ph_ui_trace_system(dir, "run.trace", PH_WINDOW_ALL, 999, &b,
				     why, sizeof(why)),
		  0);
	CHECK(strstr(b.buf, "\"thread\":null,\"note\":"));
	ph_buf_release(&b);
	unlink(path);
	rmdir(dir);
}
