/*
 * platform.h: the little the agent needs from the OS, behind one header
 * (platform_linux.c now; Android's NDK has the same calls, and a
 * platform_android.c can take over what differs: the display, the device
 * model, thermal zones).
 */
#ifndef PH_AGENT_PLATFORM_H
#define PH_AGENT_PLATFORM_H

#include "ph_common.h"

#include <time.h>

/* CLOCK_MONOTONIC in ms through the vDSO: no system call on Linux. */
static inline int64_t ph_uptime_ms_fast(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t ph_mono_ns_fast(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Binds and listens on the abstract Unix socket `name` (exact bytes, no
 * trailing NUL: Android's LocalSocket and adb's localabstract: naming).
 * Returns the fd, or a negative PH_E* code with errno kept.
 */
int ph_platform_listen_abstract(const char *name);
/* Listens on 127.0.0.1:port (the legacy transport), or PH_E*. */
int ph_platform_listen_tcp_loopback(int port);
/*
 * The name of a thread of this process (comm), into buf; false, with
 * "tid-N" in buf, when there is no such thread (any more).
 */
bool ph_platform_thread_name(int tid, char *buf, size_t size);
/*
 * Names the calling thread (at most 15 bytes show), so the agent's own
 * threads are told apart from the app's in top, a debugger and a system
 * trace.
 */
void ph_platform_name_self(const char *name);
/* Process start as uptime ms (from /proc/self/stat), or -1. */
int64_t ph_platform_process_start_ms(void);
/* This program's short name (for the default app id). */
void ph_platform_program_name(char *buf, size_t size);

#endif
