/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_clock.h: the clocks every event, finding and report speak.
 *
 * The app clock is uptime in milliseconds on CLOCK_MONOTONIC, the Linux
 * equivalent of Android's SystemClock.uptimeMillis() (which also stops in
 * deep sleep).  Wall-clock time appears only where a person reads it (file
 * names, report headers) and is derived from the monotonic clock plus one
 * offset measured when needed, so two timestamps never disagree about order.
 */
#ifndef PH_CLOCK_H
#define PH_CLOCK_H

#include "ph_common.h"

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t ph_clock_mono_ns(void);
/* CLOCK_MONOTONIC in milliseconds: the app clock, the wire's `t`. */
int64_t ph_clock_uptime_ms(void);
/* CLOCK_REALTIME in milliseconds since the Unix epoch. */
int64_t ph_clock_epoch_ms(void);
/* CLOCK_REALTIME in nanoseconds since the Unix epoch. */
int64_t ph_clock_epoch_ns(void);

/*
 * realtime - monotonic, in nanoseconds, measured as the middle of the
 * tightest of a few back-to-back readings, so converting a monotonic
 * timestamp to wall time is off by well under a microsecond.
 */
int64_t ph_clock_mono_to_real_offset_ns(void);

static inline int64_t ph_ns_to_ms(int64_t ns)
{
	return ns / 1000000;
}

static inline int64_t ph_ms_to_ns(int64_t ms)
{
	return ms * 1000000;
}

/*
 * Formats epoch nanoseconds as UTC "YYYY-MM-DD HH:MM:SS.ffffff" (26 chars
 * plus NUL) into buf.  Returns buf.
 */
char *ph_clock_format_utc_us(int64_t epoch_ns, char *buf, size_t size);

#endif
