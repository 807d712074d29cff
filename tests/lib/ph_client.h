/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_client.h: a small blocking client of the agent's socket, for tests
 * and benchmarks (the host has its own device link).
 */
#ifndef PH_TEST_CLIENT_H
#define PH_TEST_CLIENT_H

#include "ph_common.h"
#include "ph_buf.h"

struct ph_client_conn {
	int fd;
	struct ph_buf in; /* bytes read; in.buf[off..] not yet returned */
	size_t off;
};

/* Connects to the abstract socket `name`; retries for up to wait_ms. */
int ph_client_connect(struct ph_client_conn *c, const char *name, int wait_ms);
void ph_client_close(struct ph_client_conn *c);
int ph_client_send(struct ph_client_conn *c, const char *line);
/*
 * The next line (without '\n') into line, waiting at most timeout_ms.
 * Returns 1 with a line, 0 on timeout, -1 when the peer closed.
 */
int ph_client_line(struct ph_client_conn *c, struct ph_buf *line,
		   int timeout_ms);
/*
 * Sends a request and returns its response line, skipping (and appending
 * to `events`, when not NULL) event lines that arrive first.
 */
int ph_client_call(struct ph_client_conn *c, int id, const char *method,
		   const char *params, struct ph_buf *resp,
		   struct ph_buf *events, int timeout_ms);

#endif
