/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_cli.c: `porthole trace stats` and `porthole trace query`.
 *
 * Exit statuses: 0 success; 1 the trace loaded only in part (corrupt or
 * truncated: the rows before the bad byte are there, the message names the
 * offset); 2 bad arguments, an unreadable file or a failed query.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "ph_log.h"
#include "trace/trace_cli.h"
#include "trace/trace_sql.h"

int ph_trace_cli_load(struct ph_trace *t, const char *path)
{
	int rc;
	char msg[320];

	rc = ph_trace_init(t);
	if (rc) {
		ph_warn("%s: cannot load: %s", path, ph_strerror(rc));
		return 2;
	}
	rc = ph_trace_load_file(t, path);
	if (rc == PH_ECORRUPT || t->truncated) {
		ph_err_format(&t->err, msg, sizeof(msg));
		ph_warn("%s: loaded in part: %s", path, msg);
		return 1;
	}
	if (rc) {
		ph_warn("%s: cannot load: %s", path, ph_strerror(rc));
		return 2;
	}
	return 0;
}

static void print_stats_json(struct ph_trace *t, const char *path, int status,
			     FILE *f)
{
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_jw w;
	struct ph_table *st = &t->tables[PH_T_STATS];

	ph_jw_init(&w, &out);
	ph_jw_obj_begin(&w);
	ph_jw_kv_str(&w, "file", path);
	ph_jw_kv_str(&w, "format", t->format);
	ph_jw_kv_str(&w, "clock", t->clock_name);
	ph_jw_kv_int(&w, "start_ts", t->first_ts);
	ph_jw_kv_int(&w, "end_ts", t->last_ts);
	ph_jw_kv_int(&w, "duration_ns", t->last_ts - t->first_ts);
	ph_jw_kv_int(&w, "input_bytes", (int64_t)t->input_bytes);
	if (!strcmp(t->format, "ftrace")) {
		ph_jw_kv_int(&w, "text_lines", (int64_t)t->text_lines);
		ph_jw_kv_int(&w, "text_lines_rejected",
			     (int64_t)t->text_rejected);
		if (t->text_rejected_at >= 0)
			ph_jw_kv_int(&w, "text_first_rejected_at",
				     t->text_rejected_at);
	}
	ph_jw_kv_bool(&w, "complete", status == 0);
	if (status) {
		ph_jw_key(&w, "error");
		ph_jw_obj_begin(&w);
		ph_jw_kv_int(&w, "offset", (int64_t)t->err.offset);
		ph_jw_kv_str(&w, "message", t->err.msg);
		ph_jw_obj_end(&w);
	}
	ph_jw_key(&w, "tables");
	ph_jw_obj_begin(&w);
	for (int i = 0; i < PH_T_COUNT; i++)
		if (i != PH_T_STATS && i != PH_T_INSTANT)
			ph_jw_kv_int(&w, t->tables[i].name,
				     (int64_t)t->tables[i].rows);
	ph_jw_obj_end(&w);
	ph_jw_key(&w, "stats");
	ph_jw_obj_begin(&w);
	for (size_t r = 0; r < st->rows; r++)
		ph_jw_kv_int(&w, ph_trace_str(t, ph_col_str(st, ST_NAME)[r]),
			     ph_col_i64(st, ST_VALUE)[r]);
	ph_jw_obj_end(&w);
	ph_jw_obj_end(&w);
	if (!ph_jw_finish(&w))
		fprintf(f, "%s\n", out.buf);
	ph_buf_release(&out);
}

