/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcp.h: `porthole mcp`, the MCP server a coding assistant talks to.
 *
 * JSON-RPC 2.0 over stdio, one message per line (docs/mcp.md).  The server
 * is a thin face over the host engine: the live host (live.h) keeps the
 * link, the event store and the session on disk; findings come from the
 * findings engine (findings.h); tools that mirror an app method ask the
 * app through the device link (ph_link_request); system traces go through
 * the trace engine.  Nothing here judges events a second time.
 *
 * A tool is one file in src/mcp/tools/ exporting a struct ph_mcp_tool,
 * listed once in src/mcp/tools.c.  A call fills a struct ph_mcp_call: one
 * summary line (ph_mcp_line) and the members of a JSON payload object
 * (c->jw, already opened, `sinceLast` already written).  The server puts
 * the banner first, the size note `[N returned; full ≈ M]` at the end of
 * the summary line, and the payload after it at detail normal and full.
 *
 * Ownership: everything a call allocates lives in c->arena and dies when
 * the answer has been written.
 */
#ifndef PH_MCP_H
#define PH_MCP_H

#include "ph_common.h"
#include "ph_arena.h"
#include "ph_buf.h"
#include "ph_json.h"
#include "host/findings.h"
#include "host/live.h"
#include "host/store.h"

/* The longest request line the server reads; longer ones are refused. */
#define PH_MCP_LINE_CAP ((size_t)4 << 20)
#define PH_MCP_PROTOCOL "2025-11-25"

enum ph_mcp_detail { PH_DETAIL_SUMMARY, PH_DETAIL_NORMAL, PH_DETAIL_FULL };

/* Tool flags: MCP annotations, and which shared arguments a tool takes. */
enum {
	PH_TOOL_READONLY = 1 << 0,
	PH_TOOL_DESTRUCTIVE = 1 << 1,
	PH_TOOL_IDEMPOTENT = 1 << 2,
	PH_TOOL_OPENWORLD = 1 << 3,
	PH_TOOL_WINDOW = 1 << 4, /* since, sinceMs, from, to */
	/*
	 * Runs on a thread of its own while the server goes on answering
	 * (one such call at a time); the client's notifications/cancelled
	 * reaches it as ph_mcp_cancelled, and it may send progress.
	 */
	PH_TOOL_BACKGROUND = 1 << 5,
};

struct ph_mcp;
struct ph_mcp_call;

struct ph_mcp_tool {
	const char *name;
	const char *title;
	const char *description; /* written for an agent */
	/*
	 * The tool's own properties, as the members of a JSON Schema
	 * `properties` object ("limit":{"type":"integer",...}); `detail` and
	 * the window arguments are added by the server.
	 */
	const char *props;
	const char *required; /* a JSON array's text, or NULL */
	unsigned flags;
	int (*call)(struct ph_mcp_call *c);
};

extern const struct ph_mcp_tool *const ph_mcp_tools[];
const struct ph_mcp_tool *ph_mcp_tool_find(const char *name, size_t n);

/* Where a window's events were read from. */
struct ph_mcp_source {
	bool live;	 /* the live store */
	char path[4200]; /* else this session's events.ndjson, or "" */
	char note[800];	 /* says which, when it is not the live store */
};

struct ph_mcp {
	struct ph_live *lv;   /* NULL: no device link at all (unit tests) */
	bool started;	      /* lv's link was started */
	char state_dir[4200]; /* watermark when no session is open */
	bool state_tmp;	      /* state_dir is ours to remove */
	int64_t banner_from;  /* the banner covers errors after this */
	char client_version[32];
	char trace_dir[4200]; /* <root>/.porthole/traces */
	char self_exe[4096];  /* this binary, to run `porthole trace record` */
	/* per-tool watermark for since:"last" of the windowed app tools */
	struct {
		const char *tool;
		int64_t last_to;
	} marks[16];
	size_t nmarks;
	uint64_t calls;
	/* hellos whose backfill a call gave up waiting for (wait_backfill) */
	uint64_t backfill_given_up;
	/* while ph_mcp_serve runs: answers and notifications go out to
	 * out_fd one line at a time under mu; bg is the background call
	 * running (PH_TOOL_BACKGROUND), NULL when none, and idle is
	 * signalled when it ends */
	bool serving;
	int out_fd;
	pthread_mutex_t mu;
	pthread_cond_t idle;
	void *bg;
};

