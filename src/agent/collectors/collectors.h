/* SPDX-License-Identifier: Apache-2.0 */
/*
 * collectors.h: the agent's built-in collectors, and the hooks the core
 * calls them through.
 *
 * Each collector is one file here.  Those with a thread of their own
 * (watchdog, sampler, stdio capture) are started by ph_collectors_start()
 * and stopped by ph_collectors_stop(); the rest run inside event calls or
 * on the writer thread.  Each can be turned off with a PORTHOLE_NO_* flag.
 */
#ifndef PH_AGENT_COLLECTORS_H
#define PH_AGENT_COLLECTORS_H

#include "ph_common.h"
#include "../agent.h"
#include "ph_json.h"

struct ph_server;

int ph_collectors_start(struct ph_agent *a) PH_WUR;
void ph_collectors_stop(struct ph_agent *a);

/* Writer-thread hook: the writer started (caches of a previous run go). */
void ph_collectors_writer_started(void);

/* hello's result (hello.c). */
void ph_collectors_hello(const struct ph_agent *a, struct ph_jw *w);

/* logs.c: a log event from any source; the logs method. */
void ph_log_emit(enum porthole_level level, const char *tag, const char *msg,
		 size_t len, int tid);
const char *ph_collectors_logs_method(struct ph_server *s,
				      const struct ph_json *params,
				      struct ph_jw *w);
int ph_stdio_capture_start(void) PH_WUR;
void ph_stdio_capture_stop(void);

/* frames.c */
uint64_t ph_collectors_frames_total(void);
void ph_frames_note_input(enum porthole_input_action action, int64_t t, float x,
			  float y);
/* lifecycle.c: the startup collector's view of the main loop. */
void ph_startup_main_loop_registered(void);
void ph_startup_on_ping(void);
void ph_startup_on_frame_presented(int64_t t_ms);
void ph_startup_init(struct ph_agent *a);

/* watchdog.c */
int ph_watchdog_start(struct ph_agent *a) PH_WUR;
void ph_watchdog_stop(void);
/* The main thread turned over (a ping, a frame call), at now_ns. */
void ph_watchdog_turned(int64_t now_ns);
/* The same, reading the clock. */
void ph_watchdog_answer(void);
/* On the main thread, as it registers: where its stack lies. */
void ph_watchdog_main_thread(void);

/* sampler.c: memory and device, every second. */
int ph_sampler_start(struct ph_agent *a) PH_WUR;
void ph_sampler_stop(void);

/* exits.c: this process's end, written down for the next start. */
/* Android's input-dispatch timeout: a main thread stuck this long is an ANR
 * (here: killed while stuck this long). */
#define PH_ANR_MS		 5000
#define PH_IMPORTANCE_FOREGROUND 100
#define PH_IMPORTANCE_CACHED	 400
int ph_exits_start(struct ph_agent *a) PH_WUR;
void ph_exits_stop(void);
/* rss and pss in KB, -1 for not measured this time. */
void ph_exits_note_memory(int64_t rss_kb, int64_t pss_kb);
void ph_exits_note_screens(int visible);
void ph_exits_note_alive(void);
void ph_exits_note_unresponsive(int64_t posted_ms, const uintptr_t *pcs,
				size_t n);
void ph_exits_note_answered(void);
/*
 * Gives the calling thread (one the agent created) an alternate signal
 * stack of its own, so a stack overflow on it still writes its crash
 * record; freed when the thread exits.  Does nothing when the thread
 * already has one or none can be mapped.
 */
void ph_exits_thread_altstack(void);
/* exit_report.c: earlier processes' ends, at start and on request. */
void ph_exits_report_previous(struct ph_agent *a);
/*
 * For tests and tests/fuzz/fuzz_exit_record.c: reports the records in dir
 * but exit-<mine_pid>.rec as ph_exits_report_previous does, handing each
 * exit event, whole, to sink (called before the record becomes .seen)
 * instead of the agent's queue, so the agent need not run.  kmsg false
 * leaves /dev/kmsg unread (the kernel-log test for an out-of-memory kill
 * is skipped): read whole per record, it is slow, and what it holds
 * changes under a fuzzer, whose runs must replay.
 */
