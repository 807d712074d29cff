/* SPDX-License-Identifier: Apache-2.0 */
/*
 * frames.c: porthole_frame_begin/phase/end, and taps closed by frames.
 *
 * A frame is measured on the thread that draws it (the main loop): begin
 * at vsync, each phase from its start to the next phase's start, end when
 * presented.  Only a frame over budget (1000 / refresh_hz ms) becomes a
 * `frame` event, as the published runtime does: hosts count frame events
 * as janky frames.  missedFrames counts whole refresh intervals eaten, so
 * a 400 ms freeze at 60 Hz is 24, not 1.
 *
 * Each call is also a turn-over of the main thread for the watchdog: a
 * stall's length is measured between such stamps (watchdog.c).
 *
 * A tap is closed by the first frame presented after its up event: the
 * agent emits an `input` event with action "tap" and tapMs, the time from
 * the finger leaving the screen to that frame being on it.
 */
#include "ph_common.h"
#include "collectors.h"

static const char *const phase_names[PORTHOLE_PHASE_COUNT] = {
	[PORTHOLE_PHASE_INPUT] = "input",
	[PORTHOLE_PHASE_ANIMATION] = "animation",
	[PORTHOLE_PHASE_LAYOUT] = "layoutMeasure",
	[PORTHOLE_PHASE_DRAW] = "draw",
	[PORTHOLE_PHASE_SYNC] = "sync",
	[PORTHOLE_PHASE_SWAP] = "swapBuffers",
};

/* Main-loop thread only. */
static int64_t frame_start_ns = -1, phase_start_ns;
static int cur_phase = -1;
static int64_t phase_ns[PORTHOLE_PHASE_COUNT];
static bool drawn_once;

static _Atomic uint64_t frames_total;
/* The newest up event not yet presented: its t, and its down's t. */
static _Atomic int64_t pending_up_t = -1;
static _Atomic int64_t pending_down_t = -1;
static _Atomic int64_t last_down_t = -1;
static _Atomic float pending_x, pending_y; /* the up's position */

uint64_t ph_collectors_frames_total(void)
{
	return atomic_load_explicit(&frames_total, memory_order_relaxed);
}

PORTHOLE_API void porthole_frame_begin(void)
{
	if (!ph_agent_live())
		return;
	frame_start_ns = ph_mono_ns_fast();
	ph_watchdog_turned(frame_start_ns);
	cur_phase = -1;
	memset(phase_ns, 0, sizeof(phase_ns));
}

static void close_phase(int64_t now)
{
	if (cur_phase >= 0)
		phase_ns[cur_phase] += now - phase_start_ns;
	cur_phase = -1;
}

PORTHOLE_API void porthole_frame_phase(enum porthole_frame_phase phase)
{
	int64_t now;

	if (frame_start_ns < 0 || (unsigned)phase >= PORTHOLE_PHASE_COUNT)
		return;
	now = ph_mono_ns_fast();
	ph_watchdog_turned(now);
	close_phase(now);
	cur_phase = (int)phase;
	phase_start_ns = now;
}

static void emit_tap(int64_t up_t, int64_t down_t, int64_t presented_ms,
		     int64_t total_ms, const char *worst)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_INPUT, &pos);

	if (!r)
		return;
	ph_rec_set_t(r, up_t);
	ph_rec_str(r, PH_KEY_ACTION, "tap", 8);
	ph_rec_double(r, PH_KEY_X, atomic_load(&pending_x));
	ph_rec_double(r, PH_KEY_Y, atomic_load(&pending_y));
	if (down_t >= 0)
		ph_rec_int(r, PH_KEY_DOWN_T, down_t);
	ph_rec_int(r, PH_KEY_TAP_MS, presented_ms - up_t);
	ph_rec_int(r, PH_KEY_FRAME_T, presented_ms - total_ms);
	ph_rec_int(r, PH_KEY_TOTAL_MS, total_ms);
	ph_rec_str(r, PH_KEY_WORST_PHASE, worst, 24);
	ph_emit_commit(pos);
}

PORTHOLE_API void porthole_frame_end(void)
{
	int64_t now, total_us, budget_us = ph_agent.budget_us;
	int worst = -1;
	bool first;
	uint64_t pos;
	struct ph_rec *r;
	int64_t up;

	if (frame_start_ns < 0 || !ph_agent_live())
		return;
	now = ph_mono_ns_fast();
	ph_watchdog_turned(now);
	close_phase(now);
	total_us = (now - frame_start_ns) / 1000;
	first = !drawn_once;
	drawn_once = true;
	atomic_fetch_add_explicit(&frames_total, 1, memory_order_relaxed);
	for (int p = 0; p < PORTHOLE_PHASE_COUNT; p++)
		if (phase_ns[p] && (worst < 0 || phase_ns[p] > phase_ns[worst]))
			worst = p;
	ph_startup_on_frame_presented(now / 1000000);
	up = atomic_exchange_explicit(&pending_up_t, -1, memory_order_relaxed);
	if (up >= 0)
		emit_tap(up, atomic_load(&pending_down_t), now / 1000000,
			 total_us / 1000,
			 worst >= 0 ? phase_names[worst] : "unknown");
	if (total_us > budget_us && (r = ph_emit_begin(PH_KIND_FRAME, &pos))) {
		ph_rec_set_t(r, frame_start_ns / 1000000);
		ph_rec_int(r, PH_KEY_TOTAL_MS, total_us / 1000);
		ph_rec_int(r, PH_KEY_MISSED_FRAMES,
			   budget_us ? total_us / budget_us : 0);
		ph_rec_str(r, PH_KEY_WORST_PHASE,
			   worst >= 0 ? phase_names[worst] : "unknown", 24);
		ph_rec_bool(r, PH_KEY_FIRST_DRAW, first);
		for (int p = 0; p < PORTHOLE_PHASE_COUNT; p++)
			if (phase_ns[p])
				ph_rec_obj_int(r, PH_KEY_PHASES, phase_names[p],
					       phase_ns[p] / 1000000);
		ph_rec_double(r, PH_KEY_BUDGET_MS, (double)budget_us / 1000.0);
		ph_emit_commit(pos);
	}
	frame_start_ns = -1;
}

/* Called by porthole_input (api.c) for down and up. */
void ph_frames_note_input(enum porthole_input_action action, int64_t t, float x,
			  float y)
{
	if (action == PORTHOLE_INPUT_DOWN) {
		atomic_store(&last_down_t, t);
	} else if (action == PORTHOLE_INPUT_UP) {
		atomic_store(&pending_x, x);
		atomic_store(&pending_y, y);
		atomic_store(&pending_down_t, atomic_load(&last_down_t));
		atomic_store(&pending_up_t, t);
	} else {
		atomic_store(&pending_up_t, -1);
	}
}
