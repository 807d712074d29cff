/*
 * watchdog.c: main-thread stalls, with the stack that caused them.
 *
 * Every 300 ms the watchdog thread posts a ping (stamps ping_at); the main
 * loop answers it from porthole_main_loop_ping(), which it calls once per
 * iteration.  A ping that waits longer than the threshold (default 200 ms)
 * is a stall, measured from when the ping was posted until the loop
 * answered.  While a ping is overdue, the watchdog samples the main
 * thread's stack once: a signal to that thread, whose handler only copies
 * return addresses into a static buffer (backtrace(), warmed up at start
 * so it does not load anything inside the handler).  The writer thread
 * symbolizes them later.  When the loop answers, a `blocked` event goes
 * out with t = the ping's post time, durationMs, and the stack.
 *
 * A loop that sleeps longer than the threshold while idle must ping before
 * it sleeps and as it wakes; docs/agent.md says so.
 *
 * While a system trace records, the stall is also an async slice named
 * STALL_SLICE in it, written by the watchdog (the main thread is stuck):
 * it begins when a ping has waited `stall_ms`, so up to stall_ms + 300 ms
 * after the stall did, and ends when the loop answers.  The `blocked`
 * event carries the measured length.
 */
#include "ph_common.h"
#include "collectors.h"
#include "ph_clock.h"
#include "ph_log.h"
#include "../symbolize.h"

#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PING_EVERY_MS 300
#define POLL_MS	      20
#define STALL_SLICE   "porthole: main thread stalled"

static pthread_t thread;
static _Atomic bool stop;
static bool started;
static int stall_ms = 200;
static int sample_signal;

static _Atomic int64_t ping_at = -1;	 /* posted, not yet answered */
static _Atomic int64_t answered_at = -1; /* set by the main loop */

/* Written by the signal handler, read by the watchdog after `ready`. */
static uintptr_t sample_pcs[PH_MAX_FRAMES];
static _Atomic int sample_n;
static _Atomic bool sample_ready;

void ph_watchdog_answer(void)
{
	/* The main loop's per-iteration cost: one relaxed load when idle. */
	if (atomic_load_explicit(&ping_at, memory_order_relaxed) < 0)
		return;
	if (atomic_load_explicit(&answered_at, memory_order_relaxed) < 0)
		atomic_store_explicit(&answered_at, ph_uptime_ms_fast(),
				      memory_order_release);
}

static void on_sample_signal(int sig, siginfo_t *info, void *uctx)
{
	void *pcs[PH_MAX_FRAMES];
	int n, saved = errno;

	(void)sig;
	(void)info;
	(void)uctx;
	n = backtrace(pcs, PH_MAX_FRAMES);
	/*
	 * Frame 0 is this handler and frame 1 the kernel's sigreturn
	 * trampoline; the interrupted code starts at frame 2.
	 */
	for (int i = 2; i < n; i++)
		sample_pcs[i - 2] = (uintptr_t)pcs[i];
	atomic_store_explicit(&sample_n, n > 2 ? n - 2 : 0,
			      memory_order_relaxed);
	atomic_store_explicit(&sample_ready, true, memory_order_release);
	errno = saved;
}

static void emit_blocked(int64_t posted, int64_t answered, int tid)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_BLOCKED, &pos);
	int n = atomic_load_explicit(&sample_ready, memory_order_acquire) ?
			atomic_load(&sample_n) :
			0;

	if (!r)
		return;
	ph_rec_set_t(r, posted); /* the start of the stall */
	r->tid = tid;
	r->flags |= PH_REC_MAIN;
	ph_rec_int(r, PH_KEY_DURATION_MS, answered - posted);
	if (n > 0)
		ph_rec_pcs(r, PH_KEY_STACK, sample_pcs, (size_t)n);
	else
		ph_rec_str(r, PH_KEY_TOP, "?", 4);
	ph_rec_int(r, PH_KEY_TID, tid);
	ph_emit_commit(pos);
}

static void *watchdog_main(void *arg)
{
	(void)arg;
	ph_platform_name_self("porthole-wdog");
	while (!atomic_load(&stop)) {
		int tid = atomic_load(&ph_agent.main_tid);
		int64_t posted, now;
		bool sampled = false, anr = false;
		uint32_t traced = 0;
		static int stalls;

		usleep(PING_EVERY_MS * 1000);
		if (!tid || atomic_load(&stop))
			continue;
		atomic_store(&sample_ready, false);
		atomic_store(&answered_at, -1);
		posted = ph_clock_uptime_ms();
		atomic_store(&ping_at, posted);
		for (;;) {
			int64_t ans = atomic_load_explicit(
				&answered_at, memory_order_acquire);

			if (ans >= 0) {
				if (anr)
					ph_exits_note_answered();
				ph_trace_marker_async_end(traced, STALL_SLICE,
							  stalls);
				if (ans - posted >= stall_ms)
					emit_blocked(posted, ans, tid);
				break;
			}
			if (atomic_load(&stop)) {
				if (anr)
					ph_exits_note_answered();
				break;
			}
			now = ph_clock_uptime_ms();
			/* Stuck ANR-long: a kill now would be an ANR; say where
			 * for the next start (exits.c). */
			if (!anr && now - posted >= PH_ANR_MS) {
				bool got = atomic_load_explicit(
					&sample_ready, memory_order_acquire);

				ph_exits_note_unresponsive(
					posted, sample_pcs,
					got ? (size_t)atomic_load(&sample_n) :
					      0);
				anr = true;
			}
			if (!sampled && now - posted >= stall_ms) {
				/* Overdue: one sample of where main is stuck.
				 */
				syscall(SYS_tgkill, ph_agent.pid, tid,
					sample_signal);
				sampled = true;
				traced = ph_trace_marker_async_begin(
					STALL_SLICE, ++stalls);
			}
			usleep(POLL_MS * 1000);
		}
		atomic_store(&ping_at, -1);
	}
	return NULL;
}

int ph_watchdog_start(struct ph_agent *a)
{
	struct sigaction sa = { .sa_sigaction = on_sample_signal,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	void *warm[4];

	if (a->cfg.flags & PORTHOLE_NO_WATCHDOG)
		return 0;
	stall_ms = a->cfg.stall_ms ? (int)a->cfg.stall_ms : 200;
	/* A real-time signal the app is unlikely to use itself. */
	sample_signal = SIGRTMIN + 7;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sample_signal, &sa, NULL))
		return PH_EIO;
	/* The first backtrace() loads libgcc; never inside the handler. */
	backtrace(warm, 4);
	atomic_store(&stop, false);
	if (pthread_create(&thread, NULL, watchdog_main, NULL))
		return PH_EIO;
	started = true;
	return 0;
}

void ph_watchdog_stop(void)
{
	if (!started)
		return;
	atomic_store(&stop, true);
	pthread_join(thread, NULL);
	started = false;
}
