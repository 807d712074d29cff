/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the event clock (src/agent/tclock.h): its steering driven with
 * made-up readings, then the real counter against clock_gettime.
 */
#include "ph_common.h"
#include "harness.h"
#include "ph_clock.h"
#include "../../src/agent/tclock.h"

#include <unistd.h>

#define MS 1000000ll

/* A counter at 2.5 GHz: its tick at true time ns (from 0), skewed by ppm. */
static uint64_t tick_at(int64_t ns, double ppm)
{
	return 1000000 + (uint64_t)((double)ns * 2.5 * (1.0 + ppm / 1e6));
}

static int64_t estimate(const struct ph_tclock *c, uint64_t tick)
{
	return ph_tclock_at(atomic_load(&c->base_tick),
			    atomic_load(&c->base_ns), atomic_load(&c->mult),
			    tick);
}

static void usable_clock(struct ph_tclock *c, struct ph_tclock_tuner *t)
{
	memset(c, 0, sizeof(*c));
	memset(t, 0, sizeof(*t));
	atomic_store(&c->usable, 1);
}

/* No scale before two readings 50 ms apart; then the counter's rate. */
void test_tclock__first_scale_after_50_ms(void)
{
	struct ph_tclock c;
	struct ph_tclock_tuner t;

	usable_clock(&c, &t);
	ph_tclock_tune_at(&c, &t, tick_at(0, 0), 5 * MS);
	CHECK_INT(atomic_load(&c.mult), 0);
	ph_tclock_tune_at(&c, &t, tick_at(10 * MS, 0), 15 * MS);
	CHECK_INT(atomic_load(&c.mult), 0);
	ph_tclock_tune_at(&c, &t, tick_at(60 * MS, 0), 65 * MS);
	CHECK(atomic_load(&c.mult) != 0);
	/* 0.4 ns a tick: a second on is a second on, to the microsecond */
	CHECK(llabs(estimate(&c, tick_at(1060 * MS, 0)) - 1065 * MS) < 1000);
	/* a reading before its base (another core's counter) is the base */
	CHECK_INT(estimate(&c, tick_at(60 * MS, 0) - 5), 65 * MS);
}

/* Not usable: nothing is ever published, event calls read gettime. */
void test_tclock__unusable_stays_untuned(void)
{
	struct ph_tclock c;
	struct ph_tclock_tuner t;

	usable_clock(&c, &t);
	atomic_store(&c.usable, 0);
	for (int i = 0; i < 5; i++)
		ph_tclock_tune_at(&c, &t, tick_at(i * 1000 * MS, 0),
				  i * 1000 * MS);
	CHECK_INT(atomic_load(&c.mult), 0);
	CHECK_INT(atomic_load(&c.seq), 0);
}

/*
 * CLOCK_MONOTONIC slewed against the counter (NTP): the estimate never
 * steps back at a tune, and steering keeps it within 0.1 ms of the truth.
 */
void test_tclock__steers_without_stepping_back(void)
{
	struct ph_tclock c;
	struct ph_tclock_tuner t;
	int64_t worst = 0, ns = 0;
	uint64_t tick = 1000000;
	bool monotonic = true;

	usable_clock(&c, &t);
	for (int i = 0; i < 40; i++) {
		int64_t before = atomic_load(&c.mult) ? estimate(&c, tick) : 0;

		ph_tclock_tune_at(&c, &t, tick, ns);
		if (atomic_load(&c.mult)) {
			int64_t after = estimate(&c, tick);

			monotonic &= !before || after >= before;
			if (i > 3 && llabs(after - ns) > worst)
				worst = llabs(after - ns);
		}
		/*
		 * A second of true time; the counter's rate climbs 20 ppm a
		 * second for 30 s, so a scale measured over the last second
		 * is always behind: unsteered, 0.02 ms more each second (0.6
		 * ms in all); steered, 0.02 ms at most.
		 */
		tick += (uint64_t)(2.5e9 *
				   (1.0 + 20.0 * (i < 30 ? i : 30) / 1e6));
		ns += 1000 * MS;
	}
	CHECK(monotonic);
	CHECK(worst < MS / 10);
}

