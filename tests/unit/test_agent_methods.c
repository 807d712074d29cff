/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_agent_methods.c: the agent's windowed and filtered methods answer
 * for what they were asked and say what they no longer hold (issue 18):
 * `logs` counts the lines its ring let go, and a string parameter that is
 * "" or "null" counts as absent, as in the published runtime
 * (docs/protocol.md section 2).  A real agent on its own abstract socket,
 * asked through the test client.
 */
#include "ph_common.h"
#include "harness.h"
#include "ph_client.h"
#include "ph_clock.h"
#include "ph_json.h"
#include "porthole.h"

#if PH_TEST_GLIBC_LIBS /* SQLite: not in the musl build (Makefile) */
#include <sqlite3.h>
#endif
#include <unistd.h>

static char sock[108];

/* Starts an agent holding `ring` events, with nothing of its own sent. */
static int start(unsigned ring)
{
	struct porthole_config cfg = {
		.app_id = "com.example.methods",
		.version_name = "1.0-unit",
		.data_dir = ph_test_tmpdir(),
		.flags = PORTHOLE_NO_WATCHDOG | PORTHOLE_NO_DEVICE |
			 PORTHOLE_NO_MEMORY | PORTHOLE_NO_INTEGRATION_CHECK,
		.ring_size = ring,
	};

	porthole_stop(); /* left running by a test that failed half-way */
	snprintf(sock, sizeof(sock), "porthole.unit-methods-%d-%lld",
		 (int)getpid(), (long long)ph_clock_mono_ns());
	cfg.socket_name = sock;
	return porthole_start_build(&cfg, 1);
}

/* Asks one method; its `result`, parsed in a, or NULL. */
static const struct ph_json *ask(struct ph_client_conn *c, struct ph_arena *a,
				 const char *method, const char *params)
{
	struct ph_buf line = PH_BUF_INIT(1 << 24);
	struct ph_json *v = NULL;
	char *copy = NULL;

	if (ph_client_call(c, 7, method, params, &line, NULL, 5000) == 1)
		copy = ph_arena_strndup(a, line.buf, line.len);
	if (copy && ph_json_parse(a, copy, line.len, &v, NULL))
		v = NULL;
	ph_buf_release(&line);
	return v ? ph_json_get(v, "result") : NULL;
}

static int64_t int_of(const struct ph_json *obj, const char *key)
{
	int64_t v = -1;

	ph_json_as_int(ph_json_get(obj, key), &v);
	return v;
}

/* Entries of a `logs` answer, -1 when there is none. */
static int64_t entries(const struct ph_json *r)
{
	const struct ph_json *e = ph_json_get(r, "entries");

	return ph_json_is(e, PH_JSON_ARRAY) ? (int64_t)e->n : -1;
}

/*
 * Polls `method` until cond holds on its result (events reach the
 * agent's state on its writer thread): the last result.
 */
static const struct ph_json *ask_until(struct ph_client_conn *c,
				       struct ph_arena *a, const char *method,
				       const char *params,
				       bool (*cond)(const struct ph_json *))
{
	const struct ph_json *r = NULL;

	for (int i = 0; i < 400; i++) {
		r = ask(c, a, method, params);
		if (r && cond(r))
			break;
		usleep(10 * 1000);
	}
	return r;
}

static bool three_lines(const struct ph_json *r)
{
	return entries(r) == 3;
}

static bool two_nodes(const struct ph_json *r)
{
	return int_of(r, "totalNodes") == 2;
}

static bool all_evicted(const struct ph_json *r)
{
	return int_of(r, "evicted") == 3;
}

/* An agent holding three logs (two tagged Net) and two recomposed nodes
 * (one on screen cart), connected to as c once it answers with them. */
static void start_with_three_logs_and_two_nodes(struct ph_client_conn *c,
						struct ph_arena *a)
{
	CHECK_INT(start(0), PORTHOLE_OK);
	porthole_log_str(PORTHOLE_INFO, "Net", "one");
	porthole_log_str(PORTHOLE_WARN, "Cart", "two");
	porthole_log_str(PORTHOLE_ERROR, "Net", "three");
	porthole_recompose("Cart.Row#1", "Cart.Row", "cart", NULL, 0);
	porthole_recompose("Home.Top#1", "Home.Top", "home", NULL, 0);
	CHECK_INT(ph_client_connect(c, sock, 2000), 0);
	CHECK_INT(entries(ask_until(c, a, "logs", "{}", three_lines)), 3);
	CHECK_INT(int_of(ask_until(c, a, "recompositions", "{}", two_nodes),
			 "totalNodes"),
		  2);
}

