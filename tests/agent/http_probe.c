/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http_probe: an app that makes real libcurl calls against its own small
 * HTTP/1.1 server, so tests/e2e/agent_http.sh can hold each http_start /
 * http_end pair the agent emits against what actually went over the wire.
 *
 *	http_probe SOCKET_NAME DATA_DIR SERVED_LOG
 *
 * The server (127.0.0.1, an ephemeral port, a thread per connection,
 * keep-alive) writes one JSON line per request it answered to SERVED_LOG:
 * the connection it came on (so reuse is known without asking curl), the
 * bytes it read and sent, and whether the planted secrets arrived; never
 * the secrets themselves, nor a query string.  The bodies each way are
 * logged too (all but the binary one), for the snippet checks.
 *
 * Handles: one attached asking for bodies, one attached without, one
 * never attached; two more, attached, fail: one to connect, one waiting
 * on a server that never answers.  Prints one line per call (method, path
 * without its query, status) and exits 0 when every call got the answer
 * the server gives, or failed where it should.
 */
#define _GNU_SOURCE 1
#include "porthole.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 16

/* The planted secrets: none may appear in anything the agent sends. */
#define SECRET_AUTH   "Bearer do-not-log-123"
#define SECRET_QUERY  "token=do-not-log-456"
#define SECRET_COOKIE "session=do-not-log-789"

/* Over 4 KB: more than the agent keeps, so the event's snippet is a cut. */
#define TEXT_LEN 6000
#define BIN_LEN	 3000

static char text_body[TEXT_LEN + 1];
static unsigned char bin_body[BIN_LEN];

static int listen_fd = -1;
static struct conn {
	pthread_t thread;
	int fd;
	int index; /* in accept order: the log's "conn" */
} conns[MAX_CONNS];
static int n_conns;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *served;

/*
 * The text body: numbered ASCII lines, with a three-byte UTF-8 character
 * ("\xe2\x82\xac", the euro sign) across bytes 508-510, where the event's
 * snippet (512 bytes with its "...") is cut: a cut inside the character
 * would be invalid UTF-8.
 */
static void make_bodies(void)
{
	size_t n = 0;

	for (int line = 1; n < TEXT_LEN; line++) {
		char l[64];
		int k = snprintf(l, sizeof(l),
				 "%04d porthole http probe, plain text\n",
				 line);

		for (int i = 0; i < k && n < TEXT_LEN; i++)
			text_body[n++] = l[i];
	}
	memcpy(text_body + 508, "\xe2\x82\xac", 3);
	/* and one across 4 KiB, inflight's cut: that cut keeps 4094 bytes */
	memcpy(text_body + 4094, "\xe2\x82\xac", 3);
	text_body[TEXT_LEN] = '\0';
	for (int i = 0; i < BIN_LEN; i++)
		bin_body[i] = (unsigned char)(i * 7);
}

/* flags: MSG_MORE for a response head with a body to follow (no Nagle wait) */
static int send_all(int fd, const void *buf, size_t n, int flags)
{
	const char *p = buf;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | flags);

		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* s as a JSON string's contents (the bodies logged are ASCII or UTF-8) */
static void put_json_str(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			fputs("\\n", f);
		else if (s[i] == '"' || s[i] == '\\')
			fprintf(f, "\\%c", s[i]);
		else
			fputc(s[i], f);
	}
}

struct req {
	char method[16];
	char path[512]; /* without the query */
	size_t content_length;
	int expect_continue;
	int auth, cookie, query; /* whether each secret arrived intact */
	const char *body;	 /* content_length bytes, in the read buffer */
};

