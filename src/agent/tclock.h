/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tclock.h: the clock an event call stamps its event with.
 *
 * An event's t is CLOCK_MONOTONIC in ms.  Read through clock_gettime it
 * is half of what an event call costs (libc's PLT, the vDSO's code and
 * its data page, three or four lines an app's cold call must bring back).
 * So where the CPU has a counter that runs at one rate on every core and
 * the kernel itself keeps time by it (x86-64's TSC with the "tsc"
 * clocksource, arm64's virtual counter with "arch_sys_counter"), an event
 * call reads the counter and scales it: t = base_ns + (tick - base_tick) x
 * mult / 2^32, three words kept beside the agent's `running`.
 *
 * The writer thread keeps them true (ph_tclock_tune, about once a
 * second): it reads the counter and CLOCK_MONOTONIC together, measures
 * the counter's rate over the last interval, and steers: the new segment
 * starts where the old one's estimate stands (so t never steps back) and
 * runs at that rate corrected by the error it found, spread over the next
 * second (never more than 1%).  An error over 50 ms (a suspend, a clock
 * set) is taken at once.  Until the first tune, and whenever the counter
 * cannot be used, event calls read clock_gettime as before.
 *
 * The three words change together under a sequence count: odd while the
 * writer changes them; a reader that sees it odd or changed reads
 * clock_gettime instead of waiting.
 */
#ifndef PH_AGENT_TCLOCK_H
#define PH_AGENT_TCLOCK_H

#include "ph_common.h"
#include "platform.h"

#include <stdatomic.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PH_HAVE_TICKS 1
static inline uint64_t ph_ticks(void)
{
	/* unordered: an event's ms needs no fence around the read */
	return __builtin_ia32_rdtsc();
}
#elif defined(__aarch64__)
#define PH_HAVE_TICKS 1
static inline uint64_t ph_ticks(void)
{
	uint64_t v;

	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#else
#define PH_HAVE_TICKS 0
static inline uint64_t ph_ticks(void)
{
	return 0;
}
#endif

/* What event calls read: 32 bytes, in the agent's first line. */
struct ph_tclock {
	_Atomic uint32_t seq;	    /* odd while the writer changes them */
	_Atomic uint32_t usable;    /* the counter can be trusted */
	_Atomic uint64_t base_tick; /* the counter at base_ns */
	_Atomic int64_t base_ns;    /* CLOCK_MONOTONIC there, ns */
	_Atomic uint64_t mult;	    /* ns per tick x 2^32; 0: not tuned yet */
};

/* The writer's own memory between tunes. */
struct ph_tclock_tuner {
	uint64_t tick; /* the last true reading: counter */
	int64_t ns;    /* and CLOCK_MONOTONIC with it */
	bool have;
};

/* The estimate at tick from (base_tick, base_ns, mult); never before base.
 */
static inline int64_t ph_tclock_at(uint64_t base_tick, int64_t base_ns,
				   uint64_t mult, uint64_t tick)
{
	int64_t d = (int64_t)(tick - base_tick);

	/* another core's counter a few ticks behind the tuner's */
	if (d < 0)
		d = 0;
	return base_ns +
	       (int64_t)(((unsigned __int128)(uint64_t)d * mult) >> 32);
}

/*
 * When an event was emitted: CLOCK_MONOTONIC ns from the counter, else
 * clock_gettime.  ns, not ms, as the writer orders the threads' queues by
 * it (lanes.h); the ms of an event's t are the writer's division.
 */
static inline int64_t ph_tclock_ns(const struct ph_tclock *c)
{
#if PH_HAVE_TICKS
	/*
	 * Acquire loads, not a fence (which the thread sanitizer does not
	 * model): each keeps the loads after it after it, so the second look
	 * at seq comes last.  On x86-64 they are plain loads.
	 */
	uint32_t s = atomic_load_explicit(&c->seq, memory_order_acquire);
	uint64_t m = atomic_load_explicit(&c->mult, memory_order_acquire);

	if (PH_LIKELY(!(s & 1) && m)) {
		uint64_t tick = ph_ticks();
		uint64_t bt = atomic_load_explicit(&c->base_tick,
						   memory_order_acquire);
		int64_t bn =
			atomic_load_explicit(&c->base_ns, memory_order_acquire);

		if (PH_LIKELY(atomic_load_explicit(&c->seq,
						   memory_order_relaxed) == s))
			return ph_tclock_at(bt, bn, m, tick);
	}
#endif
	return ph_mono_ns_fast();
}

/*
 * At start (any thread, before event calls run): whether this machine's
 * counter can stand in for CLOCK_MONOTONIC.  Leaves the clock untuned.
 */
void ph_tclock_init(struct ph_tclock *c, struct ph_tclock_tuner *t);
/*
 * The writer, about once a second: one true reading (the counter and
 * CLOCK_MONOTONIC together) folded in.
 */
void ph_tclock_tune(struct ph_tclock *c, struct ph_tclock_tuner *t);
/* The same with the reading given: what the tests drive. */
void ph_tclock_tune_at(struct ph_tclock *c, struct ph_tclock_tuner *t,
		       uint64_t tick, int64_t ns);

#endif
