/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lifecycle.c: screens coming and going, and the startup events they make.
 *
 * The rules are docs/protocol.md section 6.  In short: a launch begins
 * when the number of visible screens goes from 0 to 1 and ends at the next
 * frame presented.  The process's first launch is cold (lukewarm with
 * restored state) when its first screen was created before the main loop
 * ran its first message, else warm; a later launch is warm when a screen
 * had to be created for it, hot when an existing one came back.
 *
 * Here, "the main loop ran its first message" is the first
 * porthole_main_loop_ping() after registration: firstPostMs.  The startup
 * event waits up to 1.2 s after the first frame for
 * porthole_report_fully_drawn(), as the published runtime does, then is
 * emitted from the main loop's next ping or frame.  A report that comes
 * after its launch's startup event went out is sent on its own, as a
 * fully_drawn event naming that launch, so a slow first screen is still
 * known to have been drawn.
 *
 * Lifecycle calls and pings come from the main thread; the state is
 * guarded by a mutex anyway (an app may report screens from elsewhere),
 * never held while emitting anything slow.
 */
#include "ph_common.h"
#include "collectors.h"
#include "ph_clock.h"

#define FULLY_DRAWN_GRACE_MS 1200

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* The ping has work: no first post yet, or a startup waiting to go out. */
static _Atomic bool ping_work = true;

static struct {
	int64_t fork_ms;    /* process start; -1 unknown */
	int64_t init_ms;    /* porthole_start */
	int64_t first_post; /* first ping: the first message ran; -1 */
	int visible;	    /* screens visible now */
	int launch_index;   /* launches so far */
	bool in_launch;	    /* between 0->1 visible and its first frame */
	bool created_in_launch;
	bool restored;
	int64_t created_at, shown_at, resumed_at, first_frame, fully_drawn;
	int64_t origin;
	bool origin_assumed;
	bool pending; /* first frame seen; waiting for fully drawn */
	bool sent;    /* this launch's startup event went out */
	char screen[64];
	char classification[12];
	char origin_kind[12];
} st;

void ph_startup_init(struct ph_agent *a)
{
	pthread_mutex_lock(&mu);
	memset(&st, 0, sizeof(st));
	st.fork_ms = ph_platform_process_start_ms();
	st.init_ms = a->started_at;
	st.first_post = -1;
	st.created_at = st.shown_at = st.resumed_at = -1;
	st.first_frame = st.fully_drawn = -1;
	atomic_store(&ping_work, true);
	pthread_mutex_unlock(&mu);
}

static void device_screen_event(enum ph_device_kind kind, const char *screen)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_DEVICE, &pos);

	if (!r)
		return;
	r->sub = kind;
	ph_rec_str(r, PH_KEY_ACTIVITY, screen, 64);
	ph_emit_commit(pos);
}

static void put_ms(struct ph_rec *r, enum ph_key key, int64_t v)
{
	if (v >= 0)
		ph_rec_int(r, key, v);
}

