/* SPDX-License-Identifier: Apache-2.0 */
/* link.c: the device link (see link.h). */
#include "ph_common.h"
#include "link.h"
#include "ingest.h"
#include "ph_clock.h"
#include "ph_error.h"
#include "ph_log.h"
#include "ph_wire.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 2000
#define LINE_CAP       ((size_t)16 << 20)
/*
 * The most held for lines that come before the hello answer: more than a
 * runtime holds unsent for one client (our agent: 4 MiB at most).
 */
#define EARLY_CAP ((size_t)16 << 20)

size_t ph_link_local_sockets(char names[][256], size_t max)
{
	FILE *f = fopen("/proc/net/unix", "r");
	char line[1024];
	size_t n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && n < max) {
		char *at = strstr(line, " @porthole.");
		size_t len;
		bool dup = false;

		/* State 01 = listening (SS_UNCONNECTED with __SO_ACCEPTCON). */
		if (!at || !strstr(line, " 00010000 "))
			continue;
		at += 2;
		len = strcspn(at, "\n");
		if (len >= 256)
			continue;
		for (size_t i = 0; i < n && !dup; i++)
			dup = strlen(names[i]) == len &&
			      !memcmp(names[i], at, len);
		if (dup)
			continue;
		memcpy(names[n], at, len);
		names[n][len] = '\0';
		n++;
	}
	fclose(f);
	return n;
}

static int connect_abstract(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd;

	if (n + 1 > sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path + 1, name, n);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* Exactly the name's bytes: no trailing NUL (docs/protocol.md §1.1). */
	if (connect(fd, (struct sockaddr *)&sa,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				n))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int connect_tcp(const char *host, int port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	char ps[16];
	int fd = -1, one = 1;

	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo(host, ps, &hints, &res))
		return -1;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && !connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* `adb forward tcp:0 localabstract:NAME`: the port adb chose, or -1. */
static int adb_forward(const char *name)
{
	char cmd[600], out[64] = { 0 };
	FILE *p;
	int port = -1;

	snprintf(cmd, sizeof(cmd),
		 "adb forward tcp:0 localabstract:%s 2>/dev/null", name);
	if (strpbrk(name, "'\"`$;&|<> \\"))
		return -1; /* never hand a hostile name to the shell */
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (fgets(out, sizeof(out), p))
		port = atoi(out);
	if (pclose(p) != 0 || port <= 0)
		return -1;
	return port;
}

bool ph_link_adb_device(void)
{
	FILE *p = popen("adb get-state 2>/dev/null", "r");
	char out[64] = { 0 };

	if (!p)
		return false;
	if (!fgets(out, sizeof(out), p))
		out[0] = '\0';
	return pclose(p) == 0 && !strncmp(out, "device", 6);
}

static void set_error(struct ph_link *l, const char *fmt, ...) PH_PRINTF(2, 3);

static void set_error(struct ph_link *l, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&l->mu);
	va_start(ap, fmt);
	vsnprintf(l->error, sizeof(l->error), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&l->mu);
}

static void set_target(struct ph_link *l, const char *fmt, ...) PH_PRINTF(2, 3);

/* l->target, under the mutex: servers' threads read it for status. */
static void set_target(struct ph_link *l, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&l->mu);
	va_start(ap, fmt);
	vsnprintf(l->target, sizeof(l->target), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&l->mu);
}

/* Reads the announce file: the app's socket name, once it is written. */
static bool read_announce(const char *path, char *name, size_t size)
{
	FILE *f = fopen(path, "r");
	bool ok = false;

	if (!f)
		return false;
	if (fgets(name, (int)size, f)) {
		name[strcspn(name, "\r\n")] = '\0';
		ok = name[0] != '\0';
	}
	fclose(f);
	return ok;
}

