/* SPDX-License-Identifier: Apache-2.0 */
/*
 * providers.c: what the app hands over on request: its semantics tree
 * (`semantics_tree`) and its screen (`screenshot`).  Both providers are
 * called on the writer thread; docs/agent.md says they must be safe there.
 */
#include "ph_common.h"
#include "collectors.h"
#include "ph_buf.h"
#include "../platform.h"

#if PH_PLATFORM_ZLIB
#include <zlib.h>
#endif

static _Atomic(porthole_semantics_fn) sem_fn;
static _Atomic(void *) sem_ctx;
static _Atomic(porthole_screenshot_fn) shot_fn;
static _Atomic(void *) shot_ctx;

PORTHOLE_API void porthole_set_semantics_provider(porthole_semantics_fn fn,
						  void *ctx)
{
	atomic_store(&sem_ctx, ctx);
	atomic_store(&sem_fn, fn);
}

PORTHOLE_API void porthole_set_screenshot_provider(porthole_screenshot_fn fn,
						   void *ctx)
{
	atomic_store(&shot_ctx, ctx);
	atomic_store(&shot_fn, fn);
}

/* --- semantics ------------------------------------------------------------ */

struct porthole_sem {
	struct ph_jw *w;
	int depth, max_depth;
	int nodes, max_nodes;
	int skip_depth;	     /* > 0: inside a node we did not write */
	uint64_t hash[64];   /* structural path hash per depth */
	int child_index[64]; /* children seen so far per depth */
	bool truncated;
};

static uint64_t mix(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 0xff) * 1099511628211ull;
}

PORTHOLE_API void porthole_sem_begin(struct porthole_sem *t,
				     const struct porthole_sem_node *n)
{
	struct ph_jw *w = t->w;
	char idx[16], sid[20];
	uint64_t h;

	if (t->skip_depth || t->depth >= t->max_depth ||
	    t->nodes >= t->max_nodes || t->depth >= 63) {
		t->truncated = true;
		t->skip_depth++;
		return;
	}
	/*
	 * The stable id hashes the path from the root: each ancestor's role
	 * and test tag and its index among its siblings.  It survives
	 * captures while the structure does, unlike node ids.
	 */
	snprintf(idx, sizeof(idx), "%d", t->child_index[t->depth]++);
	h = t->depth ? t->hash[t->depth - 1] : 1469598103934665603ull;
	h = mix(mix(mix(h, n->role), n->test_tag), idx);
	t->hash[t->depth] = h;
	t->child_index[t->depth + 1] = 0;
	snprintf(sid, sizeof(sid), "%012" PRIx64,
		 (uint64_t)(h & 0xffffffffffffu));
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "nodeId", ++t->nodes);
	ph_jw_kv_str(w, "stableId", sid);
	if (n->role)
		ph_jw_kv_str(w, "role", n->role);
	if (n->test_tag)
		ph_jw_kv_str(w, "testTag", n->test_tag);
	if (n->text)
		ph_jw_kv_str(w, "text", n->text);
	if (n->label)
		ph_jw_kv_str(w, "contentDescription", n->label);
	ph_jw_key(w, "bounds");
	ph_jw_obj_begin(w);
	ph_jw_kv_double(w, "left", n->left);
	ph_jw_kv_double(w, "top", n->top);
	ph_jw_kv_double(w, "right", n->right);
	ph_jw_kv_double(w, "bottom", n->bottom);
	ph_jw_obj_end(w);
	ph_jw_key(w, "actions");
	ph_jw_arr_begin(w);
	if (n->clickable)
		ph_jw_str(w, "OnClick");
	ph_jw_arr_end(w);
	ph_jw_key(w, "flags");
	ph_jw_arr_begin(w);
	if (n->clickable)
		ph_jw_str(w, "clickable");
	ph_jw_arr_end(w);
	ph_jw_key(w, "children");
	ph_jw_arr_begin(w);
	t->depth++;
}

PORTHOLE_API void porthole_sem_end(struct porthole_sem *t)
{
	if (t->skip_depth) {
		t->skip_depth--;
		return;
	}
	if (!t->depth)
		return;
	t->depth--;
	ph_jw_arr_end(t->w);
	ph_jw_obj_end(t->w);
}

