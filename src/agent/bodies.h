/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bodies.h: the first 4 KiB of each way's body of the newest finished
 * HTTP calls, for `inflight` (docs/protocol.md section 2, BodyPreview;
 * section 7: text types only, the first 4 KiB, the newest 25 calls).
 * Events carry only the 512-char snippet; a queue slot is no place for
 * 8 KiB per call.
 *
 * curl.c puts a call's bodies here as the call ends, on the thread that
 * made the call; the writer reads them when it answers inflight.  One
 * lock, held by either side only for a copy, never by a client.
 */
#ifndef PH_AGENT_BODIES_H
#define PH_AGENT_BODIES_H

#include "ph_common.h"
#include "ph_json.h"

#define PH_BODY_MAX    4096
#define PH_BODIES_KEPT 25

struct ph_body {
	char type[64];	  /* the Content-Type, "" when none was sent */
	int64_t bytes;	  /* the whole body's size; 0: no body, -1 unknown */
	const char *why;  /* not captured: why (a static string); else NULL */
	size_t len;	  /* bytes in text, at most PH_BODY_MAX */
	const char *text; /* the first bytes, when captured */
};

void ph_bodies_put(const char *call_id, const struct ph_body *req,
		   const struct ph_body *resp);
/*
 * requestBody and responseBody (BodyPreview objects) of call_id, as
 * members of the object being written, when they are kept; a way that had
 * no body is left out.
 */
void ph_bodies_json(struct ph_jw *w, const char *call_id);
/* Forgets them all (at stop). */
void ph_bodies_reset(void);

#endif