/* A suspend (CLOCK_MONOTONIC on 5 s, the counter not): taken at once. */
void test_tclock__a_jump_is_taken_at_once(void)
{
	struct ph_tclock c;
	struct ph_tclock_tuner t;

	usable_clock(&c, &t);
	ph_tclock_tune_at(&c, &t, tick_at(0, 0), 0);
	ph_tclock_tune_at(&c, &t, tick_at(1000 * MS, 0), 1000 * MS);
	ph_tclock_tune_at(&c, &t, tick_at(2000 * MS, 0), 7000 * MS);
	CHECK(llabs(estimate(&c, tick_at(2000 * MS, 0)) - 7000 * MS) < 1000);
}

/*
 * The real counter, tuned as the writer tunes it, against clock_gettime
 * read right before and after: within the millisecond.  Where the counter
 * is not usable the fallback is clock_gettime itself, which holds too.
 */
void test_tclock__matches_clock_gettime(void)
{
	struct ph_tclock c;
	struct ph_tclock_tuner t;
	bool within = true;

	memset(&c, 0, sizeof(c));
	ph_tclock_init(&c, &t);
	ph_tclock_tune(&c, &t);
	usleep(60 * 1000);
	ph_tclock_tune(&c, &t);
	for (int i = 0; i < 2000; i++) {
		int64_t a = ph_clock_mono_ns() / MS;
		int64_t ms = ph_tclock_ns(&c) / MS;
		int64_t b = ph_clock_mono_ns() / MS;

		within &= ms >= a - 1 && ms <= b + 1;
		if (i % 100 == 99)
			usleep(1000);
	}
	CHECK(within);
}

#if PH_HAVE_TICKS
/* Reads the counter and the clock until the clock has moved past ns. */
static void wait_past(int64_t ns)
{
	for (int i = 0; i < 100000 && ph_clock_mono_ns() < ns; i++)
		usleep(1000);
}
#endif

/*
 * The counter path itself (rdtsc, arm64's cntvct_el0), tuned as the
 * writer tunes it even where the kernel keeps time by another clocksource
 * (under qemu-user the host's tsc, so the agent itself reads
 * clock_gettime there): over the same interval it advances as
 * CLOCK_MONOTONIC does.  Bounds are ratios, wide enough for a preemption
 * between the two reads: a counter that stands still, or is scaled by the
 * wrong rate, is off by far more.  On arm64 the rate measured also
 * agrees with the one the architecture states (cntfrq_el0).
 */
void test_tclock__the_counter_runs_at_clock_gettime_rate(void)
{
#if PH_HAVE_TICKS
	struct ph_tclock c;
	struct ph_tclock_tuner t;
	int64_t c0, m0, c1, m1;
	double ratio;

	usable_clock(&c, &t);
	ph_tclock_tune(&c, &t);
	CHECK(t.have);
	wait_past(t.ns + 60 * MS);
	ph_tclock_tune(&c, &t);
	CHECK(atomic_load(&c.mult) != 0); /* event calls read the counter */
	c0 = ph_tclock_ns(&c);
	m0 = ph_clock_mono_ns();
	wait_past(m0 + 200 * MS);
	c1 = ph_tclock_ns(&c);
	m1 = ph_clock_mono_ns();
	ratio = (double)(c1 - c0) / (double)(m1 - m0);
	if (ratio < 0.5 || ratio > 2.0)
		ph_test_fail(__FILE__, __LINE__, "counter/clock rate %.3f",
			     ratio);
#if defined(__aarch64__)
	{
		uint64_t frq;
		double stated;

		__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frq));
		CHECK(frq > 0);
		/* ns per tick x 2^32, as the tuner keeps it */
		stated = 1e9 / (double)frq * 4294967296.0;
		ratio = (double)atomic_load(&c.mult) / stated;
		if (ratio < 0.9 || ratio > 1.1)
			ph_test_fail(__FILE__, __LINE__,
				     "measured/cntfrq_el0 rate %.3f", ratio);
	}
#endif
#else
	/* no counter on this target: event calls read clock_gettime */
	CHECK(!PH_HAVE_TICKS);
#endif
}