/* A connection to the target; *via_adb says it is a device's, via adb. */
static int open_target(struct ph_link *l, bool *via_adb)
{
	char name[300], socks[8][256];
	size_t n;

	*via_adb = false;

	if (l->host) {
		set_target(l, "tcp %s:%d", l->host, l->port);
		return connect_tcp(l->host, l->port);
	}
	if (l->socket) {
		snprintf(name, sizeof(name), "%s", l->socket);
	} else if (l->announce) {
		if (!read_announce(l->announce, name, sizeof(name))) {
			set_error(l, "waiting for the app to announce its "
				     "socket");
			return -1;
		}
	} else if (l->app_id) {
		snprintf(name, sizeof(name), "porthole.%s", l->app_id);
	} else {
		n = ph_link_local_sockets(socks, 8);
		if (n != 1) {
			set_error(l,
				  n ? "%zu Porthole apps are running here; "
				      "name one with --application-id" :
				      "no app id (--application-id or "
				      "PORTHOLE_APPLICATION_ID): the socket "
				      "name is unknown",
				  n);
			return -1;
		}
		snprintf(name, sizeof(name), "%s", socks[0]);
		ph_info("no app id given: using the only Porthole socket here, "
			"@%s",
			name);
	}
	set_target(l, "@%s", name);
	{
		int fd = connect_abstract(name);

		if (fd >= 0 || l->announce || l->socket)
			return fd;
	}
	/* Not on this machine: through adb, when a device is attached. */
	if (ph_link_adb_device()) {
		int port = adb_forward(name);

		if (port > 0) {
			int fd;

			set_target(l, "adb forward tcp:%d -> localabstract:%s",
				   port, name);
			fd = connect_tcp("127.0.0.1", port);
			*via_adb = fd >= 0;
			return fd;
		}
	}
	return -1;
}

