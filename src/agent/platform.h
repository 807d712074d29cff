/* SPDX-License-Identifier: Apache-2.0 */
/*
 * platform.h: the little the agent needs from the OS, behind one header
 * (platform_linux.c now; Android's NDK has the same calls, and a
 * platform_android.c can take over what differs: the display, the device
 * model, thermal zones).
 */
#ifndef PH_AGENT_PLATFORM_H
#define PH_AGENT_PLATFORM_H

#include "ph_common.h"

#include <limits.h>
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
/* This program's short name (for the default app id): glibc's and musl's
 * program_invocation_short_name; bionic's getprogname() (API 21). */
void ph_platform_program_name(char *buf, size_t size);

/*
 * The C library's differences, each answered here (docs/agent.md,
 * "bionic"): glibc is what this machine runs, musl the nearest stand-in
 * for Android's bionic it has, and the NDK's answer is written beside.
 */

/*
 * The libraries the agent links where the platform has them.  libdw
 * (elfutils) names and places a stack's frames: Debian builds it for
 * glibc; the NDK has none, and Debian builds none for musl, so there the
 * symbolizer names what dladdr() finds (the modules' exported symbols) and
 * sends every frame's module and offset.  zlib encodes the screenshot's
 * PNG: glibc's Debian package and the NDK's own (-lz); none for musl,
 * where `screenshot` answers EUNSUPP.  -DPH_PLATFORM_LIBDW=0 (or ZLIB)
 * builds without one where the C library would have it.
 */
#ifndef PH_PLATFORM_LIBDW
#if defined(__GLIBC__)
#define PH_PLATFORM_LIBDW 1
#else
#define PH_PLATFORM_LIBDW 0
#endif
#endif
#ifndef PH_PLATFORM_ZLIB
#if defined(__GLIBC__) || defined(__BIONIC__)
#define PH_PLATFORM_ZLIB 1
#else
#define PH_PLATFORM_ZLIB 0
#endif
#endif

/*
 * Up to max return addresses of the calling thread, innermost first, as
 * glibc's backtrace() gives them (frame 0 the caller's own); the count.
 * backtrace() walks with the compiler's unwinder; musl has none, and
 * bionic only from API 33, so elsewhere the agent calls that unwinder
 * itself (ph_platform_unwind), which libgcc and the NDK's libunwind
 * provide at every API level.  A macro, so that backtrace() adds no frame
 * of ours: the watchdog and the crash handler count frames from there.
 */
#if defined(__GLIBC__)
#include <execinfo.h>
#define ph_platform_backtrace(pcs, max) backtrace((pcs), (max))
#else
#define ph_platform_backtrace(pcs, max) ph_platform_unwind((pcs), (max))
#endif
/* backtrace() by _Unwind_Backtrace, on every C library (tests compare). */
int ph_platform_unwind(void **pcs, int max);
/*
 * The return addresses of a frame-record chain (arm64's AAPCS64 and
 * x86-64 with frame pointers: the record at fp holds the caller's fp,
 * then the return address), up to max; the count.  Reads only records
 * wholly inside [lo, hi), the thread's stack, and each above the last:
 * the chain ends at fp 0 (what _start leaves in x29), or where a frame
 * without a record left garbage.  Async-signal-safe.
 */
int ph_platform_fp_walk(uintptr_t fp, uintptr_t lo, uintptr_t hi,
			uintptr_t *pcs, int max);
/* The calling thread's stack, [lo, hi); false when it cannot say. */
bool ph_platform_thread_stack(uintptr_t *lo, uintptr_t *hi);

/*
 * Has fn(status) called at a normal exit with exit()'s status: glibc's
 * on_exit().  musl and bionic have only atexit(), which passes none:
 * there fn gets PH_EXIT_STATUS_UNKNOWN.  0, or -1 when it cannot.
 */
#define PH_EXIT_STATUS_UNKNOWN INT_MIN
int ph_platform_on_exit(void (*fn)(int status));

/*
 * The C heap: bytes in use and bytes the allocator holds from the system.
 * glibc's mallinfo2() (2.33 on); bionic's mallinfo() (every API level,
 * size_t fields there).  False, both -1, where the C library cannot say
 * (musl has neither).
 */
bool ph_platform_heap(int64_t *used, int64_t *held);

#endif
