/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.c: the civetweb glue of `porthole ui` (see ui.h for the routes):
 * starting and stopping, the WebSocket stream and its broadcaster.  Each
 * route's answer is in answers.c.
 *
 * Threads: civetweb's workers answer requests, each asking the engine on
 * its own (the store and the link are thread-safe); the link's reader
 * hands every line to ph_ui_line, which only appends it to `pending`
 * under a short lock, so a slow browser never slows the link; one
 * broadcaster thread swaps `pending` out every BROADCAST_MS and writes it
 * to each WebSocket as one NDJSON text frame, and sends a status frame
 * every second.
 *
 * A new WebSocket gets a snapshot of the store first, taken while the
 * client list is locked, then the batches broadcast in the last
 * RECENT_MS: the link hands a line to the store's parser thread and to
 * pending at the same moment, so a line can be broadcast before the
 * parser has stored it, and a page that connects in between would miss
 * it in both.  Replaying the recent batches closes that gap; a line may
 * then come twice, and the page drops repeated (seq, t) pairs.
 *
 * Host-made events (seq -1: io events `porthole iotrace attach` adds,
 * leaks from `porthole heap dump --session`) never pass the link: another
 * process appends them to the session and the session writer reads them
 * back into the store (session.h).  The broadcaster finds them there
 * (send_host_made) and sends them like the link's lines.
 */
#include "ph_common.h"
#include "ph_clock.h"
#include "ph_json.h"
#include "ph_log.h"
#include "host/env.h"
#include "host/findings.h"
#include "host/session.h"
#include "host/where.h"
#include "ui/assets.h"
#include "ui/ui.h"
#include "ui/server_int.h"

#include <civetweb.h>
#include <pthread.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define BROADCAST_MS	50
#define PENDING_CAP	(32u << 20) /* lines waiting for the broadcaster */
#define SNAPSHOT_EVENTS 300000	    /* newest events sent to a new page */
#define SNAPSHOT_CAP	(512u << 20)
#define HELLO_CAP	(64u << 10)
#define RECENT_MS	2000 /* batches replayed to a new page */
#define RECENT_CAP	(16u << 20)

#define STR_(x) #x
#define STR(x)	STR_(x)

/* --- the WebSocket stream ------------------------------------------------- */

static int ws_connect(const struct mg_connection *c, void *cbdata)
{
	struct ph_ui *ui = cbdata;
	char why[300];

	/* Browsers let any site open a WebSocket to localhost: the Origin
	 * check is the only thing that keeps the stream ours. */
	return ph_ui_check_request("GET", mg_get_header(c, "Host"),
				   mg_get_header(c, "Origin"), ui->port, why,
				   sizeof(why)) != 0;
}

/* {"ui":"snapshot","hello":...,"status":...,"timeline":...} */
static int write_snapshot(struct ph_ui *ui, struct ph_buf *b)
{
	struct ph_jw jw;

	ph_jw_init(&jw, b);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_str(&jw, "ui", "snapshot");
	ph_jw_key(&jw, "hello");
	pthread_mutex_lock(&ui->mu);
	if (ui->hello)
		ph_jw_raw(&jw, ui->hello, strlen(ui->hello));
	else
		ph_jw_null(&jw);
	pthread_mutex_unlock(&ui->mu);
	ph_jw_key(&jw, "status");
	ph_ui_write_status(ui, &jw);
	ph_jw_key(&jw, "timeline");
	ph_store_timeline(&ui->lv->store, PH_WINDOW_ALL, 0, SNAPSHOT_EVENTS,
			  &jw);
	ph_jw_obj_end(&jw);
	return ph_jw_finish(&jw);
}

static void ws_ready(struct mg_connection *c, void *cbdata)
{
	struct ph_ui *ui = cbdata;
	struct ws_client *cl = calloc(1, sizeof(*cl));
	struct ph_buf b = PH_BUF_INIT(SNAPSHOT_CAP);

	if (!cl)
		return;
	cl->conn = c;
	pthread_mutex_lock(&ui->clients_mu);
	if (!write_snapshot(ui, &b))
		mg_websocket_write(c, MG_WEBSOCKET_OPCODE_TEXT, b.buf, b.len);
	if (ui->recent.len)
		mg_websocket_write(c, MG_WEBSOCKET_OPCODE_TEXT, ui->recent.buf,
				   ui->recent.len);
	cl->next = ui->clients;
	ui->clients = cl;
	pthread_mutex_unlock(&ui->clients_mu);
	ph_buf_release(&b);
}

