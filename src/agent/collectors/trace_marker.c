/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_marker.c: the app's own labels in a system trace.
 *
 * While tracefs is recording (tracing_on is 1 and trace_marker can be
 * opened), spans, HTTP calls and queries are also written to the
 * top-level trace_marker as atrace does ("B|pid|name", "E|pid"), from the
 * thread that does the work, so a system trace shows them on the right
 * thread.  That write is the one system call an event call may make, and
 * only then.  Whether a trace is recording is checked by the sampler
 * thread once a second (ph_trace_marker_poll), never per event: when off,
 * an event pays one load (acquire, which x86-64 does as a plain load).
 *
 * An "E" must close a "B" this thread wrote into this same recording,
 * or trace viewers pair the wrong slices: a span that began before the
 * poll saw tracing come on ends with no "B" in the trace.  So each
 * thread counts the markers it has open, tagged with the recording
 * (a generation bumped at every switch on or off), and ends only those.
 *
 * The trace_marker fd, once opened, stays open while the process lives
 * and serves every later recording.  An emitter loads the fd and writes
 * to it with no lock; a thread preempted between the two may write a
 * second later.  Were the fd ever closed, its number could by then be a
 * file the app opened since, and the marker would be written into the
 * app's own data.  One fd kept for ever costs nothing and makes that
 * impossible without a count of readers on the emit path.
 */
#include "ph_common.h"
#include "collectors.h"

#include <fcntl.h>
#include <unistd.h>

/* One word, so an emitter never sees one recording's fd with another's
 * generation: generation in the high half, fd + 1 in the low (0 = off). */
static _Atomic uint64_t marker = 0;
static int kept = -1; /* trace_marker, once opened: never closed */

static _Thread_local uint32_t open_gen; /* recording this thread's count is for
					 */
static _Thread_local uint32_t open_count; /* its Bs not yet closed */

/*
 * At start, on the starting thread: a write (that changes nothing) to the
 * page `marker` is on, so its first write is not left to chance.  Every
 * event call that may mark reads `marker`; read before anything wrote its
 * page, the page is the kernel's zero page, and the first write to it by
 * any thread replaces it, a window in which an app thread's read can take
 * a page fault (the emit probe saw it in 1 run in 5).
 */
void ph_trace_marker_prepare(void)
{
	atomic_fetch_add(&marker, 0);
}

static inline int marker_fd(uint64_t m)
{
	return (int)(uint32_t)m - 1;
}

static const char *const tracefs_roots[] = { "/sys/kernel/tracing",
					     "/sys/kernel/debug/tracing" };
static const char *test_root; /* ph_trace_marker_set_root */

void ph_trace_marker_set_root(const char *dir)
{
	atomic_store(&marker, 0);
	if (kept >= 0)
		close(kept);
	kept = -1;
	test_root = dir;
}

/* Whether tracefs under root records now; opens trace_marker if not yet. */
static bool recording(const char *root)
{
	char path[256], on = '0';
	int t;

	snprintf(path, sizeof(path), "%s/tracing_on", root);
	t = open(path, O_RDONLY | O_CLOEXEC);
	if (t < 0)
		return false;
	if (read(t, &on, 1) != 1)
		on = '0';
	close(t);
	if (on != '1')
		return false;
	if (kept < 0) {
		snprintf(path, sizeof(path), "%s/trace_marker", root);
		kept = open(path, O_WRONLY | O_CLOEXEC);
	}
	return kept >= 0;
}

void ph_trace_marker_poll(void)
{
	bool on = false;
	uint64_t m;

	if (ph_agent.cfg.flags & PORTHOLE_NO_TRACE_MARKERS)
		return;
	if (test_root)
		on = recording(test_root);
	for (size_t i = 0;
	     !test_root && !on && i < PH_ARRAY_SIZE(tracefs_roots); i++)
		on = recording(tracefs_roots[i]);
	m = atomic_load(&marker);
	if ((marker_fd(m) >= 0) == on)
		return;
	/* a new recording: a new generation, the same fd */
	atomic_store(&marker,
		     (((m >> 32) + 1) << 32) | (uint32_t)(on ? kept + 1 : 0));
}

/*
 * Each emitter's look at the fd is an acquire load (a plain load on
 * x86-64): the poll that opened the fd comes before any write to it.
 */