const char *ph_collectors_semantics(const struct ph_json *params,
				    struct ph_jw *w)
{
	porthole_semantics_fn fn = atomic_load(&sem_fn);
	struct porthole_sem t = { .w = w, .max_depth = 40, .max_nodes = 1500 };
	int64_t v;

	if (ph_json_as_int(ph_json_get(params, "maxDepth"), &v) && v > 0)
		t.max_depth = (int)(v < 60 ? v : 60);
	/* any count an int cannot hold is "all of them", not its low bits */
	if (ph_json_as_int(ph_json_get(params, "maxNodes"), &v) && v > 0)
		t.max_nodes = (int)(v < INT_MAX ? v : INT_MAX);
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "capturedAt", ph_uptime_ms_fast());
	ph_jw_kv_bool(w, "merged", true);
	if (!fn) {
		ph_jw_kv_str(w, "error",
			     "the app registered no semantics "
			     "provider "
			     "(porthole_set_semantics_provider)");
		ph_jw_obj_end(w);
		return NULL;
	}
	ph_jw_key(w, "root");
	fn(&t, atomic_load(&sem_ctx));
	/* Close whatever the provider left open, so the answer is JSON. */
	while (t.depth)
		porthole_sem_end(&t);
	if (!t.nodes)
		ph_jw_null(w);
	ph_jw_kv_bool(w, "truncated", t.truncated);
	ph_jw_obj_end(w);
	return NULL;
}

/* --- screenshot ------------------------------------------------------------
 */

#if PH_PLATFORM_ZLIB
static uint32_t png_crc(uint32_t crc, const uint8_t *p, size_t n)
{
	/* crc32() given NULL answers its initial value (IEND has no data) */
	return n ? (uint32_t)crc32(crc, p, (uInt)n) : crc;
}

/* raw deflated into a zlib stream, into *z (malloc'd); 0 or PH_E*. */
static int zlib_stream(const uint8_t *raw, size_t n, uint8_t **z, size_t *zlen)
{
	uLongf len = compressBound((uLong)n);

	*z = malloc(len);
	if (!*z)
		return PH_ENOMEM;
	if (compress2(*z, &len, raw, (uLong)n, 6) != Z_OK)
		return PH_ENOMEM;
	*zlen = len;
	return 0;
}
#else
/*
 * No zlib (platform.h, musl): the PNG's two checksums by hand and its
 * image data in stored deflate blocks (RFC 1950 and 1951), uncompressed:
 * a larger file, the same picture.
 */
