/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.h: the human report of a capture (docs/cli.md, `report`).
 *
 * All three renderings read the capture's JSON tree (capture.h), so a
 * report looks the same whether the capture came from `capture`, `save`
 * or another machine:
 *
 *  - text: the header `scenario · duration · device (refresh) · app`,
 *    findings ranked (severity, title, one or two detail lines, `where`
 *    when resolved, `[trace]` for system-trace findings), a `quiet:` line,
 *    and a footer with the frame budget, recompositions, calls and queries;
 *  - JSON: the same content as one object;
 *  - HTML: one self-contained page (no network), the run drawn as lanes on
 *    a time axis with the findings beside it.
 */
#ifndef PH_HOST_REPORT_H
#define PH_HOST_REPORT_H

#include "ph_common.h"
#include "ph_buf.h"
#include "ph_json.h"

int ph_report_text(const struct ph_json *cap, struct ph_buf *out) PH_WUR;
int ph_report_json(const struct ph_json *cap, struct ph_buf *out) PH_WUR;
int ph_report_html(const struct ph_json *cap, struct ph_buf *out) PH_WUR;

#endif
