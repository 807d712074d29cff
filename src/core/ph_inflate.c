/* SPDX-License-Identifier: Apache-2.0 */
/* ph_inflate.c: inflating under caps (see ph_inflate.h). */
#include "ph_common.h"
#include "ph_inflate.h"

#include <limits.h>
#include <zlib.h>

static const struct ph_inflate_caps default_caps = { PH_INFLATE_MAX_OUT,
						     PH_INFLATE_RATIO,
						     PH_INFLATE_RATIO_FREE };

/* Output is made at most this much at a time, so a cap is passed by less. */
#define STEP ((size_t)1 << 20)

#define REFUSE(err, code, off, ...) \
	ph_corrupt((err), (code), (off), __FILE__, __LINE__, __VA_ARGS__)

int ph_inflate(const void *in, size_t n, int wbits,
	       const struct ph_inflate_caps *caps, struct ph_buf *out,
	       size_t *consumed, struct ph_err *err)
{
	const uint8_t *p = in;
	size_t start = out->len, fed = 0, made = 0, read = 0;
	z_stream z;
	int zrc, rc;

	if (!caps)
		caps = &default_caps;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, wbits) != Z_OK)
		return REFUSE(err, PH_ENOMEM, 0, "cannot start inflating");
	for (;;) {
		size_t room = STEP;

		/* zlib counts in uInt: feed an input past 4 GiB in parts */
		if (z.avail_in == 0 && fed < n) {
			size_t k = n - fed < UINT_MAX ? n - fed : UINT_MAX;

			z.next_in = (Bytef *)(p + fed);
			z.avail_in = (uInt)k;
			fed += k;
		}
		if (room > caps->max_out - made)
			room = caps->max_out - made;
		if (room > out->cap - out->len)
			room = out->cap - out->len;
		if (!room) {
			rc = REFUSE(err, PH_ETOOBIG, read,
				    "refused to inflate past %zu bytes "
				    "(the size cap)",
				    made);
			break;
		}
		if (ph_buf_grow(out, room)) {
			rc = REFUSE(err, PH_ENOMEM, read,
				    "out of memory after inflating %zu bytes",
				    made);
			break;
		}
		z.next_out = (Bytef *)out->buf + out->len;
		z.avail_out = (uInt)room;
		zrc = inflate(&z, Z_NO_FLUSH);
		ph_buf_setlen(out, out->len + (room - z.avail_out));
		made = out->len - start;
		read = fed - z.avail_in;
		if (zrc == Z_STREAM_END) {
			rc = 0;
			break;
		}
		if (zrc == Z_OK) {
			if (made > caps->ratio_free &&
			    made / caps->ratio > read) {
				rc = REFUSE(err, PH_ETOOBIG, read,
					    "refused to inflate past %zu bytes "
					    "from %zu (the %zu:1 ratio cap)",
					    made, read, caps->ratio);
				break;
			}
			continue;
		}
		if (zrc == Z_BUF_ERROR && z.avail_in == 0 && fed < n)
			continue; /* more input to feed */
		if (zrc == Z_MEM_ERROR)
			rc = REFUSE(err, PH_ENOMEM, read,
				    "out of memory inflating");
		else if (zrc == Z_BUF_ERROR)
			rc = REFUSE(err, PH_ECORRUPT, read,
				    "compressed stream ends early");
		else
			rc = REFUSE(err, PH_ECORRUPT, read,
				    "compressed stream is corrupt (%s)",
				    z.msg ? z.msg : "zlib error");
		break;
	}
	if (consumed)
		*consumed = read;
	inflateEnd(&z);
	return rc;
}
