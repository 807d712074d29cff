/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_agent_methods: the agent's request handler (ph_methods_handle) on
 * arbitrary bytes, split into lines as the writer splits what a client
 * sends (server.c, handle_lines), each line handed to the real handler
 * on a real writer state (ph_server_init) whose ring and aggregates hold
 * events emitted through the public API, a database the inspector reads,
 * and the app's semantics and screenshot providers.  Every method runs,
 * the database ones on the inspector's own thread as in the agent.
 *
 * Checks, beyond "no crash, no leak, no undefined behaviour":
 *   - every request line gets exactly one answer, one line of JSON (read
 *     back with ph_json) that is an object;
 *   - the answer carries the request's id when the request had a usable
 *     one (an integer by ph_json_as_int), else -1;
 *   - "ok" is a boolean; an answer with ok true has a result, one with ok
 *     false an error that names what was wrong (error_is_named; a line
 *     that is not JSON says the byte offset, inside the line);
 *   - the handler never waits: a database request goes to the inspector
 *     and comes back by its deadline, which the fuzz setup caps at
 *     DB_DEADLINE_MS (ph_inspector_cap_timeout), so a recursive CTE that
 *     never ends costs one short deadline, not the 60 s a client may ask.
 *
 * Answers are read out of the client's send buffer, as the writer would
 * send them; the client's fd is /dev/null and never written.  An input
 * whose first line is "#full" plays a client that does not read: every
 * request must then be refused unrun (EBUSY) and counted toward its drop.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "agent/agent.h"
#include "agent/server.h"
#include "agent/collectors/collectors.h"
#include "porthole.h"

#include <dirent.h>
#include <poll.h>
#include <sqlite3.h>
#include <sys/eventfd.h>
#include <fcntl.h>
#include <unistd.h>

/* The inspector's deadline here: short, so a query that runs away is cheap. */
#define DB_DEADLINE_MS 20
/*
 * How long an answer from the inspector may take before the target calls
 * it a hang: the deadline plus any load the machine is under; generous.
 */
#define DB_ANSWER_BOUND_MS 60000

static struct ph_server server;
static struct ph_client *client; /* server.clients[0] */
static char data_dir[] = "/tmp/ph-fuzz-methods.XXXXXX";
static char db_path[sizeof(data_dir) + 16];
static bool echo;

/* A two-node tree: a column with a button in it. */
static void semantics(struct porthole_sem *t, void *ctx)
{
	struct porthole_sem_node root = { .role = "Column",
					  .test_tag = "cart",
					  .right = 100,
					  .bottom = 200 };
	struct porthole_sem_node button = { .role = "Button",
					    .text = "Pay",
					    .clickable = true,
					    .right = 50,
					    .bottom = 20 };

	(void)ctx;
	porthole_sem_begin(t, &root);
	porthole_sem_begin(t, &button);
	porthole_sem_end(t);
	porthole_sem_end(t);
}

/* A 2x2 RGBA frame, all grey. */
static int screenshot(const uint8_t **px, int *w, int *h, bool *secure,
		      void *ctx)
{
	static uint8_t frame[2 * 2 * 4];

	(void)ctx;
	memset(frame, 0x80, sizeof(frame));
	*px = frame;
	*w = 2;
	*h = 2;
	*secure = false;
	return 0;
}

/* The data dir holds files only: the database and what the agent wrote. */
static void remove_data_dir(void)
{
	DIR *d = opendir(data_dir);
	struct dirent *e;
	char path[sizeof(data_dir) + 300];

	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", data_dir, e->d_name);
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(data_dir);
}

/* A database with two small tables, for db_tables, db_rows and db_query. */
static void make_database(void)
{
	sqlite3 *db;

	snprintf(db_path, sizeof(db_path), "%s/shop.db", data_dir);
	if (sqlite3_open(db_path, &db) != SQLITE_OK ||
	    sqlite3_exec(db,
			 "CREATE TABLE cart(id INTEGER PRIMARY KEY, item TEXT, "
			 "price REAL, photo BLOB);"
			 "INSERT INTO cart VALUES(1,'tea',2.5,x'00ff'),"
			 "(2,'milk',NULL,NULL),(3,'a \"quoted\" name',1,'');"
			 "CREATE TABLE \"odd name\"(x);"
			 "CREATE TABLE \"say \"\"hi\"\"\"(x);"
			 "CREATE VIEW cheap AS SELECT * FROM cart WHERE "
			 "price < 2;",
			 NULL, NULL, NULL) != SQLITE_OK)
		__builtin_trap();
	sqlite3_close(db);
	ph_inspector_add_database(db_path);
}

