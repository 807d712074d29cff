/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_trace_config: porthole-trace.yml (libyaml, then our walk over the
 * document) on arbitrary bytes, against a small detector set.  Checks,
 * beyond "no crash, no leak": every rejection names where, as
 * "name:line:column (byte N)" with N inside the input.
 */
#include "ph_common.h"
#include "trace/trace_detect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char det[] =
		"-- @id demo\n-- @param: min_ms = 16\n"
		"-- @param: label = 'x'\n"
		"-- @param: on = true\nSELECT 1 AS location\n";
	struct ph_detset s;
	char err[512];
	const char *at;
	unsigned long line, col, byte;

	memset(&s, 0, sizeof(s));
	s.d = calloc(1, sizeof(*s.d));
	if (!s.d || ph_detector_parse(&s.d[0], det, sizeof(det) - 1, "demo.sql",
				      err, sizeof(err)))
		__builtin_trap();
	s.n = 1;
	err[0] = 0;
	if (ph_detset_config_mem(&s, "c.yml", (const char *)data, size, err,
				 sizeof(err))) {
		at = strncmp(err, "c.yml:", 6) ? NULL : err + 6;
		if (!at ||
		    sscanf(at, "%lu:%lu (byte %lu)", &line, &col, &byte) != 3 ||
		    byte > size)
			__builtin_trap();
	}
	ph_detset_release(&s);
	return 0;
}