static int send_line(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Handles the hello answer: returns false when the link must stop (a
 * protocol it does not speak).
 */
static bool check_hello(struct ph_link *l, const char *line, size_t len)
{
	struct ph_arena a;
	struct ph_json *root;
	const struct ph_json *res;
	struct ph_ident id;
	bool ok = true;

	ph_arena_init(&a, 1 << 14, 1 << 24);
	if (ph_json_parse(&a, line, len, &root, NULL) ||
	    !ph_json_is(res = ph_json_get(root, "result"), PH_JSON_OBJECT) ||
	    !ph_json_get(res, "protocol")) {
		ph_arena_release(&a);
		return true; /* not the hello answer; the caller keeps going */
	}
	ph_ident_from_hello(&id, res);
	pthread_mutex_lock(&l->mu);
	l->ident = id;
	if (id.protocol != PH_PROTOCOL_VERSION) {
		snprintf(l->error, sizeof(l->error),
			 "refused: the app speaks Porthole protocol %d, this "
			 "host speaks %d; update the %s",
			 id.protocol, PH_PROTOCOL_VERSION,
			 id.protocol > PH_PROTOCOL_VERSION ? "host" :
							     "app's "
							     "runtime");
		l->state = PH_LINK_REFUSED;
		ok = false;
	} else if (l->app_id && strcmp(l->app_id, id.package)) {
		snprintf(l->warning, sizeof(l->warning),
			 "app id mismatch: asked for '%s', the app says it is "
			 "'%s'",
			 l->app_id, id.package);
	}
	pthread_mutex_unlock(&l->mu);
	if (!ok)
		ph_log(PH_LOG_ERROR, "%s", l->error);
	else if (l->warning[0])
		ph_warn("%s", l->warning);
	ph_arena_release(&a);
	return ok;
}

/*
 * Before its hello answer, a runtime that gives this host no slot says
 * why in one error frame with id -1 and closes: a uid it does not allow
 * (EACCES, for good: the link stops), or every slot taken (it retries).
 * Returns whether the line was that frame; the reason is the link's
 * error, printed once for each new reason.
 */
static bool check_refusal(struct ph_link *l, const char *line, size_t len)
{
	static const char head[] = "{\"id\":-1,\"ok\":false";
	struct ph_arena a;
	struct ph_json *root;
	const struct ph_json *why;
	char msg[sizeof(l->error)];
	bool fresh;

	if (len < sizeof(head) - 1 || memcmp(line, head, sizeof(head) - 1))
		return false;
	ph_arena_init(&a, 1 << 12, 1 << 16);
	if (ph_json_parse(&a, line, len, &root, NULL) ||
	    !ph_json_is(why = ph_json_get(root, "error"), PH_JSON_STRING)) {
		ph_arena_release(&a);
		return false;
	}
	snprintf(msg, sizeof(msg), "refused by the app: %.*s",
		 (int)(why->n < 250 ? why->n : 250), why->u.s);
	ph_arena_release(&a);
	pthread_mutex_lock(&l->mu);
	fresh = strcmp(l->error, msg) != 0;
	snprintf(l->error, sizeof(l->error), "%s", msg);
	if (!strncmp(msg, "refused by the app: EACCES", 26))
		l->state = PH_LINK_REFUSED;
	pthread_mutex_unlock(&l->mu);
	if (fresh)
		ph_log(PH_LOG_ERROR, "%s", msg);
	return true;
}

/*
 * Hands an answer to the thread waiting in ph_link_request; true when the
 * line was that answer (then nobody else sees it).
 */
static bool deliver_answer(struct ph_link *l, const char *line, size_t len)
{
	int64_t id;
	bool mine = false;

	if (len < 8 || memcmp(line, "{\"id\":", 6))
		return false;
	id = strtoll(line + 6, NULL, 10);
	if (id < 1000)
		return false; /* hello and backfill: the link's own */
	pthread_mutex_lock(&l->req_mu);
	if (l->req_id == id && !l->req_done) {
		l->req_rc = ph_buf_add(l->req_out, line, len);
		l->req_done = true;
		pthread_cond_broadcast(&l->req_cv);
	}
	mine = true; /* a late answer to a request that timed out, too */
	pthread_mutex_unlock(&l->req_mu);
	return mine;
}

int ph_link_request(struct ph_link *l, const char *method, const char *params,
		    struct ph_buf *out, int timeout_ms)
{
	static int64_t next_id = 1000;
	struct timespec dl;
	char *req;
	int rc = 0, n;

	if (!l->running)
		return PH_ECLOSED;
	pthread_mutex_lock(&l->mu);
	rc = l->state == PH_LINK_CONNECTED ? 0 : PH_ECLOSED;
	pthread_mutex_unlock(&l->mu);
	if (rc)
		return rc;
	pthread_mutex_lock(&l->req_mu);
	while (l->req_id) /* another request is waiting for its answer */
		pthread_cond_wait(&l->req_cv, &l->req_mu);
	l->req_id = next_id++;
	l->req_out = out;
	l->req_done = false;
	l->req_rc = 0;
	n = asprintf(&req,
		     "{\"id\":%" PRId64 ",\"method\":\"%s\",\"params\":%s}\n",
		     l->req_id, method, params ? params : "{}");
	if (n < 0)
		rc = PH_ENOMEM;
	else if (l->fd < 0 || send_line(l->fd, req))
		rc = PH_ECLOSED;
	if (n >= 0)
		free(req);
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	while (!rc && !l->req_done) {
		if (l->fd < 0)
			rc = PH_ECLOSED; /* the app went away meanwhile */
		else if (pthread_cond_timedwait(&l->req_cv, &l->req_mu, &dl) ==
			 ETIMEDOUT)
			rc = PH_EAGAIN;
	}
	if (!rc)
		rc = l->req_rc;
	l->req_id = 0;
	l->req_out = NULL;
	pthread_cond_broadcast(&l->req_cv);
	pthread_mutex_unlock(&l->req_mu);
	return rc;
}

/* Notes the seq of an event line and hands the line on. */
static void pass_line(struct ph_link *l, const char *line, size_t len)
{
	int64_t s = -1;
	const char *q;

	if (len > 8 && !memcmp(line, "{\"event\"", 8) &&
	    (q = memmem(line, len < 200 ? len : 200, "\"seq\":", 6))) {
		/* digits inline: strtoll was a measurable part of each line */
		const char *e = line + len;

		for (q += 6, s = 0; q < e && *q >= '0' && *q <= '9'; q++)
			s = s * 10 + (*q - '0');
	}
	if (s > l->last_seq)
		l->last_seq = s;
	if (l->on_line)
		l->on_line(l->ctx, line, len);
}

/*
 * Hands on the lines held until the hello answer said whose they are,
 * and says how many did not fit.
 */
static void pass_early(struct ph_link *l, struct ph_buf *early, uint64_t *lost)
{
	size_t at = 0;
	char *nl;

	while ((nl = memchr(early->buf + at, '\n', early->len - at))) {
		l->lines++;
		pass_line(l, early->buf + at, (size_t)(nl - early->buf - at));
		at = (size_t)(nl - early->buf) + 1;
	}
	if (*lost)
		ph_warn("%s: %" PRIu64 " lines came before the app's hello "
			"answer and did not fit the %zu MiB held for them; "
			"their events are missing from this session",
			l->target, *lost, EARLY_CAP >> 20);
	ph_buf_release(early);
	*lost = 0;
}

/*
 * One connection: hello, backfill, then lines until EOF or stop.  Whether
 * the app answered hello: a peer that closes first is not an app (adb's
 * forward accepts, then closes, when nothing listens on the device).
 * *refused: the app refused the connection in one line (check_refusal).
 *
 * A runtime streams events to a client from the moment it accepts it, so
 * event lines can come before the hello answer.  They are held until it
 * comes: before it, they are no known process's, and handed on they
 * would land in the session of the process before (an app that
 * restarted) under seqs that process had used.
 */
static bool session(struct ph_link *l, int fd, bool *refused)
{
	struct ph_buf in = PH_BUF_INIT(LINE_CAP + 65536);
	struct ph_buf early = PH_BUF_INIT(EARLY_CAP);
	uint64_t early_lost = 0;
	char req[160];
	bool hello_seen = false;

	*refused = false;
	snprintf(
		req, sizeof(req),
		"{\"id\":1,\"method\":\"hello\",\"params\":{}}\n"
		"{\"id\":2,\"method\":\"timeline\",\"params\":{\"sinceSeq\":%" PRId64
		",\"limit\":100000}}\n",
		l->last_seq + 1);
	/*
	 * A runtime that refuses the connection closes it after one line:
	 * the send may fail then, and the line is still there to read.
	 */
	if (send_line(fd, req))
		ph_debug("could not send hello to %s", l->target);
	while (!l->stop && !*refused) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		size_t start = 0;
		char *nl;
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		if (ph_buf_grow(&in, 65536))
			break; /* a line longer than any runtime sends */
		n = read(fd, in.buf + in.len, 65536);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		ph_buf_setlen(&in, in.len + (size_t)n);
		while ((nl = memchr(in.buf + start, '\n', in.len - start))) {
			const char *line = in.buf + start;
			size_t len = (size_t)(nl - line);

			start += len + 1;
			if (!hello_seen && check_refusal(l, line, len)) {
				*refused = true;
				break;
			}
			if (!hello_seen && len > 6 &&
			    !memcmp(line, "{\"id\":1", 7)) {
				hello_seen = true;
				if (!check_hello(l, line, len)) {
					l->stop = 1;
					break;
				}
				pthread_mutex_lock(&l->mu);
				l->state = PH_LINK_CONNECTED;
				l->error[0] = '\0';
				l->hellos++;
				pthread_mutex_unlock(&l->mu);
				if (l->on_hello)
					l->on_hello(l->ctx, &l->ident);
				l->lines++;
				pass_line(l, line, len);
				pass_early(l, &early, &early_lost);
				continue;
			}
			if (!hello_seen && deliver_answer(l, line, len)) {
				l->lines++;
				continue; /* a request's answer is no event */
			}
			if (!hello_seen) {
				size_t had = early.len;

				if (ph_buf_add(&early, line, len) ||
				    ph_buf_addch(&early, '\n')) {
					ph_buf_setlen(&early, had);
					early_lost++;
				}
				continue;
			}
			l->lines++;
			if (!deliver_answer(l, line, len))
				pass_line(l, line, len);
		}
		ph_buf_consume(&in, start);
	}
	if (early.len)
		ph_debug("%s: dropped %zu bytes that came before the hello "
			 "answer, with the connection",
			 l->target, early.len);
	ph_buf_release(&early);
	ph_buf_release(&in);
	return hello_seen;
}