struct ph_mcp_call {
	struct ph_mcp *m;
	const struct ph_mcp_tool *tool;
	const struct ph_json *args; /* an object, never NULL */
	int detail;		    /* enum ph_mcp_detail */
	struct ph_arena *arena;
	struct ph_buf line;    /* the summary line */
	struct ph_buf payload; /* JSON object text */
	struct ph_jw jw;       /* writes the payload's members */
	bool is_error;
	/* image content (screenshot): base64 in the arena */
	const char *image;
	size_t image_len;
	const char *image_mime;
	/* estimated bytes of the payload at detail full, when capped */
	size_t full_payload;
	/* the window asked for (WINDOW tools) */
	struct ph_window w;
	bool w_since_last;
	_Atomic int cancelled; /* the client cancelled this call */
};

/* --- the server ---------------------------------------------------------- */

/* lv may be NULL (no device link).  Makes no thread of its own. */
int ph_mcp_init(struct ph_mcp *m, struct ph_live *lv) PH_WUR;
void ph_mcp_release(struct ph_mcp *m);
/*
 * Handles one request line; appends the response line (with '\n') to out,
 * or nothing for a notification.  Never fails on hostile input: a bad
 * line gets a JSON-RPC error.
 */
void ph_mcp_handle(struct ph_mcp *m, const char *line, size_t len,
		   struct ph_buf *out);
/* Reads requests from fd in, writes answers to fd out, until EOF. */
int ph_mcp_serve(struct ph_mcp *m, int in, int out);

/* --- for tools ----------------------------------------------------------- */

/* Sets the summary line (replacing any). */
void ph_mcp_line(struct ph_mcp_call *c, const char *fmt, ...) PH_PRINTF(2, 3);
/* Appends to the summary line. */
void ph_mcp_more(struct ph_mcp_call *c, const char *fmt, ...) PH_PRINTF(2, 3);
/*
 * For a PH_TOOL_BACKGROUND tool: whether the client cancelled the call
 * (then its answer is never sent), and a progress notification, sent
 * when the request carried a progressToken (progress must grow from one
 * notification to the next; total <= 0 when unknown).
 */
bool ph_mcp_cancelled(struct ph_mcp_call *c);
void ph_mcp_progress(struct ph_mcp_call *c, double progress, double total,
		     const char *message);
/* A failure: isError, with why as the line.  Returns 0 (handled). */
int ph_mcp_fail(struct ph_mcp_call *c, const char *fmt, ...) PH_PRINTF(2, 3);

/* Arguments (already checked against the schema by the server). */
const char *ph_mcp_arg_str(struct ph_mcp_call *c, const char *name,
			   const char *def);
int64_t ph_mcp_arg_int(struct ph_mcp_call *c, const char *name, int64_t def);
bool ph_mcp_arg_has(struct ph_mcp_call *c, const char *name);
bool ph_mcp_arg_bool(struct ph_mcp_call *c, const char *name, bool def);
/* A limit: the explicit argument, else by detail (summary/normal, full). */
int64_t ph_mcp_limit(struct ph_mcp_call *c, const char *name, int64_t dflt,
		     int64_t full);

/*
 * Asks the app one method.  On success *res is the `result` (parsed in the
 * call's arena) and 0 is returned; otherwise the call has already failed
 * with an honest message (not connected and why, the app's own error, a
 * timeout) and a negative code is returned: the tool just returns 0.
 */
int ph_mcp_app(struct ph_mcp_call *c, const char *method, const char *params,
	       const struct ph_json **res);
/* Why the app is not reachable, into buf ("" when connected). */
const char *ph_mcp_why_not(struct ph_mcp *m, char *buf, size_t size);
bool ph_mcp_connected(struct ph_mcp *m);
/* The app id the server is for, or NULL. */
const char *ph_mcp_app_id(struct ph_mcp *m);
/* True when the app runs on this machine (an abstract socket here). */
bool ph_mcp_local(struct ph_mcp *m);
/* The app's clock now: the newest event seen, else this machine's. */
int64_t ph_mcp_now(struct ph_mcp *m);

