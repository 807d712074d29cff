/*
 * trace_spanjoin.c: the SPAN_JOIN virtual table module.
 *
 * NOT IMPLEMENTED YET: registration is a no-op, so
 * `CREATE VIRTUAL TABLE x USING SPAN_JOIN(...)` fails with "no such
 * module".  _cpu_in_slice is computed with an overlap join instead (valid
 * because thread_state rows of one thread never overlap).
 */
#include "ph_common.h"
#include "trace/trace_sql.h"

int ph_trace_spanjoin_register(sqlite3 *db)
{
	(void)db;
	return 0;
}
