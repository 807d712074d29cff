/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api_server.c: the sample's own HTTP API, served on 127.0.0.1 only, on a
 * port the kernel picks.  A deliberately small HTTP/1.1 server (one thread,
 * one connection at a time, keep-alive) with the routes the planted bugs
 * need:
 *
 *	GET  /v1/cart/<id>         200 JSON
 *	POST /v1/checkout          402 with an error body (the failed call)
 *	GET  /v1/recommendations   200 after 3.2 s (the slow call)
 *	POST /v1/upload            200 after reading a chunked upload
 *	GET  /v1/image.bin         200, 200 KB of binary
 *	GET  /v1/session           200 with a Set-Cookie (redaction)
 */
#include "sample.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static int listen_fd = -1;
static int port;

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void respond(int fd, int status, const char *reason, const char *type,
		    const char *extra, const char *body, size_t len)
{
	char head[512];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\n%s\r\n",
			 status, reason, type, len, extra ? extra : "");

	send_all(fd, head, (size_t)n);
	send_all(fd, body, len);
}

/* Reads one request (headers, and a Content-Length or chunked body). */
static int read_request(int fd, char *buf, size_t cap, size_t *body_len)
{
	size_t n = 0;
	char *end = NULL;

	*body_len = 0;
	while (!end) {
		ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);

		if (r <= 0)
			return -1;
		n += (size_t)r;
		buf[n] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (!end && n >= cap - 1)
			return -1;
	}
	{
		size_t head = (size_t)(end + 4 - buf), have = n - head;
		const char *cl = strcasestr(buf, "\r\nContent-Length:");
		bool chunked = strcasestr(buf, "Transfer-Encoding: chunked");
		char tmp[8192];

		if (cl) {
			size_t want = strtoul(cl + 17, NULL, 10);

			while (have < want) {
				ssize_t r = recv(fd, tmp, sizeof(tmp), 0);

				if (r <= 0)
					return -1;
				have += (size_t)r;
			}
			*body_len = want;
		} else if (chunked) {
			/* Read on until the last five bytes end the body. */
			char tail[5];
			size_t t = have < 5 ? have : 5;

			memcpy(tail, buf + n - t, t);
			*body_len = have;
			while (t < 5 || memcmp(tail, "0\r\n\r\n", 5)) {
				ssize_t r = recv(fd, tmp, sizeof(tmp), 0);

				if (r <= 0)
					return -1;
				*body_len += (size_t)r;
				for (ssize_t i = 0; i < r; i++) {
					if (t == 5) {
						memmove(tail, tail + 1, 4);
						t = 4;
					}
					tail[t++] = tmp[i];
				}
			}
		}
	}
	return 0;
}

static void route(int fd, const char *req)
{
	char method[8] = "", path[256] = "";

	if (sscanf(req, "%7s %255s", method, path) != 2) {
		respond(fd, 400, "Bad Request", "text/plain", NULL, "bad\n", 4);
		return;
	}
	if (!strncmp(path, "/v1/cart/", 9)) {
		char body[256];
		int n = snprintf(body, sizeof(body),
				 "{\"cartId\":%d,\"items\":[{\"sku\":"
				 "\"mug-ceramic-01\",\"qty\":2},{\"sku\":"
				 "\"poster-a2\",\"qty\":1}]}",
				 atoi(path + 9));

		respond(fd, 200, "OK", "application/json", NULL, body,
			(size_t)n);
	} else if (!strncmp(path, "/v1/checkout", 12)) {
		static const char body[] =
			"{\"error\":\"payment_required\",\"message\":\"Card "
			"declined\"}";

		respond(fd, 402, "Payment Required", "application/json", NULL,
			body, sizeof(body) - 1);
	} else if (!strncmp(path, "/v1/recommendations", 19)) {
		usleep(3200 * 1000); /* the planted slow call */
		respond(fd, 200, "OK", "application/json", NULL, "[]", 2);
	} else if (!strncmp(path, "/v1/upload", 10)) {
		respond(fd, 200, "OK", "application/json", NULL,
			"{\"stored\":true}", 15);
	} else if (!strncmp(path, "/v1/image.bin", 13)) {
		static char blob[200 * 1024];

		for (size_t i = 0; i < sizeof(blob); i++)
			blob[i] = (char)(i * 31);
		respond(fd, 200, "OK", "application/octet-stream", NULL, blob,
			sizeof(blob));
	} else if (!strncmp(path, "/v1/session", 11)) {
		respond(fd, 200, "OK", "application/json",
			"Set-Cookie: session=do-not-log; HttpOnly\r\n",
			"{\"ok\":true}", 11);
	} else {
		respond(fd, 404, "Not Found", "text/plain", NULL, "no\n", 3);
	}
}

static void *serve(void *arg)
{
	static char buf[64 * 1024];

	(void)arg;
	for (;;) {
		int fd = accept(listen_fd, NULL, NULL);
		size_t body;

		if (fd < 0)
			continue;
		/* keep-alive: serve requests until the client closes */
		while (!read_request(fd, buf, sizeof(buf), &body))
			route(fd, buf);
		close(fd);
	}
	return NULL;
}

int api_server_start(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	pthread_t t;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, len) ||
	    listen(listen_fd, 16) ||
	    getsockname(listen_fd, (struct sockaddr *)&sa, &len))
		return -1;
	port = ntohs(sa.sin_port);
	if (pthread_create(&t, NULL, serve, NULL))
		return -1;
	pthread_detach(t);
	return 0;
}

int api_server_port(void)
{
	return port;
}