/* Emits the finished launch.  Called with mu held; emitting never blocks. */
static void emit_startup(void)
{
	static const char *const names[] = {
		"fork",
		"onCreateEntry",
		"onCreateExit",
		"activityOnCreate",
		"activityOnStart",
		"activityOnResume",
		"firstFrame",
		"reportFullyDrawn",
	};
	bool fork_origin = !strcmp(st.origin_kind, "fork");
	int64_t at[8] = {
		fork_origin ? st.origin : -1,
		fork_origin ? st.init_ms : -1,
		fork_origin ? st.first_post : -1,
		st.created_in_launch ? st.created_at : -1,
		st.shown_at,
		st.resumed_at,
		st.first_frame,
		st.fully_drawn,
	};
	int64_t prev = -1, widest = -1;
	int prev_i = -1, from = -1, to = -1;
	uint64_t pos;
	struct ph_rec *r;
	char dominant[48] = "";

	for (int i = 0; i < 8; i++) {
		if (at[i] < 0)
			continue;
		if (prev >= 0 && at[i] - prev > widest) {
			widest = at[i] - prev;
			from = prev_i;
			to = i;
		}
		prev = at[i];
		prev_i = i;
	}
	if (from >= 0)
		snprintf(dominant, sizeof(dominant), "%s->%s", names[from],
			 names[to]);
	st.pending = false;
	st.sent = true;
	if (ph_agent.cfg.flags & PORTHOLE_NO_STARTUP)
		return; /* still tracked: foreground and background are sent */
	r = ph_emit_begin(PH_KIND_STARTUP, &pos);
	if (!r)
		return;
	ph_rec_str(r, PH_KEY_CLASSIFICATION, st.classification, 12);
	ph_rec_int(r, PH_KEY_ORIGIN_MS, st.origin);
	ph_rec_bool(r, PH_KEY_ORIGIN_ASSUMED, st.origin_assumed);
	ph_rec_str(r, PH_KEY_ORIGIN_KIND, st.origin_kind, 12);
	if (fork_origin) {
		put_ms(r, PH_KEY_ON_CREATE_ENTRY_MS, st.init_ms);
		put_ms(r, PH_KEY_ON_CREATE_EXIT_MS, st.first_post);
	}
	if (st.created_in_launch)
		put_ms(r, PH_KEY_ACTIVITY_ON_CREATE_MS, st.created_at);
	put_ms(r, PH_KEY_ACTIVITY_ON_START_MS, st.shown_at);
	put_ms(r, PH_KEY_ACTIVITY_ON_RESUME_MS, st.resumed_at);
	put_ms(r, PH_KEY_FIRST_FRAME_MS, st.first_frame);
	put_ms(r, PH_KEY_REPORT_FULLY_DRAWN_MS, st.fully_drawn);
	if (st.first_frame >= 0)
		ph_rec_int(r, PH_KEY_TOTAL_MS, st.first_frame - st.origin);
	if (dominant[0])
		ph_rec_str(r, PH_KEY_DOMINANT_PHASE, dominant, 48);
	ph_rec_bool(r, PH_KEY_RESTORED_STATE, st.restored);
	put_ms(r, PH_KEY_FIRST_POST_MS, st.first_post);
	ph_rec_int(r, PH_KEY_LAUNCH_INDEX, st.launch_index - 1);
	ph_rec_str(r, PH_KEY_SCREEN, st.screen, 64);
	ph_emit_commit(pos);
}

/* A launch begins: decide its class and origin now. */
static void begin_launch(int64_t now)
{
	bool first = st.launch_index == 0;

	st.in_launch = true;
	st.first_frame = st.fully_drawn = -1;
	st.sent = false;
	st.shown_at = now;
	st.resumed_at = -1;
	st.launch_index++;
	if (first && st.created_in_launch &&
	    (st.first_post < 0 || st.created_at <= st.first_post)) {
		snprintf(st.classification, sizeof(st.classification), "%s",
			 st.restored ? "lukewarm" : "cold");
		snprintf(st.origin_kind, sizeof(st.origin_kind), "fork");
		st.origin_assumed = st.fork_ms < 0;
		st.origin = st.fork_ms >= 0 ? st.fork_ms : st.init_ms;
	} else if (st.created_in_launch) {
		snprintf(st.classification, sizeof(st.classification), "warm");
		snprintf(st.origin_kind, sizeof(st.origin_kind), "activity");
		st.origin_assumed = false;
		st.origin = st.created_at;
	} else {
		snprintf(st.classification, sizeof(st.classification), "hot");
		snprintf(st.origin_kind, sizeof(st.origin_kind), "activity");
		st.origin_assumed = false;
		st.origin = now;
	}
}

