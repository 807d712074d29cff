/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_cli.h: the `porthole trace` subcommands, called from
 * src/cmd/cmd-trace.c.  Each takes argv with argv[0] = the subcommand and
 * returns the exit status (0 ok, 1 found something / partial input, 2 bad
 * arguments or failure); none of them exits.
 */
#ifndef PH_TRACE_CLI_H
#define PH_TRACE_CLI_H

#include "trace/trace.h"

#include <sqlite3.h>

int ph_trace_cli_stats(int argc, char **argv);
int ph_trace_cli_query(int argc, char **argv);
int ph_trace_cli_analyze(int argc, char **argv);
int ph_trace_cli_compare(int argc, char **argv);
int ph_trace_cli_record(int argc, char **argv);
int ph_trace_cli_doctor(int argc, char **argv);
int ph_trace_cli_ask(int argc, char **argv);
/* trace_tools.c: scenario candidates, name masks, thresholds */
int ph_trace_cli_mark(int argc, char **argv);
int ph_trace_cli_names(int argc, char **argv);
int ph_trace_cli_calibrate(int argc, char **argv);

/* The doctor's built-in fixture (a Perfetto protobuf trace), into out. */
int ph_trace_doctor_fixture(struct ph_buf *out) PH_WUR;

/* Loads path into t (initialised here): 0, 1 partial (warned), 2 failed. */
int ph_trace_cli_load(struct ph_trace *t, const char *path);
/* Prints the rows of every statement in sql: mode 0 text, 1 CSV, 2 JSON. */
int ph_trace_cli_run_sql(sqlite3 *db, const char *sql, int mode);

#endif