void ph_trace_marker_begin(const char *name)
{
	uint64_t m = atomic_load_explicit(&marker, memory_order_acquire);
	int fd = marker_fd(m);
	char buf[160];
	int n;

	if (fd < 0)
		return;
	if (open_gen != (uint32_t)(m >> 32)) {
		open_gen = (uint32_t)(m >> 32);
		open_count = 0; /* those were another recording's */
	}
	n = snprintf(buf, sizeof(buf), "B|%d|%s", ph_agent.pid,
		     name ? name : "?");
	if (n <= 0 ||
	    write(fd, buf,
		  (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) < 0)
		return; /* the trace stopped: the next poll notices */
	open_count++;
}

void ph_trace_marker_end(void)
{
	uint64_t m = atomic_load_explicit(&marker, memory_order_acquire);
	int fd = marker_fd(m);
	char buf[32];
	int n;

	if (fd < 0 || open_count == 0 || open_gen != (uint32_t)(m >> 32))
		return; /* its B is not in this recording */
	open_count--;
	n = snprintf(buf, sizeof(buf), "E|%d", ph_agent.pid);
	if (n > 0 && write(fd, buf, (size_t)n) < 0)
		return;
}

/*
 * An async slice ("S|pid|name|cookie" ... "F|pid|name|cookie"), for time
 * one thread watches another spend: a stall is seen by the watchdog, not
 * by the stuck main thread, which cannot write anything.  Begin returns
 * the recording it wrote into (0: none); end writes only into that one.
 */
uint32_t ph_trace_marker_async_begin(const char *name, int cookie)
{
	uint64_t m = atomic_load_explicit(&marker, memory_order_acquire);
	int fd = marker_fd(m);
	char buf[160];
	int n;

	if (fd < 0)
		return 0;
	n = snprintf(buf, sizeof(buf), "S|%d|%s|%d", ph_agent.pid, name,
		     cookie);
	if (n <= 0 || (size_t)n >= sizeof(buf) || write(fd, buf, (size_t)n) < 0)
		return 0;
	return (uint32_t)(m >> 32);
}

void ph_trace_marker_async_end(uint32_t gen, const char *name, int cookie)
{
	uint64_t m = atomic_load_explicit(&marker, memory_order_acquire);
	int fd = marker_fd(m);
	char buf[160];
	int n;

	if (fd < 0 || !gen || gen != (uint32_t)(m >> 32))
		return;
	n = snprintf(buf, sizeof(buf), "F|%d|%s|%d", ph_agent.pid, name,
		     cookie);
	if (n > 0 && (size_t)n < sizeof(buf))
		(void)!write(fd, buf, (size_t)n);
}

/*
 * The explicit calls (porthole_http_start / porthole_db_start and their
 * ends) may end on another thread than the one they began on, as a
 * callback-based client does, so they are async slices, cookie = the
 * call's id.  The end must repeat the begin's name: a call that wrote an
 * S keeps it in a slot of its own (id % CALL_SLOTS, claimed by
 * compare-and-swap, so only that call reads or frees it).  A slot still
 * held by an earlier call of this recording (more than CALL_SLOTS in
 * flight, or one never ended) leaves this one without a slice, never with
 * a wrong one; one held for an earlier recording is taken over.
 */
#define CALL_SLOTS 64
#define CLAIMING   UINT64_MAX
static struct {
	_Atomic uint64_t id;  /* 0 free, CLAIMING, or the call's id */
	_Atomic uint32_t gen; /* read by a begin looking for stale slots */
	char name[120];
} calls[CALL_SLOTS];

static int cookie_of(uint64_t id)
{
	return (int)(id & 0x7fffffff);
}

void ph_trace_marker_call_begin(uint64_t id, const char *name)
{
	__typeof__(calls[0]) *c = &calls[id % CALL_SLOTS];
	uint64_t m = atomic_load_explicit(&marker, memory_order_acquire);
	uint64_t held;
	uint32_t gen;

	/* Off: one load, as for every other marker. */
	if (!id || marker_fd(m) < 0)
		return;
	held = atomic_load_explicit(&c->id, memory_order_acquire);
	/*
	 * A slot held for an earlier recording is stale: its call ended
	 * while no trace recorded (its end does not look at the slots then),
	 * or will end into a recording that no longer has its S.  Take it.
	 */
	if (held && held != CLAIMING &&
	    atomic_load_explicit(&c->gen, memory_order_relaxed) ==
		    (uint32_t)(m >> 32))
		return;
	if (held == CLAIMING ||
	    !atomic_compare_exchange_strong_explicit(&c->id, &held, CLAIMING,
						     memory_order_acquire,
						     memory_order_relaxed))
		return;
	snprintf(c->name, sizeof(c->name), "%s", name ? name : "?");
	gen = ph_trace_marker_async_begin(c->name, cookie_of(id));
	atomic_store_explicit(&c->gen, gen, memory_order_relaxed);
	atomic_store_explicit(&c->id, gen ? id : 0, memory_order_release);
}

void ph_trace_marker_call_end(uint64_t id)
{
	__typeof__(calls[0]) *c = &calls[id % CALL_SLOTS];
	uint64_t mine = id;

	/* Off: one load, and the slots' pages are never touched (a first
	 * touch is a page fault on the app's thread). */
	if (!id ||
	    marker_fd(atomic_load_explicit(&marker, memory_order_acquire)) < 0)
		return;
	/* Claimed back before its name is read: a begin that took the slot
	 * over (a stale one) makes this fail, and nothing is read twice. */
	if (!atomic_compare_exchange_strong_explicit(&c->id, &mine, CLAIMING,
						     memory_order_acquire,
						     memory_order_relaxed))
		return;
	ph_trace_marker_async_end(atomic_load_explicit(&c->gen,
						       memory_order_relaxed),
				  c->name, cookie_of(id));
	atomic_store_explicit(&c->id, 0, memory_order_release);
}
