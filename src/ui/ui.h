/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ui.h: `porthole ui`, the live timeline in the browser.
 *
 * A thin face over the host engine: a civetweb HTTP + WebSocket server
 * bound to 127.0.0.1 only, serving the page embedded in the binary
 * (assets.h) and answering from the same live store, findings engine,
 * trace engine and save path the CLI and the MCP server use.  Nothing here
 * judges events: findings come from ph_analyze_store, trace answers from
 * ph_trace_ask, captures from the `save` command itself.
 *
 * Routes (all check Host and Origin first, see ph_ui_check_request):
 *
 *   GET  /, /index.html, /app.js, ...       the embedded page: one route
 *                                            per file of src/ui/assets/
 *   GET  /ws                                 WebSocket: a snapshot of the
 *                                            store, then every line live
 *   GET  /api/status                         link state and identity
 *   GET  /api/token                          the write token (below)
 *   GET  /api/findings?from=&to=[&trace=ID]  findings over a window
 *   GET  /api/traces                         .porthole/traces/ listed
 *   GET  /api/db/tables, /api/db/page?table=&limit=&offset=
 *   POST /api/db/query {sql}                 the agent's read-only inspector
 *   POST /api/save {from,to,scenario?}       what `porthole save` does
 *   POST /api/restart {confirmed:true}       only for an app ui started
 *
 * Every POST also carries the server's write token in X-Porthole-Token:
 * a random value made when the server starts, which the page reads from
 * GET /api/token (same-origin only, like every route).  A write without
 * it is refused with 403, so a request that never loaded the page (a
 * stray curl, a script replaying a body) changes nothing.
 *
 * The request checks are pure functions so the unit tests drive them
 * without a socket.
 */
#ifndef PH_UI_H
#define PH_UI_H

#include "ph_common.h"
#include "ph_buf.h"
#include "host/live.h"
#include "host/store.h"

/* Caps on what a request may make the server hold or do. */
#define PH_UI_MAX_BODY	 (64 * 1024) /* a POST body */
#define PH_UI_MAX_QUERY	 2048	     /* the query string */
#define PH_UI_MAX_SQL	 8192	     /* one inspector statement */
#define PH_UI_MAX_TRACES 256	     /* traces listed */
/*
 * The most a request may take to arrive (and each read or write of its
 * exchange to progress).  Loopback clients send at once; a connection
 * that sends nothing holds a worker only this long.
 */
#define PH_UI_REQUEST_TIMEOUT_MS 3000

enum ph_ui_route {
	PH_UI_R_NONE, /* not found */
	PH_UI_R_ASSET,
	PH_UI_R_WS,
	PH_UI_R_STATUS,
	PH_UI_R_FINDINGS,
	PH_UI_R_TRACES,
	PH_UI_R_DB_TABLES,
	PH_UI_R_DB_PAGE,
	PH_UI_R_DB_QUERY,
	PH_UI_R_SAVE,
	PH_UI_R_RESTART,
	PH_UI_R_TOKEN,
	PH_UI_R_WHERE,
	PH_UI_R_SYSTEM,
};

/* The write token: 32 lowercase hex digits and a NUL. */
#define PH_UI_TOKEN_SIZE 33

/*
 * Whether a write (POST) carries the server's token: got is the
 * X-Porthole-Token header or NULL.  Returns 0, or 403 with the reason.
 * The comparison takes the same time wherever the first difference is.
 */
int ph_ui_check_token(const char *want, const char *got, char *why,
		      size_t size);

/*
 * The route for a path (no query string) and whether the method fits it.
 * Returns the route; *status is 0 when the request may go on, 404 for an
 * unknown path, 405 for the wrong method (mutations are POST only, reads
 * GET only).
 */
enum ph_ui_route ph_ui_route(const char *method, const char *path, int *status);

/*
 * DNS-rebinding and cross-site defence.  host: the Host header (required);
 * origin: the Origin header or NULL; port: the server's own.  Host must
 * name this server (127.0.0.1:PORT or localhost:PORT); an Origin, when
 * present, must be http:// and the same.  A POST from a browser always
 * carries Origin, so a cross-site form or fetch is refused here.  Returns
 * 0, or 403 (400 without a Host) with the reason in why.
 */