/* Parses the request line and the headers this server cares about. */
static int parse_head(char *head, struct req *r)
{
	char *line, *save = NULL, target[1024];

	memset(r, 0, sizeof(*r));
	line = strtok_r(head, "\r\n", &save);
	if (!line || sscanf(line, "%15s %1023s", r->method, target) != 2)
		return -1;
	r->query = strstr(target, "?" SECRET_QUERY) != NULL;
	target[strcspn(target, "?")] = '\0';
	snprintf(r->path, sizeof(r->path), "%.*s", (int)sizeof(r->path) - 1,
		 target);
	while ((line = strtok_r(NULL, "\r\n", &save))) {
		if (!strncasecmp(line, "Content-Length:", 15))
			r->content_length = strtoul(line + 15, NULL, 10);
		else if (!strncasecmp(line, "Expect:", 7))
			r->expect_continue = strcasestr(line, "100") != NULL;
		else if (!strcasecmp(line, "Authorization: " SECRET_AUTH))
			r->auth = 1;
		else if (!strncasecmp(line, "Cookie:", 7))
			r->cookie = strstr(line, SECRET_COOKIE) != NULL;
	}
	return 0;
}

/*
 * Answers r on fd and logs it.  Returns -1 when the connection is gone.
 * /stall never answers: the client gives up, and the log says status 0.
 */
static int answer(int fd, int conn, const struct req *r)
{
	const char *type = "text/plain", *body = "not found\n";
	char head[256];
	size_t len;
	int status = 404, hn = 0;

	if (!strcmp(r->path, "/text")) {
		status = 200;
		type = "text/plain; charset=utf-8";
		body = text_body;
	} else if (!strcmp(r->path, "/binary")) {
		status = 200;
		type = "application/octet-stream";
		body = (const char *)bin_body;
	} else if (!strcmp(r->path, "/empty")) {
		status = 204;
		type = NULL;
		body = "";
	} else if (!strncmp(r->path, "/echo", 5) &&
		   !strcmp(r->method, "POST")) {
		status = 200;
		type = "application/json";
		body = r->body;
	} else if (!strcmp(r->path, "/secret")) {
		status = 200;
		body = "ok\n";
	} else if (!strcmp(r->path, "/stall")) {
		status = 0;
		type = NULL;
		body = "";
	}
	len = body == (const char *)bin_body ? BIN_LEN :
	      body == r->body		     ? r->content_length :
					       strlen(body);
	/* 204 carries neither a body nor a Content-Length (RFC 9110 8.6) */
	if (status == 204)
		hn = snprintf(head, sizeof(head),
			      "HTTP/1.1 204 No Content\r\n\r\n");
	else if (status)
		hn = snprintf(head, sizeof(head),
			      "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
			      "Content-Length: %zu\r\n\r\n",
			      status, status == 200 ? "OK" : "Not Found", type,
			      len);
	if (send_all(fd, head, (size_t)hn, len ? MSG_MORE : 0) ||
	    send_all(fd, body, len, 0))
		return -1;
	pthread_mutex_lock(&log_mu);
	fprintf(served,
		"{\"conn\":%d,\"method\":\"%s\",\"path\":\"%s\","
		"\"requestBytes\":%zu,\"status\":%d,\"responseBytes\":%zu,"
		"\"auth\":%d,\"cookie\":%d,\"query\":%d",
		conn, r->method, r->path, r->content_length, status, len,
		r->auth, r->cookie, r->query);
	if (r->content_length) {
		fputs(",\"requestBody\":\"", served);
		put_json_str(served, r->body, r->content_length);
		fputc('"', served);
	}
	if (type && strcmp(type, "application/octet-stream")) {
		fputs(",\"body\":\"", served);
		put_json_str(served, body, len);
		fputc('"', served);
	}
	fputs("}\n", served);
	fflush(served);
	pthread_mutex_unlock(&log_mu);
	return 0;
}

