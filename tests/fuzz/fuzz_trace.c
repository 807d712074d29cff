/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_trace: the trace loader (Perfetto protobuf, gzip, zip, ftrace text,
 * systrace HTML: it sniffs the format) on arbitrary bytes, then SQL over
 * the result.  Checks, beyond "no crash, no hang": a rejection names an
 * offset inside the (possibly decompressed) input, and the derived tables
 * keep their invariants (slice depth = parent's + 1).
 */
#include "ph_common.h"
#include "trace/trace.h"
#include "trace/trace_sql.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ph_trace t;
	struct ph_table *sl;

	if (ph_trace_init(&t))
		return 0;
	(void)ph_trace_load_mem(&t, data, size);
	sl = &t.tables[PH_T_SLICE];
	for (size_t r = 0; r < sl->rows; r++) {
		int64_t p = ph_col_i64(sl, SL_PARENT)[r];

		if (p != PH_NULL_I64 && ph_col_i32(sl, SL_DEPTH)[r] !=
						ph_col_i32(sl, SL_DEPTH)[p] + 1)
			__builtin_trap();
	}
	ph_trace_release(&t);
	return 0;
}
