/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_atrace.c: atrace payloads (the text apps write to trace_marker,
 * seen as ftrace print events) into operations: begin, end, counter,
 * async start and finish, instant, and the named-track forms (trace.h
 * lists each one's fields beside enum ph_atrace_op).
 */
#include "ph_common.h"
#include "trace/trace.h"

static bool parse_i64(const char *s, size_t n, int64_t *out)
{
	int64_t v = 0;
	bool neg = false;
	size_t i = 0;

	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	if (i == n)
		return false;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > INT64_MAX / 10 - 10)
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = neg ? -v : v;
	return true;
}

int ph_atrace_parse(const char *s, size_t n, struct ph_atrace *out)
{
	const char *f[6];
	size_t fl[6];
	int nf = 0;
	size_t i, start = 0;

	memset(out, 0, sizeof(*out));
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' ||
		     s[n - 1] == '\0'))
		n--;
	if (!n)
		return PH_ECORRUPT;
	/* split on '|' into at most 6 fields; the last takes the rest */
	for (i = 0; i <= n && nf < 6; i++) {
		if (i == n || (s[i] == '|' && nf < 5)) {
			f[nf] = s + start;
			fl[nf++] = i - start;
			start = i + 1;
		}
	}
	if (fl[0] != 1)
		return PH_ECORRUPT;
	if (nf >= 2 && fl[1] && !parse_i64(f[1], fl[1], &out->tgid))
		return PH_ECORRUPT;
	switch (f[0][0]) {
	case 'B':
	case 'I':
		if (nf < 3)
			return PH_ECORRUPT;
		out->op = f[0][0] == 'B' ? PH_AT_B : PH_AT_I;
		/* the name is everything after the pid, '|' included */
		out->name = f[2];
		out->name_len = (size_t)(s + n - f[2]);
		return 0;
	case 'E': out->op = PH_AT_E; return 0;
	case 'C': {
		char buf[64];
		char *end;

		if (nf < 4 || !fl[3] || fl[3] >= sizeof(buf))
			return PH_ECORRUPT;
		memcpy(buf, f[3], fl[3]);
		buf[fl[3]] = 0;
		out->value = strtod(buf, &end);
		if (*end)
			return PH_ECORRUPT;
		out->op = PH_AT_C;
		out->name = f[2];
		out->name_len = fl[2];
		return 0;
	}
	case 'S':
	case 'F':
		if (nf < 4 || !parse_i64(f[3], fl[3], &out->cookie))
			return PH_ECORRUPT;
		out->op = f[0][0] == 'S' ? PH_AT_S : PH_AT_F;
		out->name = f[2];
		out->name_len = fl[2];
		return 0;
	case 'N':
		if (nf < 4)
			return PH_ECORRUPT;
		out->op = PH_AT_N;
		out->track = f[2];
		out->track_len = fl[2];
		out->name = f[3];
		out->name_len = (size_t)(s + n - f[3]);
		return 0;
	case 'G': /* G|tgid|track|name|cookie */
		if (nf < 5 || !parse_i64(f[4], fl[4], &out->cookie))
			return PH_ECORRUPT;
		out->op = PH_AT_G;
		out->track = f[2];
		out->track_len = fl[2];
		out->name = f[3];
		out->name_len = fl[3];
		return 0;
	case 'H': /* H|tgid|track|cookie: ends G's slice by track and cookie */
		if (nf < 4 || !parse_i64(f[3], fl[3], &out->cookie))
			return PH_ECORRUPT;
		out->op = PH_AT_H;
		out->track = f[2];
		out->track_len = fl[2];
		return 0;
	default: return PH_ECORRUPT;
	}
}
