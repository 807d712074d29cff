/* SPDX-License-Identifier: Apache-2.0 */
/*
 * link.h: the device link, one connection to one runtime, kept up.
 *
 * Targets, in the order they are tried (docs/cli.md, "Connecting"):
 *  - an explicit socket name (from PORTHOLE_ANNOUNCE) or an app id:
 *    the abstract socket porthole.<id> on this machine when it exists;
 *  - else, with `adb` on PATH and a device attached, `adb forward
 *    tcp:0 localabstract:porthole.<id>` set up by the link itself, then TCP
 *    to the forwarded port;
 *  - TCP host:port when told to (PORTHOLE_HOST / --host).
 * Without an app id the link refuses to guess, except that with exactly
 * one porthole.* socket on this machine it uses that one and says so.
 *
 * Every connection starts with `hello`: a runtime of another protocol
 * version is refused (both versions named) and the link stops; an app id
 * that differs from the one asked for is a warning kept in `warning`.
 * Then `timeline` backfills what the ring still holds from the last seq
 * seen, and every line after that goes to on_line, on the reader thread.
 * A runtime that refuses the connection says why in one line before
 * closing it (docs/protocol.md): a uid it does not allow stops the link,
 * every slot taken is retried with backoff; both are the link's error.
 * When the app goes away the link reconnects with backoff, forever, until
 * ph_link_stop; an app restart is a new hello, not an error.
 */
#ifndef PH_HOST_LINK_H
#define PH_HOST_LINK_H

#include "ph_common.h"
#include "event.h"
#include "ph_buf.h"

#include <pthread.h>

enum ph_link_state {
	PH_LINK_CONNECTING,
	PH_LINK_CONNECTED,
	PH_LINK_REFUSED, /* protocol mismatch, or a uid the app refuses */
	PH_LINK_STOPPED,
};

struct ph_link {
	/* set before ph_link_start */
	const char *app_id;   /* NULL: see above */
	const char *socket;   /* an abstract name, overrides app_id */
	const char *announce; /* a file the app writes its socket name to */
	const char *host;     /* TCP host, or NULL */
	int port;	      /* TCP port with host */
	bool once;	      /* do not reconnect after the first session */
	void (*on_line)(void *ctx, const char *line, size_t len);
	void (*on_hello)(void *ctx, const struct ph_ident *id);
	void *ctx;

	/* state, read with the mutex */
	pthread_mutex_t mu;
	enum ph_link_state state;
	struct ph_ident ident; /* the last hello */
	char target[400];      /* what it connects to, for messages */
	char warning[300];     /* app id mismatch, "" when none */
	char error[300];       /* why not connected, "" when connected */
	uint64_t connects, lines;
	uint64_t hellos; /* connections the app answered hello on */
	int64_t last_seq;
	bool via_adb; /* the last connection is a device's, through adb */

	pthread_t thread;
	bool running;
	bool inited;	  /* the mutexes are made (ph_link_init) */
	_Atomic int stop; /* read by the reader thread */
	int fd;

	/* one request at a time from other threads (ph_link_request) */
	pthread_mutex_t req_mu; /* serialises requests; guards fd for them */
	pthread_cond_t req_cv;	/* signalled when the answer arrives */
	int64_t req_id;		/* the id awaited, 0 when none */
	struct ph_buf *req_out; /* where the reader puts the answer */
	int req_rc;		/* 0, or why the answer did not fit */
	bool req_done;
};

/*
 * Makes the mutexes other threads lock to read the state.  A server that
 * answers before the link starts, or after it stops (porthole ui's
 * workers), needs them for its whole life: ph_live_init calls this and
 * ph_live_release calls ph_link_release.  ph_link_start calls it too, for
 * a link used alone.  Both are safe to call twice.
 */
void ph_link_init(struct ph_link *l);
void ph_link_release(struct ph_link *l);

int ph_link_start(struct ph_link *l);
/* Stops the reader; waits for it.  Safe when never started.  The mutexes
 * stay until ph_link_release. */
void ph_link_stop(struct ph_link *l);
/* Waits until connected (or refused); false on timeout. */
bool ph_link_wait_connected(struct ph_link *l, int timeout_ms);
/*
 * What to do about why a link is not connected (its error text, or ""):
 * one line for a person or an agent, fitting the reason the app gave when
 * it refused.
 */
const char *ph_link_fix(const char *why);

/*
 * Asks the connected app one method (params: a JSON object's text, or
 * NULL for {}) and waits up to timeout_ms for the answer, whose whole
 * envelope ({"id","ok","result"|"error"}) is appended to out.  Any thread
 * but the reader's; requests are serialised, and their answers never reach
 * on_line.  0; PH_ECLOSED when not connected; PH_EAGAIN on timeout;
 * PH_ETOOBIG when the answer does not fit out's cap.
 */
int ph_link_request(struct ph_link *l, const char *method, const char *params,
		    struct ph_buf *out, int timeout_ms) PH_WUR;

/* Whether `adb get-state` says one device is attached and ready. */
bool ph_link_adb_device(void);

/*
 * The porthole.* abstract sockets listening on this machine
 * (/proc/net/unix), names without the leading '@', into names[]; returns
 * how many were found (at most max).
 */
size_t ph_link_local_sockets(char names[][256], size_t max);

#endif