static int ws_data(struct mg_connection *c, int bits, char *data, size_t len,
		   void *cbdata)
{
	(void)c;
	(void)data;
	(void)len;
	(void)cbdata;
	/* The page only sends keep-alives; a close frame ends the socket. */
	return (bits & 0x0f) != MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE;
}

static void ws_close(const struct mg_connection *c, void *cbdata)
{
	struct ph_ui *ui = cbdata;

	pthread_mutex_lock(&ui->clients_mu);
	for (struct ws_client **p = &ui->clients; *p; p = &(*p)->next)
		if ((*p)->conn == c) {
			struct ws_client *dead = *p;

			*p = dead->next;
			free(dead);
			break;
		}
	pthread_mutex_unlock(&ui->clients_mu);
}

static void broadcast(struct ph_ui *ui, const char *s, size_t n)
{
	for (struct ws_client *cl = ui->clients; cl; cl = cl->next)
		mg_websocket_write(cl->conn, MG_WEBSOCKET_OPCODE_TEXT, s, n);
}

/* Keeps batch s as the newest of `recent`, dropping those past RECENT_MS
 * (or the caps); call with clients_mu held. */
static void keep_recent(struct ph_ui *ui, const char *s, size_t n, int64_t now)
{
	while (ui->nbatches && (now - ui->batches[0].at > RECENT_MS ||
				ui->nbatches == RECENT_MAX ||
				ui->recent.len + n > RECENT_CAP)) {
		ph_buf_consume(&ui->recent, ui->batches[0].len);
		memmove(&ui->batches[0], &ui->batches[1],
			sizeof(ui->batches[0]) * (size_t)--ui->nbatches);
	}
	if (ph_buf_add(&ui->recent, s, n)) {
		/* larger than the cap alone: a page gets the snapshot only */
		ph_buf_reset(&ui->recent);
		ui->nbatches = 0;
		return;
	}
	ui->batches[ui->nbatches].at = now;
	ui->batches[ui->nbatches++].len = n;
}

struct host_made {
	struct ph_buf *b;
	bool full; /* the batch passed its cap: send a snapshot instead */
};

static int add_host_made(void *ctx, const struct ph_event *ev)
{
	struct host_made *h = ctx;
	struct ph_jw jw;

	if (ev->seq >= 0)
		return 0; /* the link's: ph_ui_line broadcast it already */
	ph_jw_init(&jw, h->b);
	ph_jw_value(&jw, ev->frame);
	if (ph_jw_finish(&jw) || ph_buf_addch(h->b, '\n')) {
		h->full = true;
		return 1;
	}
	return 0;
}

/*
 * Sends every page the host-made events the store took since the last
 * look (a walk over the new events only, ph_store_each_since_locked, and
 * none at all when s->host_made_at says no host-made one came: at tens of
 * thousands of app events a second that walk held the store's lock, which
 * ingest needs, for nothing every 50 ms).
 * Called with clients_mu held, as ws_ready takes its snapshot: an event
 * stored before this walk is in the snapshot of a page that connects
 * after it, and a page that connected before gets it here.  One stored
 * between a page's snapshot and this walk comes twice; the page drops
 * repeats of host-made events by their content.
 */
