/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sha1.c: SHA-1 (FIPS 180-4, section 6.1), only for leak signatures: a
 * stable name for the shape of a leak, as LeakCanary prints it.  Not for
 * anything that needs collision resistance.
 */
#include "ph_common.h"
#include "heap.h"

static inline uint32_t rol(uint32_t x, unsigned n)
{
	return x << n | x >> (32 - n);
}

static void compress(struct ph_heap_sha1 *s, const uint8_t *b)
{
	uint32_t w[80], a = s->h[0], bb = s->h[1], c = s->h[2], d = s->h[3],
			e = s->h[4];

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
		       (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
	for (int i = 16; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	for (int i = 0; i < 80; i++) {
		uint32_t f, k, t;

		if (i < 20) {
			f = (bb & c) | (~bb & d);
			k = 0x5a827999;
		} else if (i < 40) {
			f = bb ^ c ^ d;
			k = 0x6ed9eba1;
		} else if (i < 60) {
			f = (bb & c) | (bb & d) | (c & d);
			k = 0x8f1bbcdc;
		} else {
			f = bb ^ c ^ d;
			k = 0xca62c1d6;
		}
		t = rol(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = rol(bb, 30);
		bb = a;
		a = t;
	}
	s->h[0] += a;
	s->h[1] += bb;
	s->h[2] += c;
	s->h[3] += d;
	s->h[4] += e;
}

static void update(struct ph_heap_sha1 *s, const uint8_t *p, size_t n)
{
	s->len += n;
	while (n) {
		size_t k = 64 - s->used < n ? 64 - s->used : n;

		memcpy(s->block + s->used, p, k);
		s->used += k;
		p += k;
		n -= k;
		if (s->used == 64) {
			compress(s, s->block);
			s->used = 0;
		}
	}
}

void ph_heap_sha1_init(struct ph_heap_sha1 *s)
{
	static const uint32_t h0[5] = { 0x67452301, 0xefcdab89, 0x98badcfe,
					0x10325476, 0xc3d2e1f0 };

	memset(s, 0, sizeof(*s));
	memcpy(s->h, h0, sizeof(h0));
}

void ph_heap_sha1_update(struct ph_heap_sha1 *s, const void *data, size_t n)
{
	update(s, data, n);
}

void ph_heap_sha1_final_hex(struct ph_heap_sha1 *s, char out[41])
{
	uint64_t bits = s->len * 8;
	uint8_t pad = 0x80, len[8];

	update(s, &pad, 1);
	pad = 0;
	while (s->used != 56)
		update(s, &pad, 1);
	for (int i = 0; i < 8; i++)
		len[i] = (uint8_t)(bits >> (56 - 8 * i));
	update(s, len, 8);
	for (int i = 0; i < 5; i++)
		snprintf(out + 8 * i, 9, "%08x", s->h[i]);
}

void ph_heap_sha1_hex(const void *data, size_t n, char out[41])
{
	struct ph_heap_sha1 s;

	ph_heap_sha1_init(&s);
	update(&s, data, n);
	ph_heap_sha1_final_hex(&s, out);
}
