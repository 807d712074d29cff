/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compare.h: two captures, metric by metric (docs/cli.md, `compare`).
 *
 * A change is a regression only when it passes both floors of its metric:
 * the relative one (a share of the base) and the absolute one (a minimum
 * step), so 1 → 2 stalls is not "+100%" noise and 5000 → 5100 queries is
 * not a regression either.  Main-thread timing (stalls, frames, taps)
 * swings run to run on a shared machine, so its floors are wider.  A metric
 * that goes from zero to non-zero is always reported, whatever its floors.
 * Captures of different scenarios, refresh rates or core counts are not
 * comparable: ph_compare refuses them with one line.
 */
#ifndef PH_HOST_COMPARE_H
#define PH_HOST_COMPARE_H

#include "ph_common.h"
#include "ph_buf.h"
#include "ph_json.h"

struct ph_compare_result {
	int regressions;
	int improvements;
	char refusal[256]; /* set when the captures are not comparable */
	char warning[256]; /* e.g. drivers differ; "" when none */
};

/*
 * Writes the per-metric table to out.  Returns 0, or PH_EINVAL when the
 * captures are not comparable (r->refusal says why).
 */
int ph_compare(const struct ph_json *base, const struct ph_json *cur,
	       struct ph_buf *out, struct ph_compare_result *r);
/* The same as one JSON object. */
int ph_compare_json(const struct ph_json *base, const struct ph_json *cur,
		    struct ph_buf *out, struct ph_compare_result *r);

#endif
