/* SPDX-License-Identifier: Apache-2.0 */
#include "ph_common.h"
#include "ph_client.h"
#include "ph_clock.h"
#include "ph_error.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int ph_client_connect(struct ph_client_conn *c, const char *name, int wait_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	socklen_t len =
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	int64_t deadline = ph_clock_uptime_ms() + wait_ms;

	c->fd = -1;
	c->off = 0;
	ph_buf_init(&c->in, 64 << 20);
	if (n + 1 > sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path + 1, name, n);
	for (;;) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, len)) {
			c->fd = fd;
			return 0;
		}
		if (fd >= 0)
			close(fd);
		if (ph_clock_uptime_ms() >= deadline)
			return -1;
		usleep(10 * 1000);
	}
}

void ph_client_close(struct ph_client_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	ph_buf_release(&c->in);
}

int ph_client_send(struct ph_client_conn *c, const char *line)
{
	size_t n = strlen(line);

	while (n) {
		ssize_t w = send(c->fd, line, n, MSG_NOSIGNAL);

		if (w <= 0)
			return -1;
		line += w;
		n -= (size_t)w;
	}
	return 0;
}

int ph_client_line(struct ph_client_conn *c, struct ph_buf *line,
		   int timeout_ms)
{
	int64_t deadline = ph_clock_uptime_ms() + timeout_ms;

	for (;;) {
		char *nl = memchr(c->in.buf + c->off, '\n', c->in.len - c->off);
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int64_t left;
		ssize_t n;

		if (nl) {
			size_t len = (size_t)(nl - (c->in.buf + c->off));

			ph_buf_reset(line);
			if (ph_buf_add(line, c->in.buf + c->off, len))
				return -1;
			c->off += len + 1;
			return 1;
		}
		/* Only a partial line is left: move it to the front. */
		ph_buf_consume(&c->in, c->off);
		c->off = 0;
		left = deadline - ph_clock_uptime_ms();
		if (left <= 0)
			return 0;
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		n = ph_buf_read_once(&c->in, c->fd, 1 << 16);
		if (n == 0 || (n < 0 && n != PH_EAGAIN))
			return -1;
	}
}

int ph_client_call(struct ph_client_conn *c, int id, const char *method,
		   const char *params, struct ph_buf *resp,
		   struct ph_buf *events, int timeout_ms)
{
	char req[4096], want[32];
	int64_t deadline = ph_clock_uptime_ms() + timeout_ms;

	snprintf(req, sizeof(req),
		 "{\"id\":%d,\"method\":\"%s\",\"params\":%s}\n", id, method,
		 params ? params : "{}");
	if (ph_client_send(c, req))
		return -1;
	snprintf(want, sizeof(want), "{\"id\":%d,", id);
	for (;;) {
		int64_t left = deadline - ph_clock_uptime_ms();
		int rc = ph_client_line(c, resp, left > 0 ? (int)left : 0);

		if (rc <= 0)
			return rc;
		if (!strncmp(resp->buf, want, strlen(want)))
			return 1;
		if (events && (ph_buf_add(events, resp->buf, resp->len) ||
			       ph_buf_addch(events, '\n')))
			return -1;
	}
}
