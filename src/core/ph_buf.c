/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_buf.c: the one growable byte buffer; every append adds all or
 * nothing, within the buffer's cap (the invariants are in ph_buf.h).
 */
#include "ph_common.h"
#include "ph_buf.h"
#include "ph_error.h"

#include <fcntl.h>
#include <unistd.h>

char ph_buf_empty[1];

void ph_buf_init(struct ph_buf *b, size_t cap)
{
	b->buf = ph_buf_empty;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
}

void ph_buf_release(struct ph_buf *b)
{
	if (b->alloc)
		free(b->buf);
	ph_buf_init(b, b->cap);
}

void ph_buf_reset(struct ph_buf *b)
{
	if (b->alloc)
		ph_buf_setlen(b, 0);
}

int ph_buf_grow_slow(struct ph_buf *b, size_t extra)
{
	size_t need, n;
	char *p;

	if (extra > b->cap - b->len)
		return PH_ETOOBIG;
	need = b->len + extra + 1;
	if (need <= b->alloc)
		return 0;
	/* Grow by half again, like strbuf, but never past cap + 1. */
	n = b->alloc < 64 ? 64 : b->alloc + b->alloc / 2;
	if (n < need)
		n = need;
	if (n > b->cap + 1)
		n = b->cap + 1;
	p = realloc(b->alloc ? b->buf : NULL, n);
	if (!p)
		return PH_ENOMEM;
	if (!b->alloc)
		p[0] = '\0';
	b->buf = p;
	b->alloc = n;
	return 0;
}

void ph_buf_consume(struct ph_buf *b, size_t n)
{
	if (n >= b->len) {
		ph_buf_reset(b);
		return;
	}
	memmove(b->buf, b->buf + n, b->len - n);
	ph_buf_setlen(b, b->len - n);
}

int ph_buf_add_slow(struct ph_buf *b, const void *data, size_t n)
{
	int rc;

	if (!n)
		return 0;
	rc = ph_buf_grow(b, n);
	if (rc)
		return rc;
	memcpy(b->buf + b->len, data, n);
	ph_buf_setlen(b, b->len + n);
	return 0;
}

int ph_buf_addstr(struct ph_buf *b, const char *s)
{
	return ph_buf_add(b, s, strlen(s));
}

int ph_buf_vaddf(struct ph_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n, rc;

	va_copy(cp, ap);
	n = vsnprintf(b->buf + b->len, b->alloc ? b->alloc - b->len : 0, fmt,
		      cp);
	va_end(cp);
	if (n < 0)
		return PH_EINVAL;
	if (b->alloc && (size_t)n < b->alloc - b->len) {
		if ((size_t)n > b->cap - b->len) {
			b->buf[b->len] = '\0'; /* all or nothing */
			return PH_ETOOBIG;
		}
		ph_buf_setlen(b, b->len + (size_t)n);
		return 0;
	}
	rc = ph_buf_grow(b, (size_t)n);
	if (rc) {
		if (b->alloc)
			b->buf[b->len] = '\0';
		return rc;
	}
	vsnprintf(b->buf + b->len, b->alloc - b->len, fmt, ap);
	ph_buf_setlen(b, b->len + (size_t)n);
	return 0;
}

int ph_buf_addf(struct ph_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = ph_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

ssize_t ph_buf_read_once(struct ph_buf *b, int fd, size_t hint)
{
	ssize_t n;
	int rc;

	if (hint > b->cap - b->len)
		hint = b->cap - b->len;
	if (!hint)
		return PH_ETOOBIG;
	rc = ph_buf_grow(b, hint);
	if (rc)
		return rc;
	do
		n = read(fd, b->buf + b->len, hint);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? PH_EAGAIN :
								   PH_EIO;
	ph_buf_setlen(b, b->len + (size_t)n);
	return n;
}

int ph_buf_read_file(struct ph_buf *b, const char *path)
{
	size_t old = b->len;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT ? PH_ENOENT : PH_EIO;
	do
		n = ph_buf_read_once(b, fd, 1 << 16);
	while (n > 0);
	close(fd);
	if (n < 0) {
		ph_buf_setlen(b, old); /* all or nothing */
		return (int)n;
	}
	return 0;
}

char *ph_buf_detach(struct ph_buf *b, size_t *len)
{
	char *p = b->alloc ? b->buf : calloc(1, 1);

	if (len)
		*len = b->len;
	ph_buf_init(b, b->cap);
	return p;
}
