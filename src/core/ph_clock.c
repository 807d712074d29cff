/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_clock.c: the monotonic app clock, the wall clock, and the offset
 * between them, measured so two timestamps never disagree about order
 * (ph_clock.h).
 */
#include "ph_common.h"
#include "ph_clock.h"

#include <time.h>

static int64_t read_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t ph_clock_mono_ns(void)
{
	return read_ns(CLOCK_MONOTONIC);
}

int64_t ph_clock_uptime_ms(void)
{
	return read_ns(CLOCK_MONOTONIC) / 1000000;
}

int64_t ph_clock_epoch_ms(void)
{
	return read_ns(CLOCK_REALTIME) / 1000000;
}

int64_t ph_clock_epoch_ns(void)
{
	return read_ns(CLOCK_REALTIME);
}

int64_t ph_clock_mono_to_real_offset_ns(void)
{
	int64_t best_width = INT64_MAX, best = 0;

	for (int i = 0; i < 5; i++) {
		int64_t m0 = read_ns(CLOCK_MONOTONIC);
		int64_t r = read_ns(CLOCK_REALTIME);
		int64_t m1 = read_ns(CLOCK_MONOTONIC);

		if (m1 - m0 < best_width) {
			best_width = m1 - m0;
			best = r - (m0 + (m1 - m0) / 2);
		}
	}
	return best;
}

char *ph_clock_format_utc_us(int64_t epoch_ns, char *buf, size_t size)
{
	time_t secs = (time_t)(epoch_ns / 1000000000);
	int64_t frac = epoch_ns % 1000000000;
	struct tm tm;

	if (frac < 0) {
		frac += 1000000000;
		secs -= 1;
	}
	gmtime_r(&secs, &tm);
	snprintf(buf, size, "%04d-%02d-%02d %02d:%02d:%02d.%06d",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, (int)(frac / 1000));
	return buf;
}