/* Waits backoff ms (or until stopped) and doubles it, up to the most. */
static void back_off(struct ph_link *l, int *backoff)
{
	for (int w = 0; w < *backoff && !l->stop; w += 10)
		usleep(10000);
	*backoff = *backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
						   *backoff * 2;
}

static void *run(void *arg)
{
	struct ph_link *l = arg;
	int backoff = BACKOFF_MIN_MS;

	while (!l->stop) {
		bool via_adb, refused, answered;
		int fd = open_target(l, &via_adb);

		if (fd < 0) {
			if (!l->error[0])
				set_error(l,
					  "not running: nothing listens on %s",
					  l->target);
			back_off(l, &backoff);
			continue;
		}
		l->fd = fd;
		pthread_mutex_lock(&l->mu);
		l->connects++;
		l->via_adb = via_adb;
		pthread_mutex_unlock(&l->mu);
		answered = session(l, fd, &refused);
		/* No request may write to a closed (or reused) descriptor. */
		pthread_mutex_lock(&l->req_mu);
		l->fd = -1;
		pthread_cond_broadcast(&l->req_cv);
		pthread_mutex_unlock(&l->req_mu);
		close(fd);
		pthread_mutex_lock(&l->mu);
		if (l->state == PH_LINK_CONNECTED)
			l->state = PH_LINK_CONNECTING;
		pthread_mutex_unlock(&l->mu);
		if (l->state == PH_LINK_REFUSED || l->once)
			break;
		/*
		 * The next connection's backfill starts at seq 0: it is asked
		 * for with the hello, before the answer says whether the app
		 * is this process again or a new one, whose seqs start at 0.
		 * What the same process sends again the store drops by seq.
		 */
		l->last_seq = -1;
		if ((refused || !answered) && !l->stop) {
			/* Backs off as for a refused connection: retrying
			 * at once would be thousands of connections a
			 * second.  (Every slot taken: the app said so.) */
			if (!refused)
				set_error(l,
					  "not running: %s closed the "
					  "connection before the app answered",
					  l->target);
			back_off(l, &backoff);
			continue;
		}
		backoff = BACKOFF_MIN_MS;
		set_error(l, "the app went away; reconnecting");
	}
	pthread_mutex_lock(&l->mu);
	if (l->state != PH_LINK_REFUSED)
		l->state = PH_LINK_STOPPED;
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

void ph_link_init(struct ph_link *l)
{
	if (l->inited)
		return;
	pthread_mutex_init(&l->mu, NULL);
	pthread_mutex_init(&l->req_mu, NULL);
	pthread_cond_init(&l->req_cv, NULL);
	l->inited = true;
}

void ph_link_release(struct ph_link *l)
{
	if (!l->inited)
		return;
	pthread_mutex_destroy(&l->mu);
	pthread_mutex_destroy(&l->req_mu);
	pthread_cond_destroy(&l->req_cv);
	l->inited = false;
}

int ph_link_start(struct ph_link *l)
{
	ph_link_init(l);
	l->req_id = 0;
	pthread_mutex_lock(&l->mu);
	l->state = PH_LINK_CONNECTING;
	pthread_mutex_unlock(&l->mu);
	l->last_seq = -1;
	l->fd = -1;
	l->stop = 0;
	if (pthread_create(&l->thread, NULL, run, l))
		return ph_error(PH_EIO, "cannot start the link thread");
	l->running = true;
	return 0;
}

void ph_link_stop(struct ph_link *l)
{
	if (!l->running)
		return;
	l->stop = 1;
	pthread_join(l->thread, NULL);
	l->running = false;
}

const char *ph_link_fix(const char *why)
{
	if (strstr(why, "EACCES"))
		return "run porthole as the app's user or as root";
	if (strstr(why, "too many clients"))
		return "close another client of this app (porthole watch, "
		       "capture, mcp, ui)";
	if (strstr(why, "EMFILE") || strstr(why, "ENFILE"))
		return "the app has run out of file descriptors: find what "
		       "keeps them open (its memory events' fds count shows "
		       "the climb; ls -l /proc/PID/fd lists them)";
	if (strstr(why, "protocol"))
		return "use a host and runtime of the same protocol version";
	if (strstr(why, "refused by the app"))
		return "the app runs and refused this host: its reason says why";
	return "start the app (a debug build linked with libporthole) and "
	       "check the app id";
}

bool ph_link_wait_connected(struct ph_link *l, int timeout_ms)
{
	int64_t end = ph_clock_uptime_ms() + timeout_ms;

	for (;;) {
		enum ph_link_state st;

		pthread_mutex_lock(&l->mu);
		st = l->state;
		pthread_mutex_unlock(&l->mu);
		if (st == PH_LINK_CONNECTED)
			return true;
		if (st == PH_LINK_REFUSED || st == PH_LINK_STOPPED ||
		    ph_clock_uptime_ms() >= end)
			return false;
		usleep(5000);
	}
}
