/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SPAN_JOIN: intersections per partition, one side unpartitioned, the
 * partition pushed down from a join, and the overlap check that refuses
 * to double count.
 */
#include "ph_common.h"
#include "harness.h"
#include "trace/trace_sql.h"

static sqlite3 *sj_db(void)
{
	sqlite3 *db = NULL;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		return NULL;
	if (ph_trace_spanjoin_register(db, 1000)) {
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

static int exec(sqlite3 *db, const char *sql, char *err, size_t n)
{
	char *e = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &e);

	if (err)
		snprintf(err, n, "%s", e ? e : "");
	sqlite3_free(e);
	return rc;
}

static int64_t one(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -12345;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return v;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

void test_trace__spanjoin_partitioned(void)
{
	sqlite3 *db = sj_db();
	char err[512];

	CHECK(db);
	CHECK_INT(
		exec(db,
		     "CREATE TABLE a(ts, dur, utid, name);"
		     "INSERT INTO a VALUES (0, 100, 1, 'x'), (200, 100, 1, "
		     "'y'), (0, 50, 2, 'z'), (900, -1, 3, 'open');"
		     "CREATE TABLE b(ts, dur, utid, state);"
		     "INSERT INTO b VALUES (50, 200, 1, 'Running'), (260, 10, "
		     "1, 'R'), (10, 10, 2, 'S'), (40, 100, 2, 'D'), (950, 20, "
		     "3, 'Running'), (0, 1000, 4, 'lonely');"
		     "CREATE VIRTUAL TABLE j USING SPAN_JOIN(a PARTITIONED "
		     "utid, b PARTITIONED utid);",
		     err, sizeof(err)),
		SQLITE_OK);
	/* utid 1: x∩[50,250) = [50,100), y∩[50,250) = [200,250), y∩[260,270);
	 * utid 2: [10,20) and [40,50); utid 3: [950,970); utid 4: nothing */
	CHECK_INT(one(db, "SELECT COUNT(*) FROM j"), 6);
	CHECK_INT(one(db, "SELECT SUM(dur) FROM j WHERE utid = 1"), 110);
	CHECK_INT(one(db, "SELECT SUM(dur) FROM j WHERE name = 'y'"), 60);
	CHECK_INT(one(db, "SELECT SUM(dur) FROM j WHERE utid = 2"), 20);
	CHECK_INT(one(db, "SELECT ts FROM j WHERE state = 'D'"), 40);
	/* an open row (dur -1) runs to the end given at registration */
	CHECK_INT(one(db, "SELECT dur FROM j WHERE name = 'open'"), 20);
	CHECK_INT(one(db, "SELECT COUNT(*) FROM j WHERE utid = 4"), 0);
	/* the partition pushed down from a join (j as the inner loop) */
	CHECK_INT(one(db, "SELECT SUM(j.dur) FROM (SELECT 1 AS u UNION ALL "
			  "SELECT 2) k JOIN j ON j.utid = k.u"),
		  130);
	/* run twice in one session */
	CHECK_INT(one(db, "SELECT SUM(dur) FROM j"), 150);
	CHECK_INT(one(db, "SELECT SUM(dur) FROM j"), 150);
	sqlite3_close(db);
}

void test_trace__spanjoin_one_side_unpartitioned(void)
{
	sqlite3 *db = sj_db();

	CHECK(db);
	CHECK_INT(exec(db,
		       "CREATE TABLE a(ts, dur, cpu, v);"
		       "INSERT INTO a VALUES (0, 100, 0, 1), (0, 100, 1, 2);"
		       "CREATE TABLE w(ts, dur);"
		       "INSERT INTO w VALUES (50, 30), (90, 100);"
		       "CREATE VIRTUAL TABLE j USING SPAN_JOIN(a PARTITIONED "
		       "cpu, w);",
		       NULL, 0),
		  SQLITE_OK);
	CHECK_INT(one(db, "SELECT COUNT(*) FROM j"), 4);
	CHECK_INT(one(db, "SELECT SUM(dur) FROM j WHERE cpu = 1"), 40);
	sqlite3_close(db);
}

void test_trace__spanjoin_overlap_is_an_error(void)
{
	sqlite3 *db = sj_db();
	char err[512];
	sqlite3_stmt *st;

	CHECK(db);
	CHECK_INT(exec(db,
		       "CREATE TABLE a(ts, dur, utid);"
		       "INSERT INTO a VALUES (0, 100, 7), (50, 100, 7), (0, "
		       "100, 8);"
		       "CREATE TABLE b(ts, dur, utid);"
		       "INSERT INTO b VALUES (0, 1000, 7), (0, 1000, 8);"
		       "CREATE VIRTUAL TABLE j USING SPAN_JOIN(a PARTITIONED "
		       "utid, b PARTITIONED utid);",
		       err, sizeof(err)),
		  SQLITE_OK);
	/* the field's module would answer 200 here: 50 ns counted twice */
	CHECK(sqlite3_prepare_v2(db, "SELECT SUM(dur) FROM j", -1, &st, NULL) ==
	      SQLITE_OK);
	CHECK(sqlite3_step(st) != SQLITE_ROW);
	sqlite3_finalize(st);
	CHECK(exec(db, "SELECT SUM(dur) FROM j", err, sizeof(err)) !=
	      SQLITE_OK);
	CHECK(strstr(err, "SPAN_JOIN: a has overlapping intervals") != NULL);
	CHECK(strstr(err, "partition utid = 7") != NULL);
	CHECK(strstr(err, "[0, 100) and [50, 150)") != NULL);
	/* the partition that is sound still answers when asked alone */
	CHECK_INT(one(db, "SELECT SUM(dur) FROM j WHERE utid = 8"), 100);
	sqlite3_close(db);
}

void test_trace__spanjoin_bad_arguments(void)
{
	sqlite3 *db = sj_db();
	char err[512];

	CHECK(db);
	CHECK_INT(exec(db,
		       "CREATE TABLE a(ts, dur, utid, x);"
		       "CREATE TABLE b(ts, dur, cpu, x);"
		       "CREATE TABLE c(ts, utid);",
		       NULL, 0),
		  SQLITE_OK);
	CHECK(exec(db,
		   "CREATE VIRTUAL TABLE j1 USING SPAN_JOIN(a PARTITIONED "
		   "utid, b PARTITIONED cpu)",
		   err, sizeof(err)) != SQLITE_OK);
	CHECK(strstr(err, "same column") != NULL);
	CHECK(exec(db, "CREATE VIRTUAL TABLE j2 USING SPAN_JOIN(a, b)", err,
		   sizeof(err)) != SQLITE_OK);
	CHECK(strstr(err, "'x' is in both") != NULL);
	CHECK(exec(db,
		   "CREATE VIRTUAL TABLE j3 USING SPAN_JOIN(a PARTITIONED "
		   "utid, c PARTITIONED utid)",
		   err, sizeof(err)) != SQLITE_OK);
	CHECK(strstr(err, "c has no column 'dur'") != NULL);
	CHECK(exec(db,
		   "CREATE VIRTUAL TABLE j4 USING SPAN_JOIN(a PARTITION utid, "
		   "b)",
		   err, sizeof(err)) != SQLITE_OK);
	CHECK(exec(db, "CREATE VIRTUAL TABLE j5 USING SPAN_JOIN(a, nope)", err,
		   sizeof(err)) != SQLITE_OK);
	CHECK(strstr(err, "nope") != NULL);
	sqlite3_close(db);
}

/*
 * Out of memory at every step of a join: SQLite's hard heap limit is
 * raised from just above what the tables hold until the join answers.
 * Each refusal is SQLITE_NOMEM with the arrays consistent (ASan checks
 * every write, and the cursor is reused across the refusals), and the
 * answer once memory suffices is the one without a limit.
 */
void test_trace__spanjoin_out_of_memory_at_each_step(void)
{
	sqlite3 *db = sj_db();
	sqlite3_stmt *st = NULL;
	int64_t want, got = -1, base;
	int refused = 0, rc = SQLITE_NOMEM;

	CHECK(db);
	CHECK_INT(
		exec(db,
		     "CREATE TABLE a(ts, dur, utid, name);"
		     "CREATE TABLE b(ts, dur, utid, state);"
		     "WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 "
		     "FROM i WHERE n < 2999) "
		     "INSERT INTO a SELECT n * 10, 8, n % 3, 'x' || n FROM i;"
		     "WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 "
		     "FROM i WHERE n < 2999) "
		     "INSERT INTO b SELECT n * 10 + 4, 8, n % 3, 'R' FROM i;"
		     "CREATE VIRTUAL TABLE j USING SPAN_JOIN(a PARTITIONED "
		     "utid, b PARTITIONED utid);",
		     NULL, 0),
		SQLITE_OK);
	want = one(db, "SELECT SUM(dur) FROM j");
	CHECK_INT(want, 3000 * 4);
	CHECK(sqlite3_prepare_v2(db, "SELECT SUM(dur) FROM j", -1, &st, NULL) ==
	      SQLITE_OK);
	base = sqlite3_memory_used();
	for (int64_t lim = base + 1024; rc == SQLITE_NOMEM; lim += 4096) {
		sqlite3_hard_heap_limit64(lim);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			got = sqlite3_column_int64(st, 0);
		else
			refused += rc == SQLITE_NOMEM;
		sqlite3_reset(st);
	}
	sqlite3_hard_heap_limit64(0);
	CHECK_INT(rc, SQLITE_ROW);
	CHECK_INT(got, want);
	CHECK(refused > 10); /* the limit bit at many points of the join */
	sqlite3_finalize(st);
	sqlite3_close(db);
}