/* Events of most kinds, through the public API, into the agent's queues. */
static void emit_events(void)
{
	const char *by[] = { "cart.items" };
	uint64_t call;

	porthole_main_loop_register();
	for (int i = 0; i < 40; i++) {
		porthole_log(i % 6 == 5 ? PORTHOLE_ERROR : PORTHOLE_INFO,
			     i % 2 ? "Net" : "Cart", "line %d", i);
		porthole_state_write("cart.items");
		porthole_recompose("Cart.Row#1", "Cart.Row", "cart", by, 1);
		porthole_recompose("Home.Top#1", "Home.Top", NULL, NULL, 0);
		porthole_frame_begin();
		porthole_frame_phase(PORTHOLE_PHASE_LAYOUT);
		porthole_frame_end();
		porthole_mark("tick", i % 2 ? "odd" : NULL);
	}
	porthole_nav(PORTHOLE_NAV_PUSH, "cart/{id}", "Cart", "id=7", NULL, 2);
	porthole_lifecycle(PORTHOLE_SCREEN_CREATED, "Cart", false);
	porthole_input(PORTHOLE_INPUT_DOWN, 10, 20, 0, "Pay");
	call = porthole_http_start("GET", "https://example.com/a?token=x");
	porthole_http_end(call, 200, NULL);
	porthole_http_start("POST", "https://example.com/still-open");
	call = porthole_db_start("SELECT * FROM cart WHERE id = ?", "7", false);
	porthole_db_end(call, 1, NULL);
	porthole_span_end(porthole_span_begin("checkout"));
}

/* The writer's state, holding the events above. */
static void fill_state(void)
{
	if (ph_server_init(&server, &ph_agent))
		__builtin_trap();
	client = &server.clients[0];
	/* event calls live again, to fill the queues this state drains */
	atomic_store(&ph_agent.running, 1);
	emit_events();
	atomic_store(&ph_agent.running, 0);
	ph_server_drain(&server, SIZE_MAX);
}

/*
 * The agent's own start sets up everything the methods read of it (ids,
 * data dir, queues, clock); its writer is stopped again at once, and the
 * state the methods answer from is this target's own, on this thread.
 */
static void setup(void)
{
	struct porthole_config cfg = {
		.app_id = "com.example.fuzz",
		.version_name = "1.0-fuzz",
		/* small: the events below overflow it, so some are evicted */
		.ring_size = 256,
		.flags = PORTHOLE_NO_WATCHDOG | PORTHOLE_NO_DEVICE |
			 PORTHOLE_NO_MEMORY | PORTHOLE_NO_EXITS |
			 PORTHOLE_NO_TRACE_MARKERS |
			 PORTHOLE_NO_INTEGRATION_CHECK,
	};
	char sock[64];

	if (!mkdtemp(data_dir))
		__builtin_trap();
	atexit(remove_data_dir);
	snprintf(sock, sizeof(sock), "porthole.fuzz-methods-%d", (int)getpid());
	cfg.socket_name = sock;
	cfg.data_dir = data_dir;
	if (porthole_start_build(&cfg, 1) != PORTHOLE_OK)
		__builtin_trap();
	porthole_stop();
	/* the inspector writes it when an answer is ready, as for the writer */
	ph_agent.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ph_agent.wake_fd < 0)
		__builtin_trap();
	fill_state();
	make_database();
	ph_inspector_cap_timeout(DB_DEADLINE_MS);
	porthole_set_semantics_provider(semantics, NULL);
	porthole_set_screenshot_provider(screenshot, NULL);
	echo = getenv("FUZZ_ECHO") != NULL;
	client->fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	client->id = 1;
	server.nclients = 1;
	ph_buf_init(&client->out, PH_CLIENT_HARD_CAP);
}

/*
 * After a `reset` (which clears aggregates) the state is made afresh, so
 * that every input meets the same one and a crash reproduces on its own.
 */
static void refill_state(void)
{
	struct ph_client keep = *client;

	ph_server_release(&server);
	fill_state();
	*client = keep;
	server.nclients = 1;
}

/*
 * The id the answer must carry: the request's integer id, else -1; and
 * whether it asks for a reset.
 */
static int64_t wanted_id(const char *line, size_t len, bool *reset)
{
	struct ph_arena a;
	struct ph_json *req;
	int64_t id = -1;

	ph_arena_init(&a, 0, 8 << 20);
	if (!ph_json_parse(&a, line, len, &req, NULL)) {
		if (!ph_json_as_int(ph_json_get(req, "id"), &id))
			id = -1;
		*reset |= ph_json_streq(ph_json_get(req, "method"), "reset");
	}
	ph_arena_release(&a);
	return id;
}

/* Waits for the inspector's answer and queues it, as the writer does. */
static void deliver_db_answer(void)
{
	struct pollfd p = { .fd = ph_agent.wake_fd, .events = POLLIN };
	struct ph_buf answer = PH_BUF_INIT(PH_CLIENT_HARD_CAP);
	uint64_t conn = 0, n;

	for (int waited = 0; !ph_inspector_take(&answer, &conn); waited += 100)
		if (waited > DB_ANSWER_BOUND_MS)
			__builtin_trap(); /* the inspector hangs */
		else if (poll(&p, 1, 100) > 0 &&
			 read(ph_agent.wake_fd, &n, sizeof(n)) < 0)
			__builtin_trap();
	if (conn != client->id)
		__builtin_trap(); /* an answer for another client */
	client->db_waiting = false;
	ph_server_reply(client, answer.buf, answer.len);
	ph_buf_release(&answer);
}