void ph_exits_report_dir(const char *dir, int mine_pid, bool kmsg,
			 void (*sink)(const struct ph_rec *r, void *ctx),
			 void *ctx);
void ph_exits_read_boot_id(char *out, size_t size);
const char *ph_collectors_exits(struct ph_jw *w);
const char *ph_collectors_exit_trace(const struct ph_json *params,
				     struct ph_jw *w);

/* sqlite_binds.c: bound values, noted as the app binds them. */
struct sqlite3_stmt;
bool ph_sqlite_binds_args(struct sqlite3_stmt *stmt, const char *sql, char *out,
			  size_t cap);
void ph_sqlite_binds_forget(struct sqlite3_stmt *stmt);
/* Tests: with on, the table answers nothing (the fallback runs). */
void ph_sqlite_binds_ignore(bool on);
/* sqlite.c: statements whose values came from expanded_sql (tests). */
uint64_t ph_sqlite_expanded_calls(void);
/* sqlite.c: whether the statement's connection was attached. */
bool ph_sqlite_attached(struct sqlite3_stmt *stmt);

/* setup.c: the integrations check. */
void ph_collectors_setup(struct ph_jw *w);
void ph_integration_wired(const char *name);
void ph_integrations_check_later(struct ph_agent *a);

/*
 * inspector.c: db_tables, db_rows, db_query over a read-only connection,
 * on a thread of its own, one request at a time, each with a deadline.
 *
 * The writer hands a request line over with ph_inspector_submit (copied;
 * conn names the client, handed back with the answer); PH_EAGAIN while
 * another is not yet answered.  When the answer (a whole response line,
 * at most PH_INSPECTOR_ANSWER_MAX bytes) is ready, wake_fd is written;
 * ph_inspector_take moves it into out.  ph_inspector_stop ends a running
 * statement at its next progress check and joins the thread.
 */
enum { PH_DB_TABLES, PH_DB_ROWS, PH_DB_QUERY };
#define PH_INSPECTOR_ANSWER_MAX ((size_t)8 << 20)
int ph_inspector_submit(int which, const char *line, size_t len, int64_t id,
			uint64_t conn, int wake_fd);
bool ph_inspector_take(struct ph_buf *out, uint64_t *conn);
void ph_inspector_stop(void);
void ph_inspector_add_database(const char *path);
/*
 * For tests only (the fuzz target): no request's deadline is later than
 * ms after it starts, whatever its timeoutMs says; 0 restores the limit.
 */
void ph_inspector_cap_timeout(int ms);

/* providers.c: semantics tree and screenshot. */
const char *ph_collectors_semantics(const struct ph_json *params,
				    struct ph_jw *w);
const char *ph_collectors_screenshot(const struct ph_json *params,
				     struct ph_jw *w);

/* curl.c: query values, userinfo and fragment out of a URL. */
void ph_redact_url(const char *url, char *out, size_t cap);

/* trace_marker.c: app labels into a system trace while one records. */
void ph_trace_marker_begin(const char *name);
void ph_trace_marker_end(void);
void ph_trace_marker_poll(void);
void ph_trace_marker_prepare(void);
/*
 * For tests only, while no thread emits: reads tracefs under dir (NULL:
 * the system's) from now on, forgetting the fd kept so far.
 */
void ph_trace_marker_set_root(const char *dir);
uint32_t ph_trace_marker_async_begin(const char *name, int cookie);
void ph_trace_marker_async_end(uint32_t gen, const char *name, int cookie);
/* An explicit HTTP or DB call's slice (async: it may end elsewhere). */
void ph_trace_marker_call_begin(uint64_t id, const char *name);
void ph_trace_marker_call_end(uint64_t id);

#endif
