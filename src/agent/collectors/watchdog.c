/* SPDX-License-Identifier: Apache-2.0 */
/*
 * watchdog.c: main-thread stalls, with the stack that caused them.
 *
 * The main thread stamps `turned_ns` each time it turns over: every
 * porthole_main_loop_ping() and every frame call (frames.c).  A gap of
 * `stall_ms` (default 200) or more between two stamps is a stall, and its
 * length is exactly that gap: from the last turn-over before it to the
 * first after, as the main thread itself saw them, not from when anyone
 * noticed.  The main thread publishes the gap as it resumes (gap_from_ns,
 * gap_to_ns); the watchdog thread, polling every POLL_MS, sends the
 * closing `blocked` event for it.
 *
 * While a stall lasts the watchdog makes it visible: once the newest
 * stamp is `stall_ms` old it samples the main thread's stack (a signal to
 * that thread, SIGRTMIN+7 or the next real-time signal the app has no
 * handler on (none free: no stack), whose handler only copies return
 * addresses into a static
 * buffer; backtrace() is warmed up at start so it loads nothing inside the
 * handler; the writer thread symbolizes them later) and sends a `blocked`
 * event with "ongoing": true, then samples and sends again every
 * UPDATE_MS, so a host watching sees the hang while it lasts, and a host
 * that connects mid-hang finds it in the ring.  All events of one stall
 * share their `t`, the stall's start; the last, without `ongoing`, closes
 * it with the measured length.
 *
 * A loop that sleeps longer than the threshold while idle must ping before
 * it sleeps and as it wakes; docs/agent.md says so.
 *
 * A process that does not run at all (stopped by a debugger, SIGSTOP or
 * a cgroup freezer) is not a stalled main thread: that time is left out
 * of every stall (see note_pause).
 *
 * While a system trace records, the stall is also an async slice named
 * STALL_SLICE in it, written by the watchdog (the main thread is stuck):
 * it begins when the watchdog sees the stall, stall_ms (plus up to one
 * poll) after it began, and ends when the watchdog sees it closed.
 */
#include "ph_common.h"
#include "collectors.h"
#include "ph_clock.h"
#include "ph_log.h"
#include "../platform.h"
#include "../symbolize.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__aarch64__)
#include <ucontext.h>
#endif

#define POLL_MS	  20
#define UPDATE_MS 1000
/* How long an ongoing event waits for its stack before going without. */
#define SAMPLE_WAIT_MS 100
#define STALL_SLICE    "porthole: main thread stalled"

static pthread_t thread;
static _Atomic bool stop;
static bool started;
static _Atomic bool watching; /* read by the main thread's stamps */
static _Atomic int64_t stall_ns = 200 * 1000000LL;
static int sample_signal;

/*
 * Written by the main thread only.  turned_ns is its newest turn-over;
 * gap_from_ns/gap_to_ns the newest stall it resumed from, under a
 * sequence count (odd while being written), so the watchdog never reads
 * one stall's start with another's end.  A second stall that closes
 * before the watchdog's next poll hides the first; stalls are at least
 * stall_ms long and the watchdog polls every POLL_MS, so only a watchdog
 * starved for that long misses one.
 */
static _Atomic int64_t turned_ns = -1;
static _Atomic uint64_t gap_seq;
static _Atomic int64_t gap_from_ns = -1;
static _Atomic int64_t gap_to_ns = -1;

/*
 * Written by the signal handler, read by the watchdog after `ready`.  The
 * handler writes only when it takes `asked` (set by ask_sample after the
 * watchdog's last read): a signal that comes late, or twice, finds it
 * taken and writes nothing, so the handler never writes while the
 * watchdog reads, and the release/acquire pair orders the two for TSan,
 * which does not count a signal's delivery as ordering anything.
 */
static uintptr_t sample_pcs[PH_MAX_FRAMES];
static _Atomic int sample_n;
static _Atomic bool sample_ready;
static _Atomic bool sample_asked;

/* The main thread's stack, for the frame-record walk (arm64 below). */
static _Atomic uintptr_t main_stack_lo, main_stack_hi;

