/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_error.h: internal status codes and error reporting.
 *
 * Every internal function that can fail returns 0 or a negative PH_E* code.
 * ph_error() logs one line and returns the code, so a failure is reported
 * where the most is known and propagated with a plain `return`:
 *
 *	if (fd < 0)
 *		return ph_error(PH_EIO, "open %s: %s", path, strerror(errno));
 *
 * Parsers never log: they fill a struct ph_err through PH_CORRUPT(), which
 * records the byte offset in the input, the reason, and the source line that
 * rejected it (SQLite's SQLITE_CORRUPT_BKPT habit), and return PH_ECORRUPT.
 * The caller decides whether a rejection is worth a line on stderr, a counter,
 * or an error response.
 */
#ifndef PH_ERROR_H
#define PH_ERROR_H

#include "ph_common.h"

enum {
	PH_OK = 0,
	PH_ENOMEM = -1,	  /* an allocation failed */
	PH_ETOOBIG = -2,  /* a buffer or arena would pass its cap */
	PH_EIO = -3,	  /* a system call failed; errno was logged */
	PH_EINVAL = -4,	  /* a caller passed something it must not */
	PH_ECORRUPT = -5, /* input is malformed; see struct ph_err */
	PH_ENOENT = -6,	  /* a named thing does not exist */
	PH_EPROTO = -7,	  /* a peer broke the protocol */
	PH_EAGAIN = -8,	  /* try again later (would block, busy) */
	PH_EUNSUPP = -9,  /* valid, but not something we can do here */
	PH_ECLOSED = -10, /* the other side went away */
};

/* A short constant name for a status: "PH_ECORRUPT", or "unknown". */
const char *ph_strerror(int code);

/* Logs "error: <fmt>" through ph_log and returns code. */
int ph_error(int code, const char *fmt, ...) PH_PRINTF(2, 3);

/*
 * Where and why an input was rejected.  offset is from the start of the
 * input the parser was given; line and col are 1-based and 0 when the
 * parser does not count lines.
 */
struct ph_err {
	int code;	 /* PH_ECORRUPT, PH_ETOOBIG, PH_ENOMEM ... */
	uint64_t offset; /* byte offset of the rejected byte */
	uint32_t line;	 /* 1-based line, or 0 */
	uint32_t col;	 /* 1-based column in bytes, or 0 */
	const char *src; /* __FILE__ of the check that fired */
	int src_line;	 /* __LINE__ of that check */
	char msg[192];	 /* the reason, without the offset */
};

int ph_corrupt(struct ph_err *err, int code, uint64_t offset, const char *src,
	       int src_line, const char *fmt, ...) PH_PRINTF(6, 7);

/* Fill err (which may be NULL) and evaluate to PH_ECORRUPT. */
#define PH_CORRUPT(err, offset, ...)                                 \
	ph_corrupt((err), PH_ECORRUPT, (offset), __FILE__, __LINE__, \
		   __VA_ARGS__)

/* "byte 17 (line 1, column 18): expected ':'" into buf; returns buf. */
const char *ph_err_format(const struct ph_err *err, char *buf, size_t size);

#endif
