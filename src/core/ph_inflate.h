/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_inflate.h: zlib, gzip and raw deflate streams, inflated under caps.
 *
 * Every compressed input the host reads (a gzip'd trace, a zip's entry,
 * Perfetto's compressed_packets) comes from outside, and a few megabytes
 * of deflate can stand for gigabytes.  ph_inflate() stops a stream at
 *  - an absolute size: out may hold at most max_out bytes, and
 *  - a ratio: past the first ratio_free bytes of output, at most ratio
 *    bytes out for every byte read in.
 * A stream refused by either cap is not an error of the input: what was
 * inflated up to the refusal is kept in out, and err says where (the
 * byte offset in the compressed input) and why, so the caller can read
 * that part and say it read the input in part.
 */
#ifndef PH_INFLATE_H
#define PH_INFLATE_H

#include "ph_common.h"
#include "ph_buf.h"
#include "ph_error.h"

/* The defaults: 1 GiB out, and 200:1 past the first 64 MiB. */
#define PH_INFLATE_MAX_OUT    ((size_t)1 << 30)
#define PH_INFLATE_RATIO      200
#define PH_INFLATE_RATIO_FREE ((size_t)64 << 20)

struct ph_inflate_caps {
	size_t max_out;	   /* the most bytes out holds after the call */
	size_t ratio;	   /* out bytes per in byte, past ratio_free */
	size_t ratio_free; /* output allowed before the ratio applies */
};

/* The windowBits of zlib's inflateInit2 for each framing. */
#define PH_INFLATE_ZLIB 15	  /* zlib header (RFC 1950) */
#define PH_INFLATE_GZIP (16 + 15) /* gzip header (RFC 1952) */
#define PH_INFLATE_RAW	(-15)	  /* bare deflate (RFC 1951), as in zip */

/*
 * Inflates the stream that starts at in (n bytes; it may be followed by
 * other bytes, which are not read) and appends it to out.  caps may be
 * NULL for the defaults; out's own cap applies as well.  *consumed (may
 * be NULL) is the compressed bytes read.
 *
 * Returns 0 at the stream's end; PH_ETOOBIG when a cap refused it;
 * PH_ECORRUPT when the stream is corrupt or ends early; PH_ENOMEM.  For
 * the last three err (may be NULL) gets the offset in `in` and the why.
 * Either way out keeps what was inflated before the stop.
 */
int ph_inflate(const void *in, size_t n, int wbits,
	       const struct ph_inflate_caps *caps, struct ph_buf *out,
	       size_t *consumed, struct ph_err *err) PH_WUR;

#endif