void ph_watchdog_main_thread(void)
{
	uintptr_t lo = 0, hi = 0;

	ph_platform_thread_stack(&lo, &hi);
	atomic_store(&main_stack_lo, lo);
	atomic_store(&main_stack_hi, hi);
}

/*
 * Stretches in which the whole process did not run: stopped by a
 * debugger, SIGSTOP or a cgroup freezer (Android freezes cached apps).
 * The main thread's gap spans them, but it was not stalling, it was not
 * running, and a breakpoint held for a minute is not a one-minute stall.
 * The watchdog finds them from its own polls (note_pause).  Written and
 * read by the watchdog thread only; the newest PAUSES are kept, enough
 * for the stops of a debugger stepping through one stall.
 */
#define PAUSES 16
static struct pause {
	int64_t from_ns, to_ns;
} pauses[PAUSES];
static unsigned npauses;
static int schedstat_fd = -1; /* the watchdog thread's own */

/*
 * How long the watchdog thread has waited for a CPU, in ns (the second
 * field of its schedstat), or -1 when the kernel does not say.
 */
static int64_t cpu_wait_ns(void)
{
	char b[96];
	ssize_t n;
	const char *sp;

	if (schedstat_fd < 0 ||
	    (n = pread(schedstat_fd, b, sizeof(b) - 1, 0)) <= 0)
		return -1;
	b[n] = '\0';
	sp = strchr(b, ' ');
	/* "0 0 0": schedstats off (delay accounting without them, before
	 * 5.14); a thread that runs this has run. */
	return sp && strtoll(b, NULL, 10) > 0 ? strtoll(sp + 1, NULL, 10) : -1;
}

/* The time in [from, to) the process spent paused, of the pauses kept. */
static int64_t paused_in(int64_t from, int64_t to)
{
	int64_t sum = 0;

	for (unsigned i = 0; i < PAUSES && i < npauses; i++) {
		int64_t a = pauses[i].from_ns > from ? pauses[i].from_ns : from;
		int64_t b = pauses[i].to_ns < to ? pauses[i].to_ns : to;

		if (b > a)
			sum += b - a;
	}
	return sum;
}

/*
 * A poll that came stall_ms or more after it was due, in which this
 * thread did not wait for a CPU either, means the process was not
 * running: noted as a pause ending now, and said in a log line.  A poll
 * late because the thread waited for a CPU (a loaded machine) is no
 * pause: the app was starved, and a stall then is one its user sees.
 * `polled`/`waited`: the clock and the wait as the sleep began, so the
 * watchdog's own work (a symbolized stack for exits.c) is not counted.
 */
static void note_pause(int64_t polled, int64_t waited, int64_t now,
		       int64_t wait_now)
{
	int64_t late = now - polled - POLL_MS * 1000000LL;
	struct pause *p;
	char msg[200];
	int n;

	if (waited < 0 || wait_now < 0 || late < stall_ns)
		return;
	late -= wait_now - waited;
	if (late < stall_ns)
		return;
	p = &pauses[npauses++ % PAUSES];
	p->from_ns = now - late;
	p->to_ns = now;
	n = snprintf(msg, sizeof(msg),
		     "the process did not run for %lld ms (stopped by a "
		     "debugger, SIGSTOP or a freezer); that time is not "
		     "counted as a main-thread stall",
		     (long long)(late / 1000000));
	ph_log_emit(PORTHOLE_WARN, "porthole", msg, (size_t)n, ph_tid());
}

/* The watchdog thread's copy of the newest sample of the open stall. */
static uintptr_t stack_pcs[PH_MAX_FRAMES];
static size_t stack_n;

void ph_watchdog_turned(int64_t now_ns)
{
	int64_t prev;
	uint64_t seq;

	if (!atomic_load_explicit(&watching, memory_order_relaxed))
		return;
	prev = atomic_load_explicit(&turned_ns, memory_order_relaxed);
	if (prev >= 0 &&
	    now_ns - prev >=
		    atomic_load_explicit(&stall_ns, memory_order_relaxed)) {
		/* Release stores, not a fence (TSan has no fences): a reader
		 * that sees either new value also sees the odd count. */
		seq = atomic_load_explicit(&gap_seq, memory_order_relaxed);
		atomic_store_explicit(&gap_seq, seq + 1, memory_order_relaxed);
		atomic_store_explicit(&gap_from_ns, prev, memory_order_release);
		atomic_store_explicit(&gap_to_ns, now_ns, memory_order_release);
		atomic_store_explicit(&gap_seq, seq + 2, memory_order_release);
	}
	atomic_store_explicit(&turned_ns, now_ns, memory_order_release);
}

