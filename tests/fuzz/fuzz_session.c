/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_session: a recorded session (events.ndjson, what `report`, the
 * disk fallbacks and `--no-link` read) on arbitrary bytes, through the
 * ingest, the findings engine and its coverage, the capture writer and
 * the report.  Checks, beyond "no crash, no leak, no undefined
 * behaviour": the capture written from any input is one the capture
 * reader accepts, and a check is never both quiet and not seen.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "host/capture.h"
#include "host/findings.h"
#include "host/ingest.h"
#include "host/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ph_ingest in;
	struct ph_engine *e;
	struct ph_analysis *a;
	struct ph_arena arena;
	struct ph_buf out = PH_BUF_INIT(64 << 20);
	struct ph_capture_info info = { .scenario = "fuzz", .driver = "fuzz" };
	const struct ph_json *cap;
	struct ph_jw jw;
	size_t at = 0;
	char why[300];

	ph_ingest_init(&in, NULL, NULL);
	e = ph_engine_new(PH_WINDOW_ALL, &in);
	if (!e)
		return 0;
	in.on_event = ph_engine_feed_cb;
	in.ctx = e;
	ph_arena_init(&arena, 0, (size_t)256 << 20);
	while (at < size) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t n = nl ? (size_t)(nl - (data + at)) : size - at;

		(void)ph_ingest_line(&in, &arena, (const char *)data + at, n);
		at += n + 1;
	}
	a = ph_engine_analyze(e);
	if (a) {
		if (a->cov.complete ? a->nnot_seen != 0 : a->nquiet != 0)
			__builtin_trap(); /* quiet and not seen at once */
		ph_jw_init(&jw, &out);
		ph_capture_write(a, &info, &jw);
		if (!ph_jw_finish(&jw)) {
			struct ph_arena back;

			ph_arena_init(&back, 0, (size_t)256 << 20);
			if (ph_capture_parse("fuzz", out.buf, out.len, &back,
					     &cap, why, sizeof(why)))
				__builtin_trap(); /* we wrote a bad capture */
			ph_buf_reset(&out);
			(void)ph_report_text(cap, &out);
			ph_arena_release(&back);
		}
		ph_analysis_free(a);
	}
	ph_engine_free(e);
	ph_arena_release(&arena);
	ph_ingest_release(&in);
	ph_buf_release(&out);
	return 0;
}