/*
 * An error that names what was wrong: an errno-style code ("EINVAL: why",
 * or the bare code), or one of the protocol's own forms (protocol.md
 * section 1.3 and db_query's refusals), each with its detail.
 */
static bool error_is_named(const struct ph_json *e)
{
	static const char *const forms[] = { "malformed request: ",
					     "unknown method '", "refused: " };
	size_t code = 1;

	if (!ph_json_is(e, PH_JSON_STRING) || !e->n)
		return false;
	for (size_t i = 0; i < PH_ARRAY_SIZE(forms); i++) {
		size_t n = strlen(forms[i]);

		if (e->n > n && !memcmp(e->u.s, forms[i], n))
			return true;
	}
	if (e->u.s[0] != 'E')
		return false;
	while (code < e->n && e->u.s[code] >= 'A' && e->u.s[code] <= 'Z')
		code++;
	return code > 2 && (code == e->n || (e->n > code + 2 &&
					     !memcmp(e->u.s + code, ": ", 2)));
}

/*
 * The one answer in the client's send buffer after its first `mark`
 * bytes, checked, then dropped; false when it says ok.
 */
static bool check_answer(size_t mark, int64_t id, size_t line_len)
{
	const char *text = client->out.buf + mark;
	size_t len = client->out.len - mark;
	bool said_ok;
	const char *nl = memchr(text, '\n', len);
	struct ph_arena a;
	struct ph_json *v;
	const struct ph_json *ok, *error;
	int64_t got;

	if (echo) /* FUZZ_ECHO=1: see the answers (running one input) */
		fwrite(text, 1, len, stderr);
	/* one line: its only newline ends it */
	if (!len || !nl || (size_t)(nl - text) != len - 1)
		__builtin_trap();
	ph_arena_init(&a, 0, (size_t)64 << 20);
	if (ph_json_parse(&a, text, len - 1, &v, NULL) ||
	    !ph_json_is(v, PH_JSON_OBJECT))
		__builtin_trap();
	if (!ph_json_as_int(ph_json_get(v, "id"), &got) || got != id)
		__builtin_trap();
	ok = ph_json_get(v, "ok");
	error = ph_json_get(v, "error");
	if (ph_json_is(ok, PH_JSON_TRUE)) {
		if (!ph_json_get(v, "result") || error)
			__builtin_trap();
	} else if (ph_json_is(ok, PH_JSON_FALSE)) {
		const char *at;

		if (!error_is_named(error))
			__builtin_trap();
		/* a line that is not JSON: the offset is inside it */
		at = memmem(error->u.s, error->n, " at byte ", 9);
		if (!strncmp(error->u.s, "malformed request: ", 19) && at &&
		    strtoull(at + 9, NULL, 10) > line_len)
			__builtin_trap();
	} else {
		__builtin_trap();
	}
	said_ok = ph_json_is(ok, PH_JSON_TRUE);
	ph_arena_release(&a);
	ph_buf_setlen(&client->out, mark);
	return said_ok;
}

/*
 * A first line "#full" (not handed to the handler): the client holds its
 * share of unsent bytes, as one that does not read its socket, so every
 * request must be refused, and counted, without running.
 */
static size_t fill_unread(const uint8_t *data, size_t size, size_t *at)
{
	size_t share = ph_server_client_share(&server);

	if (size < 6 || memcmp(data, "#full\n", 6))
		return 0;
	*at = 6;
	if (ph_buf_grow(&client->out, share))
		__builtin_trap();
	memset(client->out.buf, ' ', share);
	ph_buf_setlen(&client->out, share);
	return share;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready, was_reset;
	size_t at = 0, mark;
	uint32_t refused;
	bool ok;

	if (!ready) {
		setup();
		ready = true;
	}
	if (was_reset)
		refill_state();
	was_reset = false;
	client->refused = 0;
	mark = fill_unread(data, size, &at);
	while (at < size && client->refused <= PH_CLIENT_REFUSALS_MAX) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
		/* its own copy, so a read one byte past the line is caught */
		char *line = malloc(len ? len : 1);
		int64_t id;

		memcpy(line, data + at, len);
		at += len + 1;
		if (!len) { /* the writer skips empty lines */
			free(line);
			continue;
		}
		id = wanted_id(line, len, &was_reset);
		refused = client->refused;
		if (ph_methods_handle(&server, client, line, len) == PH_EAGAIN)
			__builtin_trap(); /* nothing else is waiting */
		if (client->db_waiting)
			deliver_db_answer();
		ok = check_answer(mark, id, len);
		/* past its share: refused unrun, and counted toward a drop */
		if (mark && (ok || client->refused != refused + 1))
			__builtin_trap();
		free(line);
	}
	ph_buf_reset(&client->out);
	return 0;
}
