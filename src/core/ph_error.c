/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_error.c: names for the PH_E* codes and the one-line error report
 * (ph_error.h).
 */
#include "ph_common.h"
#include "ph_error.h"
#include "ph_log.h"

const char *ph_strerror(int code)
{
	switch (code) {
	case PH_OK: return "PH_OK";
	case PH_ENOMEM: return "PH_ENOMEM";
	case PH_ETOOBIG: return "PH_ETOOBIG";
	case PH_EIO: return "PH_EIO";
	case PH_EINVAL: return "PH_EINVAL";
	case PH_ECORRUPT: return "PH_ECORRUPT";
	case PH_ENOENT: return "PH_ENOENT";
	case PH_EPROTO: return "PH_EPROTO";
	case PH_EAGAIN: return "PH_EAGAIN";
	case PH_EUNSUPP: return "PH_EUNSUPP";
	case PH_ECLOSED: return "PH_ECLOSED";
	}
	return "unknown";
}

int ph_error(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ph_logv(PH_LOG_ERROR, fmt, ap);
	va_end(ap);
	return code;
}

int ph_corrupt(struct ph_err *err, int code, uint64_t offset, const char *src,
	       int src_line, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	err->offset = offset;
	err->src = src;
	err->src_line = src_line;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

const char *ph_err_format(const struct ph_err *err, char *buf, size_t size)
{
	if (err->line)
		snprintf(buf, size, "byte %" PRIu64 " (line %u, column %u): %s",
			 err->offset, err->line, err->col, err->msg);
	else
		snprintf(buf, size, "byte %" PRIu64 ": %s", err->offset,
			 err->msg);
	return buf;
}
