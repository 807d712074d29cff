/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole-0.1.h: include/porthole.h as 0.1 shipped it (before the version
 * macros and porthole_start_sized), frozen.  Never edit it:
 * tests/e2e/install.sh builds tests/abi/app_0_1.c against it and runs that
 * program with this tree's installed libporthole.so, as an app built
 * against 0.1 and never rebuilt runs with a newer library.
 */
/*
 * porthole.h: the whole public API of libporthole, the in-process agent.
 *
 * An app links libporthole into its debug build, calls porthole_start()
 * once, registers its main loop, and from then on every call below records
 * one thing the app did.  The agent serves those events over a local socket
 * (the abstract Unix socket "porthole.<app id>") in Porthole protocol v1;
 * docs/protocol.md is the contract, docs/agent.md the guide.
 *
 * Promises every event call keeps, on every thread:
 *  - it never blocks, never allocates, never makes a system call and never
 *    encodes JSON: it copies its record into fixed-size cells of a
 *    lock-free queue and returns.  Two documented exceptions: a thread's
 *    first event takes a queue of the thread's own, which costs one
 *    gettid() and a pthread_setspecific() (that registers the thread's
 *    exit, and may allocate once); and while a system trace records,
 *    spans, HTTP calls and queries are also written to tracefs's
 *    trace_marker, as atrace does;
 *  - strings are copied, never kept: pass stack buffers freely; a string
 *    longer than its documented cap (docs/protocol.md section 8) is cut at
 *    a UTF-8 boundary and marked "...";
 *  - before porthole_start() succeeds, and after porthole_stop(), every call
 *    is a cheap no-op;
 *  - a full queue drops the event and counts it; clients see the gap.
 *
 * Release builds: define PORTHOLE_DISABLED and the functions below become
 * the empty static inline bodies of porthole_noop.h, so the calls stay in
 * the source and compile to nothing.
 *
 * Status codes are only ever appended to (curl's CURLcode rule).
 */
#ifndef PORTHOLE_H
#define PORTHOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PORTHOLE_API		  __attribute__((visibility("default")))
#define PORTHOLE_PROTOCOL_VERSION 1

enum porthole_status {
	PORTHOLE_OK = 0,
	PORTHOLE_ERR_NOT_DEBUG = 1,	  /* not a debug build, not allowed */
	PORTHOLE_ERR_ALREADY_STARTED = 2, /* porthole_start() called twice */
	PORTHOLE_ERR_SOCKET = 3,	  /* could not listen (name in use) */
	PORTHOLE_ERR_NOMEM = 4,		  /* could not allocate at start */
	PORTHOLE_ERR_INVALID = 5,	  /* a bad argument */
	PORTHOLE_ERR_THREAD = 6,	  /* could not start a thread */
};

/* porthole_config.flags */
enum {
	/* Record SQL bind values (on unless PORTHOLE_NO_BIND_ARGS). */
	PORTHOLE_NO_BIND_ARGS = 1u << 0,
	/* Capture the app's own stdout and stderr lines as logs. */
	PORTHOLE_CAPTURE_STDIO = 1u << 1,
	/* Let attached curl handles opt in to body capture. */
	PORTHOLE_CAPTURE_BODIES = 1u << 2,
	/* Collectors that can be turned off. */
	PORTHOLE_NO_WATCHDOG = 1u << 3,
	PORTHOLE_NO_MEMORY = 1u << 4,
	PORTHOLE_NO_DEVICE = 1u << 5,
	PORTHOLE_NO_EXITS = 1u << 6,
	PORTHOLE_NO_TRACE_MARKERS = 1u << 7,
	PORTHOLE_NO_INTEGRATION_CHECK = 1u << 8,
	PORTHOLE_NO_STARTUP = 1u << 9, /* no `startup` events */
};

struct porthole_config {
	const char *app_id;	  /* the package name; NULL: program name */
	const char *socket_name;  /* NULL: "porthole.<app_id>" */
	int legacy_tcp_port;	  /* 0: off; else listen on 127.0.0.1:port */
	unsigned ring_size;	  /* events kept for backfill; 0: 4096 */
	unsigned queue_size;	  /* 128 B queue cells, power of 2; 0: 32768 */
	const char *data_dir;	  /* exit records; NULL: see docs/agent.md */
	unsigned flags;		  /* PORTHOLE_* above */
	const char *version_name; /* the app's version, for hello and exits */
	double refresh_hz;	  /* display refresh rate; 0: 60 */
	unsigned stall_ms;	  /* watchdog threshold; 0: 200 */
};

enum porthole_level {
	PORTHOLE_VERBOSE = 'V',
	PORTHOLE_DEBUG = 'D',
	PORTHOLE_INFO = 'I',
	PORTHOLE_WARN = 'W',
	PORTHOLE_ERROR = 'E',
	PORTHOLE_FATAL = 'F',
};

