/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tclock.c: keeping the event clock's counter scale true (tclock.h).
 */
#include "ph_common.h"
#include "tclock.h"
#include "ph_clock.h"

#include <stdio.h>

/* The kernel's own clocksource, when it is the counter ph_ticks reads. */
#if defined(__x86_64__)
#define COUNTER_SOURCE "tsc"
#elif defined(__aarch64__)
#define COUNTER_SOURCE "arch_sys_counter"
#endif

#define MS	       1000000ll
#define FIRST_AFTER_NS (50 * MS)   /* the first rate: over 50 ms at least */
#define EVERY_NS       (1000 * MS) /* then a reading a second */
#define JUMP_NS	       (50 * MS)   /* an error past this is taken at once */
#define STEER_MAX_NS   (10 * MS)   /* else at most 1% over the next second */

/*
 * Whether CLOCK_MONOTONIC is kept by the very counter ph_ticks reads:
 * then the kernel has checked it runs at one rate on every CPU (it drops
 * the TSC as a clocksource when it does not), and so can we lean on it.
 */
static bool counter_usable(void)
{
#if PH_HAVE_TICKS && defined(COUNTER_SOURCE)
	char cur[64] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/"
			"current_clocksource",
			"re");

	if (!f)
		return false;
	if (!fgets(cur, sizeof(cur), f))
		cur[0] = '\0';
	fclose(f);
	cur[strcspn(cur, "\n")] = '\0';
	return !strcmp(cur, COUNTER_SOURCE);
#else
	return false;
#endif
}

void ph_tclock_init(struct ph_tclock *c, struct ph_tclock_tuner *t)
{
	atomic_store(&c->mult, 0);
	atomic_store(&c->usable, counter_usable());
	memset(t, 0, sizeof(*t));
}

static void publish(struct ph_tclock *c, uint64_t tick, int64_t ns,
		    uint64_t mult)
{
	uint32_t s = atomic_load_explicit(&c->seq, memory_order_relaxed);

	/*
	 * Release stores, not a fence: each keeps the odd count before it,
	 * so a reader that sees a new word sees the count moved.
	 */
	atomic_store_explicit(&c->seq, s + 1, memory_order_relaxed);
	atomic_store_explicit(&c->base_tick, tick, memory_order_release);
	atomic_store_explicit(&c->base_ns, ns, memory_order_release);
	atomic_store_explicit(&c->mult, mult, memory_order_release);
	atomic_store_explicit(&c->seq, s + 2, memory_order_release);
}

void ph_tclock_tune_at(struct ph_tclock *c, struct ph_tclock_tuner *t,
		       uint64_t tick, int64_t ns)
{
	uint64_t mult = atomic_load_explicit(&c->mult, memory_order_relaxed);
	uint64_t rate;
	int64_t est, err;

	if (!atomic_load_explicit(&c->usable, memory_order_relaxed))
		return;
	if (!t->have || tick <= t->tick || ns <= t->ns) {
		/* the first reading, or one that went backwards: restart */
		t->tick = tick;
		t->ns = ns;
		t->have = true;
		return;
	}
	if (ns - t->ns < (mult ? EVERY_NS : FIRST_AFTER_NS))
		return;
	/* the counter's rate since the last reading, ns per tick x 2^32 */
	rate = (uint64_t)(((unsigned __int128)(uint64_t)(ns - t->ns) << 32) /
			  (tick - t->tick));
	t->tick = tick;
	t->ns = ns;
	if (!rate)
		return;
	if (!mult) {
		publish(c, tick, ns, rate);
		return;
	}
	est = ph_tclock_at(
		atomic_load_explicit(&c->base_tick, memory_order_relaxed),
		atomic_load_explicit(&c->base_ns, memory_order_relaxed), mult,
		tick);
	err = ns - est;
	if (err > JUMP_NS || err < -JUMP_NS) {
		publish(c, tick, ns, rate);
		return;
	}
	if (err > STEER_MAX_NS)
		err = STEER_MAX_NS;
	if (err < -STEER_MAX_NS)
		err = -STEER_MAX_NS;
	/* from the estimate (never a step back), to the truth in a second */
	publish(c, tick, est,
		(uint64_t)((__int128)rate +
			   (__int128)rate * err / (1000 * MS)));
}

void ph_tclock_tune(struct ph_tclock *c, struct ph_tclock_tuner *t)
{
	uint64_t a, b, best = UINT64_MAX, tick = 0;
	int64_t ns = 0;

	if (!atomic_load_explicit(&c->usable, memory_order_relaxed))
		return;
	/* called on every turn of the writer's loop: mostly not yet */
	if (t->have &&
	    ph_clock_mono_ns() - t->ns <
		    (atomic_load_explicit(&c->mult, memory_order_relaxed) ?
			     EVERY_NS :
			     FIRST_AFTER_NS))
		return;
	/*
	 * The counter on both sides of the clock read, and their middle; of
	 * four tries the tightest, so a reading the thread was preempted in
	 * the middle of does not skew the rate.
	 */
	for (int i = 0; i < 4; i++) {
		int64_t at;

		a = ph_ticks();
		at = ph_clock_mono_ns();
		b = ph_ticks();
		if (b - a < best) {
			best = b - a;
			tick = a + (b - a) / 2;
			ns = at;
		}
	}
	ph_tclock_tune_at(c, t, tick, ns);
}