/* One connection: requests in turn until the client closes it. */
static void *serve_conn(void *arg)
{
	const struct conn *cn = arg;
	int fd = cn->fd;
	char buf[16384];
	size_t have = 0;

	for (;;) {
		char *end = memmem(buf, have, "\r\n\r\n", 4);
		size_t head_len, total;
		struct req r;
		ssize_t got;

		if (!end) {
			if (have == sizeof(buf))
				break;
			got = recv(fd, buf + have, sizeof(buf) - have, 0);
			if (got <= 0)
				break;
			have += (size_t)got;
			continue;
		}
		*end = '\0';
		head_len = (size_t)(end - buf) + 4;
		if (parse_head(buf, &r) || r.content_length > sizeof(buf) / 2)
			break;
		if (r.expect_continue &&
		    send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25, 0))
			break;
		total = head_len + r.content_length;
		while (have < total) {
			got = recv(fd, buf + have, sizeof(buf) - have, 0);
			if (got <= 0)
				goto out;
			have += (size_t)got;
		}
		r.body = buf + head_len;
		if (answer(fd, cn->index, &r))
			break;
		memmove(buf, buf + total, have - total);
		have -= total;
	}
out:
	close(fd);
	return NULL;
}

static void *serve(void *arg)
{
	int fd;

	(void)arg;
	/* the listener is shut down at the end, which fails accept */
	while ((fd = accept(listen_fd, NULL, NULL)) >= 0) {
		struct conn *cn;

		if (n_conns == MAX_CONNS) {
			close(fd);
			continue;
		}
		cn = &conns[n_conns];
		cn->fd = fd;
		cn->index = n_conns;
		if (pthread_create(&cn->thread, NULL, serve_conn, cn)) {
			close(fd);
			continue;
		}
		n_conns++;
	}
	return NULL;
}

/* A TCP port on 127.0.0.1 that nothing listens on: bound, then let go. */
static int closed_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &alen))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static int start_server(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (listen_fd < 0 ||
	    bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(listen_fd, 16) ||
	    getsockname(listen_fd, (struct sockaddr *)&a, &alen))
		return -1;
	return ntohs(a.sin_port);
}

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	(void)ctx;
	return size * n;
}

static CURL *new_handle(bool attach, bool bodies)
{
	CURL *c = curl_easy_init();

	if (!c)
		return NULL;
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	if (attach && porthole_curl_attach(c, bodies) != PORTHOLE_OK)
		fprintf(stderr, "http_probe: attach failed\n");
	return c;
}

static int failures;
/* $PROBE_HOLD/times: per call, the wall time around curl_easy_perform and
 * curl's own total, in µs: the agent's elapsedMs lies between them. */
static FILE *times;

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * One call: GET, or POST of post when it is not NULL.  want is the status
 * the server answers with; 0 expects the call itself to fail.  The target
 * may carry a query; what is printed stops before it.
 */
static void call(CURL *c, int port, const char *target,
		 struct curl_slist *headers, const char *post, long want)
{
	char url[512];
	long status = 0;
	curl_off_t total = -1;
	int64_t t0, wall;
	CURLcode res;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, target);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	if (post) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, post);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(post));
	} else {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	}
	t0 = mono_us();
	res = curl_easy_perform(c);
	wall = mono_us() - t0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(c, CURLINFO_TOTAL_TIME_T, &total);
	if (times)
		fprintf(times, "%lld %lld\n", (long long)wall,
			(long long)total);
	printf("%s %.*s %ld%s\n", post ? "POST" : "GET",
	       (int)strcspn(target, "?"), target, status,
	       res == CURLE_OK ? "" : " (failed)");
	if (want ? res != CURLE_OK || status != want : res == CURLE_OK) {
		printf("  expected %ld\n", want);
		failures++;
	}
}

/*
 * With $PROBE_HOLD (a directory) set: says the calls are done (a file
 * calls-done there) and waits, up to 30 s, for the test to have asked
 * what it wants of the agent (a file asked).
 */
static void hold(void)
{
	const char *dir = getenv("PROBE_HOLD");
	char path[512];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/calls-done", dir);
	f = fopen(path, "w");
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/asked", dir);
	for (int i = 0; i < 300 && access(path, F_OK); i++)
		usleep(100 * 1000);
}