enum porthole_frame_phase {
	PORTHOLE_PHASE_INPUT,
	PORTHOLE_PHASE_ANIMATION,
	PORTHOLE_PHASE_LAYOUT, /* "layoutMeasure" on the wire */
	PORTHOLE_PHASE_DRAW,
	PORTHOLE_PHASE_SYNC,
	PORTHOLE_PHASE_SWAP, /* "swapBuffers" */
	PORTHOLE_PHASE_COUNT,
};

enum porthole_nav_op {
	PORTHOLE_NAV_START,
	PORTHOLE_NAV_PUSH,
	PORTHOLE_NAV_POP,
	PORTHOLE_NAV_REPLACE,
};

enum porthole_lifecycle {
	PORTHOLE_SCREEN_CREATED,   /* a screen instance was made */
	PORTHOLE_SCREEN_SHOWN,	   /* it became visible */
	PORTHOLE_SCREEN_RESUMED,   /* it has input focus */
	PORTHOLE_SCREEN_HIDDEN,	   /* it stopped being visible */
	PORTHOLE_SCREEN_DESTROYED, /* the instance is gone */
};

enum porthole_work_state {
	PORTHOLE_WORK_SUCCEEDED,
	PORTHOLE_WORK_FAILED,
	PORTHOLE_WORK_RETRY, /* failed, will run again ("ENQUEUED") */
	PORTHOLE_WORK_CANCELLED,
};

enum porthole_input_action {
	PORTHOLE_INPUT_DOWN,
	PORTHOLE_INPUT_UP,
	PORTHOLE_INPUT_CANCEL,
};

struct sqlite3;

/*
 * The semantics tree, built on request (from the agent's thread, so the
 * provider must be safe to call off the main thread).  Inside the
 * callback, nest porthole_sem_begin()/porthole_sem_end() per node.
 */
struct porthole_sem;

struct porthole_sem_node {
	const char *role;		/* "Button", "Image", NULL */
	const char *text;		/* visible text, NULL */
	const char *label;		/* content description, NULL */
	const char *test_tag;		/* NULL */
	float left, top, right, bottom; /* px, root coordinates */
	bool clickable;
};

typedef void (*porthole_semantics_fn)(struct porthole_sem *tree, void *ctx);

/*
 * The screen as pixels, on request.  Fill *pixels (RGBA8888, rows of
 * width*4 bytes, owned by the app until the next call), width and height;
 * set *secure when the frame must not leave the process (the agent then
 * refuses).  Return 0 on success.
 */
typedef int (*porthole_screenshot_fn)(const uint8_t **pixels, int *width,
				      int *height, bool *secure, void *ctx);

#ifdef PORTHOLE_DISABLED
#include "porthole_noop.h"
#else

/* A short English sentence for a status; never NULL. */
PORTHOLE_API const char *porthole_strerror(enum porthole_status status);

/*
 * Starts the agent: the socket, the writer thread and the collectors.
 * Refuses, with one line on stderr naming why, unless the app was built
 * with PORTHOLE_DEBUG_BUILD defined or PORTHOLE_ENABLE=1 is set in the
 * environment (PORTHOLE_ENABLE=0 refuses even a debug build).  config may
 * be NULL for all defaults.  debug_build says how the app was built;
 * porthole_start() passes it for you.
 */
PORTHOLE_API enum porthole_status
porthole_start_build(const struct porthole_config *config, int debug_build);

static inline enum porthole_status
porthole_start(const struct porthole_config *config)
{
#ifdef PORTHOLE_DEBUG_BUILD
	return porthole_start_build(config, 1);
#else
	return porthole_start_build(config, 0);
#endif
}

/* Stops everything and closes every client; events after it are no-ops. */
PORTHOLE_API void porthole_stop(void);
/* The abstract socket name being served ("porthole.x"), or NULL. */
PORTHOLE_API const char *porthole_socket_name(void);

/* --- the main loop ------------------------------------------------------ */

/*
 * Called once on the app's main (UI) thread: that thread is "main" in
 * every event, the one the watchdog samples, and the one frames belong to.
 */
PORTHOLE_API void porthole_main_loop_register(void);
/*
 * Called by the main loop once per iteration (and whenever it is about to
 * wait).  Stamps the main thread's turn-over for the watchdog (as the frame
 * calls do), so a loop that does not get here for longer than the
 * threshold is a stall, timed from its last stamp to its next.
 */
PORTHOLE_API void porthole_main_loop_ping(void);

/* --- marks and spans ---------------------------------------------------- */

PORTHOLE_API void porthole_mark(const char *label, const char *detail);
/* Returns a span id to pass to porthole_span_end(); 0 when not started. */
PORTHOLE_API uint64_t porthole_span_begin(const char *name);
PORTHOLE_API void porthole_span_end(uint64_t span);

/* --- logs ----------------------------------------------------------------- */