static void send_host_made(struct ph_ui *ui)
{
	struct ph_store *s = &ui->lv->store;
	struct ph_buf b = PH_BUF_INIT(PENDING_CAP);
	struct host_made h = { .b = &b };
	bool walked;

	pthread_mutex_lock(&s->lock);
	if (s->host_made_at <= ui->store_seen || !ui->clients) {
		/* none since, or no page open (the next one's snapshot
		 * holds them) */
		ui->store_seen = s->version;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	walked = ph_store_each_since_locked(s, ui->store_seen, add_host_made,
					    &h);
	ui->store_seen = s->version;
	pthread_mutex_unlock(&s->lock);
	if (!walked || h.full) {
		/* Evicted before this look (a store turned over in 50 ms),
		 * or more than a batch holds: the store has them all. */
		struct ph_buf snap = PH_BUF_INIT(SNAPSHOT_CAP);

		if (ui->clients && !write_snapshot(ui, &snap))
			broadcast(ui, snap.buf, snap.len);
		ph_buf_release(&snap);
	} else if (b.len && ui->clients) {
		broadcast(ui, b.buf, b.len);
	}
	ph_buf_release(&b);
}

static void *broadcaster(void *arg)
{
	struct ph_ui *ui = arg;
	struct ph_buf out = PH_BUF_INIT(PENDING_CAP);
	int64_t last_status = 0;

	/* What the store held before: in every page's snapshot. */
	pthread_mutex_lock(&ui->lv->store.lock);
	ui->store_seen = ui->lv->store.version;
	pthread_mutex_unlock(&ui->lv->store.lock);
	while (!ui->stop) {
		struct ph_buf tmp;
		bool overflow;
		int64_t now = ph_clock_uptime_ms();

		usleep(BROADCAST_MS * 1000);
		pthread_mutex_lock(&ui->mu);
		tmp = ui->pending; /* swap: the reader keeps appending */
		ui->pending = out;
		out = tmp;
		overflow = ui->overflow;
		ui->overflow = false;
		pthread_mutex_unlock(&ui->mu);

		pthread_mutex_lock(&ui->clients_mu);
		if (overflow) {
			/* Lines were lost on the way: every page starts
			 * over from the store, which has them all. */
			struct ph_buf s = PH_BUF_INIT(SNAPSHOT_CAP);

			if (ui->clients && !write_snapshot(ui, &s))
				broadcast(ui, s.buf, s.len);
			ph_buf_release(&s);
		} else if (out.len) {
			if (ui->clients)
				broadcast(ui, out.buf, out.len);
			keep_recent(ui, out.buf, out.len, now);
		}
		send_host_made(ui);
		if (now - last_status >= 1000 && ui->clients) {
			struct ph_buf s = PH_BUF_INIT(1 << 16);
			struct ph_jw jw;

			ph_jw_init(&jw, &s);
			ph_jw_obj_begin(&jw);
			ph_jw_kv_str(&jw, "ui", "status");
			ph_jw_key(&jw, "status");
			ph_ui_write_status(ui, &jw);
			ph_jw_obj_end(&jw);
			if (!ph_jw_finish(&jw))
				broadcast(ui, s.buf, s.len);
			ph_buf_release(&s);
			last_status = now;
		}
		pthread_mutex_unlock(&ui->clients_mu);
		ph_buf_reset(&out);
	}
	ph_buf_release(&out);
	return NULL;
}

/* Keeps the hello answer's result: the page names empty lanes from its
 * collectors ("curl not instrumented"). */
static void keep_hello(struct ph_ui *ui, const char *line, size_t len)
{
	struct ph_arena a;
	struct ph_json *root = NULL;
	const struct ph_json *res;
	struct ph_buf b = PH_BUF_INIT(HELLO_CAP);
	struct ph_jw jw;

	if (len > HELLO_CAP || !memmem(line, len, "\"protocol\"", 10))
		return;
	ph_arena_init(&a, 4096, 1 << 20);
	if (!ph_json_parse(&a, line, len, &root, NULL) &&
	    ph_json_is(res = ph_ui_member(root, "result"), PH_JSON_OBJECT) &&
	    ph_ui_member(res, "protocol") && ph_ui_member(res, "packageName")) {
		ph_jw_init(&jw, &b);
		ph_jw_value(&jw, res);
		if (!ph_jw_finish(&jw)) {
			char *copy = strdup(b.buf);

			if (copy) {
				pthread_mutex_lock(&ui->mu);
				free(ui->hello);
				ui->hello = copy;
				pthread_mutex_unlock(&ui->mu);
			}
		}
	}
	ph_buf_release(&b);
	ph_arena_release(&a);
}

void ph_ui_line(struct ph_ui *ui, const char *line, size_t len)
{
	if (!ui || !len)
		return;
	if (line[0] == '{' && len > 6 && !memcmp(line, "{\"id\":", 6))
		keep_hello(ui, line, len);
	pthread_mutex_lock(&ui->mu);
	if (ph_buf_add(&ui->pending, line, len) ||
	    ph_buf_addch(&ui->pending, '\n'))
		ui->overflow = true;
	pthread_mutex_unlock(&ui->mu);
}

/* --- lifecycle ------------------------------------------------------------ */

static int on_log(const struct mg_connection *c, const char *msg)
{
	(void)c;
	ph_log(PH_LOG_DEBUG, "civetweb: %s", msg);
	return 1;
}

struct ph_ui *ph_ui_start(const struct ph_ui_options *o, char *why, size_t size)
{
	struct ph_ui *ui = calloc(1, sizeof(*ui));
	struct mg_callbacks cb = { .log_message = on_log };
	struct mg_server_port ports[4];
	char listen[64];
	const char *root = o->root && o->root[0] ? o->root : ".";
	const char *opts[] = { "listening_ports", listen,
			       /* civetweb holds a worker per connection: one
				* per open page for its WebSocket, and one per
				* request (keep-alive off, so an idle browser
				* connection never starves the API).  A worker
				* waits for a request's bytes at most
				* request_timeout_ms, so connections that send
				* nothing (half-open, or an attack) hold the
				* workers only that long. */
			       "num_threads", "32", "request_timeout_ms",
			       STR(PH_UI_REQUEST_TIMEOUT_MS),
			       "websocket_timeout_ms", "3600000",
			       "enable_keep_alive", "no", NULL };
	uint8_t rnd[16];
	int n;

	if (!ui) {
		snprintf(why, size, "out of memory");
		return NULL;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		snprintf(why, size, "cannot make a write token: %s",
			 strerror(errno));
		free(ui);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(ui->token + 2 * i, 3, "%02x", rnd[i]);
	ui->o = *o;
	ui->lv = o->live;
	snprintf(ui->traces_dir, sizeof(ui->traces_dir), "%s/.porthole/traces",
		 root);
	snprintf(ui->captures_dir, sizeof(ui->captures_dir),
		 "%s/.porthole/captures", root);
	pthread_mutex_init(&ui->mu, NULL);
	pthread_mutex_init(&ui->clients_mu, NULL);
	pthread_mutex_init(&ui->save_mu, NULL);
	ph_buf_init(&ui->pending, PENDING_CAP);
	ph_buf_init(&ui->recent, RECENT_CAP);
	/* Loopback only: the page shows an app's insides. */
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", o->port);
	mg_init_library(0);
	ui->ctx = mg_start(&cb, ui, opts);
	if (!ui->ctx) {
		snprintf(why, size,
			 "cannot listen on 127.0.0.1:%d (in use? try --port)",
			 o->port);
		ph_ui_stop(ui);
		return NULL;
	}
	n = mg_get_server_ports(ui->ctx, (int)PH_ARRAY_SIZE(ports), ports);
	ui->port = n > 0 ? ports[0].port : o->port;
	mg_set_request_handler(ui->ctx, "/", ph_ui_on_request, ui);
	mg_set_websocket_handler(ui->ctx, "/ws", ws_connect, ws_ready, ws_data,
				 ws_close, ui);
	if (pthread_create(&ui->thread, NULL, broadcaster, ui)) {
		snprintf(why, size, "cannot start a thread");
		ph_ui_stop(ui);
		return NULL;
	}
	ui->running = true;
	return ui;
}

int ph_ui_port(const struct ph_ui *ui)
{
	return ui->port;
}

void ph_ui_stop(struct ph_ui *ui)
{
	if (!ui)
		return;
	ui->stop = 1;
	if (ui->running)
		pthread_join(ui->thread, NULL);
	if (ui->ctx)
		mg_stop(ui->ctx); /* closes the sockets; ws_close frees each */
	while (ui->clients) {
		struct ws_client *next = ui->clients->next;

		free(ui->clients);
		ui->clients = next;
	}
	ph_buf_release(&ui->pending);
	ph_buf_release(&ui->recent);
	free(ui->hello);
	pthread_mutex_destroy(&ui->mu);
	pthread_mutex_destroy(&ui->clients_mu);
	pthread_mutex_destroy(&ui->save_mu);
	free(ui);
}
