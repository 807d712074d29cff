/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_heap: the hprof reader and every analysis step on arbitrary bytes.
 *
 * Checks, beyond "no crash, no hang, no out-of-bounds read": a dump that
 * is refused or read partially names an offset inside the input; every
 * step (graph, reachability, dominators, leaks with their rendering and
 * their `leak` events) completes on whatever was read, and the events are
 * whole lines.  Seeds are the planted-leak dumps from
 * tests/unit/test_heap_planted.h (tests/golden/heap/).
 */
#include "ph_common.h"
#include "heap/heap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ph_heap h;
	struct ph_leak_result res;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	uint8_t *reach = NULL;
	/* a private copy, so reading one byte past the end is caught */
	uint8_t *copy = malloc(size ? size : 1);
	int rc;

	memcpy(copy, data, size);
	ph_heap_init(&h);
	rc = ph_heap_open_mem(&h, copy, size);
	if (rc || h.partial) {
		if (h.err.offset > size)
			__builtin_trap();
	}
	if (!rc) {
		if (ph_heap_leaks(&h, NULL, &res))
			goto done;
		for (size_t i = 0; i < res.ntraces; i++)
			if (ph_leak_trace_render(&h, &res.traces[i], true,
						 &out))
				break;
		ph_buf_reset(&out);
		if (!ph_heap_leak_events(&h, &res, "fuzz.hprof", 1, &out) &&
		    out.len && out.buf[out.len - 1] != '\n')
			__builtin_trap();
		if (!ph_heap_reachability(&h, &reach))
			free(reach);
		if (h.nobj) {
			struct ph_leak_trace t;

			(void)ph_heap_path_trace(&h, h.nobj - 1, &t);
		}
	}
done:
	ph_buf_release(&out);
	ph_heap_release(&h);
	free(copy);
	return 0;
}