void test_agent_methods__empty_and_null_strings_are_absent(void)
{
	struct ph_client_conn c;
	struct ph_arena a;
	static const char *const none[] = { "\"\"", "\"null\"" };

	ph_arena_init(&a, 0, SIZE_MAX);
	start_with_three_logs_and_two_nodes(&c, &a);
	/* a real filter still filters */
	CHECK_INT(entries(ask(&c, &a, "logs", "{\"tag\":\"net\"}")), 2);
	CHECK_INT(int_of(ask(&c, &a, "recompositions", "{\"screen\":\"cart\"}"),
			 "totalNodes"),
		  1);
	for (size_t i = 0; i < PH_ARRAY_SIZE(none); i++) {
		char p[96];

		snprintf(p, sizeof(p), "{\"tag\":%s,\"contains\":%s}", none[i],
			 none[i]);
		CHECK_INT(entries(ask(&c, &a, "logs", p)), 3);
		snprintf(p, sizeof(p), "{\"screen\":%s}", none[i]);
		CHECK_INT(int_of(ask(&c, &a, "recompositions", p),
				 "totalNodes"),
			  2);
	}
	ph_client_close(&c);
	porthole_stop();
	ph_arena_release(&a);
}

void test_agent_methods__logs_counts_what_its_ring_let_go(void)
{
	struct ph_client_conn c;
	struct ph_arena a;
	const struct ph_json *r, *notes;
	bool said = false;

	ph_arena_init(&a, 0, SIZE_MAX);
	/* A ring of 64 events: three log lines, then 200 marks over them. */
	CHECK_INT(start(64), PORTHOLE_OK);
	porthole_log_str(PORTHOLE_INFO, "Net", "one");
	porthole_log_str(PORTHOLE_WARN, "Cart", "two");
	porthole_log_str(PORTHOLE_ERROR, "Net", "three");
	for (int i = 0; i < 200; i++)
		porthole_mark("burst", NULL);
	CHECK_INT(ph_client_connect(&c, sock, 2000), 0);
	r = ask_until(&c, &a, "logs", "{}", all_evicted);
	CHECK_INT(int_of(r, "evicted"), 3);
	CHECK_INT(entries(r), 0);
	notes = ph_json_get(r, "notes");
	for (uint32_t i = 0; notes && i < notes->n; i++)
		said |= ph_json_is(&notes->u.items[i], PH_JSON_STRING) &&
			memmem(notes->u.items[i].u.s, notes->u.items[i].n,
			       "3 older log lines are no longer held", 36);
	CHECK(said);
	ph_client_close(&c);
	porthole_stop();
	ph_arena_release(&a);
}

static int64_t events(const struct ph_json *r)
{
	const struct ph_json *e = ph_json_get(r, "events");

	return ph_json_is(e, PH_JSON_ARRAY) ? (int64_t)e->n : -1;
}

/*
 * A sinceMs so negative that now - sinceMs passes INT64_MAX is a floor
 * after every event, an empty window: the subtraction overflowed (undefined
 * behaviour, in practice a floor before every event).  The fuzz target's
 * reproducer: tests/fuzz/corpus/agent_methods/regress-since-ms-overflow.
 */
void test_agent_methods__most_negative_since_ms_is_an_empty_window(void)
{
	struct ph_client_conn c;
	struct ph_arena a;
	static const char p[] = "{\"sinceMs\":-9223372036854775808}";

	ph_arena_init(&a, 0, SIZE_MAX);
	start_with_three_logs_and_two_nodes(&c, &a);
	CHECK_INT(entries(ask(&c, &a, "logs", p)), 0);
	CHECK_INT(int_of(ask(&c, &a, "recompositions", p), "totalNodes"), 0);
	CHECK_INT(events(ask(&c, &a, "timeline", p)), 0);
	/* the other end: a floor before every event */
	CHECK_INT(entries(ask(&c, &a, "logs",
			      "{\"sinceMs\":9223372036854775807}")),
		  3);
	ph_client_close(&c);
	porthole_stop();
	ph_arena_release(&a);
}

/* A column holding a button. */
static void two_node_tree(struct porthole_sem *t, void *ctx)
{
	struct porthole_sem_node column = { .role = "Column" };
	struct porthole_sem_node button = { .role = "Button", .text = "Pay" };

	(void)ctx;
	porthole_sem_begin(t, &column);
	porthole_sem_begin(t, &button);
	porthole_sem_end(t);
	porthole_sem_end(t);
}

/*
 * semantics_tree's maxNodes past what an int holds asks for every node:
 * it was cut to its low 32 bits (2^32 became 0, and the answer had no
 * root).  The fuzz target's reproducer:
 * tests/fuzz/corpus/agent_methods/regress-max-nodes-past-int.
 */