/*
 * An analysis of window w: from the live store when it covers w, else from
 * the newest session on disk for this app (src says which).  NULL with the
 * call failed when there is nothing to analyse.
 */
struct ph_analysis *ph_mcp_analyze(struct ph_mcp_call *c, struct ph_window w,
				   struct ph_mcp_source *src);
/*
 * The block I/O of the call's window as an io view (host/io/io.h), for
 * io_summary and io_requests: *a is the window's analysis (the session's
 * identity and profile; ph_analysis_free it, it may be NULL), *e the io
 * events read back (ph_io_events_release it, after the view).  NULL when
 * the call is answered already: failed, or no block I/O was recorded
 * (said plainly, with how to record it; `recorded: false`, not isError).
 * all_queries: every query a moment of the view, not only main's.
 */
struct ph_io_events;
struct ph_io_view *ph_mcp_io_view(struct ph_mcp_call *c, bool all_queries,
				  struct ph_io_events *e,
				  struct ph_analysis **a,
				  struct ph_mcp_source *src);

/*
 * Walks the events of window w (kinds: a ph_kinds mask, 0 all) from the
 * same source ph_mcp_analyze would use.  Returns events visited, or -1
 * (call failed) when there is no source.
 */
int64_t ph_mcp_each(struct ph_mcp_call *c, struct ph_window w, uint64_t kinds,
		    int (*fn)(void *ctx, const struct ph_event *ev), void *ctx,
		    struct ph_mcp_source *src);
/* The directory holding the watermark (session, or a private one). */
const char *ph_mcp_state_dir(struct ph_mcp *m);
/* Marks a per-tool since:"last" window as answered up to `to`. */
void ph_mcp_mark(struct ph_mcp_call *c, int64_t to);

/* Writes "from..to" of a window into buf ("start", "now" for open ends). */
const char *ph_mcp_wstr(struct ph_window w, char *buf, size_t size);
/* Writes the app answer's JSON value as a payload member. */
void ph_mcp_put(struct ph_mcp_call *c, const char *key,
		const struct ph_json *v);

/*
 * For WINDOW tools, first thing: true (the call failed, saying why) when
 * the window asked for holds no instant, from after to; the tool returns
 * 0 at once, so nothing is read and no since:"last" mark moves.  A
 * since:"last" window with nothing new since is answered, not refused.
 */
bool ph_mcp_window_refused(struct ph_mcp_call *c);
/*
 * Appends to the summary line, in parentheses, each of the app answer r's
 * `notes` that contains `having` (what the app says it no longer holds).
 */
void ph_mcp_app_notes(struct ph_mcp_call *c, const struct ph_json *r,
		      const char *having);
/*
 * For tools mirroring a windowed app method: the params text with the
 * call's window ({"from","to"}), "limit" and extra members (a JSON
 * members' text, or NULL), into the arena.
 */
const char *ph_mcp_window_params(struct ph_mcp_call *c, int64_t limit,
				 const char *extra);
/*
 * When the app cannot be asked: the events of `kinds` (comma-separated)
 * in the call's window from the store or a session on disk, newest
 * `limit`, as payload `events`, with a line saying why; the size note's M
 * counts the newest full_limit (ph_mcp_full_limit).  Returns 0.
 */
int ph_mcp_events_instead(struct ph_mcp_call *c, const char *what,
			  const char *kinds, int64_t limit, int64_t full_limit);
/* True when detail full would ask for more than this call: not at full,
 * and no explicit argument `name` (which holds at every level). */
bool ph_mcp_capped(struct ph_mcp_call *c, const char *name);
/* The limit detail full asks for: the explicit argument, else full. */
int64_t ph_mcp_full_limit(struct ph_mcp_call *c, const char *name,
			  int64_t full);
/*
 * The size note's M for an app answer r that was asked with a cap below
 * detail full's and may have been cut (its list reached the cap): asks
 * the app `method` again with full_params (same window) and sets
 * c->full_payload to the payload so far plus how much longer that answer
 * is written.  Call it last, after the payload is complete.  When the
 * second ask fails the answer stands and M counts the payload returned.
 */
