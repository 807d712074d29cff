/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sample.h: porthole-sample, a small native app with a planted bug on
 * every lane Porthole watches (DESIGN.md section 6).  It is the demo, the
 * end-to-end test subject, and what `make demo` runs.
 *
 * Threads: the main loop (frames at the display rate, input, the UI and
 * its planted main-thread work), a network thread (libcurl against the
 * app's own HTTP server), a job thread (a background job that fails once
 * and retries), the HTTP server thread.  It uses only porthole.h.
 */
#ifndef PORTHOLE_SAMPLE_H
#define PORTHOLE_SAMPLE_H

/* The sample uses POSIX and GNU calls (usleep, strcasestr). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SAMPLE_W 360
#define SAMPLE_H 640

struct sqlite3;

/* Settings the scenario and the keys flip; read by the main loop. */
struct sample_state {
	bool expensive_layout; /* the planted slow layout: late frames */
	bool animate_totals;   /* rows re-render every frame */
	bool scoped_reads;     /* ...unless the read moved into a leaf */
	int screen;	       /* 0 home, 1 cart, 2 checkout */
	int frame;
	int cart_total_cents;
};

extern struct sample_state sample;

/* api_server.c: the app's own HTTP API on 127.0.0.1, an ephemeral port. */
int api_server_start(void);
int api_server_port(void);

/* net.c: calls to that API through libcurl, on the network thread. */
void net_start(void);
void net_request(const char *what);
void net_stop(void);

/* db.c: the cart database in the data dir. */
int db_open(const char *dir);
struct sqlite3 *db_handle(void);
int db_cart_total_on_main_thread(int cart_id); /* planted */
void db_record_event(const char *kind);
void db_insert_duplicate(void); /* a UNIQUE constraint failure */
void db_close(void);

/* ui.c: the component tree, the screen's pixels, the semantics tree. */
void ui_init(void);
void ui_frame(void);
void ui_layout(void);
void ui_draw(void);
void ui_tap(float x, float y);

/* ends.c: a hang and an unbounded cache (planted; see there). */
void wait_for_settings_sync(void);
void cache_decoded_images(void);

/* jobs.c: the background job that fails once and succeeds on retry. */
void jobs_start(void);
void jobs_stop(void);

#endif
