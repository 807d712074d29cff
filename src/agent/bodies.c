/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bodies.c: see bodies.h.  A ring of PH_BODIES_KEPT calls, the oldest
 * overwritten; each way's text cut at a character boundary so the
 * preview is valid UTF-8 when the body was.
 */
#include "ph_common.h"
#include "bodies.h"

#include <pthread.h>

struct kept_body {
	char type[64];
	int64_t bytes;
	const char *why;
	size_t len;
	char text[PH_BODY_MAX];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char id[24];
	struct kept_body req, resp;
} kept[PH_BODIES_KEPT];
static unsigned next;

/* n, less the bytes of a UTF-8 sequence the cut at n would split. */
static size_t char_cut(const char *s, size_t n, bool cut)
{
	size_t back = 0;

	if (!cut)
		return n;
	while (back < 4 && back < n &&
	       ((unsigned char)s[n - 1 - back] & 0xc0) == 0x80)
		back++;
	if (back < n) {
		unsigned char lead = (unsigned char)s[n - 1 - back];
		size_t want = lead >= 0xf0 ? 4 :
			      lead >= 0xe0 ? 3 :
			      lead >= 0xc0 ? 2 :
					     1;

		if (want > back + 1)
			return n - back - 1; /* the lead's sequence is cut */
	}
	return n;
}

static void keep(struct kept_body *k, const struct ph_body *b)
{
	snprintf(k->type, sizeof(k->type), "%s", b->type);
	k->bytes = b->bytes;
	k->why = b->why;
	k->len = 0;
	if (!b->why && b->text) {
		size_t n = b->len < PH_BODY_MAX ? b->len : PH_BODY_MAX;

		k->len = char_cut(b->text, n,
				  b->bytes < 0 || (size_t)b->bytes > n);
		memcpy(k->text, b->text, k->len);
	}
}

void ph_bodies_put(const char *call_id, const struct ph_body *req,
		   const struct ph_body *resp)
{
	pthread_mutex_lock(&mu);
	snprintf(kept[next].id, sizeof(kept[next].id), "%s", call_id);
	keep(&kept[next].req, req);
	keep(&kept[next].resp, resp);
	next = (next + 1) % PH_BODIES_KEPT;
	pthread_mutex_unlock(&mu);
}

static void preview(struct ph_jw *w, const char *key, const struct kept_body *k)
{
	if (!k->bytes)
		return; /* no body that way: absent */
	ph_jw_key(w, key);
	ph_jw_obj_begin(w);
	if (k->type[0])
		ph_jw_kv_str(w, "contentType", k->type);
	ph_jw_kv_int(w, "byteCount", k->bytes);
	ph_jw_kv_bool(w, "truncated",
		      !k->why && (k->bytes < 0 || (size_t)k->bytes > k->len));
	if (k->why) {
		ph_jw_kv_str(w, "omittedReason", k->why);
	} else {
		ph_jw_key(w, "text");
		ph_jw_strn(w, k->text, k->len);
	}
	ph_jw_obj_end(w);
}

void ph_bodies_json(struct ph_jw *w, const char *call_id)
{
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < PH_BODIES_KEPT; i++)
		if (kept[i].id[0] && !strcmp(kept[i].id, call_id)) {
			preview(w, "requestBody", &kept[i].req);
			preview(w, "responseBody", &kept[i].resp);
			break;
		}
	pthread_mutex_unlock(&mu);
}

void ph_bodies_reset(void)
{
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < PH_BODIES_KEPT; i++)
		kept[i].id[0] = '\0';
	next = 0;
	pthread_mutex_unlock(&mu);
}