int ph_trace_cmd_stats(const struct ph_trace_stats_opts *o, FILE *out)
{
	struct ph_trace t;
	const char *path = o->path;
	int status;

	status = ph_trace_cli_load(&t, path);
	if (status == 2) {
		ph_trace_release(&t);
		return 2;
	}
	if (o->json) {
		print_stats_json(&t, path, status, out);
	} else {
		struct ph_table *st = &t.tables[PH_T_STATS];

		fprintf(out, "trace     %s\n", path);
		fprintf(out, "format    %s\n", t.format);
		fprintf(out, "clock     %s\n", t.clock_name);
		fprintf(out,
			"duration  %.3f s (%" PRId64 " .. %" PRId64 " ns)\n",
			(double)(t.last_ts - t.first_ts) / 1e9, t.first_ts,
			t.last_ts);
		fprintf(out, "read      %zu bytes\n", t.input_bytes);
		if (!strcmp(t.format, "ftrace")) {
			fprintf(out,
				"lines     %" PRIu64 ", %" PRIu64 " not parsed",
				t.text_lines, t.text_rejected);
			if (t.text_rejected_at >= 0)
				fprintf(out, " (the first at byte %" PRId64 ")",
					t.text_rejected_at);
			fprintf(out, "\n");
		}
		if (status)
			fprintf(out,
				"complete  no: stopped at byte %" PRIu64
				": %s\n",
				t.err.offset, t.err.msg);
		else
			fprintf(out, "complete  yes\n");
		fprintf(out, "\ntable                          rows\n");
		for (int i = 0; i < PH_T_COUNT; i++)
			if (i != PH_T_STATS && i != PH_T_INSTANT)
				fprintf(out, "%-30s %zu\n", t.tables[i].name,
					t.tables[i].rows);
		fprintf(out, "\nstat                           value\n");
		for (size_t r = 0; r < st->rows; r++)
			fprintf(out, "%-30s %" PRId64 "\n",
				ph_trace_str(&t, ph_col_str(st, ST_NAME)[r]),
				ph_col_i64(st, ST_VALUE)[r]);
	}
	ph_trace_release(&t);
	return status;
}

static void csv_field(const char *s, FILE *out)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

int ph_trace_cli_run_sql(sqlite3 *db, const char *sql, int mode, FILE *out)
{
	const char *tail = sql;
	int status = 0;

	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		struct ph_buf js = PH_BUF_INIT(PH_BUF_NO_CAP);
		struct ph_jw w;
		int rc, ncol;
		bool header = true;

		if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
			fprintf(stderr, "porthole trace query: %s\n",
				sqlite3_errmsg(db));
			return 2;
		}
		if (!st)
			continue;
		ncol = sqlite3_column_count(st);
		if (mode == PH_TRACE_ROWS_JSON) {
			ph_jw_init(&w, &js);
			ph_jw_arr_begin(&w);
		}
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (mode == PH_TRACE_ROWS_JSON) {
				ph_jw_obj_begin(&w);
				for (int c = 0; c < ncol; c++) {
					ph_jw_key(&w,
						  sqlite3_column_name(st, c));
					switch (sqlite3_column_type(st, c)) {
					case SQLITE_INTEGER:
						ph_jw_int(&w,
							  sqlite3_column_int64(
								  st, c));
						break;
					case SQLITE_FLOAT:
						ph_jw_double(
							&w,
							sqlite3_column_double(
								st, c));
						break;
					case SQLITE_NULL: ph_jw_null(&w); break;
					default:
						ph_jw_str(
							&w,
							(const char *)
								sqlite3_column_text(
									st, c));
					}
				}
				ph_jw_obj_end(&w);
				continue;
			}
			if (header) {
				for (int c = 0; c < ncol; c++) {
					if (c)
						fputc(mode ? ',' : '|', out);
					if (mode)
						csv_field(sqlite3_column_name(
								  st, c),
							  out);
					else
						fputs(sqlite3_column_name(st,
									  c),
						      out);
				}
				fputc('\n', out);
				header = false;
			}
			for (int c = 0; c < ncol; c++) {
				const char *v =
					(const char *)sqlite3_column_text(st,
									  c);

				if (c)
					fputc(mode ? ',' : '|', out);
				if (mode)
					csv_field(v, out);
				else
					fputs(v ? v : "", out);
			}
			fputc('\n', out);
		}
		if (rc != SQLITE_DONE) {
			fprintf(stderr, "porthole trace query: %s\n",
				sqlite3_errmsg(db));
			status = 2;
		}
		if (mode == PH_TRACE_ROWS_JSON) {
			ph_jw_arr_end(&w);
			if (!ph_jw_finish(&w))
				fprintf(out, "%s\n", js.buf);
		}
		ph_buf_release(&js);
		sqlite3_finalize(st);
		if (status)
			break;
	}
	return status;
}

int ph_trace_cmd_query(const struct ph_trace_query_opts *o, FILE *out)
{
	struct ph_trace t;
	int status, rc;
	sqlite3 *db;

	status = ph_trace_cli_load(&t, o->path);
	if (status == 2) {
		ph_trace_release(&t);
		return 2;
	}
	if (ph_trace_sql_open(&t, &db)) {
		ph_trace_release(&t);
		return 2;
	}
	rc = ph_trace_cli_run_sql(db, o->sql, o->mode, out);
	sqlite3_close(db);
	ph_trace_release(&t);
	return rc ? rc : status;
}
