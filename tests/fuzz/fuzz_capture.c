/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_capture: a capture file (what `report` and `compare` read) on
 * arbitrary bytes.  Checks, beyond "no crash, no leak, no undefined
 * behaviour": a refusal says why; an accepted capture gives a text, JSON
 * and HTML report, the JSON report is itself JSON, and comparing the
 * capture with itself finds no regression.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "host/capture.h"
#include "host/compare.h"
#include "host/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ph_arena arena, back;
	struct ph_buf out = PH_BUF_INIT(64 << 20);
	struct ph_compare_result r;
	const struct ph_json *cap;
	struct ph_json *again;
	struct ph_err err;
	char why[300] = "";

	ph_arena_init(&arena, 0, (size_t)256 << 20);
	if (ph_capture_parse("fuzz", (const char *)data, size, &arena, &cap,
			     why, sizeof(why))) {
		if (!why[0])
			__builtin_trap(); /* refused without a reason */
		goto out;
	}
	if (ph_report_text(cap, &out) && out.len == 0)
		goto out; /* out of room: said by the caller */
	ph_buf_reset(&out);
	if (!ph_report_json(cap, &out)) {
		ph_arena_init(&back, 0, (size_t)256 << 20);
		if (ph_json_parse(&back, out.buf, out.len, &again, &err))
			__builtin_trap(); /* report --json wrote bad JSON */
		ph_arena_release(&back);
	}
	ph_buf_reset(&out);
	(void)ph_report_html(cap, &out);
	ph_buf_reset(&out);
	memset(&r, 0, sizeof(r));
	if (!ph_compare(cap, cap, &out, &r) && r.regressions)
		__builtin_trap(); /* a capture regressed against itself */
out:
	ph_buf_release(&out);
	ph_arena_release(&arena);
	return 0;
}