PORTHOLE_API void porthole_lifecycle(enum porthole_lifecycle event,
				     const char *screen, bool restored)
{
	int64_t now = ph_clock_uptime_ms();
	bool fg = false, bg = false;
	char name[64];

	if (!ph_agent_live())
		return;
	snprintf(name, sizeof(name), "%s", screen ? screen : "");
	pthread_mutex_lock(&mu);
	switch (event) {
	case PORTHOLE_SCREEN_CREATED:
		if (!st.visible) {
			st.created_in_launch = true;
			st.created_at = now;
			st.restored = restored;
		}
		break;
	case PORTHOLE_SCREEN_SHOWN:
		if (st.visible++ == 0) {
			snprintf(st.screen, sizeof(st.screen), "%s", name);
			begin_launch(now);
			fg = true;
		}
		break;
	case PORTHOLE_SCREEN_RESUMED:
		if (st.in_launch && st.resumed_at < 0)
			st.resumed_at = now;
		break;
	case PORTHOLE_SCREEN_HIDDEN:
		if (st.visible > 0 && --st.visible == 0) {
			bg = true;
			/* the next launch starts fresh */
			st.created_in_launch = false;
			st.restored = false;
			if (st.pending)
				emit_startup();
			st.in_launch = false;
		}
		break;
	case PORTHOLE_SCREEN_DESTROYED: break;
	}
	pthread_mutex_unlock(&mu);
	if (fg || bg)
		ph_exits_note_screens(fg ? 1 : 0); /* the exit's importance */
	if (fg)
		device_screen_event(PH_DEV_FOREGROUND, name);
	if (bg)
		device_screen_event(PH_DEV_BACKGROUND, name);
}

/*
 * The late report: the launch's startup event went out without
 * reportFullyDrawnMs.  Named by the launch's originMs and launchIndex, the
 * fields a host matches it to its startup event by.  Called with mu held.
 */
static void emit_fully_drawn(void)
{
	uint64_t pos;
	struct ph_rec *r;

	if (ph_agent.cfg.flags & PORTHOLE_NO_STARTUP)
		return;
	r = ph_emit_begin(PH_KIND_FULLY_DRAWN, &pos);
	if (!r)
		return;
	ph_rec_str(r, PH_KEY_CLASSIFICATION, st.classification, 12);
	ph_rec_int(r, PH_KEY_ORIGIN_MS, st.origin);
	ph_rec_int(r, PH_KEY_REPORT_FULLY_DRAWN_MS, st.fully_drawn);
	ph_rec_int(r, PH_KEY_LAUNCH_INDEX, st.launch_index - 1);
	ph_emit_commit(pos);
}

PORTHOLE_API void porthole_report_fully_drawn(void)
{
	pthread_mutex_lock(&mu);
	if (st.fully_drawn < 0 && st.launch_index > 0) {
		st.fully_drawn = ph_clock_uptime_ms();
		if (st.pending)
			emit_startup();
		else if (st.sent)
			emit_fully_drawn();
	}
	pthread_mutex_unlock(&mu);
}

void ph_startup_main_loop_registered(void)
{
}

void ph_startup_on_ping(void)
{
	int64_t now;

	/* Every loop iteration comes here: one relaxed load when idle. */
	if (!atomic_load_explicit(&ping_work, memory_order_relaxed))
		return;
	now = ph_clock_uptime_ms();
	pthread_mutex_lock(&mu);
	if (st.first_post < 0)
		st.first_post = now;
	if (st.pending && now - st.first_frame >= FULLY_DRAWN_GRACE_MS)
		emit_startup();
	atomic_store_explicit(&ping_work, st.pending, memory_order_relaxed);
	pthread_mutex_unlock(&mu);
}

void ph_startup_on_frame_presented(int64_t t_ms)
{
	pthread_mutex_lock(&mu);
	if (st.in_launch && st.first_frame < 0) {
		st.first_frame = t_ms;
		st.in_launch = false;
		st.pending = true;
		atomic_store(&ping_work, true);
		if (st.fully_drawn >= 0 && !strcmp(st.origin_kind, "activity"))
			emit_startup();
	}
	pthread_mutex_unlock(&mu);
}