void ph_watchdog_answer(void)
{
	/* The main loop's per-iteration cost: a clock read and a store. */
	if (atomic_load_explicit(&watching, memory_order_relaxed))
		ph_watchdog_turned(ph_mono_ns_fast());
}

/* The newest gap if it is not `seen`; false while it is being written. */
static bool read_gap(uint64_t *seen, int64_t *from, int64_t *to)
{
	uint64_t s1 = atomic_load_explicit(&gap_seq, memory_order_acquire);

	if (s1 == *seen || (s1 & 1))
		return false;
	/* Acquire loads keep the second look at the count after them. */
	*from = atomic_load_explicit(&gap_from_ns, memory_order_acquire);
	*to = atomic_load_explicit(&gap_to_ns, memory_order_acquire);
	if (atomic_load_explicit(&gap_seq, memory_order_relaxed) != s1)
		return false;
	*seen = s1;
	return true;
}

static void on_sample_signal(int sig, siginfo_t *info, void *uctx)
{
	void *pcs[PH_MAX_FRAMES];
	int n, saved = errno;

	(void)sig;
	(void)info;
	(void)uctx;
	if (!atomic_exchange_explicit(&sample_asked, false,
				      memory_order_acquire))
		return; /* not asked for, or answered already */
	n = ph_platform_backtrace(pcs, PH_MAX_FRAMES);
	/*
	 * Frame 0 is this handler and frame 1 the kernel's sigreturn
	 * trampoline; the interrupted code starts at frame 2.
	 */
	for (int i = 2; i < n; i++)
		sample_pcs[i - 2] = (uintptr_t)pcs[i];
#if defined(__aarch64__)
	/*
	 * Code without unwind information (a PLT entry: arm64 gives them no
	 * CFI, and a busy loop calling a library spends time in them) ends
	 * the unwind at the interrupted pc.  Such code is a leaf that has not
	 * saved the link register or touched x29, so its caller is in x30,
	 * and the callers' frame records chain from x29 up to main and on to
	 * _start, which leaves x29 0.
	 */
	if (n == 3 && uctx) {
		const mcontext_t *mc = &((ucontext_t *)uctx)->uc_mcontext;
		uintptr_t lr = mc->regs[30], lo = atomic_load(&main_stack_lo);
		uintptr_t hi = atomic_load(&main_stack_hi);
		int k = 1;

		if (lr && lr != sample_pcs[0])
			sample_pcs[k++] = lr;
		/* from sp up, all mapped; not on another stack (a fiber's) */
		if (mc->sp >= lo && mc->sp < hi)
			k += ph_platform_fp_walk(mc->regs[29], mc->sp, hi,
						 sample_pcs + k,
						 PH_MAX_FRAMES - k);
		n = k + 2;
	}
#endif
	atomic_store_explicit(&sample_n, n > 2 ? n - 2 : 0,
			      memory_order_relaxed);
	atomic_store_explicit(&sample_ready, true, memory_order_release);
	errno = saved;
}

/* The watchdog's view of the stall it is watching. */
struct stall {
	bool open;	  /* seen stuck, not yet closed */
	bool asked;	  /* a sample is asked for this update */
	bool anr;	  /* noted as unresponsive for exits.c */
	int64_t from_ns;  /* the last turn-over before it */
	int64_t asked_ns; /* when the newest sample was asked for */
	int64_t next_ns;  /* when the next ongoing event is due */
	uint32_t traced;  /* the trace slice's generation */
	int cookie;	  /* the trace slice's id */
};

static void ask_sample(struct stall *st, int tid, int64_t now)
{
	atomic_store(&sample_ready, false);
	atomic_store_explicit(&sample_asked, true, memory_order_release);
	if (sample_signal) /* 0: none free, the event goes without a stack */
		syscall(SYS_tgkill, ph_agent.pid, tid, sample_signal);
	st->asked = true;
	st->asked_ns = now;
}