int main(int argc, char **argv)
{
	struct porthole_config cfg = { .app_id = "e2e.http",
				       .flags = PORTHOLE_CAPTURE_BODIES };
	static const char post_body[] =
		"{\"sku\":\"mug-ceramic-01\",\"qty\":2}";
	struct curl_slist *secret = NULL, *json = NULL;
	CURL *bodies, *plain, *unattached, *refused, *stalled;
	char big_path[512], big_body[800];
	pthread_t server;
	int port, dead_port;

	if (argc != 4)
		return 2;
	cfg.socket_name = argv[1];
	cfg.data_dir = argv[2];
	served = fopen(argv[3], "w");
	make_bodies();
	if (getenv("PROBE_HOLD")) {
		char path[512];

		snprintf(path, sizeof(path), "%s/times", getenv("PROBE_HOLD"));
		times = fopen(path, "w");
		if (times)
			setvbuf(times, NULL, _IOLBF, 0);
	}
	port = start_server();
	dead_port = closed_port();
	if (!served || port <= 0 || dead_port <= 0 ||
	    pthread_create(&server, NULL, serve, NULL))
		return 1;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (porthole_start(&cfg) != PORTHOLE_OK)
		return 1;
	/* the recorder backfills what it missed; this only makes it rare */
	sleep(1);

	bodies = new_handle(true, true);
	plain = new_handle(true, false);
	unattached = new_handle(false, false);
	refused = new_handle(true, true);
	stalled = new_handle(true, true);
	if (!bodies || !plain || !unattached || !refused || !stalled)
		return 1;
	curl_easy_setopt(stalled, CURLOPT_TIMEOUT_MS, 300L);
	/*
	 * A long URL with a text body each way: with both snippets (512 B
	 * each) it is more than one event record holds, and the counts and
	 * phases must still be there.
	 */
	snprintf(big_path, sizeof(big_path), "/echo/%0385d", 0);
	snprintf(big_body, sizeof(big_body), "{\"note\":\"%0700d\"}", 7);
	secret = curl_slist_append(secret, "Authorization: " SECRET_AUTH);
	secret = curl_slist_append(secret, "Cookie: " SECRET_COOKIE);
	/* a secret by a word in its name; a header sent twice */
	secret = curl_slist_append(secret, "X-Refresh-Token: do-not-log-456");
	secret = curl_slist_append(secret, "X-Tag: a");
	secret = curl_slist_append(secret, "X-Tag: b");
	json = curl_slist_append(json, "Content-Type: application/json");

	call(bodies, port, "/text", NULL, NULL, 200);
	call(bodies, port, "/binary", NULL, NULL, 200);
	call(bodies, port, "/empty", NULL, NULL, 204);
	call(bodies, port, "/echo", json, post_body, 200);
	call(bodies, port, "/secret?" SECRET_QUERY "&page=2", secret, NULL,
	     200);
	call(bodies, port, "/missing", NULL, NULL, 404);
	call(bodies, port, big_path, json, big_body, 200);
	call(plain, port, "/text", NULL, NULL, 200);
	call(plain, port, "/echo", json, post_body, 200);
	call(unattached, port, "/unattached-zebra-7731", NULL, NULL, 404);
	call(refused, dead_port, "/refused", NULL, NULL, 0);
	call(stalled, port, "/stall", NULL, NULL, 0);

	/* the writer sends what is queued well within this */
	sleep(1);
	hold();
	porthole_stop();
	curl_easy_cleanup(bodies);
	curl_easy_cleanup(plain);
	curl_easy_cleanup(unattached);
	curl_easy_cleanup(refused);
	curl_easy_cleanup(stalled);
	curl_slist_free_all(secret);
	curl_slist_free_all(json);
	curl_global_cleanup();
	shutdown(listen_fd, SHUT_RDWR);
	pthread_join(server, NULL);
	close(listen_fd);
	/* curl closed every connection above: each thread has ended or will */
	for (int i = 0; i < n_conns; i++)
		pthread_join(conns[i].thread, NULL);
	fclose(served);
	return failures ? 1 : 0;
}
