/* SPDX-License-Identifier: Apache-2.0 */
/*
 * where.h: resolving a finding's evidence to a place in the project.
 *
 * Given a where-hint (a stack frame's function, file and line; or a
 * literal such as the SQL or the URL path) and the project root
 * (PORTHOLE_PROJECT_ROOT), says where in the source it is:
 *
 *   {"status":"resolved","path":"sample/main.c","line":37,"kind":"frame"}
 *   {"status":"ambiguous","symbol":..,"candidates":[{"path","line"},..]}
 *   {"status":"not found","symbol":..}
 *   {"status":"not in project","symbol":..}   a library's frame
 *   {"status":"synthetic"}                     made by the runtime
 *
 * kind is "frame" when a stack frame named the file and line, and
 * "declaration" when the place was found by looking for the symbol or the
 * literal.  The tree walk skips hidden directories, build/ and
 * node_modules/, and reads at most a few thousand source files.
 */
#ifndef PH_HOST_WHERE_H
#define PH_HOST_WHERE_H

#include "ph_common.h"
#include "ph_buf.h"
#include "findings.h"

struct ph_where_index;

/* Lists the project's source files once; NULL when root is not a dir. */
struct ph_where_index *ph_where_index_new(const char *root);
void ph_where_index_free(struct ph_where_index *ix);

/*
 * Resolves h into a JSON object appended to json; short gets "path:line"
 * when resolved ("" otherwise).  Returns false when the hint is empty
 * (then `where` stays absent).
 */
bool ph_where_resolve(struct ph_where_index *ix, const struct ph_where_hint *h,
		      struct ph_buf *json, char *short_out, size_t short_size);

#endif