void ph_mcp_full_app(struct ph_mcp_call *c, const char *method,
		     const char *full_params, const struct ph_json *r);
/*
 * Writes `events` (newest limit of window w, oldest first); counts.  With
 * full_extra, the bytes the newest full_limit (>= limit) would add to
 * the array, measured on the events themselves (the size note's M).
 */
int ph_mcp_write_events(struct ph_mcp_call *c, struct ph_window w,
			uint64_t kinds, int64_t limit, int64_t full_limit,
			int64_t *matched, int64_t *returned, size_t *full_extra,
			struct ph_mcp_source *src);

/* key: value, a parsed JSON value. */
static inline void ph_mcp_json_kv(struct ph_jw *jw, const char *k,
				  const struct ph_json *v)
{
	ph_jw_key(jw, k);
	ph_jw_value(jw, v);
}

/*
 * The length of the first line of a JSON string value, at most cap: for
 * "%.*s" in a summary line (the string is not NUL-terminated).  0 when v
 * is not a string.
 */
static inline int ph_mcp_first_line(const struct ph_json *v, size_t cap)
{
	const char *nl;
	size_t n;

	if (!ph_json_is(v, PH_JSON_STRING))
		return 0;
	nl = memchr(v->u.s, '\n', v->n);
	n = nl ? (size_t)(nl - v->u.s) : v->n;
	return (int)(n > cap ? cap : n);
}

/* Runs argv (no shell), output into out (capped); exit status or -1. */
int ph_mcp_run(char *const argv[], struct ph_buf *out, int timeout_ms);

/* --- pieces with their own tests ----------------------------------------- */

/* The version the server answers initialize with (docs/mcp.md). */
const char *ph_mcp_negotiate(const char *client, size_t n);
/*
 * Checks a PNG: 1 when every pixel is black (or fully transparent), 0 when
 * not, negative when it cannot be decoded (why in err).
 */
int ph_png_all_black(const unsigned char *png, size_t n, char *err,
		     size_t errlen);
int ph_base64_decode(const char *s, size_t n, struct ph_buf *out) PH_WUR;

/*
 * The accessibility rules (docs/mcp.md) over a semantics tree's root node;
 * writes {checked, skipped, issues:[...]} members into jw, and returns how
 * many issues were found.  font_scale 0 when unknown.
 */
struct ph_a11y_result {
	int64_t checked, skipped, warnings, notes;
};
int ph_a11y_check(const struct ph_json *root, double font_scale,
		  size_t max_issues, struct ph_jw *jw,
		  struct ph_a11y_result *r);

/*
 * The device's context, read from `adb shell` output (devctx.c, where the
 * formats are written down).  Each reader fills its part of d from one
 * command's output (any bytes, n long) and returns how many items it
 * kept: 0 when the output said nothing it understood.
 */
struct ph_devctx_zone {
	char zone[64];
	double celsius;
	int status; /* the HAL's throttling status, -1 unknown */
};
struct ph_devctx_cpu {
	int cpu;
	char governor[32];
	int64_t cur_khz, max_khz; /* 0 unknown */
};
struct ph_devctx_proc {
	int pid;
	char name[64];
	double cpu; /* %CPU as top printed it (100 = one core) */
};
struct ph_devctx {
	int thermal_status; /* "Thermal Status: N", -1 unknown */
	struct ph_devctx_zone thermal[48];
	size_t nthermal;
	struct ph_devctx_cpu cpus[64];
	size_t ncpus;
	struct ph_devctx_proc busiest[5];
	size_t nbusiest;
	char loadavg[48];     /* "" unknown */
	int64_t mem_total_kb; /* -1 unknown */
	int64_t mem_avail_kb; /* -1 unknown */
	double psi_some10;    /* -1 unknown */
};
size_t ph_devctx_thermal(struct ph_devctx *d, const char *s, size_t n);
size_t ph_devctx_cpus(struct ph_devctx *d, const char *s, size_t n);
size_t ph_devctx_top(struct ph_devctx *d, const char *s, size_t n);
size_t ph_devctx_proc(struct ph_devctx *d, const char *s, size_t n);

#endif