/* Keeps the sample the handler finished, if one came since asked. */
static bool take_sample(void)
{
	int n;

	if (!atomic_load_explicit(&sample_ready, memory_order_acquire))
		return false;
	n = atomic_load_explicit(&sample_n, memory_order_relaxed);
	stack_n = n > 0 ? (size_t)n : 0;
	memcpy(stack_pcs, sample_pcs, stack_n * sizeof(stack_pcs[0]));
	return true;
}

/*
 * One `blocked` event: t is the stall's start; ongoing while it lasts.
 * Its length leaves out the time the process was paused, which pausedMs
 * gives.
 */
static void emit_blocked(int64_t from_ns, int64_t to_ns, int tid, bool ongoing)
{
	uint64_t pos;
	int64_t paused = paused_in(from_ns, to_ns);
	struct ph_rec *r = ph_emit_begin(PH_KIND_BLOCKED, &pos);

	if (!r)
		return;
	ph_rec_set_t(r, from_ns / 1000000);
	r->tid = tid;
	r->flags |= PH_REC_MAIN;
	ph_rec_int(r, PH_KEY_DURATION_MS, (to_ns - from_ns - paused) / 1000000);
	if (paused >= 1000000)
		ph_rec_int(r, PH_KEY_PAUSED_MS, paused / 1000000);
	if (stack_n > 0) {
		ph_rec_pcs(r, PH_KEY_STACK, stack_pcs, stack_n);
	} else {
		/* Not sampled (over before the watchdog looked, or the
		 * signal not taken): the protocol requires both fields. */
		ph_rec_str(r, PH_KEY_TOP, "?", 4);
		ph_rec_strn(r, PH_KEY_STACK, PH_F_STR, "", 0, 0);
	}
	ph_rec_int(r, PH_KEY_TID, tid);
	if (ongoing)
		ph_rec_bool(r, PH_KEY_ONGOING, true);
	ph_emit_commit(pos);
}

/*
 * The main thread resumed after [from, to): the closing event, unless
 * the gap was a stall only with the time the process was paused.
 */
static void close_stall(struct stall *st, int64_t from, int64_t to, int tid)
{
	if (!(st->open && st->from_ns == from) &&
	    to - from - paused_in(from, to) < stall_ns)
		return;
	if (st->open && st->from_ns == from)
		take_sample();
	else
		stack_n = 0; /* over before the watchdog saw it: no sample */
	if (st->anr)
		ph_exits_note_answered();
	if (st->open)
		ph_trace_marker_async_end(st->traced, STALL_SLICE, st->cookie);
	emit_blocked(from, to, tid, false);
	*st = (struct stall){ .cookie = st->cookie };
}

/* The main thread is stuck: say so now, and again every UPDATE_MS. */
static void watch_open_stall(struct stall *st, int64_t turned, int tid,
			     int64_t now)
{
	if (!st->open) {
		*st = (struct stall){ .open = true,
				      .from_ns = turned,
				      .next_ns = now,
				      .cookie = st->cookie + 1 };
		stack_n = 0;
		st->traced =
			ph_trace_marker_async_begin(STALL_SLICE, st->cookie);
		ask_sample(st, tid, now);
	}
	/* Stuck ANR-long: a kill now would be an ANR; say where for the next
	 * start (exits.c). */
	if (!st->anr && now - st->from_ns - paused_in(st->from_ns, now) >=
				PH_ANR_MS * 1000000LL) {
		take_sample();
		ph_exits_note_unresponsive(st->from_ns / 1000000, stack_pcs,
					   stack_n);
		st->anr = true;
	}
	if (now < st->next_ns) {
		/* Ask a poll ahead, so the update carries the stack of now. */
		if (!st->asked && st->next_ns - now <= POLL_MS * 1000000LL)
			ask_sample(st, tid, now);
		return;
	}
	if (!st->asked)
		ask_sample(st, tid, now);
	if (!take_sample() && now - st->asked_ns < SAMPLE_WAIT_MS * 1000000LL)
		return;
	emit_blocked(st->from_ns, now, tid, true);
	st->next_ns = now + UPDATE_MS * 1000000LL;
	st->asked = false;
}

