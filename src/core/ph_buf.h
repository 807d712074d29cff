/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_buf.h: the one growable byte buffer.
 *
 * The shape is git's strbuf; the cap is curl's dynbuf.
 *
 * Invariants, which hold after every call, successful or not:
 *  - buf is never NULL: an empty buffer points at a shared empty string, so
 *    `b.buf` can always be printed or compared;
 *  - buf[len] == '\0', so text is always a C string, while the contents may
 *    hold NUL bytes too (binary-safe: trust len, not strlen);
 *  - len <= cap: a buffer never grows past the maximum it was given.  Every
 *    buffer filled from a socket or a file gets a cap that says how much the
 *    other side may make us hold.
 *
 * Appends either add everything or nothing, and return 0, PH_ETOOBIG (the
 * cap would be passed) or PH_ENOMEM.  They are marked warn_unused_result:
 * a silently short buffer is how truncated JSON gets sent.
 *
 * Lifecycle: PH_BUF_INIT(cap) or ph_buf_init(); ph_buf_release() frees the
 * memory and leaves an empty buffer with the same cap, ready for reuse.
 */
#ifndef PH_BUF_H
#define PH_BUF_H

#include "ph_common.h"

struct ph_buf {
	char *buf;    /* contents; never NULL, always NUL-terminated */
	size_t len;   /* bytes used, not counting the terminating NUL */
	size_t alloc; /* bytes allocated, 0 while buf is the shared empty one */
	size_t cap;   /* the most len may ever be */
};

extern char ph_buf_empty[];

/* A cap for buffers whose size the program itself controls. */
#define PH_BUF_NO_CAP ((size_t)SIZE_MAX / 2)

#define PH_BUF_INIT(max)                  \
	{                                 \
		ph_buf_empty, 0, 0, (max) \
	}

void ph_buf_init(struct ph_buf *b, size_t cap);
void ph_buf_release(struct ph_buf *b);
/* len = 0, memory kept. */
void ph_buf_reset(struct ph_buf *b);
int ph_buf_grow_slow(struct ph_buf *b, size_t extra) PH_WUR;

/*
 * Makes room for `extra` more bytes without changing len.  Inline when
 * the room is there already, the common case for writers that reserve
 * before each small write.
 */
static inline PH_WUR int ph_buf_grow(struct ph_buf *b, size_t extra)
{
	if (PH_LIKELY(extra <= b->cap - b->len && b->alloc &&
		      extra < b->alloc - b->len))
		return 0;
	return ph_buf_grow_slow(b, extra);
}

/* Sets len (<= alloc room); writes the terminating NUL. */
static inline void ph_buf_setlen(struct ph_buf *b, size_t len)
{
	if (!b->alloc)
		return; /* only 0 fits in the shared empty string */
	b->len = len;
	b->buf[len] = '\0';
}
/* Removes the first n bytes (n <= len). */
void ph_buf_consume(struct ph_buf *b, size_t n);

int ph_buf_add_slow(struct ph_buf *b, const void *data, size_t n) PH_WUR;

/*
 * The common case, inline: the bytes fit in what is already allocated (and
 * under the cap).  Writers of JSON and CSV append a few bytes at a time,
 * so this path is most of their cost.
 */
static inline PH_WUR int ph_buf_add(struct ph_buf *b, const void *data,
				    size_t n)
{
	if (!n)
		return 0; /* data may be NULL then: memcpy must not see it */
	if (PH_LIKELY(b->alloc && n < b->alloc - b->len &&
		      n <= b->cap - b->len)) {
		memcpy(b->buf + b->len, data, n);
		b->len += n;
		b->buf[b->len] = '\0';
		return 0;
	}
	return ph_buf_add_slow(b, data, n);
}

static inline PH_WUR int ph_buf_addch(struct ph_buf *b, int c)
{
	char ch = (char)c;

	return ph_buf_add(b, &ch, 1);
}

int ph_buf_addstr(struct ph_buf *b, const char *s) PH_WUR;
int ph_buf_addf(struct ph_buf *b, const char *fmt, ...) PH_PRINTF(2, 3) PH_WUR;
int ph_buf_vaddf(struct ph_buf *b, const char *fmt, va_list ap)
	PH_PRINTF(2, 0) PH_WUR;

/*
 * Appends the whole file at path; PH_ENOENT when it does not exist,
 * PH_EIO for other failures (errno kept), PH_ETOOBIG past the cap.
 */
int ph_buf_read_file(struct ph_buf *b, const char *path) PH_WUR;
/* Appends what one read(2) returns (at most `hint` bytes); returns the
 * count, 0 at end of file, or PH_EAGAIN / PH_EIO / PH_ETOOBIG. */
ssize_t ph_buf_read_once(struct ph_buf *b, int fd, size_t hint) PH_WUR;

/*
 * Hands the contents to the caller (free() them) and leaves b empty.  An
 * empty buffer detaches as a fresh allocation; NULL only when that fails.
 */
char *ph_buf_detach(struct ph_buf *b, size_t *len);

static inline bool ph_buf_eq(const struct ph_buf *b, const char *s)
{
	size_t n = strlen(s);

	return b->len == n && !memcmp(b->buf, s, n);
}

#endif