void test_agent_methods__max_nodes_past_int_is_every_node(void)
{
	struct ph_client_conn c;
	struct ph_arena a;
	const struct ph_json *r;

	ph_arena_init(&a, 0, SIZE_MAX);
	CHECK_INT(start(0), PORTHOLE_OK);
	porthole_set_semantics_provider(two_node_tree, NULL);
	CHECK_INT(ph_client_connect(&c, sock, 2000), 0);
	r = ask(&c, &a, "semantics_tree", "{\"maxNodes\":4294967296}");
	CHECK(ph_json_is(ph_json_get(r, "root"), PH_JSON_OBJECT));
	CHECK(ph_json_is(ph_json_get(r, "truncated"), PH_JSON_FALSE));
	r = ask(&c, &a, "semantics_tree", "{\"maxNodes\":1}");
	CHECK(ph_json_is(ph_json_get(r, "truncated"), PH_JSON_TRUE));
	porthole_set_semantics_provider(NULL, NULL);
	ph_client_close(&c);
	porthole_stop();
	ph_arena_release(&a);
}

#if PH_TEST_GLIBC_LIBS
/*
 * A table whose name holds a double quote is read like any other: the
 * inspector quotes names as SQL does ("say ""hi"""), where it refused
 * them (db_rows: "no such table") or could not count them (db_tables:
 * rows -1).
 */
void test_agent_methods__a_table_named_with_a_quote_is_read(void)
{
	struct ph_client_conn c;
	struct ph_arena a;
	const struct ph_json *r, *tables;
	char path[512];
	sqlite3 *db = NULL;

	ph_arena_init(&a, 0, SIZE_MAX);
	snprintf(path, sizeof(path), "%s/quoted.db", ph_test_tmpdir());
	CHECK_INT(start(0), PORTHOLE_OK);
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db,
			       "CREATE TABLE \"say \"\"hi\"\"\"(x);"
			       "INSERT INTO \"say \"\"hi\"\"\" VALUES(1),(2);",
			       NULL, NULL, NULL),
		  SQLITE_OK);
	CHECK_INT(porthole_sqlite_attach(db), PORTHOLE_OK);
	CHECK_INT(ph_client_connect(&c, sock, 2000), 0);
	r = ask(&c, &a, "db_rows",
		"{\"database\":\"quoted.db\",\"table\":\"say \\\"hi\\\"\"}");
	CHECK(ph_json_is(ph_json_get(r, "rows"), PH_JSON_ARRAY));
	CHECK_INT(ph_json_get(r, "rows")->n, 2);
	CHECK_INT(int_of(r, "total"), 2);
	r = ask(&c, &a, "db_tables", "{\"database\":\"quoted.db\"}");
	tables = ph_json_get(r, "tables");
	CHECK(ph_json_is(tables, PH_JSON_ARRAY) && tables->n == 1);
	CHECK_INT(int_of(&tables->u.items[0], "rows"), 2);
	sqlite3_close(db);
	ph_client_close(&c);
	porthole_stop();
	ph_arena_release(&a);
}

/*
 * SQLite does not bound a table's name, and neither does the inspector:
 * a 300-byte name is listed whole and counted, and its rows are read
 * (db_tables cut names at 127 bytes and counted such a table -1; db_rows
 * refused it as "table is required").  A name holding a NUL is no table's,
 * though strcmp would take "t\0x" for "t".
 */
void test_agent_methods__a_long_table_name_is_read_whole(void)
{
	struct ph_client_conn c;
	struct ph_arena a;
	const struct ph_json *r, *tables;
	char path[512], name[301], sql[800], params[512];
	sqlite3 *db = NULL;

	memset(name, 'n', 300);
	name[300] = '\0';
	ph_arena_init(&a, 0, SIZE_MAX);
	snprintf(path, sizeof(path), "%s/long.db", ph_test_tmpdir());
	CHECK_INT(start(0), PORTHOLE_OK);
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE %s(x); INSERT INTO %s VALUES(1),(2),(3);"
		 "CREATE TABLE t(x);",
		 name, name);
	CHECK_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	CHECK_INT(porthole_sqlite_attach(db), PORTHOLE_OK);
	CHECK_INT(ph_client_connect(&c, sock, 2000), 0);
	r = ask(&c, &a, "db_tables", "{\"database\":\"long.db\"}");
	tables = ph_json_get(r, "tables");
	CHECK(ph_json_is(tables, PH_JSON_ARRAY) && tables->n == 2);
	CHECK(ph_json_streq(ph_json_get(&tables->u.items[0], "name"), name));
	CHECK_INT(int_of(&tables->u.items[0], "rows"), 3);
	snprintf(params, sizeof(params),
		 "{\"database\":\"long.db\",\"table\":\"%s\"}", name);
	r = ask(&c, &a, "db_rows", params);
	CHECK(ph_json_is(ph_json_get(r, "rows"), PH_JSON_ARRAY));
	CHECK_INT(ph_json_get(r, "rows")->n, 3);
	CHECK_INT(int_of(r, "total"), 3);
	r = ask(&c, &a, "db_rows",
		"{\"database\":\"long.db\",\"table\":\"t\\u0000x\"}");
	CHECK(r == NULL); /* an error, not t's rows */
	sqlite3_close(db);
	ph_client_close(&c);
	porthole_stop();
	ph_arena_release(&a);
}
#endif
