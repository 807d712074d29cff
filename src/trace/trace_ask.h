/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_ask.h: the fixed questions of the MCP tool ask_system_trace, as a
 * C API the MCP server calls and `porthole trace ask` prints.
 *
 * The questions are detectors (detectors/ask_*.sql, `@question: NAME`):
 * jank, thread_states, binder, render, slices, startup,
 * monitor_contention, cpu.  Each answers in the host's vocabulary
 * (DESIGN.md section 4): findings with severity error|warning|note,
 * confidence observed|correlated, source "trace", a window {from, to} in
 * milliseconds on the app's clock (MONOTONIC; the trace clock is converted
 * through the trace's clock snapshots, and "clock" says which clock the
 * windows are on when no conversion was possible) or spanning: true.
 *
 * The answer is one JSON object:
 *   process {name, pid}, window {from_ns, to_ns, source, note?} (trace
 *   clock), trace_clock, clock, context_warnings? [...], environment
 *   {...} (what every duration ran under: CPU frequency, thermal, memory,
 *   the process's memory, its Markdown lines and a one-sentence summary;
 *   trace_env.c, the same object analyze writes), findings [...] (each
 *   with evidence {location, self_ms, total_ms, max_ms, detector,
 *   trace_from_ns?, trace_to_ns?, environment: one sentence on what its
 *   own stretch ran under}), asked [question...], skipped [{question,
 *   reason}] (not a known question, or its detector failed), unanswered
 *   [{question, reason}] (the trace lacks the data), ruled_out
 *   [{question, cause}] (causes looked at and found quiet, throttling and
 *   a low CPU frequency among them when the trace has the data).
 */
#ifndef PH_TRACE_ASK_H
#define PH_TRACE_ASK_H

#include "ph_common.h"
#include "ph_json.h"
#include "trace/trace.h"

/* The eight question names, in the order they are asked by default. */
extern const char *const ph_trace_questions[8];

struct ph_detset;

/* Whether the kernel reported events lost while the trace was recorded
 * (what ask's `lost` lists). */
bool ph_trace_lost_any(struct ph_trace *t);

/*
 * Asks questions (n of them; n == 0: all eight) about the process named
 * process (NULL: the busiest) over [from, to] trace-clock ns (PH_NULL_I64:
 * its life) of a loaded trace, and writes the answer object to w.
 * detectors: the directory of the .sql files (NULL: found as analyze
 * finds it).  The project's porthole-trace.yml in the working directory,
 * when there is one, sets the questions' parameters as it does analyze's.
 * 0; or PH_ENOENT (no such process) / PH_EINVAL (empty window, or a
 * porthole-trace.yml that is wrong: err names its line and byte) / PH_EIO
 * (no detectors) with why in err, and nothing written.
 */
int ph_trace_ask(struct ph_trace *t, const char *process, int64_t from,
		 int64_t to, const char *const *questions, size_t n,
		 const char *detectors, struct ph_jw *w, char *err,
		 size_t errlen);

/* The same with a detector set already prepared (ph_detset_prepare: the
 * CLI checks the config and --set before it opens the trace). */
int ph_trace_ask_with(struct ph_trace *t, const struct ph_detset *ds,
		      const char *process, int64_t from, int64_t to,
		      const char *const *questions, size_t n, struct ph_jw *w,
		      char *err, size_t errlen);

#endif