static void *watchdog_main(void *arg)
{
	struct stall st = { 0 };
	uint64_t seen = atomic_load(&gap_seq) & ~(uint64_t)1;
	int tid = 0;
	int64_t from, to;

	ph_exits_thread_altstack(); /* a crash here writes its record */
	(void)arg;
	ph_platform_name_self("porthole-wdog");
	/* Opened here: thread-self is the thread that opens it. */
	schedstat_fd =
		open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	npauses = 0;
	while (!atomic_load(&stop)) {
		int64_t turned, now, polled, waited;

		tid = atomic_load(&ph_agent.main_tid);
		polled = ph_mono_ns_fast();
		waited = cpu_wait_ns();
		usleep(POLL_MS * 1000);
		now = ph_mono_ns_fast();
		/* Before the gap is read: a pause is left out of it. */
		note_pause(polled, waited, now, cpu_wait_ns());
		if (!tid || atomic_load(&stop))
			continue;
		if (read_gap(&seen, &from, &to))
			close_stall(&st, from, to, tid);
		turned = atomic_load_explicit(&turned_ns, memory_order_acquire);
		if (turned < 0 || (st.open && turned != st.from_ns))
			continue; /* resumed: closed at the next poll */
		if (now - turned - paused_in(turned, now) >= stall_ns)
			watch_open_stall(&st, turned, tid, now);
	}
	/* A stall the main thread ended by stopping the agent (agent.c). */
	if (tid && read_gap(&seen, &from, &to))
		close_stall(&st, from, to, tid);
	if (st.anr)
		ph_exits_note_answered();
	/* After fds_lost its number may be the app's file now. */
	if (schedstat_fd >= 0 && !atomic_load(&ph_agent.fds_lost))
		close(schedstat_fd);
	schedstat_fd = -1;
	return NULL;
}

/*
 * The signal that samples the main thread: a real-time one the app has
 * no handler on (taking one would silence the app's), SIGRTMIN+7 first,
 * then the next ones up and the ones below it; 0 when every one is taken.
 * A signal the agent took at an earlier start is its own, so it is free.
 */
static int free_signal(void)
{
	int n = SIGRTMAX - SIGRTMIN + 1;

	for (int i = 0; i < n; i++) {
		int sig = SIGRTMIN + (7 + i) % n;
		struct sigaction old;

		if (sigaction(sig, NULL, &old))
			continue;
		if (old.sa_handler == SIG_DFL ||
		    ((old.sa_flags & SA_SIGINFO) &&
		     old.sa_sigaction == on_sample_signal))
			return sig;
	}
	return 0;
}

int ph_watchdog_start(struct ph_agent *a)
{
	struct sigaction sa = { .sa_sigaction = on_sample_signal,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	void *warm[4];

	if (a->cfg.flags & PORTHOLE_NO_WATCHDOG)
		return 0;
	stall_ns =
		(a->cfg.stall_ms ? (int64_t)a->cfg.stall_ms : 200) * 1000000LL;
	sample_signal = free_signal();
	sigemptyset(&sa.sa_mask);
	if (!sample_signal)
		ph_warn("watchdog: every real-time signal has a handler of the "
			"app's; stalls are sent without the main thread's "
			"stack");
	else if (sigaction(sample_signal, &sa, NULL))
		return PH_EIO;
	else if (sample_signal != SIGRTMIN + 7)
		ph_info("watchdog: SIGRTMIN+7 has a handler of the app's; the "
			"main thread's stack is sampled with SIGRTMIN+%d",
			sample_signal - SIGRTMIN);
	/* The first backtrace() loads libgcc; never inside the handler. */
	ph_platform_backtrace(warm, 4);
	atomic_store(&stop, false);
	/* A stamp from an earlier start is no turn-over of this one. */
	atomic_store(&turned_ns, -1);
	atomic_store(&watching, true);
	if (pthread_create(&thread, NULL, watchdog_main, NULL)) {
		atomic_store(&watching, false);
		return PH_EIO;
	}
	started = true;
	return 0;
}

void ph_watchdog_stop(void)
{
	if (!started)
		return;
	atomic_store(&watching, false);
	atomic_store(&stop, true);
	pthread_join(thread, NULL);
	started = false;
}