PORTHOLE_API void porthole_log(enum porthole_level level, const char *tag,
			       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
PORTHOLE_API void porthole_log_str(enum porthole_level level, const char *tag,
				   const char *message);

/* --- frames --------------------------------------------------------------- */

/* A frame starts (at its vsync); phases follow; end presents it. */
PORTHOLE_API void porthole_frame_begin(void);
/* The named phase starts now; the previous one, if any, ends. */
PORTHOLE_API void porthole_frame_phase(enum porthole_frame_phase phase);
/* Presented.  A frame over its budget (1000 / refresh_hz) is emitted. */
PORTHOLE_API void porthole_frame_end(void);

/* --- components and state ------------------------------------------------- */

/*
 * A component rendered again.  id is stable per instance ("Cart.Row#3"),
 * screen may be NULL.  triggered_by may be NULL: the agent then names the
 * state keys written in the 32 ms before (temporal attribution).
 */
PORTHOLE_API void porthole_recompose(const char *id, const char *name,
				     const char *screen,
				     const char *const *triggered_by,
				     size_t n_triggered);
/* State was written.  key NULL means an anonymous state. */
PORTHOLE_API void porthole_state_write(const char *key);

/* --- navigation and lifecycle --------------------------------------------- */

/*
 * The back stack changed.  args is "k=v" pairs joined by ", " (or NULL),
 * deep_link the URI that caused it (or NULL), depth the stack's new depth.
 */
PORTHOLE_API void porthole_nav(enum porthole_nav_op op, const char *route,
			       const char *label, const char *args,
			       const char *deep_link, int depth);

/*
 * A screen's lifecycle; drives startup classification (docs/protocol.md
 * section 6) and foreground/background.  restored: created from saved
 * state (only read with PORTHOLE_SCREEN_CREATED).
 */
PORTHOLE_API void porthole_lifecycle(enum porthole_lifecycle event,
				     const char *screen, bool restored);
/* The app says its first screen is fully drawn (content, not a spinner). */
PORTHOLE_API void porthole_report_fully_drawn(void);

/* Changes only the app knows about. */
PORTHOLE_API void porthole_device_rotation(int degrees);
PORTHOLE_API void porthole_device_theme(bool dark);
PORTHOLE_API void porthole_device_font_scale(double scale);

/* --- background work ------------------------------------------------------ */

PORTHOLE_API void porthole_work_start(const char *work_id, const char *name,
				      int attempt, const char *tags);
PORTHOLE_API void porthole_work_end(const char *work_id, int attempt,
				    enum porthole_work_state state,
				    const char *error);

/* --- input ---------------------------------------------------------------- */

/*
 * A pointer event, with the time the input system stamped on it (uptime
 * ms, CLOCK_MONOTONIC).  The first frame presented after an up closes a
 * tap: tap-to-present time.  target may name the hit node (or NULL).
 */
PORTHOLE_API void porthole_input(enum porthole_input_action action, float x,
				 float y, int64_t event_uptime_ms,
				 const char *target);

/* --- explicit HTTP and DB events (the helpers below make these) ----------- */

PORTHOLE_API uint64_t porthole_http_start(const char *method, const char *url);
PORTHOLE_API void porthole_http_end(uint64_t call, int status,
				    const char *error);
PORTHOLE_API uint64_t porthole_db_start(const char *sql, const char *args,
					bool write);
PORTHOLE_API void porthole_db_end(uint64_t query, int64_t rows,
				  const char *error);

/* --- integrations -----------------------------------------------------------
 */

/*
 * Instruments a real SQLite connection through SQLite's own trace hooks:
 * every statement on it, however the app runs it, becomes db_start/db_end
 * with normalized SQL, bound values, timing in ns, rows, thread.  The file
 * also becomes what the DB inspector (db_tables, db_rows, db_query) reads,
 * over its own read-only connection.  Replaces any trace callback the app
 * set with sqlite3_trace_v2.
 */
PORTHOLE_API enum porthole_status porthole_sqlite_attach(struct sqlite3 *db);

/*
 * Instruments a libcurl easy handle (a CURL *): every curl_easy_perform on
 * it emits http_start/http_end with phases, sizes, reuse and protocol, the
 * URL and headers redacted in this process.  capture_bodies asks for text
 * bodies (first 4 KB) when PORTHOLE_CAPTURE_BODIES is set.
 */
PORTHOLE_API enum porthole_status porthole_curl_attach(void *curl,
						       bool capture_bodies);

/* --- providers the app can register --------------------------------------- */

PORTHOLE_API void porthole_set_semantics_provider(porthole_semantics_fn fn,
						  void *ctx);
PORTHOLE_API void porthole_sem_begin(struct porthole_sem *tree,
				     const struct porthole_sem_node *node);
PORTHOLE_API void porthole_sem_end(struct porthole_sem *tree);

PORTHOLE_API void porthole_set_screenshot_provider(porthole_screenshot_fn fn,
						   void *ctx);

#endif /* PORTHOLE_DISABLED */

#ifdef __cplusplus
}
#endif

#endif