static uint32_t png_crc(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

static int zlib_stream(const uint8_t *raw, size_t n, uint8_t **z, size_t *zlen)
{
	size_t blocks = n / 65535 + 1, at = 2;
	uint32_t a = 1, b = 0;
	uint8_t *o = malloc(2 + 5 * blocks + n + 4);

	*z = o;
	if (!o)
		return PH_ENOMEM;
	o[0] = 0x78; /* deflate, 32 KiB window */
	o[1] = 0x01; /* no dictionary, (0x78 << 8 | 0x01) % 31 == 0 */
	for (size_t off = 0, len; off < n || !off; off += len) {
		len = n - off < 65535 ? n - off : 65535;
		o[at++] = off + len == n; /* BFINAL on the last, BTYPE 00 */
		o[at++] = (uint8_t)len;
		o[at++] = (uint8_t)(len >> 8);
		o[at++] = (uint8_t)~len;
		o[at++] = (uint8_t)(~len >> 8);
		memcpy(o + at, raw + off, len);
		at += len;
		if (!len)
			break; /* n == 0: one empty block */
	}
	for (size_t i = 0; i < n; i++) { /* Adler-32 */
		a = (a + raw[i]) % 65521;
		b = (b + a) % 65521;
	}
	o[at++] = (uint8_t)(b >> 8);
	o[at++] = (uint8_t)b;
	o[at++] = (uint8_t)(a >> 8);
	o[at++] = (uint8_t)a;
	*zlen = at;
	return 0;
}
#endif

static int chunk(struct ph_buf *b, const char *type, const uint8_t *data,
		 size_t n)
{
	uint8_t hdr[8] = { (uint8_t)(n >> 24), (uint8_t)(n >> 16),
			   (uint8_t)(n >> 8), (uint8_t)n };
	uint32_t crc;
	uint8_t c[4];
	int rc;

	memcpy(hdr + 4, type, 4);
	crc = png_crc(0, hdr + 4, 4);
	crc = png_crc(crc, data, n);
	c[0] = (uint8_t)(crc >> 24);
	c[1] = (uint8_t)(crc >> 16);
	c[2] = (uint8_t)(crc >> 8);
	c[3] = (uint8_t)crc;
	rc = ph_buf_add(b, hdr, 8);
	if (!rc)
		rc = ph_buf_add(b, data, n);
	if (!rc)
		rc = ph_buf_add(b, c, 4);
	return rc;
}

/* RGBA8888 into a PNG (filter 0 rows, a zlib stream). */
static int encode_png(const uint8_t *px, int width, int height,
		      struct ph_buf *out)
{
	size_t row = (size_t)width * 4, raw_len = (row + 1) * (size_t)height;
	uint8_t *raw = malloc(raw_len);
	size_t zlen = 0;
	uint8_t *z = NULL;
	uint8_t ihdr[13] = { (uint8_t)(width >> 24),
			     (uint8_t)(width >> 16),
			     (uint8_t)(width >> 8),
			     (uint8_t)width,
			     (uint8_t)(height >> 24),
			     (uint8_t)(height >> 16),
			     (uint8_t)(height >> 8),
			     (uint8_t)height,
			     8,
			     6,
			     0,
			     0,
			     0 };
	int rc = PH_ENOMEM;

	if (!raw)
		goto out;
	for (int y = 0; y < height; y++) {
		raw[(row + 1) * (size_t)y] = 0;
		memcpy(raw + (row + 1) * (size_t)y + 1, px + row * (size_t)y,
		       row);
	}
	rc = zlib_stream(raw, raw_len, &z, &zlen);
	if (rc)
		goto out;
	rc = ph_buf_add(out, "\x89PNG\r\n\x1a\n", 8);
	if (!rc)
		rc = chunk(out, "IHDR", ihdr, sizeof(ihdr));
	if (!rc)
		rc = chunk(out, "IDAT", z, zlen);
	if (!rc)
		rc = chunk(out, "IEND", NULL, 0);
out:
	free(raw);
	free(z);
	return rc;
}

static int base64(const uint8_t *p, size_t n, struct ph_buf *out)
{
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		char q[4];

		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		q[0] = tbl[v >> 18 & 63];
		q[1] = tbl[v >> 12 & 63];
		q[2] = i + 1 < n ? tbl[v >> 6 & 63] : '=';
		q[3] = i + 2 < n ? tbl[v & 63] : '=';
		rc = ph_buf_add(out, q, 4);
	}
	return rc;
}

const char *ph_collectors_screenshot(const struct ph_json *params,
				     struct ph_jw *w)
{
	porthole_screenshot_fn fn = atomic_load(&shot_fn);
	const uint8_t *px = NULL;
	int width = 0, height = 0;
	bool secure = false;
	struct ph_buf png = PH_BUF_INIT(64 << 20), b64 = PH_BUF_INIT(96 << 20);
	const char *fail = NULL;

	(void)params;
	if (!fn)
		return "EUNSUPP: the app registered no screenshot provider "
		       "(porthole_set_screenshot_provider)";
	if (fn(&px, &width, &height, &secure, atomic_load(&shot_ctx)) || !px ||
	    width <= 0 || height <= 0 || width > 16384 || height > 16384)
		return "EIO: the app's screenshot provider returned no frame";
	if (secure)
		return "EPERM: the app marked this frame secure; it is not "
		       "captured";
	if (encode_png(px, width, height, &png) ||
	    base64((const uint8_t *)png.buf, png.len, &b64)) {
		fail = "ENOMEM: could not encode the screenshot";
		goto out;
	}
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "capturedAt", ph_uptime_ms_fast());
	ph_jw_kv_int(w, "width", width);
	ph_jw_kv_int(w, "height", height);
	ph_jw_kv_str(w, "mimeType", "image/png");
	ph_jw_key(w, "data");
	ph_jw_strn(w, b64.buf, b64.len);
	ph_jw_obj_end(w);
out:
	ph_buf_release(&png);
	ph_buf_release(&b64);
	return fail;
}