int ph_ui_check_request(const char *method, const char *host,
			const char *origin, int port, char *why, size_t size);

/*
 * The window of a query string (from=, to=; both optional, integers on the
 * app clock) and the trace id (trace=, or "" when absent).  Returns 0 or
 * 400 with the reason: malformed numbers, from >= to, an over-long query.
 */
int ph_ui_parse_window(const char *query, struct ph_window *w, char *trace,
		       size_t trace_size, char *why, size_t size);

/*
 * The body of POST /api/save: {from, to, scenario?} (from < to, both
 * integers; scenario letters, digits, '-', '_', '.', at most 64).
 * Returns 0 or 400 with the reason.
 */
int ph_ui_parse_save(const char *body, size_t len, struct ph_window *w,
		     char *scenario, size_t scenario_size, char *why,
		     size_t size);

/* A query string parameter, URL-decoded; false when absent or too long. */
bool ph_ui_query_get(const char *query, const char *name, char *out,
		     size_t size);

/*
 * A trace id is a file name under .porthole/traces/: letters, digits, '.',
 * '-', '_', no leading dot, at most 200 bytes.  This only says whether it
 * could be one; the server also requires it to be in the listing.
 */
bool ph_ui_trace_id_ok(const char *id);

/* The statement the inspector may run: a read (SELECT, WITH, EXPLAIN,
 * PRAGMA, VALUES); the agent's connection is read-only besides. */
bool ph_ui_sql_read_only(const char *sql, char *why, size_t size);

/* --- the traces under <root>/.porthole/traces/ --------------------------- */

/*
 * Writes {traces:[{id, bytes, recordedAt, coverage | null, reason?}]}.
 * coverage {from, to} is the trace's span on the app clock (ms) when its
 * clock maps onto it; otherwise null and reason says why.
 */
int ph_ui_traces_write(const char *dir, struct ph_jw *jw);
/* Whether id is one of the listed traces (a regular file in dir). */
bool ph_ui_trace_listed(const char *dir, const char *id);
/*
 * The trace engine's answers for trace id over window w (app clock ms),
 * as the JSON text of ph_trace_ask's answer, into out.  pid: the app's
 * process (hello.pid), asked about when the trace holds it; otherwise (0,
 * or a trace from elsewhere) the busiest process is, and the answer's
 * "processNote" says why.  0 or an error with why.
 */
int ph_ui_trace_ask(const char *dir, const char *id, struct ph_window w,
		    int64_t pid, struct ph_buf *out, char *why, size_t size);
/*
 * The system under the app from trace id over window w (app clock ms):
 * the main thread's (tid = pid) scheduling states, with what held the CPU
 * while it was runnable, and the CPUs' frequencies, as JSON into out
 * (traces.c describes the shape).  0 or an error with why.
 */
int ph_ui_trace_system(const char *dir, const char *id, struct ph_window w,
		       int64_t pid, struct ph_buf *out, char *why, size_t size);

/* --- the server ----------------------------------------------------------- */

struct ph_ui;

struct ph_ui_options {
	int port;	      /* 0: any free port */
	const char *root;     /* project root: .porthole/{traces,captures} */
	struct ph_live *live; /* the engine this is a face of */
	/* `porthole save` itself: POST /api/save runs it with argv */
	int (*save)(int argc, char **argv);
	/* restarts the app ui started; NULL when it did not start one */
	int (*restart)(void *ctx, char *why, size_t size);
	void *restart_ctx;
};

/* Starts listening; NULL with the reason in why. */
struct ph_ui *ph_ui_start(const struct ph_ui_options *o, char *why,
			  size_t size);
/* The port it listens on. */
int ph_ui_port(const struct ph_ui *ui);
/* Call after each line reaches the store (from the link's reader). */
void ph_ui_line(struct ph_ui *ui, const char *line, size_t len);
/* Stops serving and frees everything. */
void ph_ui_stop(struct ph_ui *ui);

#endif
