/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server_int.h: what the UI server's parts share, and no one else uses:
 * server.c (the server, its WebSocket stream) and answers.c (the HTTP
 * routes' answers).
 */
#ifndef PH_UI_SERVER_INT_H
#define PH_UI_SERVER_INT_H

#include "ph_common.h"
#include "ph_json.h"
#include "host/live.h"
#include "ui/ui.h"

#include <civetweb.h>
#include <pthread.h>

#define RECENT_MAX 64 /* batches kept for a new page (server.c) */

struct ws_client {
	struct mg_connection *conn;
	struct ws_client *next;
};

struct ph_ui {
	struct mg_context *ctx;
	struct ph_ui_options o;
	struct ph_live *lv;
	int port;
	char token[PH_UI_TOKEN_SIZE]; /* every POST carries it (ui.h) */
	char traces_dir[4200];
	char captures_dir[4200];

	pthread_mutex_t mu; /* pending, overflow, hello */
	struct ph_buf pending;
	bool overflow; /* pending filled: every page gets a new snapshot */
	char *hello;   /* the last hello answer's result, JSON */

	pthread_mutex_t clients_mu; /* clients, their sockets, recent */
	struct ws_client *clients;
	uint64_t store_seen;  /* store version send_host_made has looked at */
	struct ph_buf recent; /* the last batches broadcast, oldest first */
	struct {
		int64_t at; /* uptime ms it went out */
		size_t len;
	} batches[RECENT_MAX];
	int nbatches;

	pthread_mutex_t save_mu; /* one save at a time (it prints) */
	pthread_t thread;
	bool running;
	/* Set by ph_ui_stop while the broadcaster reads it: atomic (as the
	 * link's), since a volatile int read by another thread is a race. */
	_Atomic int stop;
};

/* civetweb's request handler: checks the request, then answers its route. */
int ph_ui_on_request(struct mg_connection *c, void *cbdata);
/* The status object: the link, the store, the session (GET /api/status and
 * the stream's status frames). */
void ph_ui_write_status(struct ph_ui *ui, struct ph_jw *jw);
/* One member of a parsed object, or NULL. */
const struct ph_json *ph_ui_member(const struct ph_json *o, const char *k);

#endif
