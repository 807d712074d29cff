/* SPDX-License-Identifier: Apache-2.0 */
/*
 * png.c: is a PNG all black?  Enough of PNG (ISO/IEC 15948) to answer:
 *
 *   OFFSET  SIZE  WHAT
 *   0       8     signature 89 50 4E 47 0D 0A 1A 0A
 *   8       ...   chunks: length (4, big endian), type (4), data, CRC (4)
 *   IHDR          width (4), height (4), bit depth (1), colour type (1),
 *                 compression (1, 0), filter (1, 0), interlace (1)
 *   IDAT...       one zlib stream over all IDAT chunks: per row, one
 *                 filter byte (0-4) then the row's bytes
 *
 * Only 8-bit depths of colour types 0 (grey), 2 (RGB), 4 (grey+alpha), 6
 * (RGBA), non-interlaced, are judged; anything else is "cannot tell".  A
 * pixel is black when its colour channels are all zero (or it is fully
 * transparent).
 */
#include "ph_common.h"
#include "mcp.h"
#include "ph_error.h"

#include <zlib.h>

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

int ph_png_all_black(const unsigned char *png, size_t n, char *err,
		     size_t errlen)
{
	static const unsigned char sig[8] = { 0x89, 'P',  'N',	'G',
					      0x0d, 0x0a, 0x1a, 0x0a };
	struct ph_buf z = PH_BUF_INIT((size_t)64 << 20);
	unsigned char *raw = NULL;
	uint32_t w = 0, h = 0;
	int ctype = -1, bpp = 0, rc = -1;
	size_t off = 8, stride, rawlen;
	uLongf outlen;

	if (n < 8 || memcmp(png, sig, 8)) {
		snprintf(err, errlen, "not a PNG (bad signature)");
		return -1;
	}
	while (off + 12 <= n) {
		uint32_t len = be32(png + off);
		const unsigned char *type = png + off + 4;

		if (len > n - off - 12) {
			snprintf(err, errlen,
				 "chunk at byte %zu runs past the end", off);
			goto out;
		}
		if (!memcmp(type, "IHDR", 4) && len >= 13) {
			const unsigned char *d = png + off + 8;

			w = be32(d);
			h = be32(d + 4);
			ctype = d[9];
			if (d[8] != 8 || d[12] != 0) {
				snprintf(
					err, errlen,
					"bit depth %d / interlace %d not judged",
					d[8], d[12]);
				goto out;
			}
		} else if (!memcmp(type, "IDAT", 4)) {
			if (ph_buf_add(&z, png + off + 8, len)) {
				snprintf(err, errlen, "image data too big");
				goto out;
			}
		} else if (!memcmp(type, "IEND", 4)) {
			break;
		}
		off += 12 + (size_t)len;
	}
	bpp = ctype == 0 ? 1 :
	      ctype == 2 ? 3 :
	      ctype == 4 ? 2 :
	      ctype == 6 ? 4 :
			   0;
	if (!bpp || !w || !h || w > 16384 || h > 16384) {
		snprintf(err, errlen, "colour type %d or size %ux%u not judged",
			 ctype, w, h);
		goto out;
	}
	stride = (size_t)w * (size_t)bpp;
	rawlen = (stride + 1) * h;
	raw = malloc(rawlen);
	outlen = (uLongf)rawlen;
	if (!raw ||
	    uncompress(raw, &outlen, (const Bytef *)z.buf, (uLong)z.len) !=
		    Z_OK ||
	    outlen != rawlen) {
		snprintf(err, errlen, "image data does not inflate to %ux%u", w,
			 h);
		goto out;
	}
	rc = 1;
	for (uint32_t y = 0; y < h && rc == 1; y++) {
		unsigned char *row = raw + y * (stride + 1) + 1;
		unsigned char *prev = y ? row - (stride + 1) : NULL;
		int f = row[-1];

		for (size_t x = 0; x < stride; x++) {
			int a = x >= (size_t)bpp ? row[x - bpp] : 0;
			int b = prev ? prev[x] : 0;
			int c = prev && x >= (size_t)bpp ? prev[x - bpp] : 0;

			switch (f) {
			case 0: break;
			case 1: row[x] = (unsigned char)(row[x] + a); break;
			case 2: row[x] = (unsigned char)(row[x] + b); break;
			case 3:
				row[x] = (unsigned char)(row[x] + (a + b) / 2);
				break;
			case 4:
				row[x] = (unsigned char)(row[x] +
							 paeth(a, b, c));
				break;
			default:
				snprintf(err, errlen, "bad filter %d in row %u",
					 f, y);
				rc = -1;
				goto out;
			}
		}
		for (size_t x = 0; x < stride && rc == 1; x += (size_t)bpp) {
			int colour = bpp >= 3 ? 3 : 1;
			bool alpha = bpp == 2 || bpp == 4;
			bool clear = alpha && row[x + (size_t)bpp - 1] == 0;

			for (int k = 0; k < colour && !clear; k++)
				if (row[x + (size_t)k])
					rc = 0;
		}
	}
out:
	free(raw);
	ph_buf_release(&z);
	return rc;
}

int ph_base64_decode(const char *s, size_t n, struct ph_buf *out)
{
	uint32_t acc = 0;
	int bits = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i], v;

		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '+' || c == '-')
			v = 62;
		else if (c == '/' || c == '_')
			v = 63;
		else if (c == '=' || c == '\n' || c == '\r')
			continue;
		else
			return PH_ECORRUPT;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (ph_buf_addch(out, (int)(acc >> bits) & 0xff))
				return PH_ETOOBIG;
		}
	}
	return 0;
}
